/// `BGTaskScheduler`: the app's pending requests (``TaskSchedulerStateMachine``) and the tasks
/// the system runs, each against its budget; each reason a due request waits is said once.
public struct ScheduledTaskStateMachine: Sendable, Hashable {
    public struct Running: Sendable, Hashable {
        public var identifier: String
        public var kind: TaskSchedulerStateMachine.Kind
    }

    public internal(set) var requests = TaskSchedulerStateMachine()
    /// The tasks running, by id.
    public internal(set) var running: [Int: Running] = [:]
    /// The identifiers this process registered a launch handler for.
    public internal(set) var registered: Set<String> = []
    /// Why the last submission failed (nil: it was accepted).
    public internal(set) var lastSubmitError: TaskSchedulerStateMachine.SubmitError?
    /// Why each due request was last said to wait.
    var waitingReported: [String: AuditReason] = [:]
    var counter = 0

    mutating func nextID() -> Int {
        counter += 1
        return counter
    }
}
