import Foundation
import Testing

@testable import Waymark

/// GPX and GeoJSON output: shape, validity against the real checkers, and round trips.
@Suite struct WriterTests {
    static let fixtureTraces = Paths.files(under: Paths.fixtures.appendingPathComponent("gpx"), suffix: ".gpx")
        .map { Paths.fixture("gpx/" + $0) }
    static var allTraces: [String] {
        fixtureTraces
            + (Paths.sharedAvailable
                ? Paths.files(under: Paths.corpus, suffix: ".gpx").map { Paths.corpus.appendingPathComponent($0).path }
                : [])
    }

    static func geojson(_ path: String, lenient: Bool = true) throws -> Data {
        let reader = try GPXReader(contentsOf: path, options: GPXReadOptions(lenient: lenient))
        return try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            try reader.read { try writer.write($0) }
            try writer.finish()
        }
    }

    static func gpx(_ path: String, lenient: Bool = true) throws -> Data {
        let reader = try GPXReader(contentsOf: path, options: GPXReadOptions(lenient: lenient))
        return try render { sink in
            let writer = GPXWriter(sink: sink)
            try reader.read { try writer.write($0) }
            try writer.finish()
        }
    }

    /// Checks GPX text against the GPX 1.1 schema with `../shared/tools/check-gpx` (when the tools
    /// and xmllint are there).
    static func expectValidGPX(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard Paths.sharedAvailable, which("xmllint") != nil else { return }
        let out = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: out) }
        try text.write(toFile: out, atomically: false, encoding: .utf8)
        let r = try run(Paths.shared.appendingPathComponent("tools/check-gpx").path, [out])
        #expect(r.status == 0, "\(r.stdoutText)\(r.stderr)", sourceLocation: sourceLocation)
    }

    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Writes outputs for every readable trace into a folder and runs a shared checker on all of them.
    static func check(_ tool: String, suffix: String, arguments: [String] = [], produce: (String) throws -> Data) throws
    {
        let dir = URL(fileURLWithPath: temporaryPath("-check"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [String] = []
        for (i, trace) in allTraces.enumerated() {
            guard let data = try? produce(trace) else { continue }  // unreadable inputs are tested elsewhere
            let path = dir.appendingPathComponent("\(i)\(suffix)").path
            try data.write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        #expect(files.count >= fixtureTraces.count)
        let result = try run(Paths.shared.appendingPathComponent("tools/" + tool).path, arguments + files)
        #expect(result.status == 0, "\(result.stdoutText.suffix(2000))\(result.stderr.suffix(2000))")
    }

    // MARK: - Validity with the real checkers

    @Test(.enabled(if: Paths.sharedAvailable && which("xmllint") != nil, "needs ../shared/tools and xmllint"))
    func gpxOutputValidatesAgainstTheSchema() throws {
        try Self.check("check-gpx", suffix: ".gpx") { try Self.gpx($0) }
    }

    @Test(.enabled(if: Paths.sharedAvailable, "needs ../shared/tools/check-geojson"))
    func geojsonOutputPassesTheRFC7946Checker() throws {
        try Self.check("check-geojson", suffix: ".geojson", arguments: ["--strict"]) { try Self.geojson($0) }
    }

    // MARK: - GPX

    /// Times are written with milliseconds, so the comparison rounds them to milliseconds.
    static func normalized(_ d: GPXDocument) -> GPXDocument {
        func fix(_ p: GPXPoint) -> GPXPoint {
            var p = p
            p.time = p.time.map { Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000) }
            if p.extensions.elements.isEmpty && (p.speed != nil || p.course != nil) {
                // GPX 1.0 speed and course move into a TrackPointExtension v2 element.
                p.extensions.speed = p.extensions.speed ?? p.speed
                p.extensions.course = p.extensions.course ?? p.course
                p.speed = nil
                p.course = nil
            }
            return p
        }
        var d = d
        d.header = GPXHeader(version: "1.1", creator: d.header.creator ?? "Waymark")
        d.metadata.time = d.metadata.time.map {
            Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000)
        }
        d.waypoints = d.waypoints.map(fix)
        for r in d.routes.indices { d.routes[r].points = d.routes[r].points.map(fix) }
        for t in d.tracks.indices {
            for s in d.tracks[t].segments.indices {
                d.tracks[t].segments[s].points = d.tracks[t].segments[s].points.map(fix)
            }
        }
        return d
    }

    @Test(arguments: allTraces)
    func readWriteReadGivesAnEqualDocument(trace: String) throws {
        guard let (first, _) = try? readDocument(trace) else { return }
        let written = try render { try GPXWriter.write(first, to: $0) }
        var second = try GPXDocument(data: [UInt8](written), name: "rewritten.gpx")
        let expected = Self.normalized(first)
        // GPX 1.0 speed and course come back from a generated TrackPointExtension v2 element;
        // their values are compared above through extensions.speed and .course, so drop the element.
        for t in second.tracks.indices {
            for s in second.tracks[t].segments.indices {
                for i in second.tracks[t].segments[s].points.indices {
                    let original = first.tracks[t].segments[s].points[i]
                    if original.extensions.elements.isEmpty && (original.speed != nil || original.course != nil) {
                        #expect(second.tracks[t].segments[s].points[i].extensions.elements.count == 1)
                        second.tracks[t].segments[s].points[i].extensions.elements = []
                    }
                }
            }
        }
        #expect(second == expected)
    }

    @Test func writingWhileReadingAheadGivesTheSameOutputAndWarnings() throws {
        // The one-call conversion that render uses, against writing each event of read().
        let damaged = ["lat-out-of-range", "truncated-in-trkpt", "bad-time"].map { Paths.fixture("bad/\($0).gpx") }
        var seenWarnings = 0
        for path in Self.fixtureTraces + damaged {
            let options = GPXReadOptions(lenient: true, keepsExtensionElements: false)
            var expectedWarnings: [GPXWarning] = []
            let expected = try render { sink in
                let writer = GeoJSONWriter(sink: sink)
                try GPXReader(contentsOf: path, options: options).read { event in
                    if case .warning(let w) = event { expectedWarnings.append(w) }
                    try writer.write(event)
                }
                try writer.finish()
            }
            var warnings: [GPXWarning] = []
            let actual = try render { sink in
                let writer = GeoJSONWriter(sink: sink)
                try writer.write(readingAhead: GPXReader(contentsOf: path, options: options)) { warnings.append($0) }
                try writer.finish()
            }
            #expect(actual == expected, "\(path)")
            #expect(warnings == expectedWarnings, "\(path)")
            seenWarnings += warnings.count
        }
        #expect(seenWarnings >= 3)
    }

    /// An atomic output of 48 MiB asks the kernel to start writing every 16 MiB (posix_fadvise)
    /// while it is written, in flushes of every size and in a copy the kernel makes (sendfile):
    /// it asks twice or three times (each time for at least 16 MiB, the last 16 MiB or less not
    /// before the commit), and the file reads back whole, byte for byte.
    @Test func aLargeAtomicOutputReadsBackWhole() throws {
        var rng = SplitMix64(seed: 71)
        var expected = [UInt8]()
        expected.reserveCapacity(72 << 20)
        let copied = temporaryPath(".bin")
        defer { try? FileManager.default.removeItem(atPath: copied) }
        let copiedBytes = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        try Data(copiedBytes).write(to: URL(fileURLWithPath: copied))
        var requests = 0
        let written = try render { sink in
            while expected.count < 40 << 20 {
                let chunk = String(repeating: "\(rng.next() % 1000),", count: 1 + Int(rng.next() % 5000))
                sink.write(chunk)
                expected += Array(chunk.utf8)
                try sink.flushIfNeeded()
                if expected.count > 25 << 20 && expected.count < 26 << 20 {
                    let fd = open(copied, O_RDONLY | O_CLOEXEC)
                    try #require(fd >= 0)
                    defer { close(fd) }
                    try sink.append(contentsOf: fd, count: copiedBytes.count)
                    expected += copiedBytes
                }
            }
            try sink.flush()
            requests = sink.writebackRequests
        }
        #if os(Linux)
            #expect((2...3).contains(requests), "\(requests) requests for \(expected.count) bytes")
        #endif
        // Compared in place: a failure names the first differing byte, not 48 MiB of them.
        #expect(written.count == expected.count)
        let firstDifference = written.withUnsafeBytes { w in
            expected.withUnsafeBytes { e -> Int? in
                let n = min(w.count, e.count)
                guard n > 0, memcmp(w.baseAddress!, e.baseAddress!, n) != 0 else { return nil }
                return (0..<n).first { w[$0] != e[$0] }
            }
        }
        #expect(firstDifference == nil)
    }

    @Test func longTracksSpillToDiskAndComeBackWhole() throws {
        // 40 000 points: the coordinates and the times pass the writer's 256 KiB in memory and
        // go through temporary files. Written to a file the kernel copies them back
        // (sendfile); written to a file opened for appending, they are read back instead.
        let count = 40_000
        let start = Date(timeIntervalSince1970: 1_714_550_400)
        func write(to sink: FileSink) throws {
            let writer = GeoJSONWriter(sink: sink)
            try writer.write(.trackStart(GPXPathInfo(name: "long")))
            for segment in 0..<2 {
                try writer.write(.segmentStart)
                for i in 0..<count / 2 {
                    let n = segment * count / 2 + i
                    var p = GPXPoint(
                        latitude: 47 + Double(n) * 1e-6, longitude: 8 + Double(n) * 2e-6, elevation: 400,
                        time: start.addingTimeInterval(Double(n)))
                    p.extensions.heartRate = Double(100 + n % 50)
                    try writer.write(.trackPoint(p))
                }
                try writer.write(.segmentEnd(GPXExtensions()))
            }
            try writer.write(.trackEnd(GPXPathInfo(name: "long")))
            try writer.finish()
        }
        let viaKernel = try render(write)
        let appended = temporaryPath(".geojson")
        defer { try? FileManager.default.removeItem(atPath: appended) }
        let fd = open(appended, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        let appendSink = FileSink(descriptor: fd, path: appended)
        try write(to: appendSink)
        try appendSink.flush()
        close(fd)
        let viaRead = try Data(contentsOf: URL(fileURLWithPath: appended))
        #expect(viaKernel == viaRead)

        let feature = try #require((try Self.json(viaKernel)["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        let lines = try #require(geometry["coordinates"] as? [[[Double]]])
        #expect(lines.map(\.count) == [count / 2, count / 2])
        let last = try #require(lines.last?.last)
        #expect(last == [8 + Double(count - 1) * 2e-6, 47 + Double(count - 1) * 1e-6, 400])
        let properties = try #require(
            (feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])
        let times = try #require(properties["times"] as? [[String]])
        #expect(times.map(\.count) == [count / 2, count / 2])
        #expect(times.last?.last == "2024-05-01T19:06:39.000Z")
        let heart = try #require(properties["heart"] as? [[Int]])
        #expect(heart.last?.last == 100 + (count - 1) % 50)
    }

    /// Two tracks that both spill: the second comes back whole, not as the zeros of the first's
    /// truncated temporary file (its writes went on at the old file offset).
    @Test func aSecondLongTrackSpillsAndComesBackWhole() throws {
        let count = 20_000
        let data = try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            for track in 0..<2 {
                try writer.write(.trackStart(GPXPathInfo(name: "long \(track)")))
                for n in 0..<count {
                    try writer.write(
                        .trackPoint(
                            GPXPoint(
                                latitude: 47 + Double(n) * 1e-6, longitude: 8 + Double(track) + Double(n) * 2e-6,
                                time: Date(timeIntervalSince1970: 1_714_550_400 + Double(n)))))
                }
                try writer.write(.trackEnd(GPXPathInfo(name: "long \(track)")))
            }
            try writer.finish()
        }
        #expect(!data.contains(0), "no NUL bytes")
        let features = try #require(try Self.json(data)["features"] as? [[String: Any]])
        let lines = features.compactMap { ($0["geometry"] as? [String: Any])?["coordinates"] as? [[Double]] }
        #expect(lines.map(\.count) == [count, count])
        let expectedLast: [Double] = [9 + Double(count - 1) * 2e-6, 47 + Double(count - 1) * 1e-6]
        #expect(lines.last?.last == expectedLast)
        let times = features.compactMap {
            (($0["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])?["times"] as? [String]
        }
        #expect(times.map(\.count) == [count, count])
    }

    @Test func gpx10IsUpgraded() throws {
        let data = try Self.gpx(Paths.fixture("gpx/gpx10.gpx"))
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("xmlns=\"http://www.topografix.com/GPX/1/1\" version=\"1.1\""))
        #expect(text.contains("<metadata>\n    <name>Old file</name>\n    <desc>GPX 1.0</desc>"))
        #expect(text.contains("<link href=\"http://example.com/\"><text>Example</text></link>"))
        #expect(text.contains("<bounds minlat=\"1\" minlon=\"2\" maxlat=\"3\" maxlon=\"4\"/>"))
        let doc = try GPXDocument(data: [UInt8](data))
        let p = doc.tracks[0].segments[0].points[0]
        #expect(p.extensions.speed == 1.25 && p.extensions.course == 90.5)
        #expect(p.fix == .threeD && p.satellites == 7 && p.hdop == 1.2)
        #expect(doc.metadata.authorName == "Someone" && doc.metadata.keywords == "a, b")
    }

    @Test func everyMetadataFieldSurvives() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/metadata.gpx"))
        let m = doc.metadata
        #expect(m.authorName == "A. Walker" && m.authorEmail == "walker@example.org")
        #expect(m.authorLink == GPXLink(href: "https://example.org/walker", text: "Home page"))
        #expect(m.copyrightHolder == "A. Walker" && m.copyrightYear == 2024)
        #expect(m.copyrightLicense == "https://creativecommons.org/licenses/by/4.0/")
        #expect(m.links == [GPXLink(href: "https://example.org/walk", text: "The walk", type: "text/html")])
        #expect(m.keywords == "walk, city" && m.bounds?.maxLongitude == 11.6)
        let again = try GPXDocument(data: [UInt8](try render { try GPXWriter.write(doc, to: $0) }))
        #expect(again.metadata == m)
    }

    @Test func gpx10EmailBecomesTheAuthorsEmail() throws {
        let text = String(decoding: try Self.gpx(Paths.fixture("gpx/gpx10.gpx")), as: UTF8.self)
        #expect(
            text.contains("<author>\n      <name>Someone</name>\n      <email id=\"someone\" domain=\"example.com\"/>"))
    }

    @Test func unknownExtensionsSurviveWithTheirNamespaces() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/extensions.gpx"))
        let p = doc.tracks[0].segments[0].points[0]
        #expect(p.extensions.heartRate == 120 && p.extensions.cadence == 80 && p.extensions.airTemperature == 21.5)
        #expect(p.extensions.power == 250)
        #expect(p.extensions.elements.count == 3)
        #expect(
            p.extensions.elements[2]
                == "<other:note xmlns:other=\"urn:example:other\" kind=\"x &amp; y\">keep &lt;me&gt;</other:note>")
        #expect(
            doc.tracks[0].info.extensions.elements == ["<other:color xmlns:other=\"urn:example:other\" value=\"red\"/>"]
        )
        // A prefix declared on the extension element itself, not on <gpx>.
        #expect(doc.tracks[0].segments[0].points[1].extensions.heartRate == 125)
        let text = String(decoding: try Self.gpx(Paths.fixture("gpx/extensions.gpx")), as: UTF8.self)
        #expect(
            text.contains(
                "<other:note xmlns:other=\"urn:example:other\" kind=\"x &amp; y\">keep &lt;me&gt;</other:note>"))
    }

    @Test func extensionsInGPXsOwnNamespaceMoveToAnotherSoTheFileValidates() throws {
        let text = """
            <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" creator="t"><wpt lat="1" lon="2">\
            <extensions><power>75</power><a b="c"><d>e</d></a></extensions></wpt></gpx>
            """
        let doc = try parseDocument(text)
        let e = doc.waypoints[0].extensions
        #expect(e.power == 75)
        #expect(
            e.elements == [
                "<power xmlns=\"\(GPXExtensions.unqualifiedNamespace)\">75</power>",
                "<a xmlns=\"\(GPXExtensions.unqualifiedNamespace)\" b=\"c\"><d>e</d></a>",
            ])
    }

    @Test func outOfOrderElementsAreWrittenInSchemaOrder() throws {
        let text = """
            <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" creator="t">\
            <trk><trkseg><trkpt lat="1" lon="1"/></trkseg></trk><rte><rtept lat="2" lon="2"/></rte><wpt lat="3" lon="3"/></gpx>
            """
        let data = try render { sink in
            let writer = GPXWriter(sink: sink)
            try GPXReader(source: MemoryByteSource(text), name: "t").read { try writer.write($0) }
            try writer.finish()
        }
        let out = String(decoding: data, as: UTF8.self)
        let w = try #require(out.range(of: "<wpt")).lowerBound
        let r = try #require(out.range(of: "<rte>")).lowerBound
        let t = try #require(out.range(of: "<trk>")).lowerBound
        #expect(w < r && r < t)
    }

    // MARK: - GeoJSON

    @Test func segmentsBecomeLinesOfAMultiLineString() throws {
        let root = try Self.json(try Self.geojson(Paths.fixture("gpx/segments.gpx")))
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == 3)
        let wpt = try #require(features[0]["geometry"] as? [String: Any])
        #expect(wpt["type"] as? String == "Point")
        #expect(wpt["coordinates"] as? [Double] == [11.5, 48.1])
        let rte = try #require(features[1]["geometry"] as? [String: Any])
        #expect(rte["type"] as? String == "LineString")
        let trk = try #require(features[2]["geometry"] as? [String: Any])
        #expect(trk["type"] as? String == "MultiLineString")
        let lines = try #require(trk["coordinates"] as? [[[Double]]])
        // The empty segment is left out; the one-point segment becomes a two-position line.
        #expect(lines.map(\.count) == [3, 2, 2])
        #expect(lines[1][0] == lines[1][1])
        #expect(lines[0][1] == [11.501, 48.101, 501])
        let props = try #require(features[2]["properties"] as? [String: Any])
        #expect(props["_gpxType"] as? String == "trk" && props["name"] as? String == "Walk")
        let cp = try #require(props["coordinateProperties"] as? [String: Any])
        let times = try #require(cp["times"] as? [[String]])
        #expect(times.map(\.count) == [3, 2, 2])
        #expect(times[0][0] == "2024-05-01T09:00:00.000Z" && times[2][1] == "2024-05-01T09:03:30.000Z")
        #expect(root["bbox"] as? [Double] == [11.5, 48.1, 11.6, 48.301])
        #expect(root["crs"] == nil)
    }

    @Test func linesAreSplitAtTheAntimeridian() throws {
        let root = try Self.json(try Self.geojson(Paths.fixture("gpx/antimeridian.gpx")))
        let feature = try #require((root["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "MultiLineString")
        let lines = try #require(geometry["coordinates"] as? [[[Double]]])
        #expect(lines.count == 2)
        #expect(lines[0].last?[0] == 180 && lines[1].first?[0] == -180)
        // The crossing sits at the latitude interpolated between -16.5 (179.9) and -17.5 (-179.9).
        #expect(lines[0].last?[1] == -17 && lines[1].first?[1] == -17)
        let times = try #require((feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])
        let t = try #require(times["times"] as? [[Any]])
        #expect(t[0].count == 3 && t[1].count == 3)
        #expect(t[0][2] is NSNull && t[1][0] is NSNull)
        #expect(t[1][1] as? String == "2024-01-01T02:00:00.000Z")
        for line in lines { for p in line { #expect(p[0] >= -180 && p[0] <= 180) } }
    }

    @Test func sensorValuesAreIndexAlignedWithNulls() throws {
        let root = try Self.json(try Self.geojson(Paths.fixture("gpx/extensions.gpx")))
        let feature = try #require((root["features"] as? [[String: Any]])?.first)
        let cp = try #require((feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])
        #expect((cp["heart"] as? [Any])?.map { ($0 as? Double).map { Int($0) } ?? -1 } == [120, 125, -1])
        #expect((cp["cads"] as? [Any])?.map { ($0 as? Double).map { Int($0) } ?? -1 } == [80, -1, -1])
        #expect((cp["powers"] as? [Any])?.map { ($0 as? Double).map { Int($0) } ?? -1 } == [250, -1, -1])
        #expect((cp["times"] as? [String])?.count == 3)
        #expect(cp["speeds"] == nil)
    }

    @Test func coordinatesHaveAtMostSevenDecimals() throws {
        let text = "<gpx><wpt lat=\"1.123456789\" lon=\"-2.000000049\"/></gpx>"
        let data = try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            try GPXReader(source: MemoryByteSource(text), name: "t").read { try writer.write($0) }
            try writer.finish()
        }
        #expect(String(decoding: data, as: UTF8.self).contains("\"coordinates\":[-2,1.1234568]"))
    }

    /// Same geometry as togeojson (the reference for coordinateProperties) on its own test files.
    @Test(
        .enabled(if: Paths.sharedAvailable, "needs ../shared/corpus/togeojson"),
        arguments: Paths.files(under: Paths.corpus.appendingPathComponent("togeojson/data"), suffix: ".gpx"))
    func matchesTogeojsonGeometry(file: String) throws {
        let expectedURL = Paths.corpus.appendingPathComponent("togeojson/expected/\(file).geojson")
        guard let expectedData = try? Data(contentsOf: expectedURL),
            let ours = try? Self.geojson(
                Paths.corpus.appendingPathComponent("togeojson/data/" + file).path, lenient: false)
        else { return }
        func lines(_ data: Data) throws -> [[[Double]]] {
            // togeojson writes all tracks, then all routes; Waymark keeps document order.
            let all = try Self.json(data)["features"] as? [[String: Any]] ?? []
            func kind(_ f: [String: Any]) -> String {
                (f["properties"] as? [String: Any])?["_gpxType"] as? String ?? ""
            }
            let features = all.filter { kind($0) == "trk" } + all.filter { kind($0) == "rte" }
            return features.compactMap { f -> [[[Double]]]? in
                guard let g = f["geometry"] as? [String: Any] else { return nil }
                switch g["type"] as? String {
                case "LineString": return [(g["coordinates"] as? [[Double]]) ?? []]
                case "MultiLineString": return (g["coordinates"] as? [[[Double]]]) ?? []
                default: return nil
                }
            }.flatMap { $0 }
                // togeojson drops one-point segments; Waymark writes them as a two-position line on
                // the point (see GeoJSONWriter). Compare the rest.
                .filter { $0.count >= 2 && Set($0).count > 1 }
        }
        let theirs = try lines(expectedData)
        let mine = try lines(ours)
        #expect(mine.count == theirs.count, "\(file): \(mine.count) lines vs togeojson \(theirs.count)")
        for (a, b) in zip(mine, theirs) {
            #expect(a.count == b.count, "\(file)")
            for (p, q) in zip(a, b) {
                #expect(abs(p[0] - q[0]) <= 5.1e-8 && abs(p[1] - q[1]) <= 5.1e-8, "\(file): \(p) vs \(q)")
            }
        }
    }
}

