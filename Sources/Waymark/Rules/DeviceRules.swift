/// Every rule of the simulated device, in one value: the machines under `Rules/` and the few
/// facts that join them (whether the app is in use, what keeps it running).
///
/// It holds no clock of its own and does no I/O. The driver (``Simulation``) sets ``now`` as its
/// time moves, hands it events (``handle(_:)``) and carries out the ``DeviceAction``s it returns.
/// Each machine answers one question of iOS; this value routes events between them and derives
/// the facts they share, each in one place:
///
/// - whether the app is in use (``isInUse``) and why a backgrounded app runs
///   (``runningReason``, ``KeepRunning``);
/// - whether Background App Refresh is available (``PowerStateMachine``);
/// - who receives a location service's event (``ServiceEventStateMachine``).
public struct DeviceRules: Sendable {
    /// The scenario: the app's Info, the system's settings, the user's answers.
    public let scenario: Scenario
    /// The time since the start of the run, as the driver last set it.
    public var now: Duration = .zero
    /// A termination was decided and waits for the app's code that raised it to return: nothing
    /// that code does takes effect.
    public var terminationPending = false
    /// Whether the app's code listens to live updates (its streams, or the scenario's listener).
    public var liveListeners: Bool { liveUpdates.listening }

    public internal(set) var lifecycle: AppLifecycleStateMachine
    public internal(set) var authorization: AuthorizationStateMachine
    /// The app's location managers, each under the same rules: manager `n` (its number in the
    /// process) at index `n - 1`. The first's place is kept while no process runs, for the
    /// first manager of the next.
    var managers: [ManagerUpdates]
    #if DEBUG
        /// Set while ``receive(_:into:)`` has the managers taken out of the rules (debug builds,
        /// the tests'): a fact read from them then, which would find none, stops the program.
        var managersTakenOut = false
    #endif
    public internal(set) var tasks: BackgroundTaskStateMachine
    public internal(set) var fetch: BackgroundFetchStateMachine
    public internal(set) var alerts = AlertStateMachine()
    public internal(set) var inUse = InUseStateMachine()
    public internal(set) var power: PowerStateMachine
    public internal(set) var significantChanges = SignificantChangeStateMachine()
    public internal(set) var regionMonitor: RegionMonitorStateMachine
    public internal(set) var visits: VisitStateMachine
    public internal(set) var serviceEvents: ServiceEventStateMachine
    public internal(set) var scheduler: ScheduledTaskStateMachine
    public internal(set) var pushes: PushStateMachine
    public internal(set) var transfers: TransferStateMachine
    public internal(set) var audio = AudioStateMachine()
    public internal(set) var sessions = SessionStateMachine()
    public internal(set) var conditions: ConditionMonitorStateMachine
    public internal(set) var temporaryAccuracy = TemporaryAccuracyStateMachine()
    public internal(set) var liveUpdates: LiveUpdateStateMachine

    /// One location manager under the rules: its standard updates, its properties as the app
    /// set them, and its `requestLocation()`.
    struct ManagerUpdates: Sendable {
        var machine: LocationServiceStateMachine
        var settings: LocationServiceStateMachine.Settings
        var request: LocationRequestStateMachine

        init(number: Int, version: IOSVersion, heldDelivery: Scenario.HeldDelivery) {
            machine = LocationServiceStateMachine(version: version, heldDelivery: heldDelivery, manager: number)
            settings = LocationServiceStateMachine.Settings()
            request = LocationRequestStateMachine(version: version, manager: number)
        }
    }

    /// Standard updates of the app's first location manager.
    public var location: LocationServiceStateMachine { managers[0].machine }
    /// The first manager's properties, as the app set them.
    public var settings: LocationServiceStateMachine.Settings { managers[0].settings }
    /// The first manager's `requestLocation()`.
    public var locationRequest: LocationRequestStateMachine { managers[0].request }

