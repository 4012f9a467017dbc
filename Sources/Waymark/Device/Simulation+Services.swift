#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An event of a location service, on its way to the app.
enum PendingServiceEvent {
    case significantChange(SignificantChangeStateMachine.Fix)
    case region(CircularRegion, RegionState)
    case visit(Visit)
    /// A `CLMonitor` condition's new state.
    case condition(monitor: String, identifier: String, state: RegionState)

    var cause: WakeCause {
        switch self {
        case .significantChange: .significantLocationChange
        case .region, .condition: .region
        case .visit: .visit
        }
    }
}

/// The services that wake or relaunch the app: the significant-change service, regions,
/// visits, background pushes, `BGTaskScheduler`, audio, background URL sessions, and the
/// one-shot requests (`requestLocation()`, temporary full accuracy). The rules are in
/// ``ServiceDelivery``, ``SignificantChangeStateMachine``, ``RegionMonitorStateMachine``,
/// ``VisitStateMachine``, ``PushThrottle`` and ``TaskSchedulerStateMachine``; this carries them out.
extension Simulation {
    // MARK: - What keeps a woken app running

    /// Woken by a service and still within its time: a location event's few seconds, a push's
    /// handler, a `BGTask`, a URL session's events.
    var isWokenByService: Bool {
        guard serviceActivity else { return false }
        if let until = serviceWakeUntil, now < until { return true }
        return pushHandlers.values.contains(true) || !runningTasks.isEmpty || transferEventsPending
    }

    /// Whether audio keeps the app running: playing, with the `audio` mode.
    var audioKeepsRunning: Bool { audioPlaying && scenario.info.backgroundModes.contains(.audio) }

    var keptRunningByServices: Bool {
        serviceActivity && (isWokenByService || audioKeepsRunning || activitySessions > 0)
    }

    func serviceContext() -> ServiceDelivery.Context {
        ServiceDelivery.Context(
            appState: appState, appInUse: isInUse, terminatedByUser: userForceQuit,
            authorization: authorization.status, isProvisionalAlways: authorization.isProvisionalAlways,
            locationServicesEnabled: authorization.locationServicesEnabled,
            backgroundModes: scenario.info.backgroundModes, power: power)
    }

    func updateServicesWatch() {
        servicesWatchFixes =
            significantChanges.isMonitoring || regionMonitor.isMonitoring || visits.isMonitoring
            || locationRequestDeadline != nil || !conditionRegions.isEmpty
    }

    /// The services see every fix of the device, whatever the app's state.
    func servicesObserve(_ event: SourceEvent) {
        guard case .fix(let location) = event.kind else { return }
        if locationRequestDeadline != nil { answerLocationRequest(location, event) }
        if significantChanges.observe(location.coordinate, at: now) {
            let fix = SignificantChangeStateMachine.Fix(location: location, index: event.index, segment: event.segment)
            locationServiceEvent(.significantChange(fix))
        }
        if regionMonitor.isMonitoring {
            for action in regionMonitor.handle(.fix(location.coordinate, at: now)) { apply(region: action) }
        }
        if visits.isMonitoring {
            for case .visit(let visit) in visits.handle(.fix(location.coordinate, date: location.timestamp, at: now)) {
                locationServiceEvent(.visit(visit))
            }
        }
        if !conditionRegions.isEmpty { conditionsObserve(location.coordinate) }
    }

    // MARK: - Location services' events

    /// Decides a location service's event: to the running app, waking or launching it, or
    /// dropped.
    func locationServiceEvent(_ event: PendingServiceEvent) {
        var outcome = ServiceDelivery.locationEvent(serviceContext())
        if outcome == .wake || outcome == .launch, let off = power.backgroundRefreshOffReason {
            // "When background refresh is available for an application, it may launched or resumed
            // in the background to handle significant location changes" (UIApplication.h).
            outcome = .drop(off)
        }
        if outcome == .launch && userForceQuit && !scenario.system.locationRelaunchAfterSwipe {
            outcome = .drop(.userTerminated)
        }
        if !version.restrictsWhenInUseToInUse && authorization.status == .authorizedWhenInUse {
            // Up to iOS 12 these services need Always ("Significant-change location service: Not
            // available" to When In Use, Choosing the Location Services Authorization to Request).
            if case .drop = outcome {} else { outcome = .drop(.needsAlways) }
        }
        switch outcome {
        case .drop(let reason):
            record(event, decision: .dropped, reason: reason)
        case .deliver:
            // Only Always is woken: a running Always app gets the event's time too.
            if appState == .background && authorization.status == .authorizedAlways
                && !authorization.isProvisionalAlways
            {
                openServiceWake()
            }
            deliver(event)
        case .wake:
            lifecycleEvent(.wake(event.cause))
            openServiceWake()
            deliver(event)
        case .launch:
            pendingServiceEvents.append((event, false))
            lifecycleEvent(.wake(event.cause))
            openServiceWake()
            deliverPendingServiceEvents()
        }
    }

