#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Draws a trace as a standalone SVG picture from reader events: tracks, routes, waypoints, the
/// start and the end, a scale bar, a north arrow, a legend and a caption.
///
/// The picture is ``width`` × ``height`` pixels with a fixed viewBox. It is projected with
/// ``SVGProjection``: local equirectangular for small areas, Web Mercator for large ones; the
/// caption and the `<desc>` say which.
///
/// - Each track segment is a polyline of its own, so the gaps between segments stay gaps; a
///   route is a dashed polyline; a waypoint is a ring with its name beside it. Waypoints
///   without any track or route (Xcode's simulated routes) are joined in order by a dotted line,
///   and the first and last are the start and the end.
/// - Longitudes are unwrapped into a continuous range (each point within 180° of the one before
///   it on its line, and each line's first point and each waypoint within 180° of the trace's
///   first point), so a path across the antimeridian is drawn across it, not back across the
///   world.
/// - Memory is bounded: the writer keeps at most ``maxKeptPoints`` points, as `Float` offsets
///   from the first point. When that many are kept, every other point of each line is dropped
///   and from then on only every second (then fourth, …) point is kept; each line keeps its first
///   and last point. At most ``maxLines`` lines and ``maxWaypoints`` waypoints are drawn; the
///   `<desc>` counts what was left out.
/// - When drawing, each line is simplified to the pixel with Douglas–Peucker (tolerance
///   ``tolerance`` pixels), and coordinates are written with one decimal. A million-point track
///   gives well under 2 MB of SVG.
/// - The output depends on the events alone: no time, no randomness, fixed decimals. The same
///   input gives the same bytes.
public final class SVGWriter {
    /// What to draw besides the trace.
    public struct Options: Sendable {
        /// Shown in the title (a file name, say), before the trace's own name.
        public var title: String
        /// Part of an HTML page: no XML declaration, and the `<svg>` scales to its box.
        public var embedded: Bool
        /// The tracks' colour and their name in the legend, when they share one colour.
        public var trackColour: String
        public var trackLabel: String
        /// Each track in a colour of its own (``trackPalette``, in turn) with a legend entry of its
        /// own, when there are several; else every track in ``trackColour``.
        public var colourPerTrack: Bool
        /// The tracks' stroke width in pixels, when they share one colour.
        public var trackWidth: Double
        /// The scale bar's units.
        public var units: DisplayUnits
        /// The projection to use whatever the extent (Web Mercator to lie on map tiles); nil
        /// chooses by the extent.
        public var projection: SVGProjection.Kind?

        public init(
            title: String = "", embedded: Bool = false, trackColour: String = Colour.track,
            trackLabel: String = "track", colourPerTrack: Bool = true, trackWidth: Double = 3,
            units: DisplayUnits = .metric, projection: SVGProjection.Kind? = nil
        ) {
            self.trackWidth = trackWidth
            self.title = title
            self.embedded = embedded
            self.trackColour = trackColour
            self.trackLabel = trackLabel
            self.colourPerTrack = colourPerTrack
            self.units = units
            self.projection = projection
        }
    }

    /// How the picture maps coordinates to its pixels, once ``finish()`` has drawn it (nil before,
    /// and when there was nothing to draw): for layers drawn over it with the same viewBox.
    public private(set) var mapping: SVGMapping?
    /// Metres per pixel along the scale bar's parallel, once ``finish()`` has drawn a scale bar.
    public private(set) var scaleMetresPerPixel: Double?

    /// The picture's size in pixels.
    public static let width = 1000
    public static let height = 760
    /// The map's area inside the picture: below the title, above the legend.
    static let mapX = 50.0
    static let mapY = 76.0
    static let mapWidth = 900.0
    static let mapHeight = 590.0
    /// The map's panel: the grey box the map is drawn in (and clipped to, on a page).
    static let panelX = mapX - 30
    static let panelY = mapY - 26
    static let panelWidth = mapWidth + 60
    static let panelHeight = mapHeight + 46
    /// The Douglas–Peucker tolerance, in pixels.
    public static let tolerance = 0.5
    public static let maxKeptPoints = 1 << 16
    public static let maxLines = 10_000
    public static let maxWaypoints = 2_000