    public init(scenario: Scenario) {
        self.scenario = scenario
        let version = scenario.system.iosVersion
        var accuracy: AccuracyAuthorization?
        if let precise = scenario.device.preciseLocation { accuracy = precise ? .fullAccuracy : .reducedAccuracy }
        lifecycle = AppLifecycleStateMachine(gracePeriod: scenario.system.gracePeriod)
        authorization = AuthorizationStateMachine(
            descriptions: scenario.info.usageDescriptions, status: scenario.device.authorization, accuracy: accuracy,
            locationServicesEnabled: scenario.device.locationServices, version: version)
        managers = [ManagerUpdates(number: 1, version: version, heldDelivery: scenario.app.heldDelivery)]
        tasks = BackgroundTaskStateMachine(
            budget: scenario.system.effectiveTaskBudget, warning: scenario.system.expirationWarning)
        fetch = BackgroundFetchStateMachine(
            hasFetchMode: scenario.info.backgroundModes.contains(.fetch), budget: scenario.system.fetchBudget)
        regionMonitor = RegionMonitorStateMachine(hysteresis: scenario.system.regionHysteresis)
        visits = VisitStateMachine(radius: scenario.system.visitRadius, minimumStay: scenario.system.visitMinimumStay)
        pushes = PushStateMachine(perHour: scenario.system.pushesPerHour, budget: scenario.system.pushBudget)
        power = PowerStateMachine(scenario.device.power)
        conditions = ConditionMonitorStateMachine(version: version, hysteresis: scenario.system.regionHysteresis)
        serviceEvents = ServiceEventStateMachine(
            version: version, wakeTime: scenario.system.serviceWakeTime,
            relaunchAfterSwipe: scenario.system.locationRelaunchAfterSwipe)
        liveUpdates = LiveUpdateStateMachine(
            version: version, requiresExplicitServiceSession: scenario.info.requiresExplicitServiceSession)
        scheduler = ScheduledTaskStateMachine(
            version: version, modes: scenario.info.backgroundModes,
            timing: .init(
                appRefreshBudget: scenario.system.appRefreshBudget,
                processingBudget: scenario.system.processingBudget,
                expirationWarning: scenario.system.expirationWarning))
        transfers = TransferStateMachine(
            timing: .init(
                duration: scenario.system.transferDuration, retryAfter: scenario.system.transferRetryAfter,
                eventsBudget: scenario.system.pushBudget))
    }

    /// The iOS release whose rules apply.
    public var version: IOSVersion { scenario.system.iosVersion }
    var system: Scenario.SystemSettings { scenario.system }
    @inline(__always)
    var modes: BackgroundModes { scenario.info.backgroundModes }

    // MARK: - The facts the machines share
    //
    // The getters the per-fix path reads are inlined (`@inline(__always)`): a getter or a method
    // that does not mutate, called on this struct (in the driver's class property, or as `self`
    // in a mutating method), is handed a copy of the whole struct, 1.4 kB, unless it is inlined
    // (docs/benchmarks.md). `scripts/check-fix-path.sh` reads a release build for such copies on
    // the per-fix path (`scripts/bench.sh --replay-cli` runs it first).

    public var appState: AppState { lifecycle.appState }

    /// Whether the app's code runs: neither suspended nor terminated, and no termination waits
    /// for the code that raised it (nothing it does then takes effect).
    public var appCodeRuns: Bool { lifecycle.isRunning && !terminationPending }

    /// Whether the app is in use: on screen, in the grace period after leaving it, or showing the
    /// location indicator with a background location session (or holding a background activity
    /// session).
    @inline(__always)
    public var isInUse: Bool {
        if lifecycle.isInUse { return true }
        guard appState == .background else { return false }
        return sessions.activitySessions > 0 || backgroundSessions.showIndicator
    }

    /// Whether any of the app's managers has a background location session (`any`), and
    /// whether any such session shows the location indicator, each manager read in its own
    /// context.
    @inline(__always)
    var backgroundSessions: (any: Bool, showIndicator: Bool) {
        #if DEBUG
            precondition(
                !managersTakenOut,
                "read while DeviceRules.receive has the managers taken out: the per-fix contexts must not read them")
        #endif
        var sessions = (any: false, showIndicator: false)
        for i in managers.indices {
            let c = context(ofManagerAt: i)
            guard managers[i].machine.hasBackgroundSession(c) else { continue }
            sessions.any = true
            if managers[i].machine.showsIndicator(c) {
                sessions.showIndicator = true
                break
            }
        }
        return sessions
    }

    /// What may keep a backgrounded app running, apart from its tasks and fetch.
    @inline(__always)
    var keepRunning: KeepRunning {
        KeepRunning(
            now: now, serviceWakeUntil: serviceEvents.wakeUntil, pushHandlers: pushes.handlers,
            runningTasks: !scheduler.running.isEmpty, transferEvents: transfers.eventsPending,
            audioPlaying: audio.isPlaying, audioMode: modes.contains(.audio),
            activitySessions: sessions.activitySessions)
    }

    /// Why a backgrounded app runs, if it does.
    @inline(__always)
    public var runningReason: DeliveryPolicy.Running? {
        guard appState == .background else { return nil }
        if fetch.isFetching { return .backgroundFetch }
        if !tasks.tasks.isEmpty { return .backgroundTask }
        if lifecycle.isInUse { return .gracePeriod }
        return keepRunning.runningReason
    }