    /// A service's wake keeps the app running for a few seconds (``Scenario/SystemSettings/serviceWakeTime``).
    func openServiceWake() {
        guard appCodeRuns else { return }
        serviceWakeUntil = now + scenario.system.serviceWakeTime
        timers.schedule(.serviceWakeEnd, at: now + scenario.system.serviceWakeTime)
    }

    /// Hands over what waited for the app's launch, of the kinds `only` admits: region and visit
    /// events go to the delegate the launch code set (after it ran); significant changes once the
    /// app has started the service again; a monitor's once the app created it again. What cannot
    /// be handed over yet stays, said `held` once.
    func deliverPendingServiceEvents(only admits: (PendingServiceEvent) -> Bool = { _ in true }) {
        guard appCodeRuns, !pendingServiceEvents.isEmpty else { return }
        let waiting = pendingServiceEvents
        pendingServiceEvents = []
        for (event, said) in waiting {
            guard admits(event), appCodeRuns else {
                pendingServiceEvents.append((event, said))
                continue
            }
            let why: AuditReason? =
                switch event {
                case .significantChange: significantChangesListening ? nil : .awaitingRestart
                case .condition(let name, _, _): conditionMonitors[name] == nil ? .awaitingMonitor : nil
                case .region, .visit: nil
                }
            if let why {
                if !said { record(event, decision: .held, reason: why) }
                pendingServiceEvents.append((event, true))
            } else {
                deliver(event)
            }
        }
    }

    private func deliver(_ event: PendingServiceEvent) {
        guard appCodeRuns else {
            record(event, decision: .dropped, reason: AuditReason(appState))
            return
        }
        switch event {
        case .significantChange(let fix):
            guard significantChangesListening else {
                // Relaunched: the event waits for the app to start the service again.
                pendingServiceEvents.append((event, true))
                record(event, decision: .held, reason: .awaitingRestart)
                return
            }
            let delivered = serviceAccuracy(fix.location)
            record(
                .serviceLocation(
                    .init(
                        service: .significantLocationChange, action: .delivered, reason: .significantLocationChange,
                        index: fix.index, segment: fix.segment, appState: appState, location: delivered,
                        authorization: authorization.status, accuracy: authorization.accuracy)))
            handOver(
                LocationUpdate(
                    location: delivered, appState: appState, reason: .significantLocationChange, index: fix.index,
                    segment: fix.segment))
        case .region(let region, let state):
            record(
                .region(
                    action: state == .inside ? .entered : .exited, identifier: region.identifier, state: state,
                    decision: .delivered, reason: .region))
            if state == .inside {
                manager.delegate?.locationManager(manager, didEnterRegion: region)
            } else {
                manager.delegate?.locationManager(manager, didExitRegion: region)
            }
            manager.delegate?.locationManager(manager, didDetermineState: state, for: region)
        case .visit(let visit):
            var v = visit
            if authorization.accuracy == .reducedAccuracy {
                v.coordinate = AccuracyModel.coarsen(
                    v.coordinate, radius: AccuracyModel.Positioning.reduced.accuracyFloor)
                v.horizontalAccuracy = max(v.horizontalAccuracy, AccuracyModel.Positioning.reduced.accuracyFloor)
            }
            record(
                .visit(action: v.isArrival ? .arrival : .departure, visit: v, decision: .delivered, reason: .visit))
            manager.delegate?.locationManager(manager, didVisit: v)
        case .condition(let name, let identifier, let state):
            guard deliverCondition(name, identifier, state) else {
                // Relaunched: the event waits for the app to create the monitor again.
                pendingServiceEvents.append((event, true))
                record(event, decision: .held, reason: .awaitingMonitor)
                return
            }
        }
    }

    /// A service's location: the significant-change service works from Wi-Fi and cell towers
    /// ("only when it detects changes to the device's associated cell towers"), so it has at
    /// best the Wi-Fi source's accuracy (*assumption*), and the reduced grid without full accuracy.
    private func serviceAccuracy(_ location: Location) -> Location {
        let source: AccuracyModel.Positioning = authorization.accuracy == .reducedAccuracy ? .reduced : .wifi
        return AccuracyModel.apply(source, to: location)
    }