/// Namespace bindings come and go; what the reader learns about one must not outlive it.
@Suite struct NamespaceScopeTests {
    @Test func aReusedBindingSlotIsJudgedAfresh() throws {
        let text = """
            <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" creator="t">\
            <wpt lat="1" lon="2"><a:x xmlns:a="urn:a"/></wpt>\
            <trk xmlns:b="http://www.topografix.com/GPX/1/1"><b:trkseg><b:trkpt lat="1" lon="1"/></b:trkseg></trk></gpx>
            """
        let doc = try parseDocument(text)
        #expect(doc.tracks.count == 1)
        #expect(doc.tracks.first?.segments.first?.points.count == 1)
    }

    @Test func aPrefixReboundToAnotherNamespaceIsNotTrackPointExtension() throws {
        let text = """
            <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" creator="t"><trk><trkseg>\
            <trkpt lat="1" lon="1"><extensions><h:hr xmlns:h="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">120</h:hr></extensions></trkpt>\
            <trkpt lat="1" lon="1"><extensions><h:hr xmlns:h="urn:not-garmin">99</h:hr></extensions></trkpt>\
            <trkpt lat="1" lon="1"><extensions><h:hr xmlns:h="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">121</h:hr></extensions></trkpt>\
            </trkseg></trk></gpx>
            """
        for keep in [true, false] {
            let reader = GPXReader(
                source: MemoryByteSource(text), name: "t.gpx", options: GPXReadOptions(keepsExtensionElements: keep))
            let doc = try GPXDocument(reader: reader, warnings: nil)
            #expect(doc.tracks[0].segments[0].points.map(\.extensions.heartRate) == [120, nil, 121])
        }
    }
}

