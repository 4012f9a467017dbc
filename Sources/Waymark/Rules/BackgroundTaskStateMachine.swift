/// The app's background tasks (`beginBackgroundTask(expirationHandler:)`): a pure state machine.
///
/// It holds no clock and does no I/O; times come with the events as offsets from the start of
/// the run. It answers in the device's actions (``DeviceAction``): the audit events, the two
/// timers of the stay's budget, the app's expiration handlers, and the watchdog's termination.
/// The rules:
///
/// - `beginBackgroundTask` succeeds whenever the app's code runs (in the foreground or the
///   background). There is no rule tied to an earlier expiry: whether an app that lost its time
///   gets time again is up to the app's own code (see ``TutorialApp``).
/// - The budget (``budget``, by iOS version) belongs to one stay in the background: it starts
///   with the first task outstanding there and runs on when tasks end and others begin. Entering
///   the foreground, or being suspended (a service's wake is a new stay), gives a fresh budget
///   next time.
/// - ``warning`` before the budget runs out the app's expiration handlers are called; a task still
///   outstanding when it runs out gets the app terminated by the watchdog.
public struct BackgroundTaskStateMachine: Sendable, Hashable {
    /// The budget of one stay in the background.
    public enum Budget: Sendable, Hashable {
        /// No task has run in this stay yet.
        case unused
        /// Running since the offset; `expiring` once the expiration handlers were called.
        case running(since: Duration, expiring: Bool)
    }

    public enum State: Sendable, Hashable {
        case notRunning
        /// On screen: tasks do not use up time.
        case foreground(tasks: [Int])
        case background(tasks: [Int], budget: Budget)
    }

    public enum Event: Sendable, Hashable {
        /// The app calls `beginBackgroundTask`, naming the task `name` (the audit log's reason).
        case begin(name: String?, at: Duration)
        /// The app calls `endBackgroundTask` for `task` (nil: the oldest), named `name`.
        case end(task: Int?, name: String?, at: Duration)
        case launched(inBackground: Bool, at: Duration)
        case enteredBackground(at: Duration)
        case enteredForeground
        /// The app was suspended: its stay in the background is over (a wake starts a new one).
        case appSuspended
        /// The warning timer fired.
        case warningDue(at: Duration)
        /// The budget ran out.
        case deadlineDue
        case appTerminated
    }

    /// The time the app gets in one stay in the background.
    public let budget: Duration
    /// How long before the end the expiration handlers are called.
    public let warning: Duration
    public private(set) var state: State = .notRunning
    private var counter = 0

    public init(budget: Duration, warning: Duration) {
        self.budget = budget
        self.warning = warning
    }

    /// A machine in `state` whose last task was `counter` (for tests of every transition).
    init(budget: Duration, warning: Duration, state: State, counter: Int) {
        self.init(budget: budget, warning: warning)
        self.state = state
        self.counter = counter
    }

    /// The outstanding tasks, oldest first.
    public var tasks: [Int] {
        switch state {
        case .notRunning: []
        case .foreground(let tasks), .background(let tasks, _): tasks
        }
    }