    /// Colours, as written in the SVG.
    public enum Colour {
        public static let track = "#1f6feb"
        public static let route = "#8250df"
        public static let start = "#1a7f37"
        public static let end = "#cf222e"
        public static let waypoint = "#bc4c00"
    }

    private struct Line {
        var start: Int
        var isRoute: Bool
        /// The track's index among the trace's tracks (0 for a route).
        var track: Int
    }

    /// The tracks' colours, in turn: distinct on white and from the start, end, route and
    /// waypoint colours. The first is ``Colour/track``.
    public static let trackPalette = [
        "#1f6feb", "#bf3989", "#1b7c83", "#953800", "#6639ba", "#0a3069", "#4d7c0f", "#9a6700",
    ]

    /// The colour of the track at `index` (0 for the first) among several.
    public static func trackColour(_ index: Int) -> String { trackPalette[index % trackPalette.count] }

    /// The stroke width of the track at `index` of `count`: earlier tracks are drawn wider, so
    /// that a track drawn over another (an out and back) leaves the one under it visible.
    public static func trackWidth(_ index: Int, of count: Int) -> Double {
        let layers = min(count, 4)
        return 3 + 1.5 * Double(max(0, layers - 1 - index))
    }

    private struct Waypoint {
        var latitude: Float
        var longitude: Float
        var name: String?
    }

    private let sink: FileSink
    private let options: Options
    private var metadataName: String?
    private var trackName: String?
    private var routeName: String?
    /// Each track's name ("" without one), in order; at most ``maxLines``.
    private var trackNames: [String] = []
    /// The trace's first point: kept points are offsets from it, in degrees.
    private var origin: (latitude: Double, longitude: Double)?
    private var latitudes: [Float] = []
    private var longitudes: [Float] = []
    private var lines: [Line] = []
    private var waypoints: [Waypoint] = []
    private var lineOpen = false
    private var currentIsRoute = false
    /// The unwrapped longitude of the line's previous point, in degrees.
    private var previousLongitude: Double?
    /// The line's latest point when it was not kept, to keep it if it is the line's last.
    private var pending: (Float, Float)?
    /// The open line is beyond ``maxLines``: none of its points are kept.
    private var skippingLine = false
    private var stride = 1
    private var sinceKept = 0
    private var trackPointCount = 0
    private var routePointCount = 0
    private var waypointCount = 0
    private var linesLeftOut = 0

    public init(sink: FileSink, options: Options = Options()) {
        self.sink = sink
        self.options = options
    }

    /// Folds one event in.
    public func write(_ event: GPXEvent) throws {
        switch event {
        case .metadata(let m):
            metadataName = m.name
        case .trackStart(let info):
            trackName = trackName ?? info.name
            if trackNames.count < Self.maxLines { trackNames.append(info.name.map { String($0.prefix(80)) } ?? "") }
            endLine()
        case .routeStart(let info):
            routeName = routeName ?? info.name
            endLine()
            currentIsRoute = true
        case .segmentStart, .segmentEnd, .trackEnd, .routeEnd:
            endLine()
        case .trackPoint(let p):
            trackPointCount += 1
            currentIsRoute = false
            add(p.coordinate)
        case .routePoint(let p):
            routePointCount += 1
            currentIsRoute = true
            add(p.coordinate)
        case .waypoint(let p):
            waypointCount += 1
            guard waypoints.count < Self.maxWaypoints else { return }
            let (lat, lon) = offset(p.coordinate, near: nil)
            waypoints.append(Waypoint(latitude: lat, longitude: lon, name: p.name.map { String($0.prefix(80)) }))
        default:
            break
        }
    }

    /// The coordinate as offsets from the origin, its longitude unwrapped to within 180° of
    /// `near` (an unwrapped longitude), else of the origin.
    private func offset(_ c: Coordinate, near: Double?) -> (Float, Float) {
        let origin = self.origin ?? (c.latitude, c.longitude)
        self.origin = origin
        let longitude = Self.unwrap(c.longitude, near: near ?? origin.longitude)
        return (Float(c.latitude - origin.latitude), Float(longitude - origin.longitude))
    }

