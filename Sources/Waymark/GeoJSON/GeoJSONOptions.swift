#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What GIS tools and web maps need of GeoJSON beyond ``GeoJSONWriter``'s default: a point per
/// fix, one geometry type per file, no per-point arrays, fewer decimals, no elevations, fewer
/// points, a summary of each line for its popup, and colours.
///
/// The default value writes exactly what ``GeoJSONWriter`` writes on its own.
public struct GeoJSONOptions: Sendable, Hashable {
    /// The kinds of features ``only`` can keep.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case tracks, routes, waypoints
    }

    /// One Point feature per fix (``GeoJSONPointWriter``) instead of a line per track or route.
    public var points: Bool
    /// Only the features of this kind: one geometry type in the file, as a shapefile or a
    /// GeoPackage layer needs. Lines are then all MultiLineString (a track of one segment too), so
    /// that LineString and MultiLineString do not mix; with ``points``, all are Point.
    public var only: Kind?
    /// Whether lines carry `properties.coordinateProperties`, the per-point arrays.
    public var coordinateProperties: Bool

    /// Decimals of longitudes and latitudes (0 to 7), and whether positions carry elevations.
    public var positions: GeoJSONPositionFormat
    /// Metres: lines are simplified (Douglas–Peucker) so that no point left out lies farther
    /// than this from the line kept; nil keeps every point.
    public var simplify: Double?
    /// Whether each track and route gets summary properties (``GeoJSONLineSummary``).
    public var summary: Bool
    /// Whether features get simplestyle properties (``GeoJSONStyle``): a colour per track or
    /// route, and one for waypoints.
    public var style: Bool
    /// Whether the output is a GeoJSON text sequence (RFC 8142) instead of one FeatureCollection.
    public var sequence: Bool

    public init(
        points: Bool = false, only: Kind? = nil, coordinateProperties: Bool = true,
        positions: GeoJSONPositionFormat = GeoJSONPositionFormat(), simplify: Double? = nil, summary: Bool = false,
        style: Bool = false, sequence: Bool = false
    ) {
        self.points = points
        self.only = only
        self.coordinateProperties = coordinateProperties
        self.positions = positions
        self.simplify = simplify
        self.summary = summary
        self.style = style
        self.sequence = sequence
    }

    /// Whether these are the defaults, for which ``GeoJSONWriter`` alone writes the output.
    public var isDefault: Bool { self == GeoJSONOptions() }
}

/// Writes GeoJSON with ``GeoJSONOptions``: events of the kinds ``GeoJSONOptions/only`` leaves
/// out are skipped, and the rest go to a ``GeoJSONPointWriter`` or to a ``GeoJSONWriter`` set up
/// for the options.
///
/// It sits beside the writers rather than inside them: their per-point paths are unchanged, and
/// so are their bytes when the options are the defaults.
public final class GeoJSONOptionsWriter {
    private let options: GeoJSONOptions
    private let lines: GeoJSONWriter?
    private let points: GeoJSONPointWriter?
    /// Whether the events being read belong to a route, a track or neither.
    private var inside: GeoJSONOptions.Kind?
    /// The points of the line being simplified, not yet written.
    private var simplifier: LineSimplifier<GPXEvent>?
    private var deliveredSimplifier: LineSimplifier<StoredLocation>?
    private var deliveredSegment: Int?
    /// The summary of the track or route being written.
    private var statistics = TraceStatistics()
    /// Lines written, for their colours.
    private var lineCount = 0

    public init(sink: FileSink, options: GeoJSONOptions) {
        self.options = options
        if options.points {
            let writer = GeoJSONPointWriter(sink: sink)
            writer.positions = options.positions
            writer.isSequence = options.sequence
            points = writer
            lines = nil
        } else {
            let writer = GeoJSONWriter(sink: sink)
            writer.writesCoordinateProperties = options.coordinateProperties
            writer.writesMultiLineStrings = options.only == .tracks || options.only == .routes
            writer.positions = options.positions
            writer.isSequence = options.sequence
            lines = writer
            points = nil
        }
        if let tolerance = options.simplify {
            simplifier = LineSimplifier(tolerance: tolerance) { event in
                switch event {
                case .trackPoint(let p), .routePoint(let p): p.coordinate
                default: preconditionFailure("only points are simplified")
                }
            }
            deliveredSimplifier = LineSimplifier(tolerance: tolerance) { $0.location.coordinate }
        }
    }

