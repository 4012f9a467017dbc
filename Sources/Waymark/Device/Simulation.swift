#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Watches a simulation: every audit event, in order, as it happens.
public protocol SimulationObserver: AnyObject {
    func simulation(_ simulation: Simulation, didRecord event: AuditEvent)
}

/// The simulated device: an app (``SimulatedApp``) that owns a ``LocationManager``, the system
/// around it, and the one event loop that runs them.
///
/// The rules live in five pure state machines: ``AppLifecycleStateMachine``,
/// ``AuthorizationStateMachine``, ``LocationServiceStateMachine``,
/// ``BackgroundTaskStateMachine`` and ``BackgroundFetchStateMachine``. The simulation feeds them
/// events, carries out their actions (timers, the app's code, the delegate, the audit log), and
/// keeps their shared facts in step: whether the app is in use, and whether anything keeps a
/// backgrounded app running.
///
/// Everything happens in simulation time: fixes from the source, the scenario's scripted
/// actions, the system's timers and the app's own scheduled work. At equal times, scripted
/// actions come first, then timers, then the fix, so the same inputs always give the same
/// events. ``run(_:isolation:)-34bx6`` runs in virtual time and never waits;
/// ``run(_:clock:rate:isolation:)`` keeps pace with a clock; ``advance(to:)`` and
/// ``receive(_:)`` drive it step by step (a live recorder, a test).
///
/// A `Simulation` is not thread-safe. It runs on its caller's isolation (the main actor, say):
/// create it, set the delegate, and drive it from there.
public final class Simulation {
    public let scenario: Scenario
    /// The iOS release whose rules apply.
    public var version: IOSVersion { scenario.system.iosVersion }
    /// The wall-clock instant of offset zero; audit times are this plus the offset.
    public let epoch: Date
    /// The app's location manager: the one the app's code handed over at creation, or the
    /// device's own.
    public let manager: LocationManager
    /// The app's code.
    public let app: any SimulatedApp
    /// The time since the start of the run.
    public internal(set) var now: Duration = .zero
    public internal(set) var summary = RunSummary()
    /// The locations of the `didUpdateLocations` call in progress, with why and where they
    /// come from (empty outside such a call).
    public internal(set) var currentUpdates: [LocationUpdate] = []

    var lifecycle: AppLifecycleStateMachine
    var authorization: AuthorizationStateMachine
    var location: LocationServiceStateMachine
    var tasks: BackgroundTaskStateMachine
    var fetch: BackgroundFetchStateMachine
    var timers = TimerQueue()
    var observers: [any SimulationObserver] = []
    var lastActionTime: Duration = .zero
    var lifecycleQueue: [AppLifecycleStateMachine.Event] = []
    var inLifecycle = false
    var wasInUse = false
    /// The app state last written to the audit log.
    var reportedState = AppState.notRunning
    /// The status the app reads changed while it was suspended: its delegate hears of it when it
    /// runs again.
    var authorizationChangedWhileSuspended = false
    /// A suspended app resumed on its way to the foreground: its held fixes come when it is active.
    var resumePending = false
    /// The system alert on screen over the app, if any.
    var alertOnScreen: SystemAlert?
    var expirationHandlers: [Int: () -> Void] = [:]
    var appWork: [Int: () -> Void] = [:]
    var appWorkCounter = 0
    var launchCount = 0
    var fetchCounter = 0
    /// Buffers reused from fix to fix: the location service's actions, the locations decided as
    /// delivered and not yet handed over, and a spare for the next hand-over.
    var actionScratch: [LocationServiceStateMachine.Action] = []
    var pendingUpdates: [LocationUpdate] = []
    var spareUpdates: [LocationUpdate] = []
    /// What the app's fetch synced, for the `completed` event.
    var fetchNote: (synced: Int, reason: String?)?

    /// Settings the app's code made on its manager before the device adopted it; recorded when
    /// the run starts.
    var settingsBeforeAdoption: [(name: ManagerSetting, value: String)] = []