    /// Calls `didUpdateLocations` (and the update streams) with one location from a service.
    func handOver(_ update: LocationUpdate) {
        if !appState.isForeground { summary.deliveredWhileAway += 1 }
        currentUpdates = [update]
        manager.deliver(currentUpdates)
        currentUpdates = []
    }

    private func record(_ event: PendingServiceEvent, decision: ServiceDecision, reason: AuditReason) {
        switch event {
        case .significantChange(let fix):
            record(
                .serviceLocation(
                    .init(
                        service: .significantLocationChange, action: ServiceLocationAction(decision), reason: reason, index: fix.index,
                        segment: fix.segment, appState: appState, location: fix.location)))
        case .region(let region, let state):
            record(
                .region(
                    action: state == .inside ? .entered : .exited, identifier: region.identifier, state: state,
                    decision: decision, reason: reason))
        case .visit(let visit):
            record(
                .visit(
                    action: visit.isArrival ? .arrival : .departure, visit: visit, decision: decision, reason: reason)
            )
        case .condition(let name, let identifier, let state):
            let monitoring: MonitoringState = state == .inside ? .satisfied : .unsatisfied
            record(
                .monitor(
                    name: name, identifier: identifier, action: MonitorAction(monitoring), decision: decision, reason: reason)
            )
        }
    }

    func apply(region action: RegionMonitorStateMachine.Action) {
        switch action {
        case .started(let region):
            record(.region(action: .started, identifier: region.identifier, state: nil, decision: nil, reason: nil))
            if appCodeRuns { manager.delegate?.locationManager(manager, didStartMonitoringFor: region) }
        case .failed(let region, let failure):
            record(
                .region(
                    action: .failed, identifier: region.identifier, state: nil, decision: nil, reason: failure.auditReason
                ))
            if appCodeRuns {
                manager.delegate?.locationManager(
                    manager, monitoringDidFailFor: region,
                    withError: LocationError(.regionMonitoringFailure, reason: failure.rawValue))
            }
        case .stopped(let identifier):
            record(.region(action: .stopped, identifier: identifier, state: nil, decision: nil, reason: nil))
        case .crossed(let region, let state):
            locationServiceEvent(.region(region, state))
        case .determined(let region, let state):
            record(
                .region(action: .determined, identifier: region.identifier, state: state, decision: nil, reason: nil))
            if appCodeRuns { manager.delegate?.locationManager(manager, didDetermineState: state, for: region) }
        }
    }

    /// What a launch or a wake leaves behind when the app stops running: events still waiting
    /// are dropped.
    func servicesAppStopped(terminated: TerminationCause?) {
        let why: AuditReason = terminated == nil ? .suspended : .terminated
        for (event, _) in pendingServiceEvents { record(event, decision: .dropped, reason: why) }
        pendingServiceEvents = []
        serviceWakeUntil = nil
        timers.cancel(.serviceWakeEnd)
        if audioPlaying { stopAudio(reason: why) }
        guard let terminated else { return }
        significantChangesListening = false
        sessionsAppTerminated()
        for (id, _) in pushHandlers { timers.cancel(.pushDeadline(id)) }
        pushHandlers = [:]
        if heldPush {
            // "If something force quits or kills the app, the system discards the held notification."
            heldPush = false
            record(.push(action: .discarded, result: nil, reason: .terminated))
        }
        for (id, task) in runningTasks.sorted(by: { $0.key < $1.key }) {
            task.isCompleted = true
            timers.cancel(.scheduledTaskDeadline(id))
            timers.cancel(.scheduledTaskWarning(id))
            record(
                .scheduledTask(
                    action: .ended, kind: task.kind, identifier: task.identifier, success: nil,
                    reason: .terminated))
        }
        runningTasks = [:]
        taskHandlers = [:]
        if locationRequestDeadline != nil {
            locationRequestDeadline = nil
            timers.cancel(.locationRequestTimeout)
            updateServicesWatch()
        }
        transferEventsPending = false
        if terminated == .user, !transfers.isEmpty {
            // "If the user terminates the app from the multitasking screen, the system cancels all
            // of the session's background transfers."
            for id in transfers.keys.sorted() {
                timers.cancel(.transferDone(id))
                record(.transfer(action: .cancelled, task: id, count: transfers[id]?.count, reason: .userTerminated))
            }
            transfers = [:]
        }
    }