    /// Writes one event, unless ``GeoJSONOptions/only`` leaves its kind out.
    public func write(_ event: GPXEvent) throws {
        if options.summary {
            switch event {
            case .trackStart, .routeStart: statistics = TraceStatistics()
            default: break
            }
            statistics.add(event)
        }
        switch event {
        case .trackPoint, .routePoint:
            if let simplifier {
                try simplifier.add(event) { try forward($0) }
                return
            }
        case .segmentStart, .segmentEnd, .routeEnd, .trackEnd:
            try simplifier?.finishLine { try forward($0) }
        default:
            break
        }
        try forward(event)
    }

    private func forward(_ event: GPXEvent) throws {
        let kind: GeoJSONOptions.Kind?
        switch event {
        case .waypoint: kind = .waypoints
        case .routeStart:
            inside = .routes
            kind = .routes
        case .trackStart:
            inside = .tracks
            kind = .tracks
        case .routeEnd, .trackEnd:
            kind = inside
            inside = nil
        case .routePoint, .trackPoint, .segmentStart, .segmentEnd: kind = inside
        case .header, .metadata, .documentExtensions, .warning: kind = nil
        }
        if let only = options.only, let kind, kind != only { return }
        if let lines {
            switch event {
            case .routeEnd, .trackEnd:
                lineProperties()
            case .waypoint:
                if options.style { lines.extraProperties = GeoJSONStyle.waypoint }
            default:
                break
            }
            try lines.write(event)
        } else {
            try points?.write(event)
        }
    }

    /// The summary and style of the line about to be written.
    private func lineProperties() {
        guard let lines else { return }
        if options.summary { lines.extraProperties += GeoJSONLineSummary.properties(of: statistics) }
        if options.style { lines.extraProperties += GeoJSONStyle.line(lineCount) }
        lineCount += 1
    }

    /// Writes the locations a simulated app received as ``GeoJSONWriter/writeDelivered(_:name:)``
    /// does, or a Point per location with ``GeoJSONOptions/points``. They count as a track for
    /// ``GeoJSONOptions/only``.
    public func writeDelivered(_ locations: some Sequence<StoredLocation>, name: String) throws {
        beginDelivered()
        for stored in locations { try addDelivered(stored) }
        try endDelivered(name: name)
    }

    /// Begins the delivered locations (see ``GeoJSONWriter/beginDelivered()``).
    public func beginDelivered() {
        guard keepsDelivered else { return }
        statistics = TraceStatistics()
        deliveredSegment = nil
        if let points { points.beginDelivered() } else { lines?.beginDelivered() }
    }

    /// Adds one delivered location.
    public func addDelivered(_ stored: StoredLocation) throws {
        guard keepsDelivered else { return }
        if stored.segment != deliveredSegment {
            try deliveredSimplifier?.finishLine { try forwardDelivered($0) }
            if options.summary {
                if deliveredSegment != nil { statistics.add(.segmentEnd(GPXExtensions())) }
                statistics.add(.segmentStart)
            }
            deliveredSegment = stored.segment
        }
        if options.summary { statistics.add(.trackPoint(GeoJSONWriter.point(of: stored.location))) }
        if let deliveredSimplifier {
            try deliveredSimplifier.add(stored) { try forwardDelivered($0) }
        } else {
            try forwardDelivered(stored)
        }
    }

    private func forwardDelivered(_ stored: StoredLocation) throws {
        if let points { try points.addDelivered(stored) } else { try lines?.addDelivered(stored) }
    }

    /// Ends the delivered locations, named `name`.
    public func endDelivered(name: String) throws {
        guard keepsDelivered else { return }
        try deliveredSimplifier?.finishLine { try forwardDelivered($0) }
        if options.summary, deliveredSegment != nil { statistics.add(.segmentEnd(GPXExtensions())) }
        if let points {
            try points.endDelivered(name: name)
        } else {
            lineProperties()
            statistics = TraceStatistics()
            try lines?.endDelivered(name: name)
        }
    }

    private var keepsDelivered: Bool { options.only == nil || options.only == .tracks }

    /// Closes the collection and flushes.
    public func finish() throws {
        if let points { try points.finish() } else { try lines?.finish() }
    }
}
