#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Renders a trace for people: a summary, a sketch of the path in braille dots, and optionally
/// a table of every point.
///
/// It reads events once, in bounded memory: the sketch keeps at most ``maxSketchPoints`` points
/// (halving its sampling when full) and the table spills to a temporary file.
public final class TextRenderer {
    /// How to draw.
    public struct Options: Sendable {
        /// Columns available for the sketch and the table.
        public var width: Int
        /// Colour the sketch with ANSI escapes (only for terminals).
        public var color: Bool
        /// Include a row for every point.
        public var pointTable: Bool
        /// Draw the sketch.
        public var sketch: Bool
        /// Shown in the title.
        public var title: String

        public init(
            width: Int = 80, color: Bool = false, pointTable: Bool = false, sketch: Bool = true, title: String = ""
        ) {
            self.width = width
            self.color = color
            self.pointTable = pointTable
            self.sketch = sketch
            self.title = title
        }
    }

    public static let maxSketchPoints = 20_000

    private let sink: FileSink
    private let options: Options
    public private(set) var statistics = TraceStatistics()
    private var metadataName: String?
    private var trackName: String?
    private var routeName: String?
    /// The trace's own name: the file's, else its first track's, else its first route's.
    private var name: String? { metadataName ?? trackName ?? routeName }
    private var sketchPoints: [(Float, Float)] = []  // (lat, lon); NaN lat = line break
    private var waypointPoints: [(Float, Float)] = []  // drawn in order when there is no track or route
    private var stride = 1
    private var sinceKept = 0
    private let table = SpillBuffer()
    private var tableIndex = 0
    private var tableDistance = 0.0
    private var tablePrevious: GPXPoint?
    private var kind = "trk"

    public init(sink: FileSink, options: Options) {
        self.sink = sink
        self.options = options
    }

    /// Folds one event in.
    public func write(_ event: GPXEvent) throws {
        statistics.add(event)
        switch event {
        case .metadata(let m):
            metadataName = m.name
        case .trackStart(let info), .routeStart(let info):
            if event.isRoute { routeName = routeName ?? info.name } else { trackName = trackName ?? info.name }
            breakLine()
            kind = event.isRoute ? "rte" : "trk"
            tablePrevious = nil
        case .segmentStart:
            breakLine()
            tablePrevious = nil
        case .trackPoint(let p), .routePoint(let p):
            keep(p)
            if options.pointTable { try tableRow(p, kind: kind) }
        case .waypoint(let p):
            if waypointPoints.count < Self.maxSketchPoints {
                waypointPoints.append((Float(p.coordinate.latitude), Float(p.coordinate.longitude)))
            }
            if options.pointTable { try tableRow(p, kind: "wpt") }
        default:
            break
        }
    }

    private func breakLine() {
        if let last = sketchPoints.last, !last.0.isNaN { sketchPoints.append((.nan, .nan)) }
        sinceKept = stride  // keep the first point of the next line
    }

    private func keep(_ p: GPXPoint) {
        sinceKept += 1
        guard sinceKept >= stride else { return }
        sinceKept = 0
        sketchPoints.append((Float(p.coordinate.latitude), Float(p.coordinate.longitude)))
        if sketchPoints.count >= Self.maxSketchPoints {
            var kept: [(Float, Float)] = []
            kept.reserveCapacity(sketchPoints.count / 2 + 1)
            for (i, q) in sketchPoints.enumerated() where i % 2 == 0 || q.0.isNaN { kept.append(q) }
            sketchPoints = kept
            stride *= 2
        }
    }

    private func tableRow(_ p: GPXPoint, kind: String) throws {
        let o = table.memory
        if kind != "wpt", let q = tablePrevious { tableDistance += Geodesic.distance(q.coordinate, p.coordinate) }
        if kind != "wpt" { tablePrevious = p }
        tableIndex += 1
        var row = pad(String(tableIndex), 7, right: true) + "  " + kind + "  "
        row += p.time.map { ValueFormatting.iso8601($0) } ?? pad("-", 24)
        row += "  " + pad(ValueFormatting.fixed(p.coordinate.latitude, decimals: 6), 11, right: true)
        row += "  " + pad(ValueFormatting.fixed(p.coordinate.longitude, decimals: 6), 12, right: true)
        row += "  " + pad(p.elevation.map { ValueFormatting.fixed($0, decimals: 1) } ?? "-", 8, right: true)
        row +=
            "  " + pad(kind == "wpt" ? "-" : ValueFormatting.fixed(tableDistance / 1000, decimals: 3), 9, right: true)
        row += "  " + (p.extensions.heartRate.map { String(Int($0)) } ?? p.name.map { TerminalText.escaped($0) } ?? "")
        o.append(row)
        o.append(UInt8(ascii: "\n"))
        try table.spillIfNeeded()
    }

