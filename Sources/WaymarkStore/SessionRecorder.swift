import Dispatch
import GRDB
import GRDBSQLite
import Synchronization
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
    /// Called on the recording's thread after a commit that waited long enough for another
    /// process's lock to be reported (``LockWaiting``), with how long it waited.
    public var onLockReleased: ((Duration) -> Void)?
    /// Locations committed so far.
    public var committedLocations: Int { shared.state.withLock { $0.committedLocations } }

    /// Events recorded and not yet sent, already in the rows' form.
    private var pending: PreparedBatch
    private let batchSize: Int
    private let writer = BatchWriter()
    private let shared = Shared()
    private let inFlight = DispatchSemaphore(value: 2)
    private var failureReported = false
    /// Origin ids by kind and name, as stored in `origin`, and the last one used.
    private var origins: [String: Int64] = [:]
    /// The last origin's file or device (the point index differs from fix to fix), and its row.
    private var lastOrigin: (isFile: Bool, name: UInt32, id: Int64)?

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
        switch mode {
        case .durable: batchSize = 1
        case .batched(let n): batchSize = max(1, n)
        }
        pending = PreparedBatch(session: id, first: 0, capacity: batchSize)
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
        do {
            if case .fix(let f) = event.kind, let location = f.delivered {
                pending.appendLocation(
                    location, record: f, offset: event.offset, origin: try originID(location.provenance))
            } else {
                pending.appendEvent(event)
            }
        } catch {
            setFailure(StoreError(error, path: store.path))
            reportFailure()
            return false
        }
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
        guard pending.count > 0 else { return }
        let batch = pending
        pending = PreparedBatch(session: id, first: batch.first + Int64(batch.count), capacity: batchSize)
        guard failure == nil else { return }
        let writer = self.writer
        let shared = self.shared
        let path = store.path
        if mode == .durable {
            do {
                let n = try store.queue.writeWithoutTransaction { db in try writer.write(batch, db) }
                shared.state.withLock { $0.committedLocations += n }
                if let waited = store.lockWaiting.takeNoticedWait() { onLockReleased?(waited) }
            } catch {
                setFailure(StoreError(error, path: path))
            }
            return
        }
        inFlight.wait()
        let inFlight = self.inFlight
        store.queue.asyncWriteWithoutTransaction { db in
            defer { inFlight.signal() }
            guard shared.state.withLock({ $0.failure == nil }) else { return }
            do {
                let n = try writer.write(batch, db)
                shared.state.withLock { $0.committedLocations += n }
            } catch {
                shared.state.withLock { if $0.failure == nil { $0.failure = StoreError(error, path: path) } }
            }
        }
    }

    private func setFailure(_ error: StoreError) {
        shared.state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    private func reportFailure() {
        guard !failureReported, let failure else { return }
        failureReported = true
        onFailure?(failure)
    }

    /// The `origin` row of a fix's file or device, created the first time (a rare synchronous
    /// write, ordered before the batches that use it by the store's serial queue).
    private func originID(_ provenance: Provenance) throws -> Int64 {
        let origin = provenance.origin
        if let last = lastOrigin, last.isFile == origin.isFile, last.name == origin.name { return last.id }
        let (kind, name): (String, String)
        switch provenance.source {
        case .file(let path, _): (kind, name) = ("file", path)
        case .gpsd(let device): (kind, name) = ("gpsd", device)
        }
        let key = kind + "\u{0}" + name
        let id: Int64
        if let known = origins[key] {
            id = known
        } else {
            id = try store.queue.write { db in
                try db.execute(sql: "INSERT OR IGNORE INTO origin (kind, name) VALUES (?, ?)", arguments: [kind, name])
                return try Int64.fetchOne(
                    db, sql: "SELECT id FROM origin WHERE kind = ? AND name = ?", arguments: [kind, name])!
            }
            origins[key] = id
        }
        lastOrigin = (origin.isFile, origin.name, id)
        return id
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
                setFailure(StoreError(error, path: store.path))
                reportFailure()
            }
        }
        if let failure = self.failure { throw failure }
    }
}

