#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Draws a trace as one self-contained HTML page from reader events: the map (``SVGWriter``'s
/// picture, a colour per track, zoomed and panned by the page's script), profiles of every series
/// the trace has (elevation, speed, heart rate, cadence, temperature, power) against time and
/// against distance, the statistics of `waymark info`, and details of a point on hover; under a
/// degraded trace, the truth.
///
/// Nothing is fetched unless ``Options/tiles`` asks for a base map: the page is one file, its
/// drawings inline SVG, its data one JSON island, its script inline. Memory is bounded and so is the page, whatever the trace's length:
/// - the map keeps at most ``SVGWriter/maxKeptPoints`` points and simplifies each line with
///   Douglas–Peucker to half a pixel (``SVGWriter``);
/// - the profiles keep at most ``maxSamples`` track points, evenly spread (every point, then
///   every second, every fourth, …), each line again simplified to half a pixel;
/// - hover details are for at most ``maxHoverPoints`` of those, evenly spread; the page says how
///   many.
///
/// Speeds are the points' own (`<speed>`, NMEA, gpsd) where they have one, else the distance
/// from the point before in the segment over the time between them.
public final class TraceHTMLWriter {
    public struct Options: Sendable {
        /// Shown in the title (a file name, say), before the trace's own name.
        public var title: String
        /// The units of the profiles, the statistics, the scale bar and the details.
        public var units: DisplayUnits
        /// The zone of the times shown.
        public var timeZone: DisplayTimeZone
        /// Seconds: the profiles are drawn as centred moving averages over this long a window
        /// (within a segment); nil draws the values as they are.
        public var smoothing: Double?
        /// A base map of raster tiles under the map; nil fetches nothing.
        public var tiles: MapTiles?

        public init(
            title: String = "", units: DisplayUnits = .metric, timeZone: DisplayTimeZone = .utc,
            smoothing: Double? = nil, tiles: MapTiles? = nil
        ) {
            self.title = title
            self.units = units
            self.timeZone = timeZone
            self.smoothing = smoothing
            self.tiles = tiles
        }
    }

    /// What the page shows of each track in its legend.
    struct TrackSummary {
        var name: String
        var points = 0
        var length = 0.0
        var start: Double?
        var end: Double?
    }

    /// At most this many tracks are listed by name in the heading and the legend.
    static let maxListedTracks = 200

    public static let maxSamples = 1 << 16
    public static let maxHoverPoints = 5_000
    /// The truth's colour under a degraded trace.
    static let truthColour = "#57606a"

    private let sink: FileSink
    private let options: Options
    private let map: SVGWriter
    private var statistics = TraceStatistics()
    private var samples = PointSamples()
    private var metadataName: String?
    private var trackName: String?
    private var tracks: [TrackSummary] = []
    /// Track points that carry their truth (a degraded trace's `<waymark:truth>`).
    private var degradedPoints = 0
    private var tracksLeftOut = 0
    private var segment = 0
    private var inSegment = false
    /// The time of the point before in the segment, for speeds the points do not give.
    private var previousTime: Date?

    public init(sink: FileSink, options: Options = Options()) {
        self.sink = sink
        self.options = options
        map = SVGWriter(
            sink: sink,
            options: SVGWriter.Options(
                title: options.title, embedded: true, units: options.units,
                projection: options.tiles == nil ? nil : .webMercator))
    }

    /// Folds one event in.
    public func write(_ event: GPXEvent) throws {
        try map.write(event)
        // The statistics measure each step along a segment; the page takes it from them.
        let lengthBefore = statistics.length2D
        statistics.add(event)
        switch event {
        case .metadata(let m):
            metadataName = m.name
        case .trackStart(let info):
            trackName = trackName ?? info.name
            if tracks.count < Self.maxListedTracks {
                tracks.append(TrackSummary(name: info.name ?? ""))
            } else {
                tracksLeftOut += 1
            }
            endSegment()
        case .segmentStart, .segmentEnd, .trackEnd:
            endSegment()
        case .trackPoint(let p):
            let step = statistics.length2D - lengthBefore
            if tracksLeftOut == 0, !tracks.isEmpty {
                tracks[tracks.count - 1].points += 1
                tracks[tracks.count - 1].length += step
                if let t = p.time?.timeIntervalSince1970 {
                    tracks[tracks.count - 1].start = tracks[tracks.count - 1].start ?? t
                    tracks[tracks.count - 1].end = t
                }
            }
            add(p, step: step)
        default:
            break
        }
    }

