/// The location services that wake or relaunch the app: the significant-change service,
/// regions, visits, `CLMonitor` conditions and `requestLocation()`. Where their events go is
/// decided here, in one place (``locationServiceEvent(_:)``).
extension DeviceRules {
    /// Whether any service looks at fixes (read once per fix on the hot path).
    public var servicesWatchFixes: Bool {
        significantChanges.isMonitoring || regionMonitor.isMonitoring || visits.isMonitoring
            || locationRequest.isWaiting || !conditions.monitors.isEmpty
    }

    /// The services see every fix of the device, whatever the app's state.
    public mutating func servicesObserve(_ event: SourceEvent) -> [DeviceAction] {
        guard case .fix(let location) = event.kind else { return [] }
        var actions: [DeviceAction] = []
        if locationRequest.isWaiting { actions += answerLocationRequest(location, event) }
        if significantChanges.observe(location.coordinate, at: now) {
            let fix = SignificantChangeStateMachine.Fix(location: location, index: event.index, segment: event.segment)
            actions.append(SignificantChangeStateMachine.report(fix))
        }
        if regionMonitor.isMonitoring { actions += regionMonitor.handle(.fix(location.coordinate, at: now)) }
        if visits.isMonitoring {
            actions += visits.handle(.fix(location.coordinate, date: location.timestamp, at: now))
        }
        if !conditions.monitors.isEmpty { actions += conditionsObserve(location.coordinate) }
        return actions
    }

    // MARK: - Who receives a service's event

    /// Decides a location service's event: to the running app, waking or launching it, or
    /// dropped. The one place that says who receives a significant change, a region's or a
    /// visit's event, or a condition's.
    mutating func locationServiceEvent(_ event: PendingServiceEvent) -> [DeviceAction] {
        var outcome = ServiceDelivery.locationEvent(serviceContext())
        if outcome == .wake || outcome == .launch, let off = power.backgroundRefreshOffReason {
            // "When background refresh is available for an application, it may launched or resumed
            // in the background to handle significant location changes" (UIApplication.h).
            outcome = .drop(off)
        }
        if outcome == .launch && lifecycle.swipedAway && !system.locationRelaunchAfterSwipe {
            outcome = .drop(.userTerminated)
        }
        if !version.restrictsWhenInUseToInUse && authorization.status == .authorizedWhenInUse {
            // Up to iOS 12 these services need Always ("Significant-change location service: Not
            // available" to When In Use, Choosing the Location Services Authorization to Request).
            if case .drop = outcome {} else { outcome = .drop(.needsAlways) }
        }
        if event.isRegionMonitoring && authorization.accuracy == .reducedAccuracy {
            // "If the value is reducedAccuracy, … your app can't use region monitoring"
            // (CLLocationManager.accuracyAuthorization): no entry or exit reaches the app, and
            // none wakes or launches it. The region stays registered, and its crossings reach the
            // app again once the user turns Precise Location back on.
            if case .drop = outcome {} else { outcome = .drop(.reducedAccuracy) }
        }
        switch outcome {
        case .drop(let reason):
            return record(event, decision: .dropped, reason: reason)
        case .deliver:
            // Only Always is woken: a running Always app gets the event's time too.
            var actions: [DeviceAction] = []
            if appState == .background && authorization.status == .authorizedAlways
                && !authorization.isProvisionalAlways
            {
                actions += openServiceWake()
            }
            return actions + [.post(.deliverServiceEvent(event))]
        case .wake:
            return [.post(.lifecycle(.wake(event.cause))), .post(.openServiceWake), .post(.deliverServiceEvent(event))]
        case .launch:
            serviceEvents.waiting.append(.init(event: event, said: false))
            return [
                .post(.lifecycle(.wake(event.cause))), .post(.openServiceWake),
                .post(.deliverPendingServiceEvents(nil)),
            ]
        }
    }