    /// Writes the summary, the sketch and the table, then flushes.
    public func finish() throws {
        let out = sink.buffer
        out.append(summary())
        if options.sketch, let art = sketch() {
            out.append("\n")
            out.append(art)
        }
        if options.pointTable {
            out.append("\n")
            out.append(
                pad("#", 7, right: true) + "  type  " + pad("time (UTC)", 24) + "  " + pad("latitude", 11, right: true)
                    + "  " + pad("longitude", 12, right: true) + "  " + pad("ele m", 8, right: true) + "  "
                    + pad("dist km", 9, right: true) + "  hr/name\n")
            try table.drain(into: sink)
        }
        try sink.flush()
    }

    // MARK: - Summary

    /// The summary block, one fact per line.
    public func summary() -> String {
        Self.summary(of: statistics, name: name, title: options.title)
    }

    /// The summary block for `s`, one fact per line; `name` is the trace's own name, if any.
    /// Control characters in the title and the name are shown escaped (``TerminalText``).
    public static func summary(of s: TraceStatistics, name: String?, title: String) -> String {
        var lines: [String] = []
        let title = [title, name.map { "\"\($0)\"" }].compactMap { $0?.isEmpty == false ? $0 : nil }
            .map { TerminalText.escaped($0) }
        if !title.isEmpty { lines.append(title.joined(separator: " — ")) }
        for (label, value) in summaryRows(of: s) {
            lines.append("  " + label + String(repeating: " ", count: max(1, 10 - label.count)) + value)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The rows of ``summary(of:name:title:)``, as label and value: `info`'s figures, which the
    /// HTML page shows as a table.
    static func summaryRows(
        of s: TraceStatistics, units: DisplayUnits = .metric, zone: DisplayTimeZone = .utc
    ) -> [(label: String, value: String)] {
        var rows: [(String, String)] = []
        rows.append(
            (
                "points",
                "\(group(s.trackPointCount)) in \(s.trackCount) track(s), \(s.segmentCount) segment(s); "
                    + "\(group(s.waypointCount)) waypoint(s); \(s.routeCount) route(s) with \(group(s.routePointCount)) point(s)"
            ))
        if let a = s.startTime, let b = s.endTime {
            let span = s.duration.map { " (\(Self.duration($0)) recorded)" } ?? ""
            let times =
                zone.isUTC
                ? "\(ValueFormatting.iso8601(a)) → \(ValueFormatting.iso8601(b))"
                : "\(zone.text(a.timeIntervalSince1970)) → \(zone.text(b.timeIntervalSince1970))"
            rows.append(("time", times + span))
        }
        if s.trackPointCount > 1 {
            rows.append(("length", "\(units.distance(s.length2D)) (3D \(units.distance(s.length3D)))"))
        }
        if s.routePointCount > 1 {
            rows.append(("route", units.distance(s.routeLength2D)))
        }
        if s.movingTime > 0 {
            var value = Self.duration(s.movingTime)
            if let avg = s.averageSpeed { value += ", average \(units.speedText(avg))" }
            if let max = s.maxSpeed { value += ", max \(units.speedText(max))" }
            rows.append(("moving", value))
        }
        if let lo = s.minElevation, let hi = s.maxElevation {
            let (unit, symbol) = units.shortDistance
            rows.append(
                (
                    "climb",
                    "+\(ValueFormatting.fixed(s.climb / unit, decimals: 0)) \(symbol), −\(ValueFormatting.fixed(s.descent / unit, decimals: 0)) \(symbol); "
                        + "elevation \(ValueFormatting.fixed(lo / unit, decimals: 1)) to \(ValueFormatting.fixed(hi / unit, decimals: 1)) \(symbol)"
                ))
        }
        if let b = s.bounds {
            rows.append(
                (
                    "bounds",
                    "\(ValueFormatting.fixed(b.minLatitude, decimals: 6)), \(ValueFormatting.fixed(b.minLongitude, decimals: 6))"
                        + " → \(ValueFormatting.fixed(b.maxLatitude, decimals: 6)), \(ValueFormatting.fixed(b.maxLongitude, decimals: 6))"
                ))
        }
        return rows
    }

    static func distance(_ metres: Double) -> String {
        metres >= 1000
            ? "\(ValueFormatting.fixed(metres / 1000, decimals: 2)) km"
            : "\(ValueFormatting.fixed(metres, decimals: 1)) m"
    }

    static func speed(_ mps: Double) -> String { "\(ValueFormatting.fixed(mps * 3.6, decimals: 1)) km/h" }

    static func duration(_ seconds: Double) -> String {
        // A time read from a file or a store may be anything: never trap on it.
        guard seconds.isFinite, abs(seconds) < 1e15 else {
            return seconds < 0 ? "less than −31 million years" : "more than 31 million years"
        }
        if seconds < 0 { return "−" + duration(-seconds) }
        let total = Int(seconds.rounded())
        let h = total / 3600
        let m = total / 60 % 60
        let s = total % 60
        if h > 0 { return "\(h)h \(m)m \(s)s" }
        if m > 0 { return "\(m)m \(s)s" }
        return "\(s)s"
    }

    private static func group(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    private func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let n = s.count
        guard n < width else { return s }
        let fill = String(repeating: " ", count: width - n)
        return right ? fill + s : s + fill
    }

    // MARK: - Sketch

    /// The path drawn in braille dots (2×4 per character cell), north up, fitted to the width;
    /// S marks the start and E the end. Nil when there is nothing to draw.
    public func sketch() -> String? {
        var points = sketchPoints.filter { !$0.0.isNaN }
        let path: [(Float, Float)]
        if points.count < 2 {
            // Xcode-style files are waypoints played in order: draw them as a path.
            points = waypointPoints
            path = waypointPoints
        } else {
            path = sketchPoints
        }
        guard points.count >= 2 else { return nil }
        var minLat = Float.infinity
        var maxLat = -Float.infinity
        var minLon = Float.infinity
        var maxLon = -Float.infinity
        for (lat, lon) in points {
            minLat = min(minLat, lat)
            maxLat = max(maxLat, lat)
            minLon = min(minLon, lon)
            maxLon = max(maxLon, lon)
        }
        let cosLat = max(0.01, cos(Double((minLat + maxLat) / 2) * .pi / 180))
        let spanX = max(Double(maxLon - minLon) * cosLat, 1e-9)
        let spanY = max(Double(maxLat - minLat), 1e-9)
        let columns = max(10, min(options.width - 2, 200))
        let maxRows = max(4, min(columns / 3, 30))
        let scale = min(Double(columns * 2 - 1) / spanX, Double(maxRows * 4 - 1) / spanY)
        let dotsW = Int((spanX * scale).rounded()) + 1
        let dotsH = Int((spanY * scale).rounded()) + 1
        let cols = (dotsW + 1) / 2
        let rows = (dotsH + 3) / 4
        var cells = [UInt8](repeating: 0, count: cols * rows)
        func project(_ p: (Float, Float)) -> (Int, Int) {
            let x = Int((Double(p.1 - minLon) * cosLat * scale).rounded())
            let y = Int((Double(maxLat - p.0) * scale).rounded())
            return (min(max(x, 0), dotsW - 1), min(max(y, 0), dotsH - 1))
        }
        func plot(_ x: Int, _ y: Int) {
            let bits: [[UInt8]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]
            cells[(y / 4) * cols + x / 2] |= bits[y % 4][x % 2]
        }
        var last: (Int, Int)?
        for p in path {
            if p.0.isNaN {
                last = nil
                continue
            }
            let (x1, y1) = project(p)
            if let (x0, y0) = last {
                // Bresenham's line.
                var x = x0
                var y = y0
                let dx = abs(x1 - x0)
                let dy = -abs(y1 - y0)
                let sx = x0 < x1 ? 1 : -1
                let sy = y0 < y1 ? 1 : -1
                var err = dx + dy
                while true {
                    plot(x, y)
                    if x == x1 && y == y1 { break }
                    let e2 = 2 * err
                    if e2 >= dy {
                        err += dy
                        x += sx
                    }
                    if e2 <= dx {
                        err += dx
                        y += sy
                    }
                }
            } else {
                plot(x1, y1)
            }
            last = (x1, y1)
        }
        let start = project(points[0])
        let end = project(points[points.count - 1])
        let startCell = (start.1 / 4) * cols + start.0 / 2
        let endCell = (end.1 / 4) * cols + end.0 / 2
        let (pathOn, startOn, endOn, off) =
            options.color ? ("\u{1B}[36m", "\u{1B}[1;32m", "\u{1B}[1;31m", "\u{1B}[0m") : ("", "", "", "")
        var text = ""
        for r in 0..<rows {
            var line = " "
            var inPath = false
            for c in 0..<cols {
                let index = r * cols + c
                if index == endCell || index == startCell {
                    if inPath { line += off }
                    inPath = false
                    line += index == endCell ? endOn + "E" + off : startOn + "S" + off
                    continue
                }
                let bits = cells[index]
                if bits == 0 {
                    if inPath { line += off }
                    inPath = false
                    line += " "
                } else {
                    if !inPath { line += pathOn }
                    inPath = true
                    line.unicodeScalars.append(Unicode.Scalar(0x2800 + UInt32(bits))!)
                }
            }
            if inPath { line += off }
            while line.hasSuffix(" ") { line.removeLast() }
            text += line + "\n"
        }
        let widthMetres = Geodesic.distance(
            Coordinate(latitude: Double((minLat + maxLat) / 2), longitude: Double(minLon)),
            Coordinate(latitude: Double((minLat + maxLat) / 2), longitude: Double(maxLon)))
        text += " S start, E end; \(Self.distance(widthMetres)) across, north up\n"
        return text
    }
}

extension GPXEvent {
    var isRoute: Bool {
        switch self {
        case .routeStart, .routePoint, .routeEnd: return true
        default: return false
        }
    }
}
