/// `BGTaskScheduler` for the simulated app: register launch handlers at launch, submit
/// requests, and complete the tasks the system runs (``Simulation/taskScheduler``).
///
/// ```swift
/// func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
///     system.taskScheduler.register(forTaskWithIdentifier: "sync") { task in
///         task.expirationHandler = { task.setTaskCompleted(success: false) }
///         upload { ok in task.setTaskCompleted(success: ok) }
///     }
///     try? system.taskScheduler.submit(.init(identifier: "sync", kind: .appRefresh, earliestBegin: system.now + .seconds(900)))
/// }
/// ```
///
/// ``TaskSchedulerStateMachine`` has the rules; the simulation runs the tasks in virtual time.
public final class BackgroundTaskScheduler {
    unowned let simulation: Simulation

    init(simulation: Simulation) { self.simulation = simulation }

    /// `register(forTaskWithIdentifier:using:launchHandler:)`: the handler the system calls when
    /// a task of `identifier` runs, for this launch of the app (register at every launch, before
    /// it ends). Returns false when the app's code does not run.
    @discardableResult
    public func register(forTaskWithIdentifier identifier: String, launchHandler: @escaping (ScheduledTask) -> Void)
        -> Bool
    {
        simulation.registerTaskHandler(identifier, launchHandler)
    }

    /// `submit(_:)`: throws `notPermitted`, `unavailable` or `tooManyPendingTaskRequests`.
    /// `earliestBegin` is an offset from the start of the run.
    public func submit(_ request: TaskSchedulerStateMachine.Request) throws(TaskSchedulerStateMachine.SubmitError) {
        if let error = simulation.submitTaskRequest(request) { throw error }
    }

    /// `cancel(taskRequestWithIdentifier:)`.
    public func cancel(taskRequestWithIdentifier identifier: String) { simulation.cancelTaskRequests(identifier) }

    /// `cancelAllTaskRequests()`.
    public func cancelAllTaskRequests() { simulation.cancelTaskRequests(nil) }

    /// `getPendingTaskRequests(completionHandler:)`, at once.
    public var pendingTaskRequests: [TaskSchedulerStateMachine.Request] {
        simulation.rules.scheduler.requests.pendingRequests
    }
}

/// A task the system runs for the app, as `BGAppRefreshTask` / `BGProcessingTask`.
public final class ScheduledTask {
    public let identifier: String
    public let kind: TaskSchedulerStateMachine.Kind
    /// Called when the task's time is about to run out: call ``setTaskCompleted(success:)``
    /// from it, or the system terminates the app.
    public var expirationHandler: (() -> Void)?
    let id: Int
    weak var simulation: Simulation?
    /// Whether the task was completed (or ended with the app).
    public internal(set) var isCompleted = false

    init(id: Int, identifier: String, kind: TaskSchedulerStateMachine.Kind, simulation: Simulation) {
        self.id = id
        self.identifier = identifier
        self.kind = kind
        self.simulation = simulation
    }

    /// `setTaskCompleted(success:)`.
    public func setTaskCompleted(success: Bool) {
        guard !isCompleted else { return }
        simulation?.completeTask(self, success: success)
    }
}
