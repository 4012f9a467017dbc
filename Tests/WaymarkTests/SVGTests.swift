import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Issue 17: `render --format svg`, the writer and its projection.
@Suite struct SVGTests {
    /// Draws `events` and returns the SVG text.
    static func draw(_ events: [GPXEvent], title: String = "test.gpx") throws -> String {
        let data = try render { sink in
            let writer = SVGWriter(sink: sink, options: SVGWriter.Options(title: title))
            for event in events { try writer.write(event) }
            try writer.finish()
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A track of the given segments, each a list of (latitude, longitude).
    static func track(_ segments: [[(Double, Double)]], name: String? = nil) -> [GPXEvent] {
        var events: [GPXEvent] = [.header(GPXHeader()), .trackStart(GPXPathInfo(name: name))]
        for segment in segments {
            events.append(.segmentStart)
            for (lat, lon) in segment { events.append(.trackPoint(GPXPoint(latitude: lat, longitude: lon))) }
            events.append(.segmentEnd(GPXExtensions()))
        }
        events.append(.trackEnd(GPXPathInfo(name: name)))
        return events
    }

    static func fileEvents(_ path: String) throws -> [GPXEvent] {
        try events(of: GPXReader(contentsOf: path))
    }

    /// The points of every `<polyline>`, in order.
    static func polylines(_ svg: String) -> [[(x: Double, y: Double)]] {
        svg.components(separatedBy: "<polyline points=\"").dropFirst().map { rest in
            let list = rest.prefix { $0 != "\"" }
            return list.split(separator: " ").map { pair in
                let xy = pair.split(separator: ",").map { Double($0)! }
                return (xy[0], xy[1])
            }
        }
    }

    /// Parses `svg` with Foundation's XMLParser; returns the text of every `<text>` element.
    static func parse(_ svg: String) throws -> [String] {
        final class Collector: NSObject, XMLParserDelegate {
            var texts: [String] = []
            var current: String?
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) { if name == "text" { current = "" } }
            func parser(_ parser: XMLParser, foundCharacters string: String) { current?.append(string) }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?)
            {
                if name == "text", let current { texts.append(current) }
                current = nil
            }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        return collector.texts
    }

    @Test func theSameEventsGiveTheSameBytes() throws {
        let events = try Self.fileEvents(Paths.root.appendingPathComponent("traces/city-walk.gpx").path)
        let a = try Self.draw(events)
        let b = try Self.draw(events)
        #expect(a == b)
        #expect(a.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""))
        let texts = try Self.parse(a)
        #expect(texts.contains("test.gpx — “City walk”"), "\(texts)")
        #expect(texts.contains("Café"))
        #expect(a.contains("local equirectangular"))
        #expect(a.contains("id=\"north-arrow\"") && a.contains("id=\"scale-bar\"") && a.contains("id=\"legend\""))
    }

    @Test(arguments: ["traces/city-walk.gpx", "traces/drive-tunnel.gpx", "traces/xcode-route.gpx"])
    func projectTracesAreWellFormedXML(_ relative: String) throws {
        let svg = try Self.draw(try Self.fileEvents(Paths.root.appendingPathComponent(relative).path))
        _ = try Self.parse(svg)
        if let xmllint = which("xmllint") {
            let r = try run(xmllint, ["--noout", "-"], input: Data(svg.utf8))
            #expect(r.status == 0, "\(r.stderr)")
        }
    }

    @Test func smallAreasAreEquirectangularAndLargeOnesWebMercator() {
        #expect(SVGProjection.kind(latitudeSpan: 0.01, longitudeSpan: 0.02) == .localEquirectangular)
        #expect(SVGProjection.kind(latitudeSpan: 5, longitudeSpan: 5) == .localEquirectangular)
        #expect(SVGProjection.kind(latitudeSpan: 10, longitudeSpan: 1) == .webMercator)
        #expect(SVGProjection.kind(latitudeSpan: 1, longitudeSpan: 40) == .webMercator)
    }

    @Test func theLocalProjectionScalesLongitudesByTheCosineOfTheMeanLatitude() {
        let p = SVGProjection(south: 48, west: 11, north: 48.01, east: 11.02, x: 0, y: 0, width: 1000, height: 1000)
        #expect(p.kind == .localEquirectangular)
        let r = 6_378_137.0
        let metresPerDegree = r * .pi / 180
        let spanX = 0.02 * metresPerDegree * cos(48.005 * .pi / 180)  // 1489.9 m
        let spanY = 0.01 * metresPerDegree  // 1113.2 m
        let scale = 1000 / spanX  // the wider side fills the width
        #expect(abs(p.scale - scale) < 1e-12)
        let westNorth = p.pixel(latitude: 48.01, longitude: 11)
        #expect(abs(westNorth.x - 0) < 1e-6)
        #expect(abs(westNorth.y - (500 - spanY / 2 * scale)) < 1e-6)
        let eastSouth = p.pixel(latitude: 48, longitude: 11.02)
        #expect(abs(eastSouth.x - 1000) < 1e-6)
        #expect(abs(eastSouth.y - (500 + spanY / 2 * scale)) < 1e-6)
        let centre = p.pixel(latitude: 48.005, longitude: 11.01)
        #expect(abs(centre.x - 500) < 1e-6 && abs(centre.y - 500) < 1e-6)
    }

    @Test func webMercatorMapsKnownCoordinatesToTheirPixels() {
        // EPSG:3857: 40° of longitude are 4 452 779.63 m; 10° N is y = 1 118 889.97 m.
        let p = SVGProjection(south: -10, west: 0, north: 10, east: 40, x: 0, y: 0, width: 1000, height: 1000)
        #expect(p.kind == .webMercator)
        let scale = 1000 / 4_452_779.631_730_943
        #expect(abs(p.scale - scale) < 1e-12)
        let northWest = p.pixel(latitude: 10, longitude: 0)
        #expect(abs(northWest.x) < 1e-6)
        #expect(abs(northWest.y - (500 - 1_118_889.974_857_959 * scale)) < 1e-3)  // 248.72
        let onEquator = p.pixel(latitude: 0, longitude: 20)
        #expect(abs(onEquator.x - 500) < 1e-6 && abs(onEquator.y - 500) < 1e-6)
    }

    /// A box up to a pole: Web Mercator clamps latitudes at ±85.0511° (EPSG:3857's square world),
    /// so the pole is drawn where the limit is and the drawing keeps the viewport's height
    /// (mutation m09: unclamped, the pole projects to y ≈ 37 radii and squashes the rest).
    @Test func webMercatorClampsThePolesAtItsLimit() {
        for (south, north) in [(0.0, 90.0), (-90.0, 0.0), (-90.0, 90.0)] {
            let p = SVGProjection(south: south, west: 0, north: north, east: 40, x: 0, y: 0, width: 1000, height: 1000)
            #expect(p.kind == .webMercator)
            let limit = SVGProjection.mercatorLimit
            for pole in [north, south] where abs(pole) == 90 {
                let atPole = p.pixel(latitude: pole, longitude: 20)
                let atLimit = p.pixel(latitude: pole > 0 ? limit : -limit, longitude: 20)
                #expect(atPole.y.isFinite && atPole.y == atLimit.y, "pole \(pole): \(atPole.y), the limit \(atLimit.y)")
            }
            let top = p.pixel(latitude: north, longitude: 20).y
            let bottom = p.pixel(latitude: south, longitude: 20).y
            #expect(abs((bottom - top) - 1000) < 1e-6, "from \(south)° to \(north)° spans \(bottom - top) px of 1000")
        }
    }

    /// A track from 179.5° E to 179.5° W is drawn as the 1° it covers, eastwards, not as a line
    /// back across the world.
    @Test func aTrackAcrossTheAntimeridianStaysContinuous() throws {
        let svg = try Self.draw(try Self.fileEvents(Paths.fixture("gpx/antimeridian.gpx")))
        #expect(svg.contains("local equirectangular"))
        let lines = Self.polylines(svg)
        #expect(lines.count == 1)
        let xs = lines[0].map(\.x)
        #expect(xs == xs.sorted() && xs.count == 4, "\(xs)")
        // 1° of longitude at 17° S against 2° of latitude: the height fills the map.
        #expect(xs.last! - xs.first! < 500, "\(xs)")
        #expect(SVGWriter.unwrap(-179.9, near: 179.9) == 180.1)
        #expect(SVGWriter.unwrap(179.9, near: -179.9) == -180.1)
        #expect(SVGWriter.unwrap(10, near: 0) == 10)
    }

    @Test func segmentGapsGiveSeparatePolylines() throws {
        let svg = try Self.draw(
            Self.track([
                [(48.0, 11.0), (48.001, 11.001), (48.002, 11.0)],
                [(48.004, 11.002), (48.005, 11.004)],
                [],
                [(48.006, 11.0)],
            ]))
        let lines = Self.polylines(svg)
        #expect(lines.count == 3)
        #expect(lines.map(\.count) == [3, 2, 2])  // a lone point is drawn as a dot
        // The start mark is on the first point and the end mark on the last.
        #expect(
            svg.contains(
                "<circle id=\"start\" cx=\"\(Self.number(lines[0][0].x))\" cy=\"\(Self.number(lines[0][0].y))\""))
        #expect(svg.contains("<rect id=\"end\" x=\"\(Self.number(lines[2][0].x - 6.5))\""))
    }

