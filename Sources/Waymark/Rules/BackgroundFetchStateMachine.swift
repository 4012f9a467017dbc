/// The result an app's fetch handler reports, as `UIBackgroundFetchResult`.
public enum FetchResult: String, Sendable, Hashable, Codable, CaseIterable {
    case newData, noData, failed
}

/// Background fetch (`setMinimumBackgroundFetchInterval`, deprecated from iOS 13 but still
/// working): a pure state machine.
///
/// It holds no clock and does no I/O; times come with the events. The rules:
///
/// - Fetch needs the `fetch` background mode and an interval other than never, which the app
///   sets (usually at launch). The first wake comes one interval after it is set.
/// - At a wake the system launches a terminated app into the background, or resumes a suspended
///   one, and calls its fetch handler, which has ``budget`` (30 s) to complete.
/// - A wake while the app is on screen is deferred; the fetch runs as soon as the app is in the
///   background, whether it is still running or suspended.
/// - An app the user swiped away is not launched for fetch.
/// - A handler that overruns its budget gets the app terminated, and the next wakes come at
///   twice the spacing.
public struct BackgroundFetchStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// No interval set (never), or no `fetch` mode.
        case disabled
        /// The next wake is due at the offset.
        case waiting(nextWake: Duration)
        /// A wake came while the app was on screen.
        case deferred
        /// The handler runs since the offset.
        case fetching(since: Duration)
    }

    /// What a fetch does to the app before its handler runs.
    public enum Wake: Sendable, Hashable {
        /// It runs already (in the background).
        case none
        /// Resume it from suspension into the background.
        case resume
        /// Launch it into the background.
        case launch
    }

    public enum Event: Sendable, Hashable {
        /// The app sets its minimum interval; nil is never.
        case setInterval(Duration?, at: Duration)
        /// The wake timer fired; `app` is the app's state then.
        case wakeDue(at: Duration, app: AppState, terminatedByUser: Bool)
        /// The wake timer fired while Background App Refresh is unavailable: no fetch, the next
        /// wake one interval later.
        case wakeSkipped(at: Duration)
        /// The app entered the background (it may still run, or be suspended after).
        case appEnteredBackground(at: Duration)
        /// The handler called its completion.
        case completed(FetchResult, at: Duration)
        /// The budget ran out.
        case deadlineDue(at: Duration)
        case appTerminated(at: Duration)
    }

    public enum Action: Sendable, Hashable {
        case scheduleWake(at: Duration)
        case cancelWake
        case deferred
        /// Not launched: the user swiped the app away.
        case skippedUserTerminated
        /// Wake the app as said, call its handler, and set the deadline.
        case begin(Wake, deadline: Duration)
        case completed(FetchResult)
        case cancelDeadline
        /// The handler overran: the app is terminated.
        case expired
    }

    public let hasFetchMode: Bool
    /// The time a handler has.
    public let budget: Duration
    public private(set) var state: State = .disabled
    public private(set) var interval: Duration?
    /// The spacing between wakes, in intervals; it doubles after an overrun.
    public private(set) var spacing = 1

    public init(hasFetchMode: Bool, budget: Duration) {
        self.hasFetchMode = hasFetchMode
        self.budget = budget
    }

    /// A machine in `state` with `interval` set (for tests of every transition).
    init(hasFetchMode: Bool, budget: Duration, state: State, interval: Duration?) {
        self.init(hasFetchMode: hasFetchMode, budget: budget)
        self.state = state
        self.interval = interval
    }

    /// Whether the handler is running.
    public var isFetching: Bool {
        if case .fetching = state { return true }
        return false
    }

    /// The id of the last fetch begun (a completion for another is ignored).
    public private(set) var lastID = 0

    /// The id of the fetch that begins.
    mutating func nextID() -> Int {
        lastID += 1
        return lastID
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (event, state) {
        case (.setInterval(let interval, let now), _):
            self.interval = interval
            guard hasFetchMode, let interval else {
                let wasWaiting = if case .waiting = state { true } else { false }
                if !isFetching { state = .disabled }
                return wasWaiting ? [.cancelWake] : []
            }
            guard case .disabled = state else { return [] }
            state = .waiting(nextWake: now + interval)
            return [.scheduleWake(at: now + interval)]

        case (.wakeDue(let now, let app, let byUser), .waiting):
            switch app {
            case .active, .inactive:
                state = .deferred
                return [.deferred]
            case .notRunning where byUser:
                return rescheduled(from: now) + [.skippedUserTerminated]
            case .notRunning:
                return begin(.launch, at: now)
            case .suspended:
                return begin(.resume, at: now)
            case .background:
                return begin(.none, at: now)
            }
        case (.wakeDue, _):
            return []

        case (.wakeSkipped(let now), .waiting):
            return rescheduled(from: now)
        case (.wakeSkipped, _):
            return []

        case (.appEnteredBackground(let now), .deferred):
            return begin(.none, at: now)
        case (.appEnteredBackground, _):
            return []

        case (.completed(let result, _), .fetching(let since)):
            return [.cancelDeadline, .completed(result)] + rescheduled(from: since)
        case (.completed, _):
            return []

        case (.deadlineDue, .fetching(let since)):
            spacing *= 2
            return [.expired] + rescheduled(from: since)
        case (.deadlineDue, _):
            return []

        case (.appTerminated, .fetching(let since)):
            return [.cancelDeadline] + rescheduled(from: since)
        case (.appTerminated(let now), .deferred):
            // The deferred wake is decided again now that the app is gone.
            state = .waiting(nextWake: now)
            return [.scheduleWake(at: now)]
        case (.appTerminated, _):
            return []
        }
    }

    private mutating func begin(_ wake: Wake, at now: Duration) -> [Action] {
        state = .fetching(since: now)
        return [.begin(wake, deadline: now + budget)]
    }

    private mutating func rescheduled(from start: Duration) -> [Action] {
        guard hasFetchMode, let interval else {
            state = .disabled
            return []
        }
        let next = start + interval * spacing
        state = .waiting(nextWake: next)
        return [.scheduleWake(at: next)]
    }
}
