import WaymarkStore

/// The PostGIS store's schema, in the schema `waymark`, versioned by migrations as the SQLite
/// store's is (`waymark.schema_migration` lists those applied). `docs/fleet.md` explains it.
///
/// - `session`: one row per session, named by its `uuid` in every store it reaches; `id` is
///   this server's number for it. Times as the SQLite store keeps them (Unix seconds, exactly),
///   with `created` and `ended` as `timestamptz` for people and GIS tools. `last_seq`: the
///   highest sequence number forwarded, which resuming starts after.
/// - `location`: every location the app received, with every column of the SQLite store's
///   `location` and a `geom geometry(PointZM, 4326)`: longitude, latitude, altitude (NaN when the
///   fix had none; `altitude` is then NULL) and, as M, the fix's time in Unix seconds.
///   Partitioned by `at`, the moment it was delivered (the session's epoch plus its offset), one
///   partition per month made as fixes arrive (`waymark.ensure_partitions`). Its key is
///   (`session_id`, `seq`, `at`): a row sent twice is stored once.
/// - `event`: every other audit event, keyed by (`session_id`, `seq`).
/// - Rows name their session without a foreign key, as in SQLite: a key checked on every row
///   would cost a lookup per fix; deleting a session deletes its rows explicitly.
/// - `origin`, `code`: the names behind `origin_id` and the small integers, as in SQLite.
/// - `location_view`: locations with their codes named and times as `timestamptz`.
/// - `segment`: one `LineStringZM` per session and segment, with the session's attributes:
///   what QGIS shows as lines.
enum PostGISSchema {
    struct Migration {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// The columns of `location` that come from the SQLite store, quoted (`offset` and
    /// `authorization` are reserved words in PostgreSQL), with their types.
    static var locationColumns: [(name: String, type: String)] {
        StoreSchema.transferLocationColumns.map { ("\"\($0.name)\"", $0.isReal ? "double precision" : "bigint") }
    }

