/// How the rules answer each ``DeviceEvent``: which machines it goes to, and the actions that
/// follow, in order.
extension DeviceRules {
    /// Applies one event and returns what the device must do, in order.
    public mutating func handle(_ event: DeviceEvent) -> [DeviceAction] {
        switch event {
        case .lifecycle:
            // The driver queues lifecycle events (``lifecycleSteps(_:)``): an event raised while
            // a transition's actions run waits for them.
            return [.post(event)]
        case .setting(let action): return userSetting(action)
        case .push(let contentAvailable): return receivePush(contentAvailable: contentAvailable)
        case .timer(let key): return fire(key)

        case .requestAuthorization(let always): return requestAuthorization(always: always)
        case .startUpdates(let manager): return startUpdates(manager: manager)
        case .stopUpdates(let manager): return stopUpdates(manager: manager)
        case .managerSetting(let manager, let name, let value):
            return [.record(.setting(name: name, value: value, manager: manager))]
        case .significantChanges(let start, let manager):
            return start ? startSignificantChanges(manager: manager) : stopSignificantChanges(manager: manager)
        case .startMonitoring(let region): return startMonitoring(region)
        case .stopMonitoring(let identifier): return stopMonitoring(identifier)
        case .requestState(let identifier): return requestState(identifier)
        case .visits(let start): return start ? startVisits() : stopVisits()
        case .requestLocation(let manager): return requestLocation(manager: manager)
        case .requestTemporaryFullAccuracy(let key): return requestTemporaryFullAccuracy(purposeKey: key)
        case .beginBackgroundTask(let name): return beginBackgroundTask(name: name)
        case .endBackgroundTask(let task, let name):
            guard appCodeRuns else { return [] }
            return tasks.handle(.end(task: task, name: name, at: now))
        case .setFetchInterval(let interval):
            guard appCodeRuns else { return [] }
            return fetch.handle(.setInterval(interval, at: now))
        case .fetchCompleted(let id, let result, let note):
            return fetch.handle(.completed(id: id, result, note: note, at: now))
        case .pushCompleted(let id, let result, let note): return pushes.handle(.completed(id: id, result, note: note))
        case .submitTaskRequest(let request): return scheduledTasks(.submit(request))
        case .cancelTaskRequests(let identifier): return scheduledTasks(.cancel(identifier: identifier))
        case .registerTaskHandler(let identifier): return scheduledTasks(.register(identifier: identifier))
        case .completeScheduledTask(let id, let success, let note):
            return scheduledTasks(.complete(id: id, success: success, note: note))
        case .audio(let playing):
            return playing ? audio.play(audioMode: modes.contains(.audio)) : audio.stop(.app)
        case .upload(let count): return transfer(.upload(count: count))
        case .uploadWritten(let task, let failure): return transfer(.uploadWritten(task: task, failure: failure))
        case .download(let session, let launchEvents):
            return transfer(.download(.init(session: session, launchEvents: launchEvents)))
        case .downloadReceived(let task, let detail): return transfer(.downloadReceived(task: task, detail: detail))
        case .cancelDownload(let task): return transfer(.cancelDownload(task: task))
        case .urlSessionEventsHandled(let task): return transfer(.eventsHandled(task: task))
        case .startActivitySession: return startActivitySession()
        case .invalidateActivitySession(let id): return sessions.handle(.invalidateActivity(id: id))
        case .startServiceSession(let wanted): return startServiceSession(wanted)
        case .invalidateServiceSession(let id): return sessions.handle(.invalidateService(id: id))
        case .startLiveUpdates(let manager): return startLiveUpdates(manager: manager)
        case .createMonitor(let name): return createMonitor(name)
        case .addCondition(let region, let identifier, let monitor, let assumed):
            return addCondition(region, identifier: identifier, to: monitor, assuming: assumed)
        case .removeCondition(let identifier, let monitor): return removeCondition(identifier, from: monitor)
        case .conditionEventHandled(let event, let monitor): return conditions.handle(.handled(event, monitor: monitor))

        case .appWillEnterForeground: return appWillEnterForeground()
        case .appBecameActive: return appBecameActive()
        case .liveDiagnostic(let diagnostic, let manager): return live(.diagnostic(diagnostic, manager: manager))
        case .liveUpdateDelivered(let manager): return live(.delivered(manager: manager))
        case .liveListeners(let managers): return live(.listeners(managers))
        case .appStateChanged(let from, let to, let cause): return appStateChanged(from: from, to: to, cause: cause)
        case .appEnteredBackground: return appEnteredBackground()
        case .appSuspended: return tasks.handle(.appSuspended) + servicesAppStopped(terminated: nil)
        case .appTerminated(let cause): return appTerminated(cause)
        case .appLaunched(let inBackground): return appLaunched(inBackground: inBackground)
        case .appResumed: return location(.appResumed)
        case .authorization(let event): return authorization.handle(event)
        case .location(let event): return location(event)
        case .serviceEvent(let event): return serviceEvent(.route(event))
        case .deliverPendingServiceEvents(let kind): return serviceEvent(.deliverWaiting(kind))
        case .openServiceWake: return serviceEvent(.openWake)
        case .runDueTasks: return scheduledTasks(.runDue)
        case .updateLiveGate: return updateLiveGate()
        case .endTemporaryFullAccuracy: return temporaryAccuracy.handle(.noLongerInUse)
        case .alertDismissedOnLeaving: return dismissAlertOnLeaving()
        case .askForServiceSessionAuthorization: return askForServiceSessionAuthorization()
        case .deliverHeldPush:
            return pushes.handle(.launched(appRuns: appCodeRuns, inForeground: appState.isForeground, at: now))
        case .launchFinished: return launchFinished()
        case .tasksEnteredForeground: return tasks.handle(.enteredForeground)
        case .tasksEnteredBackground: return tasks.handle(.enteredBackground(at: now))
        case .scheduledTaskWarning(let id, let reason): return scheduledTasks(.warningDue(id: id, reason: reason))
        case .completeScheduledTaskIfRunning(let id): return scheduledTasks(.completeIfRunning(id: id))
        case .swipedAway(let wasRunning): return swipedAway(wasRunning: wasRunning)
        case .showAlert(let alert): return show(alert)
        case .hideAlert(let alert): return alerts.hide(alert)
        case .authorizationChangeReported: return authorizationChangeReported()
        case .alwaysPromptGone:
            let granted = authorization.status == .authorizedAlways && !authorization.isProvisionalAlways
            return location(.alwaysAnswered(granted: granted))
        case .alwaysPromptAnswered:
            return location(.alwaysAnswered(granted: authorization.status == .authorizedAlways))
        case .temporaryFullAccuracyAnswered(let allow): return temporaryAccuracy.handle(.answered(allow: allow))
        case .temporaryFullAccuracyCompleted(let request):
            return appCodeRuns ? [.call(.temporaryFullAccuracyCompletion(nil, request: request))] : []
        case .callPushHandler(let reason):
            return pushes.handle(
                .callHandler(reason: reason, appRuns: appCodeRuns, inForeground: appState.isForeground, at: now))
        case .scheduleNextTaskCheck: return scheduledTasks(.scheduleNext)
        case .startScheduledTask(let request): return scheduledTasks(.start(request))
        case .launchScheduledTask(let request): return scheduledTasks(.launch(request))
        case .handleURLSessionEvents(let task): return transfer(.handleEvents(task: task))
        case .deliverServiceEvent(let event): return serviceEvent(.deliver(event))
        }
    }

