import Dispatch
import GRDB
import GRDBSQLite
import Synchronization
import Waymark

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes one session's audit events, and the locations they deliver, into the store.
///
/// Add it to a ``Waymark/Simulation`` as its first observer (or call ``record(_:)`` before
/// anything else sees an event), so that an event is in the store before it is shown.
///
/// Two commit policies (``Mode``):
/// - **durable** (live recording, paced replay): every event is its own transaction, committed
///   with `synchronous = FULL`, which syncs the WAL before the commit returns. A location that
///   has been logged is on disk: a `kill -9` or a power loss loses nothing acknowledged.
/// - **batched** (replay at `--rate max`): events are committed in transactions of up to `n`
///   with `synchronous = NORMAL` (the WAL is synced at checkpoints, not at every commit), on the
///   store's own thread while the simulation goes on (at most two batches in flight). Call
///   ``commit()`` before showing anything: it waits until everything recorded is committed. A
///   `kill -9` loses at most the batches not yet committed, which nothing has shown; a power
///   loss can also lose the transactions since the last checkpoint, but never leaves the file
///   inconsistent.
public final class SessionRecorder: SimulationObserver {
    public enum Mode: Sendable, Hashable {
        case durable
        case batched(Int)
    }

    public let store: SessionStore
    public let id: Int64
    public let mode: Mode
    /// The first error; after it nothing more is written.
    public var failure: StoreError? { shared.state.withLock { $0.failure } }
    /// Called once, on the recording's thread, with the first error.
    public var onFailure: ((StoreError) -> Void)?
    /// Locations committed so far.
    public var committedLocations: Int { shared.state.withLock { $0.committedLocations } }

    private var pending: [AuditEvent] = []
    /// The sequence number of the first pending event.
    private var nextSequence: Int64 = 0
    private let batchSize: Int
    private let writer: BatchWriter
    private let shared = Shared()
    private let inFlight = DispatchSemaphore(value: 2)
    private var failureReported = false

    struct State {
        var failure: StoreError?
        var committedLocations = 0
    }

    /// What the store's thread and the recording's thread share.
    final class Shared: Sendable {
        let state = Mutex(State())
    }

    init(store: SessionStore, id: Int64, mode: Mode) {
        self.store = store
        self.id = id
        self.mode = mode
        writer = BatchWriter(session: id)
        switch mode {
        case .durable: batchSize = 1
        case .batched(let n): batchSize = max(1, n)
        }
        pending.reserveCapacity(batchSize)
        if case .batched = mode {
            try? store.queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA cache_size = -65536")
            }
        }
    }

    public func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        _ = record(event)
    }

    /// Takes one event; in durable mode it is committed before this returns. Returns false when
    /// the store has failed (as far as is known yet), so that the caller does not show the event.
    @discardableResult
    public func record(_ event: AuditEvent) -> Bool {
        guard failure == nil else {
            reportFailure()
            return false
        }
        pending.append(event)
        if pending.count >= batchSize {
            if mode == .durable { commit() } else { send() }
        }
        return failure == nil
    }

    /// Commits everything recorded so far and waits for it; on error, records the failure (see
    /// ``failure``).
    public func commit() {
        send()
        if mode != .durable {
            // The store's queue is serial: this runs after every batch sent before it.
            store.queue.writeWithoutTransaction { _ in }
        }
        reportFailure()
    }

    /// Hands the pending events to the store's thread (in durable mode, writes them at once).
    private func send() {
        guard failure == nil, !pending.isEmpty else {
            pending.removeAll(keepingCapacity: true)
            return
        }
        let batch = pending
        let first = nextSequence
        nextSequence += Int64(batch.count)
        pending.removeAll(keepingCapacity: true)
        let writer = self.writer
        let shared = self.shared
        let path = store.path
        if mode == .durable {
            do {
                let n = try store.queue.writeWithoutTransaction { db in try writer.write(batch, from: first, db) }
                shared.state.withLock { $0.committedLocations += n }
            } catch {
                shared.state.withLock { if $0.failure == nil { $0.failure = StoreError(error, path: path) } }
            }
            return
        }
        inFlight.wait()
        let inFlight = self.inFlight
        store.queue.asyncWriteWithoutTransaction { db in
            defer { inFlight.signal() }
            guard shared.state.withLock({ $0.failure == nil }) else { return }
            do {
                let n = try writer.write(batch, from: first, db)
                shared.state.withLock { $0.committedLocations += n }
            } catch {
                shared.state.withLock { if $0.failure == nil { $0.failure = StoreError(error, path: path) } }
            }
        }
    }

    private func reportFailure() {
        guard !failureReported, let failure else { return }
        failureReported = true
        onFailure?(failure)
    }

    /// Commits what is pending and closes the session with its outcome. When the store has
    /// failed this still tries to record the outcome, and then throws the failure.
    public func finish(outcome: SessionOutcome, detail: String? = nil, duration: Duration, endedAt: Date) throws {
        commit()
        let failure = self.failure
        let outcome = failure == nil ? outcome : .failed
        let detail = failure.map { $0.message } ?? detail
        do {
            try store.queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(
                    sql: "UPDATE session SET outcome = ?, outcome_detail = ?, duration = ?, ended_at = ? WHERE id = ?",
                    arguments: [outcome.rawValue, detail, duration.inSeconds, endedAt.timeIntervalSince1970, id])
            }
        } catch {
            if failure == nil {
                shared.state.withLock { $0.failure = StoreError(error, path: store.path) }
                reportFailure()
            }
        }
        if let failure = self.failure { throw failure }
    }
}

