/// `CLMonitor` (iOS 17+): each monitor's circular conditions, kept by the system across launches
/// under the monitor's name, and which monitors this process of the app created. A pure state
/// machine that answers in the device's actions (``DeviceAction``). The rules (W2, W12):
///
/// - `CLMonitor` needs iOS 17; before, the log says so and nothing is created.
/// - Each monitor's conditions are a ``RegionMonitorStateMachine`` that reports the first state
///   too ("The initial state is unknown", then satisfied or unsatisfied). A condition is a
///   circular region that notifies on entry and on exit, under the identifier the app gives it.
/// - The app's regions and its monitors' conditions count together toward the limit of 20
///   (*assumption* for the conditions: Apple gives no number for `CLMonitor`). A monitor keeps
///   conditions only: one whose first condition failed, or whose last was removed, holds none.
/// - The conditions outlive the process, and keep seeing the device's fixes; an event for a
///   monitor this process has not created again waits (`awaitingMonitor`) until it does.
public struct ConditionMonitorStateMachine: Sendable, Hashable {
    public enum Event: Sendable, Hashable {
        /// `CLMonitor(name)`, the app's code running or not: events that waited for it come now.
        case create(name: String, appRuns: Bool)
        /// `CLMonitor.add(_:identifier:)`, or `add(_:identifier:assuming:)` (`assuming`
        /// `inside` for satisfied, `outside` for unsatisfied); the app monitors `regionsElsewhere`
        /// regions of its own (`startMonitoring(for:)`); `at` is now. The app's code makes it, so
        /// it runs (``DeviceRules`` does not hand it on otherwise).
        case add(
            CircularRegion, identifier: String, monitor: String, regionsElsewhere: Int,
            assuming: RegionState = .unknown, at: Duration)
        /// `CLMonitor.remove(_:)`, from the app's running code.
        case remove(identifier: String, monitor: String)
        /// A fix of the device.
        case fix(Coordinate, at: Duration)
        /// The app's process ended: its monitor objects with it (the conditions stay).
        case appTerminated
        /// The app has handled `event` of the monitor `monitor` (it asked for the next one): the
        /// condition's record holds it from now on.
        case handled(ConditionEvent, monitor: String)
    }

    public let version: IOSVersion
    /// Metres past a condition's boundary before a crossing counts.
    public let hysteresis: Double
    /// The conditions the system keeps for the app.
    public enum State: Sendable, Hashable {
        case none
        /// The monitors that hold conditions, by name (never empty; no monitor in it is idle).
        case holding([String: RegionMonitorStateMachine])
    }

    public private(set) var state: State = .none
    /// The monitors' names, sorted: the order fixes visit them in.
    public private(set) var names: [String] = []
    /// The monitors this process created.
    public private(set) var created: Set<String> = []
    /// The last event the app handled, by monitor and condition: `CLMonitor.Record`'s
    /// `lastEvent` ("When your app handles a new event, the record contains the prior event …
    /// the record updates with the new event when the handling is complete").
    public private(set) var handled: [String: [String: ConditionEvent]] = [:]

    public init(version: IOSVersion, hysteresis: Double) {
        self.version = version
        self.hysteresis = hysteresis
    }

    /// The conditions, by monitor name.
    public var monitors: [String: RegionMonitorStateMachine] {
        if case .holding(let monitors) = state { monitors } else { [:] }
    }

    /// Whether any monitor holds a condition.
    public var isMonitoring: Bool { if case .holding = state { true } else { false } }

    /// How many conditions all monitors hold.
    public var count: Int { monitors.values.reduce(0) { $0 + $1.regions.count } }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .create(let name, let appRuns):
            guard version.major >= 17 else {
                return [.record(.diagnostic(message: "CLMonitor needs iOS 17 (this run models \(version))"))]
            }
            guard appRuns else { return [] }
            created.insert(name)
            return [.post(.deliverPendingServiceEvents(.condition(monitor: name)))]
        case .add(let condition, let identifier, let name, let regionsElsewhere, let assumed, let now):
            var region = condition
            region.identifier = identifier
            region.notifyOnEntry = true
            region.notifyOnExit = true
            var machine =
                monitors[name] ?? RegionMonitorStateMachine(hysteresis: hysteresis, owner: .monitor(name: name))
            let elsewhere = regionsElsewhere + count - machine.regions.count
            let actions = machine.handle(.start(region, elsewhere: elsewhere, assuming: assumed, at: now))
            // Added (not refused): a new condition under the identifier, so a new record.
            if actions.contains(where: {
                if case .record(.monitor(name, identifier, .added, _, _)) = $0 { true } else { false }
            }) {
                handled[name]?[identifier] = nil
            }
            store(machine, as: name)
            return actions
        case .remove(let identifier, let name):
            guard var machine = monitors[name] else { return [] }
            let actions = machine.handle(.stop(identifier: identifier))
            guard !actions.isEmpty else { return [] }
            handled[name]?[identifier] = nil
            store(machine, as: name)
            return actions
        case .fix(let coordinate, let now):
            guard case .holding(var monitors) = state else { return [] }
            // Taken out of the state, so that each monitor's regions change in place.
            state = .none
            defer { state = .holding(monitors) }
            var actions: [DeviceAction] = []
            for name in names {
                actions += monitors[name]?.handle(.fix(coordinate, at: now)) ?? []
            }
            return actions
        case .appTerminated:
            created = []
            return []
        case .handled(let event, let name):
            guard record(for: event.identifier, monitor: name) != nil else { return [] }
            handled[name, default: [:]][event.identifier] = event
            return []
        }
    }

    /// `CLMonitor.record(for:)`: the condition `identifier` of the monitor `name` (with the
    /// state it was added in, and when), and the last event of it the app handled; nil if the
    /// monitor holds no such condition. The system keeps both, so a monitor created again after
    /// a relaunch reads them too.
    public func record(
        for identifier: String, monitor name: String
    ) -> (condition: RegionMonitorStateMachine.Monitored, handled: ConditionEvent?)? {
        guard let m = monitors[name]?.regions.first(where: { $0.region.identifier == identifier }) else { return nil }
        return (m, handled[name]?[identifier])
    }

    /// Keeps `machine` as the monitor `name`'s conditions: a monitor that holds none is let go,
    /// with its records.
    private mutating func store(_ machine: RegionMonitorStateMachine, as name: String) {
        var monitors = monitors
        state = .none  // let go of the state's dictionary, so that it changes in place
        if machine.isMonitoring {
            monitors[name] = machine
        } else {
            monitors[name] = nil
            handled[name] = nil
        }
        state = monitors.isEmpty ? .none : .holding(monitors)
        names = monitors.keys.sorted()
    }
}