    private func endSegment() {
        if inSegment { segment += 1 }
        inSegment = false
        previousTime = nil
    }

    /// `step`: metres from the point before in the segment (0 for a segment's first).
    private func add(_ p: GPXPoint, step: Double) {
        inSegment = true
        var speed = p.speed ?? .nan
        if speed.isNaN, let t0 = previousTime, let t1 = p.time {
            let dt = t1.timeIntervalSince(t0)
            if dt > 0 { speed = step / dt }
        }
        previousTime = p.time
        let x = p.extensions
        let truth = Self.truth(of: p)
        if truth != nil { degradedPoints += 1 }
        samples.append(
            PointSamples.Sample(
                latitude: p.coordinate.latitude, longitude: p.coordinate.longitude,
                time: p.time?.timeIntervalSince1970 ?? .nan, elevation: p.elevation ?? .nan, speed: speed,
                distance: statistics.length2D, segment: segment, heartRate: x.heartRate ?? .nan,
                cadence: x.cadence ?? .nan, temperature: x.airTemperature ?? x.waterTemperature ?? .nan,
                power: x.power ?? .nan, truthLatitude: truth?.latitude ?? .nan,
                truthLongitude: truth?.longitude ?? .nan, truthError: truth?.error ?? .nan))
    }

    /// The heading's name of the trace: the file's own name, else every track's.
    private var traceName: String? {
        if let metadataName, !metadataName.isEmpty { return "“\(metadataName)”" }
        let named = tracks.map(\.name).filter { !$0.isEmpty }
        guard !named.isEmpty else { return nil }
        let shown = named.prefix(4).map { "“\($0)”" }
        let more = named.count - shown.count + tracksLeftOut
        if more > 0 { return shown.joined(separator: ", ") + " and \(more) more" }
        if shown.count == 1 { return shown[0] }
        return shown.dropLast().joined(separator: ", ") + " and " + shown[shown.count - 1]
    }

    /// A degraded point's truth, from its `<waymark:truth>` element (``DegradingReader``).
    static func truth(of p: GPXPoint) -> (latitude: Double, longitude: Double, error: Double)? {
        guard !p.extensions.isEmpty, let t = DegradingReader.truth(of: p) else { return nil }
        return (t.latitude, t.longitude, t.error)
    }

