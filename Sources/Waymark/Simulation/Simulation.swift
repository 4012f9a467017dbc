#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Watches a simulation: every audit event, in order, as it happens.
public protocol SimulationObserver: AnyObject {
    func simulation(_ simulation: Simulation, didRecord event: AuditEvent)
}

/// Where the simulated app's background fetch syncs the locations it stored.
public protocol FetchSink: AnyObject {
    /// Takes the locations stored since the last successful sync; throwing makes the fetch
    /// report `failed`, and the same locations are offered again next time.
    func sync(_ locations: ArraySlice<StoredLocation>) throws
}

/// A location the simulated app received and stored, with the app's state at the time.
public struct StoredLocation: Sendable, Hashable {
    public var location: Location
    public var appState: AppState
    public var reason: FixReason
    /// The point's index in its file, or the fix's sequence number.
    public var index: Int
    public var segment: Int
    /// Time since the start of the run when it was delivered.
    public var offset: Duration

    public init(
        location: Location, appState: AppState, reason: FixReason, index: Int, segment: Int, offset: Duration
    ) {
        self.location = location
        self.appState = appState
        self.reason = reason
        self.index = index
        self.segment = segment
        self.offset = offset
    }
}

/// The simulated device: an app that owns a ``LocationManager``, the system around it, and the
/// one event loop that runs them.
///
/// Everything happens in simulation time, on one loop: fixes from the source, the scenario's
/// scripted actions, and the system's timers (the grace period before suspension, background
/// task expiry, fetch windows, the user's answers to prompts). At equal times, scripted actions
/// come first, then timers, then the fix; so the same inputs always give the same events.
///
/// ``run(_:)`` runs in virtual time and never waits; ``run(_:clock:rate:)`` waits on a clock so
/// that the run keeps pace with it (at `rate` times real time). The article "Modelling
/// background behaviour" gives every rule.
///
/// A `Simulation` is not thread-safe: create it, set its delegate and observers, and run it from
/// one task.
public final class Simulation {
    public let scenario: Scenario
    /// The wall-clock instant of offset zero; audit times are this plus the offset.
    public let epoch: Date
    /// The app's location manager. Set its ``LocationManager/delegate`` before running.
    public let manager = LocationManager()
    /// The time since the start of the run.
    @exclusivity(unchecked) public private(set) var now: Duration = .zero
    @exclusivity(unchecked) public private(set) var appState: AppState = .notRunning
    /// The locations the app stored, in delivery order (with ``retainsStoredLocations`` off,
    /// only those background fetch has not synced yet).
    @exclusivity(unchecked) public private(set) var stored: [StoredLocation] = []
    /// How many locations the app stored in all.
    @exclusivity(unchecked) public private(set) var storedCount = 0
    /// Whether ``stored`` keeps every location (the default). Off, it keeps only what background
    /// fetch has yet to sync (nothing, when the app does not fetch), so that a recording of days
    /// runs in bounded memory; a session store keeps them instead.
    @exclusivity(unchecked) public var retainsStoredLocations = true
    @exclusivity(unchecked) public private(set) var summary = RunSummary()
    /// Where background fetch syncs stored locations; nil syncs nowhere (every fetch succeeds).
    @exclusivity(unchecked) public var fetchSink: (any FetchSink)?

    @exclusivity(unchecked) private var observers: [any SimulationObserver] = []
    @exclusivity(unchecked) private var queue = TimerQueue()
    @exclusivity(unchecked) private var authorization: AuthorizationStateMachine
    @exclusivity(unchecked) private var lastActionTime: Duration = .zero

    // Updates.
    @exclusivity(unchecked) private var startedInForeground = false
    @exclusivity(unchecked) private var startedInBackgroundWhenInUse = false
    @exclusivity(unchecked) private var deniedReported = false
    @exclusivity(unchecked) private var lastDeliveredOffset: Duration?
    /// The accuracy tier of the last delivery; a change of tier starts its throttle afresh.
    @exclusivity(unchecked) private var lastDeliveredTier: AccuracyModel.Tier?
    @exclusivity(unchecked) private var held: [(location: Location, index: Int, segment: Int)] = []
    @exclusivity(unchecked) private var arrivedWhileAway = 0

    // Auto-pause.
    @exclusivity(unchecked) private var detector = AutoPause()
    @exclusivity(unchecked) private var isPaused = false
    @exclusivity(unchecked) private var lastSegment = 0
    @exclusivity(unchecked) private var pauseAnchor: Coordinate?