    static func number(_ v: Double) -> String { ValueFormatting.fixed(v, decimals: 1) }

    @Test func routesAreDashedAndWaypointNamesEscaped() throws {
        var events: [GPXEvent] = [.header(GPXHeader())]
        var m = GPXMetadata()
        m.name = "Tom & Jerry's <walk>"
        events.append(.metadata(m))
        var w = GPXPoint(latitude: 48.001, longitude: 11.001)
        w.name = "<&\">"
        events.append(.waypoint(w))
        events.append(.routeStart(GPXPathInfo(name: "r")))
        events.append(.routePoint(GPXPoint(latitude: 48, longitude: 11)))
        events.append(.routePoint(GPXPoint(latitude: 48.002, longitude: 11.003)))
        events.append(.routeEnd(GPXPathInfo(name: "r")))
        let svg = try Self.draw(events, title: "a&b.gpx")
        #expect(svg.contains(">&lt;&amp;\"&gt;</text>"))
        #expect(svg.contains("<title>a&amp;b.gpx — “Tom &amp; Jerry's &lt;walk&gt;”</title>"))
        let texts = try Self.parse(svg)
        #expect(texts.contains("<&\">"))
        #expect(svg.contains("<g id=\"routes\"") && svg.contains("stroke-dasharray"))
        #expect(!svg.contains("<g id=\"tracks\""))
        #expect(Self.polylines(svg).count == 1)
    }