    /// Writes the page and flushes.
    public func finish() throws {
        samples.keepLast()
        let out = sink.buffer
        let units = options.units
        let zone = options.timeZone
        let title = [options.title, traceName].compactMap { $0?.isEmpty == false ? $0 : nil }
            .joined(separator: " — ")
        let s = statistics
        var subtitle =
            "\(s.trackPointCount) track point(s), \(s.routePointCount) route point(s), \(s.waypointCount) waypoint(s)"
        if s.trackPointCount > 1 { subtitle += "; \(units.distance(s.length2D))" }
        if let d = s.duration { subtitle += " in \(TextRenderer.duration(d))" }
        HTMLPage.begin(title: title.isEmpty ? "Waymark trace" : title, subtitle: subtitle, to: out)

        out.append("<section id=\"map\">\n")
        HTMLPage.appendMapControls(to: out)
        out.append("<div class=\"map\">\n")
        try map.finish()
        let hover = samples.evenlySpread(atMost: Self.maxHoverPoints)
        var xs: [Double] = []
        var ys: [Double] = []
        if let mapping = map.mapping {
            let pixels = mapping.pixels(
                latitudes: samples.latitudes, longitudes: samples.longitudes, segments: samples.segments)
            for i in hover {
                xs.append(pixels[i].x)
                ys.append(pixels[i].y)
            }
            HTMLPage.beginOverlay(hidden: true, to: out)
            if degradedPoints > 0 {
                // The truth under a degraded trace: a dashed line, and a thin line from each point
                // drawn with details to where it truly was.
                let truth = mapping.pixels(
                    latitudes: samples.column(\.truthLatitude), longitudes: samples.column(\.truthLongitude),
                    segments: samples.segments)
                out.append(
                    "<g id=\"truth\" fill=\"none\" stroke=\"\(Self.truthColour)\" stroke-width=\"2\" stroke-dasharray=\"5 4\">\n"
                )
                HTMLPage.appendPolylines(truth, segments: samples.segments, to: out)
                out.append("</g>\n<g id=\"truth-errors\" stroke=\"\(Self.truthColour)\" stroke-width=\"1\">\n")
                for i in hover where truth[i].x.isFinite && truth[i].y.isFinite {
                    out.append("<line x1=\"")
                    SVGWriter.appendNumber(pixels[i].x, to: out)
                    out.append("\" y1=\"")
                    SVGWriter.appendNumber(pixels[i].y, to: out)
                    out.append("\" x2=\"")
                    SVGWriter.appendNumber(truth[i].x, to: out)
                    out.append("\" y2=\"")
                    SVGWriter.appendNumber(truth[i].y, to: out)
                    out.append("\"/>\n")
                }
                out.append("</g>\n")
            }
            out.append(
                "<circle id=\"marker\" cx=\"0\" cy=\"0\" r=\"7\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"3\" visibility=\"hidden\"/>\n"
            )
            HTMLPage.endOverlay(to: out)
        }
        if let tiles = options.tiles {
            out.append("<div class=\"attribution\" id=\"attribution\">")
            HTMLPage.appendText(tiles.attributionText, to: out)
            out.append("</div>\n")
        }
        out.append("</div>\n")
        if tracks.count > 1 {
            out.append("<ul class=\"legend\" id=\"tracks-legend\">\n")
            for (k, track) in tracks.enumerated() {
                out.append("<li><span class=\"swatch\" style=\"background:\(SVGWriter.trackColour(k))\"></span>")
                var text = track.name.isEmpty ? "track \(k + 1)" : track.name
                text += " (\(units.distance(track.length))"
                if let a = track.start, let b = track.end, b >= a { text += ", \(TextRenderer.duration(b - a))" }
                text += ")"
                HTMLPage.appendText(text, to: out)
                out.append("</li>\n")
            }
            if tracksLeftOut > 0 {
                out.append("<li>")
                HTMLPage.appendText("and \(tracksLeftOut) more track(s), in the track colours in turn", to: out)
                out.append("</li>\n")
            }
            out.append("</ul>\n")
        }
        out.append("<p class=\"note\">")
        var note =
            hover.isEmpty
            ? "No track points to give details of."
            : "Hover over the track for a point's details (\(HTMLPage.sampling(kept: hover.count, of: s.trackPointCount)))."
        if map.mapping != nil { note += " Scroll or use the buttons to zoom, drag to pan." }
        if degradedPoints > 0 {
            note +=
                " Degraded on purpose: the dashed line is the truth, and a thin line joins each point with details to where it truly was."
        }
        note += " Lines are simplified with Douglas–Peucker to half a pixel"
        note += samples.stride > 1 ? "; the profiles are drawn from 1 in \(samples.stride) points." : "."
        if let tiles = options.tiles {
            note += " The base map's tiles are fetched from \(tiles.host) as you zoom and pan."
        } else {
            note += " No base map: this page fetches nothing (render with --tiles URL-TEMPLATE for one)."
        }
        HTMLPage.appendText(note, to: out)
        out.append("</p>\n</section>\n")
        try sink.flushIfNeeded()

        // Profiles: every series the trace has.
        let times = samples.times
        let hasTime = times.contains { $0.isFinite }
        let segments = samples.segments
        let smoothing = hasTime ? options.smoothing.flatMap { $0 > 0 ? $0 : nil } : nil
        func series(_ values: [Double]) -> [Double] {
            guard let smoothing else { return values }
            return ProfileSmoothing.movingAverage(values, times: times, segments: segments, window: smoothing)
        }
        let speedUnit = units.speed
        let shortUnit = units.shortDistance
        var profiles: [(key: String, title: String, unit: String, colour: String, ys: [Double])] = [
            ("elevation", "Elevation", shortUnit.symbol, "#1a7f37", samples.elevations.map { $0 / shortUnit.metres }),
            ("speed", "Speed", speedUnit.symbol, "#1f6feb", samples.speeds.map { $0 / speedUnit.metresPerSecond }),
            ("heart-rate", "Heart rate", "bpm", "#cf222e", samples.column(\.heartRate)),
            ("cadence", "Cadence", "rpm", "#8250df", samples.column(\.cadence)),
            (
                "temperature", "Temperature", units.temperatureSymbol, "#bc4c00",
                samples.column(\.temperature).map { units.temperature($0) }
            ),
            ("power", "Power", "W", "#953800", samples.column(\.power)),
        ]
        profiles.removeAll { !$0.ys.contains { $0.isFinite } }
        var charts: [(id: String, axis: HTMLChart.Axis, range: (d0: Double, d1: Double))] = []
        if samples.count > 1 && !profiles.isEmpty {
            out.append("<section id=\"profiles\">\n<h2>Profiles</h2>\n")
            if hasTime {
                out.append(
                    "<div class=\"axis-switch\">Against: <label><input type=\"radio\" name=\"axis\" value=\"t\" checked> time</label><label><input type=\"radio\" name=\"axis\" value=\"dist\"> distance</label></div>\n"
                )
            }
            if let smoothing {
                out.append("<p class=\"note\">")
                HTMLPage.appendText(
                    "Each profile is a centred moving average over \(DisplayUnits.number(smoothing)) s within its segment.",
                    to: out)
                out.append("</p>\n")
            }
            let smoothed = profiles.map { series($0.ys) }
            for axis in hasTime ? [HTMLChart.Axis.time, .distance] : [.distance] {
                let xs = axis == .time ? times : samples.distances
                let hidden = hasTime && axis == .distance
                for (profile, values) in zip(profiles, smoothed) {
                    let chart = HTMLChart(
                        id: "\(profile.key)-\(axis.rawValue)", title: profile.title, unit: profile.unit,
                        colour: profile.colour, axis: axis, xs: xs, ys: values, segments: segments,
                        distanceUnit: units.longDistance, zone: zone)
                    if let range = chart.write(to: out, hidden: hidden) { charts.append((chart.id, axis, range)) }
                }
                try sink.flushIfNeeded()
            }
            out.append("</section>\n")
        }

        // Statistics.
        out.append("<section id=\"statistics\">\n<h2>Statistics</h2>\n<table class=\"stats\">\n")
        for (label, value) in TextRenderer.summaryRows(of: s, units: units, zone: zone) {
            out.append("<tr><th>")
            HTMLPage.appendText(label, to: out)
            out.append("</th><td>")
            HTMLPage.appendText(value, to: out)
            out.append("</td></tr>\n")
        }
        out.append("</table>\n</section>\n")

        // The data island.
        let data = ByteStore(capacity: 1 << 16)
        data.append("{\"points\":{")
        HTMLPage.appendJSONArray("x", xs, decimals: 1, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("y", ys, decimals: 1, to: data)
        var columns: [(String, [Double], Int)] = [
            ("t", times, 3), ("lat", samples.latitudes, 7), ("lon", samples.longitudes, 7),
            ("ele", samples.elevations, 1), ("speed", samples.speeds, 2), ("dist", samples.distances, 1),
        ]
        if degradedPoints > 0 { columns.append(("err", samples.column(\.truthError), 2)) }
        for (key, path) in [
            ("hr", \PointSamples.Sample.heartRate), ("cad", \.cadence), ("temp", \.temperature), ("power", \.power),
        ] {
            let column = samples.column(path)
            if column.contains(where: { $0.isFinite }) { columns.append((key, column, 1)) }
        }
        for (key, column, decimals) in columns {
            data.append(",")
            HTMLPage.appendJSONArray(key, hover.map { column[$0] }, decimals: decimals, to: data)
        }
        data.append("},\"charts\":[")
        HTMLPage.appendCharts(charts, to: data)
        data.append("]")
        HTMLPage.appendDisplay(units: units, zone: zone, times: times, to: data)
        HTMLPage.appendMap(map, tiles: options.tiles, to: data)
        data.append("}")
        HTMLPage.end(data: data, to: out)
        try sink.flush()
    }

    /// Draws a whole document.
    public static func write(_ document: GPXDocument, to sink: FileSink, options: Options = Options()) throws {
        let writer = TraceHTMLWriter(sink: sink, options: options)
        try document.forEachEvent { try writer.write($0) }
        try writer.finish()
    }
}

/// Points kept for drawing, in bounded memory: an ``EvenSample`` of the track's points, read by
/// column.
struct PointSamples {
    struct Sample {
        var latitude: Double
        var longitude: Double
        /// Seconds since 1970; NaN without a time.
        var time: Double
        /// Metres; NaN without.
        var elevation: Double
        /// Metres per second; NaN without.
        var speed: Double
        /// Metres along the track from its first point.
        var distance: Double
        var segment: Int
        /// Beats per minute, revolutions per minute, degrees Celsius and watts; NaN without.
        var heartRate: Double = .nan
        var cadence: Double = .nan
        var temperature: Double = .nan
        var power: Double = .nan
        /// A degraded point's truth (degrees) and its distance from it (metres); NaN without.
        var truthLatitude: Double = .nan
        var truthLongitude: Double = .nan
        var truthError: Double = .nan
    }

