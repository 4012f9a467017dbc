import Foundation
import Testing

@testable import Waymark

/// Issue 27, item 11: accuracies keep the precision they came with in every output. An RTK
/// fix's 0.014 m replayed as `horizontalAccuracy: 0` (a perfect fix), 3.25 m as 3.3.
@Suite struct AccuracyPrecisionTests {
    @Test func anAccuracyKeepsItsDigitsAndIsNeverZero() {
        #expect(ValueFormatting.accuracy(0.014) == "0.014")
        #expect(ValueFormatting.accuracy(3.25) == "3.25")
        #expect(ValueFormatting.accuracy(10) == "10")
        #expect(ValueFormatting.accuracy(5000) == "5000")
        // DOP × UERE: the binary noise goes, six significant digits stay.
        #expect(ValueFormatting.accuracy(1.1 * 5) == "5.5")
        #expect(ValueFormatting.accuracy((0.01 * 0.01 + 0.01 * 0.01).squareRoot()) == "0.0141421")
        #expect(ValueFormatting.accuracy(12.3456789) == "12.3457")
        #expect(ValueFormatting.accuracy(123_456.7) == "123457")
        #expect(ValueFormatting.accuracy(0.000_000_4) == "0.0000004")
        #expect(ValueFormatting.accuracy(0) == "0")
        for value in [1e-12, 0.0004, 0.004, 0.04, 0.4, 4e-300] {
            #expect(Double(ValueFormatting.accuracy(value)).map { $0 > 0 } == true, "\(value)")
            #expect(!ValueFormatting.accuracy(value).contains("e"), "\(value)")
        }
    }