    // Lifecycle.
    @exclusivity(unchecked) private var inGracePeriod = false
    @exclusivity(unchecked) private var graceGeneration = 0
    @exclusivity(unchecked) private var tasks: [Int] = []
    @exclusivity(unchecked) private var taskCounter = 0
    @exclusivity(unchecked) private var taskBudgetStart: Duration?
    @exclusivity(unchecked) private var taskGeneration = 0
    @exclusivity(unchecked) private var taskNeedsReinstating = false
    @exclusivity(unchecked) private var terminatedByUser = false
    @exclusivity(unchecked) private var hasLaunched = false
    @exclusivity(unchecked) private var needsForegroundSetup = false

    // Fetch.
    @exclusivity(unchecked) private var fetchInProgress = false
    @exclusivity(unchecked) private var fetchStartedAt: Duration = .zero
    @exclusivity(unchecked) private var fetchGeneration = 0
    @exclusivity(unchecked) private var fetchWakeGeneration = 0
    @exclusivity(unchecked) private var fetchDue = false
    @exclusivity(unchecked) private var fetchSpacing = 1
    @exclusivity(unchecked) private var syncedCount = 0

    // Prompts.
    @exclusivity(unchecked) private var answerGeneration = 0

    /// A simulation of `scenario`, whose offset zero is the instant `epoch`.
    public init(scenario: Scenario, epoch: Date) {
        self.scenario = scenario
        self.epoch = epoch
        var accuracy: AccuracyAuthorization?
        if let precise = scenario.device.preciseLocation { accuracy = precise ? .fullAccuracy : .reducedAccuracy }
        authorization = AuthorizationStateMachine(
            descriptions: scenario.info.usageDescriptions, status: scenario.device.authorization, accuracy: accuracy,
            locationServicesEnabled: scenario.device.locationServices)
        manager.host = self
        if let launch = scenario.app.launchAt {
            queue.schedule(.launch, at: launch, class: .action)
            lastActionTime = launch
        }
        for item in scenario.timeline {
            queue.schedule(.action(item.action), at: item.at, class: .action)
            lastActionTime = max(lastActionTime, item.at)
        }
    }

    /// Adds an observer; it sees every event from then on.
    public func addObserver(_ observer: any SimulationObserver) { observers.append(observer) }

    /// The authorization state, for inspection.
    public var authorizationState: AuthorizationStateMachine { authorization }

    /// Time left to the app's background tasks, as `UIApplication.backgroundTimeRemaining`;
    /// nil in the foreground (where iOS reports a huge number) and when no task runs.
    public var backgroundTimeRemaining: Duration? {
        guard appState == .background, !tasks.isEmpty, let start = taskBudgetStart else { return nil }
        let left = scenario.system.taskBudget - (now - start)
        return left > .zero ? left : .zero
    }

    /// Whether a background location session keeps updates flowing in the background.
    public var hasBackgroundSession: Bool {
        manager.isUpdatingLocation && !isPaused && scenario.info.backgroundModes.contains(.location)
            && manager.allowsBackgroundLocationUpdates
            && (startedInForeground || authorization.status == .authorizedAlways) && authorization.allowsLocation
    }

    // MARK: - Running

    /// Runs the whole simulation in virtual time, as fast as it goes, and returns its counts.
    @discardableResult
    public func run<S: LocationSource>(_ source: S) async throws -> RunSummary {
        var source = source
        return try await run(&source, waitUntil: nil)
    }

    /// Runs the simulation at `rate` times the pace of `clock` (1 is real time).
    @discardableResult
    public func run<S: LocationSource, C: Clock>(_ source: S, clock: C, rate: Double) async throws -> RunSummary
    where C.Duration == Duration {
        precondition(rate > 0 && rate.isFinite, "the rate must be a positive number")
        var source = source
        let start = clock.now
        return try await run(&source) { offset in
            let scaled = rate == 1 ? offset : Duration.nanoseconds(Int64((offset.inSeconds / rate * 1e9).rounded()))
            try await clock.sleep(until: start.advanced(by: scaled), tolerance: nil)
        }
    }

