import Synchronization
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Store and forward: sessions go from the local SQLite store, where they are always written
/// first, to a PostGIS store, when the link allows (`sessions push`, `record --forward`).
///
/// The local store keeps, per session and target, the last sequence number the target
/// acknowledged and whether the session had ended then (`forwarded`); the target's own
/// `last_seq` is where a push resumes, so a mark lost to a crash costs nothing but a look.
public enum Forwarding {
    /// What one push did.
    public struct Report: Sendable, Hashable {
        /// Sessions looked at, and those already complete at the target (skipped).
        public var sessions = 0
        public var skipped = 0
        /// Rows (locations and events) sent in this push.
        public var rowsSent = 0
        /// Sessions now complete at the target: ended, and every row acknowledged.
        public var complete: [Int64] = []
        public init() {}
    }

    /// What `progress` hears during a push.
    public enum Progress: Sendable {
        /// A session begins: its local id, UUID, and the rows the target lacks.
        case session(id: Int64, uuid: String, backlog: Int)
        /// Rows of it acknowledged.
        case sent(id: Int64, rows: Int)
    }

    /// The rows of `ids` (every session when nil) that `target` has not acknowledged, as
    /// the local store's marks say: what `sessions push --dry-run` and the backlog line show.
    public static func backlog(in store: SessionStore, target: String, ids: [Int64]? = nil) throws -> (
        sessions: Int, rows: Int
    ) {
        var sessions = 0
        var rows = 0
        for session in try store.transferSessions(ids) {
            let mark = try store.forwardMark(session: session.id, target: target)
            if mark?.complete == true { continue }
            let waiting = try store.rowCount(session: session.id, after: mark?.sequence ?? -1)
            if waiting > 0 || mark == nil || session.outcome != "running" { sessions += 1 }
            rows += waiting
        }
        return (sessions, rows)
    }

    /// Pushes the sessions `ids` (every session when nil) that are not yet complete at
    /// `server`, oldest first. A cut link throws with every acknowledged page kept and marked:
    /// pushing again goes on from there.
    public static func push(
        from store: SessionStore, to server: PostGISStore, ids: [Int64]? = nil, now: @Sendable () -> Date,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Report {
        var report = Report()
        let target = server.address.description
        for session in try store.transferSessions(ids) {
            report.sessions += 1
            let mark = try store.forwardMark(session: session.id, target: target)
            if mark?.complete == true {
                report.skipped += 1
                continue
            }
            var current = session
            var announced = false
            while true {
                let ended = current.outcome != SessionOutcome.running.rawValue
                let acknowledged = try await server.upsert(current)
                if !announced {
                    progress(
                        .session(
                            id: current.id, uuid: current.uuid,
                            backlog: try store.rowCount(session: current.id, after: acknowledged.lastSequence)))
                    announced = true
                }
                let sent = Mutex(0)
                let id = current.id
                let result = try await server.push(current, from: store, acknowledged: acknowledged) { rows in
                    sent.withLock { $0 += rows }
                    progress(.sent(id: id, rows: rows))
                }
                report.rowsSent += sent.withLock { $0 }
                try store.setForwardMark(
                    session: current.id, target: target, sequence: result.lastSequence, complete: ended, at: now())
                if ended {
                    report.complete.append(current.id)
                    break
                }
                // A session that ended while its rows went is read again: its final row (outcome,
                // end, duration) goes now, with the rows committed since, rather than the server
                // keeping it as running until a later push.
                guard let fresh = try store.transferSessions([current.id]).first,
                    fresh.outcome != SessionOutcome.running.rawValue
                else { break }
                current = fresh
            }
        }
        return report
    }

    /// Whether `server` holds every row of local session `id`, counted on both sides: what
    /// pruning checks before it deletes the local copy.
    public static func isComplete(_ id: Int64, in store: SessionStore, at server: PostGISStore) async throws -> Bool {
        // Read afresh, and its final row (outcome, end, duration) sent again first: the session
        // may have ended since it was pushed.
        guard let session = try store.transferSessions([id]).first,
            session.outcome != SessionOutcome.running.rawValue
        else { return false }
        _ = try await server.upsert(session)
        guard let remote = try await server.rowCount(uuid: session.uuid) else { return false }
        return remote.rows == (try store.rowCount(session: id))
    }
}

/// Forwards one session while it is being recorded (`record --forward`): every `interval`,
/// what the local store has committed goes to the server; a cut link or a stopped server is
/// retried, waiting longer each time up to `longestWait`. The recording never waits for it.
///
/// Time comes from `sleep`, injected: the command line gives the continuous clock's, tests
/// one that returns at once.
public final class LiveForwarder: Sendable {
    public typealias Sleep = @Sendable (Duration) async throws -> Void

