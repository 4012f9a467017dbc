import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// Issue 16, part 1: traces are told by their content, not their name; NMEA logs and gpsd JSON
/// captures read as tracks.
@Suite struct TraceFormatTests {
    static func format(_ text: String) -> TraceFormat { TraceFormat.detect(Array(text.utf8)) }

    @Test func theFormatIsToldByTheFirstBytesNotTheName() {
        #expect(Self.format("<?xml version=\"1.0\"?><gpx/>") == .gpx)
        #expect(Self.format("\u{FEFF}<gpx/>") == .gpx)
        #expect(Self.format("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n") == .nmea)
        #expect(Self.format("# gpsfake log\n# Date: 2019-04-07\n\n$GNRMC,000231.42,A,...") == .nmea)
        #expect(Self.format("!AIVDM,1,1,,A,13aEOK?P00PD2wVMdLDRhgvL289?,0*26") == .nmea)
        #expect(Self.format("$PSRF,1*00") == .nmea)
        #expect(Self.format("{\"class\":\"VERSION\",\"release\":\"3.22\"}\n") == .gpsdJSON)
        #expect(Self.format("  {\"class\":\"TPV\",\"mode\":3}") == .gpsdJSON)
        // GeoJSON has its own reader (issue 29); other JSON goes to the GPX reader, which names it.
        #expect(Self.format("{\"type\":\"FeatureCollection\",\"features\":[]}") == .geoJSON)
        #expect(Self.format("{\"name\":\"not geography\"}") == .gpx)
        // A dollar sign that begins no sentence is not NMEA.
        #expect(Self.format("$ not a sentence") == .gpx)
        #expect(Self.format("") == .gpx)
    }

    static func read(_ text: String, name: String = "test.nmea") throws -> (
        points: [GPXPoint], segments: Int, warnings: [GPXWarning]
    ) {
        let reader = try TraceFormat.reader(
            for: MemoryByteSource(Array(text.utf8)), name: name, readers: .withGPSDCaptures)
        var points: [GPXPoint] = []
        var segments = 0
        var warnings: [GPXWarning] = []
        try reader.readEvents { event in
            switch event {
            case .trackPoint(let p): points.append(p)
            case .segmentStart: segments += 1
            case .warning(let w): warnings.append(w)
            default: break
            }
        }
        return (points, segments, warnings)
    }

    /// A sentence with its checksum.
    static func s(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        return "$" + body + "*" + String(format: "%02X", sum) + "\r\n"
    }

    @Test func anEpochIsMergedFromItsSentences() throws {
        let log =
            Self.s("GPGGA,235959.00,4807.0380,N,01131.0000,E,1,08,0.9,545.4,M,46.9,M,,")
            + Self.s("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,1.8,0.9,1.5")
            + Self.s("GPRMC,235959.00,A,4807.0380,N,01131.0000,E,10.0,84.4,311224,3.1,W,A")
            + Self.s("GPGST,235959.00,1.0,2.0,1.0,0.0,3.0,4.0,6.0")
            // Midnight: the next epoch is the next day, though RMC comes after GGA.
            + Self.s("GPGGA,000000.00,4807.0390,N,01131.0000,E,1,08,0.9,545.0,M,46.9,M,,")
            + Self.s("GPRMC,000000.00,A,4807.0390,N,01131.0000,E,10.0,84.4,010125,3.1,W,A")
        let (points, segments, warnings) = try Self.read(log)
        #expect(warnings.isEmpty)
        #expect(segments == 1)
        try #require(points.count == 2)
        let p = points[0]
        #expect(abs(p.coordinate.latitude - (48 + 7.038 / 60)) < 1e-12)
        #expect(abs(p.coordinate.longitude - (11 + 31.0 / 60)) < 1e-12)
        #expect(p.elevation == 545.4)
        #expect(p.geoidHeight == 46.9)
        #expect(p.fix == .threeD)
        #expect(p.satellites == 8)
        #expect(p.hdop == 0.9 && p.vdop == 1.5 && p.pdop == 1.8)
        #expect(abs(p.speed! - 10 * 1852 / 3600) < 1e-12)
        #expect(p.course == 84.4)
        #expect(p.magneticVariation == 360 - 3.1)
        #expect(p.horizontalAccuracy == 5)  // √(3² + 4²), GST's latitude and longitude errors
        #expect(p.verticalAccuracy == 6)
        #expect(p.time == ISO8601DateFormatter().date(from: "2024-12-31T23:59:59Z"))
        #expect(points[1].time == ISO8601DateFormatter().date(from: "2025-01-01T00:00:00Z"))
    }