/// Issue 14, items 3 and 11: the antimeridian in GeoJSON and GPX output.
@Suite struct AntimeridianOutputTests {
    static func file(_ points: [(Double, Double)]) throws -> String {
        let path = temporaryPath(".gpx")
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>

            """
        for (i, (lat, lon)) in points.enumerated() {
            text += "<trkpt lat=\"\(lat)\" lon=\"\(lon)\"><time>2024-01-01T00:0\(i):00Z</time></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static func geometry(_ points: [(Double, Double)]) throws -> (lines: [[[Double]]], bbox: [Double], root: [Double]) {
        let path = try file(points)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let root = try WriterTests.json(try WriterTests.geojson(path))
        let feature = try #require((root["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        let multi = geometry["coordinates"] as? [[[Double]]]
        let lines = try multi ?? [try #require(geometry["coordinates"] as? [[Double]])]
        return (lines, try #require(feature["bbox"] as? [Double]), try #require(root["bbox"] as? [Double]))
    }

    /// A point exactly on the antimeridian ends (or starts) the line itself: no repeated vertex.
    @Test func aPointOnTheAntimeridianIsNotRepeated() throws {
        let east = try Self.geometry([(-16, 179.5), (-16.5, 180), (-17, -179.5)])
        #expect(east.lines.count == 2)
        #expect(east.lines[0].map { $0[0] } == [179.5, 180])
        #expect(east.lines[1].map { $0[0] } == [-180, -179.5])
        #expect(east.lines[1][0][1] == -16.5)
        let west = try Self.geometry([(-17, -179.5), (-16.5, 180), (-16, 179.5)])
        #expect(west.lines.map { $0.map { $0[0] } } == [[-179.5, -180], [180, 179.5]])
        for g in [east, west] {
            for line in g.lines { #expect(Set(line.map { "\($0)" }).count == line.count, "\(line)") }
        }
    }

    /// Consecutive points at 180 and −180 (the same meridian) split the line, with no
    /// interpolated position and never a null latitude.
    @Test func oneEightyThenMinusOneEightyOnlySplits() throws {
        let g = try Self.geometry([(10, 179), (10.5, 180), (11, -180), (11.5, -179)])
        #expect(g.lines.map { $0.map { $0[0] } } == [[179, 180], [-180, -179]])
        #expect(g.lines.flatMap { $0 }.allSatisfy { $0.count >= 2 && $0[1].isFinite })
    }

    /// "The bounding box of a geometry that crosses the antimeridian is written with the
    /// westernmost longitude greater than the easternmost" (RFC 7946 §5.2), eastward and westward.
    @Test func theBBoxOfALineAcrossTheAntimeridianIsWestGreaterThanEast() throws {
        let eastward = try Self.geometry([(-16, 179.5), (-16.5, 179.9), (-17.5, -179.9), (-18, -179.5)])
        #expect(eastward.bbox == [179.5, -18, -179.5, -16])
        #expect(eastward.root == [179.5, -18, -179.5, -16])
        let westward = try Self.geometry([(50, -170), (51, 175), (52, 170)])
        #expect(westward.bbox == [170, 50, -170, 52])
        // A line that does not cross keeps the plain box.
        let plain = try Self.geometry([(1, -10), (2, 10)])
        #expect(plain.bbox == [-10, 1, 10, 2])
    }

    /// GPX 1.1 requires longitude below 180: a point read at lon="180" is written as -180, and the
    /// output validates against the schema.
    @Test func longitude180IsWrittenAsMinus180InGPX() throws {
        let path = try Self.file([(10, 179.5), (10, 180)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = String(decoding: try WriterTests.gpx(path), as: UTF8.self)
        #expect(text.contains("lon=\"-180\""))
        #expect(!text.contains("lon=\"180\""))
        #expect(!text.contains("maxlon=\"180\""))
        try WriterTests.expectValidGPX(text)
    }
}

/// Issue 14, item 4: an unknown namespace on the root is read as GPX, with a warning naming it
/// (as gpxpy, GPSBabel and GDAL read it), and so is a root without one.
@Suite struct RootNamespaceTests {
    static func read(_ root: String) throws -> (points: Int, warnings: [String]) {
        let text = """
            <?xml version="1.0"?>
            \(root)<trk><trkseg><trkpt lat="1" lon="2"><ele>3</ele><time>2024-01-01T00:00:00Z</time></trkpt>
            <trkpt lat="1.1" lon="2.1"><time>2024-01-01T00:01:00Z</time></trkpt></trkseg></trk>
            <wpt lat="5" lon="6"><name>w</name></wpt></gpx>
            """
        var warnings: [String] = []
        let document = try GPXDocument(data: Array(text.utf8)) { warnings.append($0.description) }
        let points = document.tracks.flatMap { $0.segments.flatMap(\.points) }.count + document.waypoints.count
        return (points, warnings)
    }

    @Test func anUnknownRootNamespaceIsReadAsGPXWithAWarning() throws {
        let v12 = try Self.read(#"<gpx version="1.2" creator="t" xmlns="http://www.topografix.com/GPX/1/2">"#)
        #expect(v12.points == 3)
        #expect(v12.warnings.contains { $0.contains("http://www.topografix.com/GPX/1/2") })
        let none = try Self.read(#"<gpx version="1.1" creator="t">"#)
        #expect(none.points == 3)
        #expect(none.warnings.contains { $0.contains("no namespace") })
        let known = try Self.read(#"<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">"#)
        #expect(known.points == 3 && known.warnings.isEmpty)
    }
}

/// Issue 14, item 5: every field of a waypoint reaches its GeoJSON properties.
@Suite struct WaypointPropertiesTests {
    @Test func everyWaypointFieldIsAProperty() throws {
        let path = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"
          xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
        <wpt lat="47.1" lon="11.2"><ele>600</ele><time>2024-05-01T08:00:00Z</time><magvar>3.5</magvar>
        <geoidheight>47.25</geoidheight><name>Hut</name><cmt>c</cmt><desc>d</desc><src>Garmin eTrex</src>
        <link href="https://example.com"><text>site</text></link><sym>Lodge</sym><type>hut</type><fix>3d</fix>
        <sat>9</sat><hdop>0.9</hdop><vdop>1.4</vdop><pdop>1.7</pdop><ageofdgpsdata>4</ageofdgpsdata>
        <dgpsid>12</dgpsid><extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>99</gpxtpx:hr>
        </gpxtpx:TrackPointExtension></extensions></wpt></gpx>
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let root = try WriterTests.json(try WriterTests.geojson(path, lenient: false))
        let props = try #require((root["features"] as? [[String: Any]])?.first?["properties"] as? [String: Any])
        #expect(props["src"] as? String == "Garmin eTrex")
        #expect(props["magvar"] as? Double == 3.5 && props["geoidheight"] as? Double == 47.25)
        #expect(props["fix"] as? String == "3d" && props["sat"] as? Int == 9)
        #expect(props["hdop"] as? Double == 0.9 && props["vdop"] as? Double == 1.4 && props["pdop"] as? Double == 1.7)
        #expect(props["ageofdgpsdata"] as? Int == 4 && props["dgpsid"] as? Int == 12)
        #expect(props["heart"] as? Int == 99)
        #expect(
            props["name"] as? String == "Hut" && props["sym"] as? String == "Lodge" && props["type"] as? String == "hut"
        )
        #expect(props["cmt"] as? String == "c" && props["desc"] as? String == "d")
    }
}

/// Issue 14, item 8: `maxSpeed` is measured over at least a second, so a GPS glitch of points a few
/// milliseconds apart does not make it.
@Suite struct MaxSpeedTests {
    static func stats(_ points: [(Double, String)]) throws -> TraceStatistics {
        var text = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            """
        for (lon, time) in points { text += "<trkpt lat=\"48\" lon=\"\(lon)\"><time>\(time)</time></trkpt>" }
        text += "</trkseg></trk></gpx>"
        var stats = TraceStatistics()
        try GPXReader(source: MemoryByteSource(Array(text.utf8)), name: "t.gpx").read { stats.add($0) }
        return stats
    }