    // MARK: - The app's calls (LocationManagerHost)

    func managerStartedSignificantChanges() {
        guard appCodeRuns else { return }
        significantChangesListening = true
        if significantChanges.handle(.start(at: now, cached: nil)).contains(.started) {
            record(.serviceLocation(.init(service: .significantLocationChange, action: .started, appState: appState)))
        }
        updateServicesWatch()
        deliverPendingServiceEvents { if case .significantChange = $0 { true } else { false } }
    }

    func managerStoppedSignificantChanges() {
        guard appCodeRuns else { return }
        significantChangesListening = false
        if significantChanges.handle(.stop).contains(.stopped) {
            record(.serviceLocation(.init(service: .significantLocationChange, action: .stopped, appState: appState)))
        }
        pendingServiceEvents.removeAll { if case .significantChange = $0.event { true } else { false } }
        updateServicesWatch()
    }

    func managerStartedMonitoring(_ region: CircularRegion) {
        guard appCodeRuns else { return }
        if authorization.status == .denied || authorization.status == .restricted {
            record(
                .region(action: .failed, identifier: region.identifier, state: nil, decision: nil, reason: .denied))
            manager.delegate?.locationManager(
                manager, monitoringDidFailFor: region,
                withError: LocationError(.regionMonitoringDenied, reason: authorization.status.rawValue))
            return
        }
        // The 20 are the app's, regions and CLMonitor conditions together (*assumption* for the
        // conditions: Apple gives no number for CLMonitor).
        let conditions = conditionRegions.values.reduce(0) { $0 + $1.regions.count }
        let replacing = regionMonitor.regions.contains { $0.region.identifier == region.identifier }
        if !replacing && regionMonitor.regions.count + conditions >= RegionMonitorStateMachine.limit {
            apply(region: .failed(region, .limitReached))
            return
        }
        for action in regionMonitor.handle(.start(region)) { apply(region: action) }
        updateServicesWatch()
    }

    func managerStoppedMonitoring(identifier: String) {
        guard appCodeRuns else { return }
        for action in regionMonitor.handle(.stop(identifier: identifier)) { apply(region: action) }
        updateServicesWatch()
    }

    func managerRequestedState(identifier: String) {
        guard appCodeRuns else { return }
        for action in regionMonitor.handle(.requestState(identifier: identifier)) { apply(region: action) }
    }

    var monitoredRegions: Set<CircularRegion> { Set(regionMonitor.regions.map(\.region)) }

    func managerStartedVisits() {
        guard appCodeRuns else { return }
        if visits.handle(.start).contains(.started) {
            record(.visit(action: .started, visit: nil, decision: nil, reason: nil))
        }
        updateServicesWatch()
    }

    func managerStoppedVisits() {
        guard appCodeRuns else { return }
        if visits.handle(.stop).contains(.stopped) {
            record(.visit(action: .stopped, visit: nil, decision: nil, reason: nil))
        }
        pendingServiceEvents.removeAll { if case .visit = $0.event { true } else { false } }
        updateServicesWatch()
    }

    // MARK: - requestLocation()

    func managerRequestedLocation() {
        guard appCodeRuns else { return }
        if location.isUpdating && !location.isPaused {
            // "Calling this method while location services are already running does nothing."
            record(.diagnostic(message: "requestLocation() while standard updates run does nothing"))
            return
        }
        record(.serviceLocation(.init(service: .requestLocation, action: .requested, appState: appState)))
        locationRequestDeadline = now + scenario.system.locationRequestTimeout
        timers.schedule(.locationRequestTimeout, at: now + scenario.system.locationRequestTimeout)
        updateServicesWatch()
    }

    /// Starting updates "cancels any pending request made using" `requestLocation()`.
    func cancelLocationRequest() {
        guard locationRequestDeadline != nil else { return }
        locationRequestDeadline = nil
        timers.cancel(.locationRequestTimeout)
        record(.serviceLocation(.init(service: .requestLocation, action: .cancelled, appState: appState)))
        updateServicesWatch()
    }