    @Test func badSentencesAreSkippedCountedAndTheFirstIsNamed() throws {
        let good = Self.s("GPRMC,120000.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
        let log =
            good
            + "$GPRMC,120001.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A*00\r\n"  // wrong checksum
            + "garbage\u{1}line\r\n"
            + Self.s("GPRMC,120002.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
            + "$GPRMC,120003.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A*FF\r\n"
        let (points, _, warnings) = try Self.read(log, name: "bad.nmea")
        #expect(points.count == 2)
        let text = warnings.map(\.description)
        #expect(
            text.contains("bad.nmea:2:1: warning: 2 sentence(s) with a wrong checksum were skipped; this is the first"),
            "\(text)")
        #expect(
            text.contains { $0.hasPrefix("bad.nmea:3:1: warning: 1 line(s) that are not NMEA sentences") }, "\(text)")
    }

    @Test func aLossOfFixEndsTheSegmentAndATwoDFixHasNoAltitude() throws {
        let log =
            Self.s("GPGGA,100000.00,4807.0380,N,01131.0000,E,1,08,0.9,545.4,M,46.9,M,,")
            + Self.s("GPRMC,100000.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
            + Self.s("GPGGA,100001.00,,,,,0,00,,,M,,M,,")
            + Self.s("GPRMC,100001.00,V,,,,,,,010524,,,N")
            + Self.s("GPGSA,A,2,01,02,03,,,,,,,,,,2.5,2.0,1.5")
            + Self.s("GPRMC,100002.00,A,4807.0400,N,01131.0000,E,0.0,0.0,010524,,,A")
        let (points, segments, _) = try Self.read(log)
        #expect(points.count == 2)
        #expect(segments == 2)
        #expect(points[1].fix == .twoD)
        #expect(points[1].elevation == nil)
    }

    /// A receiver that gives no date dates its fixes from the log's `# Date:` line, and one
    /// with the GPS week rollover bug (1024 weeks early) is moved forward, with a warning each.
    @Test func theLogsDateLineDatesAndUndoesAWeekRollover() throws {
        let undated =
            "# Date: 2019-03-14\n" + Self.s("GPGGA,101010.00,4807.0380,N,01131.0000,E,1,08,0.9,545.4,M,46.9,M,,")
        let (p1, _, w1) = try Self.read(undated)
        #expect(p1.first?.time == ISO8601DateFormatter().date(from: "2019-03-14T10:10:10Z"))
        #expect(w1.contains { $0.message.contains("'# Date:' line") })
        let rolled = "# Date: 2019-04-07\n" + Self.s("GPRMC,101010.00,A,4807.0380,N,01131.0000,E,0.0,0.0,220899,,,A")
        let (p2, _, w2) = try Self.read(rolled)
        #expect(p2.first?.time == ISO8601DateFormatter().date(from: "2019-04-07T10:10:10Z"))
        #expect(w2.contains { $0.message.contains("1024 weeks") })
    }

    /// A `gpspipe -w` capture reads as record reads gpsd: libgps unpacks each line (the SKY's
    /// DOPs go with the next TPV), one fix per time, gpsd's own errors as accuracies.
    @Test func aGpsdCaptureReadsAsRecordReadsGpsd() throws {
        let capture = """
            {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
            {"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox"}]}
            {"class":"WATCH","enable":true,"json":true}
            {"class":"SKY","device":"/dev/ttyACM0","hdop":0.9,"vdop":1.4,"pdop":1.7,"satellites":[{"PRN":1,"used":true},{"PRN":2,"used":true},{"PRN":3,"used":true},{"PRN":4,"used":true},{"PRN":5,"used":false}]}
            {"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5,"altHAE":567.5,"eph":4.2,"epv":6.5,"speed":1.5,"track":90.0}
            {"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5,"altHAE":567.5,"eph":4.2,"epv":6.5,"speed":1.5,"track":90.0}
            not json at all
            {"class":"TPV","device":"/dev/ttyACM0","mode":1,"time":"2024-05-01T08:00:01.000Z"}
            {"class":"TPV","device":"/dev/ttyACM0","mode":2,"time":"2024-05-01T08:00:02.000Z","lat":48.2,"lon":11.6,"eph":9.0}
            """
        let (points, segments, warnings) = try Self.read(capture, name: "cap.json")
        try #require(points.count == 2)
        #expect(segments == 2)
        let p = points[0]
        #expect(p.coordinate.latitude == 48.1 && p.coordinate.longitude == 11.5)
        #expect(p.time == ISO8601DateFormatter().date(from: "2024-05-01T08:00:00Z"))
        #expect(p.elevation == 520.5)
        #expect(abs(p.geoidHeight! - 47) < 1e-9)
        #expect(p.fix == .threeD)
        #expect(p.satellites == 4)
        #expect(p.hdop == 0.9 && p.vdop == 1.4 && p.pdop == 1.7)
        #expect(p.speed == 1.5 && p.course == 90)
        #expect(p.horizontalAccuracy == 4.2 && p.verticalAccuracy == 6.5)
        #expect(points[1].fix == .twoD && points[1].elevation == nil)
        #expect(
            warnings.map(\.description) == [
                "cap.json:7:1: warning: 1 line(s) that are not gpsd JSON were skipped; this is the first"
            ])
    }