    @Test func pointsMillisecondsApartDoNotMakeAGlitchSpeed() throws {
        // A walk at 1.5 m/s (0.00002° of longitude at 48° N is 1.49 m) with a fix repeated 3 ms
        // later 20 m away: pairwise, that pair is 6 700 m/s.
        let s = try Self.stats([
            (11.0, "2024-05-01T08:00:00Z"), (11.00002, "2024-05-01T08:00:01Z"), (11.00029, "2024-05-01T08:00:01.003Z"),
            (11.00006, "2024-05-01T08:00:02Z"), (11.00008, "2024-05-01T08:00:03Z"),
        ])
        let max = try #require(s.maxSpeed)
        #expect(max < 30, "\(max)")
        // On a plain 1 Hz track it is the fastest pair.
        let plain = try Self.stats([
            (11.0, "2024-05-01T08:00:00Z"), (11.00002, "2024-05-01T08:00:01Z"), (11.00006, "2024-05-01T08:00:02Z"),
        ])
        let fastest = Geodesic.distance(
            Coordinate(latitude: 48, longitude: 11.00002), Coordinate(latitude: 48, longitude: 11.00006))
        #expect(abs((plain.maxSpeed ?? 0) - fastest) < 1e-9)
    }
}

/// Issue 14, item 1: a point with several `<extensions>` blocks (Apple Watch exports) keeps them
/// all: GeoJSON has every value, GPX output one valid `<extensions>` with every element.
@Suite struct RepeatedExtensionsTests {
    @Test func repeatedExtensionBlocksAreMerged() throws {
        let path = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1"
          xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
        <trk><trkseg>
        <trkpt lat="47.1" lon="11.2"><time>2024-05-01T08:00:00Z</time>
        <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>121</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>
        <extensions><gpxtpx:TrackPointExtension><gpxtpx:cad>88</gpxtpx:cad></gpxtpx:TrackPointExtension></extensions>
        </trkpt>
        <trkpt lat="47.1001" lon="11.2001"><time>2024-05-01T08:00:01Z</time>
        <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>122</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>
        </trkpt>
        </trkseg></trk></gpx>
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let root = try WriterTests.json(try WriterTests.geojson(path, lenient: false))
        let feature = try #require((root["features"] as? [[String: Any]])?.first)
        let cp = try #require((feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])
        #expect((cp["heart"] as? [Int]) == [121, 122])
        #expect((cp["cads"] as? [Any])?.first as? Int == 88)
        let gpx = String(decoding: try WriterTests.gpx(path, lenient: false), as: UTF8.self)
        let firstPoint = try #require(gpx.components(separatedBy: "</trkpt>").first)
        #expect(firstPoint.components(separatedBy: "<extensions>").count == 2, "one block: \(firstPoint)")
        #expect(firstPoint.contains(">121<") && firstPoint.contains(">88<"))
        try WriterTests.expectValidGPX(gpx)
    }
}

