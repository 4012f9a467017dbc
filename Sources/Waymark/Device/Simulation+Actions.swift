/// How the simulation carries out what its state machines decide: each machine's actions become
/// audit events, timers, calls into the app's code and events for the other machines.
extension Simulation {
    // MARK: - Lifecycle

    /// Feeds the lifecycle machine. Events raised while its actions run (a prompt from the app's
    /// launch code, a termination) wait for those actions to finish; a termination drops the
    /// rest of them (the app's code stopped running).
    func lifecycleEvent(_ event: AppLifecycleStateMachine.Event) {
        lifecycleQueue.append(event)
        guard !inLifecycle else { return }
        inLifecycle = true
        defer { inLifecycle = false }
        while !lifecycleQueue.isEmpty {
            let next = lifecycleQueue.removeFirst()
            for action in lifecycle.handle(next) {
                if lifecycleQueue.contains(where: { if case .terminate = $0 { true } else { false } }) { break }
                carryOut(action)
            }
        }
    }

    func terminate(_ cause: TerminationCause) { lifecycleEvent(.terminate(cause)) }

    private func carryOut(_ action: AppLifecycleStateMachine.Action) {
        switch action {
        case .stateChanged(let from, let to, let cause):
            // The state the app last saw: when a termination cut a transition short, the step it
            // never reached is not reported.
            record(.stateChanged(from: reportedState, to: to, cause: cause))
            reportedState = to
            if from == .notRunning {
                launchCause = cause
                if cause == .userLaunch { userForceQuit = false }
            }
            if to == .notRunning && cause == .user { userForceQuit = true }
            if to == .notRunning || (to == .background && (from == .notRunning || from == .suspended)) {
                // What the app's state kept from running may run now (after the current step).
                if !taskRequests.pendingRequests.isEmpty { timers.schedule(.taskRequestsDue, at: now) }
            }
            if from == .suspended && to == .background {
                // A resume on the way to the foreground hands held fixes over once the app is
                // active; a service's wake hands them over at once.
                if cause == .resumed {
                    resumePending = true
                } else {
                    apply(location.handle(.appResumed(context())))
                }
                if authorizationChangedWhileSuspended {
                    authorizationChangedWhileSuspended = false
                    manager.delegate?.locationManagerDidChangeAuthorization(manager)
                }
            }
        case .finishLaunching(let inBackground):
            launchCount += 1
            manager.reset()
            apply(tasks: tasks.handle(.launched(inBackground: inBackground, at: now)))
            let reports = version.reportsAuthorizationAtManagerCreation
            record(.managerCreated(authorization: authorization.status, reported: reports))
            app.didFinishLaunching(self, inBackground: inBackground)
            if reports && appCodeRuns { manager.delegate?.locationManagerDidChangeAuthorization(manager) }
            deliverPendingServiceEvents()
        case .becameActive:
            if resumePending {
                resumePending = false
                apply(location.handle(.appResumed(context())))
            }
            app.didBecomeActive(self)
            if !serviceSessions.isEmpty && appCodeRuns { askForServiceSessionAuthorization() }
            // "If the user launches the app, the system immediately delivers the held notification."
            if heldPush { deliverHeldPush() }
        case .willEnterForeground:
            servicesEnteredForeground()
            apply(tasks: tasks.handle(.enteredForeground))
            apply(location.handle(.appEnteredForeground(context())))
            app.willEnterForeground(self)
        case .enteredBackground:
            dismissAlertOnLeaving()
            apply(tasks: tasks.handle(.enteredBackground(at: now)))
            app.didEnterBackground(self)
            apply(fetch: fetch.handle(.appEnteredBackground(at: now)))
            servicesEnteredBackground()
            runDueTasks()
        case .startGracePeriod(let duration):
            timers.schedule(.gracePeriodEnd, at: now + duration)
        case .cancelGracePeriod:
            timers.cancel(.gracePeriodEnd)
        case .suspended:
            apply(tasks: tasks.handle(.appSuspended))
            servicesAppStopped(terminated: nil)
        case .terminated(let cause):
            dismissAlertOnLeaving()
            resumePending = false
            authorizationChangedWhileSuspended = false
            record(.terminated(reason: cause))
            apply(location.handle(.appTerminated))
            apply(tasks: tasks.handle(.appTerminated))
            expirationHandlers.removeAll()
            appWork.removeAll()
            apply(fetch: fetch.handle(.appTerminated(at: now)))
            servicesAppStopped(terminated: cause)
            manager.reset()
            app.didTerminate(self, cause: cause)
        }
    }