    private var sample = EvenSample<Sample>(capacity: TraceHTMLWriter.maxSamples)

    var capacity: Int {
        get { sample.capacity }
        set { sample.capacity = newValue }
    }
    /// Every how many points one is kept.
    var stride: Int { sample.stride }
    var count: Int { sample.elements.count }
    var latitudes: [Double] { column(\.latitude) }
    var longitudes: [Double] { column(\.longitude) }
    var times: [Double] { column(\.time) }
    var elevations: [Double] { column(\.elevation) }
    var speeds: [Double] { column(\.speed) }
    var distances: [Double] { column(\.distance) }
    var segments: [Int] { sample.elements.map(\.segment) }

    func column(_ path: KeyPath<Sample, Double>) -> [Double] { sample.elements.map { $0[keyPath: path] } }

    mutating func append(_ s: Sample) { sample.append(s) }

    mutating func append(
        latitude: Double, longitude: Double, time: Double, elevation: Double, speed: Double, distance: Double,
        segment: Int
    ) {
        sample.append(
            Sample(
                latitude: latitude, longitude: longitude, time: time, elevation: elevation, speed: speed,
                distance: distance, segment: segment))
    }

    /// Keeps the latest point if it was left out: the last point of the trace is always drawn.
    mutating func keepLast() { sample.keepLast() }