/// Issue 14, item 7: `--lenient` leaves out only the bad value.
@Suite struct LenientValueTests {
    @Test func aBadTimeDropsTheTimeNotThePoint() throws {
        let text = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="1" lon="2"><time>2016-12-31T23:59:61Z</time></trkpt>
            <trkpt lat="1.1" lon="2.1"><time>2024-05-01 08:00:00Z</time><hdop>x</hdop></trkpt>
            <trkpt lat="1.2" lon="2.2"><time>2024-05-01T08:00:02Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        var warnings: [String] = []
        let doc = try GPXDocument(data: Array(text.utf8), options: GPXReadOptions(lenient: true)) {
            warnings.append($0.description)
        }
        let points = doc.tracks.flatMap { $0.segments.flatMap(\.points) }
        #expect(points.count == 3)
        #expect(points.map { $0.time == nil } == [true, true, false])
        #expect(points[1].hdop == nil)
        #expect(warnings.filter { $0.contains("the value is left out") }.count == 3, "\(warnings)")
        #expect(throws: GPXError.self) { try GPXDocument(data: Array(text.utf8)) }
    }
}

/// Issue 14, item 6 (part): the speed and course that common apps write without Garmin's schema
/// reach GeoJSON's `speeds` and `courses`, and GPX output keeps the elements where they were.
@Suite struct UnprefixedExtensionTests {
    /// A point's own accuracies are its own: the next point, which says none or only one, has
    /// none (or only that one), on every reading path: waypoints and route points (the general
    /// path), track points with their extensions kept or read for values (the scanner). Mutation
    /// m17 left the vertical accuracy of one point to the next on the general path.
    @Test func accuraciesBelongToTheirPointOnly() throws {
        func points(_ tag: String) -> String {
            """
            <\(tag) lat="47.1" lon="11.2"><extensions><hAcc>4.2</hAcc><vAcc>3.1</vAcc></extensions></\(tag)>
            <\(tag) lat="47.2" lon="11.2"><extensions><hAcc>5.5</hAcc></extensions></\(tag)>
            <\(tag) lat="47.3" lon="11.2"><extensions><speed>1</speed></extensions></\(tag)>
            <\(tag) lat="47.4" lon="11.2"><time>2024-05-01T08:00:00Z</time></\(tag)>
            <\(tag) lat="47.5" lon="11.2"><extensions><vAcc>7.5</vAcc></extensions></\(tag)>
            <\(tag) lat="47.6" lon="11.2"></\(tag)>

            """
        }
        let text = """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">
            \(points("wpt"))<rte>\(points("rtept"))</rte><trk><trkseg>\(points("trkpt"))</trkseg></trk></gpx>
            """
        let expected: [(Double?, Double?)] = [(4.2, 3.1), (5.5, nil), (nil, nil), (nil, nil), (nil, 7.5), (nil, nil)]
        for keeps in [true, false] {
            let reader = GPXReader(
                source: MemoryByteSource(Array(text.utf8)), name: "a.gpx",
                options: GPXReadOptions(keepsExtensionElements: keeps))
            var found: [String: [(Double?, Double?)]] = [:]
            try reader.read { event in
                switch event {
                case .waypoint(let p): found["wpt", default: []].append((p.horizontalAccuracy, p.verticalAccuracy))
                case .routePoint(let p): found["rtept", default: []].append((p.horizontalAccuracy, p.verticalAccuracy))
                case .trackPoint(let p): found["trkpt", default: []].append((p.horizontalAccuracy, p.verticalAccuracy))
                default: break
                }
            }
            for kind in ["wpt", "rtept", "trkpt"] {
                let list = found[kind] ?? []
                #expect(
                    list.count == expected.count && zip(list, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 },
                    "\(kind), extensions kept \(keeps): \(list)")
            }
        }
    }

    @Test func appleHealthAndOsmAndSpeedsAndCoursesAreRead() throws {
        let path = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1"
          xmlns:osmand="https://osmand.net">
        <trk><trkseg>
        <trkpt lat="47.1" lon="11.2"><time>2024-05-01T08:00:00Z</time>
        <extensions><speed>1.25</speed><course>90.5</course><hAcc>4.2</hAcc><vAcc>3.1</vAcc></extensions></trkpt>
        <trkpt lat="47.1001" lon="11.2001"><time>2024-05-01T08:00:01Z</time>
        <extensions><osmand:speed>2.5</osmand:speed><osmand:heading>180</osmand:heading></extensions></trkpt>
        </trkseg></trk></gpx>
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let root = try WriterTests.json(try WriterTests.geojson(path, lenient: false))
        let feature = try #require((root["features"] as? [[String: Any]])?.first)
        let cp = try #require((feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])
        #expect((cp["speeds"] as? [Double]) == [1.25, 2.5])
        #expect((cp["courses"] as? [Double]) == [90.5, 180])
        let gpx = String(decoding: try WriterTests.gpx(path, lenient: false), as: UTF8.self)
        #expect(gpx.contains(">1.25<") && gpx.contains("osmand:heading") && gpx.contains("hAcc"))
        // In replay, the file's own accuracy beats the HDOP model; speed and course come through.
        let points = try GPXDocument(contentsOf: path).tracks[0].segments[0].points
        #expect(points[0].horizontalAccuracy == 4.2 && points[0].verticalAccuracy == 3.1)
        let located = GPXLocationMapping.default.location(
            for: points[0], file: path, index: 0, timestamp: points[0].time!)
        #expect(located.horizontalAccuracy == 4.2)
        #expect(located.speed == 1.25 && located.course == 90.5)
        var withHDOP = points[0]
        withHDOP.hdop = 3
        #expect(
            GPXLocationMapping.default.location(for: withHDOP, file: path, index: 0, timestamp: .now).horizontalAccuracy
                == 4.2)
        #expect(
            GPXLocationMapping.default.location(for: points[1], file: path, index: 1, timestamp: .now)
                .horizontalAccuracy == 10)
    }
}