    /// The local store the session is written to.
    public let store: SessionStore
    let session: Int64
    let address: PostGISAddress
    let interval: Duration
    let longestWait: Duration
    /// How long one statement may take before the link is taken for dead (``PostGISStore/Deadline``).
    let operationLimit: Duration
    let sleep: Sleep
    let now: @Sendable () -> Date
    let report: @Sendable (String) -> Void
    private let state = Mutex(State())

    struct State {
        var stopping = false
        var server: PostGISStore?
        var failures = 0
        var permanent: PostGISError?
        var acknowledged: Int64 = -1
    }

    public init(
        store: SessionStore, session: Int64, address: PostGISAddress, interval: Duration = .seconds(1),
        longestWait: Duration = .seconds(30), operationLimit: Duration = .seconds(60), sleep: @escaping Sleep,
        now: @escaping @Sendable () -> Date,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.store = store
        self.session = session
        self.address = address
        self.interval = interval
        self.longestWait = longestWait
        self.operationLimit = operationLimit
        self.sleep = sleep
        self.now = now
        self.report = report
    }

    /// The last sequence number the server acknowledged (−1: none yet).
    public var acknowledged: Int64 { state.withLock { $0.acknowledged } }

    /// One round: connect if need be, and push what is committed. Returns whether it reached
    /// the server.
    @discardableResult
    public func forwardOnce() async -> Bool {
        if state.withLock({ $0.permanent }) != nil { return false }
        do {
            let server: PostGISStore
            if let open = state.withLock({ $0.server }) {
                server = open
            } else {
                server = try await PostGISStore.open(
                    address, deadline: PostGISStore.Deadline(limit: operationLimit, sleep: sleep))
                state.withLock { $0.server = server }
            }
            _ = try await Forwarding.push(from: store, to: server, ids: [session], now: now)
            let mark = try store.forwardMark(session: session, target: address.description)
            let recovered = state.withLock { s -> Int in
                defer { s.failures = 0 }
                s.acknowledged = mark?.sequence ?? s.acknowledged
                return s.failures
            }
            if recovered > 0 { report("forward: \(address) reached again; the backlog is sent") }
            return true
        } catch let error as PostGISError where !error.isTransient {
            state.withLock { $0.permanent = error }
            report("forward: stopped: \(error); `waymark sessions push --to \(address)` sends the session later")
            return false
        } catch {
            let server = state.withLock { s -> PostGISStore? in
                defer { s.server = nil }
                s.failures += 1
                return s.server
            }
            await server?.close()
            let backlog = (try? store.rowCount(session: session, after: acknowledged)) ?? 0
            report("forward: \(error); \(backlog) rows wait in the local store; retrying")
            return false
        }
    }

    /// The wait before the next round: `interval` while the link works, doubling from it after
    /// each failure up to `longestWait`.
    var nextWait: Duration {
        let failures = state.withLock { $0.failures }
        guard failures > 0 else { return interval }
        var wait = interval
        for _ in 0..<min(failures, 16) where wait < longestWait { wait = wait * 2 }
        return min(wait, longestWait)
    }

    /// Forwards until ``stop()``.
    public func run() async {
        while !state.withLock({ $0.stopping }) {
            await forwardOnce()
            if state.withLock({ $0.permanent }) != nil { return }
            do { try await sleep(nextWait) } catch { return }
        }
    }

    public func stop() { state.withLock { $0.stopping = true } }

    /// After the recording ends: up to `attempts` last rounds until the session is complete at
    /// the server. Returns the rows still waiting (0: all forwarded). A session the local store
    /// no longer has (a recording without a fix is not kept) is deleted at the server too.
    public func finish(attempts: Int, uuid: String?) async -> Int {
        stop()
        if let uuid, (try? store.transferSessions([session]))?.isEmpty == true {
            if let server = try? await PostGISStore.open(
                address, deadline: PostGISStore.Deadline(limit: operationLimit, sleep: sleep))
            {
                try? await server.deleteSession(uuid: uuid)
                await server.close()
            }
            return 0
        }
        for attempt in 0..<max(1, attempts) {
            if await forwardOnce(),
                (try? store.forwardMark(session: session, target: address.description))??.complete == true
            {
                break
            }
            if state.withLock({ $0.permanent }) != nil { break }
            if attempt + 1 < attempts { try? await sleep(nextWait) }
        }
        let server = state.withLock { s -> PostGISStore? in
            defer { s.server = nil }
            return s.server
        }
        await server?.close()
        return (try? store.rowCount(session: session, after: acknowledged)) ?? 0
    }
}
