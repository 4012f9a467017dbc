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
/// nowhere (``ServiceDelivery`` decides), and what waits for a launched app. A woken app runs
/// for a few seconds (``Scenario/SystemSettings/serviceWakeTime``).
///
/// A pure state machine: its state is the events waiting for the app (each said `held` once)
/// and the end of the current wake.
public struct ServiceEventStateMachine: Sendable, Hashable {
    public struct Waiting: Sendable, Hashable {
        public var event: PendingServiceEvent
        /// Whether the audit log has said it is held.
        public var said: Bool
    }

    /// Events waiting for a launched or woken app, oldest first.
    public internal(set) var waiting: [Waiting] = []
    /// Until when a location service's wake keeps the app running.
    public internal(set) var wakeUntil: Duration?
    /// Whether this process of the app started the significant-change service (after a
    /// relaunch it must start it again to receive the events).
    public internal(set) var significantChangesListening = false
}
