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
    /// The time of the point before in the segment, for speeds the points do not give.
    private var previousTime: Date?

    public init(sink: FileSink, options: Options = Options()) {
        self.sink = sink
        self.options = options
        map = SVGWriter(sink: sink, options: SVGWriter.Options(title: options.title, embedded: true))
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
            endSegment()
        case .segmentStart, .segmentEnd, .trackEnd:
            endSegment()
        case .trackPoint(let p):
            add(p, step: statistics.length2D - lengthBefore)
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
        samples.append(
            latitude: p.coordinate.latitude, longitude: p.coordinate.longitude,
            time: p.time?.timeIntervalSince1970 ?? .nan, elevation: p.elevation ?? .nan, speed: speed,
            distance: statistics.length2D, segment: segment)
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
    }

    private var sample = EvenSample<Sample>(capacity: TraceHTMLWriter.maxSamples)

    var capacity: Int {
        get { sample.capacity }
        set { sample.capacity = newValue }
    }
    /// Every how many points one is kept.
    var stride: Int { sample.stride }
    var count: Int { sample.elements.count }
    var latitudes: [Double] { sample.elements.map(\.latitude) }
    var longitudes: [Double] { sample.elements.map(\.longitude) }
    var times: [Double] { sample.elements.map(\.time) }
    var elevations: [Double] { sample.elements.map(\.elevation) }
    var speeds: [Double] { sample.elements.map(\.speed) }
    var distances: [Double] { sample.elements.map(\.distance) }
    var segments: [Int] { sample.elements.map(\.segment) }

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
