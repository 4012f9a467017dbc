import GRDB
import GRDBSQLite
import Waymark

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
/// - **batched** (replay at `--rate max`): events are committed in transactions of up to `n`,
///   with `synchronous = NORMAL` (the WAL is synced at checkpoints, not at every commit). A
///   `kill -9` loses at most the transaction in progress, which nothing has shown yet (call
///   ``commit()`` before output is written); a power loss can also lose the transactions since
///   the last checkpoint, but never leaves the file inconsistent.
public final class SessionRecorder: SimulationObserver {
    public enum Mode: Sendable, Hashable {
        case durable
        case batched(Int)
    }

    public let store: SessionStore
    public let id: Int64
    public let mode: Mode
    /// The first error; after it nothing more is written.
    public private(set) var failure: StoreError?
    /// Called once, with the first error.
    public var onFailure: ((StoreError) -> Void)?
    /// Locations committed so far.
    public private(set) var committedLocations = 0

    private var pending: [AuditEvent] = []
    private var eventSequence: Int64 = 0
    private var locationSequence: Int64 = 0
    private let encoder = AuditFieldEncoder()
    private let batchSize: Int

    init(store: SessionStore, id: Int64, mode: Mode) {
        self.store = store
        self.id = id
        self.mode = mode
        switch mode {
        case .durable: batchSize = 1
        case .batched(let n): batchSize = max(1, n)
        }
        pending.reserveCapacity(batchSize)
        if case .batched = mode {
            try? store.queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
    }

    public func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        _ = record(event)
    }

    /// Takes one event; in durable mode it is committed before this returns. Returns false when
    /// the store has failed (now or before), so that the caller does not show the event.
    @discardableResult
    public func record(_ event: AuditEvent) -> Bool {
        guard failure == nil else { return false }
        pending.append(event)
        if pending.count >= batchSize { commit() }
        return failure == nil
    }

    /// Commits what is pending; on error, records the failure (see ``failure``).
    public func commit() {
        guard failure == nil, !pending.isEmpty else { return }
        do {
            try write(pending)
            pending.removeAll(keepingCapacity: true)
        } catch {
            pending.removeAll()
            fail(StoreError(error, path: store.path))
        }
    }

    /// Commits what is pending and closes the session with its outcome. When the store has
    /// failed this still tries to record the outcome, and then throws the failure.
    public func finish(outcome: SessionOutcome, detail: String? = nil, duration: Duration, endedAt: Date) throws {
        commit()
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
            if failure == nil { fail(StoreError(error, path: store.path)) }
        }
        if let failure { throw failure }
    }

    private func fail(_ error: StoreError) {
        guard failure == nil else { return }
        failure = error
        onFailure?(error)
    }

    // MARK: - Writing

    private static let eventSQL = "INSERT INTO event (session_id, seq, offset, name, data) VALUES (?, ?, ?, ?, ?)"
    private static let locationSQL = """
        INSERT INTO location (session_id, seq, offset, time, latitude, longitude, altitude, ellipsoidal_altitude,
          horizontal_accuracy, vertical_accuracy, speed, speed_accuracy, course, course_accuracy, fix_mode,
          satellites, hdop, vdop, pdop, differential, simulated, speed_derived, course_derived, origin_kind, origin,
          origin_index, fix_index, segment, app_state, decision, reason)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    private func write(_ events: [AuditEvent]) throws {
        let id = self.id
        let encoder = self.encoder
        var eventSequence = self.eventSequence
        var locationSequence = self.locationSequence
        try store.queue.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let e = try db.cachedStatement(sql: Self.eventSQL).sqliteStatement
                let l = try db.cachedStatement(sql: Self.locationSQL).sqliteStatement
                let binder = Binder(db: db)
                for event in events {
                    binder.statement = e
                    binder.int(1, id)
                    binder.int(2, eventSequence)
                    binder.double(3, event.offset.inSeconds)
                    binder.text(4, event.name)
                    encoder.withFields(of: event) { binder.text(5, $0) }
                    try binder.step()
                    eventSequence += 1
                    guard case .fix(let f) = event.kind, let location = f.delivered else { continue }
                    binder.statement = l
                    Self.bind(location, record: f, offset: event.offset, to: binder)
                    binder.int(1, id)
                    binder.int(2, locationSequence)
                    try binder.step()
                    locationSequence += 1
                }
                return .commit
            }
        }
        committedLocations += Int(locationSequence - self.locationSequence)
        self.eventSequence = eventSequence
        self.locationSequence = locationSequence
    }

    private static func bind(_ l: Location, record f: AuditEvent.FixRecord, offset: Duration, to b: Binder) {
        b.double(3, offset.inSeconds)
        b.double(4, l.timestamp.timeIntervalSince1970)
        b.double(5, l.coordinate.latitude)
        b.double(6, l.coordinate.longitude)
        let validAltitude = l.hasValidAltitude
        b.double(7, validAltitude ? l.altitude : nil)
        b.double(8, validAltitude ? l.ellipsoidalAltitude : nil)
        b.double(9, l.horizontalAccuracy)
        b.double(10, validAltitude ? l.verticalAccuracy : nil)
        b.double(11, l.speed >= 0 ? l.speed : nil)
        b.double(12, l.speed >= 0 && l.speedAccuracy >= 0 ? l.speedAccuracy : nil)
        b.double(13, l.course >= 0 ? l.course : nil)
        b.double(14, l.course >= 0 && l.courseAccuracy >= 0 ? l.courseAccuracy : nil)
        let p = l.provenance
        b.text(15, p.fixMode.rawValue)
        b.int(16, p.satellitesUsed.map(Int64.init))
        b.double(17, p.hdop)
        b.double(18, p.vdop)
        b.double(19, p.pdop)
        b.text(20, p.differential.rawValue)
        b.int(21, p.isSimulatedBySoftware ? 1 : 0)
        b.int(22, p.speedIsDerived ? 1 : 0)
        b.int(23, p.courseIsDerived ? 1 : 0)
        switch p.source {
        case .file(let path, let index):
            b.text(24, "file")
            b.text(25, path)
            b.int(26, Int64(index))
        case .gpsd(let device):
            b.text(24, "gpsd")
            b.text(25, device)
            b.int(26, nil)
        }
        b.int(27, Int64(f.index))
        b.int(28, Int64(f.segment))
        b.text(29, f.appState.rawValue)
        b.text(30, f.decision.rawValue)
        b.text(31, f.reason.rawValue)
    }
}

/// Binds values to a prepared statement with SQLite's C API (no boxing), and steps it.
final class Binder {
    let db: Database
    var statement: SQLiteStatement?
    /// SQLITE_TRANSIENT: SQLite copies the bytes before the bind returns.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(db: Database) { self.db = db }

    @inline(__always) func int(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    @inline(__always) func double(_ index: Int32, _ value: Double?) {
        if let value, value.isFinite {
            sqlite3_bind_double(statement, index, value)
        } else {
            sqlite3_bind_null(statement, index)
        }
    }

    @inline(__always) func text(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), transient)
        }
    }

    @inline(__always) func text(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        _ = sqlite3_bind_text(
            statement, index, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
    }

    /// Runs the statement once and resets it; throws SQLite's error.
    func step() throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
    }
}