    /// Xcode's simulated routes are waypoints alone, visited in order.
    @Test func waypointsAloneAreJoinedInOrder() throws {
        let path = Paths.root.appendingPathComponent("traces/xcode-route.gpx").path
        let svg = try Self.draw(try Self.fileEvents(path))
        #expect(svg.contains("<polyline id=\"waypoint-order\""))
        #expect(svg.contains("<circle id=\"start\"") && svg.contains("<rect id=\"end\""))
        #expect(Self.polylines(svg).isEmpty)
        #expect(svg.contains("text-anchor=\"end\">De Anza"), "a name at the right edge goes to the left")
    }

    /// One point, at a pole, or a box around the world: a valid picture with finite numbers.
    @Test(arguments: [
        [[(90.0, 0.0)]], [[(-90.0, 10.0), (-89.0, 170.0)]], [[(48.0, 11.0)]],
        [[(0.0, 0.0), (60.0, 120.0), (0.0, -120.0), (-60.0, 0.0)]],
    ])
    func extremeTracesGiveValidPictures(_ segments: [[(Double, Double)]]) throws {
        let svg = try Self.draw(Self.track(segments))
        _ = try Self.parse(svg)
        #expect(!svg.contains("nan") && !svg.contains("inf"), "\(svg)")
        #expect(svg.contains("<circle id=\"start\""))
    }