    /// `backgroundTimeRemaining` at `now`: nil unless the budget runs (in the background, with a
    /// task outstanding); iOS reports an unlimited time in the foreground.
    public func remaining(at now: Duration) -> Duration? {
        guard case .background(let tasks, .running(let since, _)) = state, !tasks.isEmpty else { return nil }
        let left = budget - (now - since)
        return left > .zero ? left : .zero
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch (event, state) {
        case (.begin, .notRunning):
            return []
        case (.begin(let name, _), .foreground(let tasks)):
            counter += 1
            state = .foreground(tasks: tasks + [counter])
            return [Self.began(counter, name)]
        case (.begin(let name, let now), .background(let tasks, let budget)):
            counter += 1
            var actions = [Self.began(counter, name)]
            if tasks.isEmpty, case .running(let since, _) = budget {
                // A task after the others ended: the stay's budget runs on.
                state = .background(tasks: [counter], budget: .running(since: since, expiring: false))
                actions += expiry(since: since, at: now)
            } else if case .unused = budget {
                state = .background(tasks: tasks + [counter], budget: .running(since: now, expiring: false))
                actions += expiry(since: now, at: now)
            } else {
                state = .background(tasks: tasks + [counter], budget: budget)
            }
            return actions

        case (.end(let task, let name, _), .foreground(var tasks)):
            guard let i = Self.index(of: task, in: tasks) else { return [] }
            let ended = tasks.remove(at: i)
            state = .foreground(tasks: tasks)
            return [Self.ended(ended, remaining: nil, name)]
        case (.end(let task, let name, let now), .background(var tasks, let budget)):
            guard let i = Self.index(of: task, in: tasks) else { return [] }
            let remaining = remaining(at: now)
            let ended = tasks.remove(at: i)
            state = .background(tasks: tasks, budget: budget)
            return [Self.ended(ended, remaining: remaining, name)] + (tasks.isEmpty ? Self.cancelExpiry : [])
        case (.end, .notRunning):
            return []

        case (.launched(let inBackground, _), _):
            state = inBackground ? .background(tasks: [], budget: .unused) : .foreground(tasks: [])
            return []

        case (.enteredBackground(let now), .foreground(let tasks)):
            guard !tasks.isEmpty else {
                state = .background(tasks: [], budget: .unused)
                return []
            }
            state = .background(tasks: tasks, budget: .running(since: now, expiring: false))
            return expiry(since: now, at: now)
        case (.enteredBackground, _):
            return []

        case (.enteredForeground, .background(let tasks, let budget)):
            state = .foreground(tasks: tasks)
            if case .running = budget, !tasks.isEmpty { return Self.cancelExpiry }
            return []
        case (.enteredForeground, _):
            return []

        case (.appSuspended, .background([], .running)):
            state = .background(tasks: [], budget: .unused)
            return []
        case (.appSuspended, _):
            return []

        case (.warningDue(let now), .background(let tasks, .running(let since, false))) where !tasks.isEmpty:
            state = .background(tasks: tasks, budget: .running(since: since, expiring: true))
            // The app's expiration handlers run, for every task still outstanding.
            return [
                .record(
                    .backgroundTask(
                        action: .expiring, task: nil, remaining: remaining(at: now) ?? .zero, reason: "budget")),
                .call(.taskExpiration(tasks)),
            ]
        case (.warningDue, _):
            return []

        case (.deadlineDue, .background(let tasks, .running)) where !tasks.isEmpty:
            // Tasks outlived the budget: the watchdog terminates the app.
            return [.post(.lifecycle(.terminate(.watchdog)))]
        case (.deadlineDue, _):
            return []

        case (.appTerminated, let old):
            state = .notRunning
            if case .background(let tasks, .running) = old, !tasks.isEmpty { return Self.cancelExpiry }
            return []
        }
    }

    private static func index(of task: Int?, in tasks: [Int]) -> Int? {
        guard let task else { return tasks.indices.first }
        return tasks.firstIndex(of: task)
    }

    /// The two timers of the stay's budget, at offsets from the start: the warning, then the end.
    private func expiry(since start: Duration, at now: Duration) -> [DeviceAction] {
        [
            .schedule(.taskWarning, at: max(now, start + budget - warning)),
            .schedule(.taskDeadline, at: max(now, start + budget)),
        ]
    }

    private static let cancelExpiry: [DeviceAction] = [.cancel(.taskWarning), .cancel(.taskDeadline)]

    private static func began(_ task: Int, _ name: String?) -> DeviceAction {
        .record(.backgroundTask(action: .began, task: task, remaining: nil, reason: name))
    }

    /// `remaining` is nil in the foreground.
    private static func ended(_ task: Int, remaining: Duration?, _ name: String?) -> DeviceAction {
        .record(.backgroundTask(action: .ended, task: task, remaining: remaining, reason: name))
    }
}
