import Foundation
import Testing

@testable import Waymark

/// The reader on its own (issue 14, item 10): times with zone offsets and long fractions, both
/// directions across the antimeridian, and attribute values with the characters XML escapes,
/// written and read back.
@Suite struct GPXReaderTests {
    static func points(_ body: String, header: String = "") throws -> [GPXPoint] {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"\(header)><trk><trkseg>
            \(body)
            </trkseg></trk></gpx>
            """
        let document = try GPXDocument(data: Array(text.utf8))
        return document.tracks.flatMap { $0.segments.flatMap(\.points) }
    }

    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    /// Every offset a file may carry, with the instant it names: `+05:30` is 5 h 30 min ahead of
    /// UTC, so 08:00+05:30 is 02:30Z; `-03:45` behind; `+14:00` (Kiribati) the day before.
    @Test func timesWithZoneOffsetsNameTheRightInstant() throws {
        let cases: [(String, String)] = [
            ("2024-05-01T08:00:00+05:30", "2024-05-01T02:30:00Z"),
            ("2024-05-01T08:00:00-03:45", "2024-05-01T11:45:00Z"),
            ("2024-05-01T08:00:00+14:00", "2024-04-30T18:00:00Z"),
            ("2024-05-01T00:30:00-12:00", "2024-05-01T12:30:00Z"),
            ("2024-03-01T00:00:00+00:00", "2024-03-01T00:00:00Z"),
            ("2024-02-29T23:59:59-00:01", "2024-03-01T00:00:59Z"),
        ]
        let body = cases.enumerated().map { i, c in
            "<trkpt lat=\"1\" lon=\"\(Double(i) / 1000)\"><time>\(c.0)</time></trkpt>"
        }.joined()
        let read = try Self.points(body)
        #expect(read.count == cases.count)
        for (p, c) in zip(read, cases) { #expect(p.time == Self.utc(c.1), "\(c.0)") }
    }

    /// Fractions of any length: milliseconds are kept, longer fractions rounded to the nearest
    /// microsecond or better, never truncated to whole seconds.
    @Test func longFractionsOfASecondAreKept() throws {
        let read = try Self.points(
            """
            <trkpt lat="1" lon="2"><time>2024-05-01T08:00:00.5Z</time></trkpt>
            <trkpt lat="1" lon="2.001"><time>2024-05-01T08:00:00.123Z</time></trkpt>
            <trkpt lat="1" lon="2.002"><time>2024-05-01T08:00:00.123456789Z</time></trkpt>
            <trkpt lat="1" lon="2.003"><time>2024-05-01T08:00:00.99999999999Z</time></trkpt>
            <trkpt lat="1" lon="2.004"><time>2024-05-01T08:00:00.250+01:00</time></trkpt>
            """)
        let base = Self.utc("2024-05-01T08:00:00Z").timeIntervalSince1970
        let offsets = read.map { ($0.time?.timeIntervalSince1970 ?? .nan) - base }
        #expect(abs(offsets[0] - 0.5) < 1e-6)
        #expect(abs(offsets[1] - 0.123) < 1e-6)
        #expect(abs(offsets[2] - 0.123456789) < 1e-6)
        #expect(abs(offsets[3] - 1) < 1e-6, "rounded up to the next second, not truncated")
        #expect(abs(offsets[4] - (0.25 - 3600)) < 1e-6)
    }

    /// Across the antimeridian both ways: longitudes read as written, the geodesic length is the
    /// short way (a few km), never the long way round.
    @Test func theAntimeridianIsCrossedTheShortWayInBothDirections() throws {
        for (from, to) in [(179.99, -179.99), (-179.99, 179.99)] {
            let read = try Self.points(
                """
                <trkpt lat="-17" lon="\(from)"><time>2024-01-01T00:00:00Z</time></trkpt>
                <trkpt lat="-17" lon="\(to)"><time>2024-01-01T00:01:00Z</time></trkpt>
                """)
            #expect(read.map(\.coordinate.longitude) == [from, to])
            var stats = TraceStatistics()
            let text = """
                <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">
                <trk><trkseg><trkpt lat="-17" lon="\(from)"/><trkpt lat="-17" lon="\(to)"/></trkseg></trk></gpx>
                """
            try GPXReader(source: MemoryByteSource(Array(text.utf8)), name: "t.gpx").read { stats.add($0) }
            #expect(stats.length2D > 2000 && stats.length2D < 2200, "\(from) → \(to): \(stats.length2D)")
        }
    }

    /// Attribute values with `"`, `&`, `<`, `'` and `>`: read unescaped, written escaped, and read
    /// back the same.
    @Test func attributeValuesWithMarkupCharactersRoundTrip() throws {
        let href = "https://example.com/a?b=1&c=\"2\"&d=<3>'4'"
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="a &quot;quoted&quot; &amp; &lt;odd&gt; creator" xmlns="http://www.topografix.com/GPX/1/1">
            <wpt lat="1" lon="2"><name>Tom &amp; Jerry's &lt;hut&gt;</name>
            <link href="https://example.com/a?b=1&amp;c=&quot;2&quot;&amp;d=&lt;3&gt;&apos;4&apos;"><text>x</text></link></wpt>
            </gpx>
            """
        let document = try GPXDocument(data: Array(text.utf8))
        #expect(document.header.creator == "a \"quoted\" & <odd> creator")
        #expect(document.waypoints.first?.name == "Tom & Jerry's <hut>")
        #expect(document.waypoints.first?.links.first?.href == href)
        let written = try render { try GPXWriter.write(document, to: $0) }
        let again = try GPXDocument(data: [UInt8](written))
        #expect(again.waypoints == document.waypoints)
        #expect(again.header.creator?.isEmpty == false)
        let xml = String(decoding: written, as: UTF8.self)
        #expect(!xml.contains("c=\"2\""), "the quote is escaped in the attribute")
        #expect(xml.contains("&amp;c=") && xml.contains("&lt;3"))
    }
}

/// The fuzzer's find: what a non-GPX file is said to be must not depend on how its bytes arrive.
@Suite struct NotGPXSniffingTests {
    static func outcome(_ bytes: [UInt8], pieceSize: Int) -> String {
        do {
            _ = try GPXDocument(reader: GPXReader(source: MemoryByteSource(bytes, pieceSize: pieceSize), name: "f.gpx"))
            return "document"
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        "!ZGDATA,>", "$GPGGA,123519,4807.038,N", "!AAAAAAAAAAAAAAAAAAAAAAAA,", "$GP", "{\"type\":1}", "  $GNRMC,x",
    ])
    func theVerdictIsTheSameInAnyPieces(text: String) {
        let bytes = Array(text.utf8)
        let whole = Self.outcome(bytes, pieceSize: bytes.count)
        for size in [1, 2, 3, 7] {
            #expect(Self.outcome(bytes, pieceSize: size) == whole, "\(text) in \(size)-byte pieces")
        }
    }
}