    static var migrations: [Migration] {
        let columns = locationColumns.map { "  \($0.name) \($0.type)" }.joined(separator: ",\n")
        let codeRows = StoreSchema.codeTables.flatMap { table in
            table.names.enumerated().map { "('\(table.kind)', \($0.offset), '\($0.element)')" }
        }
        return [
            Migration(
                version: 1, name: "v1: sessions, locations, events",
                statements: [
                    "CREATE EXTENSION IF NOT EXISTS postgis",
                    """
                    CREATE TABLE waymark.session (
                      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                      uuid uuid NOT NULL UNIQUE,
                      device text,
                      host text,
                      pid bigint,
                      kind text NOT NULL CHECK (kind IN ('replay', 'record')),
                      source text NOT NULL,
                      settings text NOT NULL DEFAULT '{}',
                      scenario text,
                      created_at double precision NOT NULL,
                      epoch double precision NOT NULL,
                      ended_at double precision,
                      duration double precision,
                      outcome text NOT NULL
                        CHECK (outcome IN ('running', 'completed', 'stopped', 'failed', 'interrupted')),
                      outcome_detail text,
                      label text,
                      created timestamptz GENERATED ALWAYS AS (to_timestamp(created_at)) STORED,
                      ended timestamptz GENERATED ALWAYS AS (to_timestamp(ended_at)) STORED,
                      last_seq bigint NOT NULL DEFAULT -1,
                      forwarded_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    "CREATE INDEX session_device ON waymark.session (device, created_at)",
                    "CREATE INDEX session_created ON waymark.session (created_at)",
                    """
                    CREATE TABLE waymark.origin (
                      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                      kind text NOT NULL CHECK (kind IN ('file', 'gpsd')),
                      name text NOT NULL,
                      UNIQUE (kind, name)
                    )
                    """,
                    """
                    CREATE TABLE waymark.code (
                      kind text NOT NULL,
                      code integer NOT NULL,
                      name text NOT NULL,
                      PRIMARY KEY (kind, code)
                    )
                    """,
                    "INSERT INTO waymark.code (kind, code, name) VALUES \(codeRows.joined(separator: ", "))",
                    """
                    CREATE TABLE waymark.location (
                      session_id bigint NOT NULL,
                      seq bigint NOT NULL,
                      at timestamptz NOT NULL,
                      geom geometry(PointZM, 4326) NOT NULL,
                      origin_id integer NOT NULL,
                    \(columns),
                      PRIMARY KEY (session_id, seq, at)
                    ) PARTITION BY RANGE (at)
                    """,
                    "CREATE INDEX location_geom ON waymark.location USING gist (geom)",
                    // Rows arrive in time order: a BRIN index finds a time range for a fraction
                    // of a B-tree's cost on every insert.
                    "CREATE INDEX location_at ON waymark.location USING brin (at)",
                    """
                    CREATE TABLE waymark.event (
                      session_id bigint NOT NULL,
                      seq bigint NOT NULL,
                      "offset" double precision NOT NULL,
                      name text NOT NULL,
                      data text NOT NULL,
                      PRIMARY KEY (session_id, seq)
                    )
                    """,
                    // One partition per calendar month (UTC) of delivery time, made when first
                    // needed; one caller at a time, so that recorders starting together agree.
                    """
                    CREATE FUNCTION waymark.ensure_partitions(first timestamptz, last timestamptz) RETURNS integer
                    LANGUAGE plpgsql AS $$
                    DECLARE
                      month timestamptz := date_trunc('month', first AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
                      made integer := 0;
                      name text;
                    BEGIN
                      PERFORM pg_advisory_xact_lock(hashtext('waymark.location partitions'));
                      WHILE month <= last LOOP
                        name := 'location_' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM');
                        IF to_regclass('waymark.' || name) IS NULL THEN
                          EXECUTE format(
                            'CREATE TABLE waymark.%I PARTITION OF waymark.location FOR VALUES FROM (%L) TO (%L)',
                            name, month, (month AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC');
                          made := made + 1;
                        END IF;
                        month := (month AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
                      END LOOP;
                      RETURN made;
                    END
                    $$
                    """,
                    """
                    CREATE VIEW waymark.location_view AS
                    SELECT l.session_id, s.uuid AS session_uuid, s.device, l.seq, l.at,
                      to_timestamp(l."time") AS time, l.latitude, l.longitude, l.altitude, l.ellipsoidal_altitude,
                      l.horizontal_accuracy, l.vertical_accuracy, l.speed, l.speed_accuracy, l.course,
                      l.course_accuracy, fm.name AS fix_mode, l.satellites, l.hdop, l.vdop, l.pdop,
                      df.name AS differential, o.kind AS origin_kind, o.name AS origin, l.fix_index, l.segment,
                      st.name AS app_state, rs.name AS reason, au.name AS "authorization",
                      aa.name AS accuracy_authorization, ps.name AS positioning, l.geom
                    FROM waymark.location l
                    JOIN waymark.session s ON s.id = l.session_id
                    JOIN waymark.origin o ON o.id = l.origin_id
                    LEFT JOIN waymark.code fm ON fm.kind = 'fix_mode' AND fm.code = l.fix_mode
                    LEFT JOIN waymark.code df ON df.kind = 'differential' AND df.code = l.differential
                    LEFT JOIN waymark.code st ON st.kind = 'app_state' AND st.code = l.app_state
                    LEFT JOIN waymark.code rs ON rs.kind = 'reason' AND rs.code = l.reason
                    LEFT JOIN waymark.code au ON au.kind = 'authorization' AND au.code = l."authorization"
                    LEFT JOIN waymark.code aa ON aa.kind = 'accuracy_authorization' AND aa.code = l.accuracy_authorization
                    LEFT JOIN waymark.code ps ON ps.kind = 'positioning' AND ps.code = (l.flags >> 4) & 3
                    """,
                    """
                    CREATE VIEW waymark.segment AS
                    SELECT s.id AS session_id, s.uuid AS session_uuid, s.device, s.label, s.kind, s.source,
                      s.outcome, s.created, s.ended, l.segment, count(*) AS fixes, min(l.at) AS first_at,
                      max(l.at) AS last_at,
                      ST_MakeLine(l.geom ORDER BY l.seq)::geometry(LineStringZM, 4326) AS geom
                    FROM waymark.location l JOIN waymark.session s ON s.id = l.session_id
                    GROUP BY s.id, l.segment
                    HAVING count(*) >= 2
                    """,
                ])
        ]
    }

    static var currentVersion: Int { migrations.map(\.version).max() ?? 0 }
}