    private func answerLocationRequest(_ fix: Location, _ event: SourceEvent) {
        let c = context()
        let reason: AuditReason?
        if !c.locationServicesEnabled {
            reason = .locationServicesDisabled
        } else if !c.authorization.isAuthorized {
            reason = AuditReason(c.authorization)
        } else if !appCodeRuns {
            reason = AuditReason(appState)
        } else if version.restrictsWhenInUseToInUse
            && (c.authorization == .authorizedWhenInUse || c.isProvisionalAlways) && !isInUse
        {
            reason = .notInUse
        } else {
            reason = nil
        }
        if let reason {
            record(
                .serviceLocation(
                    .init(
                        service: .requestLocation, action: .dropped, reason: reason, index: event.index,
                        segment: event.segment, appState: appState, location: fix)))
            return
        }
        locationRequestDeadline = nil
        timers.cancel(.locationRequestTimeout)
        updateServicesWatch()
        let source = AccuracyModel.positioning(
            desiredAccuracy: c.settings.desiredAccuracy, accuracy: c.accuracy, version: version)
        let delivered = AccuracyModel.apply(source, to: fix)
        record(
            .serviceLocation(
                .init(
                    service: .requestLocation, action: .delivered, reason: .requestLocation, index: event.index,
                    segment: event.segment, appState: appState, location: delivered,
                    authorization: authorization.status, accuracy: authorization.accuracy)))
        handOver(
            LocationUpdate(
                location: delivered, appState: appState, reason: .requestLocation, index: event.index,
                segment: event.segment))
    }

    func locationRequestTimedOut() {
        guard locationRequestDeadline != nil else { return }
        locationRequestDeadline = nil
        updateServicesWatch()
        record(
            .serviceLocation(.init(service: .requestLocation, action: .failed, reason: .timeout, appState: appState))
        )
        let error = LocationError(.locationUnknown, reason: "requestLocationTimeout")
        record(.error(error))
        if appCodeRuns { manager.delegate?.locationManager(manager, didFailWithError: error) }
    }

    // MARK: - Temporary full accuracy

    func managerRequestedTemporaryFullAccuracy(purposeKey: String, completion: ((LocationError?) -> Void)?) {
        guard appCodeRuns else { return }
        let declined: PromptAnswer? =
            if !version.hasReducedAccuracy {
                .notInThisVersion
            } else if let keys = scenario.info.temporaryUsageDescriptionKeys, !keys.contains(purposeKey) {
                .noSuchPurposeKey
            } else if authorization.accuracy == .fullAccuracy {
                .alreadyFullAccuracy
            } else if !appState.isForeground {
                .notInForeground
            } else if alertOnScreen != nil {
                .promptAlreadyShowing
            } else {
                nil
            }
        if let declined {
            // "The request always fails with a CLError.Code.promptDeclined error in the following
            // cases: … no entry for the given purposeKey … already authorized for full accuracy …
            // in the background."
            record(.prompt(prompt: .temporaryFullAccuracy, phase: .declined, answer: declined))
            completion?(LocationError(.promptDeclined, reason: declined.rawValue))
            return
        }
        temporaryFullAccuracyCompletion = completion
        record(.prompt(prompt: .temporaryFullAccuracy, phase: .shown, answer: nil))
        show(.temporaryFullAccuracy)
    }

    /// The user answered the temporary full accuracy prompt (or left the app over it).
    func answerTemporaryFullAccuracy(_ allow: Bool?) {
        let completion = temporaryFullAccuracyCompletion
        temporaryFullAccuracyCompletion = nil
        guard let allow else {
            record(.prompt(prompt: .temporaryFullAccuracy, phase: .dismissed, answer: nil))
            completion?(LocationError(.promptDeclined, reason: "dismissed"))
            return
        }
        record(.prompt(prompt: .temporaryFullAccuracy, phase: .answered, answer: allow ? .allow : .deny))
        if allow {
            temporaryFullAccuracy = true
            perform(authorization: authorization.handle(.setPreciseLocation(true)))
        }
        if appCodeRuns { completion?(nil) }
    }

    /// Full accuracy granted for now ends when the app is no longer in use.
    func endTemporaryFullAccuracy() {
        guard temporaryFullAccuracy else { return }
        temporaryFullAccuracy = false
        perform(authorization: authorization.handle(.setPreciseLocation(false)))
    }

    // MARK: - Background pushes