    // MARK: The services that wake or relaunch the app (Simulation+Services.swift)

    var significantChanges = SignificantChangeStateMachine()
    var regionMonitor: RegionMonitorStateMachine
    var visits: VisitStateMachine
    var taskRequests = TaskSchedulerStateMachine()
    var pushThrottle: PushThrottle
    /// Background App Refresh, Low Power Mode, power and network, as the scenario and the user
    /// set them.
    public internal(set) var power: PowerAndRefresh
    /// Whether any service looks at fixes (checked once per fix on the hot path).
    var servicesWatchFixes = false
    /// Whether this instance of the app started the significant-change service (after a
    /// relaunch it must start it again to receive the events).
    var significantChangesListening = false
    /// Service events waiting for a launched or woken app.
    var pendingServiceEvents: [(event: PendingServiceEvent, said: Bool)] = []
    /// The user swiped the app away and has not launched it since (a launch by a service does not
    /// count: "the user must relaunch your app").
    var userForceQuit = false
    /// Until when a location service's wake keeps the app running.
    var serviceWakeUntil: Duration? { didSet { refreshServiceActivity() } }
    /// The background pushes whose handlers have not completed, by id; true when the handler
    /// runs against the 30 s budget (off screen).
    var pushHandlers: [Int: Bool] = [:] { didSet { refreshServiceActivity() } }
    var pushCounter = 0
    /// The newest background push the system holds for the app ("only holds the newest one").
    var heldPush = false
    /// The `BGTask`s running, by id.
    var runningTasks: [Int: ScheduledTask] = [:] { didSet { refreshServiceActivity() } }
    var taskCounter = 0
    var taskHandlers: [String: (ScheduledTask) -> Void] = [:]
    /// Why each due request was last said to wait (each reason is said once).
    var waitingReported: [String: AuditReason] = [:]
    var audioPlaying = false { didSet { refreshServiceActivity() } }
    /// `requestLocation()` in progress: when it times out.
    var locationRequestDeadline: Duration?
    /// Full accuracy granted for now (`requestTemporaryFullAccuracyAuthorization`).
    var temporaryFullAccuracy = false
    var temporaryFullAccuracyCompletion: ((LocationError?) -> Void)?
    var transfers: [Int: Transfer] = [:]
    var transferCounter = 0
    /// The app handles its URL session's events (it runs until it calls the completion).
    var transferEventsPending = false { didSet { refreshServiceActivity() } }
    /// Whether any of the five above may keep the app running: the one fact the per-fix path
    /// reads (each read of a class property costs an exclusivity check).
    var serviceActivity = false

    func refreshServiceActivity() {
        serviceActivity =
            serviceWakeUntil != nil || !pushHandlers.isEmpty || !runningTasks.isEmpty || transferEventsPending
            || audioPlaying || activitySessions > 0
    }
    /// The `CLBackgroundActivitySession`s the app holds (started in use, not invalidated).
    var activitySessions = 0 { didSet { refreshServiceActivity() } }
    /// The `CLServiceSession`s the app holds, by id, with the authorization each asks for.
    var serviceSessions: [Int: ServiceSession.Authorization] = [:]
    var sessionCounter = 0
    /// The `CLMonitor`s the app created in this launch, by name (their conditions persist).
    var conditionMonitors: [String: ConditionMonitor] = [:]
    /// The conditions of the app's `CLMonitor`s, by monitor name: the system keeps them across
    /// launches.
    var conditionRegions: [String: RegionMonitorStateMachine] = [:]
    /// Their names, sorted: the order the fixes visit them in.
    var conditionNames: [String] = []
    /// The sessions scripted actions started (the tutorial app's).
    var scriptedActivitySessions: [BackgroundActivitySession] = []
    var scriptedServiceSessions: [ServiceSession] = []
    /// The last diagnostic the live-update streams heard (iOS 18), so that each is sent once.
    var lastLiveDiagnostic: LiveUpdate.Diagnostic?
    /// Why the app was launched this time (nil before the first launch).
    public internal(set) var launchCause: LifecycleCause?
    /// `BGTaskScheduler.shared` for the app.
    public private(set) lazy var taskScheduler = BackgroundTaskScheduler(simulation: self)
    /// The background URL session's uploads land here: one file per transfer (nil: nowhere).
    public var uploadDirectory: String?