    /// At most `limit` indices, evenly spread, the first and the last among them.
    func evenlySpread(atMost limit: Int) -> [Int] {
        guard count > limit, limit > 1 else { return Array(0..<count) }
        return (0..<limit).map { Int((Double($0) * Double(count - 1) / Double(limit - 1)).rounded()) }
    }
}

/// Centred moving averages of a profile's values.
enum ProfileSmoothing {
    /// Each value replaced by the mean of the finite values of its segment whose times lie within
    /// `window / 2` seconds of its own; a value without a time or a finite value stays as it is
    /// (NaN stays NaN). A run of points whose time goes back starts a new segment. O(n).
    static func movingAverage(_ values: [Double], times: [Double], segments: [Int], window: Double) -> [Double] {
        var out = values
        let half = window / 2
        var start = 0
        while start < values.count {
            // A run: one segment, times finite and never going back.
            var end = start + 1
            while end < values.count && segments[end] == segments[start] && times[end].isFinite
                && times[end - 1].isFinite && times[end] >= times[end - 1]
            {
                end += 1
            }
            var lo = start
            var hi = start
            var sum = 0.0
            var n = 0
            for i in start..<end where values[i].isFinite && times[i].isFinite {
                while hi < end && times[hi] <= times[i] + half {
                    if values[hi].isFinite {
                        sum += values[hi]
                        n += 1
                    }
                    hi += 1
                }
                while lo < hi && times[lo] < times[i] - half {
                    if values[lo].isFinite {
                        sum -= values[lo]
                        n -= 1
                    }
                    lo += 1
                }
                if n > 0 { out[i] = sum / Double(n) }
                if n == 0 { sum = 0 }
            }
            start = end
        }
        return out
    }
}
