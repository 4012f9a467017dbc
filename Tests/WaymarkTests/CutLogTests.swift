import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// Issue 27, item 6: a log that begins in the middle of a line (`cat /dev/ttyUSB0 > log`, a
/// rotated log, a capture cut with `tail -c`) is told by the lines that follow its first, and
/// the cut first line is counted like any other bad line.
@Suite struct CutLogTests {
    static func format(_ text: String) -> TraceFormat { TraceFormat.detect(Array(text.utf8)) }

    static let gga = TraceFormatTests.s("GPGGA,123519.00,4807.0380,N,01131.0000,E,1,08,0.9,545.4,M,46.9,M,,")
    static let rmc = TraceFormatTests.s("GPRMC,123519.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,A")
    static let rmc2 = TraceFormatTests.s("GPRMC,123520.00,A,4807.0390,N,01131.0000,E,0.0,0.0,010524,,,A")
    static let tpv =
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5,"eph":4.2}"#
    static let tpv2 =
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:01.000Z","lat":48.2,"lon":11.6,"altMSL":520.5,"eph":4.2}"#

    @Test func aLogCutInASentenceIsToldByTheLinesThatFollow() {
        // The tail of a GGA, then whole sentences.
        #expect(Self.format(String(Self.gga.dropFirst(20)) + Self.rmc) == .nmea)
        // A cut right after the '$', and garbage bytes from a serial port before the first line break.
        #expect(Self.format(String(Self.gga.dropFirst(1)) + Self.rmc) == .nmea)
        #expect(Self.format("\u{FF}\u{3}~x\r\n\r\n" + Self.rmc) == .nmea)
        // A comment and blank lines between are passed over, as at the start.
        #expect(Self.format("7.0380,N,01131.0000,E*3A\r\n# logger restarted\r\n\r\n" + Self.rmc) == .nmea)
    }

    @Test func aCaptureCutInAReportIsToldByTheLinesThatFollow() {
        #expect(Self.format(String(Self.tpv.dropFirst(9)) + "\n" + Self.tpv2 + "\n") == .gpsdJSON)
        // Cut inside a SKY's satellites: the first line begins with a '{' of no report.
        #expect(
            Self.format(#"{"PRN":5,"el":60.0,"az":46.0,"ss":49.0,"used":true}]}"# + "\n" + Self.tpv + "\n") == .gpsdJSON
        )
    }

    @Test func xmlAndFilesTheGPXReaderNamesStayGPX() {
        // XML is XML whatever follows; so are gzip and ZIP, and JSON of no report; GeoJSON has
        // its own reader (issue 29), even when a log line follows it.
        #expect(Self.format("<?xml version=\"1.0\"?>\n" + Self.rmc) == .gpx)
        #expect(Self.format("<gpx>\n" + Self.tpv) == .gpx)
        #expect(Self.format("\u{1F}\u{8B}\u{8}\n" + Self.rmc) == .gpx)
        #expect(Self.format("PK\u{3}\u{4}\n" + Self.rmc) == .gpx)
        #expect(Self.format("{\"type\":\"FeatureCollection\",\n\"features\":[]}") == .geoJSON)
        #expect(Self.format("{\"name\":\"no trace\"}\n" + Self.tpv + "\n") == .gpsdJSON)
        #expect(Self.format("text that is no trace\nand more of it\n") == .gpx)
    }

    @Test func theCutFirstLineOfALogIsCountedAsABadLine() throws {
        let log = String(Self.gga.dropFirst(20)) + Self.rmc + Self.rmc2
        let (points, _, warnings) = try TraceFormatTests.read(log, name: "p.nmea")
        #expect(points.count == 2)
        #expect(
            warnings.map(\.description).contains {
                $0.hasPrefix("p.nmea:1:1: warning: 1 line(s) that are not NMEA sentences")
            },
            "\(warnings)")
    }

    @Test func theCutFirstLineOfACaptureIsCountedAsABadLine() throws {
        let capture = String(Self.tpv.dropFirst(9)) + "\n" + Self.tpv2 + "\n"
        let (points, _, warnings) = try TraceFormatTests.read(capture, name: "c.json")
        #expect(points.count == 1)
        #expect(
            warnings.map(\.description) == [
                "c.json:1:1: warning: 1 line(s) that are not gpsd JSON were skipped; this is the first"
            ])
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "run `swift build` first: the waymark product is missing beside the tests"))
    func infoReadsALogThatBeginsMidSentence() throws {
        let path = temporaryPath(".nmea")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data((String(Self.gga.dropFirst(30)) + Self.rmc + Self.rmc2).utf8).write(to: URL(fileURLWithPath: path))
        let r = try run(Paths.waymark.path, ["info", path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutText.contains("\"trackPointCount\":2"), "\(r.stdoutText)")
        #expect(r.stderr.contains("\(path):1:1: warning: 1 line(s) that are not NMEA sentences"), "\(r.stderr)")
        #expect(!r.stderr.contains("root element"), "\(r.stderr)")
    }
}
