/// `BGTaskScheduler`: the app's pending requests (``TaskSchedulerStateMachine``) and the tasks
/// the system runs, each against its budget. A pure state machine that answers in the device's
/// actions (``DeviceAction``). The rules (W6):
///
/// - `BGTaskScheduler` arrived with iOS 13: before, a submission is refused (`unavailable`).
/// - A submission is accepted or refused as ``TaskSchedulerStateMachine`` says; a request
///   submitted from a running task runs no sooner than a second later, so that a handler that
///   resubmits at once cannot run for ever in one instant (*assumption*: the system never runs it
///   at once).
/// - A due request that may not run yet waits, and the audit log says why once for each reason.
/// - A request that runs wakes or launches the app; its launch handler runs if this process
///   registered one, else the task is dropped.
/// - A `BGAppRefreshTask` has ``Timing/appRefreshBudget`` ("up to 30 seconds of background
///   runtime"), a `BGProcessingTask` ``Timing/processingBudget`` (*assumption*: 5 minutes) while
///   the app is off screen. The expiration handler runs ``Timing/expirationWarning`` before the
///   end; at the end a task not completed gets the app terminated ("Not calling
///   setTaskCompleted(success:) before the time for the task expires may result in the system
///   killing your app").
/// - "The system terminates any background processing tasks running when the user starts using
///   the device": on screen, a processing task is warned and ends unsuccessfully; an app-refresh
///   task's budget stops, and starts afresh when the app leaves the screen.
/// - The app's process ends: its tasks end, and its launch handlers with it.
public struct ScheduledTaskStateMachine: Sendable, Hashable {
    public struct Running: Sendable, Hashable {
        public var identifier: String
        public var kind: TaskSchedulerStateMachine.Kind
    }

    /// The tasks' budgets.
    public struct Timing: Sendable, Hashable {
        public var appRefreshBudget: Duration
        public var processingBudget: Duration
        /// How long before the end of its time a task's expiration handler runs.
        public var expirationWarning: Duration

        public init(appRefreshBudget: Duration, processingBudget: Duration, expirationWarning: Duration) {
            self.appRefreshBudget = appRefreshBudget
            self.processingBudget = processingBudget
            self.expirationWarning = expirationWarning
        }

        func budget(_ kind: TaskSchedulerStateMachine.Kind) -> Duration {
            kind == .appRefresh ? appRefreshBudget : processingBudget
        }
    }

    /// The app and the device when an event is handled.
    public struct Situation: Sendable, Hashable {
        public var now: Duration
        public var app: AppState
        /// The app's code runs (it may submit, cancel and register).
        public var appRuns: Bool
        /// The user swiped the app away since it last ran.
        public var terminatedByUser: Bool
        public var power: PowerAndRefresh

        public init(now: Duration, app: AppState, appRuns: Bool, terminatedByUser: Bool, power: PowerAndRefresh) {
            self.now = now
            self.app = app
            self.appRuns = appRuns
            self.terminatedByUser = terminatedByUser
            self.power = power
        }
    }

    public enum Event: Sendable, Hashable {
        /// `BGTaskScheduler.register(forTaskWithIdentifier:)` in this process.
        case register(identifier: String)
        /// `BGTaskScheduler.submit(_:)`: the answer is ``lastSubmitError``.
        case submit(TaskSchedulerStateMachine.Request)
        /// `BGTaskScheduler.cancel(taskRequestWithIdentifier:)`; nil cancels all.
        case cancel(identifier: String?)
        /// The timer for the next due request fired: what may run runs, the rest waits.
        case requestsDue
        /// Run the due requests that may run now.
        case runDue
        /// Set the timer for the next request to come due.
        case scheduleNext
        /// The app's state changed so that a waiting request may run now.
        case lookAgain
        /// A due request runs: the app is woken or launched for it.
        case start(TaskSchedulerStateMachine.Request)
        /// Its launch handler runs.
        case launch(TaskSchedulerStateMachine.Request)
        /// `BGTask.setTaskCompleted(success:)` for task `id`.
        case complete(id: Int, success: Bool, note: AppNote?)
        /// Task `id`, if still running, ends unsuccessfully.
        case completeIfRunning(id: Int)
        /// Task `id`'s time is nearly over (or the user came back, `reason`).
        case warningDue(id: Int, reason: AuditReason?)
        /// Task `id`'s time is over.
        case deadlineDue(id: Int)
        /// The app comes on screen.
        case enteredForeground
        /// The app left the screen.
        case enteredBackground
        /// The app's process ended.
        case appTerminated
    }