    @Test func anEmptyTraceIsAPictureThatSaysSo() throws {
        let svg = try Self.draw([.header(GPXHeader())])
        _ = try Self.parse(svg)
        #expect(svg.contains("no points"))
    }

    @Test func theScaleBarShowsARoundDistance() {
        #expect(SVGWriter.roundDistance(atMost: 740) == (500, "500 m"))
        #expect(SVGWriter.roundDistance(atMost: 1999) == (1000, "1 km"))
        #expect(SVGWriter.roundDistance(atMost: 2000) == (2000, "2 km"))
        #expect(SVGWriter.roundDistance(atMost: 99_000) == (50_000, "50 km"))
        #expect(SVGWriter.roundDistance(atMost: 0.2) == (1, "1 m"))
    }

    @Test func douglasPeuckerKeepsCornersAndDropsCollinearPoints() {
        let points: [(x: Double, y: Double)] = [(0, 0), (1, 0.1), (2, 0), (3, 0), (3, 5), (3, 10), (0, 10)]
        #expect(SVGWriter.simplify(points, tolerance: 0.5) == [0, 3, 5, 6])
        #expect(SVGWriter.simplify(points, tolerance: 0.01) == [0, 1, 2, 3, 5, 6])
    }

    /// A million points (a noisy spiral, 3 km across) give a small file in bounded memory; the
    /// first and last points are still the start and the end.
    @Test(.timeLimit(.minutes(45))) func aMillionPointsGiveASmallPicture() throws {
        let count = 1_000_000
        let data = try render { sink in
            let writer = SVGWriter(sink: sink)
            try writer.write(.trackStart(GPXPathInfo()))
            try writer.write(.segmentStart)
            var seed: UInt64 = 42
            for i in 0..<count {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double(seed >> 40) / Double(1 << 24) - 0.5
                let t = Double(i) / Double(count)
                let angle = t * 40 * .pi
                let radius = 0.01 * t + 0.00002 * noise
                try writer.write(
                    .trackPoint(
                        GPXPoint(latitude: 51.5 + radius * sin(angle), longitude: -0.1 + radius * cos(angle) * 1.6)))
            }
            try writer.write(.segmentEnd(GPXExtensions()))
            try writer.write(.trackEnd(GPXPathInfo()))
            try writer.finish()
        }
        let svg = String(decoding: data, as: UTF8.self)
        #expect(data.count < 2_000_000, "\(data.count) bytes")
        #expect(data.count > 20_000, "\(data.count) bytes")
        _ = try Self.parse(svg)
        #expect(svg.contains("1000000 track point(s)"))
        let line = try #require(Self.polylines(svg).first)
        #expect(svg.contains("<circle id=\"start\" cx=\"\(Self.number(line[0].x))\""))
    }
}

/// `render --format svg` from the command line.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct SVGRenderCLITests {
    static let walk = Paths.root.appendingPathComponent("traces/city-walk.gpx").path

    func waymark(_ arguments: String...) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    @Test func renderWritesSVGToStandardOutputOrByTheExtension() throws {
        let stdout = try waymark("render", Self.walk, "--format", "svg")
        #expect(stdout.status == 0, "\(stdout.stderr)")
        #expect(stdout.stdoutText.hasPrefix("<?xml"))
        #expect(stdout.stdoutText.contains("<title>city-walk.gpx — “City walk”</title>"))
        let out = temporaryPath(".svg")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let file = try waymark("render", Self.walk, "-o", out)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == stdout.stdout)
        let upper = temporaryPath(".SVG")
        defer { try? FileManager.default.removeItem(atPath: upper) }
        #expect(try waymark("render", Self.walk, "-o", upper).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: upper)) == stdout.stdout)
    }

    @Test func aContradictingFormatOrACommandThatCannotDrawIsAUsageError() throws {
        let out = temporaryPath(".svg")
        let clash = try waymark("render", Self.walk, "--format", "geojson", "-o", out)
        #expect(clash.status == 64 && clash.stderr.contains("disagree"), "\(clash.stderr)")
        let svgToGPX = try waymark("render", Self.walk, "--format", "svg", "-o", temporaryPath(".gpx"))
        #expect(svgToGPX.status == 64, "\(svgToGPX.stderr)")
        let svgPoints = try waymark("render", Self.walk, "--format", "svg", "--points")
        #expect(svgPoints.status == 64, "\(svgPoints.stderr)")
        let replay = try waymark("replay", Self.walk, "--rate", "max", "--no-store", "-o", out)
        #expect(replay.status == 64 && replay.stderr.contains("render draws SVG"), "\(replay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func aStoredSessionRendersAsSVG() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let replay = try waymark(
            "replay", Self.walk, "--store", store, "--rate", "max", "--format", "ndjson", "--quiet")
        #expect(replay.status == 0, "\(replay.stderr)")
        let a = try waymark("render", "--session", "1", "--store", store, "--format", "svg")
        #expect(a.status == 0, "\(a.stderr)")
        #expect(a.stdoutText.contains("<title>“Waymark session 1: "))
        #expect(a.stdoutText.contains("<polyline points="))
        let b = try waymark("render", "--session", "1", "--store", store, "--format", "svg")
        #expect(a.stdout == b.stdout)
    }
}