    /// Whether a background location session keeps one of the app's managers' updates flowing.
    public var hasBackgroundSession: Bool { backgroundSessions.any }

    /// The app and the device now, for the first manager's location service.
    public func context() -> LocationServiceStateMachine.Context { context(ofManagerAt: 0) }

    /// The app and the device now, for the location service of the manager at `index` in
    /// ``managers`` (number `index + 1`): its properties, and whether its live updates listen.
    @inline(__always)
    func context(ofManagerAt index: Int) -> LocationServiceStateMachine.Context {
        context(ofManager: index + 1, settings: managers[index].settings)
    }

    /// The same for manager number `manager` with `settings`, read from the rest of the rules
    /// alone (the per-fix path calls it while the managers are taken out of the rules).
    @inline(__always)
    func context(
        ofManager manager: Int, settings: LocationServiceStateMachine.Settings
    ) -> LocationServiceStateMachine.Context {
        LocationServiceStateMachine.Context(
            now: now, appState: lifecycle.appState, appInUse: lifecycle.isInUse, running: runningReason,
            authorization: authorization.status, isProvisionalAlways: authorization.isProvisionalAlways,
            accuracy: authorization.accuracy, locationServicesEnabled: authorization.locationServicesEnabled,
            hasLocationMode: modes.contains(.location), settings: settings,
            activitySession: sessions.activitySessions > 0,
            live: .init(
                listening: liveUpdates.isListening(manager: manager),
                diagnosticShown: liveUpdates.lastDiagnostic(manager: manager) != nil,
                promptPending: authorization.pendingPrompt != nil))
    }

    /// The app and the device now, for a wake-up service.
    func serviceContext() -> ServiceDelivery.Context {
        ServiceDelivery.Context(
            appState: appState, appInUse: isInUse, terminatedByUser: lifecycle.swipedAway,
            authorization: authorization.status, isProvisionalAlways: authorization.isProvisionalAlways,
            locationServicesEnabled: authorization.locationServicesEnabled, backgroundModes: modes,
            power: power.settings)
    }

    /// Time left to the app's background tasks in this stay in the background; nil when no task
    /// uses up time.
    @inline(__always)
    public var backgroundTimeRemaining: Duration? { appState == .background ? tasks.remaining(at: now) : nil }

    // MARK: - Settling

    /// What the device does after every step, when something is due.
    public enum Settle: Sendable {
        /// The app is no longer in use: Allow Once ends, and full accuracy granted for now.
        case noLongerInUse([DeviceAction])
        /// Nothing keeps the backgrounded app running: it is suspended.
        case idle
    }

    /// The next thing settling does, or nil when the device is settled: the in-use rule (Allow
    /// Once ends when the app stops being in use), then suspension of a backgrounded app that
    /// nothing keeps running.
    public mutating func settleStep() -> Settle? {
        // On screen (or not running) only the in-use rule applies, and only the lifecycle says
        // whether the app is in use.
        guard appState == .background else { return inUseStep(inUse: lifecycle.isInUse) }
        // Off screen, the managers' sessions decide both facts: read once for the two. A
        // background activity session keeps the app in use only while something may keep it
        // running ("allowing it to receive updates or events").
        let background = backgroundSessions
        let inUse =
            lifecycle.isInUse || (keepRunning.anyActivity && sessions.activitySessions > 0) || background.showIndicator
        if let step = inUseStep(inUse: inUse) { return step }
        guard tasks.tasks.isEmpty && !fetch.isFetching && !background.any && !keepRunning.keepsRunning else {
            return nil
        }
        return .idle
    }

    /// The in-use rule: Allow Once ends, and full accuracy granted for now, when the app stops
    /// being in use.
    private mutating func inUseStep(inUse: Bool) -> Settle? {
        guard self.inUse.update(inUse: inUse) else { return nil }
        return .noLongerInUse([.post(.endTemporaryFullAccuracy), .post(.authorization(.appNoLongerInUse))])
    }
}

/// Whether the app was in use at the last step (the in-use rule acts on the change).
public struct InUseStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable { case notInUse, inUse }
    public private(set) var state: State = .notInUse

    /// The app is `inUse` now: true when it has just stopped being in use.
    mutating func update(inUse: Bool) -> Bool {
        let ended = state == .inUse && !inUse
        state = inUse ? .inUse : .notInUse
        return ended
    }
}
