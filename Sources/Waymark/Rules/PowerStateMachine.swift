/// The device's power and settings that gate background work: Background App Refresh (the
/// device's switch and the app's), Low Power Mode, external power and the network. The one
/// place that says whether background refresh is available, and why not.
///
/// A pure state machine: the user's changes come as events; a change lets waiting
/// `BGTaskScheduler` requests run.
public struct PowerStateMachine: Sendable, Hashable {
    public enum Event: Sendable, Hashable {
        case backgroundAppRefresh(Bool)
        case appBackgroundAppRefresh(Bool)
        case lowPowerMode(Bool)
        case charging(Bool)
        case network(Bool)
    }

    /// The settings now: the one enum-free record of five switches.
    public private(set) var settings: PowerAndRefresh

    public init(_ settings: PowerAndRefresh) { self.settings = settings }

    /// Why background refresh is unavailable (Low Power Mode, either switch off); nil when it is
    /// available. Background fetch, background pushes, `BGTaskScheduler` and the location
    /// services' background launches all ask here.
    public var backgroundRefreshOffReason: AuditReason? { settings.backgroundRefreshOffReason }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .backgroundAppRefresh(let on): settings.backgroundAppRefresh = on
        case .appBackgroundAppRefresh(let on): settings.appBackgroundAppRefresh = on
        case .lowPowerMode(let on): settings.lowPowerMode = on
        case .charging(let on): settings.charging = on
        case .network(let on): settings.network = on
        }
        // What waited for a setting may run now.
        return [.post(.runDueTasks)]
    }
}