    /// A push notification arrives. Only a background (`content-available`) push runs the app's
    /// code; an alert push is for the user.
    func receivePush(contentAvailable: Bool) {
        guard contentAvailable else {
            record(.push(action: .received, result: nil, reason: .alert))
            return
        }
        let outcome = ServiceDelivery.push(serviceContext())
        if case .drop(let reason) = outcome {
            record(.push(action: .dropped, result: nil, reason: reason))
            return
        }
        if !appState.isForeground && !pushThrottle.admit(at: now) {
            // "The system may throttle the delivery … it discards the older notification and only
            // holds the newest one … If the user launches the app, the system immediately delivers
            // the held notification."
            if heldPush { record(.push(action: .discarded, result: nil, reason: .newerHeld)) }
            heldPush = true
            record(.push(action: .held, result: nil, reason: .throttled))
            return
        }
        switch outcome {
        case .wake, .launch: lifecycleEvent(.wake(.remoteNotification))
        default: break
        }
        callPushHandler(reason: outcome == .deliver ? (appState.isForeground ? .foreground : .running) : .woken)
    }

    /// Delivers the held push when the user launches the app.
    func deliverHeldPush() {
        guard heldPush, appCodeRuns else { return }
        heldPush = false
        callPushHandler(reason: .held)
    }

    private func callPushHandler(reason: AuditReason) {
        guard appCodeRuns else { return }
        pushCounter += 1
        let id = pushCounter
        let timed = !appState.isForeground
        pushHandlers[id] = timed
        if timed { timers.schedule(.pushDeadline(id), at: now + scenario.system.pushBudget) }
        record(.push(action: .delivered, result: nil, reason: reason))
        app.didReceiveRemoteNotification(self) { [weak self] result in self?.pushCompleted(id, result) }
    }

    private func pushCompleted(_ id: Int, _ result: FetchResult) {
        guard pushHandlers.removeValue(forKey: id) != nil else { return }
        timers.cancel(.pushDeadline(id))
        let note = fetchNote
        fetchNote = nil
        record(.push(action: .completed, result: result, reason: nil, detail: note?.reason))
        settle()
    }

    func pushDeadlinePassed(_ id: Int) {
        guard pushHandlers[id] == true else { return }
        record(.push(action: .expired, result: nil, reason: .budget))
        terminate(.remoteNotificationBudgetExceeded)
    }

    // MARK: - On screen and off

    /// The app came on screen: the budgets of a push's handler and of an app-refresh task stop
    /// running (no watchdog on screen), and running processing tasks end ("The system terminates
    /// any background processing tasks running when the user starts using the device").
    func servicesEnteredForeground() {
        for (id, timed) in pushHandlers where timed {
            pushHandlers[id] = false
            timers.cancel(.pushDeadline(id))
        }
        for (id, task) in runningTasks.sorted(by: { $0.key < $1.key }) {
            timers.cancel(.scheduledTaskWarning(id))
            timers.cancel(.scheduledTaskDeadline(id))
            guard task.kind == .processing else { continue }
            scheduledTaskWarningDue(id, reason: .userActive)
            if runningTasks[id] != nil { completeTask(task, success: false) }
        }
    }

    /// The app left the screen: handlers and tasks still running get their budgets afresh.
    func servicesEnteredBackground() {
        for (id, timed) in pushHandlers.sorted(by: { $0.key < $1.key }) where !timed {
            pushHandlers[id] = true
            timers.schedule(.pushDeadline(id), at: now + scenario.system.pushBudget)
        }
        for (id, task) in runningTasks.sorted(by: { $0.key < $1.key }) {
            armTaskTimers(
                id,
                budget: task.kind == .appRefresh ? scenario.system.appRefreshBudget : scenario.system.processingBudget)
        }
    }

    // MARK: - Audio

    func playAudio() {
        guard !audioPlaying else { return }
        audioPlaying = true
        record(.audio(action: .started, reason: scenario.info.backgroundModes.contains(.audio) ? nil : .noAudioMode))
    }

    func stopAudio(reason: AuditReason) {
        guard audioPlaying else { return }
        audioPlaying = false
        record(.audio(action: .stopped, reason: reason))
    }

    // MARK: - BGTaskScheduler

    func submitTaskRequest(_ request: TaskSchedulerStateMachine.Request) -> TaskSchedulerStateMachine.SubmitError? {
        guard appCodeRuns else { return .unavailable }
        guard version.major >= 13 else {
            // BGTaskScheduler arrived with iOS 13.
            record(
                .scheduledTask(
                    action: .rejected, kind: request.kind, identifier: request.identifier, success: nil,
                    reason: .needsIOS13))
            return .unavailable
        }
        var request = request
        if !runningTasks.isEmpty {
            // Submitted from a running task (the usual resubmission): it runs no sooner than a
            // second later, so that a handler that resubmits at once cannot run for ever in one
            // instant (*assumption*: the system never runs it at once).
            request.earliestBegin = max(request.earliestBegin ?? now, now + .seconds(1))
        }
        waitingReported[request.identifier] = nil
        if let error = taskRequests.submit(request, at: now, modes: scenario.info.backgroundModes, power: power) {
            record(
                .scheduledTask(
                    action: .rejected, kind: request.kind, identifier: request.identifier, success: nil,
                    reason: error.auditReason))
            return error
        }
                record(
            .scheduledTask(
                action: .submitted, kind: request.kind, identifier: request.identifier, success: nil,
                reason: nil, earliestBegin: request.earliestBegin))
        scheduleTaskCheck()
        return nil
    }

