import GRDB

/// The store's schema, versioned by migrations. `docs/store.md` explains every column with
/// queries for the `sqlite3` shell.
///
/// - `session`: one row per replay or recording: what ran (`kind`, `source`, `settings` as a
///   JSON object, the `scenario` file's text), when (`created_at`, `epoch`, `ended_at`, Unix
///   seconds), how long (`duration`, seconds of session time) and how it ended (`outcome`:
///   running, completed, stopped, failed or interrupted, with `outcome_detail`).
/// - `location`: every location the app received, in delivery order (`seq`): each
///   ``Waymark/Location`` field (NULL where CoreLocation would say "invalid": a negative accuracy,
///   speed or course), its provenance, and the app's `app_state`, the `decision` and `reason`,
///   the source's `fix_index` and the track `segment`.
/// - `event`: the audit log: `seq`, `offset` (seconds from `epoch`), the event's `name` and its
///   fields as a JSON object in `data` (the NDJSON audit line without `time` and `event`).
///
/// The file's `application_id` is ``applicationID`` ("WYMK"), so Waymark can tell its own
/// databases from other programs'.
public enum StoreSchema {
    /// "WYMK".
    public static let applicationID: Int32 = 0x5759_4D4B

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
                    CREATE TABLE location (
                      session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
                      seq INTEGER NOT NULL,
                      offset REAL NOT NULL,
                      time REAL NOT NULL,
                      latitude REAL NOT NULL,
                      longitude REAL NOT NULL,
                      altitude REAL,
                      ellipsoidal_altitude REAL,
                      horizontal_accuracy REAL NOT NULL,
                      vertical_accuracy REAL,
                      speed REAL,
                      speed_accuracy REAL,
                      course REAL,
                      course_accuracy REAL,
                      fix_mode TEXT NOT NULL,
                      satellites INTEGER,
                      hdop REAL,
                      vdop REAL,
                      pdop REAL,
                      differential TEXT NOT NULL,
                      simulated INTEGER NOT NULL,
                      speed_derived INTEGER NOT NULL,
                      course_derived INTEGER NOT NULL,
                      origin_kind TEXT NOT NULL CHECK (origin_kind IN ('file', 'gpsd')),
                      origin TEXT NOT NULL,
                      origin_index INTEGER,
                      fix_index INTEGER NOT NULL,
                      segment INTEGER NOT NULL,
                      app_state TEXT NOT NULL,
                      decision TEXT NOT NULL,
                      reason TEXT NOT NULL,
                      PRIMARY KEY (session_id, seq)
                    ) WITHOUT ROWID;
                    CREATE TABLE event (
                      session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
                      seq INTEGER NOT NULL,
                      offset REAL NOT NULL,
                      name TEXT NOT NULL,
                      data TEXT NOT NULL,
                      PRIMARY KEY (session_id, seq)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
