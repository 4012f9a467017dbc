import Foundation
import Testing

@testable import Waymark

/// GeoJSON for the web (issue 29, item 1): fewer decimals, no elevations, fewer points, a
/// summary per line, colours. Checked as properties over generated traces (near the poles and
/// the antimeridian, 1990 to 2079), against an independent measure where there is one.
@Suite struct GeoJSONWebOptionsTests {
    typealias Gen = ReaderWriterPropertyTests

    static func geojson(_ text: String, _ options: GeoJSONOptions) throws -> [String: Any] {
        let reader = GPXReader(source: MemoryByteSource(Array(text.utf8)), name: "generated.gpx")
        let data = try render { sink in
            let writer = GeoJSONOptionsWriter(sink: sink, options: options)
            try reader.read { try writer.write($0) }
            try writer.finish()
        }
        return try WriterTests.json(data)
    }

    static func lines(_ object: [String: Any]) -> [[String: Any]] {
        (object["features"] as? [[String: Any]] ?? []).filter {
            ["LineString", "MultiLineString"].contains(($0["geometry"] as? [String: Any])?["type"] as? String ?? "")
        }
    }

    /// Every position of a feature, as arrays of numbers, line by line.
    static func positions(_ feature: [String: Any]) -> [[[Double]]] {
        let geometry = feature["geometry"] as? [String: Any]
        if geometry?["type"] as? String == "LineString" {
            return [geometry?["coordinates"] as? [[Double]] ?? []]
        }
        return geometry?["coordinates"] as? [[[Double]]] ?? []
    }

    /// Decimals in a number's shortest text.
    static func decimals(_ value: Double) -> Int {
        let text = "\(value)"
        guard !text.contains("e"), let dot = text.firstIndex(of: ".") else { return 0 }
        let fraction = text[text.index(after: dot)...]
        return fraction == "0" ? 0 : fraction.count
    }

    /// Precision: every longitude and latitude has at most N decimals and is the input's,
    /// rounded to N (off by at most half a unit of the Nth decimal); elevations at most
    /// min(N, 3); the boxes still hold every position; --2d leaves elevations out.
    @Test func precisionRoundsEveryPositionAndTheBoxesStillHoldThem() {
        Gen.chunked.check { c in
            var problems = Problems()
            let text = Gen.gpx(c.fixes, from: c.start)
            let n = Int(c.start % 8)
            let twoD = c.start % 3 == 0
            guard
                let object = try? Self.geojson(
                    text, GeoJSONOptions(positions: GeoJSONPositionFormat(decimals: n, elevations: !twoD)))
            else { return ["could not write"] }
            let all = Self.lines(object).flatMap(Self.positions).flatMap { $0 }
            // A line that crosses the antimeridian gains two positions on it, and a line of one
            // point has it twice: compare position and fix where neither happened.
            let own = c.fixes.count == 1 ? Array(all.prefix(1)) : all
            problems.expect(all.count >= c.fixes.count, "\(all.count) positions for \(c.fixes.count) fixes")
            let unit = pow(10, Double(-n))
            for (position, fix) in zip(own, c.fixes) where own.count == c.fixes.count {
                problems.expect(
                    abs(position[0] - Double(fix.lon7) / 1e7) <= unit / 2 + 1e-12
                        && abs(position[1] - Double(fix.lat7) / 1e7) <= unit / 2 + 1e-12,
                    "\(position) for \(fix) at \(n) decimals")
                problems.expect(position.count == (twoD ? 2 : 3), "\(position): elevation with --2d \(twoD)")
                if position.count == 3 {
                    problems.expect(Self.decimals(position[2]) <= min(n, 3), "elevation \(position[2])")
                    problems.expect(
                        abs(position[2] - Double(fix.eleCm) / 100) <= pow(10, Double(-min(n, 3))) / 2 + 1e-9)
                }
            }
            for position in all {
                problems.expect(
                    Self.decimals(position[0]) <= n && Self.decimals(position[1]) <= n, "\(position) at \(n)")
            }
            if let bbox = object["bbox"] as? [Double], bbox.count == 4 {
                for position in all {
                    let inLatitude = bbox[1] <= position[1] && position[1] <= bbox[3]
                    let inLongitude =
                        bbox[0] <= bbox[2]
                        ? bbox[0] <= position[0] && position[0] <= bbox[2]
                        : position[0] >= bbox[0] || position[0] <= bbox[2]
                    problems.expect(inLatitude && inLongitude, "\(position) outside the box \(bbox)")
                }
            } else {
                problems.expect(false, "no box")
            }
            return problems.list
        }
    }

