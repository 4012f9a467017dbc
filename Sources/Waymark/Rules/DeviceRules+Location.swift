/// Standard location updates (``LocationServiceStateMachine``): one machine per location
/// manager of the app (``DeviceRules/managers``), each in its own context, sharing the app's
/// authorization. No manager is a special case here: the first is the one at index 0.
extension DeviceRules {
    /// The index of manager `number` in ``managers``, or nil for a manager the rules do not know.
    func index(ofManager number: Int) -> Int? { number >= 1 && number <= managers.count ? number - 1 : nil }

    /// `startUpdatingLocation()`, on any of the app's managers.
    mutating func startUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns, let i = index(ofManager: manager) else { return [] }
        var actions = cancelLocationRequest(manager: manager)
        let wasRunning = isUpdating(manager: manager) && !isPaused(manager: manager)
        let c = context(ofManagerAt: i)
        actions += managers[i].machine.handle(.start(c))
        if !wasRunning && !authorization.locationServicesEnabled && appState.isForeground
            && alerts.onScreen == nil
        {
            // "If this property contains the value false and you start location updates anyway,
            // the Core Location framework prompts the user with a confirmation alert asking
            // whether location services should be reenabled" (locationServicesEnabled): whichever
            // manager starts them, and not while a system alert (it, or another) is up.
            actions.append(.record(.prompt(prompt: .locationServices, phase: .shown, answer: nil)))
            actions += show(.locationServices)
        }
        return actions
    }

    /// `stopUpdatingLocation()`.
    mutating func stopUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns, let i = index(ofManager: manager) else { return [] }
        return managers[i].machine.handle(.stop)
    }

    /// A location manager the app created: its own updates and properties (the first's place
    /// is always there).
    public mutating func addManager(_ number: Int) {
        while managers.count < number {
            managers.append(
                ManagerUpdates(number: managers.count + 1, version: version, heldDelivery: scenario.app.heldDelivery))
        }
    }

    /// A manager's properties changed (the driver keeps them here, where the rules read them).
    public mutating func setSettings(_ settings: LocationServiceStateMachine.Settings, manager: Int) {
        guard let i = index(ofManager: manager) else { return }
        managers[i].settings = settings
    }

    /// The properties of manager `number`.
    public func settings(ofManager number: Int) -> LocationServiceStateMachine.Settings {
        index(ofManager: number).map { managers[$0].settings } ?? .init()
    }

    /// Whether manager `number` has updates started (paused counts).
    public func isUpdating(manager number: Int) -> Bool {
        index(ofManager: number).map { managers[$0].machine.isUpdating } ?? false
    }

    /// Whether manager `number`'s updates are paused.
    func isPaused(manager number: Int) -> Bool {
        index(ofManager: number).map { managers[$0].machine.isPaused } ?? false
    }

    /// Every manager's updates and `requestLocation()` end with the process; the first's place
    /// stays, stopped, for the next process.
    mutating func endManagers() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for i in managers.indices {
            actions += managers[i].machine.handle(.appTerminated)
            actions += managers[i].request.handle(.appTerminated)
        }
        managers.removeSubrange(1...)
        return actions
    }

    /// A location event for every manager, each in its context as it is when the event reaches
    /// it.
    mutating func location(_ event: DeviceEvent.LocationEvent) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for i in managers.indices {
            let c = context(ofManagerAt: i)
            let machineEvent: LocationServiceStateMachine.Event =
                switch event {
                case .appEnteredForeground: .appEnteredForeground(c)
                case .appResumed: .appResumed(c)
                case .appTerminated: .appTerminated
                case .authorizationChanged: .authorizationChanged(c)
                case .alwaysAnswered(let granted): .alwaysAnswered(granted: granted, c)
                case .runEnded: .runEnded
                }
            actions += managers[i].machine.handle(machineEvent)
        }
        return actions
    }

    /// A suspended app resumed on its way to the foreground: every manager's held fixes wait
    /// for it to be active.
    mutating func resumedForForeground() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for i in managers.indices { actions += managers[i].machine.handle(.resumedForForeground) }
        return actions
    }

    /// The app became active: fixes held while it was suspended come now to each manager, if it
    /// resumed on its way to the foreground.
    mutating func appBecameActive() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for i in managers.indices {
            let c = context(ofManagerAt: i)
            actions += managers[i].machine.handle(.appBecameActive(c))
        }
        return actions
    }

    /// One fix from the source for every manager's updates: the per-fix path. Each machine
    /// appends its actions to the driver's buffer.
    ///
    /// The managers are taken out of the rules while their machines decide: changed in place
    /// inside the rules, the optimizer copied the rest of the rules (half a kilobyte) for each
    /// manager's context, and again after it. Each context is read from the rest of the rules, so
    /// it must not read a fact of the managers (``isInUse``, `backgroundSessions`): debug
    /// builds stop the program if it does.
    public mutating func receive(_ event: borrowing SourceEvent, into actions: inout [DeviceAction]) {
        var taken: [ManagerUpdates] = []
        swap(&taken, &managers)
        defer { swap(&taken, &managers) }
        #if DEBUG
            managersTakenOut = true
            defer { managersTakenOut = false }
        #endif
        for i in taken.indices {
            let c = context(ofManager: i + 1, settings: taken[i].settings)
            taken[i].machine.receive(event, c, into: &actions)
        }
    }
}