    /// A trace whose points carry their own accuracies (Apple Health's `<hAcc>`, `<vAcc>`).
    static let trace = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="48.1" lon="11.5"><ele>500</ele><time>2024-05-01T08:00:00Z</time><extensions><hAcc>0.014</hAcc><vAcc>3.25</vAcc></extensions></trkpt>
        <trkpt lat="48.1001" lon="11.5"><ele>500</ele><time>2024-05-01T08:00:01Z</time><extensions><hAcc>0.0004</hAcc><vAcc>0.0125</vAcc></extensions></trkpt>
        </trkseg></trk></gpx>
        """

    static func waymark(_ arguments: [String], in directory: String) throws -> ProcessResult {
        try run(Paths.waymark.path, arguments, directory: URL(fileURLWithPath: directory))
    }

    /// The values of `key` in every NDJSON line or object of `text` that has it.
    static func values(_ key: String, in objects: [[String: Any]]) -> [Double] {
        objects.compactMap { ($0[key] as? NSNumber)?.doubleValue }
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "run `swift build` first: the waymark product is missing beside the tests"))
    func replayOutputsAndTheStoreKeepTheAccuracies() throws {
        let directory = temporaryPath("-accuracy")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.trace.write(toFile: directory + "/rtk.gpx", atomically: true, encoding: .utf8)
        let horizontal = [0.014, 0.0004]
        let vertical = [3.25, 0.0125]

        let ndjson = try Self.waymark(
            ["replay", "rtk.gpx", "--format", "ndjson", "--store", "s.sqlite", "--rate", "max"], in: directory)
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        let lines = try ndjsonObjects(ndjson.stdoutText)
        #expect(Self.values("horizontalAccuracy", in: lines) == horizontal, "\(ndjson.stdoutText)")
        #expect(Self.values("verticalAccuracy", in: lines) == vertical, "\(ndjson.stdoutText)")

        // The store holds them, and gives them back.
        let stored = try Self.waymark(
            ["sessions", "export", "1", "--format", "ndjson", "--store", "s.sqlite"], in: directory)
        let storedLines = try ndjsonObjects(stored.stdoutText)
        #expect(Self.values("horizontalAccuracy", in: storedLines) == horizontal, "\(stored.stdoutText)")
        #expect(Self.values("verticalAccuracy", in: storedLines) == vertical, "\(stored.stdoutText)")
        if let sqlite3 = which("sqlite3") {
            let r = try run(
                sqlite3,
                [directory + "/s.sqlite", "SELECT horizontal_accuracy, vertical_accuracy FROM location ORDER BY id"])
            #expect(r.stdoutText == "0.014|3.25\n0.0004|0.0125\n", "\(r.stdoutText)")
        }

        // GeoJSON: the line's per-point accuracies, and the points' properties.
        let line = try Self.waymark(
            ["replay", "rtk.gpx", "--format", "geojson", "--no-store", "--rate", "max"], in: directory)
        let collection = try #require(try JSONSerialization.jsonObject(with: line.stdout) as? [String: Any])
        let feature = try #require((collection["features"] as? [[String: Any]])?.first)
        let properties = try #require(feature["properties"] as? [String: Any])
        let perPoint = try #require(properties["coordinateProperties"] as? [String: Any])
        #expect((perPoint["horizontalAccuracies"] as? [NSNumber])?.map(\.doubleValue) == horizontal, "\(perPoint)")
        let points = try Self.waymark(
            ["replay", "rtk.gpx", "--format", "geojson", "--geojson-points", "--no-store", "--rate", "max"],
            in: directory)
        let pointCollection = try #require(try JSONSerialization.jsonObject(with: points.stdout) as? [String: Any])
        let pointProperties = (pointCollection["features"] as? [[String: Any]] ?? []).compactMap {
            $0["properties"] as? [String: Any]
        }
        #expect(Self.values("horizontalAccuracy", in: pointProperties) == horizontal, "\(pointProperties)")
        #expect(Self.values("verticalAccuracy", in: pointProperties) == vertical, "\(pointProperties)")

        // The terminal's line never shows a fix that is not perfect as ±0 m.
        let text = try Self.waymark(
            ["replay", "rtk.gpx", "--format", "text", "--no-store", "--rate", "max"], in: directory)
        #expect(text.stdoutText.contains("±0.014 m") && !text.stdoutText.contains("±0 m"), "\(text.stdoutText)")
    }
}

extension AccuracyPrecisionTests {
    /// GPX has no accuracy element of its own: a point's own accuracies (an NMEA log's GST, a
    /// gpsd capture's errors) are written as `hAcc` and `vAcc`, which Waymark and Apple Health
    /// read, with every digit; the GPX stays valid against the schema.
    @Test func gpxKeepsAPointsOwnAccuracies() throws {
        let log =
            TraceFormatTests.s("GPGGA,100000.00,4807.0380,N,01131.0000,E,4,12,0.5,545.4,M,46.9,M,1.0,0000")
            + TraceFormatTests.s("GPRMC,100000.00,A,4807.0380,N,01131.0000,E,0.0,0.0,010524,,,R")
            + TraceFormatTests.s("GPGST,100000.00,0.01,0.01,0.01,0.0,0.008,0.0114,0.03")
        let capture =
            #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"status":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5,"eph":0.014,"epv":3.25}"#
        for (name, text, horizontal, vertical) in [
            ("rtk.nmea", log, (0.008 * 0.008 + 0.0114 * 0.0114).squareRoot(), 0.03),
            ("rtk.json", capture, 0.014, 3.25),
        ] {
            let reader = try TraceFormat.reader(
                for: MemoryByteSource(Array(text.utf8)), name: name, readers: .withGPSDCaptures)
            let gpx = String(
                decoding: try render { sink in
                    let writer = GPXWriter(sink: sink)
                    try reader.readEvents { try writer.write($0) }
                    try writer.finish()
                }, as: UTF8.self)
            #expect(gpx.contains("<hAcc xmlns=\"\(GPXExtensions.unqualifiedNamespace)\">"), "\(gpx)")
            let point = try #require(parseDocument(gpx).tracks.first?.segments.first?.points.first)
            #expect(point.horizontalAccuracy == horizontal, "\(name): \(gpx)")
            #expect(point.verticalAccuracy == vertical, "\(name): \(gpx)")
            try WriterTests.expectValidGPX(gpx)
            // Written again, the elements are kept as they were read, not doubled.
            let again = String(
                decoding: try render { sink in
                    let writer = GPXWriter(sink: sink)
                    try GPXReader(source: MemoryByteSource(Array(gpx.utf8)), name: name).read { try writer.write($0) }
                    try writer.finish()
                }, as: UTF8.self)
            #expect(again.components(separatedBy: "<hAcc").count == 2, "\(again)")
        }
    }
}

extension AccuracyPrecisionTests {
    /// The audit log's fix events, and so the store's, give the accuracy the app received.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "run `swift build` first: the waymark product is missing beside the tests"))
    func theAuditLogKeepsTheAccuracies() throws {
        let directory = temporaryPath("-accuracy")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.trace.write(toFile: directory + "/rtk.gpx", atomically: true, encoding: .utf8)
        let r = try Self.waymark(
            ["replay", "rtk.gpx", "--audit", "audit.ndjson", "--store", "s.sqlite", "--rate", "max"], in: directory)
        #expect(r.status == 0, "\(r.stderr)")
        let audit = try String(contentsOfFile: directory + "/audit.ndjson", encoding: .utf8)
        let fixes = try ndjsonObjects(audit).filter { $0["event"] as? String == "fix" }
        #expect(Self.values("horizontalAccuracy", in: fixes) == [0.014, 0.0004], "\(audit)")
        let stored = try Self.waymark(
            ["sessions", "export", "1", "--format", "audit", "--store", "s.sqlite"], in: directory)
        #expect(stored.stdoutText == audit)
    }
}