    /// Simplify: the first and last points are kept, and every point left out lies within the
    /// tolerance of the line kept, measured on the WGS 84 geodesic (the nearest of the kept
    /// line's points interpolated every metre), with half a percent for the flat map's error.
    @Test(arguments: [1 << 16, 4])
    func everyPointLeftOutIsWithinTheToleranceOfTheLineKept(window: Int) {
        Property<(points: [Coordinate], tolerance: Double)>(
            name: "simplify \(window)", count: 40,
            generate: { r in
                // A walk, a drive or a zigzag near somewhere on Earth, the poles and the antimeridian too.
                let start = Coordinate(
                    latitude: Double(r.int(-8_900...8_900)) / 100, longitude: Double(r.int(-18_000...17_999)) / 100)
                var points = [start]
                var bearing = Double(r.int(0...359))
                let step = r.pick([1.0, 5.0, 25.0])
                for _ in 0..<r.int(2...120) {
                    bearing += Double(r.int(-30...30))
                    points.append(Geodesic.destination(from: points.last!, bearing: bearing, distance: step))
                }
                return (points, r.pick([0.5, 2.0, 5.0, 20.0]))
            },
            describe: { "tolerance \($0.tolerance): \($0.points)" }
        ).check { input in
            var problems = Problems()
            let simplifier = LineSimplifier<Int>(tolerance: input.tolerance, window: window) { input.points[$0] }
            var kept: [Int] = []
            do {
                for i in input.points.indices { try simplifier.add(i) { kept.append($0) } }
                try simplifier.finishLine { kept.append($0) }
            } catch {
                return ["\(error)"]
            }
            problems.expect(kept.first == 0 && kept.last == input.points.count - 1, "the ends are kept: \(kept)")
            problems.expect(kept == kept.sorted() && Set(kept).count == kept.count, "in order, once each")
            for (a, b) in zip(kept, kept.dropFirst()) where b > a + 1 {
                let p = input.points[a]
                let q = input.points[b]
                let length = Geodesic.distance(p, q)
                let samples = max(1, Int(length.rounded(.up)))
                let line = (0...samples).map { Geodesic.interpolate(p, q, fraction: Double($0) / Double(samples)) }
                for i in (a + 1)..<b {
                    let nearest = line.map { Geodesic.distance(input.points[i], $0) }.min()!
                    // The samples are a metre apart: the nearest is at most half a metre off.
                    problems.expect(
                        nearest <= input.tolerance * 1.005 + 0.5,
                        "point \(i) is \(nearest) m from the kept line \(a)–\(b), tolerance \(input.tolerance)")
                }
            }
            return problems.list
        }
    }

    /// On a smooth walk simplification keeps far fewer points, and the written lines keep their
    /// per-point arrays aligned with the positions kept.
    @Test func simplifyingAWalkKeepsItsShapeInFewerPoints() throws {
        let text = try String(contentsOfFile: Paths.fixture("scenarios/traces/walk.gpx"), encoding: .utf8)
        let all = Self.lines(try Self.geojson(text, GeoJSONOptions())).flatMap(Self.positions).flatMap { $0 }
        let simplified = try Self.geojson(text, GeoJSONOptions(simplify: 5))
        let feature = try #require(Self.lines(simplified).first)
        let kept = Self.positions(feature).flatMap { $0 }
        #expect(kept.count < all.count / 2, "\(kept.count) of \(all.count)")
        #expect(kept.first == all.first && kept.last == all.last)
        let times = ((feature["properties"] as? [String: Any])?["coordinateProperties"] as? [String: Any])?["times"]
        #expect((times as? [Any])?.count == kept.count, "times aligned with the positions kept")
    }