    private func run<S: LocationSource>(
        _ source: inout S, waitUntil: ((Duration) async throws -> Void)?
    ) async throws -> RunSummary {
        start(source: source.name)
        var pending = try await source.next()
        var end = scenario.end
        while true {
            let timerTime = queue.nextTime
            if let fix = pending, timerTime.map({ fix.offset < $0 }) ?? true {
                if let end, fix.offset > end { break }
                if let waitUntil { try await waitUntil(fix.offset) }
                receive(fix)
                pending = try await source.next()
                if pending == nil && end == nil { end = max(now, lastActionTime) }
            } else if let time = timerTime {
                if pending == nil && end == nil { end = max(now, lastActionTime) }
                if let end, time > end { break }
                if let waitUntil { try await waitUntil(time) }
                fireNextTimer()
            } else {
                break
            }
        }
        return finish(at: end)
    }

    // MARK: - Driving the loop step by step

    /// Begins a run driven step by step (``run(_:)`` does all of this itself): records the
    /// `started` event. A live recorder calls this, then ``advance(to:)`` as its clock moves and
    /// ``receive(_:)`` as fixes arrive, and ``finish(at:)`` at the end.
    public func start(source name: String) {
        record(.started(source: name))
    }

    /// When the next scripted action or system timer is due, if any: a driver that waits for a
    /// live source should wake up then and call ``advance(to:)``.
    public var nextScheduledOffset: Duration? { queue.nextTime }

    /// Fires every action and timer due at or before `offset`, in order, and moves the
    /// simulation's time to `offset`.
    public func advance(to offset: Duration) {
        while let time = queue.nextTime, time <= offset { fireNextTimer() }
        now = max(now, offset)
    }

    /// Handles one event from the source at its offset, after everything due at or before it.
    public func receive(_ event: SourceEvent) {
        advance(to: event.offset)
        handle(event)
        if appState == .background { evaluateSuspension() }
    }

    /// Ends the run at `offset` (or now): discards what is still held, records `finished`, and
    /// ends the manager's update streams. Returns the counts.
    @discardableResult
    public func finish(at offset: Duration? = nil) -> RunSummary {
        if let offset, offset > now { now = offset }
        if !held.isEmpty {
            summary.discardedHeld += held.count
            record(.heldDiscarded(count: held.count, reason: "runEnded"))
            held.removeAll()
        }
        record(.finished(summary))
        manager.finishUpdates()
        return summary
    }

    private func fireNextTimer() {
        guard let entry = queue.pop() else { return }
        now = max(now, entry.time)
        switch entry.timer {
        case .action(let action):
            record(.action(name: action.name, value: action.value))
            perform(action)
        case .launch:
            if appState == .notRunning { launch(inBackground: false, cause: "userLaunch") }
        case .graceEnd(let g):
            guard g == graceGeneration else { return }
            inGracePeriod = false
        case .taskWarning(let g):
            guard g == taskGeneration, !tasks.isEmpty else { return }
            taskNeedsReinstating = true
            record(
                .backgroundTask(action: "expiring", task: nil, remaining: backgroundTimeRemaining, reason: "budget"))
            if scenario.app.endsTaskOnExpiration {
                while !tasks.isEmpty { endBackgroundTask(reason: "expirationHandler") }
            }
        case .taskDeadline(let g):
            guard g == taskGeneration, !tasks.isEmpty else { return }
            terminate(reason: "watchdog")
        case .fetchWake(let g):
            guard g == fetchWakeGeneration else { return }
            fetchWoke()
        case .fetchDone(let g):
            guard g == fetchGeneration, fetchInProgress else { return }
            completeFetch()
        case .fetchDeadline(let g):
            guard g == fetchGeneration, fetchInProgress else { return }
            record(.fetch(action: "expired", result: nil, synced: nil, reason: "budget"))
            fetchInProgress = false
            fetchSpacing *= 2
            scheduleFetchWake(at: fetchStartedAt + fetchInterval * fetchSpacing)
            terminate(reason: "fetchBudgetExceeded")
        case .answer(let prompt, let g):
            guard g == answerGeneration else { return }
            answer(prompt)
        }
        evaluateSuspension()
    }

    // MARK: - Fixes

    private func handle(_ event: SourceEvent) {
        switch event.kind {
        case .noFix:
            if manager.isUpdatingLocation && authorization.allowsLocation && appState != .notRunning
                && appState != .suspended
            {
                report(LocationError(.locationUnknown, reason: "noFix"))
            }
            let c = Coordinate(latitude: .nan, longitude: .nan)
            count(event, coordinate: c, decision: .dropped, reason: .noFix, delivered: nil)
        case .fix(let location):
            handle(location, event: event)
        }
    }

