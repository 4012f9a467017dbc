import Foundation
import Testing

@testable import Waymark

/// Issue 29, item 4: pages that are maps. Colours and legend entries per track, the heading, the
/// sensor profiles and their smoothing, units and time zones, labels that dodge marks, tiles by
/// opt-in, and replay pages whose dropped fixes are ticks.
@Suite struct PageMapTests {
    static let start = Date(timeIntervalSince1970: 1_719_792_000)  // 2024-07-01T00:00:00Z

    /// A track of `count` points going north from 48°N 11°E, one a second, 5 m apart.
    static func track(
        _ name: String?, count: Int, from first: Int = 0, reversed: Bool = false,
        sensors: (Int) -> (hr: Double?, cad: Double?, temp: Double?, power: Double?) = { _ in (nil, nil, nil, nil) }
    ) -> [GPXEvent] {
        var info = GPXPathInfo()
        info.name = name
        var events: [GPXEvent] = [.trackStart(info), .segmentStart]
        for i in 0..<count {
            let step = reversed ? count - 1 - i : i
            var p = GPXPoint(
                latitude: 48 + Double(step) * 0.000045, longitude: 11, elevation: 500 + Double(i % 7),
                time: start.addingTimeInterval(Double(first + i)))
            let s = sensors(i)
            p.extensions.heartRate = s.hr
            p.extensions.cadence = s.cad
            p.extensions.airTemperature = s.temp
            p.extensions.power = s.power
            events.append(.trackPoint(p))
        }
        events += [.segmentEnd(GPXExtensions()), .trackEnd(info)]
        return events
    }