    func cancelTaskRequests(_ identifier: String?) {
        guard appCodeRuns else { return }
        for r in taskRequests.pendingRequests where identifier == nil || r.identifier == identifier {
            waitingReported[r.identifier] = nil
            record(
                .scheduledTask(
                    action: .cancelled, kind: r.kind, identifier: r.identifier, success: nil, reason: nil))
        }
        taskRequests.cancel(identifier: identifier)
        scheduleTaskCheck()
    }

    /// Sets the timer for the next request to come due; requests already due that wait are
    /// checked again when what they wait for changes.
    func scheduleTaskCheck() {
        if taskRequests.pendingRequests.contains(where: { ($0.earliestBegin ?? .zero) <= now }) {
            timers.schedule(.taskRequestsDue, at: now)
        } else if let next = taskRequests.nextDue(after: now) {
            timers.schedule(.taskRequestsDue, at: next)
        } else {
            timers.cancel(.taskRequestsDue)
        }
    }

    /// The timer fired: run what may run, say why the rest waits.
    func taskRequestsDue() {
        let power = power
        for (r, why) in taskRequests.waiting(
            at: now, app: appState, terminatedByUser: userForceQuit, power: power)
        where waitingReported[r.identifier] != why {
            // Said once for each request and reason.
            waitingReported[r.identifier] = why
            record(
                .scheduledTask(
                    action: .waiting, kind: r.kind, identifier: r.identifier, success: nil, reason: why))
        }
        runDueTasks()
        if let next = taskRequests.nextDue(after: now) { timers.schedule(.taskRequestsDue, at: next) }
    }

    /// Runs the due requests that may run now (after the app left the screen, a setting changed).
    func runDueTasks() {
        let runnable = taskRequests.takeRunnable(
            at: now, app: appState, terminatedByUser: userForceQuit, power: power)
        for request in runnable { start(request) }
    }

    private func start(_ request: TaskSchedulerStateMachine.Request) {
        waitingReported[request.identifier] = nil
        if appState == .suspended || appState == .notRunning { lifecycleEvent(.wake(request.kind.wakeCause)) }
        guard appCodeRuns, let handler = taskHandlers[request.identifier] else {
            record(
                .scheduledTask(
                    action: .dropped, kind: request.kind, identifier: request.identifier, success: nil,
                    reason: .notRegistered))
            return
        }
        taskCounter += 1
        let task = ScheduledTask(id: taskCounter, identifier: request.identifier, kind: request.kind, simulation: self)
        runningTasks[task.id] = task
        let budget = request.kind == .appRefresh ? scenario.system.appRefreshBudget : scenario.system.processingBudget
        armTaskTimers(task.id, budget: budget)
        record(
            .scheduledTask(
                action: .began, kind: request.kind, identifier: request.identifier, success: nil, reason: nil)
        )
        handler(task)
    }

    func completeTask(_ task: ScheduledTask, success: Bool) {
        guard runningTasks.removeValue(forKey: task.id) != nil else { return }
        task.isCompleted = true
        timers.cancel(.scheduledTaskDeadline(task.id))
        timers.cancel(.scheduledTaskWarning(task.id))
        let note = fetchNote
        fetchNote = nil
        record(
            .scheduledTask(
                action: .completed, kind: task.kind, identifier: task.identifier, success: success,
                reason: nil, detail: note?.reason))
        settle()
    }

    /// The task's time ran out: its expiration handler runs; still not completed, the app is
    /// terminated ("Not calling setTaskCompleted(success:) before the time for the task expires
    /// may result in the system killing your app").
    /// Sets a task's two timers: the expiration handler `expirationWarning` before the end of its
    /// time ("called before the background process uses the full amount of its allocated time"),
    /// and the end.
    func armTaskTimers(_ id: Int, budget: Duration) {
        let warning = max(.zero, budget - scenario.system.expirationWarning)
        timers.schedule(.scheduledTaskWarning(id), at: now + warning)
        timers.schedule(.scheduledTaskDeadline(id), at: now + budget)
    }

