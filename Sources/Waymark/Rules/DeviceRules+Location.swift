/// Standard location updates (``LocationServiceStateMachine``): one machine per location
/// manager of the app, sharing the app's authorization.
extension DeviceRules {
    /// `startUpdatingLocation()`, on any of the app's managers.
    mutating func startUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        var actions = cancelLocationRequest(manager: manager)
        let wasRunning = isUpdating(manager: manager) && !isPaused(manager: manager)
        if manager == 1 {
            actions += location.handle(.start(context()))
        } else {
            guard var other = otherUpdates[manager] else { return actions }
            let started = other.machine.handle(.start(context(settings: other.settings, manager: manager)))
            otherUpdates[manager] = other
            actions += started
        }
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
        guard appCodeRuns else { return [] }
        guard manager == 1 else {
            guard var other = otherUpdates[manager] else { return [] }
            let stopped = other.machine.handle(.stop)
            otherUpdates[manager] = other
            return stopped
        }
        return location.handle(.stop)
    }

    /// A location manager the app created after its first: its own updates and properties.
    public mutating func addManager(_ number: Int) {
        guard number > 1, otherUpdates[number] == nil else { return }
        otherUpdates[number] = ManagerUpdates(
            machine: LocationServiceStateMachine(
                version: version, heldDelivery: scenario.app.heldDelivery, manager: number),
            settings: LocationServiceStateMachine.Settings(),
            request: LocationRequestStateMachine(version: version, manager: number))
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

    /// Whether manager `number`'s updates are paused.
    func isPaused(manager number: Int) -> Bool {
        number == 1 ? location.isPaused : otherUpdates[number]?.machine.isPaused ?? false
    }

    /// The other managers' updates end with the process.
    mutating func endOtherUpdates() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            actions += other.machine.handle(.appTerminated)
            actions += other.request.handle(.appTerminated)
        }
        otherUpdates = [:]
        return actions
    }

    /// A location event whose context is read when it is handled.
    mutating func location(_ event: DeviceEvent.LocationEvent) -> [DeviceAction] {
        var actions: [DeviceAction]
        switch event {
        case .appEnteredForeground: actions = location.handle(.appEnteredForeground(context()))
        case .appResumed: actions = location.handle(.appResumed(context()))
        case .appTerminated: actions = location.handle(.appTerminated)
        case .authorizationChanged: actions = location.handle(.authorizationChanged(context()))
        case .alwaysAnswered(let granted): actions = location.handle(.alwaysAnswered(granted: granted, context()))
        case .runEnded: actions = location.handle(.runEnded)
        }
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            let c = context(settings: other.settings, manager: number)
            let more: [DeviceAction] =
                switch event {
                case .appEnteredForeground: other.machine.handle(.appEnteredForeground(c))
                case .appResumed: other.machine.handle(.appResumed(c))
                case .appTerminated: other.machine.handle(.appTerminated)
                case .authorizationChanged: other.machine.handle(.authorizationChanged(c))
                case .alwaysAnswered(let granted): other.machine.handle(.alwaysAnswered(granted: granted, c))
                case .runEnded: other.machine.handle(.runEnded)
                }
            otherUpdates[number] = other
            actions += more
        }
        return actions
    }

    /// One fix from the source for every manager's updates: the per-fix path. Each machine
    /// appends its actions to the driver's buffer.
    public mutating func receive(_ event: borrowing SourceEvent, into actions: inout [DeviceAction]) {
        location.receive(event, context(), into: &actions)
        guard !otherUpdates.isEmpty else { return }
        for number in otherUpdates.keys.sorted() {
            guard var other = otherUpdates[number] else { continue }
            other.machine.receive(event, context(settings: other.settings, manager: number), into: &actions)
            otherUpdates[number] = other
        }
    }
}