    static func page(_ events: [GPXEvent], options: TraceHTMLWriter.Options = .init(title: "t.gpx")) throws -> String {
        let data = try render { sink in
            let writer = TraceHTMLWriter(sink: sink, options: options)
            for event in [.header(GPXHeader())] + events { try writer.write(event) }
            try writer.finish()
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Each `<polyline>` of the map's tracks: its track index, colour and width (nil where the
    /// group's apply).
    static func trackLines(_ svg: String) -> [(track: Int?, colour: String?, width: Double?)] {
        guard let tracks = svg.components(separatedBy: "<g id=\"tracks\"").dropFirst().first,
            let group = tracks.components(separatedBy: "</g>").first
        else { return [] }
        func attribute(_ name: String, _ element: Substring) -> String? {
            element.components(separatedBy: " \(name)=\"").dropFirst().first.map { String($0.prefix { $0 != "\"" }) }
        }
        return group.components(separatedBy: "<polyline").dropFirst().map { rest in
            let element = rest.prefix { $0 != ">" }
            return (
                attribute("data-track", element).flatMap { Int($0) }, attribute("stroke", element),
                attribute("stroke-width", element).flatMap { Double($0) }
            )
        }
    }

    // MARK: - Tracks

    /// An out and back recorded as two tracks: each its own colour, the first drawn wider under
    /// the second so that both show, both named in the heading and in the legend.
    @Test func anOutAndBackShowsBothTracksInTheirOwnColours() throws {
        let events = Self.track("Out", count: 40) + Self.track("Back", count: 40, from: 60, reversed: true)
        let page = try Self.page(events)
        let lines = Self.trackLines(try HTMLPageTests.mapSVG(page))
        #expect(lines.map(\.track) == [0, 1])
        #expect(lines.map(\.colour) == [SVGWriter.trackPalette[0], SVGWriter.trackPalette[1]])
        let widths = lines.compactMap(\.width)
        #expect(widths.count == 2 && widths[0] > widths[1] + 1, "the track under is wider: \(widths)")
        #expect(page.contains("<h1>t.gpx — “Out” and “Back”</h1>"), "\(page.prefix(2000))")
        let legend = try #require(
            page.components(separatedBy: "<ul class=\"legend\" id=\"tracks-legend\">").dropFirst().first)
        let entries = legend.components(separatedBy: "</ul>")[0].components(separatedBy: "<li>").dropFirst()
        #expect(entries.count == 2)
        #expect(entries.first?.contains("background:\(SVGWriter.trackPalette[0])") == true)
        #expect(entries.first?.contains("Out (") == true && entries.last?.contains("Back (") == true)
        // The SVG's own legend names them too.
        let svgLegend = try #require(try HTMLPageTests.mapSVG(page).components(separatedBy: "<g id=\"legend\"").last)
        #expect(svgLegend.contains(">Out</text>") && svgLegend.contains(">Back</text>"))
    }

    /// Many tracks: colours go round the palette, the heading names four and counts the rest.
    @Test func manyTracksCycleThePaletteAndTheHeadingCountsTheRest() throws {
        var events: [GPXEvent] = []
        for k in 0..<11 { events += Self.track("T\(k)", count: 5, from: 10 * k) }
        let page = try Self.page(events)
        let lines = Self.trackLines(try HTMLPageTests.mapSVG(page))
        #expect(lines.map(\.track) == Array(0..<11))
        #expect(lines.map(\.colour) == (0..<11).map { SVGWriter.trackColour($0) })
        #expect(SVGWriter.trackColour(8) == SVGWriter.trackPalette[0])
        #expect(page.contains("<h1>t.gpx — “T0”, “T1”, “T2”, “T3” and 7 more</h1>"))
        // The file's own name, when it has one, is the heading.
        var m = GPXMetadata()
        m.name = "Season"
        let named = try Self.page([.metadata(m)] + events)
        #expect(named.contains("<h1>t.gpx — “Season”</h1>"))
    }

    /// One track keeps the picture it always had: one colour, one legend entry.
    @Test func oneTrackHasOneColourAndNoTrackLegend() throws {
        let page = try Self.page(Self.track("Solo", count: 20))
        let lines = Self.trackLines(try HTMLPageTests.mapSVG(page))
        #expect(lines.count == 1 && lines[0].track == nil && lines[0].colour == nil)
        #expect(!page.contains("tracks-legend"))
    }

    // MARK: - Profiles

    @Test func everySensorSeriesHasAProfileAndHoverDetails() throws {
        let events = Self.track(
            "Ride", count: 30,
            sensors: { i in (120 + Double(i), 80 + Double(i % 3), 21.5, i % 2 == 0 ? 200 : nil) })
        let page = try Self.page(events)
        let data = try HTMLPageTests.island(page)
        let ids = (data["charts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        for key in ["elevation", "speed", "heart-rate", "cadence", "temperature", "power"] {
            #expect(ids.contains("\(key)-t") && ids.contains("\(key)-dist"), "\(key): \(ids)")
        }
        let points = try #require(data["points"] as? [String: [Any]])
        #expect(points["hr"]?.compactMap { $0 as? Double } == (0..<30).map { 120 + Double($0) })
        #expect(points["power"]?[1] is NSNull, "a point without power has none")
        #expect(page.contains("Heart rate, bpm — against time (UTC)"))
        // Without sensors, no sensor profile.
        let plain = try HTMLPageTests.island(try Self.page(Self.track("Walk", count: 30)))
        let plainIDs = (plain["charts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(plainIDs == ["elevation-t", "speed-t", "elevation-dist", "speed-dist"])
        #expect((plain["points"] as? [String: Any])?["hr"] == nil)
    }

    /// The moving average against a plain sum over each window: every value, every segment, with
    /// gaps, missing values and times that go back.
    @Test func smoothingIsTheMeanOfEachWindow() {
        Property<(values: [Double], times: [Double], segments: [Int], window: Double)>(
            name: "moving average", count: 300,
            generate: { r in
                let n = r.int(0...60)
                var t = Double(r.int(0...100))
                var segment = 0
                var values: [Double] = []
                var times: [Double] = []
                var segments: [Int] = []
                for _ in 0..<n {
                    t += r.bool(0.1) ? -Double(r.int(1...5)) : Double(r.int(0...4))
                    if r.bool(0.08) { segment += 1 }
                    values.append(r.bool(0.15) ? .nan : Double(r.int(-50...50)))
                    times.append(r.bool(0.05) ? .nan : t)
                    segments.append(segment)
                }
                return (values, times, segments, Double(r.int(1...12)))
            },
            describe: { "\($0)" }
        ).check { input in
            let got = ProfileSmoothing.movingAverage(
                input.values, times: input.times, segments: input.segments, window: input.window)
            // Runs: a segment's points while times are finite and never go back.
            var run = [Int](repeating: 0, count: input.values.count)
            for i in input.values.indices.dropFirst() {
                let same =
                    input.segments[i] == input.segments[i - 1] && input.times[i].isFinite
                    && input.times[i - 1].isFinite && input.times[i] >= input.times[i - 1]
                run[i] = same ? run[i - 1] : run[i - 1] + 1
            }
            var problems: [String] = []
            for i in input.values.indices {
                var expected = input.values[i]
                if input.values[i].isFinite && input.times[i].isFinite {
                    let near = input.values.indices.filter {
                        run[$0] == run[i] && input.values[$0].isFinite
                            && abs(input.times[$0] - input.times[i]) <= input.window / 2
                    }
                    expected = near.map { input.values[$0] }.reduce(0, +) / Double(near.count)
                }
                let same = expected.isNaN ? got[i].isNaN : abs(got[i] - expected) < 1e-9
                if !same { problems.append("value \(i): \(got[i]), expected \(expected)") }
            }
            return problems
        }
    }

    @Test func smoothingIsSaidAndApplied() throws {
        let noisy = Self.track("Ride", count: 60, sensors: { i in (i % 2 == 0 ? 100 : 140, nil, nil, nil) })
        let raw = try HTMLPageTests.island(try Self.page(noisy))
        let page = try Self.page(noisy, options: .init(title: "t.gpx", smoothing: 10))
        #expect(page.contains("Each profile is a centred moving average over 10 s within its segment."))
        // The hover details keep the values as recorded; the profile's line is smoothed: its
        // points' y values vary far less than the raw line's.
        #expect(
            (try HTMLPageTests.island(page)["points"] as? [String: Any])?["hr"] as? [Double]
                == (raw["points"] as? [String: Any])?["hr"] as? [Double])
        // The span of the profile's y axis, from its tick labels (in bpm).
        func spread(_ page: String) throws -> Double {
            let chart = try #require(page.components(separatedBy: "<svg id=\"heart-rate-t\"").dropFirst().first)
            let axis = chart.components(separatedBy: "text-anchor=\"end\">")[1].components(separatedBy: "</g>")[0]
            let ticks = axis.components(separatedBy: "\">").dropFirst().compactMap { Double($0.prefix { $0 != "<" }) }
            return (ticks.max() ?? 0) - (ticks.min() ?? 0)
        }
        let smoothSpread = try spread(page)
        let rawSpread = try spread(try Self.page(noisy))
        #expect(smoothSpread < rawSpread / 3, "\(smoothSpread) against \(rawSpread)")
    }

    // MARK: - Units and zones

    @Test func unitsConvertEveryQuantity() {
        #expect(DisplayUnits.imperial.distance(1609.344 * 2.5) == "2.5 mi")
        #expect(DisplayUnits.imperial.distance(100) == "328 ft")
        #expect(DisplayUnits.nautical.distance(1852 * 3) == "3 NM")
        #expect(DisplayUnits.nautical.distance(100) == "100 m")
        #expect(DisplayUnits.metric.distance(1500) == "1.5 km")
        #expect(DisplayUnits.metric.distance(1234.567) == TextRenderer.distance(1234.567))
        #expect(DisplayUnits.imperial.speedText(10) == "22.4 mph")
        #expect(DisplayUnits.nautical.speedText(10) == "19.4 kn")
        #expect(DisplayUnits.imperial.temperature(100) == 212)
        #expect(DisplayUnits.imperial.roundDistance(atMost: 1609.344 * 3) == (1609.344 * 2, "2 mi"))
        #expect(DisplayUnits.imperial.roundDistance(atMost: 400) == (1000 * 0.3048, "1000 ft"))
        #expect(DisplayUnits.nautical.roundDistance(atMost: 400) == (0.2 * 1852, "0.2 NM"))
    }

    /// A scale bar's round distance is at most the room it has and more than a fifth of it, and
    /// its label says its length, in every unit system.
    @Test func roundDistancesFitAndSayTheirLength() {
        Property<(units: DisplayUnits, limit: Double)>(
            name: "round distances", count: 500,
            generate: { r in (r.pick(DisplayUnits.allCases), pow(10, Double(r.int(0...7000)) / 1000)) },
            describe: { "\($0)" }
        ).check { input in
            let (metres, label) = input.units.roundDistance(atMost: input.limit)
            let parts = label.split(separator: " ")
            guard parts.count == 2, let n = Double(parts[0]) else { return ["label \(label)"] }
            let unit =
                String(parts[1]) == input.units.longDistance.symbol
                ? input.units.longDistance.metres : input.units.shortDistance.metres
            var problems: [String] = []
            if abs(n * unit - metres) > 1e-6 * metres { problems.append("\(label) is not \(metres) m") }
            if input.limit >= input.units.shortDistance.metres {
                if metres > input.limit * (1 + 1e-9) { problems.append("\(label) is longer than \(input.limit) m") }
                if metres < input.limit / 5.0001 { problems.append("\(label) is short of \(input.limit) m") }
            }
            return problems
        }
    }

    @Test func timeZonesFollowDaylightSaving() throws {
        let berlin = try #require(DisplayTimeZone("Europe/Berlin"))
        let spring = 1_711_846_800.0  // 2024-03-31T01:00:00Z, when Berlin goes to +02:00
        #expect(berlin.offset(at: spring - 1) == 3600 && berlin.offset(at: spring) == 7200)
        let offsets = berlin.offsets(from: spring - 3600, to: spring + 3600)
        #expect(offsets.map(\.offset) == [3600, 7200] && offsets.last?.from == spring)
        #expect(berlin.text(spring) == "2024-03-31 03:00:00 +02:00")
        #expect(DisplayTimeZone("+05:30")?.offset(at: 0) == 19_800)
        #expect(DisplayTimeZone("UTC-0330")?.offset(at: 0) == -12_600)
        #expect(DisplayTimeZone("utc")?.isUTC == true)
        for bad in ["Mars/Olympus", "+25:00", "12", "", "Europe/Berlin; rm"] {
            #expect(DisplayTimeZone(bad) == nil, "\(bad)")
        }
    }

    /// Imperial units and a zone of its own: the statistics, the profiles' axes and the data the
    /// script writes with.
    @Test func aPageShowsItsUnitsAndItsZone() throws {
        let zone = try #require(DisplayTimeZone("America/Denver"))
        let page = try Self.page(
            Self.track("Walk", count: 400), options: .init(title: "t.gpx", units: .imperial, timeZone: zone))
        #expect(page.contains("<tr><th>time</th><td>2024-06-30 18:00:00 -06:00 → 2024-06-30 18:06:39 -06:00"))
        // 399 steps of 0.000045° of latitude at 48°N: 1996 m, 1.24 mi.
        let length = try #require(page.components(separatedBy: "<tr><th>length</th><td>").dropFirst().first)
        #expect(length.hasPrefix("1.24 mi (3D "), "\(length.prefix(40))")
        #expect(page.contains("Elevation, ft — against time (America/Denver)"))
        #expect(page.contains("Speed, mph — against distance (mi)"))
        // The first clock tick of the time axis is local: 18:00 in Denver.
        let chart = try #require(page.components(separatedBy: "<svg id=\"elevation-t\"").dropFirst().first)
        #expect(chart.contains(">18:00:00</text>"), "\(chart.prefix(3000))")
        let data = try HTMLPageTests.island(page)
        let units = try #require(data["units"] as? [String: Any])
        #expect(units["distUnit"] as? String == "mi" && units["shortUnit"] as? String == "ft")
        let z = try #require(data["zone"] as? [String: Any])
        #expect((z["offsets"] as? [[Double]])?.first?.last == -21_600)
        // The scale bar is in feet or miles.
        let bar = try #require(page.components(separatedBy: "<g id=\"scale-bar\"").dropFirst().first)
        let label = bar.components(separatedBy: "</g>")[0]
        #expect(label.contains(" ft</text>") || label.contains(" mi</text>"), "\(label)")
    }

    // MARK: - Labels

    /// A waypoint where the track starts (Garmin's "Start"), one where it ends, and a crowd:
    /// no name covers the start, the end, a mark or another name when the placer had room.
    @Test func labelsDodgeMarks() {
        Property<[(x: Double, y: Double, name: String)]>(
            name: "labels", count: 300,
            generate: { r in
                r.array(1...14) { r in
                    (
                        Double(r.int(100...900)), Double(r.int(100...650)),
                        String(repeating: r.pick(["i", "W", "a", "7", " "]), count: r.int(1...14))
                    )
                }
            },
            describe: { "\($0)" }
        ).check { marks in
            var placer = LabelPlacer(bounds: (20, 50, 980, 686))
            let start = LabelPlacer.box(around: (marks[0].x, marks[0].y), radius: 8)
            placer.avoid(start)
            let markBoxes = marks.map { LabelPlacer.box(around: ($0.x, $0.y), radius: 6) }
            for b in markBoxes { placer.avoid(b) }
            var problems: [String] = []
            for m in marks {
                let free = placer.obstacles
                let label = placer.place(m.name, at: (m.x, m.y), fontSize: 12)
                let width = LabelPlacer.textWidth(m.name, fontSize: 12)
                if abs((label.box.x1 - label.box.x0) - width) > 1e-9 { problems.append("box width for \(m.name)") }
                // Beside its mark: within 30 pixels of it.
                if label.box.x0 > m.x + 30 || label.box.x1 < m.x - 30 || label.box.y0 > m.y + 40
                    || label.box.y1 < m.y - 40
                {
                    problems.append("\(m.name) strays from its mark")
                }
                // A name covers a mark or a name only when none of its places was free.
                let hits = free.filter { $0.overlap(label.box) > 0 }
                if !hits.isEmpty && Self.placerWouldFind(m, width, free) {
                    problems.append("\(m.name) at \(label) covers \(hits) though a place was free")
                }
            }
            return problems
        }
    }

    /// The placer's sixteen places for a label, any of which is free.
    static func placerWouldFind(_ m: (x: Double, y: Double, name: String), _ width: Double, _ boxes: [LabelPlacer.Box])
        -> Bool
    {
        for gap in [7.0, 16.0] {
            let ascent = 9.6
            let descent = 3.0
            let places: [(Double, Double)] = [
                (gap, -gap + 1), (gap, gap + ascent - 1), (-gap - width, -gap + 1), (-gap - width, gap + ascent - 1),
                (gap + 1, ascent / 2 - 1), (-gap - 1 - width, ascent / 2 - 1), (-width / 2, -gap - 3),
                (-width / 2, gap + ascent + 2),
            ]
            for (dx, dy) in places {
                let box = LabelPlacer.Box(
                    x0: m.x + dx, y0: m.y + dy - ascent, x1: m.x + dx + width, y1: m.y + dy + descent)
                if box.x0 < 20 || box.x1 > 980 || box.y0 < 50 || box.y1 > 686 { continue }
                if boxes.allSatisfy({ $0.overlap(box) == 0 }) { return true }
            }
        }
        return false
    }

    /// The named case: a waypoint at the start. Its name goes beside, not over, the start dot.
    @Test func aWaypointAtTheStartHasItsNameClearOfTheStartDot() throws {
        var events = Self.track("Run", count: 40)
        var w = GPXPoint(latitude: 48, longitude: 11)
        w.name = "Start here"
        var e = GPXPoint(latitude: 48 + 39 * 0.000045, longitude: 11)
        e.name = "Finish"
        events += [.waypoint(w), .waypoint(e)]
        let svg = try HTMLPageTests.mapSVG(try Self.page(events))
        let start = try #require(SVGTests.polylines(svg).first?.first)
        let texts = svg.components(separatedBy: "<g id=\"waypoints\"")[1].components(separatedBy: "</g>")[0]
            .components(separatedBy: "<text x=\"").dropFirst()
        #expect(texts.count == 2)
        for text in texts {
            let x = Double(text.prefix { $0 != "\"" }) ?? 0
            let y = Double(text.components(separatedBy: "y=\"")[1].prefix { $0 != "\"" }) ?? 0
            let name = String(text.components(separatedBy: ">")[1].prefix { $0 != "<" })
            let anchor = text.contains("text-anchor=\"end\"") ? 1.0 : text.contains("text-anchor=\"middle\"") ? 0.5 : 0
            let width = LabelPlacer.textWidth(name, fontSize: 12)
            let box = LabelPlacer.Box(x0: x - anchor * width, y0: y - 9.6, x1: x - anchor * width + width, y1: y + 3)
            for mark in [start, SVGTests.polylines(svg).first!.last!] {
                #expect(LabelPlacer.box(around: mark, radius: 8).overlap(box) == 0, "\(name) covers a mark")
            }
        }
    }

    // MARK: - Tiles

    @Test func tilesAreOptInAndDrawnInWebMercator() throws {
        let events = Self.track("Walk", count: 50)
        let plain = try Self.page(events)
        #expect(try HTMLPageTests.island(plain)["tiles"] == nil)
        #expect(plain.contains("No base map: this page fetches nothing"))
        let tiles = MapTiles(template: "https://tile.openstreetmap.org/{z}/{x}/{y}.png")
        let page = try Self.page(events, options: .init(title: "t.gpx", tiles: tiles))
        let data = try HTMLPageTests.island(page)
        #expect((data["tiles"] as? [String: Any])?["template"] as? String == tiles.template)
        #expect((data["map"] as? [String: Any])?["kind"] as? String == "mercator")
        #expect(page.contains("Web Mercator projection"))
        #expect(page.contains("<div class=\"attribution\" id=\"attribution\">© OpenStreetMap contributors</div>"))
        #expect(page.contains("fetched from https://tile.openstreetmap.org as you zoom and pan"))
        // The map's plane is EPSG:3857's: the first point's pixel from the island's numbers.
        let map = try #require(data["map"] as? [String: Any]).compactMapValues { $0 as? Double }
        let points = try #require(data["points"] as? [String: [Any]])
        let x = 6_378_137 * 11 * Double.pi / 180
        let y = 6_378_137 * log(tan(Double.pi / 4 + 48 * Double.pi / 360))
        let px = map["ox"]! + (x - map["cx"]!) * map["scale"]!
        let py = map["oy"]! - (y - map["cy"]!) * map["scale"]!
        #expect(
            abs(px - (points["x"]?[0] as? Double ?? 0)) < 0.06 && abs(py - (points["y"]?[0] as? Double ?? 0)) < 0.06)
        #expect(MapTiles(template: "file:///srv/tiles/{z}/{x}/{y}.png").attributionText == "Tiles: file:///srv/tiles/")
        #expect(MapTiles.problem(with: "tile.openstreetmap.org/{z}/{x}/{y}.png") != nil)
        #expect(MapTiles.problem(with: "https://a/{z}/{x}.png") != nil)
        #expect(MapTiles.problem(with: "https://a/{z}/{x}/{y}.png\"><script>") != nil)
        #expect(MapTiles.problem(with: "https://a/{z}/{x}/{-y}.png") == nil)
    }

    // MARK: - Replay pages

    /// A distance filter that drops every other fix: the delivered fixes are one line of their
    /// colour, each dropped fix a small tick across the path, and the source's path shows wider
    /// under them.
    @Test func droppedFixesAreTicksAndTheDeliveredOnesOneLine() throws {
        var lines = [
            SessionReportTests.event(0, "started", #""source":"walk.gpx","format":4,"ios":26"#)
        ]
        for i in 0..<40 {
            lines.append(
                SessionReportTests.fix(
                    i + 1, index: i, i % 2 == 0 ? "delivered" : "dropped",
                    i % 2 == 0 ? "foreground" : "distanceFilter", lat: 48 + Double(i) * 0.0001))
        }
        let page = try SessionReportTests.report(lines)
        let overlay = try #require(page.components(separatedBy: "<g id=\"fixes\"").dropFirst().first)
        let fixes = overlay.components(separatedBy: "</g>")[0]
        let polylines = fixes.components(separatedBy: "<polyline stroke=\"").dropFirst()
        #expect(polylines.count == 1, "one run: \(fixes.prefix(600))")
        #expect(polylines.first?.hasPrefix(SessionReportWriter.Category.deliveredForeground.colour) == true)
        #expect(!fixes.contains(SessionReportWriter.Category.dropped.colour))
        let dropped = try #require(page.components(separatedBy: "<g id=\"dropped\"").dropFirst().first)
        let ticks = dropped.components(separatedBy: "</g>")[0].components(separatedBy: "<line class=\"tick\"")
            .dropFirst()
        #expect(ticks.count == 20)
        for tick in ticks {
            func value(_ name: String) -> Double {
                Double(tick.components(separatedBy: "\(name)=\"")[1].prefix { $0 != "\"" }) ?? .nan
            }
            let length =
                ((value("x2") - value("x1")) * (value("x2") - value("x1"))
                + (value("y2") - value("y1")) * (value("y2") - value("y1"))).squareRoot()
            #expect(abs(length - 2 * SessionReportWriter.tickHalfLength) < 0.2, "a tick, not a stripe: \(length)")
            // Across a path going north: the tick is level.
            #expect(abs(value("y2") - value("y1")) < 0.2)
        }
        let map = try HTMLPageTests.mapSVG(page)
        #expect(map.contains("stroke=\"\(SessionReportWriter.sourcePathColour)\" stroke-width=\"9\""))
        #expect(page.contains("the source's path</li>"))
    }
}

/// The options for pages from the command line: what they take, what they refuse.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path), "needs the built waymark executable"))
struct PageOptionsCLITests {
    @Test func badPageOptionsAreUsageErrorsThatSayWhatToGive() throws {
        let walk = HTMLPageTests.walk
        let output = temporaryPath(".html")
        defer { try? FileManager.default.removeItem(atPath: output) }
        for (arguments, message) in [
            (["--tiles", "tile.openstreetmap.org/{z}/{x}/{y}.png"], "beginning with https://"),
            (["--tiles", "https://a.example/{z}/{x}.png"], "{y}"),
            (["--tiles-attribution", "me"], "give --tiles too"),
            (["--time-zone", "Mars/Olympus"], "tz database name"),
            (["--smooth", "0"], "above 0"),
            (["--units", "furlongs"], "metric"),
            (["--tiles", "https://a.example/{z}/{x}/{y}.png", "--tiles-max-zoom", "30"], "0 to 24"),
        ] {
            let r = try run(Paths.waymark.path, ["render", walk, "-o", output] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        // Options for pages with another format.
        let text = try run(Paths.waymark.path, ["render", walk, "--time-zone", "Europe/Berlin"])
        #expect(
            text.status == 64 && text.stderr.contains("--time-zone applies to --format html only"), "\(text.stderr)")
        let gpx = try run(Paths.waymark.path, ["render", walk, "-f", "gpx", "--units", "imperial"])
        #expect(gpx.status == 64 && gpx.stderr.contains("--units applies to --format html and svg"), "\(gpx.stderr)")
    }

    @Test func pageOptionsReachThePageAndThePicture() throws {
        let directory = temporaryPath("-pages")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let r = try run(
            Paths.waymark.path,
            [
                "render", HTMLPageTests.walk, "-o", directory + "/w.html", "--units", "nautical", "--time-zone",
                "+05:30", "--smooth", "30", "--tiles", "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: directory + "/w.html", encoding: .utf8)
        #expect(page.contains("Speed, kn — against time (+05:30)"))
        #expect(page.contains("centred moving average over 30 s"))
        #expect(page.contains("© OpenStreetMap contributors"))
        let svg = try run(
            Paths.waymark.path, ["render", HTMLPageTests.walk, "-o", directory + "/w.svg", "--units", "imperial"])
        #expect(svg.status == 0, "\(svg.stderr)")
        let picture = try String(contentsOfFile: directory + "/w.svg", encoding: .utf8)
        let bar = picture.components(separatedBy: "<g id=\"scale-bar\"")[1].components(separatedBy: "</g>")[0]
        #expect(bar.contains(" ft</text>") || bar.contains(" mi</text>"), "\(bar)")
    }
}