    /// The task's time is nearly over: its expiration handler runs.
    func scheduledTaskWarningDue(_ id: Int, reason: AuditReason? = nil) {
        guard let task = runningTasks[id] else { return }
        record(
            .scheduledTask(
                action: .expiring, kind: task.kind, identifier: task.identifier, success: nil, reason: reason)
        )
        if let handler = task.expirationHandler {
            handler()
        } else {
            // "Not setting an expiration handler results in the system marking your task as
            // complete and unsuccessful."
            completeTask(task, success: false)
        }
    }

    /// The task's time is over: still not completed, the app is terminated.
    func scheduledTaskDeadlinePassed(_ id: Int) {
        guard let task = runningTasks[id] else { return }
        record(
            .scheduledTask(
                action: .expired, kind: task.kind, identifier: task.identifier, success: nil, reason: .budget
            ))
        terminate(.scheduledTaskExpired)
    }

    // MARK: - Background URL session

    /// Uploads `locations` through the app's background URL session: the transfer goes on while
    /// the app is suspended or terminated by the system, and the app is woken to handle its
    /// completion. The file lands in ``uploadDirectory``, which stands in for the server.
    public func uploadInBackground(_ locations: [StoredLocation]) {
        guard appCodeRuns, !locations.isEmpty else { return }
        transferCounter += 1
        let id = transferCounter
        transfers[id] = Transfer(count: locations.count, payload: Self.payload(locations))
        record(.transfer(action: .scheduled, task: id, count: locations.count, reason: nil))
        timers.schedule(.transferDone(id), at: now + max(.zero, scenario.system.transferDuration))
    }

    private static func payload(_ locations: [StoredLocation]) -> String {
        var text = ""
        for l in locations {
            text += "\(ValueFormatting.fixed(l.location.coordinate.latitude, decimals: 7)),"
            text += "\(ValueFormatting.fixed(l.location.coordinate.longitude, decimals: 7)),"
            text += "\(ValueFormatting.fixed(l.location.timestamp.timeIntervalSince1970, decimals: 3))\n"
        }
        return text
    }

    func transferFinished(_ id: Int) {
        guard let transfer = transfers[id] else { return }
        var failure: (reason: AuditReason, detail: String?)?
        if !power.network {
            failure = (.noNetwork, nil)
        } else if let directory = uploadDirectory {
            failure = Self.write(transfer.payload, to: directory + "/upload-\(id).csv").map { (.cannotWrite, $0) }
        }
        if let failure {
            record(.transfer(action: .failed, task: id, count: transfer.count, reason: failure.reason, detail: failure.detail))
            timers.schedule(.transferDone(id), at: now + max(.seconds(1), scenario.system.transferRetryAfter))
            return
        }
        transfers[id] = nil
        record(.transfer(action: .completed, task: id, count: transfer.count, reason: nil))
        // "When a background transfer completes … if your app is no longer running, your app is
        // automatically relaunched in the background."
        switch appState {
        case .suspended, .notRunning:
            lifecycleEvent(.wake(.urlSession))
            guard appCodeRuns else { return }
            transferEventsPending = true
            // The app has about 30 s, as for a push, to call the completion (*assumption*).
            timers.schedule(.transferEventsDeadline, at: now + scenario.system.pushBudget)
            let launch = launchCount
            app.handleEventsForBackgroundURLSession(self) { [weak self] in
                guard let self, self.transferEventsPending, self.launchCount == launch else { return }
                self.transferEventsPending = false
                self.timers.cancel(.transferEventsDeadline)
                self.record(.transfer(action: .eventsHandled, task: id, count: nil, reason: nil))
                self.settle()
            }
        default:
            break
        }
    }

    /// The app did not say it handled its session's events in time: it may be suspended.
    func transferEventsTimedOut() {
        guard transferEventsPending else { return }
        transferEventsPending = false
        record(.transfer(action: .eventsTimedOut, task: transferCounter, count: nil, reason: .budget))
    }

    /// Writes `text` to `path`; the error in words, or nil.
    private static func write(_ text: String, to path: String) -> String? {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return nil
        } catch {
            return "cannot write \(path): \(error)"
        }
    }

    // MARK: - Device settings

    func setPower(_ change: (inout PowerAndRefresh) -> Void) {
        change(&power)
        runDueTasks()
    }
}
