import GRDB
import Waymark

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which sessions a fleet query wants (`sessions list` and `sessions export`): every condition
/// given must hold. The SQLite store and the PostGIS store answer the same filter alike.
public struct SessionFilter: Sendable, Hashable {
    /// Sessions that delivered a location within `radius` metres (on the WGS 84 ellipsoid) of
    /// a point.
    public struct Near: Sendable, Hashable {
        public var latitude: Double
        public var longitude: Double
        public var radius: Double

        public init(latitude: Double, longitude: Double, radius: Double) {
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
        }

        /// Boxes in degrees (`west`, `south`, `east`, `north`, with `west` ≤ `east`) that hold
        /// every point within the radius: one, or two where the circle crosses the antimeridian.
        /// A degree of latitude is at least 110 574 m, and a degree of longitude at least
        /// 111 319 m × cos(latitude) (``Geodesic/distanceBounds(_:_:)``): each box is widened
        /// by 1 % beyond those.
        public var boxes: [Box] {
            let dLat = radius / 110_574 * 1.01
            let south = max(-90, latitude - dLat)
            let north = min(90, latitude + dLat)
            let widest = max(abs(south), abs(north))
            guard widest < 89.9 else { return [Box(west: -180, south: south, east: 180, north: north)] }
            let dLon = radius / (111_319 * cos(widest * .pi / 180)) * 1.01
            guard dLon < 180 else { return [Box(west: -180, south: south, east: 180, north: north)] }
            return Box.split(west: longitude - dLon, south: south, east: longitude + dLon, north: north)
        }

        public func contains(latitude: Double, longitude: Double) -> Bool {
            Geodesic.distance(
                Coordinate(latitude: self.latitude, longitude: self.longitude),
                Coordinate(latitude: latitude, longitude: longitude)) <= radius
        }
    }

    /// A box in degrees: `west`, `south`, `east`, `north`. A `west` greater than `east` crosses
    /// the antimeridian.
    public struct Box: Sendable, Hashable {
        public var west: Double
        public var south: Double
        public var east: Double
        public var north: Double

        public init(west: Double, south: Double, east: Double, north: Double) {
            self.west = west
            self.south = south
            self.east = east
            self.north = north
        }

        /// The box as one or two boxes that do not cross the antimeridian; longitudes beyond
        /// ±180 are wrapped.
        static func split(west: Double, south: Double, east: Double, north: Double) -> [Box] {
            if west < -180 {
                return [
                    Box(west: west + 360, south: south, east: 180, north: north),
                    Box(west: -180, south: south, east: east, north: north),
                ]
            }
            if east > 180 {
                return [
                    Box(west: west, south: south, east: 180, north: north),
                    Box(west: -180, south: south, east: east - 360, north: north),
                ]
            }
            return [Box(west: west, south: south, east: east, north: north)]
        }

        /// This box as boxes that do not cross the antimeridian.
        public var parts: [Box] {
            west <= east
                ? [self]
                : [
                    Box(west: west, south: south, east: 180, north: north),
                    Box(west: -180, south: south, east: east, north: north),
                ]
        }

        public func contains(latitude: Double, longitude: Double) -> Bool {
            guard latitude >= south, latitude <= north else { return false }
            return west <= east
                ? longitude >= west && longitude <= east : longitude >= west || longitude <= east
        }
    }

    public var label: String?
    /// Sessions whose device is exactly this (`sessions list --device`; set by `--device-name`).
    public var device: String?
    /// Sessions that began at or after this (`created_at`, wall-clock time).
    public var since: Date?
    /// Sessions that began before this.
    public var until: Date?
    public var near: Near?
    /// Sessions that delivered a location inside this box.
    public var within: Box?
    /// Only these sessions (by their ids in the store asked), when set.
    public var ids: [Int64]?

    public init(
        label: String? = nil, device: String? = nil, since: Date? = nil, until: Date? = nil, near: Near? = nil,
        within: Box? = nil, ids: [Int64]? = nil
    ) {
        self.label = label
        self.device = device
        self.since = since
        self.until = until
        self.near = near
        self.within = within
        self.ids = ids
    }

    /// Whether the filter needs the sessions' locations, not only their rows.
    public var isSpatial: Bool { near != nil || within != nil }
}

extension SessionStore {
    /// The sessions that match `filter`, newest first. The place conditions are found from
    /// each session's locations: candidates inside the boxes of ``SessionFilter/Near/boxes``
    /// and ``SessionFilter/Box/parts`` (a scan of the session's rows by its key range), then
    /// the exact distance on the ellipsoid.
    public func sessions(matching filter: SessionFilter, badRow: (BadRow) -> Void = { _ in }) throws -> [SessionInfo] {
        var conditions: [String] = []
        var arguments: [DatabaseValueConvertible?] = []
        if let label = filter.label {
            conditions.append("s.label = ?")
            arguments.append(label)
        }
        if let device = filter.device {
            conditions.append("s.device = ?")
            arguments.append(device)
        }
        if let since = filter.since {
            conditions.append("s.created_at >= ?")
            arguments.append(since.timeIntervalSince1970)
        }
        if let until = filter.until {
            conditions.append("s.created_at < ?")
            arguments.append(until.timeIntervalSince1970)
        }
        if let ids = filter.ids {
            conditions.append("s.id IN (\(ids.isEmpty ? "NULL" : ids.map(String.init).joined(separator: ", ")))")
        }
        do {
            var bad: [BadRow] = []
            let candidates = try queue.read { db in
                try SessionInfo.fetch(
                    db, where: conditions.isEmpty ? "1" : conditions.joined(separator: " AND "),
                    arguments: StatementArguments(arguments)
                ) { bad.append($0) }
            }
            for row in bad { badRow(row) }
            guard filter.isSpatial else { return candidates }
            return try candidates.filter { try self.delivered(in: $0.id, filter) }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Whether session `id` delivered a location that meets both place conditions of `filter`.
    private func delivered(in id: Int64, _ filter: SessionFilter) throws -> Bool {
        let boxes = filter.near?.boxes ?? filter.within?.parts ?? []
        let boxSQL = boxes.map { _ in "(latitude BETWEEN ? AND ? AND longitude BETWEEN ? AND ?)" }
            .joined(separator: " OR ")
        var arguments: [DatabaseValueConvertible] = [StoreSchema.key(id), StoreSchema.lastKey(id)]
        for b in boxes { arguments += [b.south, b.north, b.west, b.east] }
        return try queue.read { db in
            let cursor = try Row.fetchCursor(
                db,
                sql: "SELECT latitude, longitude FROM location WHERE id BETWEEN ? AND ? AND (\(boxSQL))",
                arguments: StatementArguments(arguments))
            while let row = try cursor.next() {
                guard let latitude = row[0] as Double?, let longitude = row[1] as Double? else { continue }
                if let near = filter.near, !near.contains(latitude: latitude, longitude: longitude) { continue }
                if let within = filter.within, !within.contains(latitude: latitude, longitude: longitude) { continue }
                return true
            }
            return false
        }
    }
}
