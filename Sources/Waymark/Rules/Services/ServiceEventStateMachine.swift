/// An event of a location service, on its way to the app.
public enum PendingServiceEvent: Sendable, Hashable {
    case significantChange(SignificantChangeStateMachine.Fix)
    case region(CircularRegion, RegionState)
    case visit(Visit)
    /// A `CLMonitor` condition's new state.
    case condition(monitor: String, identifier: String, state: RegionState)

    /// The kinds, for handing over the waiting events of one.
    public enum Kind: Sendable, Hashable {
        case significantChange, region, visit
        case condition(monitor: String)
    }

    public var kind: Kind {
        switch self {
        case .significantChange: .significantChange
        case .region: .region
        case .visit: .visit
        case .condition(let monitor, _, _): .condition(monitor: monitor)
        }
    }

    /// A region's or a `CLMonitor` condition's event: region monitoring.
    var isRegionMonitoring: Bool {
        switch self {
        case .region, .condition: true
        case .significantChange, .visit: false
        }
    }

    var cause: WakeCause {
        switch self {
        case .significantChange: .significantLocationChange
        case .region, .condition: .region
        case .visit: .visit
        }
    }
}

/// Where the location services' events go: to the running app, waking it, relaunching it, or
/// nowhere, and what waits for a launched app. A pure state machine that answers in the device's
/// actions (``DeviceAction``); its state is the events waiting for the app (each said `held`
/// once), the end of the current wake, and whether this process listens to significant changes.
/// The rules (W1–W3, W5), first match wins for where an event goes:
///
/// 1. ``ServiceDelivery/locationEvent(_:)``: Location Services, the authorization, on screen or
///    in use, and only Always wakes or launches an app.
/// 2. Background App Refresh off (or Low Power Mode): no wake or launch ("When background refresh
///    is available for an application, it may launched or resumed in the background to handle
///    significant location changes", UIApplication.h).
/// 3. A launch after the user's swipe, where the scenario says the system does not relaunch:
///    dropped, `userTerminated`.
/// 4. Up to iOS 12, When In Use receives none of these services ("Significant-change location
///    service: Not available" to When In Use): dropped, `needsAlways`.
/// 5. "If the value is reducedAccuracy, … your app can't use region monitoring"
///    (CLLocationManager.accuracyAuthorization): a region's or a condition's event is dropped,
///    `reducedAccuracy`; the region stays registered.
///
/// A woken app runs for ``wakeTime``; a running Always app in the background gets that time too.
/// A launched app's events wait for its launch code: region and visit events go to the delegate
/// it set; significant changes once it started the service again; a monitor's once it created
/// the monitor again. A significant change carries at best the Wi-Fi source's accuracy
/// (*assumption*: the service works from cell towers and Wi-Fi), and a visit the reduced grid
/// without full accuracy.
public struct ServiceEventStateMachine: Sendable, Hashable {
    public struct Waiting: Sendable, Hashable {
        public var event: PendingServiceEvent
        /// Whether the audit log has said it is held.
        public var said: Bool
    }

    /// The app and the device when an event is handled.
    public struct Situation: Sendable, Hashable {
        public var now: Duration
        /// The app's code runs.
        public var appRuns: Bool
        /// What ``ServiceDelivery`` decides from.
        public var delivery: ServiceDelivery.Context
        public var accuracy: AccuracyAuthorization
        /// The `CLMonitor`s this process created, by name.
        public var monitors: Set<String>

        public init(
            now: Duration, appRuns: Bool, delivery: ServiceDelivery.Context, accuracy: AccuracyAuthorization,
            monitors: Set<String>
        ) {
            self.now = now
            self.appRuns = appRuns
            self.delivery = delivery
            self.accuracy = accuracy
            self.monitors = monitors
        }

        var appState: AppState { delivery.appState }
    }

    public enum Event: Sendable, Hashable {
        /// A service's event: where it goes.
        case route(PendingServiceEvent)
        /// A service woke the app: it runs for ``wakeTime``.
        case openWake
        /// The wake's time is over.
        case wakeEnded
        /// Hand over the events waiting for the app, of a kind (nil: every kind).
        case deliverWaiting(PendingServiceEvent.Kind?)
        /// One event goes to the app's code.
        case deliver(PendingServiceEvent)
        /// The app's manager numbered `manager` started (`true`) or stopped the
        /// significant-change service.
        case significantChanges(listening: Bool, manager: Int)
        /// The app stopped visit monitoring: its waiting visits go.
        case visitsStopped
        /// The app stopped monitoring the region `identifier`: its waiting events go.
        case regionStopped(identifier: String)
        /// The app removed the condition `identifier` from its monitor `monitor`: its waiting
        /// events go.
        case conditionRemoved(monitor: String, identifier: String)
        /// The app was suspended (nil) or its process ended.
        case appStopped(terminated: Bool)
    }