/// Writes batches of one session's events; used only on the store's serial queue.
final class BatchWriter: @unchecked Sendable {
    private let session: Int64
    private let encoder = AuditFieldEncoder()
    /// Origin ids by kind and name, as stored in `origin`.
    private var origins: [String: Int64] = [:]
    private var lastOrigin: (source: Provenance.Source, id: Int64)?

    init(session: Int64) { self.session = session }

    private static let eventSQL = "INSERT INTO event (id, offset, name, data) VALUES (?, ?, ?, ?)"
    private static let locationColumns = """
        id, offset, time, latitude, longitude, altitude, ellipsoidal_altitude, horizontal_accuracy, vertical_accuracy,
        speed, speed_accuracy, course, course_accuracy, fix_mode, satellites, hdop, vdop, pdop, differential, flags,
        origin_id, origin_index, fix_index, segment, app_state, reason, authorization, accuracy_authorization,
        source_latitude, source_longitude, background_time_remaining
        """
    private static let locationParameters: Int32 = 31
    /// Locations inserted by one statement when a batch has that many in a row: SQLite then
    /// runs one program for them, with its cursor kept at the end of the table.
    private static let rowsPerInsert = 16

    private static let oneLocationSQL = locationSQL(rows: 1)
    private static let manyLocationsSQL = locationSQL(rows: rowsPerInsert)

