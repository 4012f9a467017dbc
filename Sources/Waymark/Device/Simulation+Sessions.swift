#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The iOS 17 and 18 APIs: `CLBackgroundActivitySession`, `CLServiceSession`,
/// `CLLocationUpdate.liveUpdates()` and `CLMonitor`.
extension Simulation {
    // MARK: - CLBackgroundActivitySession

    /// Starts a `CLBackgroundActivitySession` (iOS 17+), as the app's code would create one. It
    /// keeps the app in use in the background only when started in use, with the `location`
    /// background mode; otherwise it does nothing (a `session` event says why).
    @discardableResult
    public func startBackgroundActivitySession() -> BackgroundActivitySession {
        let why: AuditReason? =
            if version.major < 17 {
                .needsIOS17
            } else if !appCodeRuns {
                AuditReason(appState)
            } else if !scenario.info.backgroundModes.contains(.location) {
                .noLocationMode
            } else if !isInUse {
                .notInUse
            } else {
                nil
            }
        let session = BackgroundActivitySession(simulation: self, active: why == nil, launch: launchCount)
        record(.session(kind: .backgroundActivity, action: why == nil ? .started : .ignored, reason: why))
        guard why == nil else { return session }
        activitySessions += 1
        return session
    }

    func invalidate(_ session: BackgroundActivitySession) {
        let active = session.isActive
        session.valid = false
        guard active else { return }
        activitySessions -= 1
        record(.session(kind: .backgroundActivity, action: .invalidated, reason: nil))
        settle()
    }

    // MARK: - CLServiceSession

    /// Starts a `CLServiceSession` (iOS 18+) asking for `authorization`: from notDetermined, on
    /// screen, it asks for it; held, it asks again whenever the app becomes active with the status
    /// back at notDetermined (Allow Once lapsed).
    @discardableResult
    public func startServiceSession(authorization wanted: ServiceSession.Authorization) -> ServiceSession {
        sessionCounter += 1
        let session = ServiceSession(id: sessionCounter, authorization: wanted, simulation: self)
        guard version.major >= 18, appCodeRuns else {
            record(
                .session(
                    kind: .service, action: .ignored, reason: version.major < 18 ? .needsIOS18 : AuditReason(appState)))
            return session
        }
        serviceSessions[session.id] = wanted
        record(.session(kind: .service, action: .started, reason: AuditReason(wanted)))
        updateLiveGate()
        askForServiceSessionAuthorization()
        return session
    }

    func invalidate(_ session: ServiceSession) {
        guard serviceSessions.removeValue(forKey: session.id) != nil else { return }
        record(.session(kind: .service, action: .invalidated, reason: AuditReason(session.authorization)))
        updateLiveGate()
    }

    /// A held session asks for what it wants when the status is notDetermined and the app can
    /// show a prompt.
    func askForServiceSessionAuthorization() {
        guard appState.isForeground, authorization.status == .notDetermined, alertOnScreen == nil else { return }
        let wanted = serviceSessions.values
        if wanted.contains(.always) {
            managerRequestedAuthorization(always: true)
        } else if wanted.contains(.whenInUse) {
            managerRequestedAuthorization(always: false)
        }
    }

    /// With `NSLocationRequireExplicitServiceSession`, live updates carry no location without a
    /// session (iOS 18).
    func updateLiveGate() {
        let blocked = version.major >= 18 && scenario.info.requiresExplicitServiceSession && serviceSessions.isEmpty
        let was = manager.liveLocationsBlocked
        manager.liveLocationsBlocked = blocked
        if blocked && !was && manager.hasLiveListeners { sendLiveDiagnostic(.serviceSessionRequired) }
        if !blocked && was && manager.hasLiveListeners && appCodeRuns { managerStartedUpdates() }
    }

    // MARK: - Live updates

    func managerMayStartLiveUpdates() -> Bool {
        guard version.major >= 17 else {
            record(.diagnostic(message: "liveUpdates() needs iOS 17 (this run models \(version))"))
            return false
        }
        return appCodeRuns
    }

    /// `liveUpdates()` starts updates; from notDetermined it asks for When In Use, as the
    /// implicit service session does.
    func managerStartedLiveUpdates() {
        guard appCodeRuns else { return }
        updateLiveGate()
        if manager.liveLocationsBlocked {
            sendLiveDiagnostic(.serviceSessionRequired)
            return
        }
        if authorization.status == .notDetermined && appState.isForeground {
            managerRequestedAuthorization(always: false)
        }
        managerStartedUpdates()
    }

    /// Sends a diagnostic once (until a location comes again).
    func sendLiveDiagnostic(_ diagnostic: LiveUpdate.Diagnostic) {
        guard version.major >= 18, diagnostic != lastLiveDiagnostic else { return }
        lastLiveDiagnostic = diagnostic
        record(.liveUpdate(stationary: false, diagnostic: diagnostic))
        manager.yieldLive(LiveUpdate(location: nil, diagnostic: diagnostic))
    }

