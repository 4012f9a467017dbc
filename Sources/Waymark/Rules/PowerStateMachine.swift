/// The device's power and settings that gate background work: Background App Refresh (the
/// device's switch and the app's), Low Power Mode, external power and the network. The one
/// place that says whether background refresh is available, and why not.
///
/// A pure state machine: the user's changes come as events; a change lets waiting
/// `BGTaskScheduler` requests run.
public struct PowerStateMachine: Sendable, Hashable {
    /// Whether background refresh is available, with the switches it follows from.
    public enum State: Sendable, Hashable {
        /// Both Background App Refresh switches on, Low Power Mode off.
        case refreshAvailable(PowerAndRefresh)
        /// Background refresh is off: Low Power Mode, or a switch off (`because`).
        case refreshOff(PowerAndRefresh, because: AuditReason)

        init(_ settings: PowerAndRefresh) {
            if let off = settings.backgroundRefreshOffReason {
                self = .refreshOff(settings, because: off)
            } else {
                self = .refreshAvailable(settings)
            }
        }
    }

    public enum Event: Sendable, Hashable {
        case backgroundAppRefresh(Bool)
        case appBackgroundAppRefresh(Bool)
        case lowPowerMode(Bool)
        case charging(Bool)
        case network(Bool)
    }

    public private(set) var state: State

    public init(_ settings: PowerAndRefresh) { state = State(settings) }

    /// The five switches now.
    public var settings: PowerAndRefresh {
        switch state {
        case .refreshAvailable(let settings), .refreshOff(let settings, _): settings
        }
    }

    /// Why background refresh is unavailable (Low Power Mode, either switch off); nil when it is
    /// available. Background fetch, background pushes, `BGTaskScheduler` and the location
    /// services' background launches all ask here.
    public var backgroundRefreshOffReason: AuditReason? {
        if case .refreshOff(_, let why) = state { why } else { nil }
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        var settings = settings
        switch event {
        case .backgroundAppRefresh(let on): settings.backgroundAppRefresh = on
        case .appBackgroundAppRefresh(let on): settings.appBackgroundAppRefresh = on
        case .lowPowerMode(let on): settings.lowPowerMode = on
        case .charging(let on): settings.charging = on
        case .network(let on): settings.network = on
        }
        state = State(settings)
        // What waited for a setting may run now.
        return [.post(.runDueTasks)]
    }
}