/// A batch of events in the form of the rows they become: each delivered fix as the values of
/// its `location` columns (prepared on the recording's thread), anything else as the event.
struct PreparedBatch: Sendable {
    let session: Int64
    /// The sequence number of the first entry.
    let first: Int64
    /// Per entry, in order: a location row's index (0, 1, …), or −1 − the index of an event.
    private(set) var entries: [Int32] = []
    private(set) var events: [AuditEvent] = []
    /// The location rows' column values after `id`: ``columns`` per row, as bit patterns.
    private(set) var values: [UInt64] = []
    /// What each value is: 0 NULL, 1 integer, 2 real.
    private(set) var kinds: [UInt8] = []
    private(set) var locationCount = 0

    /// The `location` columns after `id`.
    static let columns = 30

    init(session: Int64, first: Int64, capacity: Int) {
        self.session = session
        self.first = first
        entries.reserveCapacity(capacity)
        values.reserveCapacity(capacity * Self.columns)
        kinds.reserveCapacity(capacity * Self.columns)
    }

    var count: Int { entries.count }

    mutating func appendEvent(_ event: AuditEvent) {
        entries.append(-1 - Int32(events.count))
        events.append(event)
    }

    mutating func appendLocation(_ l: Location, record f: AuditEvent.FixRecord, offset: Duration, origin: Int64) {
        entries.append(Int32(locationCount))
        locationCount += 1
        real(offset.inSeconds)
        real(l.timestamp.timeIntervalSince1970)
        real(l.coordinate.latitude)
        real(l.coordinate.longitude)
        let validAltitude = l.hasValidAltitude
        real(validAltitude ? l.altitude : nil)
        real(validAltitude ? l.ellipsoidalAltitude : nil)
        real(l.horizontalAccuracy)
        real(validAltitude ? l.verticalAccuracy : nil)
        real(l.speed >= 0 ? l.speed : nil)
        real(l.speed >= 0 && l.speedAccuracy >= 0 ? l.speedAccuracy : nil)
        real(l.course >= 0 ? l.course : nil)
        real(l.course >= 0 && l.courseAccuracy >= 0 ? l.courseAccuracy : nil)
        let p = l.provenance
        integer(StoreCodes.code(p.fixMode, in: StoreCodes.fixMode))
        integer(p.satellitesUsed.map(Int64.init))
        real(p.hdop)
        real(p.vdop)
        real(p.pdop)
        integer(StoreCodes.code(p.differential, in: StoreCodes.differential))
        var flags: Int64 = p.isSimulatedBySoftware ? 1 : 0
        if p.speedIsDerived { flags |= 2 }
        if p.courseIsDerived { flags |= 4 }
        if f.indicator { flags |= 8 }
        flags |= StoreCodes.code(f.positioning ?? .satellite, in: StoreCodes.positioning) << 4
        integer(flags)
        integer(origin)
        if p.origin.isFile { integer(Int64(p.origin.index)) } else { integer(nil) }
        integer(Int64(f.index))
        integer(Int64(f.segment))
        integer(StoreCodes.code(f.appState, in: StoreCodes.appState))
        integer(StoreCodes.code(f.reason, in: StoreCodes.reason))
        integer(StoreCodes.code(f.authorization, in: StoreCodes.authorization))
        integer(StoreCodes.code(f.accuracy, in: StoreCodes.accuracy))
        let moved = f.coordinate != l.coordinate
        real(moved ? f.coordinate.latitude : nil)
        real(moved ? f.coordinate.longitude : nil)
        real(f.backgroundTimeRemaining?.inSeconds)
    }

    @inline(__always) private mutating func real(_ v: Double?) {
        if let v, v.isFinite {
            values.append(v.bitPattern)
            kinds.append(2)
        } else {
            values.append(0)
            kinds.append(0)
        }
    }

