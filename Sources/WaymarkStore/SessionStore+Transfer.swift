import GRDB
import GRDBSQLite
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A stored column's value as it moves between stores: the four kinds of value the store keeps.
public enum TransferValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// A session's row as it moves between stores (`sessions push`, `record --forward`, and the
/// PostGIS store read back): every column of `session`, times in Unix seconds as stored.
public struct TransferSession: Sendable, Hashable {
    /// Its id in the store it was read from.
    public var id: Int64
    public var uuid: String
    public var device: String?
    public var kind: String
    public var source: String
    public var settings: String
    public var scenario: String?
    public var createdAt: Double
    public var epoch: Double
    public var endedAt: Double?
    public var duration: Double?
    public var outcome: String
    public var outcomeDetail: String?
    public var pid: Int64?
    public var host: String?
    public var label: String?

    public init(
        id: Int64, uuid: String, device: String?, kind: String, source: String, settings: String, scenario: String?,
        createdAt: Double, epoch: Double, endedAt: Double?, duration: Double?, outcome: String,
        outcomeDetail: String?, pid: Int64?, host: String?, label: String?
    ) {
        self.id = id
        self.uuid = uuid
        self.device = device
        self.kind = kind
        self.source = source
        self.settings = settings
        self.scenario = scenario
        self.createdAt = createdAt
        self.epoch = epoch
        self.endedAt = endedAt
        self.duration = duration
        self.outcome = outcome
        self.outcomeDetail = outcomeDetail
        self.pid = pid
        self.host = host
        self.label = label
    }
}

/// One `location` row of a session: its sequence number, where its fix came from, and the
/// values of ``StoreSchema/transferLocationColumns`` in that order.
public struct TransferLocation: Sendable, Hashable {
    public var sequence: Int64
    public var originKind: String
    public var originName: String
    public var values: [TransferValue]

    public init(sequence: Int64, originKind: String, originName: String, values: [TransferValue]) {
        self.sequence = sequence
        self.originKind = originKind
        self.originName = originName
        self.values = values
    }
}

/// One `event` row of a session.
public struct TransferEvent: Sendable, Hashable {
    public var sequence: Int64
    public var offset: Double
    public var name: String
    /// The event's fields as a JSON object, as stored.
    public var data: String

    public init(sequence: Int64, offset: Double, name: String, data: String) {
        self.sequence = sequence
        self.offset = offset
        self.name = name
        self.data = data
    }
}

/// The rows of a session after a sequence number, in order: every row up to ``last`` is here.
public struct TransferPage: Sendable {
    public var locations: [TransferLocation] = []
    public var events: [TransferEvent] = []
    /// The highest sequence number the page covers, or nil when it is empty.
    public var last: Int64?
    public var count: Int { locations.count + events.count }
    public init() {}
}

extension StoreSchema {
    /// The columns of `location` that move between stores, in order, with whether each is
    /// REAL (else INTEGER): all but `id` (the session and sequence) and `origin_id` (named
    /// by its kind and name instead).
    public static let transferLocationColumns: [(name: String, isReal: Bool)] = {
        guard let location = checkedTables.first(where: { $0.name == "location" }) else { return [] }
        return location.columns.filter { $0.name != "id" && $0.name != "origin_id" }.map {
            ($0.name, $0.type == "REAL")
        }
    }()

    /// The names of the small integers in `location`, by kind (`fix_mode`, `reason`…): the
    /// `code` table's rows, for another store's copy of it.
    public static var codeTables: [(kind: String, names: [String])] {
        StoreCodes.tables.map { (kind: $0.0, names: $0.1) }
    }
}