/// Issue 14, item 2: GPX 1.0 allows elements of other namespaces anywhere; the upgrade to 1.1
/// keeps them in the `<extensions>` of the same element, as GPSBabel does, and the output is valid.
@Suite struct ForeignElementsTests {
    @Test func gpx10ForeignElementsMoveIntoExtensions() throws {
        let path = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.0" creator="Groundspeak" xmlns="http://www.topografix.com/GPX/1/0"
          xmlns:groundspeak="http://www.groundspeak.com/cache/1/0" xmlns:topografix="http://www.topografix.com/GPX/Private/TopoGrafix/0/2">
        <wpt lat="47.1" lon="11.2"><name>GC12345</name><sym>Geocache</sym>
        <groundspeak:cache id="42" available="True"><groundspeak:name>Hidden &amp; found</groundspeak:name>
        <groundspeak:difficulty>2</groundspeak:difficulty></groundspeak:cache></wpt>
        <trk><name>T</name><topografix:color>c0c0c0</topografix:color><trkseg>
        <trkpt lat="47.1" lon="11.2"><time>2024-05-01T08:00:00Z</time></trkpt>
        <trkpt lat="47.2" lon="11.3"><time>2024-05-01T08:01:00Z</time></trkpt>
        </trkseg></trk></gpx>
        """.write(toFile: path, atomically: false, encoding: .utf8)
        var warnings: [String] = []
        _ = try GPXDocument(contentsOf: path) { warnings.append($0.description) }
        #expect(!warnings.contains { $0.contains("cache") || $0.contains("color") }, "allowed in 1.0: \(warnings)")
        let gpx = String(decoding: try WriterTests.gpx(path, lenient: false), as: UTF8.self)
        let wpt = try #require(gpx.components(separatedBy: "</wpt>").first)
        #expect(wpt.contains("<extensions>") && wpt.contains("groundspeak:cache") && wpt.contains("Hidden &amp; found"))
        let trk = try #require(gpx.components(separatedBy: "<trk>").last)
        #expect(trk.contains("topografix:color") && trk.contains("c0c0c0"))
        try WriterTests.expectValidGPX(gpx)
    }
}