    public let version: IOSVersion
    public let modes: BackgroundModes
    public let timing: Timing
    public private(set) var requests = TaskSchedulerStateMachine()
    /// Whether the system runs tasks of the app now.
    public enum State: Sendable, Hashable {
        case idle
        /// The tasks running, by id (never empty).
        case running([Int: Running])
    }

    public private(set) var state: State = .idle
    /// The identifiers this process registered a launch handler for.
    public private(set) var registered: Set<String> = []
    /// Why the last submission failed (nil: it was accepted).
    public private(set) var lastSubmitError: TaskSchedulerStateMachine.SubmitError?
    /// Why each due request was last said to wait.
    private var waitingReported: [String: AuditReason] = [:]
    /// The last task's id.
    public private(set) var counter = 0

    public init(version: IOSVersion, modes: BackgroundModes, timing: Timing) {
        self.version = version
        self.modes = modes
        self.timing = timing
    }

    /// The tasks running, by id.
    public private(set) var running: [Int: Running] {
        get { if case .running(let tasks) = state { tasks } else { [:] } }
        set { state = newValue.isEmpty ? .idle : .running(newValue) }
    }

    public mutating func handle(_ event: Event, in s: Situation) -> [DeviceAction] {
        switch event {
        case .register(let identifier):
            if s.appRuns { registered.insert(identifier) }
            return []
        case .submit(let request):
            return submit(request, s)
        case .cancel(let identifier):
            guard s.appRuns else { return [] }
            var actions: [DeviceAction] = []
            for r in requests.pendingRequests where identifier == nil || r.identifier == identifier {
                waitingReported[r.identifier] = nil
                actions.append(Self.record(.cancelled, r))
            }
            requests.cancel(identifier: identifier)
            return actions + check(s)
        case .requestsDue:
            var actions: [DeviceAction] = []
            for (r, why) in requests.waiting(
                at: s.now, app: s.app, terminatedByUser: s.terminatedByUser, power: s.power)
            where waitingReported[r.identifier] != why {
                // Said once for each request and reason.
                waitingReported[r.identifier] = why
                actions.append(Self.record(.waiting, r, reason: why))
            }
            return actions + [.post(.runDueTasks), .post(.scheduleNextTaskCheck)]
        case .runDue:
            let runnable = requests.takeRunnable(
                at: s.now, app: s.app, terminatedByUser: s.terminatedByUser, power: s.power)
            return runnable.map { .post(.startScheduledTask($0)) }
        case .scheduleNext:
            guard let next = requests.nextDue(after: s.now) else { return [] }
            return [.schedule(.taskRequestsDue, at: next)]
        case .lookAgain:
            return requests.pendingRequests.isEmpty ? [] : [.schedule(.taskRequestsDue, at: s.now)]
        case .start(let request):
            waitingReported[request.identifier] = nil
            var actions: [DeviceAction] = []
            if s.app == .suspended || s.app == .notRunning {
                actions.append(.post(.lifecycle(.wake(request.kind.wakeCause))))
            }
            actions.append(.post(.launchScheduledTask(request)))
            return actions
        case .launch(let request):
            guard s.appRuns, registered.contains(request.identifier) else {
                return [Self.record(.dropped, request, reason: .notRegistered)]
            }
            counter += 1
            let id = counter
            running[id] = .init(identifier: request.identifier, kind: request.kind)
            return arm(id, request.kind, s) + [
                Self.record(.began, request),
                .call(.scheduledTaskLaunch(id: id, identifier: request.identifier, kind: request.kind)),
            ]
        case .complete(let id, let success, let note):
            guard let task = running.removeValue(forKey: id) else { return [] }
            return [
                .cancel(.scheduledTaskDeadline(id)), .cancel(.scheduledTaskWarning(id)),
                .record(
                    .scheduledTask(
                        action: .completed, kind: task.kind, identifier: task.identifier, success: success, reason: nil,
                        detail: note?.note)),
                .call(.scheduledTaskEnded(id: id)),
            ]
        case .completeIfRunning(let id):
            guard running[id] != nil else { return [] }
            return handle(.complete(id: id, success: false, note: nil), in: s)
        case .warningDue(let id, let reason):
            // "Not setting an expiration handler results in the system marking your task as
            // complete and unsuccessful": the driver completes it when there is none.
            guard let task = running[id] else { return [] }
            return [Self.record(.expiring, task, reason: reason), .call(.scheduledTaskExpiration(id: id))]
        case .deadlineDue(let id):
            guard let task = running[id] else { return [] }
            return [Self.record(.expired, task, reason: .budget), .post(.lifecycle(.terminate(.scheduledTaskExpired)))]
        case .enteredForeground:
            var actions: [DeviceAction] = []
            for (id, task) in running.sorted(by: { $0.key < $1.key }) {
                actions.append(.cancel(.scheduledTaskWarning(id)))
                actions.append(.cancel(.scheduledTaskDeadline(id)))
                guard task.kind == .processing else { continue }
                actions.append(.post(.scheduledTaskWarning(id: id, reason: .userActive)))
                actions.append(.post(.completeScheduledTaskIfRunning(id: id)))
            }
            return actions
        case .enteredBackground:
            return running.sorted(by: { $0.key < $1.key }).flatMap { arm($0.key, $0.value.kind, s) }
        case .appTerminated:
            var actions: [DeviceAction] = []
            for (id, task) in running.sorted(by: { $0.key < $1.key }) {
                actions.append(.cancel(.scheduledTaskDeadline(id)))
                actions.append(.cancel(.scheduledTaskWarning(id)))
                actions.append(Self.record(.ended, task, reason: .terminated))
            }
            state = .idle
            registered = []
            return actions
        }
    }

