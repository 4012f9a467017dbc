import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// Issue 27, item 13: gpsd's lines without a fix are counted, and gpsd's own notices (ERROR, a
/// DEVICE activated or deactivated) reach the audit log and the summary.
@Suite struct GPSDNoticeTests {
    static func read(_ line: String) throws -> GPSDLineDecoder.Line {
        try #require(GPSDLineDecoder()).read(Array(line.utf8))
    }

    @Test func everyLineIsToldForWhatItIs() throws {
        #expect(
            try Self.read(#"{"class":"ERROR","message":"can't open /dev/ttyUSB1."}"#)
                == .notice(.error(message: "can't open /dev/ttyUSB1.")))
        #expect(
            try Self.read(
                #"{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2024-05-01T08:00:00.000Z"}"#)
                == .notice(.deviceActivated(path: "/dev/ttyACM0", driver: "u-blox")))
        #expect(
            try Self.read(#"{"class":"DEVICE","path":"/dev/ttyACM0","activated":0}"#)
                == .notice(.deviceDeactivated(path: "/dev/ttyACM0")))
        // A DEVICE that says neither, and the reports that carry no fix, are counted by class.
        #expect(try Self.read(#"{"class":"DEVICE","path":"/dev/ttyACM0","bps":9600}"#) == .other("DEVICE"))
        #expect(try Self.read(#"{"class":"VERSION","release":"3.22"}"#) == .other("VERSION"))
        #expect(try Self.read(#"{"class":"SKY","hdop":0.9}"#) == .other("SKY"))
        #expect(try Self.read(#"{"release":"3.22"}"#) == .other(""))
        #expect(try Self.read("no JSON at all") == .notJSON)
        #expect(try Self.read(#"{"class":"TPV","mode":1}"#) == .report(GPSDReport(mode: 1)))
        #expect(GPSDNotice.error(message: "x").action == .gpsdError)
        #expect(GPSDNotice.deviceActivated(path: "/dev/a", driver: "u-blox").detail == "/dev/a (u-blox)")
    }

    @Test func aCaptureCountsWhatCarriesNoFixAndNamesGpsdsNotices() throws {
        let capture = """
            {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
            {"class":"DEVICE","path":"/dev/ttyACM0","driver":"NMEA0183","activated":"2024-05-01T08:00:00.000Z"}
            {"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2024-05-01T08:00:00.000Z"}
            {"class":"WATCH","enable":true,"json":true}
            {"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5}
            {"class":"ERROR","message":"can't open /dev/ttyUSB1."}
            {"class":"DEVICE","path":"/dev/ttyACM0","activated":0}
            {"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2024-05-01T08:00:05.000Z"}
            {"class":"PPS","device":"/dev/ttyACM0","real_sec":1714550401,"real_nsec":0}
            {"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:06.000Z","lat":48.2,"lon":11.5,"altMSL":520.5}
            """
        let reader = GPSDCaptureReader(source: MemoryByteSource(Array(capture.utf8)), name: "cap.json")
        var points = 0
        var warnings: [String] = []
        try reader.readEvents { event in
            switch event {
            case .trackPoint: points += 1
            case .warning(let w): warnings.append(w.description)
            default: break
            }
        }
        #expect(points == 2)
        #expect(reader.reportsWithoutFix == ["VERSION": 1, "DEVICE": 4, "WATCH": 1, "ERROR": 1, "PPS": 1])
        #expect(
            warnings == [
                "cap.json:6:1: warning: gpsd reported 1 error(s) (ERROR); the first: can't open /dev/ttyUSB1.",
                "cap.json:7:1: warning: gpsd deactivated a receiver 1 time(s) (DEVICE); the first: /dev/ttyACM0",
                "cap.json:2:1: warning: gpsd activated a receiver 2 time(s) (DEVICE); the first: /dev/ttyACM0 (NMEA0183)",
            ])
    }
}

