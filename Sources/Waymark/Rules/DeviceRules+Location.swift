/// Standard location updates (``LocationServiceStateMachine``): one machine per location
/// manager of the app, sharing the app's authorization.
extension DeviceRules {
    /// `startUpdatingLocation()`.
    mutating func startUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        var actions = cancelLocationRequest()
        guard manager == 1 else {
            guard var other = otherUpdates[manager] else { return actions }
            let c = context(settings: other.settings)
            let steps = other.machine.handle(.start(c))
            otherUpdates[manager] = other
            return actions + locationActions(steps, manager: manager)
        }
        let wasRunning = location.isUpdating && !location.isPaused
        actions += locationActions(location.handle(.start(context())))
        if !wasRunning && !authorization.locationServicesEnabled && appState.isForeground {
            // "Starting updates with them off brings up the system alert to turn them on."
            actions.append(.record(.prompt(prompt: .locationServices, phase: .shown, answer: nil)))
            actions += show(.locationServices)
        }
        return actions
    }

    /// `stopUpdatingLocation()`.
    mutating func stopUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        guard manager == 1 else {
            guard var other = otherUpdates[manager] else { return [] }
            let steps = other.machine.handle(.stop)
            otherUpdates[manager] = other
            return locationActions(steps, manager: manager)
        }
        return locationActions(location.handle(.stop))
    }

    /// A location manager the app created after its first: its own updates and properties.
    public mutating func addManager(_ number: Int) {
        guard number > 1, otherUpdates[number] == nil else { return }
        otherUpdates[number] = ManagerUpdates(
            machine: LocationServiceStateMachine(version: version, heldDelivery: scenario.app.heldDelivery),
            settings: LocationServiceStateMachine.Settings())
    }

    /// A manager's properties changed (the driver keeps them here, where the rules read them).
    public mutating func setSettings(_ settings: LocationServiceStateMachine.Settings, manager: Int) {
        if manager == 1 {
            self.settings = settings
        } else {
            otherUpdates[manager]?.settings = settings
        }
    }

    /// The properties of manager `number`.
    public func settings(ofManager number: Int) -> LocationServiceStateMachine.Settings {
        number == 1 ? settings : otherUpdates[number]?.settings ?? .init()
    }

    /// Whether manager `number` has updates started (paused counts).
    public func isUpdating(manager number: Int) -> Bool {
        number == 1 ? location.isUpdating : otherUpdates[number]?.machine.isUpdating ?? false
    }

    /// The other managers' updates end with the process.
    mutating func endOtherUpdates() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            actions += locationActions(other.machine.handle(.appTerminated), manager: number)
        }
        otherUpdates = [:]
        return actions
    }

    /// A location event whose context is read when it is handled.
    mutating func location(_ event: DeviceEvent.LocationEvent) -> [DeviceAction] {
        var actions: [DeviceAction]
        switch event {
        case .appEnteredForeground: actions = locationActions(location.handle(.appEnteredForeground(context())))
        case .appResumed: actions = locationActions(location.handle(.appResumed(context())))
        case .appTerminated: actions = locationActions(location.handle(.appTerminated))
        case .authorizationChanged: actions = locationActions(location.handle(.authorizationChanged(context())))
        case .alwaysAnswered(let granted):
            actions = locationActions(location.handle(.alwaysAnswered(granted: granted, context())))
        case .runEnded: actions = locationActions(location.handle(.runEnded))
        }
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            let c = context(settings: other.settings)
            let steps: [LocationServiceStateMachine.Action] =
                switch event {
                case .appEnteredForeground: other.machine.handle(.appEnteredForeground(c))
                case .appResumed: other.machine.handle(.appResumed(c))
                case .appTerminated: other.machine.handle(.appTerminated)
                case .authorizationChanged: other.machine.handle(.authorizationChanged(c))
                case .alwaysAnswered: []
                case .runEnded: other.machine.handle(.runEnded)
                }
            otherUpdates[number] = other
            actions += locationActions(steps, manager: number)
        }
        return actions
    }

    /// The location service's steps, as the device carries them out. The first manager's
    /// decisions are the audit log's `fix` events; another manager's are recorded only when it
    /// does something with the fix.
    mutating func locationActions(_ steps: [LocationServiceStateMachine.Action], manager: Int = 1) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        actions.reserveCapacity(steps.count)
        for step in steps { appendLocationAction(step, manager: manager, to: &actions) }
        return actions
    }

    /// One step of the location service (the per-fix path calls this with the driver's buffer).
    mutating func appendLocationAction(
        _ step: consuming LocationServiceStateMachine.Action, manager: Int = 1, to actions: inout [DeviceAction]
    ) {
        switch consume step {
        case .started: if manager == 1 { actions.append(.record(.updates(action: .started))) }
        case .stopped: if manager == 1 { actions.append(.record(.updates(action: .stopped))) }
        case .decided(let outcome):
            // Moved on as it is for the first manager (the machine's outcomes are its), not
            // bound as a variable to be changed, which copies it.
            guard manager == 1 else {
                var other = outcome
                other.manager = manager
                actions.append(.decided(other))
                return
            }
            if outcome.decision == .dropped, liveListeners, let d = LiveUpdate.Diagnostic(outcome.reason),
                d != .authorizationRequestInProgress || authorization.pendingPrompt != nil
            {
                actions += sendLiveDiagnostic(d)
            }
            actions.append(.decided(outcome))
        case .deliver(let count, let reason):
            if manager == 1 { liveUpdates.lastDiagnostic = nil }
            actions.append(.deliver(count: count, reason: reason, manager: manager))
        case .report(let error):
            actions.append(.record(.error(error)))
            actions.append(.call(.delegate(.didFailWithError(error), to: .manager(manager))))
        case .paused:
            actions.append(.record(.paused(reason: .stationary)))
            actions.append(.call(.delegate(.didPauseLocationUpdates, to: .manager(manager))))
            if liveListeners && manager == 1 { actions += sendLiveStationary() }
        case .resumed:
            actions.append(.record(.resumed(reason: .appRestarted)))
            actions.append(.call(.delegate(.didResumeLocationUpdates, to: .manager(manager))))
        case .needsAlways:
            actions.append(.post(.authorization(.neededAlways)))
        case .heldDiscarded(let count, let reason):
            actions.append(.record(.heldDiscarded(count: count, reason: reason)))
        }
    }

    /// One fix from the source for every manager's updates: the per-fix path. Appends to the
    /// driver's buffer.
    public mutating func receive(_ event: borrowing SourceEvent, into actions: inout [DeviceAction]) {
        var steps = fixSteps.take()
        location.receive(event, context(), into: &steps)
        // Each step is moved out (a step that holds nothing left in its place), so that its
        // outcome, and the location in it, is not copied on its way to the driver.
        for i in steps.indices {
            var step = LocationServiceStateMachine.Action.started
            swap(&step, &steps[i])
            appendLocationAction(step, to: &actions)
        }
        fixSteps.keep(&steps)
        guard !otherUpdates.isEmpty else { return }
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            var more: [LocationServiceStateMachine.Action] = []
            other.machine.receive(event, context(settings: other.settings), into: &more)
            otherUpdates[number] = other
            for step in more {
                // Another manager's ignored fixes are left out of the log: it has not started.
                if case .decided(let o) = step, o.decision == .ignored { continue }
                appendLocationAction(step, manager: number, to: &actions)
            }
        }
    }
}