    private func handle(_ location: Location, event: SourceEvent) {
        let running = appState != .notRunning && appState != .suspended
        if running && manager.isUpdatingLocation && authorization.isProvisionalAlways && !appState.isForeground {
            perform(authorization.handle(.neededAlways))
        }
        if event.segment != lastSegment {
            // After a loss of signal, stillness is measured afresh.
            lastSegment = event.segment
            detector.reset()
        }
        if running && manager.isUpdatingLocation && authorization.allowsLocation {
            observeMotion(location.coordinate)
        }
        let context = DeliveryPolicy.Context(
            appState: appState, isUpdating: manager.isUpdatingLocation,
            locationServicesEnabled: authorization.locationServicesEnabled, authorization: authorization.status,
            isPaused: isPaused, hasBackgroundSession: appState == .background && hasBackgroundSession,
            startedInBackgroundWhenInUse: startedInBackgroundWhenInUse, running: runningReason)
        var (decision, reason) = DeliveryPolicy.decide(context)
        var delivered: Location?
        switch decision {
        case .delivered:
            let tier = AccuracyModel.tier(
                desiredAccuracy: manager.desiredAccuracy, accuracy: authorization.accuracy)
            let candidate = AccuracyModel.apply(tier, to: location)
            deliveryTier = tier
            if let interval = tier.minimumInterval, let last = lastDeliveredOffset, lastDeliveredTier == tier,
                now - last < interval
            {
                (decision, reason) = (.dropped, .accuracyThrottle)
            } else if manager.distanceFilter > 0, let last = manager.location,
                Geodesic.distance(last.coordinate, candidate.coordinate) < manager.distanceFilter
            {
                (decision, reason) = (.dropped, .distanceFilter)
            } else {
                delivered = candidate
            }
        case .held:
            held.append((location, event.index, event.segment))
        case .dropped:
            if reason == .denied || reason == .restricted || reason == .locationServicesDisabled {
                reportDenied(reason)
            }
        case .ignored:
            break
        }
        count(event, coordinate: location.coordinate, decision: decision, reason: reason, delivered: delivered)
        if let delivered { deliver(delivered, reason: reason, index: event.index, segment: event.segment) }
    }

    private var runningReason: DeliveryPolicy.Running? {
        guard appState == .background else { return nil }
        if fetchInProgress { return .backgroundFetch }
        if !tasks.isEmpty { return .backgroundTask }
        return inGracePeriod ? .gracePeriod : nil
    }

    private func count(
        _ event: SourceEvent, coordinate: Coordinate, decision: FixDecision, reason: FixReason,
        delivered: Location?
    ) {
        summary.count(decision, reason, appState)
        guard !observers.isEmpty else { return }
        record(
            .fix(
                AuditEvent.FixRecord(
                    index: event.index, segment: event.segment, decision: decision, reason: reason,
                    appState: appState, authorization: authorization.status, accuracy: authorization.accuracy,
                    coordinate: coordinate, delivered: delivered, backgroundTimeRemaining: backgroundTimeRemaining,
                    indicator: delivered != nil && reason == .backgroundSession && showsIndicator)))
    }

    private var showsIndicator: Bool {
        authorization.status == .authorizedWhenInUse || manager.showsBackgroundLocationIndicator
    }

    /// The tier of the delivery being decided.
    @exclusivity(unchecked) private var deliveryTier: AccuracyModel.Tier = .precise

    private func deliver(_ location: Location, reason: FixReason, index: Int, segment: Int) {
        lastDeliveredOffset = now
        lastDeliveredTier = deliveryTier
        storedCount += 1
        if retainsStoredLocations || fetchEnabled {
            stored.append(
                StoredLocation(
                    location: location, appState: appState, reason: reason, index: index, segment: segment,
                    offset: now))
        }
        if !appState.isForeground || reason == .resumed {
            arrivedWhileAway += 1
            summary.deliveredWhileAway += 1
        }
        manager.deliver(location, appState: appState, reason: reason)
    }

    private func observeMotion(_ c: Coordinate) {
        if isPaused {
            if appState.isForeground, let anchor = pauseAnchor, !AutoPause.isNear(anchor, c) {
                resumeUpdates(reason: "movement")
            }
            return
        }
        guard manager.pausesLocationUpdatesAutomatically else { return }
        if detector.observe(c, at: now, activity: manager.activityType) {
            isPaused = true
            pauseAnchor = detector.anchor
            detector.reset()
            record(.paused(reason: "stationary"))
            manager.delegate?.locationManagerDidPauseLocationUpdates(manager)
        }
    }

