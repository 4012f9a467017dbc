import GRDB
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What bringing an older store up to schema v4 set aside: the rows of `session`, `location` and
/// `event` that do not pass v4's checks, kept in `rejected_session`, `rejected_location` and
/// `rejected_event` (``StoreSchema``). A session set aside is out of reach (`sessions list` shows
/// only `session`), and so are its locations and events, though they are still in the store.
public struct SetAsideRows: Sendable, Hashable {
    /// A session whose row was set aside.
    public struct Session: Sendable, Hashable {
        public var id: Int64
        /// Its source, when that is text.
        public var source: String?
        /// Its columns that fail the checks, each with what it holds: `created_at is 'yesterday'`.
        public var problems: [String]
        /// Its rows that passed the checks, in `location` and `event`: out of reach with it.
        public var locations: Int
        public var events: Int
    }

    /// The sessions set aside, by id.
    public var sessions: [Session] = []
    /// Rows set aside in `rejected_location` and `rejected_event`, by session (whether or not
    /// the session itself was set aside).
    public var rejectedLocations: [Int64: Int] = [:]
    public var rejectedEvents: [Int64: Int] = [:]

    public init() {}

    public var isEmpty: Bool { sessions.isEmpty && rejectedLocations.isEmpty && rejectedEvents.isEmpty }

    /// Every session with something set aside: its row, or rows of its locations or events.
    public var sessionIDs: [Int64] {
        Set(sessions.map(\.id)).union(rejectedLocations.keys).union(rejectedEvents.keys).sorted()
    }
}

/// What ``SessionStore/restoreSetAside(_:)`` brought back of one session.
public struct RestoredSession: Sendable, Hashable {
    public var id: Int64
    /// Whether its own row was brought back from `rejected_session` (else it was in `session`).
    public var rowRestored: Bool
    /// What had to change for its row to pass the checks: `created_at was 'yesterday', now
    /// 2024-05-01T08:00:00.000Z (its epoch)`.
    public var changes: [String]
    /// Rows brought back from `rejected_location` and `rejected_event` (their values that fail
    /// a check and may be empty left empty).
    public var restoredLocations: Int
    public var restoredEvents: Int
    /// Rows that stay set aside, because a value that must be there fails its check, and the
    /// first one's problem.
    public var remainingLocations: Int
    public var remainingEvents: Int
    public var firstRemainingProblem: String?
    /// The session's locations and events in reach now.
    public var locations: Int
    public var events: Int
}