    private static func locationSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: Int(locationParameters)).joined(separator: ", ") + ")"
        return "INSERT INTO location (\(locationColumns)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Writes `events`, numbered from `first`, in one transaction: a delivered fix as a
    /// `location` row, anything else as an `event` row. Returns the number of locations.
    func write(_ events: [AuditEvent], from first: Int64, _ db: Database) throws -> Int {
        // One event is one statement, which SQLite commits on its own: no BEGIN and COMMIT to run.
        if events.count == 1 { return try insert(events, from: first, db) }
        try db.execute(sql: "BEGIN IMMEDIATE")
        do {
            let locations = try insert(events, from: first, db)
            try db.execute(sql: "COMMIT")
            return locations
        } catch {
            // Most writes happen at COMMIT: say why the system refused them, before the rollback
            // forgets it.
            let explained = (error as? DatabaseError).map { Binder.explained($0, db) } ?? error
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
            throw explained
        }
    }

    private func insert(_ events: [AuditEvent], from first: Int64, _ db: Database) throws -> Int {
        var locations = 0
        let e = try db.cachedStatement(sql: Self.eventSQL).sqliteStatement
        let one = try db.cachedStatement(sql: Self.oneLocationSQL).sqliteStatement
        let many = try db.cachedStatement(sql: Self.manyLocationsSQL).sqliteStatement
        let binder = Binder(db: db)
        var index = 0
        while index < events.count {
            let event = events[index]
            let key = StoreSchema.key(session, first + Int64(index))
            guard case .fix(let f) = event.kind, let location = f.delivered else {
                binder.statement = e
                binder.int(1, key)
                binder.double(2, event.offset.inSeconds)
                binder.text(3, event.name)
                encoder.withFields(of: event) { binder.text(4, $0) }
                try binder.step()
                index += 1
                continue
            }
            // A run of delivered fixes: as many whole statements of several rows as fit.
            if index + Self.rowsPerInsert <= events.count,
                events[index..<index + Self.rowsPerInsert].allSatisfy(\.isDelivery)
            {
                binder.statement = many
                for row in 0..<Self.rowsPerInsert {
                    let event = events[index + row]
                    guard case .fix(let f) = event.kind, let location = f.delivered else { continue }
                    try bind(
                        location, record: f, offset: event.offset, key: key + Int64(row), to: binder,
                        base: Int32(row) * Self.locationParameters, db)
                }
                try binder.step()
                index += Self.rowsPerInsert
                locations += Self.rowsPerInsert
                continue
            }
            binder.statement = one
            try bind(location, record: f, offset: event.offset, key: key, to: binder, base: 0, db)
            try binder.step()
            index += 1
            locations += 1
        }
        return locations
    }

    private func originID(_ source: Provenance.Source, _ db: Database) throws -> Int64 {
        if let last = lastOrigin, last.source == source { return last.id }
        let (kind, name): (String, String)
        switch source {
        case .file(let path, _): (kind, name) = ("file", path)
        case .gpsd(let device): (kind, name) = ("gpsd", device)
        }
        let id: Int64
        if let known = origins[kind + "\u{0}" + name] {
            id = known
        } else {
            try db.execute(sql: "INSERT OR IGNORE INTO origin (kind, name) VALUES (?, ?)", arguments: [kind, name])
            id = try Int64.fetchOne(
                db, sql: "SELECT id FROM origin WHERE kind = ? AND name = ?", arguments: [kind, name])!
            origins[kind + "\u{0}" + name] = id
        }
        // The point index differs from fix to fix; only the file or device matters here.
        lastOrigin = (source, id)
        return id
    }

    private func bind(
        _ l: Location, record f: AuditEvent.FixRecord, offset: Duration, key: Int64, to binder: Binder, base: Int32,
        _ db: Database
    ) throws {
        let origin = try originID(l.provenance.source, db)
        binder.base = base
        defer { binder.base = 0 }
        Self.bind(l, record: f, offset: offset, origin: origin, to: binder)
        binder.int(1, key)
    }

    private static func bind(
        _ l: Location, record f: AuditEvent.FixRecord, offset: Duration, origin: Int64, to b: Binder
    ) {
        b.double(2, offset.inSeconds)
        b.double(3, l.timestamp.timeIntervalSince1970)
        b.double(4, l.coordinate.latitude)
        b.double(5, l.coordinate.longitude)
        let validAltitude = l.hasValidAltitude
        b.double(6, validAltitude ? l.altitude : nil)
        b.double(7, validAltitude ? l.ellipsoidalAltitude : nil)
        b.double(8, l.horizontalAccuracy)
        b.double(9, validAltitude ? l.verticalAccuracy : nil)
        b.double(10, l.speed >= 0 ? l.speed : nil)
        b.double(11, l.speed >= 0 && l.speedAccuracy >= 0 ? l.speedAccuracy : nil)
        b.double(12, l.course >= 0 ? l.course : nil)
        b.double(13, l.course >= 0 && l.courseAccuracy >= 0 ? l.courseAccuracy : nil)
        let p = l.provenance
        b.int(14, StoreCodes.code(p.fixMode, in: StoreCodes.fixMode))
        b.int(15, p.satellitesUsed.map(Int64.init))
        b.double(16, p.hdop)
        b.double(17, p.vdop)
        b.double(18, p.pdop)
        b.int(19, StoreCodes.code(p.differential, in: StoreCodes.differential))
        var flags: Int64 = p.isSimulatedBySoftware ? 1 : 0
        if p.speedIsDerived { flags |= 2 }
        if p.courseIsDerived { flags |= 4 }
        if f.indicator { flags |= 8 }
        b.int(20, flags)
        b.int(21, origin)
        if case .file(_, let index) = p.source { b.int(22, Int64(index)) } else { b.int(22, nil) }
        b.int(23, Int64(f.index))
        b.int(24, Int64(f.segment))
        b.int(25, StoreCodes.code(f.appState, in: StoreCodes.appState))
        b.int(26, StoreCodes.code(f.reason, in: StoreCodes.reason))
        b.int(27, StoreCodes.code(f.authorization, in: StoreCodes.authorization))
        b.int(28, StoreCodes.code(f.accuracy, in: StoreCodes.accuracy))
        let moved = f.coordinate != l.coordinate
        b.double(29, moved ? f.coordinate.latitude : nil)
        b.double(30, moved ? f.coordinate.longitude : nil)
        b.double(31, f.backgroundTimeRemaining?.inSeconds)
    }
}