    /// A service's wake keeps the app running for a few seconds.
    mutating func openServiceWake() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        serviceEvents.wakeUntil = now + system.serviceWakeTime
        return [.schedule(.serviceWakeEnd, at: now + system.serviceWakeTime)]
    }

    /// Hands over what waited for the app's launch, of `kind` (nil: every kind): region and
    /// visit events go to the delegate the launch code set (after it ran); significant changes
    /// once the app has started the service again; a monitor's once the app created it again.
    /// What cannot be handed over yet stays, said `held` once.
    mutating func deliverPendingServiceEvents(only kind: PendingServiceEvent.Kind?) -> [DeviceAction] {
        guard appCodeRuns, !serviceEvents.waiting.isEmpty else { return [] }
        let waiting = serviceEvents.waiting
        serviceEvents.waiting = []
        var actions: [DeviceAction] = []
        for item in waiting {
            guard kind.map({ item.event.kind == $0 }) ?? true else {
                serviceEvents.waiting.append(item)
                continue
            }
            let why: AuditReason? =
                switch item.event {
                case .significantChange: serviceEvents.significantChangesListening ? nil : .awaitingRestart
                case .condition(let name, _, _): conditions.created.contains(name) ? nil : .awaitingMonitor
                case .region, .visit: nil
                }
            if let why {
                if !item.said { actions += record(item.event, decision: .held, reason: why) }
                serviceEvents.waiting.append(.init(event: item.event, said: true))
            } else {
                actions.append(.post(.deliverServiceEvent(item.event)))
            }
        }
        return actions
    }

    /// Hands one service event to the app's code.
    mutating func deliverServiceEvent(_ event: PendingServiceEvent) -> [DeviceAction] {
        guard appCodeRuns else { return record(event, decision: .dropped, reason: AuditReason(appState)) }
        switch event {
        case .significantChange(let fix):
            guard serviceEvents.significantChangesListening else {
                // Relaunched: the event waits for the app to start the service again.
                serviceEvents.waiting.append(.init(event: event, said: true))
                return record(event, decision: .held, reason: .awaitingRestart)
            }
            let delivered = serviceAccuracy(fix.location)
            return [
                .record(
                    .serviceLocation(
                        .init(
                            service: .significantLocationChange, action: .delivered,
                            reason: .significantLocationChange, index: fix.index, segment: fix.segment,
                            appState: appState, location: delivered, authorization: authorization.status,
                            accuracy: authorization.accuracy))),
                .call(
                    .serviceLocation(
                        LocationUpdate(
                            location: delivered, appState: appState, reason: .significantLocationChange,
                            index: fix.index, segment: fix.segment))),
            ]
        case .region(let region, let state):
            return [
                .record(
                    .region(
                        action: state == .inside ? .entered : .exited, identifier: region.identifier, state: state,
                        decision: .delivered, reason: .region)),
                .call(.delegate(state == .inside ? .didEnterRegion(region) : .didExitRegion(region), to: .all)),
                .call(.delegate(.didDetermineState(state, region), to: .all)),
            ]
        case .visit(let visit):
            var v = visit
            if authorization.accuracy == .reducedAccuracy {
                v.coordinate = AccuracyModel.coarsen(
                    v.coordinate, radius: AccuracyModel.Positioning.reduced.accuracyFloor)
                v.horizontalAccuracy = max(v.horizontalAccuracy, AccuracyModel.Positioning.reduced.accuracyFloor)
            }
            return [
                .record(
                    .visit(
                        action: v.isArrival ? .arrival : .departure, visit: v, decision: .delivered, reason: .visit)),
                .call(.delegate(.didVisit(v), to: .all)),
            ]
        case .condition(let name, let identifier, let state):
            guard conditions.created.contains(name) else {
                // Relaunched: the event waits for the app to create the monitor again.
                serviceEvents.waiting.append(.init(event: event, said: true))
                return record(event, decision: .held, reason: .awaitingMonitor)
            }
            let monitoring: MonitoringState = state == .inside ? .satisfied : .unsatisfied
            return [
                .record(
                    .monitor(
                        name: name, identifier: identifier, action: MonitorAction(monitoring), decision: .delivered,
                        reason: .region)),
                .call(.conditionEvent(monitor: name, identifier: identifier, state: monitoring)),
            ]
        }
    }

    /// A service's location: the significant-change service works from Wi-Fi and cell towers
    /// ("only when it detects changes to the device's associated cell towers"), so it has at
    /// best the Wi-Fi source's accuracy (*assumption*), and the reduced grid without full accuracy.
    private func serviceAccuracy(_ location: Location) -> Location {
        let source: AccuracyModel.Positioning = authorization.accuracy == .reducedAccuracy ? .reduced : .wifi
        return AccuracyModel.apply(source, to: location)
    }

    func record(_ event: PendingServiceEvent, decision: ServiceDecision, reason: AuditReason) -> [DeviceAction] {
        switch event {
        case .significantChange(let fix):
            return [
                .record(
                    .serviceLocation(
                        .init(
                            service: .significantLocationChange, action: ServiceLocationAction(decision),
                            reason: reason, index: fix.index, segment: fix.segment, appState: appState,
                            location: fix.location)))
            ]
        case .region(let region, let state):
            return [
                .record(
                    .region(
                        action: state == .inside ? .entered : .exited, identifier: region.identifier, state: state,
                        decision: decision, reason: reason))
            ]
        case .visit(let visit):
            return [
                .record(
                    .visit(
                        action: visit.isArrival ? .arrival : .departure, visit: visit, decision: decision,
                        reason: reason))
            ]
        case .condition(let name, let identifier, let state):
            let monitoring: MonitoringState = state == .inside ? .satisfied : .unsatisfied
            return [
                .record(
                    .monitor(
                        name: name, identifier: identifier, action: MonitorAction(monitoring), decision: decision,
                        reason: reason))
            ]
        }
    }

    // MARK: - The significant-change service

    mutating func startSignificantChanges() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        serviceEvents.significantChangesListening = true
        return significantChanges.handle(.start(at: now, cached: nil, app: appState))
            + deliverPendingServiceEvents(only: .significantChange)
    }

    mutating func stopSignificantChanges() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        serviceEvents.significantChangesListening = false
        let actions = significantChanges.handle(.stop(app: appState))
        serviceEvents.waiting.removeAll { $0.event.kind == .significantChange }
        return actions
    }

    // MARK: - Regions

    mutating func startMonitoring(_ region: CircularRegion) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        if authorization.status == .denied || authorization.status == .restricted {
            return [
                .record(
                    .region(action: .failed, identifier: region.identifier, state: nil, decision: nil, reason: .denied)),
                .call(
                    .delegate(
                        .monitoringDidFail(
                            region, LocationError(.regionMonitoringDenied, reason: authorization.status.rawValue)),
                        to: .all)),
            ]
        }
        // The 20 are the app's, regions and CLMonitor conditions together (*assumption* for the
        // conditions: Apple gives no number for CLMonitor).
        return regionMonitor.handle(.start(region, elsewhere: conditions.count))
    }

    mutating func stopMonitoring(_ identifier: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return regionMonitor.handle(.stop(identifier: identifier))
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
        let actions = visits.handle(.stop)
        serviceEvents.waiting.removeAll { $0.event.kind == .visit }
        return actions
    }

    // MARK: - requestLocation()

    mutating func requestLocation() -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return locationRequest.handle(
            .request(
                at: now, timeout: system.locationRequestTimeout,
                updatesRunning: location.isUpdating && !location.isPaused, app: appState))
    }

    /// Starting updates "cancels any pending request made using" `requestLocation()`.
    mutating func cancelLocationRequest() -> [DeviceAction] {
        locationRequest.handle(.cancel(app: appState))
    }

    /// The fix for a waiting `requestLocation()`, with what the app may receive now.
    private mutating func answerLocationRequest(_ fix: Location, _ event: SourceEvent) -> [DeviceAction] {
        let situation = LocationRequestStateMachine.Situation(
            appState: appState, appRuns: appCodeRuns, inUse: isInUse, authorization: authorization.status,
            isProvisionalAlways: authorization.isProvisionalAlways, accuracy: authorization.accuracy,
            locationServicesEnabled: authorization.locationServicesEnabled, desiredAccuracy: settings.desiredAccuracy)
        return locationRequest.handle(.fix(fix, index: event.index, segment: event.segment, situation))
    }

    mutating func locationRequestTimedOut() -> [DeviceAction] {
        locationRequest.handle(.timeout(app: appState, appRuns: appCodeRuns))
    }

    // MARK: - CLMonitor

    /// `CLMonitor(name)` (iOS 17+): the app's monitor of that name; events that waited for the
    /// app's launch come now.
    mutating func createMonitor(_ name: String) -> [DeviceAction] {
        guard version.major >= 17 else {
            return [.record(.diagnostic(message: "CLMonitor needs iOS 17 (this run models \(version))"))]
        }
        guard appCodeRuns else { return [] }
        conditions.created.insert(name)
        return deliverPendingServiceEvents(only: .condition(monitor: name))
    }

    mutating func addCondition(_ condition: CircularRegion, identifier: String, to name: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        var region = condition
        region.identifier = identifier
        region.notifyOnEntry = true
        region.notifyOnExit = true
        var machine =
            conditions.monitors[name]
            ?? RegionMonitorStateMachine(hysteresis: system.regionHysteresis, owner: .monitor(name: name))
        let elsewhere = regionMonitor.regions.count + conditions.count - machine.regions.count
        let actions = machine.handle(.start(region, elsewhere: elsewhere))
        // A monitor keeps conditions only: one whose first condition failed holds none.
        conditions.store(machine.regions.isEmpty ? nil : machine, as: name)
        return actions
    }

    mutating func removeCondition(_ identifier: String, from name: String) -> [DeviceAction] {
        guard appCodeRuns, var machine = conditions.monitors[name] else { return [] }
        let actions = machine.handle(.stop(identifier: identifier))
        guard !actions.isEmpty else { return [] }
        conditions.store(machine.regions.isEmpty ? nil : machine, as: name)
        return actions
    }

    /// Every monitor's conditions see the fix.
    mutating func conditionsObserve(_ coordinate: Coordinate) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for name in conditions.names {
            guard var machine = conditions.monitors[name] else { continue }
            actions += machine.handle(.fix(coordinate, at: now))
            conditions.monitors[name] = machine
        }
        return actions
    }
}
