/// The result an app's fetch handler reports, as `UIBackgroundFetchResult`.
public enum FetchResult: String, Sendable, Hashable, Codable, CaseIterable {
    case newData, noData, failed
}

/// Background fetch (`setMinimumBackgroundFetchInterval`, deprecated from iOS 13 but still
/// working): a pure state machine.
///
/// It holds no clock and does no I/O; times come with the events. It answers in the device's
/// actions (``DeviceAction``): the audit events, the wake and deadline timers, the app's handler,
/// and the wake or termination it asks of the app's lifecycle. The rules:
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
        /// The handler of fetch `id` called its completion, the app having synced what `note`
        /// says (nil: nothing). A completion of another fetch than the last begun is ignored.
        case completed(id: Int, FetchResult, note: AppNote?, at: Duration)
        /// The budget ran out.
        case deadlineDue(at: Duration)
        case appTerminated(at: Duration)
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

    /// A machine in `state` with `interval` set, fetch `lastID` the last begun (for tests of
    /// every transition).
    init(hasFetchMode: Bool, budget: Duration, state: State, interval: Duration?, lastID: Int) {
        self.init(hasFetchMode: hasFetchMode, budget: budget)
        self.state = state
        self.interval = interval
        self.lastID = lastID
    }

    /// Whether the handler is running.
    public var isFetching: Bool {
        if case .fetching = state { return true }
        return false
    }

    /// The id of the last fetch begun (a completion for another is ignored).
    public private(set) var lastID = 0

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch (event, state) {
        case (.setInterval(let interval, let now), _):
            self.interval = interval
            guard hasFetchMode, let interval else {
                let wasWaiting = if case .waiting = state { true } else { false }
                if !isFetching { state = .disabled }
                return wasWaiting ? [.cancel(.fetchWake)] : []
            }
            guard case .disabled = state else { return [] }
            state = .waiting(nextWake: now + interval)
            return [.schedule(.fetchWake, at: now + interval)]

        case (.wakeDue(let now, let app, let byUser), .waiting):
            switch app {
            case .active, .inactive:
                state = .deferred
                return [.record(.fetch(action: .deferred, result: nil, synced: nil, reason: .appInForeground))]
            case .notRunning where byUser:
                return rescheduled(from: now, at: now)
                    + [.record(.fetch(action: .skipped, result: nil, synced: nil, reason: .userTerminated))]
            case .notRunning, .suspended:
                // Launched into the background, or resumed there: the lifecycle says which.
                return begin(waking: true, at: now)
            case .background:
                return begin(waking: false, at: now)
            }
        case (.wakeDue, _):
            return []

        case (.wakeSkipped(let now), .waiting):
            return rescheduled(from: now, at: now)
        case (.wakeSkipped, _):
            return []

        case (.appEnteredBackground(let now), .deferred):
            return begin(waking: false, at: now)
        case (.appEnteredBackground, _):
            return []

        case (.completed(let id, let result, let note, let now), .fetching(let since)) where id == lastID:
            return [
                .cancel(.fetchDeadline),
                .record(
                    .fetch(
                        action: .completed, result: result, synced: note?.synced ?? 0, reason: nil, detail: note?.note)),
            ] + rescheduled(from: since, at: now)
        case (.completed, _):
            return []

        case (.deadlineDue(let now), .fetching(let since)):
            spacing *= 2
            // The handler overran: the app is terminated.
            return [
                .record(.fetch(action: .expired, result: nil, synced: nil, reason: .budget)),
                .post(.lifecycle(.terminate(.fetchBudgetExceeded))),
            ] + rescheduled(from: since, at: now)
        case (.deadlineDue, _):
            return []

        case (.appTerminated(let now), .fetching(let since)):
            return [.cancel(.fetchDeadline)] + rescheduled(from: since, at: now)
        case (.appTerminated(let now), .deferred):
            // The deferred wake is decided again now that the app is gone.
            state = .waiting(nextWake: now)
            return [.schedule(.fetchWake, at: now)]
        case (.appTerminated, _):
            return []
        }
    }

    /// A fetch begins: the app is woken first if it is not running in the background, then its
    /// handler is called, with ``budget`` to complete.
    private mutating func begin(waking: Bool, at now: Duration) -> [DeviceAction] {
        state = .fetching(since: now)
        lastID += 1
        return (waking ? [.post(.lifecycle(.wake(.backgroundFetch)))] : [])
            + [
                .record(.fetch(action: .began, result: nil, synced: nil, reason: nil)),
                .schedule(.fetchDeadline, at: now + budget),
                .call(.performFetch(id: lastID)),
            ]
    }

    /// The next wake, the spacing after `start`; a wake already past is due now.
    private mutating func rescheduled(from start: Duration, at now: Duration) -> [DeviceAction] {
        guard hasFetchMode, let interval else {
            state = .disabled
            return []
        }
        let next = start + interval * spacing
        state = .waiting(nextWake: next)
        return [.schedule(.fetchWake, at: max(now, next))]
    }
}
