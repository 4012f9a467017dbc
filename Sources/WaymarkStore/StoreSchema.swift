import GRDB
import Waymark

/// The store's schema, versioned by migrations. `docs/store.md` explains every column, with
/// queries for the `sqlite3` shell.
///
/// Tables:
/// - `session`: one row per replay or recording: what ran (`kind`, `source`, `settings` as a
///   JSON object, the `scenario` file's text), when (`created_at`, `epoch`, `ended_at`, Unix
///   seconds), how long (`duration`, seconds of session time) and how it ended (`outcome`:
///   running, completed, stopped, failed or interrupted, with `outcome_detail`) and, from v5,
///   the user's `label` (`--label`), or NULL.
/// - `location`: every location the app received, in delivery order: each
///   ``Waymark/Location`` field (NULL where CoreLocation would say "invalid": a negative accuracy,
///   speed or course), its provenance, the app's `app_state` and the `reason`, the
///   source's `fix_index` and the track `segment`, and the rest of its `fix` audit event
///   (authorization, accuracy authorization, the source's coordinate when coarsening moved it,
///   background time remaining, location indicator).
/// - `event`: every other audit event: `offset` (seconds from `epoch`), the event's `name` and
///   its fields as a JSON object in `data` (the NDJSON audit line without `time` and `event`).
///   Fixes that were not delivered (held, dropped, ignored) are `fix` events here.
/// - `origin`: where fixes came from (a file or a gpsd device), named once.
/// - `code`: the names of the small integers that stand for enumerations in `location`.
///
/// The `id` of both `location` and `event` is `session_id × 2^40 + seq`, where `seq` numbers a
/// session's audit events across the two tables: a session's rows are one contiguous, ordered
/// range of each table (appending to it is SQLite's cheapest insert), and its audit log is the
/// two merged in `id` order. A delivered fix is one `location` row, not also an event row. The
/// location table keeps no constant columns: its `decision` is always `delivered`, and
/// `flags` holds simulated (1), speed derived (2), course derived (4), indicator (8) and, from
/// v2, the positioning source in bits 4–5 (satellite 0, wifi 1, cell 2, reduced 3).
///
/// The views `location_view` and `event_view` show the same rows with names for the codes,
/// origins joined and ISO 8601 times: what a person in the `sqlite3` shell wants.
///
/// The file's `application_id` is ``applicationID`` ("WYMK"), so Waymark can tell its own
/// databases from other programs'.
public enum StoreSchema {
    /// "WYMK".
    public static let applicationID: Int32 = 0x5759_4D4B

    /// The first row id of `session`'s range in `location` and `event`.
    static func key(_ session: Int64, _ sequence: Int64 = 0) -> Int64 { (session << 40) + sequence }
    /// The last row id of `session`'s range.
    static func lastKey(_ session: Int64) -> Int64 { (session << 40) + (1 << 40) - 1 }