    /// Every fix of gpsd's corpus, as gpsd printed it (the JSON lines of each `.chk`), read as
    /// a capture: each point is gpsd's fix of that time.
    @Test(
        .enabled(if: Paths.sharedAvailable, "needs ../shared/corpus"),
        arguments: NMEACorpusTests.logs)
    func gpsdsOwnReportsReadBackAsItsFixes(_ log: String) throws {
        let chk = try String(
            contentsOf: NMEACorpusTests.directory.appendingPathComponent(log + ".chk"), encoding: .isoLatin1)
        let capture = chk.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{") }.joined(separator: "\n")
        let (points, _, warnings) = try Self.read(capture, name: log + ".json")
        // Every TPV of gpsd's with a fix, by time.
        let formatter = NMEACorpusTests.formatter
        var fixes: [String: [(Double, Double)]] = [:]
        // Times less than 1 s before a fix already sent: late parts of an epoch, which record
        // drops quietly (FixCoalescer.lateWindow); the Telit steps back 0.3 s once.
        var late = Set<String>()
        var newest: Date?
        for line in chk.split(whereSeparator: \.isNewline) where line.hasPrefix("{\"class\":\"TPV\"") {
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let time = o["time"] as? String, (o["mode"] as? Int ?? 0) >= 2, let lat = o["lat"] as? Double,
                let lon = o["lon"] as? Double, let date = formatter.date(from: time)
            else { continue }
            if let n = newest, date < n, date > n.addingTimeInterval(-1) { late.insert(time) }
            newest = max(newest ?? date, date)
            fixes[time, default: []].append((lat, lon))
        }
        for p in points {
            let time = formatter.string(from: try #require(p.time))
            let same = fixes[time] ?? []
            #expect(!same.isEmpty, "\(log): \(time) is no fix of gpsd's")
            #expect(
                same.contains { abs($0.0 - p.coordinate.latitude) < 1e-9 && abs($0.1 - p.coordinate.longitude) < 1e-9 },
                "\(log): \(time) at another position")
        }
        // Every time gpsd gave a fix is a point, one per time however many TPVs gpsd sent, but
        // for fixes whose time does not fit the receiver's clock, which record leaves out too
        // and the warning counts.
        let leftOut = warnings.compactMap { w -> Int? in
            guard w.message.contains("whose time does not fit") else { return nil }
            return Int(w.message.prefix { $0.isNumber })
        }.reduce(0, +)
        let ours = Set(points.compactMap { $0.time.map(formatter.string(from:)) })
        #expect(
            Set(fixes.keys).subtracting(ours).subtracting(late).count == leftOut,
            "\(log): \(Set(fixes.keys).subtracting(ours).sorted().prefix(5)), \(leftOut) left out")
    }

    /// The events and the reader of `bytes` read as an NMEA log `pieceSize` bytes at a time.
    static func nmeaEvents(_ bytes: [UInt8], pieceSize: Int) throws -> (events: [GPXEvent], reader: NMEAReader) {
        let reader = NMEAReader(source: MemoryByteSource(bytes, pieceSize: pieceSize), name: "pieces.nmea")
        var events: [GPXEvent] = []
        try reader.readEvents { events.append($0) }
        return (events, reader)
    }

    // Found by the fuzzer's nmea mode on gpsd's bt451.log: a read that ended between a CR and
    // its LF took the line then and again with the next read (a GSA twice: 18 satellites, not 9).
    @Test func aLineBreakCutByAReadEndsOneLine() throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Paths.fixture("nmea/walk.nmea"))))
        let whole = try Self.nmeaEvents(bytes, pieceSize: .max)
        #expect(whole.reader.fixes > 0)
        for size in [1, 2, 7] {
            let pieces = try Self.nmeaEvents(bytes, pieceSize: size)
            #expect(pieces.reader.sentences == whole.reader.sentences, "\(size)-byte reads")
            #expect(pieces.events == whole.events, "\(size)-byte reads")
        }
    }

    @Test func aLineTooLongIsSkippedWhereverTheReadsEnd() throws {
        let fix = Self.s("GPRMC,120000.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
        let later = Self.s("GPRMC,120001.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
        // 4 100 bytes: one read of the whole log holds the line and its break; 7-byte reads end
        // inside it. A CR alone ends the second, so that what follows it is its own line.
        let long = "$GPTXT," + String(repeating: "x", count: 4093)
        let bytes = Array((fix + long + "\r\n" + long + "\r" + later + long).utf8)
        let whole = try Self.nmeaEvents(bytes, pieceSize: .max)
        #expect(whole.reader.malformedLines == 3)
        #expect(whole.reader.fixes == 2)
        for size in [1, 7, 4096] {
            let pieces = try Self.nmeaEvents(bytes, pieceSize: size)
            #expect(pieces.reader.malformedLines == 3, "\(size)-byte reads")
            #expect(pieces.events == whole.events, "\(size)-byte reads")
        }
    }
}
