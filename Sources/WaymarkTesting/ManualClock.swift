import Synchronization

/// A clock whose time moves only when a test tells it to.
///
/// `sleep(until:)` suspends until ``advance(by:)`` (or ``advance(to:)``) moves the clock to the
/// deadline or past it; nothing ever waits in real time. Give it to anything generic over
/// `Clock`, such as ``Waymark/Simulation/run(_:clock:rate:isolation:)``, and move time from the
/// test:
///
/// ```swift
/// let clock = ManualClock()
/// let run = Task { try await simulation.run(source, clock: clock, rate: 1) }
/// await clock.waitForSleepers()  // the run waits for its first fix
/// clock.advance(by: .seconds(5))
/// ```
///
/// It starts at ``Instant/zero``. Sleepers whose task is cancelled throw `CancellationError`.
@available(macOS 15.0, iOS 18.0, *)  // Synchronization's Mutex; on Linux, always.
public final class ManualClock: Clock, Sendable {
    /// A point in the clock's time: how far it has been advanced since it started.
    public struct Instant: InstantProtocol, Sendable, Hashable {
        /// Time since the clock started.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        /// The clock's start.
        public static let zero = Instant(offset: .zero)

        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other` (negative when `other` is earlier).
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `a` comes before `b`.
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now = Instant.zero
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var watchers: [Watcher] = []
        /// Sleepers cancelled before they were registered.
        var cancelled: Set<Int> = []
    }

    /// The clock's whole state: `state`'s mutex guards the time, the sleepers and the watchers.
    private let state = Mutex(State())

    /// A clock at ``Instant/zero``.
    public init() {}

    /// The current time.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are suspended in ``sleep(until:tolerance:)`` right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock reaches `deadline` (at once when it already has).
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it sleeps.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resume, watchers) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, Self.takeSatisfiedWatchers(&state))
                }
                if let resume { continuation.resume(with: resume) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration` and wakes every sleeper whose deadline it reaches.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a manual clock never goes backwards")
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            return Self.takeDueSleepers(&state)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock to `instant` (no change when it is already there or past it) and wakes
    /// every sleeper whose deadline it reaches.
    public func advance(to instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            return Self.takeDueSleepers(&state)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Suspends until at least `count` tasks sleep on the clock: a test calls it before
    /// ``advance(by:)`` to know that the code under test has reached its wait.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sleepers.count >= count { return true }
                state.watchers.append(Watcher(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Removes and returns the sleepers whose deadline has come, earliest first.
    private static func takeDueSleepers(_ state: inout State) -> [Sleeper] {
        let due = state.sleepers.filter { $0.value.deadline <= state.now }
        for id in due.keys { state.sleepers[id] = nil }
        return due.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }.map(\.value)
    }

    /// Removes and returns the watchers whose count of sleepers has been reached.
    private static func takeSatisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = state.sleepers.count
        let ready = state.watchers.filter { $0.count <= count }
        state.watchers.removeAll { $0.count <= count }
        return ready.map(\.continuation)
    }
}
