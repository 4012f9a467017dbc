/// `CLMonitor` (iOS 17+): each monitor's circular conditions, kept by the system across
/// launches under the monitor's name, and which monitors this process of the app created (an
/// event for one it has not created again waits, `awaitingMonitor`).
///
/// Each monitor's conditions are a ``RegionMonitorStateMachine`` that reports the first state
/// too ("The initial state is unknown", then satisfied or unsatisfied).
public struct ConditionMonitorStateMachine: Sendable, Hashable {
    /// The conditions, by monitor name.
    public internal(set) var monitors: [String: RegionMonitorStateMachine] = [:]
    /// The monitors' names, sorted: the order fixes visit them in.
    public internal(set) var names: [String] = []
    /// The monitors this process created.
    public internal(set) var created: Set<String> = []

    /// How many conditions all monitors hold.
    public var count: Int { monitors.values.reduce(0) { $0 + $1.regions.count } }

    mutating func store(_ machine: RegionMonitorStateMachine?, as name: String) {
        monitors[name] = machine
        names = monitors.keys.sorted()
    }
}