    /// The schema's version: the number of its latest migration (`v5: session labels` is 5).
    public static var currentVersion: Int {
        migrator.migrations.compactMap { name in
            name.dropFirst().prefix { $0.isNumber }.isEmpty ? nil : Int(name.dropFirst().prefix { $0.isNumber })
        }.max() ?? 0
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: sessions, locations, events") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(
                sql: """
                    CREATE TABLE session (
                      id INTEGER PRIMARY KEY AUTOINCREMENT,
                      kind TEXT NOT NULL CHECK (kind IN ('replay', 'record')),
                      source TEXT NOT NULL,
                      settings TEXT NOT NULL DEFAULT '{}',
                      scenario TEXT,
                      created_at REAL NOT NULL,
                      epoch REAL NOT NULL,
                      ended_at REAL,
                      duration REAL,
                      outcome TEXT NOT NULL DEFAULT 'running'
                        CHECK (outcome IN ('running', 'completed', 'stopped', 'failed', 'interrupted')),
                      outcome_detail TEXT,
                      pid INTEGER,
                      host TEXT
                    );
                    CREATE TABLE origin (
                      id INTEGER PRIMARY KEY,
                      kind TEXT NOT NULL CHECK (kind IN ('file', 'gpsd')),
                      name TEXT NOT NULL,
                      UNIQUE (kind, name)
                    );
                    CREATE TABLE code (
                      kind TEXT NOT NULL,
                      code INTEGER NOT NULL,
                      name TEXT NOT NULL,
                      PRIMARY KEY (kind, code)
                    ) WITHOUT ROWID;
                    CREATE TABLE location (
                      id INTEGER PRIMARY KEY,
                      offset REAL,
                      time REAL,
                      latitude REAL,
                      longitude REAL,
                      altitude REAL,
                      ellipsoidal_altitude REAL,
                      horizontal_accuracy REAL,
                      vertical_accuracy REAL,
                      speed REAL,
                      speed_accuracy REAL,
                      course REAL,
                      course_accuracy REAL,
                      fix_mode INTEGER,
                      satellites INTEGER,
                      hdop REAL,
                      vdop REAL,
                      pdop REAL,
                      differential INTEGER,
                      flags INTEGER,
                      origin_id INTEGER REFERENCES origin(id),
                      origin_index INTEGER,
                      fix_index INTEGER,
                      segment INTEGER,
                      app_state INTEGER,
                      reason INTEGER,
                      authorization INTEGER,
                      accuracy_authorization INTEGER,
                      source_latitude REAL,
                      source_longitude REAL,
                      background_time_remaining REAL
                    );
                    CREATE TABLE event (
                      id INTEGER PRIMARY KEY,
                      offset REAL NOT NULL,
                      name TEXT NOT NULL,
                      data TEXT NOT NULL
                    );
                    """)
            for (kind, names) in StoreCodes.tables {
                for (code, name) in names.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO code (kind, code, name) VALUES (?, ?, ?)", arguments: [kind, code, name])
                }
            }
            try db.execute(sql: locationView(positioning: false) + eventView)
        }
        migrator.registerMigration("v2: codes and positioning of the rebuilt device") { db in
            try keepingUsersSchema(db, on: ["location_view"]) {
                try db.execute(sql: "DROP VIEW location_view; " + locationView(positioning: true))
            }
            try addNewCodes(db)
        }
        migrator.registerMigration("v3: codes of the wake-up services") { db in
            try addNewCodes(db)
        }
        migrator.registerMigration("v4: checked columns") { db in
            try keepingUsersSchema(db, on: ["session", "location", "event", "location_view", "event_view"]) {
                try checkColumns(db)
            }
        }
        migrator.registerMigration("v5: session labels") { db in
            // Added, not rebuilt: every row of a v4 store stays as it is, with no label.
            try db.execute(
                sql: """
                    ALTER TABLE session ADD COLUMN label TEXT
                      CHECK (label IS NULL OR (typeof(label) = 'text' AND length(label) > 0))
                    """)
        }
        migrator.registerMigration("v6: session identity and forwarding") { db in
            // Added, not rebuilt, as v5. A session's UUID names it in every store it is forwarded
            // to (its local id differs from store to store); its device names the receiver or
            // machine that recorded it (docs/fleet.md).
            try db.execute(
                sql: """
                    ALTER TABLE session ADD COLUMN uuid TEXT
                      CHECK (uuid IS NULL OR (typeof(uuid) = 'text' AND length(uuid) = 36));
                    ALTER TABLE session ADD COLUMN device TEXT
                      CHECK (device IS NULL OR (typeof(device) = 'text' AND length(device) > 0));
                    UPDATE session SET uuid = \(randomUUID) WHERE uuid IS NULL;
                    CREATE UNIQUE INDEX session_uuid ON session (uuid);
                    CREATE TABLE forwarded (
                      session_id INTEGER NOT NULL,
                      target TEXT NOT NULL,
                      seq INTEGER NOT NULL,
                      complete INTEGER NOT NULL DEFAULT 0,
                      at REAL NOT NULL,
                      PRIMARY KEY (session_id, target)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    /// SQL for a random (version 4) UUID in lower-case text, as Foundation's `UUID` writes it.
    static let randomUUID = """
        lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
          || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))
        """

    /// Creates a store at `path` with the migrations up to `identifier` only: a store of an
    /// older Waymark, for the tests of the migrations after it.
    static func createStore(at path: String, upTo identifier: String) throws {
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue, upTo: identifier)
    }

    // MARK: - What the user added

    /// A trigger or index the user made on a table or view that a migration rebuilds, which
    /// SQLite drops with it.
    struct UserSchemaObject: Sendable {
        var type: String
        var name: String
        var table: String
        var sql: String
    }

    /// The user's trigger or index that a migration could not make again.
    struct CannotKeepUsersSchema: Error {
        var object: UserSchemaObject
        var reason: String
    }

    /// Runs `body`, which drops and makes again the tables and views `tables`, and then makes
    /// again the triggers and indexes the user had on them (issue 27, item 10: the v4 rebuild
    /// dropped a user's triggers on `location` without a word). One that cannot be made again
    /// throws ``CannotKeepUsersSchema``, and the migration, one transaction, is undone.
    static func keepingUsersSchema(_ db: Database, on tables: [String], _ body: () throws -> Void) throws {
        let placeholders = tables.map { _ in "?" }.joined(separator: ", ")
        let objects = try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_master
                WHERE type IN ('trigger', 'index') AND sql IS NOT NULL AND tbl_name IN (\(placeholders))
                ORDER BY type, rowid
                """, arguments: StatementArguments(tables)
        ).map { row in
            UserSchemaObject(type: row["type"], name: row["name"], table: row["tbl_name"], sql: row["sql"])
        }
        try body()
        for object in objects {
            // Made again only if the rebuild dropped it (a view's triggers go with the view).
            let exists =
                try Bool.fetchOne(
                    db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = ? AND name = ?",
                    arguments: [object.type, object.name]) ?? false
            guard !exists else { continue }
            do {
                try db.execute(sql: object.sql)
            } catch {
                throw CannotKeepUsersSchema(
                    object: object, reason: (error as? DatabaseError)?.message ?? "\(error)")
            }
        }
    }

    // MARK: - v4: checked columns

    /// A column of a checked table: its declared type, whether it may be NULL, and what its
    /// value must satisfy besides its type.
    struct CheckedColumn {
        var name: String
        var type: String
        var nullable = false
        var check: String?
        /// Whatever the schema said before v4 (the primary key, a REFERENCES clause).
        var extra = ""

        /// The condition a row's value must meet: SQLite's type of the value (after the
        /// column's affinity) is the declared one, and `check` holds.
        var isKey: Bool { extra.contains("PRIMARY KEY") }

        var condition: String {
            let typed = "typeof(\(name)) = '\(type.lowercased())'"
            let checked = check.map { "\(typed) AND \($0)" } ?? typed
            return nullable ? "(\(name) IS NULL OR (\(checked)))" : "(\(checked))"
        }
    }

    /// `column` holds a time of the years −9999 to 9999 (``ValueFormatting/readableSeconds``).
    static func inYears(_ column: String) -> String {
        let r = ValueFormatting.readableSeconds
        return "\(column) BETWEEN \(Int64(r.lowerBound)) AND \(Int64(r.upperBound))"
    }

    /// The tables v4 checks, with every column in its v1 order.
    static let checkedTables: [(name: String, columns: [CheckedColumn])] = {
        func real(_ name: String, nullable: Bool = false, _ check: String? = nil) -> CheckedColumn {
            // Finite: SQLite stores an infinity (9e999) as a REAL, and a NaN as NULL.
            CheckedColumn(
                name: name, type: "REAL", nullable: nullable, check: check ?? "abs(\(name)) <= 1.7976931348623157e308")
        }
        func integer(_ name: String, nullable: Bool = false, _ check: String? = nil) -> CheckedColumn {
            CheckedColumn(name: name, type: "INTEGER", nullable: nullable, check: check)
        }
        func text(_ name: String, nullable: Bool = false, default value: String? = nil, _ check: String? = nil)
            -> CheckedColumn
        {
            CheckedColumn(
                name: name, type: "TEXT", nullable: nullable, check: check, extra: value.map { " DEFAULT \($0)" } ?? "")
        }
        let session: [CheckedColumn] = [
            CheckedColumn(name: "id", type: "INTEGER", extra: " PRIMARY KEY AUTOINCREMENT"),
            text("kind", "kind IN ('replay', 'record')"), text("source"), text("settings", default: "'{}'"),
            text("scenario", nullable: true), real("created_at", inYears("created_at")),
            real("epoch", inYears("epoch")), real("ended_at", nullable: true, inYears("ended_at")),
            real("duration", nullable: true, "duration BETWEEN 0 AND 1e15"),
            text(
                "outcome", default: "'running'",
                "outcome IN ('running', 'completed', 'stopped', 'failed', 'interrupted')"),
            text("outcome_detail", nullable: true), integer("pid", nullable: true), text("host", nullable: true),
        ]
        var location: [CheckedColumn] = [
            CheckedColumn(name: "id", type: "INTEGER", extra: " PRIMARY KEY"), real("offset"),
            real("time", inYears("time")), real("latitude", "latitude BETWEEN -90 AND 90"),
            real("longitude", "longitude BETWEEN -180 AND 180"),
        ]
        location += ["altitude", "ellipsoidal_altitude"].map { real($0, nullable: true) }
        location.append(real("horizontal_accuracy"))
        location += ["vertical_accuracy", "speed", "speed_accuracy", "course", "course_accuracy"].map {
            real($0, nullable: true)
        }
        location += [integer("fix_mode", "fix_mode >= 0"), integer("satellites", nullable: true, "satellites >= 0")]
        location += ["hdop", "vdop", "pdop"].map { real($0, nullable: true) }
        location += [integer("differential", "differential >= 0"), integer("flags", "flags >= 0")]
        var origin = integer("origin_id")
        origin.extra = " REFERENCES origin(id)"
        location += [origin, integer("origin_index", nullable: true), integer("fix_index"), integer("segment")]
        location += ["app_state", "reason", "authorization", "accuracy_authorization"].map { integer($0, "\($0) >= 0") }
        location += [
            real("source_latitude", nullable: true, "source_latitude BETWEEN -90 AND 90"),
            real("source_longitude", nullable: true, "source_longitude BETWEEN -180 AND 180"),
            real("background_time_remaining", nullable: true),
        ]
        let event: [CheckedColumn] = [
            CheckedColumn(name: "id", type: "INTEGER", extra: " PRIMARY KEY"), real("offset"), text("name"),
            text("data"),
        ]
        return [("session", session), ("location", location), ("event", event)]
    }()

    /// The condition that every column of `columns` meets.
    static func validRow(_ columns: [CheckedColumn]) -> String {
        columns.filter { !$0.isKey }.map(\.condition).joined(separator: " AND ")
    }

    /// Rebuilds `session`, `location` and `event` with a CHECK per column: its type and range,
    /// as Waymark writes it. Rows of an older store that do not meet them (from `sqlite3
    /// .recover`, say) are not lost: they move to `rejected_session`, `rejected_location` and
    /// `rejected_event`, made only when there are any. Session ids already used stay used.
    private static func checkColumns(_ db: Database) throws {
        // The highest id used: the sequence's, or a row's that was given its id by an UPDATE (as
        // a repair may), which the sequence never saw; a session set aside keeps its id too.
        let lastSession = try Int64.fetchOne(
            db,
            sql: """
                SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'session'), 0),
                           coalesce((SELECT max(id) FROM session), 0))
                """)
        try db.execute(sql: "DROP VIEW IF EXISTS location_view; DROP VIEW IF EXISTS event_view")
        for (name, columns) in checkedTables {
            let list = columns.map(\.name).joined(separator: ", ")
            let definitions = columns.map { c -> String in
                // A NULL fails the check of a column that must have a value: no NOT NULL, which
                // `PRAGMA ignore_check_constraints` could not turn off for a repair.
                let constraint = c.isKey ? "" : " CHECK \(c.condition)"
                return "  \(c.name) \(c.type)\(c.extra)\(constraint)"
            }
            let valid = validRow(columns)
            try db.execute(
                sql: """
                    CREATE TABLE checked_\(name) (
                    \(definitions.joined(separator: ",\n"))
                    );
                    INSERT INTO checked_\(name) (\(list)) SELECT \(list) FROM \(name) WHERE \(valid);
                    """)
            let rejected = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name) WHERE NOT (\(valid))") ?? 0
            if rejected > 0 {
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS rejected_\(name) AS SELECT * FROM \(name) WHERE 0;
                        INSERT INTO rejected_\(name) SELECT * FROM \(name) WHERE NOT (\(valid));
                        """)
            }
            // Legacy renaming: the modern one checks every view and trigger first, and a user's view
            // of the table is broken between the DROP and the rename.
            try db.execute(
                sql: """
                    DROP TABLE \(name);
                    PRAGMA legacy_alter_table = ON;
                    ALTER TABLE checked_\(name) RENAME TO \(name);
                    PRAGMA legacy_alter_table = OFF;
                    """)
        }
        // Session ids are never reused, even those of deleted sessions.
        try db.execute(
            sql: """
                DELETE FROM sqlite_sequence WHERE name = 'session';
                INSERT INTO sqlite_sequence (name, seq) SELECT 'session', max(?, coalesce(max(id), 0)) FROM session;
                """, arguments: [lastSession ?? 0])
        try db.execute(sql: locationView(positioning: true) + eventView)
    }

    /// New cases go at the end of their table; a store made before them learns their names.
    private static func addNewCodes(_ db: Database) throws {
        for (kind, names) in StoreCodes.tables {
            for (code, name) in names.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO code (kind, code, name) SELECT ?, ?, ?
                        WHERE NOT EXISTS (SELECT 1 FROM code WHERE kind = ? AND code = ?)
                        """, arguments: [kind, code, name, kind, code])
            }
        }
    }

    /// The view of events with their times.
    static let eventView = """
        CREATE VIEW event_view AS
        SELECT e.id >> 40 AS session_id, e.id & 1099511627775 AS seq, e.offset,
          strftime('%Y-%m-%dT%H:%M:%fZ', s.epoch + e.offset, 'unixepoch') AS time, e.name, e.data
        FROM event e JOIN session s ON s.id = e.id >> 40;
        """

    /// The view of locations with their codes named; from v2 with the positioning source.
    static func locationView(positioning: Bool) -> String {
        func name(_ kind: String, _ column: String) -> String {
            "(SELECT name FROM code WHERE kind = '\(kind)' AND code = l.\(column)) AS \(column)"
        }
        let extra =
            positioning
            ? ",\n  (SELECT name FROM code WHERE kind = 'positioning' AND code = (l.flags >> 4) & 3) AS positioning"
            : ""
        return """
            CREATE VIEW location_view AS
            SELECT l.id >> 40 AS session_id, l.id & 1099511627775 AS seq, l.offset,
              strftime('%Y-%m-%dT%H:%M:%fZ', l.time, 'unixepoch') AS time,
              l.latitude, l.longitude, l.altitude, l.ellipsoidal_altitude, l.horizontal_accuracy,
              l.vertical_accuracy, l.speed, l.speed_accuracy, l.course, l.course_accuracy,
              \(name("fix_mode", "fix_mode")), l.satellites, l.hdop, l.vdop, l.pdop,
              \(name("differential", "differential")), l.flags & 1 AS simulated,
              (l.flags >> 1) & 1 AS speed_derived, (l.flags >> 2) & 1 AS course_derived,
              o.kind AS origin_kind, o.name AS origin, l.origin_index, l.fix_index, l.segment,
              \(name("app_state", "app_state")), 'delivered' AS decision, \(name("reason", "reason")),
              \(name("authorization", "authorization")),
              \(name("accuracy_authorization", "accuracy_authorization")),
              l.source_latitude, l.source_longitude, l.background_time_remaining,
              (l.flags >> 3) & 1 AS indicator\(extra)
            FROM location l JOIN origin o ON o.id = l.origin_id;

            """
    }
}