    public let version: IOSVersion
    /// How long a service's wake keeps the app running.
    public let wakeTime: Duration
    /// Whether a service relaunches an app the user swiped away.
    public let relaunchAfterSwipe: Bool
    /// Events waiting for a launched or woken app, oldest first.
    public private(set) var waiting: [Waiting] = []
    /// Whether a location service's wake keeps the app running.
    public enum State: Sendable, Hashable {
        case quiet
        /// A service woke the app (or gave a running Always app an event's time): it runs until
        /// `until`.
        case keepingAwake(until: Duration)
    }

    public private(set) var state: State = .quiet
    /// The managers of this process of the app that started the significant-change service,
    /// by number: each receives its events (after a relaunch the app must start it again to
    /// receive them).
    public private(set) var significantChangeListeners: Set<Int> = []
    /// Whether a manager of this process started the significant-change service.
    public var significantChangesListening: Bool { !significantChangeListeners.isEmpty }

    public init(version: IOSVersion, wakeTime: Duration, relaunchAfterSwipe: Bool) {
        self.version = version
        self.wakeTime = wakeTime
        self.relaunchAfterSwipe = relaunchAfterSwipe
    }

    /// Until when a location service's wake keeps the app running.
    public var wakeUntil: Duration? {
        if case .keepingAwake(let until) = state { until } else { nil }
    }

    public mutating func handle(_ event: Event, in s: Situation) -> [DeviceAction] {
        switch event {
        case .route(let e): return route(e, s)
        case .openWake:
            guard s.appRuns else { return [] }
            state = .keepingAwake(until: s.now + wakeTime)
            return [.schedule(.serviceWakeEnd, at: s.now + wakeTime)]
        case .wakeEnded:
            state = .quiet
            return []
        case .deliverWaiting(let kind): return deliverWaiting(only: kind, s)
        case .deliver(let e): return deliver(e, s)
        case .significantChanges(let listening, let manager):
            guard s.appRuns else { return [] }
            if listening {
                significantChangeListeners.insert(manager)
                return deliverWaiting(only: .significantChange, s)
            }
            significantChangeListeners.remove(manager)
            guard significantChangeListeners.isEmpty else { return [] }
            return dropWaiting(s) { $0.kind == .significantChange }
        case .visitsStopped:
            return dropWaiting(s) { $0.kind == .visit }
        case .regionStopped(let identifier):
            return dropWaiting(s) {
                if case .region(let region, _) = $0 { region.identifier == identifier } else { false }
            }
        case .conditionRemoved(let monitor, let identifier):
            return dropWaiting(s) {
                if case .condition(monitor, identifier, _) = $0 { true } else { false }
            }
        case .appStopped(let terminated):
            let why: AuditReason = terminated ? .terminated : .suspended
            var actions: [DeviceAction] = waiting.flatMap {
                Self.record($0.event, decision: .dropped, reason: why, app: s.appState)
            }
            waiting = []
            state = .quiet
            actions.append(.cancel(.serviceWakeEnd))
            if terminated { significantChangeListeners = [] }
            return actions
        }
    }