    private func resumeUpdates(reason: String) {
        guard isPaused else { return }
        isPaused = false
        pauseAnchor = nil
        detector.reset()
        record(.resumed(reason: reason))
        manager.delegate?.locationManagerDidResumeLocationUpdates(manager)
    }

    /// Delivers what a suspended app was holding, as it resumes.
    private func deliverHeld() {
        guard !held.isEmpty else { return }
        let all = held
        held.removeAll()
        var keep: ArraySlice<(location: Location, index: Int, segment: Int)>
        switch scenario.app.heldDelivery {
        case .newest: keep = all.suffix(1)
        case .all: keep = all[...]
        case .none: keep = []
        }
        if !(manager.isUpdatingLocation && authorization.allowsLocation) { keep = [] }
        let discarded = all.count - keep.count
        if discarded > 0 {
            summary.discardedHeld += discarded
            record(.heldDiscarded(count: discarded, reason: "resume"))
        }
        let tier = AccuracyModel.tier(desiredAccuracy: manager.desiredAccuracy, accuracy: authorization.accuracy)
        deliveryTier = tier
        for item in keep {
            let location = AccuracyModel.apply(tier, to: item.location)
            summary.resumedDeliveries += 1
            if !observers.isEmpty {
                record(
                    .fix(
                        AuditEvent.FixRecord(
                            index: item.index, segment: item.segment, decision: .delivered, reason: .resumed,
                            appState: appState, authorization: authorization.status,
                            accuracy: authorization.accuracy, coordinate: item.location.coordinate,
                            delivered: location, backgroundTimeRemaining: backgroundTimeRemaining, indicator: false)))
            }
            deliver(location, reason: .resumed, index: item.index, segment: item.segment)
        }
    }

    // MARK: - Scripted actions

    private func perform(_ action: Scenario.Action) {
        switch action {
        case .foreground: enterForeground()
        case .background: enterBackground()
        case .deactivate:
            if appState == .active { setState(.inactive, cause: "interrupted") }
        case .activate:
            if appState == .inactive { setState(.active, cause: "interruptionEnded") }
        case .terminate: terminate(reason: "user")
        case .requestAuthorization(let request):
            guard appCanRunCode(action) else { return }
            managerRequestedAuthorization(always: request == .always)
        case .startUpdates:
            guard appCanRunCode(action) else { return }
            manager.startUpdatingLocation()
        case .stopUpdates:
            guard appCanRunCode(action) else { return }
            manager.stopUpdatingLocation()
        case .beginBackgroundTask:
            guard appCanRunCode(action) else { return }
            beginBackgroundTask(reason: "app")
        case .endBackgroundTask:
            guard appCanRunCode(action) else { return }
            if !tasks.isEmpty { endBackgroundTask(reason: "app") }
        case .setAuthorization(let status): perform(authorization.handle(.setAuthorization(status)))
        case .setPreciseLocation(let precise): perform(authorization.handle(.setPreciseLocation(precise)))
        case .setLocationServices(let on): perform(authorization.handle(.setLocationServices(on)))
        case .setDesiredAccuracy(let a):
            guard appCanRunCode(action) else { return }
            manager.desiredAccuracy = a
        case .setDistanceFilter(let d):
            guard appCanRunCode(action) else { return }
            manager.distanceFilter = d
        case .setAllowsBackgroundLocationUpdates(let b):
            guard appCanRunCode(action) else { return }
            manager.allowsBackgroundLocationUpdates = b
        case .setPausesLocationUpdatesAutomatically(let b):
            guard appCanRunCode(action) else { return }
            manager.pausesLocationUpdatesAutomatically = b
        }
    }

    /// Whether the app's code can run now (it is neither suspended nor terminated).
    private func appCanRunCode(_ action: Scenario.Action) -> Bool {
        if appState == .notRunning || appState == .suspended {
            record(
                .diagnostic(message: "\(action.name) needs the app's code to run, but the app is \(appState.rawValue)"))
            return false
        }
        return true
    }

    // MARK: - Lifecycle

    private func setState(_ state: AppState, cause: String) {
        guard state != appState else { return }
        let old = appState
        appState = state
        record(.stateChanged(from: old, to: state, cause: cause))
    }