    /// `longitude` plus or minus whole turns, to within 180° of `reference` (degrees).
    static func unwrap(_ longitude: Double, near reference: Double) -> Double {
        longitude + 360 * ((reference - longitude) / 360).rounded()
    }

    private func add(_ c: Coordinate) {
        if !lineOpen {
            lineOpen = true
            pending = nil
            skippingLine = lines.count >= Self.maxLines
            if skippingLine {
                linesLeftOut += 1
                return
            }
            lines.append(
                Line(
                    start: latitudes.count, isRoute: currentIsRoute,
                    track: currentIsRoute ? 0 : max(0, trackNames.count - 1)))
            let p = offset(c, near: nil)
            previousLongitude = Double(p.1) + (origin?.longitude ?? 0)
            append(p)
            sinceKept = 0
            return
        }
        guard !skippingLine else { return }
        let p = offset(c, near: previousLongitude)
        previousLongitude = Double(p.1) + (origin?.longitude ?? 0)
        sinceKept += 1
        if sinceKept >= stride {
            sinceKept = 0
            pending = nil
            append(p)
        } else {
            pending = p
        }
    }

    private func endLine() {
        if lineOpen, let pending { append(pending) }
        lineOpen = false
        pending = nil
        previousLongitude = nil
    }

    private func append(_ p: (Float, Float)) {
        latitudes.append(p.0)
        longitudes.append(p.1)
        if latitudes.count >= Self.maxKeptPoints { halve() }
    }

    /// Drops every other point of each line, keeping each line's first and last.
    private func halve() {
        var w = 0
        for li in lines.indices {
            let s = lines[li].start
            let e = li + 1 < lines.count ? lines[li + 1].start : latitudes.count
            lines[li].start = w
            for i in s..<e where (i - s) % 2 == 0 || i == e - 1 {
                latitudes[w] = latitudes[i]
                longitudes[w] = longitudes[i]
                w += 1
            }
        }
        latitudes.removeLast(latitudes.count - w)
        longitudes.removeLast(longitudes.count - w)
        stride *= 2
    }

    // MARK: - Drawing