/// Issue 17: the picture as a browser draws it. Debian's `chromium`, headless, takes a screenshot
/// of the SVG of traces/city-walk.gpx; the PNG is decoded with python3's zlib alone (no
/// imaging library) and checked: not blank, the track's colour where the track is, the start
/// and end marks, the legend drawn; and chromium logs no script errors. scripts/test.sh installs
/// chromium when it is missing.
@Suite(
    .enabled(
        if: which("chromium") != nil && which("python3") != nil,
        "chromium is not installed (scripts/test.sh installs it: apt-get install chromium)"),
    .timeLimit(.minutes(45)))
struct SVGBrowserTests {
    /// Decodes an 8-bit RGB or RGBA PNG and answers questions about its pixels, as JSON.
    static let pngProbe = #"""
        import json, struct, sys, zlib
        from collections import Counter
        path, probes = sys.argv[1], json.loads(sys.argv[2])
        data = open(path, 'rb').read()
        assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
        pos, idat = 8, b''
        while pos < len(data):
            n, kind = struct.unpack('>I4s', data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + n]
            if kind == b'IHDR':
                w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
                assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            elif kind == b'IDAT':
                idat += body
            pos += 12 + n
        bpp = 3 if ctype == 2 else 4
        raw, stride = zlib.decompress(idat), w * bpp
        rows, prev, i = [], bytearray(stride), 0
        for y in range(h):
            f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
            i += 1 + stride
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1: line[x] = (line[x] + a) & 255
                elif f == 2: line[x] = (line[x] + b) & 255
                elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(line)
            prev = line
        def px(x, y):
            r = rows[y]
            return tuple(r[x * bpp:x * bpp + 3])
        def near(c, hexcolour, tol=40):
            t = tuple(int(hexcolour[k:k + 2], 16) for k in (1, 3, 5))
            return all(abs(c[k] - t[k]) <= tol for k in range(3))
        def count(x0, y0, x1, y1, test):
            return sum(1 for y in range(max(y0, 0), min(y1, h)) for x in range(max(x0, 0), min(x1, w)) if test(px(x, y)))
        # An anchor colour (a page's map panel): its top-left pixel is where the drawing's (ax, ay) is,
        # and every probe is moved by that offset.
        dx = dy = 0
        if 'anchor' in probes:
            hexcolour, ax, ay = probes['anchor']
            t = tuple(int(hexcolour[k:k + 2], 16) for k in (1, 3, 5))
            top = next((y for y in range(h) if any(px(x, y) == t for x in range(w))), None)
            assert top is not None, 'no pixel of the anchor colour'
            dy = top - ay
            dx = min(x for x in range(w) if px(x, top) == t) - ax
            probes['points'] = [[x + dx, y + dy, c] for x, y, c in probes['points']]
            probes['regions'] = [[x0 + dx, y0 + dy, x1 + dx, y1 + dy, c] for x0, y0, x1, y1, c in probes['regions']]
        colours = set(px(x, y) for y in range(0, h, 2) for x in range(0, w, 2))
        histogram = Counter(px(x, y) for y in range(h) for x in range(w)) if 'count' in probes else {}
        out = {
            'offset': [dx, dy],
            'colourCounts': {c: sum(v for k, v in histogram.items() if near(k, c, 12)) for c in probes.get('count', [])},
            'width': w, 'height': h, 'colours': len(colours),
            'nonWhite': count(0, 0, w, h, lambda c: min(c) < 235),
            'probes': [count(x - 3, y - 3, x + 4, y + 4, lambda c, col=col: near(c, col)) for x, y, col in probes['points']],
            'regions': [count(x0, y0, x1, y1, lambda c, col=col: near(c, col) if col else min(c) < 200)
                        for x0, y0, x1, y1, col in probes['regions']],
        }
        print(json.dumps(out))
        """#

    @Test func chromiumDrawsThePathTheMarksAndTheLegend() async throws {
        let directory = temporaryPath("-browser")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let svgPath = directory + "/city-walk.svg"
        let events = try SVGTests.fileEvents(Paths.root.appendingPathComponent("traces/city-walk.gpx").path)
        let svg = try SVGTests.draw(events, title: "city-walk.gpx")
        try Data(svg.utf8).write(to: URL(fileURLWithPath: svgPath))
        let png = directory + "/city-walk.png"
        let chromium = try #require(which("chromium"))
        let r = try await runAsync(
            chromium,
            [
                "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=\(directory)/profile", "--enable-logging=stderr", "--v=0",
                "--window-size=1000,800", "--screenshot=\(png)", "file://\(svgPath)",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        // Page errors reach the log as CONSOLE lines ("Uncaught …"); dbus noise is not the page's.
        #expect(!r.stderr.contains("Uncaught") && !r.stderr.contains(":CONSOLE("), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: png), "no screenshot: \(r.stderr)")

        // Probe the middle of every track line, and the start and end marks.
        let lines = SVGTests.polylines(svg)
        #expect(lines.count == 2)
        var points: [[Any]] = lines.map { line in
            let p = line[line.count / 2]
            return [Int(p.x.rounded()), Int(p.y.rounded()), SVGWriter.Colour.track]
        }
        let start = lines[0][0]
        let end = lines[lines.count - 1][lines[lines.count - 1].count - 1]
        points.append([Int(start.x.rounded()), Int(start.y.rounded()), SVGWriter.Colour.start])
        points.append([Int(end.x.rounded()), Int(end.y.rounded()), SVGWriter.Colour.end])
        let regions: [[Any]] = [
            [290, 700, 700, 730, NSNull()],  // the legend: drawn at all
            [295, 710, 335, 725, SVGWriter.Colour.track],  // its track sample
            [20, 700, 200, 745, NSNull()],  // the scale bar
            [940, 50, 985, 115, NSNull()],  // the north arrow
            [25, 10, 500, 45, NSNull()],  // the title
        ]
        let query = String(
            decoding: try JSONSerialization.data(withJSONObject: ["points": points, "regions": regions]), as: UTF8.self)
        let probe = try await runAsync(try #require(which("python3")), ["-c", Self.pngProbe, png, query])
        #expect(probe.status == 0, "\(probe.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any])
        #expect(result["width"] as? Int == 1000 && result["height"] as? Int == 800, "\(result)")
        #expect((result["colours"] as? Int ?? 0) > 20, "blank or flat: \(result)")
        #expect((result["nonWhite"] as? Int ?? 0) > 5_000, "\(result)")
        let hits = result["probes"] as? [Int] ?? []
        #expect(hits.count == points.count && hits.allSatisfy { $0 > 0 }, "colour missing at \(points): \(hits)")
        let regionHits = result["regions"] as? [Int] ?? []
        #expect(regionHits.count == regions.count && regionHits.allSatisfy { $0 > 10 }, "empty region: \(regionHits)")
    }
}