    private func launch(inBackground: Bool, cause: String) {
        terminatedByUser = false
        // didFinishLaunching runs in the state the app launches into; it configures the manager.
        setState(inBackground ? .background : .inactive, cause: cause)
        let m = scenario.manager
        manager.desiredAccuracy = m.desiredAccuracy
        manager.distanceFilter = m.distanceFilter
        manager.pausesLocationUpdatesAutomatically = m.pausesLocationUpdatesAutomatically
        manager.activityType = m.activityType
        manager.showsBackgroundLocationIndicator = m.showsBackgroundLocationIndicator
        manager.allowsBackgroundLocationUpdates = m.allowsBackgroundLocationUpdates
        if !inBackground { setState(.active, cause: cause) }
        if !hasLaunched {
            hasLaunched = true
            scheduleFetchWake(at: now + fetchInterval)
        }
        guard !inBackground else {
            needsForegroundSetup = true
            return
        }
        runForegroundSetup()
    }

    /// What the app does when it first comes to the foreground: ask, then start.
    private func runForegroundSetup() {
        needsForegroundSetup = false
        if let request = scenario.app.request { managerRequestedAuthorization(always: request == .always) }
        if scenario.app.startsUpdates { manager.startUpdatingLocation() }
    }

    private func enterForeground() {
        switch appState {
        case .notRunning:
            launch(inBackground: false, cause: "userLaunch")
            return
        case .active:
            return
        case .inactive:
            setState(.active, cause: "userOpened")
            return
        case .suspended:
            setState(.background, cause: "resumed")
        case .background:
            break
        }
        setState(.inactive, cause: "userOpened")
        setState(.active, cause: "userOpened")
        inGracePeriod = false
        graceGeneration += 1
        while !tasks.isEmpty { endBackgroundTask(reason: "foreground") }
        taskBudgetStart = nil
        taskGeneration += 1
        if taskNeedsReinstating {
            taskNeedsReinstating = false
            record(.backgroundTask(action: "reinstated", task: nil, remaining: nil, reason: "foreground"))
        }
        if manager.isUpdatingLocation {
            startedInForeground = true
            startedInBackgroundWhenInUse = false
        }
        if isPaused { resumeUpdates(reason: "foreground") }
        if needsForegroundSetup { runForegroundSetup() }
        deliverHeld()
        record(.arrivedWhileAway(count: arrivedWhileAway))
        arrivedWhileAway = 0
    }

    private func enterBackground() {
        guard appState.isForeground else { return }
        if appState == .active { setState(.inactive, cause: "userLeft") }
        setState(.background, cause: "userLeft")
        arrivedWhileAway = 0
        inGracePeriod = true
        graceGeneration += 1
        queue.schedule(.graceEnd(generation: graceGeneration), at: now + scenario.system.gracePeriod)
        if scenario.app.beginsBackgroundTask { beginBackgroundTask(reason: "enteredBackground") }
        if !tasks.isEmpty { startTaskBudget() }
    }

    /// Suspends a backgrounded app that nothing keeps running.
    private func evaluateSuspension() {
        guard appState == .background else { return }
        if inGracePeriod || !tasks.isEmpty || fetchInProgress || hasBackgroundSession { return }
        setState(.suspended, cause: "idle")
        perform(authorization.handle(.appNoLongerInUse))
        if fetchDue {
            fetchDue = false
            scheduleFetchWake(at: now)
        }
    }

    private func terminate(reason: String) {
        guard appState != .notRunning else { return }
        if !held.isEmpty {
            summary.discardedHeld += held.count
            record(.heldDiscarded(count: held.count, reason: "terminated"))
            held.removeAll()
        }
        tasks.removeAll()
        taskBudgetStart = nil
        taskGeneration += 1
        inGracePeriod = false
        graceGeneration += 1
        fetchInProgress = false
        fetchGeneration += 1
        manager.isUpdatingLocation = false
        manager.location = nil
        lastDeliveredOffset = nil
        isPaused = false
        pauseAnchor = nil
        detector.reset()
        setState(.notRunning, cause: reason)
        record(.terminated(reason: reason))
        terminatedByUser = reason == "user"
        perform(authorization.handle(.appNoLongerInUse))
        if fetchDue {
            fetchDue = false
            scheduleFetchWake(at: now)
        }
    }

    // MARK: - Background tasks

    private func beginBackgroundTask(reason: String) {
        if taskNeedsReinstating && !appState.isForeground {
            record(
                .backgroundTask(action: "refused", task: nil, remaining: nil, reason: "expiredUntilForeground"))
            return
        }
        taskCounter += 1
        tasks.append(taskCounter)
        record(.backgroundTask(action: "began", task: taskCounter, remaining: nil, reason: reason))
        if appState == .background { startTaskBudget() }
    }