    /// Writes the picture and flushes.
    public func finish() throws {
        endLine()
        // The colour goes into attributes: escaped, whatever a caller gave.
        var trackColour = ""
        for c in options.trackColour.unicodeScalars {
            switch c {
            case "&": trackColour += "&amp;"
            case "<": trackColour += "&lt;"
            case "\"": trackColour += "&quot;"
            // What XML forbids even as a reference: left out.
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": break
            default: trackColour.unicodeScalars.append(c)
            }
        }
        let out = sink.buffer
        let name = metadataName ?? trackName ?? routeName
        let title = [options.title, name.map { "“\($0)”" }].compactMap { $0?.isEmpty == false ? $0 : nil }
            .joined(separator: " — ")

        // The box, in unwrapped degrees.
        var south = Double.infinity
        var north = -Double.infinity
        var west = Double.infinity
        var east = -Double.infinity
        func widen(_ lat: Float, _ lon: Float) {
            south = min(south, Double(lat))
            north = max(north, Double(lat))
            west = min(west, Double(lon))
            east = max(east, Double(lon))
        }
        for i in latitudes.indices { widen(latitudes[i], longitudes[i]) }
        for w in waypoints { widen(w.latitude, w.longitude) }
        let origin = self.origin ?? (0, 0)
        let empty = !south.isFinite

        if !options.embedded { out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") }
        out.append(options.embedded ? "<svg id=\"map-svg\" role=\"img\" " : "<svg ")
        out.append(
            "xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" height=\"\(Self.height)\" viewBox=\"0 0 \(Self.width) \(Self.height)\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"13\">\n"
        )
        out.append("<title>")
        XMLEscaping.appendEscaped(title.isEmpty ? "Waymark trace" : title, attribute: false, to: out)
        out.append("</title>\n")
        out.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n")
        out.append("<text x=\"30\" y=\"34\" font-size=\"18\" font-weight=\"bold\" fill=\"#24292f\">")
        XMLEscaping.appendEscaped(title.isEmpty ? "Waymark trace" : title, attribute: false, to: out)
        out.append("</text>\n")
        out.append(
            "<rect x=\"\(Int(Self.mapX) - 30)\" y=\"\(Int(Self.mapY) - 26)\" width=\"\(Int(Self.mapWidth) + 60)\" height=\"\(Int(Self.mapHeight) + 46)\" fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>\n"
        )

        guard !empty else {
            out.append("<desc>No points to draw.</desc>\n")
            out.append(
                "<text x=\"500\" y=\"366\" text-anchor=\"middle\" fill=\"#57606a\">no points</text>\n</svg>\n")
            try sink.flush()
            return
        }

        let projection = SVGProjection(
            south: origin.latitude + south, west: origin.longitude + west,
            north: origin.latitude + north, east: origin.longitude + east,
            x: Self.mapX, y: Self.mapY, width: Self.mapWidth, height: Self.mapHeight, kind: options.projection)
        func pixel(_ lat: Float, _ lon: Float) -> (x: Double, y: Double) {
            projection.pixel(latitude: origin.latitude + Double(lat), longitude: origin.longitude + Double(lon))
        }
        mapping = SVGMapping(projection: projection, originLongitude: origin.longitude)

        out.append("<desc>")
        var desc = "Drawn by Waymark in the \(projection.kind.rawValue) projection"
        if projection.kind == .localEquirectangular {
            desc += " (longitudes scaled by the cosine of the mean latitude)"
        }
        desc += "; \(trackPointCount) track point(s), \(routePointCount) route point(s), \(waypointCount) waypoint(s)"
        desc += "; lines simplified with Douglas–Peucker to \(ValueFormatting.fixed(Self.tolerance, decimals: 1)) px"
        if stride > 1 { desc += " after keeping every \(stride)th point" }
        if linesLeftOut > 0 { desc += "; \(linesLeftOut) line(s) beyond \(Self.maxLines) left out" }
        if waypointCount > waypoints.count {
            desc += "; \(waypointCount - waypoints.count) waypoint(s) beyond \(Self.maxWaypoints) left out"
        }
        XMLEscaping.appendEscaped(desc + ".", attribute: false, to: out)
        out.append("</desc>\n")

        // A page zooms and pans what is inside the map's panel: it is clipped to the panel, map
        // tiles go under it, and the page's script transforms `map-view`.
        if options.embedded {
            out.append(
                "<clipPath id=\"map-clip\"><rect x=\"\(Int(Self.panelX))\" y=\"\(Int(Self.panelY))\" width=\"\(Int(Self.panelWidth))\" height=\"\(Int(Self.panelHeight))\"/></clipPath>\n<g clip-path=\"url(#map-clip)\">\n<g id=\"tiles\"></g>\n<g id=\"map-view\">\n"
            )
        }

        // Lines: routes under tracks; with a colour per track, earlier tracks wider under later.
        let trackCount = Set(lines.lazy.filter { !$0.isRoute }.map(\.track)).count
        let perTrack = options.colourPerTrack && trackCount > 1
        var firstTrack: (x: Double, y: Double)?
        var lastTrack: (x: Double, y: Double)?
        var firstAny: (x: Double, y: Double)?
        var lastAny: (x: Double, y: Double)?
        for routes in [true, false] {
            let hasAny = lines.contains { $0.isRoute == routes }
            guard hasAny else { continue }
            if routes {
                out.append(
                    "<g id=\"routes\" fill=\"none\" stroke=\"\(Colour.route)\" stroke-width=\"2.5\" stroke-dasharray=\"8 5\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n"
                )
            } else {
                out.append(
                    "<g id=\"tracks\" fill=\"none\" stroke=\"\(perTrack ? Self.trackColour(0) : trackColour)\" stroke-width=\"\(perTrack ? "3" : DisplayUnits.number(options.trackWidth))\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n"
                )
            }
            var pixels: [(x: Double, y: Double)] = []
            for li in lines.indices where lines[li].isRoute == routes {
                let s = lines[li].start
                let e = li + 1 < lines.count ? lines[li + 1].start : latitudes.count
                guard e > s else { continue }
                pixels.removeAll(keepingCapacity: true)
                for i in s..<e { pixels.append(pixel(latitudes[i], longitudes[i])) }
                if !routes {
                    firstTrack = firstTrack ?? pixels[0]
                    lastTrack = pixels[pixels.count - 1]
                }
                firstAny = firstAny ?? pixels[0]
                lastAny = pixels[pixels.count - 1]
                let kept = Self.simplify(pixels, tolerance: Self.tolerance)
                out.append("<polyline ")
                if perTrack && !routes {
                    let k = lines[li].track
                    out.append("data-track=\"\(k)\" stroke=\"\(Self.trackColour(k))\" stroke-width=\"")
                    Self.appendNumber(Self.trackWidth(k, of: trackCount), to: out)
                    out.append("\" ")
                }
                out.append("points=\"")
                for (n, k) in kept.enumerated() {
                    if n > 0 { out.append(" ") }
                    Self.appendPoint(pixels[k], to: out)
                }
                if kept.count == 1 {
                    out.append(" ")
                    Self.appendPoint(pixels[kept[0]], to: out)
                }
                out.append("\"/>\n")
                try sink.flushIfNeeded()
            }
            out.append("</g>\n")
        }

        // Waypoints alone (Xcode's simulated routes) are visited in order: a thin line joins them.
        let waypointPath = lines.isEmpty && waypoints.count >= 2
        if waypointPath {
            out.append(
                "<polyline id=\"waypoint-order\" fill=\"none\" stroke=\"\(Colour.waypoint)\" stroke-width=\"1.5\" stroke-dasharray=\"2 4\" points=\""
            )
            for (n, w) in waypoints.enumerated() {
                if n > 0 { out.append(" ") }
                Self.appendPoint(pixel(w.latitude, w.longitude), to: out)
            }
            out.append("\"/>\n")
            firstAny = pixel(waypoints[0].latitude, waypoints[0].longitude)
            lastAny = pixel(waypoints[waypoints.count - 1].latitude, waypoints[waypoints.count - 1].longitude)
        }

        // Start and end: of the tracks, else of the routes, else of the waypoints in order.
        let start = firstTrack ?? firstAny
        let end = lastTrack ?? lastAny

        // Waypoints, their names placed clear of the start, the end, every mark and the names
        // placed before.
        if !waypoints.isEmpty {
            var placer = LabelPlacer(
                bounds: (Self.panelX, Self.panelY, Self.panelX + Self.panelWidth, Self.panelY + Self.panelHeight))
            if let start { placer.avoid(LabelPlacer.box(around: start, radius: 8)) }
            if let end { placer.avoid(LabelPlacer.box(around: end, radius: 7.5)) }
            let marks = waypoints.map { pixel($0.latitude, $0.longitude) }
            for p in marks { placer.avoid(LabelPlacer.box(around: p, radius: 6)) }
            out.append(
                "<g id=\"waypoints\" fill=\"\(Colour.waypoint)\" stroke=\"none\" font-size=\"12\">\n")
            for (w, p) in zip(waypoints, marks) {
                out.append("<circle cx=\"")
                Self.appendNumber(p.x, to: out)
                out.append("\" cy=\"")
                Self.appendNumber(p.y, to: out)
                out.append("\" r=\"4.5\" fill=\"#ffffff\" stroke=\"\(Colour.waypoint)\" stroke-width=\"2.5\"/>\n")
                if let name = w.name, !name.isEmpty {
                    let label = placer.place(name, at: p, fontSize: 12)
                    out.append("<text x=\"")
                    Self.appendNumber(label.x, to: out)
                    out.append("\" y=\"")
                    Self.appendNumber(label.y, to: out)
                    switch label.anchor {
                    case .start: out.append("\">")
                    case .middle: out.append("\" text-anchor=\"middle\">")
                    case .end: out.append("\" text-anchor=\"end\">")
                    }
                    XMLEscaping.appendEscaped(name, attribute: false, to: out)
                    out.append("</text>\n")
                }
                try sink.flushIfNeeded()
            }
            out.append("</g>\n")
        }

        if let start, let end {
            out.append("<g id=\"start-end\" stroke=\"#ffffff\" stroke-width=\"2\">\n")
            out.append("<circle id=\"start\" cx=\"")
            Self.appendNumber(start.x, to: out)
            out.append("\" cy=\"")
            Self.appendNumber(start.y, to: out)
            out.append("\" r=\"7\" fill=\"\(Colour.start)\"/>\n")
            out.append("<rect id=\"end\" x=\"")
            Self.appendNumber(end.x - 6.5, to: out)
            out.append("\" y=\"")
            Self.appendNumber(end.y - 6.5, to: out)
            out.append("\" width=\"13\" height=\"13\" fill=\"\(Colour.end)\"/>\n")
            out.append("</g>\n")
        }
        if options.embedded { out.append("</g>\n</g>\n") }

        // North arrow, top right of the map.
        out.append(
            """
            <g id="north-arrow" transform="translate(962 84)">
            <polygon points="0,-26 9,8 0,2 -9,8" fill="#24292f"/>
            <text x="0" y="24" text-anchor="middle" font-weight="bold" fill="#24292f">N</text>
            </g>\n
            """)

        // Scale bar, bottom left: a round distance along the parallel through the centre.
        let centreLatitude = origin.latitude + (south + north) / 2
        let centreLongitude = origin.longitude + (west + east) / 2
        let across = Geodesic.distance(
            Coordinate(latitude: centreLatitude, longitude: centreLongitude),
            Coordinate(
                latitude: centreLatitude,
                longitude: centreLongitude + projection.degreesOfLongitude(perPixels: 100)))
        let metresPerPixel = across / 100
        // At a pole the parallel has no length: no bar then.
        let drawsScaleBar = metresPerPixel.isFinite && metresPerPixel * 180 >= 1
        scaleMetresPerPixel = drawsScaleBar ? metresPerPixel : nil
        if drawsScaleBar {
            let (metres, label) = options.units.roundDistance(atMost: metresPerPixel * 180)
            let barLength = metres / metresPerPixel
            out.append("<g id=\"scale-bar\" transform=\"translate(30 716)\" fill=\"#24292f\">\n")
            out.append("<rect x=\"0\" y=\"0\" width=\"")
            Self.appendNumber(barLength, to: out)
            out.append("\" height=\"6\" fill=\"#24292f\"/>\n<rect x=\"0\" y=\"0\" width=\"")
            Self.appendNumber(barLength / 2, to: out)
            out.append("\" height=\"6\" fill=\"#ffffff\" stroke=\"#24292f\"/>\n")
            out.append("<text x=\"0\" y=\"24\">0</text>\n<text x=\"")
            Self.appendNumber(barLength, to: out)
            out.append("\" y=\"24\" text-anchor=\"middle\">\(label)</text>\n</g>\n")
        }

        // Legend, bottom middle.
        out.append("<g id=\"legend\" transform=\"translate(300 712)\" fill=\"#24292f\">\n")
        var x = 0
        if perTrack {
            // An entry per track while they fit (up to the caption's column), then how many more.
            let tracks = Array(Set(lines.lazy.filter { !$0.isRoute }.map(\.track))).sorted()
            let others = (lines.contains { $0.isRoute } ? 90 : 0) + (waypoints.isEmpty ? 0 : 160) + 140
            for (n, k) in tracks.enumerated() {
                let name = trackNames.indices.contains(k) && !trackNames[k].isEmpty ? trackNames[k] : "track \(k + 1)"
                let label = name.count > 24 ? String(name.prefix(23)) + "…" : name
                let width = Int(LabelPlacer.textWidth(label, fontSize: 13)) + 44
                if x + width + others > 660 && n < tracks.count - 1 {
                    out.append("<text x=\"\(x)\" y=\"11\">+\(tracks.count - n) more tracks</text>\n")
                    x += 120
                    break
                }
                out.append(
                    "<line x1=\"\(x)\" y1=\"6\" x2=\"\(x + 28)\" y2=\"6\" stroke=\"\(Self.trackColour(k))\" stroke-width=\"3\"/><text x=\"\(x + 34)\" y=\"11\">"
                )
                XMLEscaping.appendEscaped(label, attribute: false, to: out)
                out.append("</text>\n")
                x += width
            }
        } else if lines.contains(where: { !$0.isRoute }) {
            out.append(
                "<line x1=\"\(x)\" y1=\"6\" x2=\"\(x + 28)\" y2=\"6\" stroke=\"\(trackColour)\" stroke-width=\"\(DisplayUnits.number(min(options.trackWidth, 6)))\"/><text x=\"\(x + 34)\" y=\"11\">"
            )
            XMLEscaping.appendEscaped(options.trackLabel, attribute: false, to: out)
            out.append("</text>\n")
            x += max(90, 40 + 8 * options.trackLabel.count)
        }
        if lines.contains(where: { $0.isRoute }) {
            out.append(
                "<line x1=\"\(x)\" y1=\"6\" x2=\"\(x + 28)\" y2=\"6\" stroke=\"\(Colour.route)\" stroke-width=\"2.5\" stroke-dasharray=\"8 5\"/><text x=\"\(x + 34)\" y=\"11\">route</text>\n"
            )
            x += 90
        }
        if !waypoints.isEmpty {
            out.append(
                "<circle cx=\"\(x + 6)\" cy=\"6\" r=\"4.5\" fill=\"#ffffff\" stroke=\"\(Colour.waypoint)\" stroke-width=\"2.5\"/><text x=\"\(x + 16)\" y=\"11\">\(waypointPath ? "waypoint, in order" : "waypoint")</text>\n"
            )
            x += waypointPath ? 160 : 100
        }
        if start != nil {
            out.append(
                "<circle cx=\"\(x + 6)\" cy=\"6\" r=\"6\" fill=\"\(Colour.start)\"/><text x=\"\(x + 16)\" y=\"11\">start</text>\n"
            )
            x += 70
            out.append(
                "<rect x=\"\(x)\" y=\"0\" width=\"12\" height=\"12\" fill=\"\(Colour.end)\"/><text x=\"\(x + 18)\" y=\"11\">end</text>\n"
            )
        }
        out.append("</g>\n")

        // Caption, bottom right: the projection.
        out.append("<text id=\"caption\" x=\"970\" y=\"742\" text-anchor=\"end\" font-size=\"11\" fill=\"#57606a\">")
        var caption = projection.kind.rawValue + " projection"
        if projection.kind == .localEquirectangular {
            caption += " at \(ValueFormatting.fixed(centreLatitude, decimals: 2))°"
        }
        scaleMetresPerPixel = drawsScaleBar ? metresPerPixel : nil
        if drawsScaleBar { caption += "; scale along \(ValueFormatting.fixed(centreLatitude, decimals: 2))°" }
        XMLEscaping.appendEscaped(caption, attribute: false, to: out)
        out.append("</text>\n</svg>\n")
        try sink.flush()
    }

    /// Draws a whole document.
    public static func write(_ document: GPXDocument, to sink: FileSink, options: Options = Options()) throws {
        let writer = SVGWriter(sink: sink, options: options)
        try document.forEachEvent { try writer.write($0) }
        try writer.finish()
    }

    /// The largest round distance (1, 2 or 5 times a power of ten metres) of at most `limit`
    /// metres, with its label ("500 m", "2 km").
    static func roundDistance(atMost limit: Double) -> (metres: Double, label: String) {
        DisplayUnits.metric.roundDistance(atMost: limit)
    }

    /// The indices of `points` that Douglas–Peucker keeps at `tolerance`, in order; the first and
    /// the last are always kept.
    static func simplify(_ points: [(x: Double, y: Double)], tolerance: Double) -> [Int] {
        let keep = DouglasPeucker.keep(count: points.count, tolerance: tolerance) { i, a, b in
            let origin = points[a]
            return DouglasPeucker.planeDistance(
                (points[i].x - origin.x, points[i].y - origin.y),
                toSegmentEndingAt: (points[b].x - origin.x, points[b].y - origin.y))
        }
        return keep.indices.filter { keep[$0] }
    }

    private static func appendPoint(_ p: (x: Double, y: Double), to out: ByteStore) {
        appendNumber(p.x, to: out)
        out.append(UInt8(ascii: ","))
        appendNumber(p.y, to: out)
    }

    /// A pixel coordinate with one decimal at most.
    static func appendNumber(_ value: Double, to out: ByteStore) {
        ValueFormatting.appendFixed(value, decimals: 1, to: out)
    }
}