    /// Updates paused for a stationary device: live updates say so (iOS 17).
    func sendLiveStationary() {
        guard version.major >= 17 else { return }
        record(.liveUpdate(stationary: true, diagnostic: nil))
        manager.yieldLive(LiveUpdate(location: manager.location, isStationary: true))
    }

    // MARK: - CLMonitor

    /// `CLMonitor(name)` (iOS 17+): the app's monitor of that name, with the conditions it
    /// already has; events that waited for the app's launch come now.
    public func monitor(named name: String) -> ConditionMonitor {
        let monitor = ConditionMonitor(name: name, simulation: self)
        guard version.major >= 17 else {
            record(.diagnostic(message: "CLMonitor needs iOS 17 (this run models \(version))"))
            monitor.continuation.finish()
            return monitor
        }
        guard appCodeRuns else {
            monitor.continuation.finish()
            return monitor
        }
        conditionMonitors[name]?.continuation.finish()
        conditionMonitors[name] = monitor
        deliverPendingServiceEvents { if case .condition(name, _, _) = $0 { true } else { false } }
        return monitor
    }

    /// The names of the monitors whose conditions the system keeps.
    public var monitorNames: [String] { conditionNames }

    func addCondition(_ condition: CircularRegion, identifier: String, to name: String) {
        guard appCodeRuns else { return }
        var region = condition
        region.identifier = identifier
        region.notifyOnEntry = true
        region.notifyOnExit = true
        var machine =
            conditionRegions[name]
            ?? RegionMonitorStateMachine(hysteresis: scenario.system.regionHysteresis, reportsInitialState: true)
        let total = regionMonitor.regions.count + conditionRegions.values.reduce(0) { $0 + $1.regions.count }
        let replacing = machine.regions.contains { $0.region.identifier == identifier }
        if !replacing && total >= RegionMonitorStateMachine.limit {
            record(
                .monitor(name: name, identifier: identifier, action: .failed, decision: nil, reason: .limitReached))
            return
        }
        for action in machine.handle(.start(region)) {
            switch action {
            case .started:
                record(.monitor(name: name, identifier: identifier, action: .added, decision: nil, reason: nil))
            case .failed(_, let failure):
                record(
                    .monitor(
                        name: name, identifier: identifier, action: .failed, decision: nil, reason: failure.auditReason))
            default: break
            }
        }
        conditionRegions[name] = machine
        conditionNames = conditionRegions.keys.sorted()
        updateServicesWatch()
    }

    func removeCondition(_ identifier: String, from name: String) {
        guard appCodeRuns, var machine = conditionRegions[name] else { return }
        guard !machine.handle(.stop(identifier: identifier)).isEmpty else { return }
        record(.monitor(name: name, identifier: identifier, action: .removed, decision: nil, reason: nil))
        conditionRegions[name] = machine.regions.isEmpty ? nil : machine
        conditionNames = conditionRegions.keys.sorted()
        updateServicesWatch()
    }

    func conditionIdentifiers(of name: String) -> [String] {
        conditionRegions[name]?.regions.map(\.region.identifier) ?? []
    }

    /// Every monitor's conditions see the fix.
    func conditionsObserve(_ coordinate: Coordinate) {
        for name in conditionNames {
            guard var machine = conditionRegions[name] else { continue }
            let actions = machine.handle(.fix(coordinate, at: now))
            conditionRegions[name] = machine
            for case .crossed(let region, let state) in actions {
                locationServiceEvent(.condition(monitor: name, identifier: region.identifier, state: state))
            }
        }
    }

    /// Hands a condition's event to the app's monitor of that name, or holds it until the app
    /// creates it.
    func deliverCondition(_ name: String, _ identifier: String, _ state: RegionState) -> Bool {
        guard let monitor = conditionMonitors[name] else { return false }
        let monitoring: MonitoringState = state == .inside ? .satisfied : .unsatisfied
        record(
            .monitor(
                name: name, identifier: identifier, action: MonitorAction(monitoring), decision: .delivered, reason: .region
            ))
        monitor.continuation.yield(
            ConditionEvent(identifier: identifier, state: monitoring, date: epoch.addingTimeInterval(now.inSeconds)))
        return true
    }

    /// The sessions, streams and monitors of an app instance end with it.
    func sessionsAppTerminated() {
        activitySessions = 0
        scriptedActivitySessions = []
        serviceSessions = [:]
        scriptedServiceSessions = []
        for monitor in conditionMonitors.values { monitor.continuation.finish() }
        conditionMonitors = [:]
        manager.endLiveUpdates()
        lastLiveDiagnostic = nil
        updateLiveGate()
    }
}