extension SessionStore {
    /// What is set aside in the store (``SetAsideRows``): nothing in a store that was made at
    /// v4 or later, or whose upgrade refused no row.
    public func setAside() throws -> SetAsideRows {
        do {
            return try queue.read { db in try Self.setAside(db) }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    static func setAside(_ db: Database) throws -> SetAsideRows {
        var rows = SetAsideRows()
        let tables = Set(
            try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rejected\\_%' ESCAPE '\\'")
        )
        if tables.contains("rejected_session") {
            let columns = try Self.columns(of: "rejected_session", db)
            for id in try Int64.fetchAll(
                db, sql: "SELECT id FROM rejected_session WHERE typeof(id) = 'integer' ORDER BY id")
            {
                let source = try String.fetchOne(
                    db, sql: "SELECT source FROM rejected_session WHERE id = ? AND typeof(source) = 'text'",
                    arguments: [id])
                var problems: [String] = []
                for column in StoreSchema.checkedTables[0].columns where !column.isKey {
                    guard columns.contains(column.name) else { continue }
                    if let what = try Self.failure(of: column, in: "rejected_session", id: id, db) {
                        problems.append(what)
                    }
                }
                let range: StatementArguments = [StoreSchema.key(id), StoreSchema.lastKey(id)]
                rows.sessions.append(
                    SetAsideRows.Session(
                        id: id, source: source, problems: problems,
                        locations: try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM location WHERE id BETWEEN ? AND ?", arguments: range) ?? 0,
                        events: try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM event WHERE id BETWEEN ? AND ?", arguments: range) ?? 0))
            }
        }
        for (table, keyPath) in [
            ("location", \SetAsideRows.rejectedLocations), ("event", \SetAsideRows.rejectedEvents),
        ]
        where tables.contains("rejected_\(table)") {
            for row in try Row.fetchAll(
                db,
                sql:
                    "SELECT id >> 40 AS session, count(*) AS n FROM rejected_\(table) WHERE typeof(id) = 'integer' GROUP BY 1"
            ) {
                rows[keyPath: keyPath][row["session"]] = row["n"]
            }
        }
        return rows
    }

    /// Brings back what can be brought back of the sessions `ids` (nil: of every session with
    /// something set aside), in one transaction: a session's row from `rejected_session`, each
    /// column that fails its check mended (one that may be empty left empty; a time from its
    /// text, the session's epoch or its first location; `kind` from its source; `outcome`
    /// `interrupted`), with what changed noted in `outcome_detail`; then its rows from
    /// `rejected_location` and `rejected_event` whose required values pass, their optional ones
    /// that fail left empty. A `rejected_` table left empty is dropped.
    ///
    /// - Throws: ``StoreError`` (`sessionNotFound`) for an id with nothing set aside.
    public func restoreSetAside(_ ids: [Int64]?) throws -> [RestoredSession] {
        do {
            return try queue.write { db in
                let aside = try Self.setAside(db)
                let wanted = ids ?? aside.sessionIDs
                for id in wanted where !aside.sessionIDs.contains(id) {
                    throw StoreError(
                        .sessionNotFound, path: path,
                        message: "has nothing of session \(id) set aside; `waymark sessions list` names what is")
                }
                var restored: [RestoredSession] = []
                for id in wanted {
                    var result = RestoredSession(
                        id: id, rowRestored: false, changes: [], restoredLocations: 0, restoredEvents: 0,
                        remainingLocations: 0, remainingEvents: 0, firstRemainingProblem: nil, locations: 0, events: 0)
                    if aside.sessions.contains(where: { $0.id == id }) {
                        result.changes = try Self.restoreSessionRow(id, db, path: path)
                        result.rowRestored = true
                    }
                    let range: StatementArguments = [StoreSchema.key(id), StoreSchema.lastKey(id)]
                    (result.restoredLocations, result.remainingLocations) = try Self.restoreRows(
                        of: id, table: "location", problem: &result.firstRemainingProblem, db)
                    (result.restoredEvents, result.remainingEvents) = try Self.restoreRows(
                        of: id, table: "event", problem: &result.firstRemainingProblem, db)
                    result.locations =
                        try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM location WHERE id BETWEEN ? AND ?", arguments: range)
                        ?? 0
                    result.events =
                        try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM event WHERE id BETWEEN ? AND ?", arguments: range) ?? 0
                    restored.append(result)
                }
                for table in ["rejected_session", "rejected_location", "rejected_event"] {
                    let exists =
                        try Bool.fetchOne(
                            db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            arguments: [table]) ?? false
                    if exists, try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") == 0 {
                        try db.execute(sql: "DROP TABLE \(table)")
                    }
                }
                return restored
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    // MARK: - Mending

    /// The column names of `table`.
    private static func columns(of table: String, _ db: Database) throws -> Set<String> {
        Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String })
    }

    /// `name is VALUE` when row `id` of `table` fails `column`'s check; nil when it passes.
    private static func failure(
        of column: StoreSchema.CheckedColumn, in table: String, id: Int64, _ db: Database
    ) throws -> String? {
        let failing =
            try Bool.fetchOne(
                db, sql: "SELECT NOT (\(column.condition)) FROM \(table) WHERE id = ?", arguments: [id]) ?? false
        guard failing else { return nil }
        return "\(column.name) is \(try quoted(column.name, in: table, id: id, db))"
    }

    /// The value of `column` in row `id` of `table` as SQL writes it (`'yesterday'`, `NULL`,
    /// `X'FFFE'`), cut to 40 characters.
    private static func quoted(_ column: String, in table: String, id: Int64, _ db: Database) throws -> String {
        let text =
            try String.fetchOne(db, sql: "SELECT quote(\(column)) FROM \(table) WHERE id = ?", arguments: [id])
            ?? "NULL"
        return text.count > 40 ? String(text.prefix(39)) + "…" : text
    }

    /// Moves session `id`'s row from `rejected_session` back into `session`, mending each column
    /// that fails its check; returns what changed.
    private static func restoreSessionRow(_ id: Int64, _ db: Database, path: String) throws -> [String] {
        if try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM session WHERE id = ?", arguments: [id]) == true {
            throw StoreError(
                .io, path: path,
                message: "cannot bring back session \(id) from rejected_session: another session has its number "
                    + "now; its row stays set aside (sqlite3 can copy it under another number)")
        }
        let present = try columns(of: "rejected_session", db)
        let range: StatementArguments = [StoreSchema.key(id), StoreSchema.lastKey(id)]
        var names: [String] = []
        var values: [DatabaseValue] = []
        var changes: [String] = []
        // The value of a column that passes, as it is.
        func kept(_ column: StoreSchema.CheckedColumn) throws -> DatabaseValue? {
            guard present.contains(column.name), try failure(of: column, in: "rejected_session", id: id, db) == nil
            else { return nil }
            return try DatabaseValue.fetchOne(
                db, sql: "SELECT \(column.name) FROM rejected_session WHERE id = ?", arguments: [id])
        }
        // A time the column's text gives (`2024-05-01 08:00:00`), when it is one.
        func timeFromText(_ name: String) throws -> Double? {
            guard present.contains(name) else { return nil }
            let r = ValueFormatting.readableSeconds
            return try Double.fetchOne(
                db,
                sql: """
                    SELECT (julianday(\(name)) - 2440587.5) * 86400.0 FROM rejected_session
                    WHERE id = ? AND typeof(\(name)) = 'text' AND julianday(\(name)) IS NOT NULL
                      AND (julianday(\(name)) - 2440587.5) * 86400.0 BETWEEN ? AND ?
                    """, arguments: [id, r.lowerBound, r.upperBound])
        }
        let columns = StoreSchema.checkedTables[0].columns
        let column = { (name: String) in columns.first { $0.name == name }! }
        let firstLocation = try Row.fetchOne(
            db, sql: "SELECT time, offset FROM location WHERE id BETWEEN ? AND ? ORDER BY id LIMIT 1", arguments: range)
        let epochKept = try kept(column("epoch")).flatMap { Double.fromDatabaseValue($0) }
        let createdKept = try kept(column("created_at")).flatMap { Double.fromDatabaseValue($0) }
        for c in columns {
            names.append(c.name)
            if c.isKey {
                values.append(id.databaseValue)
                continue
            }
            if let value = try kept(c) {
                values.append(value)
                continue
            }
            let was = present.contains(c.name) ? try quoted(c.name, in: "rejected_session", id: id, db) : "missing"
            let mended: DatabaseValue
            let why: String
            switch c.name {
            case "kind":
                let source = try String.fetchOne(
                    db, sql: "SELECT source FROM rejected_session WHERE id = ? AND typeof(source) = 'text'",
                    arguments: [id])
                mended = (source?.hasPrefix("gpsd") == true ? "record" : "replay").databaseValue
                why = "from its source"
            case "source":
                mended = "(unknown source)".databaseValue
                why = "unknown"
            case "settings":
                mended = "{}".databaseValue
                why = "none"
            case "created_at", "epoch":
                let other = c.name == "epoch" ? createdKept : epochKept
                let fromLocation = firstLocation.flatMap { row -> Double? in
                    guard let time = row["time"] as Double?, let offset = row["offset"] as Double? else { return nil }
                    return c.name == "epoch" ? time - offset : time
                }
                // The epoch is best told by a location (its time less its offset); the start by
                // the epoch, which is the wall clock's for a recording and near it for a replay.
                let located = fromLocation.flatMap { ValueFormatting.readableSeconds.contains($0) ? $0 : nil }
                if let t = try timeFromText(c.name) {
                    (mended, why) = (t.databaseValue, "read from its text")
                } else if c.name == "epoch", let t = located {
                    (mended, why) = (t.databaseValue, "from its first location")
                } else if let other {
                    (mended, why) = (other.databaseValue, c.name == "epoch" ? "its start" : "its epoch")
                } else if let t = located {
                    (mended, why) = (t.databaseValue, "from its first location")
                } else {
                    (mended, why) = (0.0.databaseValue, "unknown: 1970-01-01")
                }
            case "outcome":
                mended = "interrupted".databaseValue
                why = "its end is unknown"
            default:
                // A column that may be empty.
                mended = .null
                why = "left empty"
            }
            values.append(mended)
            var now = String.fromDatabaseValue(mended) ?? "\(mended)"
            if c.name == "created_at" || c.name == "epoch", let t = Double.fromDatabaseValue(mended) {
                now = ValueFormatting.iso8601(Date(timeIntervalSince1970: t))
            }
            changes.append(
                mended.isNull ? "\(c.name) was \(was), now empty" : "\(c.name) was \(was), now \(now) (\(why))")
        }
        // What changed is noted with the session, where `sessions show` shows it.
        if !changes.isEmpty, let i = names.firstIndex(of: "outcome_detail") {
            let note = "restored from rejected_session: " + changes.joined(separator: "; ")
            let before = String.fromDatabaseValue(values[i])
            values[i] = (before.map { $0 + "; " + note } ?? note).databaseValue
        }
        try db.execute(
            sql:
                "INSERT INTO session (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
            arguments: StatementArguments(values))
        try db.execute(sql: "DELETE FROM rejected_session WHERE id = ?", arguments: [id])
        return changes
    }

    /// Moves session `id`'s rows of `rejected_<table>` back into `table` where every value that
    /// must be there passes its check (values that may be empty and fail are left empty);
    /// returns how many came back and how many stay, and names the first that stays.
    private static func restoreRows(
        of id: Int64, table: String, problem: inout String?, _ db: Database
    ) throws -> (restored: Int, remaining: Int) {
        let exists =
            try Bool.fetchOne(
                db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?",
                arguments: ["rejected_\(table)"]) ?? false
        guard exists, let columns = StoreSchema.checkedTables.first(where: { $0.name == table })?.columns else {
            return (0, 0)
        }
        let range: StatementArguments = [StoreSchema.key(id), StoreSchema.lastKey(id)]
        let required = columns.filter { !$0.isKey && !$0.nullable }.map(\.condition).joined(separator: " AND ")
        let expressions = columns.map { c in
            c.isKey || !c.nullable ? c.name : "CASE WHEN \(c.condition) THEN \(c.name) ELSE NULL END"
        }
        // The rows that can come back: their required values pass, and their id is free (it is,
        // unless another program wrote a row there since).
        try db.execute(sql: "DROP TABLE IF EXISTS temp.waymark_moving")
        try db.execute(
            sql: """
                CREATE TEMP TABLE waymark_moving AS SELECT id FROM rejected_\(table)
                WHERE typeof(id) = 'integer' AND id BETWEEN ?1 AND ?2 AND \(required)
                  AND id NOT IN (SELECT id FROM main.\(table) WHERE id BETWEEN ?1 AND ?2)
                """, arguments: range)
        try db.execute(
            sql: """
                INSERT INTO main.\(table) (\(columns.map(\.name).joined(separator: ", ")))
                SELECT \(expressions.joined(separator: ", ")) FROM rejected_\(table)
                WHERE id IN (SELECT id FROM temp.waymark_moving)
                """)
        let restored = db.changesCount
        try db.execute(
            sql: """
                DELETE FROM rejected_\(table) WHERE id IN (SELECT id FROM temp.waymark_moving);
                DROP TABLE temp.waymark_moving;
                """)
        let remaining =
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM rejected_\(table) WHERE typeof(id) = 'integer' AND id BETWEEN ? AND ?",
                arguments: range) ?? 0
        if remaining > 0, problem == nil,
            let first = try Int64.fetchOne(
                db,
                sql:
                    "SELECT id FROM rejected_\(table) WHERE typeof(id) = 'integer' AND id BETWEEN ? AND ? ORDER BY id LIMIT 1",
                arguments: range)
        {
            for c in columns where !c.isKey && !c.nullable {
                if let what = try failure(of: c, in: "rejected_\(table)", id: first, db) {
                    problem = "\(table) row \(first & ((1 << 40) - 1)): \(what)"
                    break
                }
            }
        }
        return (restored, remaining)
    }
}