    /// The summary of each line is what `info` says of a file holding that line alone: a join
    /// of the writer with the statistics, track by track, not the whole file's figures.
    @Test func eachLinesSummaryIsThatLinesOwn() throws {
        let path = Paths.fixture("gpx/segments.gpx")
        let document = try readDocument(path).0
        var twoTracks = document
        var second = document.tracks[0]
        second.info.name = "second"
        second.segments = [second.segments.last!]
        twoTracks.tracks.append(second)
        let text = try render { sink in try GPXWriter.write(twoTracks, to: sink) }
        let object = try Self.geojson(String(decoding: text, as: UTF8.self), GeoJSONOptions(summary: true))
        let tracks = Self.lines(object).filter { ($0["properties"] as? [String: Any])?["_gpxType"] as? String == "trk" }
        try #require(tracks.count == 2)
        for (feature, track) in zip(tracks, twoTracks.tracks) {
            var alone = twoTracks
            alone.tracks = [track]
            alone.routes = []
            alone.waypoints = []
            var statistics = TraceStatistics()
            alone.forEachEvent { statistics.add($0) }
            let properties = try #require(feature["properties"] as? [String: Any])
            #expect(abs((properties["length"] as? Double ?? -1) - statistics.length2D) <= 0.05)
            #expect(abs((properties["duration"] as? Double ?? -1) - (statistics.duration ?? -2)) <= 0.0005)
            #expect(abs((properties["ascent"] as? Double ?? -1) - statistics.climb) <= 0.05)
            #expect(properties["startTime"] as? String == statistics.startTime.map(ValueFormatting.iso8601))
            #expect(properties["endTime"] as? String == statistics.endTime.map(ValueFormatting.iso8601))
        }
        let route = Self.lines(object).first { ($0["properties"] as? [String: Any])?["_gpxType"] as? String == "rte" }
        let routeLength = (route?["properties"] as? [String: Any])?["length"] as? Double
        #expect(routeLength != nil && routeLength! > 0, "a route has its length")
    }

