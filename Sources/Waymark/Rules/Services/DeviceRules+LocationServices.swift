/// The location services that wake or relaunch the app: the significant-change service,
/// regions, visits, `CLMonitor` conditions and `requestLocation()`. Where their events go is
/// decided in one place, ``ServiceEventStateMachine``.
extension DeviceRules {
    /// Whether any service looks at fixes (read once per fix, by ``servicesObserve(_:)``:
    /// inlined, so that the read does not copy the whole rules first).
    @inline(__always)
    var servicesWatchFixes: Bool {
        significantChanges.isMonitoring || regionMonitor.isMonitoring || visits.isMonitoring
            || conditions.isMonitoring || Self.anyRequestWaiting(managers)
    }

    /// Whether a manager's `requestLocation()` waits (a function of the managers alone, so that
    /// asking does not copy the rules).
    static func anyRequestWaiting(_ managers: [ManagerUpdates]) -> Bool {
        managers.contains { $0.request.isWaiting }
    }

    /// The services see every fix of the device, whatever the app's state. (Asked here, in a
    /// mutating call, whether any watches: a getter called on the driver's rules copies them.)
    public mutating func servicesObserve(_ event: SourceEvent) -> [DeviceAction] {
        guard servicesWatchFixes, case .fix(let location) = event.kind else { return [] }
        var actions: [DeviceAction] = []
        for i in managers.indices where managers[i].request.isWaiting {
            actions += answerLocationRequest(location, event, manager: i + 1)
        }
        if significantChanges.observe(location, at: now) {
            let fix = SignificantChangeStateMachine.Fix(location: location, index: event.index, segment: event.segment)
            actions.append(SignificantChangeStateMachine.report(fix))
        }
        if regionMonitor.isMonitoring { actions += regionMonitor.handle(.fix(location.coordinate, at: now)) }
        if visits.isMonitoring {
            actions += visits.handle(.fix(location.coordinate, date: location.timestamp, at: now))
        }
        if conditions.isMonitoring { actions += conditions.handle(.fix(location.coordinate, at: now)) }
        return actions
    }

    // MARK: - Who receives a service's event

    /// The service events' machine (``ServiceEventStateMachine``) hears `event`: where a
    /// service's event goes, and what waits for the app.
    mutating func serviceEvent(_ event: ServiceEventStateMachine.Event) -> [DeviceAction] {
        serviceEvents.handle(
            event,
            in: .init(
                now: now, appRuns: appCodeRuns, delivery: serviceContext(), accuracy: authorization.accuracy,
                monitors: conditions.created))
    }

    // MARK: - The significant-change service

    /// The location a manager the app creates now starts with: "if significant location updates
    /// are running and your app is terminated, this property is updated with the most recent
    /// location data when your app is relaunched (and you create a new location manager object)"
    /// (CLLocationManager.location). The service's most recent location, as the service delivers
    /// it (at best Wi-Fi's accuracy, the reduced grid without full accuracy), while the app may
    /// receive locations (the effective status is `denied` with Location Services off); nil
    /// otherwise.
    public var locationForNewManager: Location? {
        guard let location = significantChanges.lastReported,
            authorization.status == .authorizedAlways || authorization.status == .authorizedWhenInUse
        else { return nil }
        let source: AccuracyModel.Positioning = authorization.accuracy == .reducedAccuracy ? .reduced : .wifi
        return AccuracyModel.apply(source, to: location)
    }

    /// `startMonitoringSignificantLocationChanges()` on manager `manager`: the app's one
    /// service starts if it is not running, and the manager hears its events.
    mutating func startSignificantChanges(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let started = significantChanges.handle(.start(at: now, cached: nil, app: appState))
        return started + serviceEvent(.significantChanges(listening: true, manager: manager))
    }

    /// `stopMonitoringSignificantLocationChanges()` on manager `manager`: it hears no more events,
    /// and the service stops when no manager of the app listens (after a relaunch, none does until
    /// the app starts it again, so any manager's stop ends it).
    mutating func stopSignificantChanges(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let left = serviceEvent(.significantChanges(listening: false, manager: manager))
        guard !serviceEvents.significantChangesListening else { return left }
        return significantChanges.handle(.stop(app: appState)) + left
    }

    // MARK: - Regions