    private mutating func submit(_ request: TaskSchedulerStateMachine.Request, _ s: Situation) -> [DeviceAction] {
        guard s.appRuns else {
            lastSubmitError = .unavailable
            return []
        }
        guard version.major >= 13 else {
            lastSubmitError = .unavailable
            return [Self.record(.rejected, request, reason: .needsIOS13)]
        }
        var request = request
        if !running.isEmpty { request.earliestBegin = max(request.earliestBegin ?? s.now, s.now + .seconds(1)) }
        waitingReported[request.identifier] = nil
        lastSubmitError = requests.submit(request, at: s.now, modes: modes, power: s.power)
        if let error = lastSubmitError { return [Self.record(.rejected, request, reason: error.auditReason)] }
        return [
            .record(
                .scheduledTask(
                    action: .submitted, kind: request.kind, identifier: request.identifier, success: nil,
                    reason: nil, earliestBegin: request.earliestBegin))
        ] + check(s)
    }

    /// Sets the timer for the next request to come due; requests already due that wait are
    /// checked again when what they wait for changes.
    private func check(_ s: Situation) -> [DeviceAction] {
        if requests.pendingRequests.contains(where: { ($0.earliestBegin ?? .zero) <= s.now }) {
            return [.schedule(.taskRequestsDue, at: s.now)]
        } else if let next = requests.nextDue(after: s.now) {
            return [.schedule(.taskRequestsDue, at: next)]
        } else {
            return [.cancel(.taskRequestsDue)]
        }
    }

    /// Sets a task's two timers: the expiration handler before the end of its time ("called
    /// before the background process uses the full amount of its allocated time"), and the end.
    private func arm(_ id: Int, _ kind: TaskSchedulerStateMachine.Kind, _ s: Situation) -> [DeviceAction] {
        let budget = timing.budget(kind)
        return [
            .schedule(.scheduledTaskWarning(id), at: s.now + max(.zero, budget - timing.expirationWarning)),
            .schedule(.scheduledTaskDeadline(id), at: s.now + budget),
        ]
    }

    private static func record(
        _ action: ScheduledTaskAction, _ r: TaskSchedulerStateMachine.Request, reason: AuditReason? = nil
    ) -> DeviceAction {
        .record(.scheduledTask(action: action, kind: r.kind, identifier: r.identifier, success: nil, reason: reason))
    }

    private static func record(_ action: ScheduledTaskAction, _ task: Running, reason: AuditReason?) -> DeviceAction {
        .record(
            .scheduledTask(action: action, kind: task.kind, identifier: task.identifier, success: nil, reason: reason))
    }
}
