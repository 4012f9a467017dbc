import Logging
import NIOCore
import PostgresNIO
import Synchronization
import Waymark
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sessions in PostgreSQL with PostGIS: one connection, the schema migrated on open.
///
/// Sessions arrive from a local SQLite store (``push(_:from:pageSize:lanes:acknowledged:progress:)``),
/// a page of rows per transaction that also moves the session's `last_seq`. A page's locations
/// are `COPY`ed straight into `location` (`DirectRow`); a page some of whose rows are there
/// already (sent again after a lost acknowledgement) is written through a temporary table with
/// `ON CONFLICT DO NOTHING` on (session, sequence number, delivery time) instead. A page the
/// link cut is rolled back whole; sending it again adds only what is missing. A backlog of
/// more than one page takes a second connection while it lasts (`PageLedger` keeps
/// `last_seq` honest when pages commit out of order). Every row therefore arrives exactly
/// once, however often a push is cut and resumed.
public actor PostGISStore {
    public nonisolated let address: PostGISAddress
    let connection: PostgresConnection
    let logger: Logger
    let closeWatch: CloseWatch
    let deadline: Deadline?
    /// This server's origin ids, by the local store's kind and name.
    private var origins: [String: Int32] = [:]
    private var staged = false
    /// The months (``month(of:)``) whose partitions this connection made sure of.
    private var ensuredMonths: Set<Int> = []
    /// Pages whose locations went straight into `location`, and pages written again through
    /// the temporary table because some of their rows were there already.
    private(set) var directPages = 0
    private(set) var resentPages = 0

    /// The calendar month (UTC) of Unix time `seconds`, as months since January 1970.
    static func month(of seconds: Double) -> Int {
        let (year, month, _) = ValueParsing.civil(fromDays: Int((seconds / 86_400).rounded(.down)))
        return (year - 1970) * 12 + (month - 1)
    }

    private init(address: PostGISAddress, connection: PostgresConnection, logger: Logger, deadline: Deadline?) {
        self.deadline = deadline
        self.address = address
        self.connection = connection
        self.logger = logger
        self.closeWatch = CloseWatch(connection, deadline: deadline)
    }

    /// How long one statement (or one page's COPY) may take before the connection is taken for
    /// dead and closed: a link that drops packets without a word (no FIN, no RST) otherwise
    /// holds an operation until TCP gives up, many minutes later. Time comes from `sleep`,
    /// injected (the command line gives the continuous clock's).
    public struct Deadline: Sendable {
        public var limit: Duration
        public var sleep: @Sendable (Duration) async throws -> Void

        public init(limit: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
            self.limit = limit
            self.sleep = sleep
        }
    }

    /// Connects to the store at `address` and brings its schema up to date (making it in an
    /// empty database, with the `postgis` extension). A schema from a newer Waymark is
    /// refused.
    public static func open(_ address: PostGISAddress, deadline: Deadline? = nil) async throws -> PostGISStore {
        let logger = Logger(label: "waymark.postgis") { _ in SwiftLogNoOpLogHandler() }
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try address.configuration(), id: 1, logger: logger)
        } catch {
            throw PostGISError(error, address: address)
        }
        let store = PostGISStore(address: address, connection: connection, logger: logger, deadline: deadline)
        do {
            try await store.migrate()
            // postgres-nio names a COPY's table as one quoted identifier, without its schema:
            // `waymark` goes first on this connection's path, before the path it had (where
            // PostGIS is).
            try await store.run(
                "SELECT set_config('search_path', 'waymark, ' || current_setting('search_path'), false)")
        } catch {
            try? await connection.close()
            throw PostGISError(error, address: address)
        }
        return store
    }

    /// Closes the connection.
    public func close() async {
        try? await connection.close()
    }

    // MARK: - Statements

    /// Runs `query` and reads its rows whole, failing at once if the connection closes
    /// meanwhile (``CloseWatch``).
    @discardableResult
    func run(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let connection = self.connection
        let logger = self.logger
        return try await closeWatch.guarded {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    func run(sql: String) async throws {
        try await run(PostgresQuery(unsafeSQL: sql))
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await run(sql: "BEGIN")
        do {
            let value = try await body()
            try await run(sql: "COMMIT")
            return value
        } catch {
            try? await run(sql: "ROLLBACK")
            throw error
        }
    }

    // MARK: - Schema

    /// The version of the PostGIS schema this Waymark writes: the number of its latest
    /// migration (`waymark.schema_migration`).
    public static var currentSchemaVersion: Int { PostGISSchema.currentVersion }

    /// The schema version the server's database has (0: none yet).
    public func schemaVersion() async throws -> Int {
        let exists = try await run("SELECT to_regclass('waymark.schema_migration') IS NOT NULL")
        for row in exists where try row.decode(Bool.self) == false { return 0 }
        for row in try await run("SELECT coalesce(max(version), 0)::bigint FROM waymark.schema_migration") {
            return Int(try row.decode(Int64.self))
        }
        return 0
    }

    /// Applies the migrations this database lacks, one transaction each, one process at a time
    /// (an advisory lock: fifty recorders starting together migrate once).
    func migrate() async throws {
        try await run(sql: "SELECT pg_advisory_lock(hashtext('waymark.schema'))")
        // A migration that throws closes the connection (``open(_:)``), which ends the lock.
        try await run(sql: "CREATE SCHEMA IF NOT EXISTS waymark")
        try await run(
            sql: """
                CREATE TABLE IF NOT EXISTS waymark.schema_migration (
                  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
        let have = try await schemaVersion()
        if have > PostGISSchema.currentVersion {
            throw PostGISError(
                address: address.description,
                message: "has Waymark's PostGIS schema v\(have), from a newer Waymark than this one (it knows up to "
                    + "v\(PostGISSchema.currentVersion)); use that Waymark, or a database of its own")
        }
        for migration in PostGISSchema.migrations where migration.version > have {
            try await transaction {
                for statement in migration.statements { try await run(sql: statement) }
                try await run(
                    "INSERT INTO waymark.schema_migration (version, name) VALUES (\(migration.version), \(migration.name))"
                )
            }
        }
        try await run(sql: "SELECT pg_advisory_unlock(hashtext('waymark.schema'))")
    }

    // MARK: - Forwarding

    /// Where a session stands on this server.
    public struct Acknowledged: Sendable, Hashable {
        /// The server's id for it.
        public var id: Int64
        /// The highest sequence number it holds (−1: none).
        public var lastSequence: Int64
    }

    /// Writes (or updates) `session`'s row: its outcome, end, label and device follow the local
    /// store's. Returns where the session stands here.
    public func upsert(_ session: TransferSession) async throws -> Acknowledged {
        do {
            // An UPDATE first: an INSERT … ON CONFLICT would use up a number of the identity
            // each time, and the server's session numbers would skip.
            for row in try await run(
                """
                UPDATE waymark.session SET ended_at = \(session.endedAt), duration = \(session.duration),
                  outcome = \(session.outcome), outcome_detail = \(session.outcomeDetail), label = \(session.label),
                  device = \(session.device), forwarded_at = now()
                WHERE uuid = \(session.uuid)::uuid
                RETURNING id, last_seq
                """)
            {
                let (id, last) = try row.decode((Int64, Int64).self)
                return Acknowledged(id: id, lastSequence: last)
            }
            let rows = try await run(
                """
                INSERT INTO waymark.session (uuid, device, host, pid, kind, source, settings, scenario, created_at,
                  epoch, ended_at, duration, outcome, outcome_detail, label)
                VALUES (\(session.uuid)::uuid, \(session.device), \(session.host), \(session.pid), \(session.kind),
                  \(session.source), \(session.settings), \(session.scenario), \(session.createdAt), \(session.epoch),
                  \(session.endedAt), \(session.duration), \(session.outcome), \(session.outcomeDetail), \(session.label))
                ON CONFLICT (uuid) DO UPDATE SET ended_at = EXCLUDED.ended_at, duration = EXCLUDED.duration,
                  outcome = EXCLUDED.outcome, outcome_detail = EXCLUDED.outcome_detail, label = EXCLUDED.label,
                  device = EXCLUDED.device, forwarded_at = now()
                RETURNING id, last_seq
                """)
            for row in rows {
                let (id, last) = try row.decode((Int64, Int64).self)
                return Acknowledged(id: id, lastSequence: last)
            }
            throw PostGISError(address: address.description, message: "returned no row for session \(session.uuid)")
        } catch {
            throw PostGISError(error, address: address)
        }
    }

    /// Sends the rows of `session` that this server lacks, from `store`, a page per
    /// transaction; `progress` is told the rows sent after each page. Returns where the session
    /// stands here afterwards. A cut link throws a transient ``PostGISError`` with every
    /// committed page kept: call it again to go on.
    ///
    /// With `lanes` above 1, a session of more than one page is written over that many
    /// connections at once (the server's work on a page, its indexes above all, runs on a core
    /// of its own per connection): pages may then commit out of order, so a page moves
    /// `last_seq` only over pages that have all committed (``PageLedger``), and a cut leaves
    /// at worst pages past `last_seq` that the next push sends again, which the key keeps once.
    public func push(
        _ session: TransferSession, from store: SessionStore, pageSize: Int = 8192, lanes: Int = 2,
        acknowledged known: Acknowledged? = nil, progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> Acknowledged {
        // `known`: what ``upsert(_:)`` just returned for this session, which need not be asked again.
        var acknowledged: Acknowledged
        if let known { acknowledged = known } else { acknowledged = try await upsert(session) }
        var extra: [PostGISStore] = []
        let outcome: Result<Acknowledged, any Error>
        do {
            // The next page is read from the local store while the server writes this one.
            let id = session.id
            func read(after: Int64) -> Task<TransferPage, any Error> {
                Task { try store.transferPage(session: id, after: after, limit: pageSize) }
            }
            var next = read(after: acknowledged.lastSequence)
            var writers: [PostGISStore] = [self]
            var inFlight: [Task<Void, any Error>?] = [nil]
            let ledger = PageLedger()
            var index = 0
            var last = acknowledged.lastSequence
            do {
                while true {
                    let page = try await next.value
                    guard let pageLast = page.last else { break }
                    next = read(after: pageLast)
                    // A second page: the other lanes open (a lane that cannot is done without).
                    if index == 1, lanes > 1, extra.isEmpty {
                        for _ in 1..<lanes {
                            guard let lane = try? await PostGISStore.open(address, deadline: deadline) else { break }
                            extra.append(lane)
                            writers.append(lane)
                            inFlight.append(nil)
                        }
                    }
                    let lane = index % writers.count
                    if let previous = inFlight[lane] { try await previous.value }
                    let writer = writers[lane]
                    let number = index
                    let epoch = session.epoch
                    let serverID = acknowledged.id
                    ledger.add(number, last: pageLast)
                    inFlight[lane] = Task {
                        try await writer.writePage(page, session: serverID, epoch: epoch) { ledger.mark(for: number) }
                        ledger.committed(number)
                        progress(page.count)
                    }
                    index += 1
                    last = pageLast
                }
                for task in inFlight { try await task?.value }
            } catch {
                // What is in flight ends (commits or fails) before the error goes up.
                next.cancel()
                for task in inFlight { _ = try? await task?.value }
                throw error
            }
            if writers.count > 1 {
                // Pages that committed before an earlier one did moved `last_seq` short of them.
                try await run(
                    "UPDATE waymark.session SET last_seq = greatest(last_seq, \(last)) WHERE id = \(acknowledged.id)")
            }
            acknowledged.lastSequence = last
            outcome = .success(acknowledged)
        } catch {
            outcome = .failure(error)
        }
        // The extra lanes close however the push ended.
        for lane in extra { await lane.close() }
        switch outcome {
        case .success(let acknowledged): return acknowledged
        case .failure(let error as StoreError): throw error
        case .failure(let error): throw PostGISError(error, address: address)
        }
    }

    /// Writes one page of a push on this connection; the page's transaction moves `last_seq`
    /// to what `mark` says just before it commits (nil: not at all).
    func writePage(_ page: TransferPage, session id: Int64, epoch: Double, mark: @Sendable () -> Int64?)
        async throws
    {
        try await stageTables()
        try await write(page, session: id, epoch: epoch, mark: mark)
    }

    /// The temporary tables pages are copied into, made once per connection.
    private func stageTables() async throws {
        guard !staged else { return }
        let columns = PostGISSchema.locationColumns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
        try await run(
            sql: """
                CREATE TEMPORARY TABLE IF NOT EXISTS stage_location (seq bigint, origin_id integer, \(columns))
                ON COMMIT DELETE ROWS
                """)
        try await run(
            sql: """
                CREATE TEMPORARY TABLE IF NOT EXISTS stage_event (seq bigint, "offset" double precision, name text,
                  data text) ON COMMIT DELETE ROWS
                """)
        staged = true
    }

    private func originID(kind: String, name: String) async throws -> Int32 {
        let key = kind + "\u{0}" + name
        if let id = origins[key] { return id }
        try await run(
            "INSERT INTO waymark.origin (kind, name) VALUES (\(kind), \(name)) ON CONFLICT (kind, name) DO NOTHING")
        for row in try await run("SELECT id FROM waymark.origin WHERE kind = \(kind) AND name = \(name)") {
            let id = try row.decode(Int32.self)
            origins[key] = id
            return id
        }
        throw PostGISError(address: address.description, message: "has no origin \(kind) \(name) after adding it")
    }

    /// Writes one page in one transaction: its month partitions first (their own transaction),
    /// then its rows, and the session's `last_seq`.
    ///
    /// Locations are `COPY`ed straight into `location`, with their delivery time and point made
    /// here (`DirectRow`): a row that is already there (a page sent again after a lost
    /// acknowledgement) breaks the table's key, and the page is then written again through a
    /// temporary table with `ON CONFLICT DO NOTHING`, which keeps what is there. Either way the
    /// key (session, sequence number, delivery time) stores a row once.
    private func write(_ page: TransferPage, session id: Int64, epoch: Double, mark: @Sendable () -> Int64?)
        async throws
    {
        if let direct = DirectRow.Layout.transfer, direct.fits(page.locations, epoch: epoch) {
            do {
                try await write(page, session: id, epoch: epoch, direct: direct, mark: mark)
                directPages += 1
                return
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                // Some of it is there already: written as a re-send below.
                resentPages += 1
            }
        }
        try await write(page, session: id, epoch: epoch, direct: nil, mark: mark)
    }

    private func write(
        _ page: TransferPage, session id: Int64, epoch: Double, direct: DirectRow.Layout?,
        mark: @Sendable () -> Int64?
    ) async throws {
        let offsetColumn = StoreSchema.transferLocationColumns.firstIndex { $0.name == "offset" } ?? 0
        var origins: [Int32] = []
        origins.reserveCapacity(page.locations.count)
        var first = Double.infinity
        var last = -Double.infinity
        // A page's rows mostly share one origin: it is looked up once per run of them.
        var origin: (kind: String, name: String, id: Int32)?
        for location in page.locations {
            if let origin, origin.kind == location.originKind, origin.name == location.originName {
                origins.append(origin.id)
            } else {
                let id = try await originID(kind: location.originKind, name: location.originName)
                origin = (location.originKind, location.originName, id)
                origins.append(id)
            }
            if case .real(let offset) = location.values[offsetColumn] {
                first = min(first, offset)
                last = max(last, offset)
            } else if case .integer(let offset) = location.values[offsetColumn] {
                first = min(first, Double(offset))
                last = max(last, Double(offset))
            }
        }
        if first <= last {
            let months = Self.month(of: epoch + first)...Self.month(of: epoch + last)
            if !months.allSatisfy({ ensuredMonths.contains($0) }) {
                try await run(
                    "SELECT waymark.ensure_partitions(to_timestamp(\(epoch + first)), to_timestamp(\(epoch + last)))"
                )
                // Partitions are never made twice; this connection need not ask for them again.
                if months.count <= 1200 { ensuredMonths.formUnion(months) }
            }
        }
        let originIDs = origins
        let names = PostGISSchema.locationColumns.map(\.name).joined(separator: ", ")
        try await transaction {
            if let direct, !page.locations.isEmpty {
                let locations = page.locations
                // `location` is `waymark.location`: the connection's path begins with the schema.
                try await copy(
                    into: "location",
                    ["session_id", "seq", "at", "geom", "origin_id"] + StoreSchema.transferLocationColumns.map(\.name),
                    count: locations.count
                ) { i, buffer in
                    direct.row(
                        session: id, epoch: epoch, sequence: locations[i].sequence, origin: originIDs[i],
                        locations[i].values, into: &buffer)
                }
            } else if !page.locations.isEmpty {
                let locations = page.locations
                // postgres-nio quotes each column's name itself.
                try await copy(
                    into: "stage_location", ["seq", "origin_id"] + StoreSchema.transferLocationColumns.map(\.name),
                    count: locations.count
                ) { i, buffer in
                    CopyText.row(
                        sequence: locations[i].sequence, origin: originIDs[i], locations[i].values, into: &buffer)
                }
                try await run(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO waymark.location (session_id, seq, at, geom, origin_id, \(names))
                            SELECT $1, seq, to_timestamp($2 + "offset"),
                              ST_SetSRID(ST_MakePoint(longitude, latitude, coalesce(altitude, 'NaN'),
                                coalesce("time", 'NaN')), 4326),
                              origin_id, \(names)
                            FROM stage_location ORDER BY seq
                            ON CONFLICT DO NOTHING
                            """, binds: Self.binds(id, epoch))
                )
            }
            if !page.events.isEmpty {
                let events = page.events
                try await copy(into: "stage_event", ["seq", "offset", "name", "data"], count: events.count) {
                    i, buffer in
                    CopyText.event(events[i], into: &buffer)
                }
                try await run(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO waymark.event (session_id, seq, "offset", name, data)
                            SELECT $1, seq, "offset", name, data FROM stage_event ORDER BY seq
                            ON CONFLICT DO NOTHING
                            """, binds: Self.binds(id))
                )
            }
            if let lastSeq = mark() {
                try await run("UPDATE waymark.session SET last_seq = greatest(last_seq, \(lastSeq)) WHERE id = \(id)")
            }
        }
    }

    /// `COPY table (columns) FROM STDIN` of `count` rows, each written by `row` in the text
    /// format, sent in pieces of about 240 KiB; failed at once if the connection closes.
    private func copy(
        into table: String, _ columns: [String], count: Int,
        row: @escaping @Sendable (Int, inout ByteBuffer) -> Void
    ) async throws {
        let connection = self.connection
        let logger = self.logger
        try await closeWatch.guarded {
            try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                var buffer = ByteBuffer()
                buffer.reserveCapacity(256 * 1024)
                for i in 0..<count {
                    row(i, &buffer)
                    if buffer.readableBytes > 240 * 1024 {
                        try await writer.write(buffer)
                        buffer.clear()
                    }
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
            }
        }
    }

    private static func binds(_ id: Int64, _ epoch: Double? = nil) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(id)
        if let epoch { binds.append(epoch) }
        return binds
    }

    /// The number of rows (locations and events) this server holds of the session `uuid`, and
    /// its id here (nil when it has none).
    public func rowCount(uuid: String) async throws -> (id: Int64, rows: Int)? {
        do {
            for row in try await run(
                """
                SELECT s.id, (SELECT count(*) FROM waymark.location l WHERE l.session_id = s.id)
                  + (SELECT count(*) FROM waymark.event e WHERE e.session_id = s.id)
                FROM waymark.session s WHERE s.uuid = \(uuid)::uuid
                """)
            {
                let (id, rows) = try row.decode((Int64, Int64).self)
                return (id, Int(rows))
            }
            return nil
        } catch {
            throw PostGISError(error, address: address)
        }
    }
}

/// Fails the operations in flight on a connection as soon as it closes. postgres-nio (1.33)
/// leaves a row sequence being read waiting for ever when the server or the link cuts the
/// connection mid-result; a forwarder must instead see the cut and try again.
final class CloseWatch: Sendable {
    private struct State {
        var closed = false
        var next = 0
        var waiting: [Int: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())
    private let connection: PostgresConnection
    private let deadline: PostGISStore.Deadline?

    init(_ connection: PostgresConnection, deadline: PostGISStore.Deadline?) {
        self.connection = connection
        self.deadline = deadline
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            let waiting = self.state.withLock { s -> [@Sendable () -> Void] in
                s.closed = true
                defer { s.waiting = [:] }
                return Array(s.waiting.values)
            }
            for fail in waiting { fail() }
        }
    }

    struct Closed: Error, CustomStringConvertible {
        var description: String { "the connection was closed (the server or the link went away)" }
    }

    /// Runs `body`; if the connection closes first, throws ``Closed`` at once (and leaves
    /// `body`, cancelled, to end as it may).
    func guarded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let resumed = Mutex(false)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = resumed.withLock { r -> Bool in
                    defer { r = true }
                    return !r
                }
                if first { continuation.resume(with: result) }
            }
            let task = Task {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
            }
            let id = state.withLock { s -> Int? in
                guard !s.closed else { return nil }
                s.next += 1
                s.waiting[s.next] = {
                    task.cancel()
                    finish(.failure(Closed()))
                }
                return s.next
            }
            guard let id else {
                task.cancel()
                finish(.failure(Closed()))
                return
            }
            // Past the deadline, the connection is closed: this operation and any other in
            // flight fail as on a cut.
            let watchdog = deadline.map { deadline in
                Task { [connection] in
                    do { try await deadline.sleep(deadline.limit) } catch { return }
                    connection.close().whenComplete { _ in }
                }
            }
            Task { [self] in
                _ = await task.result
                watchdog?.cancel()
                state.withLock { _ = $0.waiting.removeValue(forKey: id) }
            }
        }
    }
}

/// PostgreSQL's COPY text format: tab-separated, `\N` for NULL, backslash escapes.
enum CopyText {
    static func row(sequence: Int64, origin: Int32, _ values: [TransferValue], into buffer: inout ByteBuffer) {
        integer(sequence, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\t"))
        integer(Int64(origin), into: &buffer)
        for value in values {
            buffer.writeInteger(UInt8(ascii: "\t"))
            self.value(value, into: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    static func event(_ event: TransferEvent, into buffer: inout ByteBuffer) {
        integer(event.sequence, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\t"))
        value(.real(event.offset), into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\t"))
        text(event.name, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\t"))
        text(event.data, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    static func value(_ value: TransferValue, into buffer: inout ByteBuffer) {
        if case .text(let s) = value {
            text(s, into: &buffer)
        } else {
            buffer.writeCopyBytes(bound: CopyBytes.numberBound) { _ = $0.field(value) }
        }
    }

    /// `value` as one field of a row, as a string.
    static func field(_ value: TransferValue) -> String {
        var buffer = ByteBuffer()
        self.value(value, into: &buffer)
        return buffer.readString(length: buffer.readableBytes) ?? ""
    }

    /// The decimal digits of `v`, written straight into the buffer.
    static func integer(_ v: Int64, into buffer: inout ByteBuffer) {
        buffer.writeCopyBytes(bound: CopyBytes.numberBound) { $0.integer(v) }
    }

    static func text(_ s: String, into buffer: inout ByteBuffer) {
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            case 0: break  // PostgreSQL text cannot hold NUL
            default: buffer.writeInteger(byte)
            }
        }
    }
}