    // MARK: - Timers

    /// A system timer came due.
    mutating func fire(_ key: TimerKey) -> [DeviceAction] {
        switch key {
        case .gracePeriodEnd: return [.post(.lifecycle(.gracePeriodEnded))]
        case .taskWarning: return tasks.handle(.warningDue(at: now))
        case .taskDeadline: return tasks.handle(.deadlineDue)
        case .fetchWake:
            if let off = power.backgroundRefreshOffReason {
                // Background fetch is one of the behaviours the switch turns off.
                return [.record(.fetch(action: .skipped, result: nil, synced: nil, reason: off))]
                    + fetch.handle(.wakeSkipped(at: now))
            }
            return fetch.handle(.wakeDue(at: now, app: appState, terminatedByUser: lifecycle.swipedAway))
        case .fetchDeadline: return fetch.handle(.deadlineDue(at: now))
        case .answer(let alert): return answer(alert)
        case .serviceWakeEnd: return serviceEvent(.wakeEnded)
        case .pushDeadline(let id): return pushes.handle(.deadlineDue(id: id))
        case .scheduledTaskDeadline(let id): return scheduledTasks(.deadlineDue(id: id))
        case .scheduledTaskWarning(let id): return scheduledTasks(.warningDue(id: id, reason: nil))
        case .transferEventsDeadline: return transfer(.eventsDeadlineDue)
        case .taskRequestsDue: return scheduledTasks(.requestsDue)
        case .locationRequestTimeout(let manager): return locationRequestTimedOut(manager: manager)
        case .transferDone(let id): return transfer(.due(task: id))
        }
    }

    // MARK: - The user's and the system's settings

    mutating func userSetting(_ action: Scenario.Action) -> [DeviceAction] {
        switch action {
        case .setAuthorization(let status): return authorization.handle(.setAuthorization(status))
        case .setRestricted(let on): return authorization.handle(.setRestricted(on))
        case .setPreciseLocation(let precise):
            // The user's own choice replaces a temporary grant: it is not undone when it ends.
            return temporaryAccuracy.handle(.userChose) + authorization.handle(.setPreciseLocation(precise))
        case .setLocationServices(let on): return authorization.handle(.setLocationServices(on))
        case .setBackgroundAppRefresh(let on): return power.handle(.backgroundAppRefresh(on))
        case .setAppBackgroundAppRefresh(let on): return power.handle(.appBackgroundAppRefresh(on))
        case .setLowPowerMode(let on): return power.handle(.lowPowerMode(on))
        case .setCharging(let on): return power.handle(.charging(on))
        case .setNetwork(let on): return power.handle(.network(on))
        default: return []
        }
    }
}