/// Binds values to a prepared statement with SQLite's C API (no boxing), and steps it.
final class Binder {
    let db: Database
    var statement: SQLiteStatement?
    /// Added to every parameter index: the row's place in a statement that inserts several.
    var base: Int32 = 0
    /// SQLITE_TRANSIENT: SQLite copies the bytes before the bind returns.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(db: Database) { self.db = db }

    @inline(__always) func int(_ index: Int32, _ value: Int64?) {
        if let value {
            sqlite3_bind_int64(statement, base + index, value)
        } else {
            sqlite3_bind_null(statement, base + index)
        }
    }

    @inline(__always) func double(_ index: Int32, _ value: Double?) {
        if let value, value.isFinite {
            sqlite3_bind_double(statement, base + index, value)
        } else {
            sqlite3_bind_null(statement, base + index)
        }
    }

    @inline(__always) func text(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, base + index, bytes.baseAddress, Int32(bytes.count), transient)
        }
    }

    @inline(__always) func text(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        _ = sqlite3_bind_text(
            statement, base + index, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
            transient)
    }

    /// Runs the statement once and resets it; throws SQLite's error.
    func step() throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            throw Self.explained(DatabaseError(resultCode: ResultCode(rawValue: code), message: message), db)
        }
    }

    /// `error` with the system's reason added (SQLite's last errno), and a write refused for
    /// want of room (a full disk, a quota, a file size limit) made a "full" error, whichever way
    /// SQLite reported it.
    static func explained(_ error: DatabaseError, _ db: Database) -> DatabaseError {
        let system = sqlite3_system_errno(db.sqliteConnection)
        guard system != 0, error.resultCode == .SQLITE_IOERR || error.resultCode == .SQLITE_FULL else { return error }
        let message = (error.message ?? "SQLite error") + " (\(String(cString: strerror(system))))"
        let full = [ENOSPC, EFBIG, EDQUOT].contains(system)
        return DatabaseError(resultCode: full ? .SQLITE_FULL : error.extendedResultCode, message: message)
    }
}

extension AuditEvent {
    /// A fix that the app received.
    var isDelivery: Bool {
        if case .fix(let f) = kind { return f.delivered != nil }
        return false
    }
}