/// `waymark record` against a gpsd that sends its notices among the fixes.
@Suite(
    .enabled(
        if: which("python3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs python3 and a built waymark"))
struct GPSDNoticeRecordTests {
    @Test(.timeLimit(.minutes(45)))  // a hang guard only: a busy machine may take minutes
    func recordPutsGpsdsNoticesInTheAuditLogAndTheSummary() async throws {
        let fake = try await GPSDMisbehavingTests.FakeGPSD("notices")
        defer { fake.stop() }
        let audit = fake.directory + "/audit.ndjson"
        let r = try await runAsync(
            Paths.waymark.path,
            [
                "record", "--gpsd", "127.0.0.1:\(fake.port)", "--count", "3", "--duration", "30s", "--no-store",
                "--format", "ndjson", "--audit", audit,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        // The three fixes that are the receiver's; the simulated one is left out.
        let fixes = try ndjsonObjects(r.stdoutText).compactMap { $0["latitude"] as? Double }
        #expect(fixes == [51.50001, 51.50003, 51.50004], "\(r.stdoutText)")
        let sources = try ndjsonObjects(String(contentsOfFile: audit, encoding: .utf8))
            .filter { $0["event"] as? String == "source" }
            .map { "\($0["action"] ?? "") \($0["detail"] ?? "")" }
        #expect(
            sources == [
                "connected gpsd at 127.0.0.1:\(fake.port)", "deviceActivated /dev/fake (NMEA0183)",
                "gpsdError can't open /dev/ttyUSB1.",
                "simulated gpsd marks the receiver's fixes simulated (status 8: simulation mode); they are left out",
                "deviceDeactivated /dev/fake", "deviceActivated /dev/fake (u-blox)",
            ], "\(sources)")
        for line in [
            "gpsd: receiver /dev/fake activated (driver NMEA0183)", "gpsd: error: can't open /dev/ttyUSB1.",
            "gpsd: receiver /dev/fake deactivated",
            "waymark: 1 fix(es) gpsd marked simulated (status 8) left out",
            "waymark: gpsd reported 1 error(s) (source events in the audit log)",
            "waymark: gpsd's receivers: 2 activated, 1 deactivated",
            "waymark: 1 line(s) from gpsd that are not JSON skipped",
            "waymark: gpsd's reports without a fix: DEVICE 4, DEVICES 1, ERROR 1, PPS 1, SKY 1, VERSION 1, WATCH 1",
        ] {
            #expect(r.stderr.contains(line), "\(line)\n\(r.stderr)")
        }
    }
}

/// Issue 28, items 1 and 2: `record` with no app option is a logger that speaks GPS. Through a
/// 20 s stretch without a fix (mode 1 reports, as under a bridge) it says once that the fix is
/// lost and once that it is back, ends the track segment there (GPX and the summary agree), and
/// shows no app state, authorization or UI line; its fixes are in fixed columns.
@Suite(
    .enabled(
        if: which("python3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs python3 and a built waymark"))
struct LoggerSpeaksGPSTests {
    @Test(.timeLimit(.minutes(45)))  // a hang guard only: a busy machine may take minutes
    func aTunnelIsAGapTheLoggerTellsOnce() async throws {
        let fake = try await GPSDMisbehavingTests.FakeGPSD("tunnel")
        defer { fake.stop() }
        let gpx = fake.directory + "/tunnel.gpx"
        let r = try await runAsync(
            Paths.waymark.path,
            [
                "record", "--gpsd", "127.0.0.1:\(fake.port)", "--count", "6", "--duration", "30s", "--no-store",
                "--gpx", gpx,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let fixLines = r.stdoutText.split(separator: "\n").filter { $0.hasPrefix("+") }
        #expect(fixLines.count == 6, "\(r.stdoutText)")
        // Fixed columns: every fix line has its latitude, longitude and accuracy at the same places.
        let columns = Set(
            fixLines.map { line in line.firstIndex(of: "±").map { line.distance(from: line.startIndex, to: $0) } })
        #expect(columns.count == 1, "\(fixLines)")
        #expect(
            fixLines.first?.hasSuffix("   51.5001000   -0.1200000  ±   3 m    1.2 m/s   90°") == true, "\(fixLines)")
        #expect(r.stderr.components(separatedBy: "no fix since 08:00:03 UTC").count == 2, "once: \(r.stderr)")
        #expect(r.stderr.components(separatedBy: "fix regained after 21s").count == 2, "once: \(r.stderr)")
        for ios in [
            "UI ", "notRunning", "inactive", "authorization", "locationUnknown", "fixes by app state",
            "arrived while away",
        ] {
            #expect(!r.stdoutText.contains(ios) && !r.stderr.contains(ios), "\(ios): \(r.stdoutText)\(r.stderr)")
        }
        #expect(r.stdoutText.contains("6 fixes in 2 segment(s), 1 loss(es) of fix"), "\(r.stdoutText)")
        let (document, _) = try readDocument(gpx)
        #expect(document.tracks.first?.segments.map(\.points.count) == [3, 3], "the tunnel ends the segment")
    }

    /// `--until-source-ends`: when the feed's connection closes, the recording ends with it
    /// (completed, exit 0) instead of reconnecting for ever.
    @Test(.timeLimit(.minutes(45)))  // a hang guard only: a busy machine may take minutes
    func aRecordingOfAFeedThatEndsEndsWithIt() async throws {
        let fake = try await GPSDMisbehavingTests.FakeGPSD("brief")
        defer { fake.stop() }
        let r = try await runAsync(
            Paths.waymark.path,
            ["record", "--gpsd", "127.0.0.1:\(fake.port)", "--until-source-ends", "--no-store", "--format", "ndjson"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ndjsonObjects(r.stdoutText).count == 3, "\(r.stdoutText)")
        #expect(r.stderr.contains("3 fixes in 1 segment(s)"), "\(r.stderr)")
    }
}