extension SessionStore {
    /// The sessions to move, oldest first: the ones named, or every one. A session without a
    /// UUID (one restored from `rejected_session`) is given one first.
    public func transferSessions(_ ids: [Int64]? = nil) throws -> [TransferSession] {
        do {
            if !isReadOnly {
                try queue.write { db in
                    try db.execute(sql: "UPDATE session SET uuid = \(StoreSchema.randomUUID) WHERE uuid IS NULL")
                }
            }
            return try queue.read { db in
                let condition = ids.map { "WHERE id IN (\($0.map(String.init).joined(separator: ", ")))" } ?? ""
                let host = Self.hostName
                return try Row.fetchAll(db, sql: "SELECT * FROM session \(condition) ORDER BY id").compactMap { row in
                    guard let uuid = row["uuid"] as String? else { return nil }
                    var session = TransferSession(
                        id: row["id"], uuid: uuid, device: row["device"], kind: row["kind"], source: row["source"],
                        settings: row["settings"], scenario: row["scenario"], createdAt: row["created_at"],
                        epoch: row["epoch"], endedAt: row["ended_at"], duration: row["duration"],
                        outcome: row["outcome"], outcomeDetail: row["outcome_detail"], pid: row["pid"],
                        host: row["host"], label: row["label"])
                    // As `sessions list` shows it: a running session whose process is gone was
                    // interrupted.
                    if session.outcome == "running", session.host == host, let pid = session.pid,
                        !Self.processExists(Int(pid))
                    {
                        session.outcome = SessionOutcome.interrupted.rawValue
                        session.outcomeDetail = "the process ended without closing the session (killed or crashed)"
                    }
                    return session
                }
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Up to about `limit` rows of session `id` after sequence number `after` (−1: from the
    /// start), from both tables, in order: a page ends where both tables are read, so that every
    /// row up to its ``TransferPage/last`` is in it.
    public func transferPage(session id: Int64, after: Int64, limit: Int = 8192) throws -> TransferPage {
        do {
            return try queue.read { db in
                let locations = try Self.transferLocations(db, session: id, after: after, limit: limit, path: path)
                let eventRows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id & 1099511627775, offset, name, data FROM event
                        WHERE id > ? AND id <= ? ORDER BY id LIMIT ?
                        """, arguments: [StoreSchema.key(id, after), StoreSchema.lastKey(id), limit])
                // Both tables are read up to the smaller of their last numbers on a full page.
                let boundary = min(
                    locations.count == limit ? (locations.last?.sequence ?? .max) : .max,
                    eventRows.count == limit ? (eventRows.last?[0] as Int64? ?? .max) : .max)
                var page = TransferPage()
                page.locations = locations
                if let cut = page.locations.firstIndex(where: { $0.sequence > boundary }) {
                    page.locations.removeSubrange(cut...)
                }
                for row in eventRows {
                    let sequence: Int64 = row[0]
                    guard sequence <= boundary else { break }
                    page.events.append(
                        TransferEvent(
                            sequence: sequence, offset: row[1], name: row[2],
                            data: (row[3] as String?) ?? "{}"))
                }
                page.last = max(page.locations.last?.sequence ?? -1, page.events.last?.sequence ?? -1)
                if page.last == -1 { page.last = nil }
                return page
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Up to `limit` location rows of session `id` after sequence number `after`, in order,
    /// read column by column from SQLite (the hot path of a push: a generic row per location
    /// cost more than the rest of the page's work), with their origins looked up once.
    ///
    /// - Throws: ``StoreError/Kind/corrupt`` for a row whose origin (its trace or device) is not
    ///   in the store: it cannot be sent as it was recorded, and sending it without would give
    ///   the other store a fix from nowhere.
    private static func transferLocations(
        _ db: Database, session id: Int64, after: Int64, limit: Int, path: String
    ) throws -> [TransferLocation] {
        var origins: [Int64: (kind: String, name: String)] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, kind, name FROM origin") {
            origins[row[0]] = (row[1], row[2])
        }
        let columns = StoreSchema.transferLocationColumns.map(\.name).joined(separator: ", ")
        let statement = try db.cachedStatement(
            sql: """
                SELECT id & 1099511627775, origin_id, \(columns) FROM location
                WHERE id > ? AND id <= ? ORDER BY id LIMIT ?
                """)
        try statement.setArguments([StoreSchema.key(id, after), StoreSchema.lastKey(id), limit])
        let raw = statement.sqliteStatement
        let count = Int32(StoreSchema.transferLocationColumns.count)
        var result: [TransferLocation] = []
        result.reserveCapacity(min(limit, 65_536))
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            let originID = sqlite3_column_int64(raw, 1)
            guard let origin = origins[originID] else {
                let sequence = sqlite3_column_int64(raw, 0)
                let named = sqlite3_column_type(raw, 1) == SQLITE_NULL ? "no origin" : "origin \(originID)"
                throw StoreError(
                    .corrupt, path: path,
                    message:
                        "location \(sequence) of session \(id) names \(named), which is not in the store's origin table: "
                        + "the store is damaged, and nothing from this location on is sent; `waymark sessions show \(id)` "
                        + "lists the rows it cannot read")
            }
            var values: [TransferValue] = []
            values.reserveCapacity(Int(count))
            for column in 2..<(2 + count) {
                switch sqlite3_column_type(raw, column) {
                case SQLITE_NULL: values.append(.null)
                case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(raw, column)))
                case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(raw, column)))
                default:
                    let bytes = sqlite3_column_text(raw, column)
                    values.append(.text(bytes.map { String(cString: $0) } ?? ""))
                }
            }
            result.append(
                TransferLocation(
                    sequence: sqlite3_column_int64(raw, 0), originKind: origin.kind, originName: origin.name,
                    values: values))
        }
        return result
    }

    private static func databaseValue(_ value: TransferValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let v): return v.databaseValue
        case .real(let v): return v.databaseValue
        case .text(let s): return s.databaseValue
        }
    }

    /// Adds a session read from another store, keeping its UUID; a session of that UUID
    /// already here is updated (its outcome, end and label) and keeps its id. Returns its id
    /// here.
    @discardableResult
    public func importSession(_ session: TransferSession) throws -> Int64 {
        do {
            return try queue.write { db in
                let values: [DatabaseValueConvertible?] = [
                    session.kind, session.source, session.settings, session.scenario, session.createdAt,
                    session.epoch, session.endedAt, session.duration, session.outcome, session.outcomeDetail,
                    session.pid, session.host, session.label, session.device,
                ]
                if let existing = try Int64.fetchOne(
                    db, sql: "SELECT id FROM session WHERE uuid = ?", arguments: [session.uuid])
                {
                    try db.execute(
                        sql: """
                            UPDATE session SET ended_at = ?, duration = ?, outcome = ?, outcome_detail = ?, label = ?
                            WHERE id = ?
                            """,
                        arguments: [
                            session.endedAt, session.duration, session.outcome, session.outcomeDetail, session.label,
                            existing,
                        ])
                    return existing
                }
                try db.execute(
                    sql: """
                        INSERT INTO session (kind, source, settings, scenario, created_at, epoch, ended_at, duration,
                          outcome, outcome_detail, pid, host, label, device, uuid)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: StatementArguments(values + [session.uuid]))
                return db.lastInsertedRowID
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Adds rows of session `id` read from another store; a row whose sequence number is
    /// already here is left as it is (so adding a page twice adds it once).
    public func importRows(session id: Int64, _ page: TransferPage) throws {
        let columns = StoreSchema.transferLocationColumns.map(\.name)
        let insertLocation =
            "INSERT OR IGNORE INTO location (id, origin_id, \(columns.joined(separator: ", "))) VALUES (?, ?, "
            + columns.map { _ in "?" }.joined(separator: ", ") + ")"
        do {
            try queue.write { db in
                var origins: [String: Int64] = [:]
                for location in page.locations {
                    let key = location.originKind + "\u{0}" + location.originName
                    let origin: Int64
                    if let known = origins[key] {
                        origin = known
                    } else {
                        try db.execute(
                            sql: "INSERT OR IGNORE INTO origin (kind, name) VALUES (?, ?)",
                            arguments: [location.originKind, location.originName])
                        origin =
                            try Int64.fetchOne(
                                db, sql: "SELECT id FROM origin WHERE kind = ? AND name = ?",
                                arguments: [location.originKind, location.originName]) ?? 0
                        origins[key] = origin
                    }
                    var arguments: [DatabaseValue] = [
                        StoreSchema.key(id, location.sequence).databaseValue, origin.databaseValue,
                    ]
                    arguments += location.values.map(Self.databaseValue)
                    try db.execute(sql: insertLocation, arguments: StatementArguments(arguments))
                }
                for event in page.events {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO event (id, offset, name, data) VALUES (?, ?, ?, ?)",
                        arguments: [StoreSchema.key(id, event.sequence), event.offset, event.name, event.data])
                }
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    // MARK: - What has been forwarded

    /// How far session `id` has been forwarded to `target` (a store's address without its
    /// password): the last sequence number the target acknowledged, and whether the session
    /// had ended then (nothing more will come).
    public func forwardMark(session id: Int64, target: String) throws -> (sequence: Int64, complete: Bool)? {
        do {
            return try queue.read { db in
                try Row.fetchOne(
                    db, sql: "SELECT seq, complete FROM forwarded WHERE session_id = ? AND target = ?",
                    arguments: [id, target]
                ).map { ($0["seq"], $0["complete"]) }
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Notes that `target` acknowledged session `id` up to `sequence`, at `at`.
    public func setForwardMark(session id: Int64, target: String, sequence: Int64, complete: Bool, at: Date) throws {
        do {
            try queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO forwarded (session_id, target, seq, complete, at) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (session_id, target) DO UPDATE SET seq = excluded.seq, complete = excluded.complete,
                          at = excluded.at
                        """, arguments: [id, target, sequence, complete, at.timeIntervalSince1970])
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// The number of rows (locations and events) of session `id` after sequence number `after`.
    public func rowCount(session id: Int64, after: Int64 = -1) throws -> Int {
        do {
            return try queue.read { db in
                let arguments: StatementArguments = [StoreSchema.key(id, after), StoreSchema.lastKey(id)]
                let locations = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM location WHERE id > ? AND id <= ?", arguments: arguments)
                let events = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM event WHERE id > ? AND id <= ?", arguments: arguments)
                return (locations ?? 0) + (events ?? 0)
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }
}