    /// A system timer came due.
    func fire(_ key: TimerKey) {
        switch key {
        case .gracePeriodEnd: lifecycleEvent(.gracePeriodEnded)
        case .taskWarning: apply(tasks: tasks.handle(.warningDue(at: now)))
        case .taskDeadline: apply(tasks: tasks.handle(.deadlineDue))
        case .fetchWake:
            if let off = power.backgroundRefreshOffReason {
                // Background fetch is one of the behaviours the switch turns off.
                record(.fetch(action: .skipped, result: nil, synced: nil, reason: off))
                apply(fetch: fetch.handle(.wakeSkipped(at: now)))
                return
            }
            apply(
                fetch: fetch.handle(
                    .wakeDue(at: now, app: appState, terminatedByUser: userForceQuit)))
        case .fetchDeadline: apply(fetch: fetch.handle(.deadlineDue(at: now)))
        case .answer(let alert): answer(alert)
        case .serviceWakeEnd: serviceWakeUntil = nil
        case .pushDeadline(let id): pushDeadlinePassed(id)
        case .scheduledTaskDeadline(let id): scheduledTaskDeadlinePassed(id)
        case .scheduledTaskWarning(let id): scheduledTaskWarningDue(id)
        case .transferEventsDeadline: transferEventsTimedOut()
        case .taskRequestsDue: taskRequestsDue()
        case .locationRequestTimeout: locationRequestTimedOut()
        case .transferDone(let id): transferFinished(id)
        }
    }

    // MARK: - Scripted actions

    func carryOut(_ action: Scenario.Action) {
        switch action {
        case .foreground: lifecycleEvent(.open)
        case .background: lifecycleEvent(.leave)
        case .deactivate: lifecycleEvent(.interrupt)
        case .activate: lifecycleEvent(.endInterruption)
        case .terminate:
            let wasRunning = appState != .notRunning
            terminate(.user)
            if !wasRunning && lifecycle.wasTerminatedByUser && !userForceQuit {
                // Swiped away from the app switcher after the system ended it.
                userForceQuit = true
                servicesAppStopped(terminated: .user)
            }
        case .setAuthorization(let status): perform(authorization: authorization.handle(.setAuthorization(status)))
        case .setRestricted(let on): perform(authorization: authorization.handle(.setRestricted(on)))
        case .setPreciseLocation(let precise):
            // The user's own choice replaces a temporary grant: it is not undone when it ends.
            temporaryFullAccuracy = false
            perform(authorization: authorization.handle(.setPreciseLocation(precise)))
        case .setLocationServices(let on): perform(authorization: authorization.handle(.setLocationServices(on)))
        case .systemTerminate:
            if appState == .notRunning {
                record(.diagnostic(message: "systemTerminate: the app is not running"))
            } else {
                terminate(.system)
            }
        case .push(let contentAvailable): receivePush(contentAvailable: contentAvailable)
        case .setBackgroundAppRefresh(let on): setPower { $0.backgroundAppRefresh = on }
        case .setAppBackgroundAppRefresh(let on): setPower { $0.appBackgroundAppRefresh = on }
        case .setLowPowerMode(let on): setPower { $0.lowPowerMode = on }
        case .setCharging(let on): setPower { $0.charging = on }
        case .setNetwork(let on): setPower { $0.network = on }
        default:
            // The rest is the app's own code: it runs only while the app does.
            guard appCodeRuns else {
                record(
                    .diagnostic(
                        message: "\(action.name) needs the app's code to run, but the app is \(appState.rawValue)"))
                return
            }
            carryOutAppCode(action)
        }
    }