    mutating func startMonitoring(_ region: CircularRegion) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        // The 20 are the app's, regions and CLMonitor conditions together (*assumption* for the
        // conditions: Apple gives no number for CLMonitor).
        return regionMonitor.handle(
            .start(region, elsewhere: conditions.count, authorization: authorization.status, at: now))
    }

    /// `stopMonitoring(for:)`: the region is let go, and an event of it that waits for the app
    /// (one that relaunched it, before its launch code has run to the end) goes with it, as
    /// `dropped` (*assumption*: Apple does not say; "Stops monitoring the specified region", so
    /// the app hears nothing more of it).
    mutating func stopMonitoring(_ identifier: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return regionMonitor.handle(.stop(identifier: identifier))
            + serviceEvent(.regionStopped(identifier: identifier))
    }

    mutating func requestState(_ identifier: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return regionMonitor.handle(
            .requestState(identifier: identifier, reducedAccuracy: authorization.accuracy == .reducedAccuracy))
    }

    // MARK: - Visits

    mutating func startVisits() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return visits.handle(.start)
    }

    mutating func stopVisits() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let stopped = visits.handle(.stop)
        return stopped + serviceEvent(.visitsStopped)
    }

    // MARK: - requestLocation()

    /// `requestLocation()` on manager `manager`: "calling this method while location services
    /// are already running does nothing", its own standard updates.
    mutating func requestLocation(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let event = LocationRequestStateMachine.Event.request(
            at: now, timeout: system.locationRequestTimeout,
            updatesRunning: isUpdating(manager: manager) && !isPaused(manager: manager), app: appState)
        return locationRequest(of: manager) { $0.handle(event) }
    }

    /// Starting a manager's updates "cancels any pending request made using" its
    /// `requestLocation()`.
    mutating func cancelLocationRequest(manager: Int) -> [DeviceAction] {
        let app = appState
        return locationRequest(of: manager) { $0.handle(.cancel(app: app)) }
    }

    /// The fix for manager `manager`'s waiting `requestLocation()`, with what the app may receive
    /// now and the manager's `desiredAccuracy`.
    private mutating func answerLocationRequest(_ fix: Location, _ event: SourceEvent, manager: Int)
        -> [DeviceAction]
    {
        let situation = LocationRequestStateMachine.Situation(
            appState: appState, appRuns: appCodeRuns, inUse: isInUse, authorization: authorization.status,
            isProvisionalAlways: authorization.isProvisionalAlways, accuracy: authorization.accuracy,
            locationServicesEnabled: authorization.locationServicesEnabled,
            desiredAccuracy: settings(ofManager: manager).desiredAccuracy)
        return locationRequest(of: manager) {
            $0.handle(.fix(fix, index: event.index, segment: event.segment, situation))
        }
    }

    mutating func locationRequestTimedOut(manager: Int) -> [DeviceAction] {
        let event = LocationRequestStateMachine.Event.timeout(app: appState, appRuns: appCodeRuns)
        return locationRequest(of: manager) { $0.handle(event) }
    }

    /// Hands manager `manager`'s `requestLocation()` machine to `body` (nothing for a manager the
    /// rules do not know).
    private mutating func locationRequest(
        of manager: Int, _ body: (inout LocationRequestStateMachine) -> [DeviceAction]
    ) -> [DeviceAction] {
        guard let i = index(ofManager: manager) else { return [] }
        return body(&managers[i].request)
    }

    // MARK: - CLMonitor

    /// `CLMonitor(name)` (iOS 17+): the app's monitor of that name.
    mutating func createMonitor(_ name: String) -> [DeviceAction] {
        conditions.handle(.create(name: name, appRuns: appCodeRuns))
    }

    /// `CLMonitor.remove(_:)`: the condition is let go, and an event of it held for a relaunched
    /// app (``AuditReason/awaitingMonitor``) goes with it, as `dropped`.
    mutating func removeCondition(_ identifier: String, from name: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return conditions.handle(.remove(identifier: identifier, monitor: name))
            + serviceEvent(.conditionRemoved(monitor: name, identifier: identifier))
    }

    mutating func addCondition(
        _ condition: CircularRegion, identifier: String, to name: String, assuming assumed: RegionState = .unknown
    ) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let existed = conditions.record(for: identifier, monitor: name) != nil
        let actions = conditions.handle(
            .add(
                condition, identifier: identifier, monitor: name, regionsElsewhere: regionMonitor.regions.count,
                assuming: assumed, at: now))
        // A condition added under an identifier in use replaces it: an event of the old one that
        // waits for the app goes with it, as on removal.
        let replaced =
            existed
            && actions.contains {
                if case .record(.monitor(name, identifier, .added, _, _)) = $0 { true } else { false }
            }
        return replaced ? serviceEvent(.conditionRemoved(monitor: name, identifier: identifier)) + actions : actions
    }
}
