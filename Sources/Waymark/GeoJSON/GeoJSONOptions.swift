/// What GIS tools need of GeoJSON beyond ``GeoJSONWriter``'s default: a point per fix, one
/// geometry type per file, no per-point arrays.
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

    public init(points: Bool = false, only: Kind? = nil, coordinateProperties: Bool = true) {
        self.points = points
        self.only = only
        self.coordinateProperties = coordinateProperties
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

    public init(sink: FileSink, options: GeoJSONOptions) {
        self.options = options
        if options.points {
            points = GeoJSONPointWriter(sink: sink)
            lines = nil
        } else {
            let writer = GeoJSONWriter(sink: sink)
            writer.writesCoordinateProperties = options.coordinateProperties
            writer.writesMultiLineStrings = options.only == .tracks || options.only == .routes
            lines = writer
            points = nil
        }
    }

    /// Writes one event, unless ``GeoJSONOptions/only`` leaves its kind out.
    public func write(_ event: GPXEvent) throws {
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
        if let points { try points.write(event) } else { try lines?.write(event) }
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
        if let points { points.beginDelivered() } else { lines?.beginDelivered() }
    }

    /// Adds one delivered location.
    public func addDelivered(_ stored: StoredLocation) throws {
        guard keepsDelivered else { return }
        if let points { try points.addDelivered(stored) } else { try lines?.addDelivered(stored) }
    }

    /// Ends the delivered locations, named `name`.
    public func endDelivered(name: String) throws {
        guard keepsDelivered else { return }
        if let points { try points.endDelivered(name: name) } else { try lines?.endDelivered(name: name) }
    }

    private var keepsDelivered: Bool { options.only == nil || options.only == .tracks }

    /// Closes the collection and flushes.
    public func finish() throws {
        if let points { try points.finish() } else { try lines?.finish() }
    }
}