    private func carryOutAppCode(_ action: Scenario.Action) {
        switch action {
        case .requestAuthorization(let request): managerRequestedAuthorization(always: request == .always)
        case .startUpdates: manager.startUpdatingLocation()
        case .stopUpdates: manager.stopUpdatingLocation()
        case .beginBackgroundTask: beginTaskEndedOnExpiration(reason: "app")
        case .endBackgroundTask:
            if let first = backgroundTasks.first { endBackgroundTask(first, reason: "app") }
        case .setDesiredAccuracy(let a): manager.desiredAccuracy = a
        case .setDistanceFilter(let d): manager.distanceFilter = d
        case .setAllowsBackgroundLocationUpdates(let b): manager.allowsBackgroundLocationUpdates = b
        case .setPausesLocationUpdatesAutomatically(let b): manager.pausesLocationUpdatesAutomatically = b
        case .startMonitoringSignificantLocationChanges: manager.startMonitoringSignificantLocationChanges()
        case .stopMonitoringSignificantLocationChanges: manager.stopMonitoringSignificantLocationChanges()
        case .startMonitoring(let region): manager.startMonitoring(for: region)
        case .stopMonitoring(let identifier): managerStoppedMonitoring(identifier: identifier)
        case .requestState(let identifier): managerRequestedState(identifier: identifier)
        case .startMonitoringVisits: manager.startMonitoringVisits()
        case .stopMonitoringVisits: manager.stopMonitoringVisits()
        case .submitAppRefresh(let begin):
            _ = submitTaskRequest(
                .init(
                    identifier: TutorialApp.refreshTaskIdentifier, kind: .appRefresh,
                    earliestBegin: begin.map { now + $0 }))
        case .submitProcessing(let r):
            _ = submitTaskRequest(
                .init(
                    identifier: TutorialApp.processingTaskIdentifier, kind: .processing,
                    earliestBegin: r.earliestBegin.map { now + $0 }, requiresExternalPower: r.requiresExternalPower,
                    requiresNetworkConnectivity: r.requiresNetworkConnectivity))
        case .playAudio: playAudio()
        case .stopAudio: stopAudio(reason: .app)
        case .requestLocation: manager.requestLocation()
        case .requestTemporaryFullAccuracy(let key):
            manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: key)
        case .startBackgroundActivitySession: scriptedActivitySessions.append(startBackgroundActivitySession())
        case .invalidateBackgroundActivitySession:
            if scriptedActivitySessions.isEmpty {
                record(.diagnostic(message: "invalidateBackgroundActivitySession: the app holds no session"))
            } else {
                scriptedActivitySessions.removeFirst().invalidate()
            }
        case .startServiceSession(let wanted):
            scriptedServiceSessions.append(startServiceSession(authorization: wanted))
        case .invalidateServiceSession:
            if scriptedServiceSessions.isEmpty {
                record(.diagnostic(message: "invalidateServiceSession: the app holds no session"))
            } else {
                scriptedServiceSessions.removeFirst().invalidate()
            }
        case .liveUpdates:
            if managerMayStartLiveUpdates() {
                manager.scriptedLiveListener = true
                managerStartedLiveUpdates()
            }
        case .addCondition(let name, let region):
            if conditionMonitors[name] == nil { _ = monitor(named: name) }
            addCondition(region, identifier: region.identifier, to: name)
        case .removeCondition(let name, let identifier): removeCondition(identifier, from: name)
        default: break
        }
    }

    /// Begins a task whose expiration handler ends it when the scenario's app is well behaved
    /// (`endsTaskOnExpiration`), and does nothing otherwise (the watchdog then ends the app).
    @discardableResult
    func beginTaskEndedOnExpiration(reason: String) -> BackgroundTaskIdentifier {
        let box = TaskBox()
        let ends = scenario.app.endsTaskOnExpiration
        let task = beginBackgroundTask(reason: reason) { [weak self] in
            if ends, let self { self.endBackgroundTask(box.task, reason: "expirationHandler") }
        }
        box.task = task
        return task
    }

    // MARK: - Background tasks

    func apply(tasks actions: [BackgroundTaskStateMachine.Action], reason: String? = nil) {
        for action in actions {
            switch action {
            case .began(let task):
                record(.backgroundTask(action: .began, task: task, remaining: nil, reason: reason))
            case .ended(let task, let remaining):
                expirationHandlers[task] = nil
                record(.backgroundTask(action: .ended, task: task, remaining: remaining, reason: reason))
            case .scheduleExpiry(let warning, let deadline):
                timers.schedule(.taskWarning, at: warning)
                timers.schedule(.taskDeadline, at: deadline)
            case .cancelExpiry:
                timers.cancel(.taskWarning)
                timers.cancel(.taskDeadline)
            case .expiring(let ids, let remaining):
                record(.backgroundTask(action: .expiring, task: nil, remaining: remaining, reason: "budget"))
                for id in ids { expirationHandlers.removeValue(forKey: id)?() }
            case .terminateApp:
                terminate(.watchdog)
            }
        }
    }

    // MARK: - Background fetch

    func apply(fetch actions: [BackgroundFetchStateMachine.Action]) {
        for action in actions {
            switch action {
            case .scheduleWake(let at): timers.schedule(.fetchWake, at: max(now, at))
            case .cancelWake: timers.cancel(.fetchWake)
            case .deferred: record(.fetch(action: .deferred, result: nil, synced: nil, reason: .appInForeground))
            case .skippedUserTerminated:
                record(.fetch(action: .skipped, result: nil, synced: nil, reason: .userTerminated))
            case .begin(let wake, let deadline):
                if wake != .none { lifecycleEvent(.wake(.backgroundFetch)) }
                record(.fetch(action: .began, result: nil, synced: nil, reason: nil))
                fetchNote = nil
                timers.schedule(.fetchDeadline, at: deadline)
                fetchCounter += 1
                let id = fetchCounter
                app.performFetch(self) { [weak self] result in self?.fetchCompleted(id, result) }
            case .completed(let result):
                let note = fetchNote
                fetchNote = nil
                record(
                    .fetch(
                        action: .completed, result: result, synced: note?.synced ?? 0, reason: nil, detail: note?.reason))
            case .cancelDeadline: timers.cancel(.fetchDeadline)
            case .expired:
                record(.fetch(action: .expired, result: nil, synced: nil, reason: .budget))
                terminate(.fetchBudgetExceeded)
            }
        }
    }

    private func fetchCompleted(_ id: Int, _ result: FetchResult) {
        guard id == fetchCounter else { return }
        apply(fetch: fetch.handle(.completed(result, at: now)))
        settle()
    }

    /// What the app's fetch synced, for the `completed` event (``TutorialApp``).
    package func noteFetch(synced: Int, reason: String?) { fetchNote = (synced, reason) }

    // MARK: - Authorization and system alerts

    func perform(authorization actions: [AuthorizationStateMachine.Action]) {
        var changed = false
        var alwaysPromptGone = false
        for action in actions {
            switch action {
            case .showPrompt(let prompt):
                record(.prompt(prompt: Self.name(prompt), phase: .shown, answer: nil))
                show(.authorization(prompt))
            case .promptDismissed(let prompt):
                record(.prompt(prompt: Self.name(prompt), phase: .dismissed, answer: nil))
                hide(.authorization(prompt))
                if prompt == .always { alwaysPromptGone = true }
            case .statusChanged(let from, let to):
                record(.authorizationChanged(from: from, to: to))
                changed = true
            case .accuracyChanged(let from, let to):
                record(.accuracyChanged(from: from, to: to))
                changed = true
            case .locationServicesChanged(let enabled):
                record(.locationServicesChanged(enabled: enabled))
                changed = true
            case .ignored(let reason):
                record(.diagnostic(message: "ignored: \(reason.rawValue)"))
            }
        }
        if alwaysPromptGone {
            // The event held for the Always prompt follows what the user now has.
            let granted = authorization.status == .authorizedAlways && !authorization.isProvisionalAlways
            apply(location.handle(.alwaysAnswered(granted: granted, context())))
        }
        guard changed else { return }
        if appCodeRuns {
            manager.delegate?.locationManagerDidChangeAuthorization(manager)
        } else if appState == .suspended {
            // "Core Location always calls locationManagerDidChangeAuthorization(_:) when the user's
            // action results in an authorization status change": the app hears of it when it runs.
            authorizationChangedWhileSuspended = true
        }
        apply(location.handle(.authorizationChanged(context())))
    }

    static func name(_ prompt: AuthorizationStateMachine.Prompt) -> PromptKind {
        switch prompt {
        case .whenInUse(let forAlways): forAlways ? .whenInUseForAlways : .whenInUse
        case .always: .always
        case .alwaysOrWhenInUse: .alwaysOrWhenInUse
        }
    }

    /// Puts an alert up: over the app when it is on screen (the app becomes inactive), and
    /// schedules the user's answer if the scenario has one.
    func show(_ alert: SystemAlert) {
        if appState.isForeground && alertOnScreen == nil {
            alertOnScreen = alert
            lifecycleEvent(.showAlert)
        }
        if userAnswer(to: alert) != nil { timers.schedule(.answer(alert), at: now + scenario.user.answerAfter) }
    }

    private func hide(_ alert: SystemAlert) {
        timers.cancel(.answer(alert))
        guard alertOnScreen == alert else { return }
        alertOnScreen = nil
        lifecycleEvent(.dismissAlert)
    }

    /// Leaving the app or its termination dismisses an alert over it, unanswered.
    func dismissAlertOnLeaving() {
        guard let alert = alertOnScreen else { return }
        alertOnScreen = nil
        timers.cancel(.answer(alert))
        switch alert {
        case .authorization: perform(authorization: authorization.handle(.dismissPrompt))
        case .locationServices: record(.prompt(prompt: .locationServices, phase: .dismissed, answer: nil))
        case .temporaryFullAccuracy: answerTemporaryFullAccuracy(nil)
        }
    }

    /// The scenario user's answer to `alert` as the audit names it, and the event it makes.
    private func userAnswer(to alert: SystemAlert) -> (text: PromptAnswer, event: AuthorizationStateMachine.Event?)? {
        let user = scenario.user
        switch alert {
        case .locationServices:
            return (.cancel, nil)
        case .temporaryFullAccuracy:
            return user.temporaryFullAccuracy.map { ($0 ? .allow : .deny, nil) }
        case .authorization(.whenInUse):
            // An answer the release does not offer leaves the prompt unanswered.
            if user.whenInUse == .allowOnce && !version.hasAllowOnceAndProvisionalAlways { return nil }
            return user.whenInUse.map { (PromptAnswer($0), .answerWhenInUse($0)) }
        case .authorization(.always):
            return user.always.map { (PromptAnswer($0), .answerAlways($0)) }
        case .authorization(.alwaysOrWhenInUse):
            // Up to iOS 12: Don't Allow, else the Always answer, else While Using.
            if user.whenInUse == .dontAllow { return (.dontAllow, .answerAlwaysOrWhenInUse(.denied)) }
            if let always = user.always {
                return always == .changeToAlways
                    ? (.allowAlways, .answerAlwaysOrWhenInUse(.authorizedAlways))
                    : (.allowWhileUsing, .answerAlwaysOrWhenInUse(.authorizedWhenInUse))
            }
            if user.whenInUse != nil { return (.allowWhileUsing, .answerAlwaysOrWhenInUse(.authorizedWhenInUse)) }
            return nil
        }
    }

    private func answer(_ alert: SystemAlert) {
        if alert == .temporaryFullAccuracy {
            guard let allow = scenario.user.temporaryFullAccuracy else { return }
            hide(alert)
            answerTemporaryFullAccuracy(allow)
            return
        }
        guard let (text, event) = userAnswer(to: alert) else { return }
        guard let event else {
            record(.prompt(prompt: .locationServices, phase: .answered, answer: text))
            hide(alert)
            return
        }
        guard case .authorization(let prompt) = alert, authorization.pendingPrompt == prompt else { return }
        record(.prompt(prompt: Self.name(prompt), phase: .answered, answer: text))
        perform(authorization: authorization.handle(event))
        hide(alert)
        if prompt == .always {
            let granted = authorization.status == .authorizedAlways
            apply(location.handle(.alwaysAnswered(granted: granted, context())))
        }
    }

    // MARK: - Location updates

    /// Carries out the location service's actions; `arrivals` when they decide events from the
    /// source, which the counts take as arrivals (the rest are held fixes delivered later).
    func apply(_ actions: [LocationServiceStateMachine.Action], arrivals: Bool = false) {
        for i in actions.indices {
            switch actions[i] {
            case .started: record(.updates(action: .started))
            case .stopped: record(.updates(action: .stopped))
            case .decided(let o):
                if let delivered = o.delivered, o.decision == .delivered {
                    pendingUpdates.append(
                        LocationUpdate(
                            location: delivered, appState: appState, reason: o.reason, index: o.index,
                            segment: o.segment))
                }
                if arrivals {
                    summary.count(o.decision, o.reason, appState)
                } else if o.decision == .delivered {
                    summary.resumedDeliveries += 1
                }
                if o.decision == .dropped, manager.hasLiveListeners, let d = LiveUpdate.Diagnostic(o.reason),
                    d != .authorizationRequestInProgress || authorization.pendingPrompt != nil
                {
                    sendLiveDiagnostic(d)
                }
                guard hasObservers else { continue }
                record(
                    .fix(
                        AuditEvent.FixRecord(
                            index: o.index, segment: o.segment, decision: o.decision, reason: o.reason,
                            appState: appState, authorization: authorization.status,
                            accuracy: authorization.accuracy, coordinate: o.coordinate, delivered: o.delivered,
                            backgroundTimeRemaining: backgroundTimeRemaining, indicator: o.indicator,
                            positioning: o.positioning)))
            case .deliver(let count, let reason):
                deliver(last: count, reason: reason)
            case .report(let error):
                record(.error(error))
                manager.delegate?.locationManager(manager, didFailWithError: error)
            case .paused:
                record(.paused(reason: .stationary))
                manager.delegate?.locationManagerDidPauseLocationUpdates(manager)
                if manager.hasLiveListeners { sendLiveStationary() }
            case .resumed:
                record(.resumed(reason: .appRestarted))
                manager.delegate?.locationManagerDidResumeLocationUpdates(manager)
            case .needsAlways:
                perform(authorization: authorization.handle(.neededAlways))
            case .heldDiscarded(let count, let reason):
                summary.discardedHeld += count
                record(.heldDiscarded(count: count, reason: reason))
            }
        }
    }

    /// Calls the delegate once with the last `count` locations decided as delivered. The buffers
    /// are reused from fix to fix (and taken out while the app's code runs, which may start
    /// another delivery).
    private func deliver(last count: Int, reason: FixReason) {
        var updates = spareUpdates
        spareUpdates = []
        updates.removeAll(keepingCapacity: true)
        if count == pendingUpdates.count {
            swap(&updates, &pendingUpdates)
        } else {
            updates.append(contentsOf: pendingUpdates.suffix(count))
            pendingUpdates.removeAll(keepingCapacity: true)
        }
        guard !updates.isEmpty else { return }
        if lastLiveDiagnostic != nil { lastLiveDiagnostic = nil }
        if !appState.isForeground || reason == .resumed || reason == .alwaysGranted {
            summary.deliveredWhileAway += updates.count
        }
        if updates.count > 1 { record(.locationsDelivered(count: updates.count, reason: reason)) }
        currentUpdates = updates
        manager.deliver(updates)
        currentUpdates = []
        spareUpdates = updates
    }
}

