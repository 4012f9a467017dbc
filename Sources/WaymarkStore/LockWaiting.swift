import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a store's connection waits while another process holds SQLite's write lock: SQLite's
/// busy handler (`sqlite3_busy_handler`), called each time a statement finds the store locked.
///
/// - **Ordinary** (every command): the statement waits up to ``ordinaryLimit`` (5 s), then fails
///   with ``StoreError/Kind-swift.enum/busy``.
/// - **Patient** (a recording, once ``waitPatiently(onWait:)`` is called): it waits until the
///   lock is released or ``abandon()`` is called (a signal that stops the recording). A
///   recording must not end because another process wrote for a few seconds; what arrives
///   meanwhile waits in the recording's memory, bounded there. `onWait` hears how long it has
///   waited after 1 s, then every 10 s.
///
/// The waits grow from 1 ms to 50 ms, as SQLite's own busy timeout does. `sleep` is injected,
/// so that tests can stand for a long lock without waiting for it.
public final class LockWaiting: Sendable {
    /// How long an ordinary statement waits for the lock.
    public static let ordinaryLimit: Duration = .seconds(5)

    struct State {
        var patient = false
        var onWait: (@Sendable (Duration) -> Void)?
        /// Waited in the current wait (from the handler's first call for a statement).
        var waited: Duration = .zero
        /// When `onWait` is next due, in the current wait.
        var nextNotice: Duration = .seconds(1)
        /// Whether the current wait gave a notice.
        var noticed = false
        /// The last wait that gave a notice, and how long it lasted, until taken.
        var noticedWait: Duration?
    }

    private let state = Mutex(State())
    private let sleep: @Sendable (Duration) -> Void

    public init(sleep: @escaping @Sendable (Duration) -> Void = LockWaiting.realSleep) {
        self.sleep = sleep
    }

    /// Sleeps the calling thread for `d`.
    public static let realSleep: @Sendable (Duration) -> Void = { d in
        let (seconds, attoseconds) = d.components
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var left = timespec()
        while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
    }

    /// From now on, statements wait for the lock until it is released or ``abandon()`` is
    /// called; `onWait` hears of each long wait (on the waiting thread).
    public func waitPatiently(onWait: @escaping @Sendable (Duration) -> Void) {
        state.withLock {
            $0.patient = true
            $0.onWait = onWait
        }
    }

    /// Ends patience (a signal stops the recording), from any thread: a wait longer than the
    /// ordinary limit gives up at its next step (its statement fails as busy), and statements
    /// after it, the recording's last commits, wait the ordinary 5 s.
    public func abandon() {
        state.withLock { $0.patient = false }
    }

    /// How long the last wait that was reported through `onWait` lasted, once; nil when there
    /// was none since the last call.
    public func takeNoticedWait() -> Duration? {
        state.withLock { s in
            defer { s.noticedWait = nil }
            return s.noticedWait
        }
    }

    /// The busy handler: whether the statement that found the store locked should try again,
    /// after a wait. `tries` counts the calls for this statement, from 0.
    func shouldRetry(tries: Int) -> Bool {
        let delays: [Duration] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50].map { .milliseconds($0) }
        let delay = delays[min(tries, delays.count - 1)]
        let (retry, notice) = state.withLock { s -> (Bool, (@Sendable (Duration) -> Void, Duration)?) in
            if tries == 0 {
                s.waited = .zero
                s.nextNotice = .seconds(1)
                s.noticed = false
            }
            if !s.patient && s.waited >= Self.ordinaryLimit { return (false, nil) }
            s.waited += delay
            if s.noticed { s.noticedWait = s.waited }
            guard s.patient, s.waited >= s.nextNotice, let onWait = s.onWait else { return (true, nil) }
            s.nextNotice += .seconds(10)
            s.noticed = true
            s.noticedWait = s.waited
            return (true, (onWait, s.waited))
        }
        if let (onWait, waited) = notice { onWait(waited) }
        if retry { sleep(delay) }
        return retry
    }
}
