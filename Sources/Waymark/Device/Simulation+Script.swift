/// The scenario's timeline: what the user and the system do (handed to the rules), and what the
/// app's own code does (run as the app's code, through its manager and `UIApplication`).
extension Simulation {
    func carryOut(_ action: Scenario.Action) {
        switch action {
        case .foreground: lifecycleEvent(.open)
        case .background: lifecycleEvent(.leave)
        case .deactivate: lifecycleEvent(.interrupt)
        case .activate: lifecycleEvent(.endInterruption)
        case .terminate:
            let wasRunning = appState != .notRunning
            lifecycleEvent(.terminate(.user))
            post(.swipedAway(wasRunning: wasRunning))
        case .systemTerminate:
            if appState == .notRunning {
                record(.diagnostic(message: "systemTerminate: the app is not running"))
            } else {
                lifecycleEvent(.terminate(.system))
            }
        case .push(let contentAvailable): post(.push(contentAvailable: contentAvailable))
        case .setAuthorization, .setRestricted, .setPreciseLocation, .setLocationServices, .setBackgroundAppRefresh,
            .setAppBackgroundAppRefresh, .setLowPowerMode, .setCharging, .setNetwork:
            post(.setting(action))
        default:
            // The rest is the app's own code: it runs only while the app does.
            guard appCodeRuns, let process else {
                record(
                    .diagnostic(
                        message: "\(action.name) needs the app's code to run, but the app is \(appState.rawValue)"))
                return
            }
            inProcess(process) { carryOutAppCode(action, process) }
        }
    }

    private func carryOutAppCode(_ action: Scenario.Action, _ process: AppProcess) {
        let manager = self.manager
        switch action {
        case .requestAuthorization(let request):
            request == .always ? manager.requestAlwaysAuthorization() : manager.requestWhenInUseAuthorization()
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
        case .stopMonitoring(let identifier): managerCall(.stopMonitoring(identifier: identifier))
        case .requestState(let identifier): managerCall(.requestState(identifier: identifier))
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
        case .playAudio: setAudioPlaying(true)
        case .stopAudio: setAudioPlaying(false)
        case .requestLocation: manager.requestLocation()
        case .requestTemporaryFullAccuracy(let key):
            manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: key)
        case .startBackgroundActivitySession:
            process.scriptedActivitySessions.append(startBackgroundActivitySession())
        case .invalidateBackgroundActivitySession:
            if process.scriptedActivitySessions.isEmpty {
                record(.diagnostic(message: "invalidateBackgroundActivitySession: the app holds no session"))
            } else {
                process.scriptedActivitySessions.removeFirst().invalidate()
            }
        case .startServiceSession(let wanted):
            process.scriptedServiceSessions.append(startServiceSession(authorization: wanted))
        case .invalidateServiceSession:
            if process.scriptedServiceSessions.isEmpty {
                record(.diagnostic(message: "invalidateServiceSession: the app holds no session"))
            } else {
                process.scriptedServiceSessions.removeFirst().invalidate()
            }
        case .liveUpdates:
            if managerMayStartLiveUpdates() {
                rules.listenScripted()
                liveListenersChanged()
                managerCall(.startLiveUpdates(manager: 1))
            }
        case .addCondition(let name, let region):
            if process.monitors[name] == nil { _ = monitor(named: name) }
            addCondition(region, identifier: region.identifier, to: name)
        case .removeCondition(let name, let identifier): removeCondition(identifier, from: name)
        default: break
        }
    }

    /// Begins a task whose expiration handler ends it when the scenario's app is well behaved
    /// (`endsTaskOnExpiration`), and does nothing otherwise (the watchdog then ends the app).
    @discardableResult
    public func beginTaskEndedOnExpiration(reason: String) -> BackgroundTaskIdentifier {
        let box = TaskBox()
        let ends = scenario.app.endsTaskOnExpiration
        let task = beginBackgroundTask(reason: reason) { [weak self] in
            if ends, let self { self.endBackgroundTask(box.task, reason: "expirationHandler") }
        }
        box.task = task
        return task
    }
}

/// Lets an expiration handler name the task it belongs to (known only once it has begun).
private final class TaskBox {
    var task = BackgroundTaskIdentifier.invalid
}