/// Lets an expiration handler name the task it belongs to (known only once it has begun).
private final class TaskBox {
    var task = BackgroundTaskIdentifier.invalid
}

extension Simulation: LocationManagerHost {
    var isUpdating: Bool { location.isUpdating }
    var authorizationStatus: AuthorizationStatus { authorization.status }
    var accuracyAuthorization: AccuracyAuthorization { authorization.accuracy }

    func managerRequestedAuthorization(always: Bool) {
        guard appCodeRuns else { return }
        let request: Scenario.AuthorizationRequest = always ? .always : .whenInUse
        let inForeground = appState.isForeground
        let actions = authorization.handle(
            always ? .requestAlways(inForeground: inForeground) : .requestWhenInUse(inForeground: inForeground))
        if case .ignored(let reason)? = actions.first {
            record(.authorizationRequest(request: request, outcome: .ignored, reason: reason))
            switch reason {
            case .missingWhenInUseDescription, .missingAlwaysDescription:
                record(.diagnostic(message: "the Info has no usage description for this request; no prompt is shown"))
            case .notInForeground:
                record(
                    .diagnostic(
                        message:
                            "a location authorization prompt needs the app in the foreground; the request is ignored"))
            case .locationServicesOff:
                record(
                    .diagnostic(
                        message: "Location Services are off: the app reads denied and its request shows no prompt"))
            default:
                break
            }
            return
        }
        record(.authorizationRequest(request: request, outcome: .prompted, reason: nil))
        perform(authorization: actions)
    }

    func managerStartedUpdates() {
        guard appCodeRuns else { return }
        cancelLocationRequest()
        let wasRunning = location.isUpdating && !location.isPaused
        apply(location.handle(.start(context())))
        if !wasRunning && !authorization.locationServicesEnabled && appState.isForeground {
            // "Starting updates with them off brings up the system alert to turn them on."
            record(.prompt(prompt: .locationServices, phase: .shown, answer: nil))
            show(.locationServices)
        }
    }

    func managerStoppedUpdates() {
        guard appCodeRuns else { return }
        apply(location.handle(.stop))
    }

    func managerChangedSetting(_ name: ManagerSetting, _ value: String) { record(.setting(name: name, value: value)) }

    func managerMayAllowBackgroundUpdates() -> Bool {
        if scenario.info.backgroundModes.contains(.location) { return true }
        record(
            .diagnostic(
                message:
                    "allowsBackgroundLocationUpdates without the location background mode in the Info is a fatal error that terminates the app"
            ))
        terminate(.fatalError)
        return false
    }
}
