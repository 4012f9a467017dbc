/// One run of the app's code, from its launch to its termination, as on iOS: the app's objects
/// live in it and end with it.
///
/// A process begins when the device launches the app (the user taps its icon, a service
/// relaunches it in the background) and ends when the app is terminated (a swipe, the system
/// reclaiming memory, a watchdog, a crash). Every ``DeviceLocationManager`` the app's code creates
/// while it runs belongs to it; so do the handlers the app gave the system (expiration handlers,
/// `BGTaskScheduler` launch handlers, completions), its `CLMonitor`s, its sessions and its update
/// streams. When it ends, its managers are inert (the audit log says so if they are used), their
/// delegates are never called again, and their streams finish.
public final class AppProcess {
    /// The launch's number on the device: 1 for the first.
    public let number: Int
    /// Why the app was launched: the counterpart of `launchOptions` (``LifecycleCause/userLaunch``
    /// from the home screen; a service's cause for a background launch).
    public let cause: LifecycleCause
    /// Whether the system launched it into the background (a service), without showing it.
    public let inBackground: Bool
    /// The app's code for this process.
    public let app: any SimulatedApp
    // The properties the driver reads on every fix skip dynamic exclusivity checks: no access to
    // them outlives the statement that makes it.

    /// Whether the process has ended.
    public var hasEnded: Bool { endCause != nil }
    /// Whether its launch code has run (managers created after it hear their authorization on
    /// their own).
    package internal(set) var launched = false
    /// The managers created after the launch whose delegates have yet to hear the authorization.
    @exclusivity(unchecked) var awaitingCreationCallback: [Int] = []
    /// Why it ended, once it has (nil while it runs). Read on every fix, through ``hasEnded``:
    /// no dynamic exclusivity check, as no access to it outlives the statement that makes it.
    @exclusivity(unchecked) public private(set) var endCause: TerminationCause?

    /// Its location managers, in the order the app's code created them (numbered from 1).
    @exclusivity(unchecked) private var managers: [DeviceLocationManager] = []
    /// The expiration handlers of its `UIApplication` background tasks, by task.
    var expirationHandlers: [Int: () -> Void] = [:]
    /// Work it scheduled for later (``Simulation/schedule(after:_:)``), by id.
    var work: [Int: () -> Void] = [:]
    private var workCounter = 0
    /// Its `BGTaskScheduler` launch handlers, by identifier.
    var taskHandlers: [String: (ScheduledTask) -> Void] = [:]
    /// Its running `BGTask`s, by id.
    var scheduledTasks: [Int: ScheduledTask] = [:]
    /// Its `CLMonitor`s, by name.
    var monitors: [String: ConditionMonitor] = [:]
    /// The sessions the scenario's script started, oldest first (it invalidates the oldest).
    var scriptedActivitySessions: [BackgroundActivitySession] = []
    var scriptedServiceSessions: [ServiceSession] = []
    /// The completions of the temporary full accuracy requests not yet answered, by the
    /// request's number (``TemporaryAccuracyStateMachine/counter``).
    var temporaryFullAccuracyCompletions: [Int: AccuracyCompletion] = [:]

    /// A temporary full accuracy request's completion: the app's callback, or an `await` in the
    /// app's code (`resumesAtEnd`), which the end of the process resumes, as it finishes the
    /// process's streams, when the answer came too late for the app's code to hear it.
    struct AccuracyCompletion {
        let body: (LocationError?) -> Void
        let resumesAtEnd: Bool
    }
    /// What the app's code said about the background work it is finishing.
    var note: AppNote?
    /// The locations of the `didUpdateLocations` call in progress.
    @exclusivity(unchecked) var currentUpdates: [LocationUpdate] = []

    /// Runs `deliver` with `updates` as ``currentUpdates``, then gives back the ones before: a
    /// delivery may start inside another's `didUpdateLocations` (a service's location, handed
    /// on at once when that code starts the service), and the outer call keeps its own updates.
    @inline(__always)
    func delivering(_ updates: [LocationUpdate], _ deliver: () -> Void) {
        var outer = updates
        swap(&outer, &currentUpdates)
        deliver()
        swap(&outer, &currentUpdates)
    }

    /// How the objects it creates know it.
    let reference: ProcessReference

    init(number: Int, cause: LifecycleCause, inBackground: Bool, app: any SimulatedApp) {
        self.number = number
        self.cause = cause
        self.inBackground = inBackground
        self.app = app
        reference = ProcessReference(number: number)
        reference.process = self
    }

    deinit { reference.process = nil }

    /// The managers still alive, with their numbers.
    var liveManagers: [(number: Int, manager: DeviceLocationManager)] {
        managers.enumerated().map { ($0.offset + 1, $0.element) }
    }

    /// The first manager the app created in this process.
    var firstManager: DeviceLocationManager? { managers.first }

    /// The manager numbered `number`.
    func manager(_ number: Int) -> DeviceLocationManager? {
        number >= 1 && number <= managers.count ? managers[number - 1] : nil
    }

    /// Takes `manager` in; returns its number.
    func adopt(_ manager: DeviceLocationManager) -> Int {
        managers.append(manager)
        return managers.count
    }

    /// An id for a piece of work.
    func nextWorkID() -> Int {
        workCounter += 1
        return workCounter
    }

    /// Takes what the app's code said about its work, once.
    func takeNote() -> AppNote? {
        defer { note = nil }
        return note
    }

    /// The process ends: its handlers are dropped, its managers go inert, its streams and
    /// monitors finish, its tasks count as ended.
    func end(_ cause: TerminationCause) {
        guard !hasEnded else { return }
        endCause = cause
        expirationHandlers = [:]
        work = [:]
        taskHandlers = [:]
        for task in scheduledTasks.values { task.isCompleted = true }
        scheduledTasks = [:]
        endStreams()
        scriptedActivitySessions = []
        scriptedServiceSessions = []
        let awaiting = temporaryFullAccuracyCompletions.sorted { $0.key < $1.key }.filter(\.value.resumesAtEnd)
        temporaryFullAccuracyCompletions = [:]
        for (_, completion) in awaiting {
            completion.body(
                LocationError(.promptDeclined, reason: "the app's process ended before the answer reached it"))
        }
        for (_, manager) in liveManagers { manager.processEnded() }
    }

    /// The update streams and monitors of the process finish.
    func endStreams() {
        for monitor in monitors.values { monitor.continuation.finish() }
        monitors = [:]
        for (_, manager) in liveManagers { manager.endLiveUpdates() }
    }
}

/// A process as the objects it created know it: by its number, which outlives it, and while it
/// is alive. The process holds its reference and lets go of itself as it is freed, so that an
/// app's objects and their process (which holds the app) form no cycle.
///
/// Not a `weak` reference: a weakly referenced object keeps its counts in a side table, and
/// every retain and release of the process, on every fix's delivery, then goes through it.
/// Both are used on the device's isolation alone, as the process is.
final class ProcessReference {
    /// The process, until it is freed.
    unowned(unsafe) fileprivate(set) var process: AppProcess?
    let number: Int
    fileprivate init(number: Int) { self.number = number }
    /// Whether the process ended (a process that is gone ended).
    var hasEnded: Bool { process?.hasEnded ?? true }
}
