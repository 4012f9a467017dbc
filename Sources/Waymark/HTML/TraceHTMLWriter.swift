#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Draws a trace as one self-contained HTML page from reader events: the map (``SVGWriter``'s
/// picture), elevation and speed profiles against time and against distance, the statistics of
/// `waymark info`, and details of a point on hover.
///
/// Nothing is fetched: the page is one file, its drawings inline SVG, its data one JSON island,
/// its script inline. Memory is bounded and so is the page, whatever the trace's length:
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

        public init(title: String = "") {
            self.title = title
        }
    }

    public static let maxSamples = 1 << 16
    public static let maxHoverPoints = 5_000

    private let sink: FileSink
    private let options: Options
    private let map: SVGWriter
    private var statistics = TraceStatistics()
    private var samples = PointSamples()
    private var metadataName: String?
    private var trackName: String?
    private var segment = 0
    private var inSegment = false
    private var previous: GPXPoint?
    private var distance = 0.0

    public init(sink: FileSink, options: Options = Options()) {
        self.sink = sink
        self.options = options
        map = SVGWriter(sink: sink, options: SVGWriter.Options(title: options.title, embedded: true))
    }

    /// Folds one event in.
    public func write(_ event: GPXEvent) throws {
        try map.write(event)
        statistics.add(event)
        switch event {
        case .metadata(let m):
            metadataName = m.name
        case .trackStart(let info):
            trackName = trackName ?? info.name
            endSegment()
        case .segmentStart, .segmentEnd, .trackEnd:
            endSegment()
        case .trackPoint(let p):
            add(p)
        default:
            break
        }
    }

    private func endSegment() {
        if inSegment { segment += 1 }
        inSegment = false
        previous = nil
    }

    private func add(_ p: GPXPoint) {
        inSegment = true
        var speed = p.speed ?? .nan
        if let previous {
            let step = Geodesic.distance(previous.coordinate, p.coordinate)
            if step.isFinite { distance += step }
            if speed.isNaN, let t0 = previous.time, let t1 = p.time {
                let dt = t1.timeIntervalSince(t0)
                if dt > 0 { speed = step / dt }
            }
        }
        previous = p
        samples.append(
            latitude: p.coordinate.latitude, longitude: p.coordinate.longitude,
            time: p.time?.timeIntervalSince1970 ?? .nan, elevation: p.elevation ?? .nan, speed: speed,
            distance: distance, segment: segment)
    }

    /// Writes the page and flushes.
    public func finish() throws {
        samples.keepLast()
        let out = sink.buffer
        let name = metadataName ?? trackName
        let title = [options.title, name.map { "“\($0)”" }].compactMap { $0?.isEmpty == false ? $0 : nil }
            .joined(separator: " — ")
        let s = statistics
        var subtitle =
            "\(s.trackPointCount) track point(s), \(s.routePointCount) route point(s), \(s.waypointCount) waypoint(s)"
        if s.trackPointCount > 1 { subtitle += "; \(TextRenderer.distance(s.length2D))" }
        if let d = s.duration { subtitle += " in \(TextRenderer.duration(d))" }
        HTMLPage.begin(title: title.isEmpty ? "Waymark trace" : title, subtitle: subtitle, to: out)

        out.append("<section id=\"map\">\n<div class=\"map\">\n")
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
            out.append(
                "<svg id=\"map-overlay\" class=\"overlay\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(SVGWriter.width) \(SVGWriter.height)\" aria-hidden=\"true\">\n<circle id=\"marker\" cx=\"0\" cy=\"0\" r=\"7\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"3\" visibility=\"hidden\"/>\n</svg>\n"
            )
        }
        out.append("</div>\n<p class=\"note\">")
        HTMLPage.appendText(
            (hover.isEmpty
                ? "No track points to give details of."
                : "Hover over the track for a point's details (\(HTMLPage.sampling(kept: hover.count, of: s.trackPointCount))).")
                + " Lines are simplified with Douglas–Peucker to half a pixel"
                + (samples.stride > 1 ? "; the profiles are drawn from 1 in \(samples.stride) points." : "."),
            to: out)
        out.append("</p>\n</section>\n")
        try sink.flushIfNeeded()

        // Profiles.
        let hasTime = samples.times.contains { $0.isFinite }
        let hasElevation = samples.elevations.contains { $0.isFinite }
        let hasSpeed = samples.speeds.contains { $0.isFinite }
        var charts: [(id: String, axis: HTMLChart.Axis, range: (d0: Double, d1: Double))] = []
        if samples.count > 1 && (hasElevation || hasSpeed) {
            out.append("<section id=\"profiles\">\n<h2>Profiles</h2>\n")
            if hasTime {
                out.append(
                    "<div class=\"axis-switch\">Against: <label><input type=\"radio\" name=\"axis\" value=\"t\" checked> time</label><label><input type=\"radio\" name=\"axis\" value=\"dist\"> distance</label></div>\n"
                )
            }
            for axis in hasTime ? [HTMLChart.Axis.time, .distance] : [.distance] {
                let xs = axis == .time ? samples.times : samples.distances
                let hidden = hasTime && axis == .distance
                if hasElevation {
                    let chart = HTMLChart(
                        id: "elevation-\(axis.rawValue)", title: "Elevation", unit: "m", colour: "#1a7f37",
                        axis: axis, xs: xs, ys: samples.elevations, segments: samples.segments)
                    if let range = chart.write(to: out, hidden: hidden) { charts.append((chart.id, axis, range)) }
                }
                if hasSpeed {
                    let chart = HTMLChart(
                        id: "speed-\(axis.rawValue)", title: "Speed", unit: "km/h", colour: "#1f6feb", axis: axis,
                        xs: xs, ys: samples.speeds, segments: samples.segments, scale: 3.6)
                    if let range = chart.write(to: out, hidden: hidden) { charts.append((chart.id, axis, range)) }
                }
                try sink.flushIfNeeded()
            }
            out.append("</section>\n")
        }

        // Statistics.
        out.append("<section id=\"statistics\">\n<h2>Statistics</h2>\n<table class=\"stats\">\n")
        for (label, value) in TextRenderer.summaryRows(of: s) {
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
        data.append(",")
        for (key, column, decimals) in [
            ("t", samples.times, 3), ("lat", samples.latitudes, 7), ("lon", samples.longitudes, 7),
            ("ele", samples.elevations, 1), ("speed", samples.speeds, 2), ("dist", samples.distances, 1),
        ] {
            HTMLPage.appendJSONArray(key, hover.map { column[$0] }, decimals: decimals, to: data)
            data.append(key == "dist" ? "" : ",")
        }
        data.append("},\"charts\":[")
        for (k, chart) in charts.enumerated() {
            if k > 0 { data.append(",") }
            data.append("{\"id\":\"\(chart.id)\",\"axis\":\"\(chart.axis.rawValue)\",\"d0\":")
            HTMLPage.appendJSONNumber(chart.range.d0, decimals: 3, to: data)
            data.append(",\"d1\":")
            HTMLPage.appendJSONNumber(chart.range.d1, decimals: 3, to: data)
            data.append(",\"p0\":\(Int(HTMLChart.left)),\"p1\":\(Int(HTMLChart.right))}")
        }
        data.append("]}")
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

/// Points kept for drawing, in bounded memory: every point until ``TraceHTMLWriter/maxSamples``
/// are kept, then every second (then fourth, …), evenly, as ``SVGWriter`` keeps its own.
struct PointSamples {
    private(set) var latitudes: [Double] = []
    private(set) var longitudes: [Double] = []
    /// Seconds since 1970; NaN without a time.
    private(set) var times: [Double] = []
    /// Metres; NaN without.
    private(set) var elevations: [Double] = []
    /// Metres per second; NaN without.
    private(set) var speeds: [Double] = []
    /// Metres along the track from its first point.
    private(set) var distances: [Double] = []
    private(set) var segments: [Int] = []
    /// Every how many points one is kept.
    private(set) var stride = 1
    private var sinceKept = 0
    var capacity = TraceHTMLWriter.maxSamples

    var count: Int { latitudes.count }

    /// The latest point when it was not kept: the track's last is kept (``keepLast()``).
    private var pending: [Double]?
    private var pendingSegment = 0

    mutating func append(
        latitude: Double, longitude: Double, time: Double, elevation: Double, speed: Double, distance: Double,
        segment: Int
    ) {
        sinceKept += 1
        guard sinceKept >= stride else {
            pending = [latitude, longitude, time, elevation, speed, distance]
            pendingSegment = segment
            return
        }
        sinceKept = 0
        pending = nil
        store([latitude, longitude, time, elevation, speed, distance], segment: segment)
        if count >= capacity {
            // The point just kept is dropped by halving when it falls on an odd place: it may be
            // the last.
            if count % 2 == 0 {
                pending = [latitude, longitude, time, elevation, speed, distance]
                pendingSegment = segment
            }
            halve()
        }
    }

    /// Keeps the latest point if it was left out: the last point of the trace is always drawn.
    mutating func keepLast() {
        if let pending { store(pending, segment: pendingSegment) }
        pending = nil
    }

    private mutating func store(_ v: [Double], segment: Int) {
        latitudes.append(v[0])
        longitudes.append(v[1])
        times.append(v[2])
        elevations.append(v[3])
        speeds.append(v[4])
        distances.append(v[5])
        segments.append(segment)
    }

    private mutating func halve() {
        latitudes.keepEveryOther()
        longitudes.keepEveryOther()
        times.keepEveryOther()
        elevations.keepEveryOther()
        speeds.keepEveryOther()
        distances.keepEveryOther()
        segments.keepEveryOther()
        stride *= 2
        // The last point seen was kept before; the next to keep is `stride` after the last kept.
        sinceKept = stride / 2
    }

    /// At most `limit` indices, evenly spread, the first and the last among them.
    func evenlySpread(atMost limit: Int) -> [Int] {
        guard count > limit, limit > 1 else { return Array(0..<count) }
        return (0..<limit).map { Int((Double($0) * Double(count - 1) / Double(limit - 1)).rounded()) }
    }
}