    /// The app stopped a service, a region or a condition: its events that wait for the app (a
    /// relaunched app that has not started it again, or one still launching) will never reach
    /// it, and say so.
    private mutating func dropWaiting(_ s: Situation, _ stopped: (PendingServiceEvent) -> Bool) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for item in waiting where stopped(item.event) {
            actions += Self.record(item.event, decision: .dropped, reason: .serviceStopped, app: s.appState)
        }
        waiting.removeAll { stopped($0.event) }
        return actions
    }

    /// Where an event goes: the one place that says who receives a significant change, a
    /// region's or a visit's event, or a condition's.
    private mutating func route(_ event: PendingServiceEvent, _ s: Situation) -> [DeviceAction] {
        let c = s.delivery
        var outcome = ServiceDelivery.locationEvent(c)
        if outcome == .wake || outcome == .launch, let off = c.power.backgroundRefreshOffReason {
            outcome = .drop(off)
        }
        if outcome == .launch && c.terminatedByUser && !relaunchAfterSwipe { outcome = .drop(.userTerminated) }
        if !version.restrictsWhenInUseToInUse && c.authorization == .authorizedWhenInUse {
            if case .drop = outcome {} else { outcome = .drop(.needsAlways) }
        }
        if event.isRegionMonitoring && s.accuracy == .reducedAccuracy {
            if case .drop = outcome {} else { outcome = .drop(.reducedAccuracy) }
        }
        switch outcome {
        case .drop(let reason):
            return Self.record(event, decision: .dropped, reason: reason, app: s.appState)
        case .deliver:
            // Only Always is woken: a running Always app gets the event's time too.
            var actions: [DeviceAction] = []
            if s.appState == .background && c.authorization == .authorizedAlways && !c.isProvisionalAlways {
                actions += handle(.openWake, in: s)
            }
            return actions + [.post(.deliverServiceEvent(event))]
        case .wake:
            return [.post(.lifecycle(.wake(event.cause))), .post(.openServiceWake), .post(.deliverServiceEvent(event))]
        case .launch:
            waiting.append(.init(event: event, said: false))
            return [
                .post(.lifecycle(.wake(event.cause))), .post(.openServiceWake),
                .post(.deliverPendingServiceEvents(nil)),
            ]
        }
    }

    /// Hands over what waited for the app's launch, of `kind` (nil: every kind). What cannot be
    /// handed over yet stays, said `held` once.
    private mutating func deliverWaiting(only kind: PendingServiceEvent.Kind?, _ s: Situation) -> [DeviceAction] {
        guard s.appRuns, !waiting.isEmpty else { return [] }
        let items = waiting
        waiting = []
        var actions: [DeviceAction] = []
        for item in items {
            guard kind.map({ item.event.kind == $0 }) ?? true else {
                waiting.append(item)
                continue
            }
            if let why = awaiting(item.event, s) {
                if !item.said { actions += Self.record(item.event, decision: .held, reason: why, app: s.appState) }
                waiting.append(.init(event: item.event, said: true))
            } else {
                actions.append(.post(.deliverServiceEvent(item.event)))
            }
        }
        return actions
    }

    /// What a relaunched app must do again before `event` reaches it, if anything.
    private func awaiting(_ event: PendingServiceEvent, _ s: Situation) -> AuditReason? {
        switch event {
        case .significantChange: significantChangesListening ? nil : .awaitingRestart
        case .condition(let name, _, _): s.monitors.contains(name) ? nil : .awaitingMonitor
        case .region, .visit: nil
        }
    }

    /// Hands one event to the app's code.
    private mutating func deliver(_ event: PendingServiceEvent, _ s: Situation) -> [DeviceAction] {
        let app = s.appState
        guard s.appRuns else { return Self.record(event, decision: .dropped, reason: AuditReason(app), app: app) }
        if let why = awaiting(event, s) {
            // Relaunched: the event waits for the app to start the service or create the monitor.
            waiting.append(.init(event: event, said: true))
            return Self.record(event, decision: .held, reason: why, app: app)
        }
        switch event {
        case .significantChange(let fix):
            let source: AccuracyModel.Positioning = s.accuracy == .reducedAccuracy ? .reduced : .wifi
            let delivered = AccuracyModel.apply(source, to: fix.location)
            // Each manager that started the service hears the event.
            let update = LocationUpdate(
                location: delivered, appState: app, reason: .significantLocationChange, index: fix.index,
                segment: fix.segment)
            return [
                .record(
                    .serviceLocation(
                        .init(
                            service: .significantLocationChange, action: .delivered,
                            reason: .significantLocationChange, index: fix.index, segment: fix.segment,
                            appState: app, location: delivered, authorization: s.delivery.authorization,
                            accuracy: s.accuracy)))
            ] + significantChangeListeners.sorted().map { .call(.serviceLocation(update, manager: $0)) }
        case .region(let region, let state):
            return Self.record(event, decision: .delivered, reason: .region, app: app) + [
                .call(.delegate(state == .inside ? .didEnterRegion(region) : .didExitRegion(region), to: .all)),
                .call(.delegate(.didDetermineState(state, region), to: .all)),
            ]
        case .visit(let visit):
            var v = visit
            if s.accuracy == .reducedAccuracy {
                let floor = AccuracyModel.Positioning.reduced.accuracyFloor
                v.coordinate = AccuracyModel.coarsen(v.coordinate, radius: floor)
                v.horizontalAccuracy = max(v.horizontalAccuracy, floor)
            }
            return Self.record(.visit(v), decision: .delivered, reason: .visit, app: app) + [
                .call(.delegate(.didVisit(v), to: .all))
            ]
        case .condition(let name, let identifier, let state):
            let monitoring = MonitoringState(state)
            return Self.record(event, decision: .delivered, reason: .region, app: app) + [
                .call(.conditionEvent(monitor: name, identifier: identifier, state: monitoring))
            ]
        }
    }

    /// An event's audit record, with what became of it (a significant change delivered carries
    /// more: its delivered location and the authorization).
    static func record(_ event: PendingServiceEvent, decision: ServiceDecision, reason: AuditReason, app: AppState)
        -> [DeviceAction]
    {
        switch event {
        case .significantChange(let fix):
            return [
                .record(
                    .serviceLocation(
                        .init(
                            service: .significantLocationChange, action: ServiceLocationAction(decision),
                            reason: reason, index: fix.index, segment: fix.segment, appState: app,
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
            let monitoring = MonitoringState(state)
            return [
                .record(
                    .monitor(
                        name: name, identifier: identifier, action: MonitorAction(monitoring), decision: decision,
                        reason: reason))
            ]
        }
    }
}