/// The small integers that stand for enumerations in `location`; the `code` table names them.
/// A code is the case's position here: new cases go at the end (with a migration that adds
/// their names), so codes already stored keep their meaning.
enum StoreCodes {
    static let fixMode: [Provenance.FixMode] = [.none, .twoD, .threeD]
    static let differential: [Provenance.Differential] = [.none, .dgps, .rtkFloat, .rtkFixed]
    static let appState: [AppState] = [.notRunning, .active, .inactive, .background, .suspended]
    static let decision: [FixDecision] = [.delivered, .held, .dropped, .ignored]
    static let reason: [FixReason] = [
        .foreground, .backgroundSession, .gracePeriod, .backgroundTask, .backgroundFetch, .resumed, .suspended,
        .appNotRunning, .locationServicesDisabled, .restricted, .denied, .notDetermined, .whenInUseStartedInBackground,
        .paused, .distanceFilter, .accuracyThrottle, .noFix, .notUpdating,
        // v2: the rebuilt device.
        .alwaysGranted, .awaitingAlways, .notInUse, .alwaysPromptShowing,
        // v3: the wake-up services.
        .backgroundWake, .backgroundAudio, .significantLocationChange, .requestLocation,
    ]
    /// CoreLocation's own numbers (CLAuthorizationStatus).
    static let authorization: [AuthorizationStatus] = [
        .notDetermined, .restricted, .denied, .authorizedAlways, .authorizedWhenInUse,
    ]
    /// CoreLocation's own numbers (CLAccuracyAuthorization).
    static let accuracy: [AccuracyAuthorization] = [.fullAccuracy, .reducedAccuracy]
    /// v2: bits 4–5 of `flags`.
    static let positioning: [AccuracyModel.Positioning] = [.satellite, .wifi, .cell, .reduced]

    static var tables: [(String, [String])] {
        [
            ("fix_mode", fixMode.map(\.rawValue)), ("differential", differential.map(\.rawValue)),
            ("app_state", appState.map(\.rawValue)), ("decision", decision.map(\.rawValue)),
            ("reason", reason.map(\.rawValue)), ("authorization", authorization.map(\.rawValue)),
            ("accuracy_authorization", accuracy.map(\.rawValue)), ("positioning", positioning.map(\.rawValue)),
        ]
    }

    @inline(__always) static func code<T: Equatable>(_ value: T, in table: [T]) -> Int64 {
        Int64(table.firstIndex(of: value) ?? 0)
    }

    @inline(__always) static func value<T>(_ code: Int64, in table: [T], default fallback: T) -> T {
        code >= 0 && code < table.count ? table[Int(code)] : fallback
    }
}