    /// A text sequence (RFC 8142) holds the collection's features, each a record of its own:
    /// a record separator, one Feature, a line feed; no collection around them. For lines, for
    /// points, and for the locations a run delivered.
    @Test func aSequenceHoldsTheCollectionsFeaturesOneRecordEach() throws {
        for path in WriterTests.fixtureTraces {
            for base in [GeoJSONOptions(), GeoJSONOptions(points: true), GeoJSONOptions(summary: true, style: true)] {
                var sequenced = base
                sequenced.sequence = true
                let reader = { try GPXReader(contentsOf: path, options: GPXReadOptions(lenient: true)) }
                func write(_ options: GeoJSONOptions) throws -> Data {
                    let events = try reader()
                    return try render { sink in
                        let writer = GeoJSONOptionsWriter(sink: sink, options: options)
                        try events.read { try writer.write($0) }
                        try writer.finish()
                    }
                }
                let collection = try WriterTests.json(try write(base))["features"] as? [[String: Any]] ?? []
                let bytes = Array(try write(sequenced))
                if collection.isEmpty {
                    #expect(bytes.isEmpty, "\(path): an empty sequence is empty")
                    continue
                }
                #expect(bytes.first == 0x1E && bytes.last == UInt8(ascii: "\n"), "\(path)")
                let records = bytes.split(separator: 0x1E, omittingEmptySubsequences: false).dropFirst()
                #expect(
                    records.count == collection.count, "\(path): \(records.count) records, \(collection.count) features"
                )
                for (record, feature) in zip(records, collection) {
                    #expect(record.last == UInt8(ascii: "\n") && record.dropLast().last == UInt8(ascii: "}"))
                    let object = try JSONSerialization.jsonObject(with: Data(record)) as? NSDictionary
                    #expect(object == feature as NSDictionary, "\(path): a record is not its feature")
                }
            }
        }
    }

    /// Each line's bbox is its own (mutation m07): a line that does not cross the antimeridian
    /// has the plain box of its positions, west ≤ east, whatever the lines before it did, and a
    /// line that crosses has a box across it that holds its positions.
    @Test func eachLinesBoxIsItsOwnWhateverCameBefore() {
        Property<[[Gen.Fix]]>(
            name: "feature boxes", count: 60,
            generate: { r in
                r.array(2...4) { r in
                    switch r.int(0...2) {
                    case 0:  // across the antimeridian
                        [
                            Gen.Fix(lat7: r.int(-10...10) * 10_000_000, lon7: 1_799_000_000, eleCm: 0, gap: 1),
                            Gen.Fix(lat7: r.int(-10...10) * 10_000_000, lon7: -1_799_000_000, eleCm: 0, gap: 1),
                        ]
                    case 1:  // across Greenwich
                        [
                            Gen.Fix(lat7: 515_000_000, lon7: -r.int(1...1_000_000), eleCm: 0, gap: 1),
                            Gen.Fix(lat7: 515_000_000, lon7: r.int(1...1_000_000), eleCm: 0, gap: 1),
                        ]
                    default: Gen.fixes(&r)
                    }
                }
            },
            describe: { "\($0)" }
        ).check { tracks in
            var text = "<?xml version=\"1.0\"?>"
            text += "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
            for fixes in tracks {
                text += "<trk><trkseg>"
                for f in fixes { text += "<trkpt lat=\"\(Gen.decimal(f.lat7))\" lon=\"\(Gen.decimal(f.lon7))\"/>" }
                text += "</trkseg></trk>"
            }
            text += "</gpx>"
            guard let object = try? Self.geojson(text, GeoJSONOptions(summary: true)) else {
                return ["could not write"]
            }
            var problems = Problems()
            for (k, feature) in Self.lines(object).enumerated() {
                let lines = Self.positions(feature)
                let all = lines.flatMap { $0 }
                guard let box = feature["bbox"] as? [Double], box.count == 4, !all.isEmpty else {
                    problems.expect(false, "line \(k) has no box")
                    continue
                }
                let crosses = lines.count > 1 && all.contains { abs($0[0]) == 180 }
                if crosses {
                    problems.expect(box[0] > box[2], "line \(k) crosses, its box \(box) does not")
                } else {
                    let longitudes = all.map { $0[0] }
                    let latitudes = all.map { $0[1] }
                    problems.expect(
                        box == [longitudes.min()!, latitudes.min()!, longitudes.max()!, latitudes.max()!],
                        "line \(k) does not cross, yet its box is \(box)")
                }
            }
            return problems.list
        }
    }

    /// Style: lines cycle through the palette in order, waypoints get a marker.
    @Test func eachLineGetsTheNextColour() throws {
        let object = try Self.geojson(
            try String(contentsOfFile: Paths.fixture("gpx/segments.gpx"), encoding: .utf8), GeoJSONOptions(style: true))
        let features = object["features"] as? [[String: Any]] ?? []
        let strokes = features.compactMap { ($0["properties"] as? [String: Any])?["stroke"] as? String }
        #expect(strokes == Array(GeoJSONStyle.lineColors.prefix(strokes.count)) && strokes.count == 2)
        let markers = features.compactMap { ($0["properties"] as? [String: Any])?["marker-color"] as? String }
        #expect(markers.count == 1)
    }
}
