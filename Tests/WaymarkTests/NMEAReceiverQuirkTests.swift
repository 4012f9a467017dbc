import Foundation
import Testing

@testable import Waymark

/// Issue 27, items 7 and 8: what an NMEA receiver's own quirks do to its fixes. A `# Date:`
/// line undoes one or two GPS week rollovers and no more; a receiver in simulation mode never
/// loses its fixes silently.
@Suite struct NMEAReceiverQuirkTests {
    static let rmc1999 = TraceFormatTests.s("GPRMC,101010.00,A,4807.0380,N,01131.0000,E,0.0,0.0,220899,,,A")

    static func time(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }

    @Test func oneOrTwoRolloversAreUndone() throws {
        let (one, _, w1) = try TraceFormatTests.read("# Date: 2019-04-07\n" + Self.rmc1999)
        #expect(one.first?.time == Self.time("2019-04-07T10:10:10Z"))
        #expect(w1.contains { $0.message.contains("1024 weeks before") }, "\(w1)")
        let (two, _, w2) = try TraceFormatTests.read("# Date: 2038-11-21\n" + Self.rmc1999)
        #expect(two.first?.time == Self.time("2038-11-21T10:10:10Z"))
        #expect(w2.contains { $0.message.contains("2048 weeks before") }, "\(w2)")
    }

    /// A `# Date: 2200-12-31` over a receiver of 1999 would move every fix 10 240 weeks.
    @Test func aFarDateLineKeepsTheReceiversDatesWithAWarning() throws {
        for header in ["# Date: 2200-12-31", "# Date: 2058-07-07"] {
            let (points, _, warnings) = try TraceFormatTests.read(
                "# Name: test\n" + header + "\n" + Self.rmc1999, name: "far.nmea")
            #expect(points.first?.time == Self.time("1999-08-22T10:10:10Z"), "\(header)")
            let text = warnings.map(\.description)
            #expect(
                text.contains {
                    $0.hasPrefix("far.nmea:2:1: warning: the log's '# Date:' line (\(header.dropFirst(8)))")
                        && $0.contains("after the receiver's date (1999-08-22)")
                        && $0.contains("the receiver's dates were kept")
                }, "\(header): \(text)")
            #expect(!text.contains { $0.contains("were moved forward") }, "\(text)")
        }
        let (points, _, warnings) = try TraceFormatTests.read("# Date: 2200-12-31\n" + Self.rmc1999)
        #expect(points.count == 1)
        #expect(warnings.map(\.message).contains { $0.contains("is 10240 weeks after") }, "\(warnings)")
    }
}

extension NMEAReceiverQuirkTests {
    /// GGA quality 8 and the mode indicator S each mark a simulator's fix: never a point, always
    /// counted, and the first named.
    @Test func aReceiverInSimulationModeIsNamedNotSilentlyDropped() throws {
        let s = TraceFormatTests.s
        let log =
            s("GPRMC,100000.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
            + s("GPGGA,100001.00,4807.0390,N,01131.0000,E,8,08,0.9,545.4,M,46.9,M,,")
            + s("GPRMC,100002.00,A,4807.0400,N,01131.0000,E,0.0,0.0,010524,,,S")
            + s("GPGLL,4807.0410,N,01131.0000,E,100003.00,A,S")
            + s("GPGNS,100004.00,4807.0420,N,01131.0000,E,SS,08,0.9,545.4,46.9,,")
            + s("GPRMC,100005.00,A,4807.0430,N,01131.0000,E,0.0,0.0,010524,,,A")
            + s("GPVTG,0.0,T,,M,0.0,N,0.0,K,S")
        let (points, segments, warnings) = try TraceFormatTests.read(log, name: "sim.nmea")
        #expect(points.count == 1)
        #expect(points.first?.time == Self.time("2024-05-01T10:00:00Z"))
        #expect(segments == 1)
        let text = warnings.map(\.description)
        #expect(
            text.contains {
                $0.hasPrefix("sim.nmea:2:1: warning: 5 fix(es) from a receiver in simulation mode")
                    && $0.contains("were left out")
            }, "\(text)")
    }

    /// gpsd's `garmin-geko201` log is a Garmin in demo mode: gpsd marks its reports status 8
    /// (simulated); Waymark reads none of its epochs as a fix, and says so for every one.
    @Test(.enabled(if: Paths.sharedAvailable, "needs ../shared/corpus"))
    func gpsdsGarminInDemoModeIsNamed() throws {
        let directory = NMEACorpusTests.directory
        let log = directory.appendingPathComponent("garmin-geko201.log").path
        let chk = try String(contentsOfFile: log + ".chk", encoding: .isoLatin1)
        let statuses = chk.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{\"class\":\"TPV\"") }
            .compactMap { line -> Int? in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["status"] as? Int
            }
        // gpsd says simulated (STATUS_SIM) in every report that has a status.
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 8 }, "\(statuses)")
        let text = try String(contentsOfFile: log, encoding: .isoLatin1)
        let epochs = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$GPGGA,") }.count
        let reader = try NMEAReader(contentsOf: log)
        var points = 0
        var warnings: [GPXWarning] = []
        try reader.read { event in
            switch event {
            case .trackPoint: points += 1
            case .warning(let w): warnings.append(w)
            default: break
            }
        }
        #expect(points == 0)
        #expect(reader.simulatedFixes == epochs && epochs > 10, "\(reader.simulatedFixes) of \(epochs)")
        #expect(
            warnings.contains { $0.message.hasPrefix("\(epochs) fix(es) from a receiver in simulation mode") },
            "\(warnings)")
    }
}

extension NMEAReceiverQuirkTests {
    /// A capture of gpsd reading such a receiver: its status-8 fixes are named, not kept as
    /// the receiver's.
    @Test func aCapturesSimulatedFixesAreNamed() throws {
        let capture = """
            {"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5}
            {"class":"TPV","device":"/dev/ttyUSB0","status":8,"mode":3,"time":"2024-05-01T08:00:01.000Z","lat":48.2,"lon":11.5,"altMSL":520.5}
            {"class":"TPV","device":"/dev/ttyUSB0","status":8,"mode":3,"time":"2024-05-01T08:00:02.000Z","lat":48.3,"lon":11.5,"altMSL":520.5}
            {"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2024-05-01T08:00:03.000Z","lat":48.4,"lon":11.5,"altMSL":520.5}
            """
        let (points, segments, warnings) = try TraceFormatTests.read(capture, name: "sim.json")
        #expect(points.map(\.coordinate.latitude) == [48.1, 48.4])
        #expect(segments == 2)
        #expect(
            warnings.map(\.description) == [
                "sim.json:2:1: warning: 2 fix(es) gpsd marked simulated (status 8: the receiver is in simulation mode) were left out: they are a simulator's positions, not the receiver's; this is the first"
            ])
    }
}