    @inline(__always) private mutating func integer(_ v: Int64?) {
        if let v {
            values.append(UInt64(bitPattern: v))
            kinds.append(1)
        } else {
            values.append(0)
            kinds.append(0)
        }
    }
}

/// Writes prepared batches; used only on the store's serial queue.
final class BatchWriter: @unchecked Sendable {
    private let encoder = AuditFieldEncoder()

    private static let eventSQL = "INSERT INTO event (id, offset, name, data) VALUES (?, ?, ?, ?)"
    private static let locationColumns = """
        id, offset, time, latitude, longitude, altitude, ellipsoidal_altitude, horizontal_accuracy, vertical_accuracy,
        speed, speed_accuracy, course, course_accuracy, fix_mode, satellites, hdop, vdop, pdop, differential, flags,
        origin_id, origin_index, fix_index, segment, app_state, reason, authorization, accuracy_authorization,
        source_latitude, source_longitude, background_time_remaining
        """
    private static let locationParameters = Int32(PreparedBatch.columns + 1)
    /// Locations inserted by one statement when a batch has that many in a row: SQLite then
    /// runs one program for them, with its cursor kept at the end of the table.
    private static let rowsPerInsert = 64
    private static let oneLocationSQL = locationSQL(rows: 1)
    private static let manyLocationsSQL = locationSQL(rows: rowsPerInsert)

    private static func locationSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: Int(locationParameters)).joined(separator: ", ") + ")"
        return "INSERT INTO location (\(locationColumns)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Writes `batch` in one transaction. Returns the number of locations.
    func write(_ batch: PreparedBatch, _ db: Database) throws -> Int {
        // One event is one statement, which SQLite commits on its own: no BEGIN and COMMIT to run.
        if batch.count == 1 { return try insert(batch, db) }
        try db.execute(sql: "BEGIN IMMEDIATE")
        do {
            let locations = try insert(batch, db)
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

    private func insert(_ batch: PreparedBatch, _ db: Database) throws -> Int {
        let e = try db.cachedStatement(sql: Self.eventSQL).sqliteStatement
        let one = try db.cachedStatement(sql: Self.oneLocationSQL).sqliteStatement
        let many = try db.cachedStatement(sql: Self.manyLocationsSQL).sqliteStatement
        let binder = Binder(db: db)
        let entries = batch.entries
        var index = 0
        while index < entries.count {
            let key = StoreSchema.key(batch.session, batch.first + Int64(index))
            let entry = entries[index]
            if entry < 0 {
                let event = batch.events[Int(-1 - entry)]
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
            if index + Self.rowsPerInsert <= entries.count, entries[index + Self.rowsPerInsert - 1] >= 0,
                entries[index..<index + Self.rowsPerInsert].allSatisfy({ $0 >= 0 })
            {
                binder.statement = many
                for row in 0..<Self.rowsPerInsert {
                    bindLocation(
                        batch, row: Int(entries[index + row]), key: key + Int64(row), to: binder,
                        base: Int32(row) * Self.locationParameters)
                }
                try binder.step()
                index += Self.rowsPerInsert
                continue
            }
            binder.statement = one
            bindLocation(batch, row: Int(entry), key: key, to: binder, base: 0)
            try binder.step()
            index += 1
        }
        return batch.locationCount
    }

    @inline(__always)
    private func bindLocation(_ batch: PreparedBatch, row: Int, key: Int64, to b: Binder, base: Int32) {
        sqlite3_bind_int64(b.statement, base + 1, key)
        let start = row * PreparedBatch.columns
        batch.values.withUnsafeBufferPointer { values in
            batch.kinds.withUnsafeBufferPointer { kinds in
                for column in 0..<PreparedBatch.columns {
                    let parameter = base + Int32(column) + 2
                    switch kinds[start + column] {
                    case 1: sqlite3_bind_int64(b.statement, parameter, Int64(bitPattern: values[start + column]))
                    case 2: sqlite3_bind_double(b.statement, parameter, Double(bitPattern: values[start + column]))
                    default: sqlite3_bind_null(b.statement, parameter)
                    }
                }
            }
        }
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