    /// Starts the budget's clock (or picks it up again) and sets the expiry timers.
    private func startTaskBudget() {
        if taskBudgetStart == nil { taskBudgetStart = now }
        let start = taskBudgetStart!
        taskGeneration += 1
        let budget = scenario.system.taskBudget
        let warning = max(start, start + budget - scenario.system.expirationWarning)
        queue.schedule(.taskWarning(generation: taskGeneration), at: max(now, warning))
        queue.schedule(.taskDeadline(generation: taskGeneration), at: max(now, start + budget))
    }

    private func endBackgroundTask(reason: String) {
        let task = tasks.removeFirst()
        record(.backgroundTask(action: "ended", task: task, remaining: backgroundTimeRemaining, reason: reason))
        if tasks.isEmpty { taskGeneration += 1 }
    }

    // MARK: - Background fetch

    private var fetchEnabled: Bool {
        guard scenario.info.backgroundModes.contains(.fetch) else { return false }
        if case .never = scenario.app.fetchInterval { return false }
        return true
    }

    private var fetchInterval: Duration {
        switch scenario.app.fetchInterval {
        case .never: .zero
        case .minimum: scenario.system.minimumFetchInterval
        case .every(let d): d
        }
    }

    private func scheduleFetchWake(at time: Duration) {
        guard fetchEnabled else { return }
        fetchWakeGeneration += 1
        queue.schedule(.fetchWake(generation: fetchWakeGeneration), at: max(now, time))
    }

    private func fetchWoke() {
        switch appState {
        case .active, .inactive:
            fetchDue = true
            record(.fetch(action: "deferred", result: nil, synced: nil, reason: "appInForeground"))
        case .notRunning where terminatedByUser:
            record(.fetch(action: "skipped", result: nil, synced: nil, reason: "userTerminated"))
            scheduleFetchWake(at: now + fetchInterval * fetchSpacing)
        case .notRunning:
            launch(inBackground: true, cause: "backgroundFetch")
            beginFetch()
        case .suspended:
            setState(.background, cause: "backgroundFetch")
            beginFetch()
            deliverHeld()
        case .background:
            beginFetch()
        }
    }

    private func beginFetch() {
        fetchInProgress = true
        fetchStartedAt = now
        fetchGeneration += 1
        record(.fetch(action: "began", result: nil, synced: nil, reason: nil))
        queue.schedule(.fetchDone(generation: fetchGeneration), at: now + scenario.app.fetchDuration)
        queue.schedule(.fetchDeadline(generation: fetchGeneration), at: now + scenario.system.fetchBudget)
    }

    private func completeFetch() {
        let pending = stored[syncedCount...]
        var result = pending.isEmpty ? "noData" : "newData"
        var reason: String?
        var synced = 0
        if !pending.isEmpty {
            do {
                try fetchSink?.sync(pending)
                synced = pending.count
                syncedCount = stored.count
                if !retainsStoredLocations {
                    stored.removeAll(keepingCapacity: true)
                    syncedCount = 0
                }
            } catch {
                result = "failed"
                reason = "\(error)"
            }
        }
        fetchInProgress = false
        fetchGeneration += 1
        record(.fetch(action: "completed", result: result, synced: synced, reason: reason))
        scheduleFetchWake(at: fetchStartedAt + fetchInterval * fetchSpacing)
    }

    // MARK: - Authorization

    private func perform(_ actions: [AuthorizationStateMachine.Action]) {
        for action in actions {
            switch action {
            case .showPrompt(let prompt):
                record(.prompt(prompt: Self.name(prompt), phase: "shown", answer: nil))
                let hasAnswer: Bool
                switch prompt {
                case .whenInUse: hasAnswer = scenario.user.whenInUse != nil
                case .always: hasAnswer = scenario.user.always != nil
                }
                if hasAnswer {
                    answerGeneration += 1
                    queue.schedule(
                        .answer(prompt, generation: answerGeneration), at: now + scenario.user.answerAfter)
                }
            case .statusChanged(let from, let to):
                record(.authorizationChanged(from: from, to: to))
                authorizationDidChange()
            case .accuracyChanged(let from, let to):
                record(.accuracyChanged(from: from, to: to))
                authorizationDidChange()
            case .locationServicesChanged(let enabled):
                record(.locationServicesChanged(enabled: enabled))
                authorizationDidChange()
            case .ignored(let reason):
                record(.diagnostic(message: "ignored: \(reason.rawValue)"))
            }
        }
    }