    /// A simulation of `scenario`, whose offset zero is the instant `epoch`, running `app`
    /// (by default the ``TutorialApp`` the scenario describes) with `manager` (by default a new
    /// one; pass the manager your app's code created with ``LocationManager/init()``, which must
    /// not belong to another simulation).
    public init(scenario: Scenario, epoch: Date, app: (any SimulatedApp)? = nil, manager: LocationManager? = nil) {
        let manager = manager ?? LocationManager()
        precondition(!manager.isAdopted, "this LocationManager already belongs to another simulated device")
        self.manager = manager
        self.scenario = scenario
        self.epoch = epoch
        self.app = app ?? TutorialApp(scenario: scenario)
        let version = scenario.system.iosVersion
        var accuracy: AccuracyAuthorization?
        if let precise = scenario.device.preciseLocation { accuracy = precise ? .fullAccuracy : .reducedAccuracy }
        lifecycle = AppLifecycleStateMachine(gracePeriod: scenario.system.gracePeriod)
        authorization = AuthorizationStateMachine(
            descriptions: scenario.info.usageDescriptions, status: scenario.device.authorization, accuracy: accuracy,
            locationServicesEnabled: scenario.device.locationServices, version: version)
        location = LocationServiceStateMachine(version: version, heldDelivery: scenario.app.heldDelivery)
        tasks = BackgroundTaskStateMachine(
            budget: scenario.system.effectiveTaskBudget, warning: scenario.system.expirationWarning)
        fetch = BackgroundFetchStateMachine(
            hasFetchMode: scenario.info.backgroundModes.contains(.fetch), budget: scenario.system.fetchBudget)
        regionMonitor = RegionMonitorStateMachine(hysteresis: scenario.system.regionHysteresis)
        visits = VisitStateMachine(radius: scenario.system.visitRadius, minimumStay: scenario.system.visitMinimumStay)
        pushThrottle = PushThrottle(perHour: scenario.system.pushesPerHour)
        power = scenario.device.power
        settingsBeforeAdoption = manager.adopt(by: self)
        if let launch = scenario.app.launchAt {
            timers.schedule(.launch, at: launch, class: .action)
            lastActionTime = launch
        }
        for item in scenario.timeline {
            timers.schedule(.action(item.action), at: item.at, class: .action)
            lastActionTime = max(lastActionTime, item.at)
        }
    }

    /// Adds an observer; it sees every event from then on.
    public func addObserver(_ observer: any SimulationObserver) { observers.append(observer) }

    /// The default app, when the simulation runs it.
    public var tutorialApp: TutorialApp? { app as? TutorialApp }

    // MARK: - What the app and the user see

    public var appState: AppState { lifecycle.appState }
    /// The authorization state, for inspection.
    public var authorizationState: AuthorizationStateMachine { authorization }

    /// Time left to the app's background tasks in this stay in the background; nil when no
    /// task uses up time (in the foreground, see ``backgroundTimeRemainingSeconds``).
    public var backgroundTimeRemaining: Duration? {
        appState == .background ? tasks.remaining(at: now) : nil
    }

    /// `UIApplication.backgroundTimeRemaining`, in seconds: `.greatestFiniteMagnitude` in the
    /// foreground ("remains suitably large"), else the time left to the app's tasks.
    public var backgroundTimeRemainingSeconds: Double {
        if appState.isForeground { return .greatestFiniteMagnitude }
        return backgroundTimeRemaining?.inSeconds ?? .greatestFiniteMagnitude
    }

    /// Whether a background location session keeps updates flowing in the background.
    public var hasBackgroundSession: Bool { location.hasBackgroundSession(context()) }

