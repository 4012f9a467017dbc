import PostgresNIO
import Waymark
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostGISStore {
    /// The sessions that match `filter`, newest first, counted as the SQLite store counts them.
    /// Place conditions use the GiST index on `geom` for the boxes of
    /// ``SessionFilter/Near/boxes`` and ``SessionFilter/Box/parts``, then PostGIS's distance on
    /// the WGS 84 spheroid (`ST_DWithin` on geography) and the box itself on the stored
    /// latitude and longitude: the same rule as the SQLite store's.
    public func sessions(matching filter: SessionFilter) async throws -> [SessionInfo] {
        var sql = """
            SELECT s.id, s.kind, s.source, s.settings, s.scenario, s.created_at, s.epoch, s.ended_at, s.duration,
              s.outcome, s.outcome_detail, s.label, s.device, s.uuid::text,
              (SELECT count(*) FROM waymark.location l WHERE l.session_id = s.id) AS locations,
              (SELECT count(*) FROM waymark.event e WHERE e.session_id = s.id) AS other_events,
              (SELECT count(*) FROM waymark.event e WHERE e.session_id = s.id AND e.name = 'fix') AS other_fixes,
              (SELECT count(*) FROM waymark.location l JOIN waymark.code c ON c.kind = 'reason' AND c.code = l.reason
                 WHERE l.session_id = s.id AND c.name IN ('\(FixReason.resumed.rawValue)', '\(FixReason.alwaysGranted.rawValue)'))
                AS resumed,
              greatest(
                coalesce((SELECT e."offset" FROM waymark.event e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1), 0),
                coalesce((SELECT l."offset" FROM waymark.location l WHERE l.session_id = s.id ORDER BY l.seq DESC LIMIT 1), 0))
                AS last_offset
            FROM waymark.session s
            """
        var conditions: [String] = []
        var binds = PostgresBindings()
        func bind(_ value: some PostgresNonThrowingEncodable & Sendable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let label = filter.label { conditions.append("s.label = \(bind(label))") }
        if let device = filter.device { conditions.append("s.device = \(bind(device))") }
        if let since = filter.since { conditions.append("s.created_at >= \(bind(since.timeIntervalSince1970))") }
        if let until = filter.until { conditions.append("s.created_at < \(bind(until.timeIntervalSince1970))") }
        if let ids = filter.ids {
            conditions.append("s.id IN (\(ids.isEmpty ? "NULL" : ids.map(String.init).joined(separator: ", ")))")
        }
        if filter.isSpatial {
            var place: [String] = []
            let boxes = filter.near?.boxes ?? filter.within?.parts ?? []
            let envelopes = boxes.map { b in
                "l.geom && ST_MakeEnvelope(\(bind(b.west)), \(bind(b.south)), \(bind(b.east)), \(bind(b.north)), 4326)"
            }
            place.append("(" + envelopes.joined(separator: " OR ") + ")")
            if let near = filter.near {
                place.append(
                    "ST_DWithin(l.geom::geography, ST_SetSRID(ST_MakePoint(\(bind(near.longitude)), "
                        + "\(bind(near.latitude))), 4326)::geography, \(bind(near.radius)), true)")
            }
            if let within = filter.within {
                let parts = within.parts.map { b in
                    "(l.latitude BETWEEN \(bind(b.south)) AND \(bind(b.north)) AND l.longitude BETWEEN "
                        + "\(bind(b.west)) AND \(bind(b.east)))"
                }
                place.append("(" + parts.joined(separator: " OR ") + ")")
            }
            conditions.append(
                "EXISTS (SELECT 1 FROM waymark.location l WHERE l.session_id = s.id AND "
                    + place.joined(separator: " AND ") + ")")
        }
        if !conditions.isEmpty { sql += "\nWHERE " + conditions.joined(separator: " AND ") }
        sql += "\nORDER BY s.id DESC"
        do {
            var sessions: [SessionInfo] = []
            for row in try await run(PostgresQuery(unsafeSQL: sql, binds: binds)) {
                let r = row.makeRandomAccess()
                func cell<T: PostgresDecodable>(_ name: String, _: T.Type) throws -> T { try r[name].decode(T.self) }
                let locations = Int(try cell("locations", Int64.self))
                let otherEvents = Int(try cell("other_events", Int64.self))
                let otherFixes = Int(try cell("other_fixes", Int64.self))
                let resumed = Int(try cell("resumed", Int64.self))
                let duration = try cell("duration", Double?.self)
                let lastOffset = try cell("last_offset", Double.self)
                sessions.append(
                    SessionInfo(
                        id: try cell("id", Int64.self), kind: try cell("kind", String.self),
                        source: try cell("source", String.self), settings: try cell("settings", String.self),
                        scenario: try cell("scenario", String?.self),
                        createdAt: Date(timeIntervalSince1970: try cell("created_at", Double.self)),
                        epoch: Date(timeIntervalSince1970: try cell("epoch", Double.self)),
                        endedAt: try cell("ended_at", Double?.self).map(Date.init(timeIntervalSince1970:)),
                        duration: duration ?? lastOffset,
                        outcome: SessionOutcome(rawValue: try cell("outcome", String.self)) ?? .failed,
                        outcomeDetail: try cell("outcome_detail", String?.self), label: try cell("label", String?.self),
                        device: try cell("device", String?.self), uuid: try cell("uuid", String.self),
                        locationCount: locations, eventCount: locations + otherEvents,
                        fixCount: otherFixes + locations - resumed))
            }
            return sessions
        } catch {
            throw PostGISError(error, address: address)
        }
    }

    /// Session `id`'s row, or an error that says there is none.
    public func transferSession(_ id: Int64) async throws -> TransferSession {
        do {
            for row in try await run(
                """
                SELECT id, uuid::text, device, kind, source, settings, scenario, created_at, epoch, ended_at, duration,
                  outcome, outcome_detail, pid, host, label
                FROM waymark.session WHERE id = \(id)
                """)
            {
                let r = row.makeRandomAccess()
                return TransferSession(
                    id: try r[0].decode(Int64.self), uuid: try r[1].decode(String.self),
                    device: try r[2].decode(String?.self), kind: try r[3].decode(String.self),
                    source: try r[4].decode(String.self), settings: try r[5].decode(String.self),
                    scenario: try r[6].decode(String?.self), createdAt: try r[7].decode(Double.self),
                    epoch: try r[8].decode(Double.self), endedAt: try r[9].decode(Double?.self),
                    duration: try r[10].decode(Double?.self), outcome: try r[11].decode(String.self),
                    outcomeDetail: try r[12].decode(String?.self), pid: try r[13].decode(Int64?.self),
                    host: try r[14].decode(String?.self), label: try r[15].decode(String?.self))
            }
        } catch {
            throw PostGISError(error, address: address)
        }
        throw PostGISError(
            address: address.description, message: "has no session \(id); `waymark sessions list --store …` shows them")
    }

    /// Up to about `limit` rows of session `id` after sequence number `after`, from both tables,
    /// complete up to the page's ``TransferPage/last`` (as the SQLite store's page).
    public func transferPage(session id: Int64, after: Int64, limit: Int = 8192) async throws -> TransferPage {
        let names = PostGISSchema.locationColumns.map { "l.\($0.name)" }.joined(separator: ", ")
        do {
            var locations: [TransferLocation] = []
            let locationRows = try await run(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT l.seq, o.kind, o.name, \(names) FROM waymark.location l
                        JOIN waymark.origin o ON o.id = l.origin_id
                        WHERE l.session_id = $1 AND l.seq > $2 ORDER BY l.seq LIMIT $3
                        """, binds: Self.pageBinds(id, after, limit)))
            for row in locationRows {
                var cells = row.makeIterator()
                guard let seqCell = cells.next(), let kindCell = cells.next(), let nameCell = cells.next() else {
                    continue
                }
                var values: [TransferValue] = []
                values.reserveCapacity(PostGISSchema.locationColumns.count)
                while let cell = cells.next() { values.append(try Self.value(cell)) }
                locations.append(
                    TransferLocation(
                        sequence: try seqCell.decode(Int64.self), originKind: try kindCell.decode(String.self),
                        originName: try nameCell.decode(String.self), values: values))
            }
            var events: [TransferEvent] = []
            for row in try await run(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT seq, "offset", name, data FROM waymark.event WHERE session_id = $1 AND seq > $2
                        ORDER BY seq LIMIT $3
                        """, binds: Self.pageBinds(id, after, limit)))
            {
                let (seq, offset, name, data) = try row.decode((Int64, Double, String, String).self)
                events.append(TransferEvent(sequence: seq, offset: offset, name: name, data: data))
            }
            let boundary = min(
                locations.count == limit ? (locations.last?.sequence ?? .max) : .max,
                events.count == limit ? (events.last?.sequence ?? .max) : .max)
            var page = TransferPage()
            page.locations = locations.filter { $0.sequence <= boundary }
            page.events = events.filter { $0.sequence <= boundary }
            let last = max(page.locations.last?.sequence ?? -1, page.events.last?.sequence ?? -1)
            page.last = last >= 0 ? last : nil
            return page
        } catch {
            throw PostGISError(error, address: address)
        }
    }

    private static func pageBinds(_ id: Int64, _ after: Int64, _ limit: Int) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(after)
        binds.append(Int64(limit))
        return binds
    }

    private static func value(_ cell: PostgresCell) throws -> TransferValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .float8, .float4: return .real(try cell.decode(Double.self))
        case .int8, .int4, .int2: return .integer(try cell.decode(Int64.self))
        default: return .text(try cell.decode(String.self))
        }
    }

    /// Copies session `id` from this server into `store` (a local SQLite store), keeping its
    /// UUID: what `sessions show` and `sessions export` read. Returns its id there.
    public func copySession(_ id: Int64, into store: SessionStore) async throws -> Int64 {
        let session = try await transferSession(id)
        let local = try store.importSession(session)
        var after: Int64 = -1
        while true {
            let page = try await transferPage(session: id, after: after, limit: 8192)
            guard let last = page.last else { break }
            try store.importRows(session: local, page)
            after = last
        }
        return local
    }

    /// Deletes the sessions that began before `cutoff` with their rows, as the SQLite store's
    /// `deleteSessions(createdBefore:dryRun:)`: a session still `running` is kept. Returns them
    /// as they were; with `dryRun`, deletes nothing.
    public func deleteSessions(createdBefore cutoff: Date, dryRun: Bool) async throws -> [SessionInfo] {
        let old = try await sessions(matching: SessionFilter(until: cutoff)).filter { $0.outcome != .running }
        if !dryRun {
            for session in old { try await deleteSession(session.id) }
        }
        return old
    }

    /// Deletes the session named `uuid` with its rows, if this server has it (a recording
    /// whose local session was discarded: it never delivered a fix).
    public func deleteSession(uuid: String) async throws {
        do {
            for row in try await run("SELECT id FROM waymark.session WHERE uuid = \(uuid)::uuid") {
                try await deleteSession(try row.decode(Int64.self))
            }
        } catch let error as PostGISError {
            throw error
        } catch {
            throw PostGISError(error, address: address)
        }
    }

    /// Deletes session `id` with its locations and events; false when there is none.
    @discardableResult
    public func deleteSession(_ id: Int64) async throws -> Bool {
        do {
            return try await transaction {
                try await run("DELETE FROM waymark.location WHERE session_id = \(id)")
                try await run("DELETE FROM waymark.event WHERE session_id = \(id)")
                var deleted = false
                for _ in try await run("DELETE FROM waymark.session WHERE id = \(id) RETURNING id") {
                    deleted = true
                }
                return deleted
            }
        } catch {
            throw PostGISError(error, address: address)
        }
    }
}