    private static func name(_ prompt: AuthorizationStateMachine.Prompt) -> String {
        switch prompt {
        case .whenInUse(let forAlways): forAlways ? "whenInUseForAlways" : "whenInUse"
        case .always: "always"
        }
    }

    private func answer(_ prompt: AuthorizationStateMachine.Prompt) {
        switch prompt {
        case .whenInUse:
            guard let answer = scenario.user.whenInUse else { return }
            record(.prompt(prompt: Self.name(prompt), phase: "answered", answer: answer.rawValue))
            perform(authorization.handle(.answerWhenInUse(answer)))
        case .always:
            guard let answer = scenario.user.always else { return }
            record(.prompt(prompt: Self.name(prompt), phase: "answered", answer: answer.rawValue))
            perform(authorization.handle(.answerAlways(answer)))
        }
    }

    private func authorizationDidChange() {
        if appState != .notRunning { manager.delegate?.locationManagerDidChangeAuthorization(manager) }
        if authorization.allowsLocation {
            deniedReported = false
        } else if manager.isUpdatingLocation
            && (authorization.status != .notDetermined || !authorization.locationServicesEnabled)
        {
            reportDenied(nil)
        }
    }

    private func reportDenied(_ reason: FixReason?) {
        guard !deniedReported, appState != .notRunning, appState != .suspended else { return }
        deniedReported = true
        let why: String
        if !authorization.locationServicesEnabled {
            why = "locationServicesDisabled"
        } else {
            why = reason?.rawValue ?? authorization.status.rawValue
        }
        report(LocationError(.denied, reason: why))
    }

    private func report(_ error: LocationError) {
        record(.error(error))
        manager.delegate?.locationManager(manager, didFailWithError: error)
    }

    // MARK: - Audit

    private func record(_ kind: AuditEvent.Kind) {
        guard !observers.isEmpty else { return }
        let event = AuditEvent(offset: now, kind: kind)
        for observer in observers { observer.simulation(self, didRecord: event) }
    }
}

extension Simulation: LocationManagerHost {
    var authorizationStatus: AuthorizationStatus { authorization.status }
    var accuracyAuthorization: AccuracyAuthorization { authorization.accuracy }

    func managerRequestedAuthorization(always: Bool) {
        let request: Scenario.AuthorizationRequest = always ? .always : .whenInUse
        let inForeground = appState.isForeground
        let actions = authorization.handle(
            always ? .requestAlways(inForeground: inForeground) : .requestWhenInUse(inForeground: inForeground))
        if case .ignored(let reason)? = actions.first {
            record(.authorizationRequest(request: request, outcome: "ignored", reason: reason.rawValue))
            if reason == .missingWhenInUseDescription || reason == .missingAlwaysDescription {
                record(.diagnostic(message: "the Info has no usage description for this request; no prompt is shown"))
            }
            return
        }
        record(.authorizationRequest(request: request, outcome: "prompted", reason: nil))
        perform(actions)
    }

    func managerStartedUpdates() {
        guard appState != .notRunning, appState != .suspended, !manager.isUpdatingLocation else { return }
        manager.isUpdatingLocation = true
        startedInForeground = appState.isForeground
        startedInBackgroundWhenInUse = !appState.isForeground && authorization.status == .authorizedWhenInUse
        isPaused = false
        pauseAnchor = nil
        detector.reset()
        record(.updates(action: "started", reason: nil))
        if !appState.isForeground && authorization.isProvisionalAlways {
            perform(authorization.handle(.neededAlways))
        }
        if !authorization.allowsLocation
            && (authorization.status != .notDetermined || !authorization.locationServicesEnabled)
        {
            reportDenied(nil)
        }
    }

    func managerStoppedUpdates() {
        guard manager.isUpdatingLocation else { return }
        manager.isUpdatingLocation = false
        isPaused = false
        pauseAnchor = nil
        record(.updates(action: "stopped", reason: nil))
        evaluateSuspension()
    }

    func managerChangedSetting(_ name: String, _ value: String) {
        record(.setting(name: name, value: value))
    }

    func managerMayAllowBackgroundUpdates() -> Bool {
        if scenario.info.backgroundModes.contains(.location) { return true }
        record(
            .diagnostic(
                message: "allowsBackgroundLocationUpdates needs the location background mode in the Info; not set"))
        return false
    }
}