    /// Whether the app is in use: on screen, in the grace period after leaving it, or showing
    /// the location indicator with a background session.
    public var isInUse: Bool {
        if lifecycle.isInUse { return true }
        guard appState == .background else { return false }
        return activitySessions > 0 || location.showsIndicator(context())
    }

    // MARK: - Running

    /// Runs the whole simulation in virtual time, as fast as it goes, and returns its counts.
    @discardableResult
    public func run<S: LocationSource>(_ source: S, isolation: isolated (any Actor)? = #isolation) async throws
        -> RunSummary
    {
        var source = source
        return try await run(&source, waitUntil: nil)
    }

    /// Runs the whole simulation in virtual time from a source that never waits (a replayed
    /// trace): it takes each event without suspending.
    @discardableResult
    public func run<S: SynchronousLocationSource>(_ source: S, isolation: isolated (any Actor)? = #isolation)
        async throws -> RunSummary
    {
        var source = source
        start(source: source.name)
        var pending = try source.nextEvent()
        var end = scenario.end
        while true {
            switch nextStep(pending: pending, end: &end) {
            case .fix(let fix):
                receive(fix)
                pending = try source.nextEvent()
            case .timer: fireNextTimer()
            case .stop: return finish(at: end)
            }
        }
    }

    /// Runs the simulation at `rate` times the pace of `clock` (1 is real time).
    @discardableResult
    public func run<S: LocationSource, C: Clock>(
        _ source: S, clock: C, rate: Double, isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary where C.Duration == Duration {
        precondition(rate > 0 && rate.isFinite, "the rate must be a positive number")
        var source = source
        let start = clock.now
        return try await run(&source) { offset in
            // An offset so far ahead at so slow a rate that it passes Waymark's longest duration
            // waits that long: for ever, in practice, and never a trap.
            let scaled = rate == 1 ? offset : Duration.saturating(seconds: offset.inSeconds / rate)
            try await clock.sleep(until: start.advanced(by: scaled), tolerance: nil)
        }
    }

    private func run<S: LocationSource>(
        _ source: inout S, waitUntil: ((Duration) async throws -> Void)?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary {
        start(source: source.name)
        var pending = try await source.next()
        var end = scenario.end
        while true {
            switch nextStep(pending: pending, end: &end) {
            case .fix(let fix):
                if let waitUntil { try await waitUntil(fix.offset) }
                receive(fix)
                pending = try await source.next()
            case .timer(let time):
                if let waitUntil { try await waitUntil(time) }
                fireNextTimer()
            case .stop: return finish(at: end)
            }
        }
    }

    private enum Step {
        case fix(SourceEvent)
        case timer(Duration)
        case stop
    }

    /// What comes next: the pending fix, or the next timer (actions and timers before a fix at the
    /// same time), or the end. Once the source has ended, the run ends with the last action (or
    /// the scenario's end).
    private func nextStep(pending: SourceEvent?, end: inout Duration?) -> Step {
        if pending == nil && end == nil { end = max(now, lastActionTime) }
        let timerTime = timers.nextTime
        if let fix = pending, timerTime.map({ fix.offset < $0 }) ?? true {
            if let end, fix.offset > end { return .stop }
            return .fix(fix)
        }
        guard let time = timerTime else { return .stop }
        if let end, time > end { return .stop }
        return .timer(time)
    }

    // MARK: - Driving the loop step by step

    /// Begins a run driven step by step (``run(_:isolation:)-34bx6`` does all of this itself):
    /// records the `started` event. A live recorder or a test calls this, then
    /// ``advance(to:)`` as its clock moves and ``receive(_:)`` as fixes arrive, and
    /// ``finish(at:)`` at the end.
    public func start(source name: String) {
        record(.started(source: name, iosVersion: version))
        for (setting, value) in settingsBeforeAdoption { record(.setting(name: setting, value: value)) }
        settingsBeforeAdoption = []
        if manager.allowsBackgroundLocationUpdates && !scenario.info.backgroundModes.contains(.location) {
            // The app set it before the device ran it; the exception iOS raises comes at once,
            // before any app code runs, so the setting is undone rather than the app terminated.
            record(
                .diagnostic(
                    message:
                        "allowsBackgroundLocationUpdates was set without the location background mode in the Info; the setting is undone"
                ))
            manager.refuseBackgroundUpdates()
        }
    }

    /// When the scenario's last scripted action (or the launch) is due: without an `end`, a run
    /// goes on to this time after its source has ended.
    public var lastScriptedOffset: Duration { lastActionTime }

    /// When the next scripted action, system timer or app work is due, if any: a driver that
    /// waits for a live source should wake up then and call ``advance(to:)``.
    public var nextScheduledOffset: Duration? { timers.nextTime }

    /// Fires every action and timer due at or before `offset`, in order, and moves the
    /// simulation's time to `offset`.
    public func advance(to offset: Duration) {
        while let time = timers.nextTime, time <= offset { fireNextTimer() }
        now = max(now, offset)
    }

    /// Handles one event from the source at its offset, after everything due at or before it.
    public func receive(_ event: SourceEvent) {
        advance(to: event.offset)
        settle()  // the app's own calls between steps (stopping updates, ending a task) count first
        var actions = actionScratch
        actionScratch = []
        actions.removeAll(keepingCapacity: true)
        location.receive(event, context(), into: &actions)
        apply(actions, arrivals: true)
        actionScratch = actions
        if servicesWatchFixes { servicesObserve(event) }
        settle()
    }

    /// Ends the run at `offset` (or now): discards what is still held, records `finished`, and
    /// ends the manager's update streams. Returns the counts.
    @discardableResult
    public func finish(at offset: Duration? = nil) -> RunSummary {
        if let offset, offset > now { now = offset }
        apply(location.handle(.runEnded))
        record(.finished(summary))
        manager.finishUpdates()
        return summary
    }

    /// Carries out a scripted action now, as the timeline would (for tests and tools).
    public func perform(_ action: Scenario.Action) {
        record(.action(name: action.name, value: action.value))
        carryOut(action)
        settle()
    }

    private func fireNextTimer() {
        guard let entry = timers.pop() else { return }
        now = max(now, entry.time)
        switch entry.timer {
        case .action(let action):
            record(.action(name: action.name, value: action.value))
            carryOut(action)
        case .launch:
            if appState == .notRunning { lifecycleEvent(.launch(inBackground: false, cause: .userLaunch)) }
        case .system(let key):
            fire(key)
        case .app(let id, let launch):
            if let work = appWork.removeValue(forKey: id), launch == launchCount, appCodeRuns { work() }
        }
        settle()
    }

    // MARK: - The app's system calls (UIApplication)

    /// `beginBackgroundTask(withName:expirationHandler:)`: ``BackgroundTaskIdentifier/invalid``
    /// when the app's code cannot run.
    @discardableResult
    public func beginBackgroundTask(reason: String = "app", expirationHandler: (() -> Void)? = nil)
        -> BackgroundTaskIdentifier
    {
        guard appCodeRuns else { return .invalid }
        let actions = tasks.handle(.begin(at: now))
        guard case .began(let task)? = actions.first else { return .invalid }
        if let expirationHandler { expirationHandlers[task] = expirationHandler }
        apply(tasks: actions, reason: reason)
        return BackgroundTaskIdentifier(rawValue: task)
    }

    /// `endBackgroundTask(_:)`.
    public func endBackgroundTask(_ task: BackgroundTaskIdentifier, reason: String = "app") {
        guard task != .invalid, appCodeRuns else { return }
        apply(tasks: tasks.handle(.end(task: task.rawValue, at: now)), reason: reason)
    }

    /// The app's outstanding background tasks, oldest first.
    public var backgroundTasks: [BackgroundTaskIdentifier] { tasks.tasks.map(BackgroundTaskIdentifier.init) }

    /// `setMinimumBackgroundFetchInterval(_:)`.
    public func setMinimumBackgroundFetchInterval(_ interval: Scenario.FetchInterval) {
        guard appCodeRuns else { return }
        let value: Duration? =
            switch interval {
            case .never: nil
            // A second at least: a zero interval would come due again in the same instant.
            case .minimum: max(.seconds(1), scenario.system.minimumFetchInterval)
            case .every(let d): max(.seconds(1), d)
            }
        apply(fetch: fetch.handle(.setInterval(value, at: now)))
    }

    /// Runs `work` after `delay`, as `DispatchQueue.main.asyncAfter` would in the app, if the app
    /// is running then and has not been terminated since. Unlike iOS, work that comes due while the
    /// app is suspended is dropped rather than run when it resumes.
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) {
        guard appCodeRuns else { return }
        appWorkCounter += 1
        appWork[appWorkCounter] = work
        timers.schedule(.app(id: appWorkCounter, launch: launchCount), at: now + max(.zero, delay))
    }

    /// Writes a `source` event to the audit log (format 4): something the location source did
    /// beside its fixes (a live receiver's gpsd connected, went away, went silent), at the
    /// simulation's current time.
    public func noteSource(_ action: SourceAction, detail: String? = nil) {
        record(.source(action: action, detail: detail))
    }

    /// Writes an `app` event to the audit log: something the app's code did, and why.
    public func log(_ action: String, detail: String? = nil) {
        record(.app(action: action, detail: detail))
    }

    // MARK: - Keeping the machines in step

    /// Whether the app's code runs: neither suspended nor terminated, and not past a fatal error
    /// whose termination waits for the code that raised it to return (nothing it does then takes
    /// effect).
    var appCodeRuns: Bool {
        lifecycle.isRunning && !lifecycleQueue.contains { if case .terminate = $0 { true } else { false } }
    }

    /// After every step: the in-use rule (Allow Once ends when the app stops being in use) and
    /// suspension (a backgrounded app that nothing keeps running).
    func settle() {
        while true {
            // Off screen, the session decides both facts: one context for the two.
            let background = appState == .background ? context() : nil
            // A background activity session (iOS 17) keeps the app in use by itself, with or without
            // standard updates ("allowing it to receive updates or events").
            let inUse =
                lifecycle.isInUse
                || background.map { (serviceActivity && activitySessions > 0) || location.showsIndicator($0) } == true
            if wasInUse && !inUse {
                wasInUse = false
                endTemporaryFullAccuracy()
                perform(authorization: authorization.handle(.appNoLongerInUse))
                continue
            }
            wasInUse = inUse
            guard let background,
                tasks.tasks.isEmpty && !fetch.isFetching && !location.hasBackgroundSession(background)
                    && !keptRunningByServices
            else { return }
            let before = appState
            lifecycleEvent(.idle)
            if appState == before { return }
        }
    }

    /// Why a backgrounded app runs, if it does.
    var runningReason: DeliveryPolicy.Running? {
        guard appState == .background else { return nil }
        if fetch.isFetching { return .backgroundFetch }
        if !tasks.tasks.isEmpty { return .backgroundTask }
        if lifecycle.isInUse { return .gracePeriod }
        guard serviceActivity else { return nil }
        if isWokenByService { return .backgroundWake }
        if audioKeepsRunning { return .backgroundAudio }
        return nil
    }

    /// The app and the device now, for the location service.
    func context() -> LocationServiceStateMachine.Context {
        LocationServiceStateMachine.Context(
            now: now, appState: lifecycle.appState, appInUse: lifecycle.isInUse, running: runningReason,
            authorization: authorization.status, isProvisionalAlways: authorization.isProvisionalAlways,
            accuracy: authorization.accuracy, locationServicesEnabled: authorization.locationServicesEnabled,
            hasLocationMode: scenario.info.backgroundModes.contains(.location), settings: manager.settings,
            activitySession: activitySessions > 0)
    }

    func record(_ kind: AuditEvent.Kind) {
        guard !observers.isEmpty else { return }
        let event = AuditEvent(offset: now, kind: kind)
        for observer in observers { observer.simulation(self, didRecord: event) }
    }

    var hasObservers: Bool { !observers.isEmpty }

}
