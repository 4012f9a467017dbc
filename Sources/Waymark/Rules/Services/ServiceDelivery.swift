/// Where an event of a wake-up service goes: to the running app, waking it, relaunching it, or
/// nowhere (with a reason). A pure function of the app and the device, like ``DeliveryPolicy``.
public enum ServiceDelivery {
    public enum Outcome: Sendable, Hashable {
        /// The app runs: the event goes to it now.
        case deliver
        /// Wake the suspended app into the background, then deliver.
        case wake
        /// Launch the terminated app into the background, then deliver.
        case launch
        /// Not delivered: why, as a word for the audit log.
        case drop(AuditReason)
    }

    /// The app and the device when the event comes.
    public struct Context: Sendable, Hashable {
        public var appState: AppState
        /// On screen, in the grace period, or showing the location indicator.
        public var appInUse: Bool
        /// The user swiped the app away, and has not launched it since.
        public var terminatedByUser: Bool
        public var authorization: AuthorizationStatus
        public var isProvisionalAlways: Bool
        public var locationServicesEnabled: Bool
        public var backgroundModes: BackgroundModes
        public var power: PowerAndRefresh

        public init(
            appState: AppState, appInUse: Bool, terminatedByUser: Bool, authorization: AuthorizationStatus,
            isProvisionalAlways: Bool, locationServicesEnabled: Bool, backgroundModes: BackgroundModes,
            power: PowerAndRefresh
        ) {
            self.appState = appState
            self.appInUse = appInUse
            self.terminatedByUser = terminatedByUser
            self.authorization = authorization
            self.isProvisionalAlways = isProvisionalAlways
            self.locationServicesEnabled = locationServicesEnabled
            self.backgroundModes = backgroundModes
            self.power = power
        }

        var isRunning: Bool { appState != .notRunning && appState != .suspended }
    }

    /// An event of the significant-change, region or visits service. The rules, first match wins:
    ///
    /// 1. Location Services off: dropped, `locationServicesDisabled`.
    /// 2. Not authorized: dropped with the status (`denied`, `restricted`, `notDetermined`).
    /// 3. On screen: delivered.
    /// 4. When In Use (or Always still provisional): delivered while in use (the grace period,
    ///    the indicator), else dropped, `notInUse`: "When In Use: … receive events while the app
    ///    is in use"; only Always wakes or launches an app.
    /// 5. Always, in the background and running: delivered.
    /// 6. Always, suspended: woken. Not running: launched, even after the user swiped the app
    ///    away ("Always: … If your app isn't running, the system launches your app and delivers
    ///    the event").
    public static func locationEvent(_ c: Context) -> Outcome {
        if !c.locationServicesEnabled { return .drop(.locationServicesDisabled) }
        guard c.authorization.isAuthorized else { return .drop(AuditReason(c.authorization)) }
        if c.appState.isForeground { return .deliver }
        if c.authorization == .authorizedWhenInUse || c.isProvisionalAlways {
            return c.appInUse && c.isRunning ? .deliver : .drop(.notInUse)
        }
        switch c.appState {
        case .suspended: return .wake
        case .notRunning: return .launch
        default: return .deliver
        }
    }

    /// A background (`content-available`) push. The rules, first match wins:
    ///
    /// 1. On screen: delivered ("the system calls … whether your app is in the foreground or
    ///    background").
    /// 2. Without the `remote-notification` mode: dropped, `noRemoteNotificationMode`.
    /// 3. Background App Refresh off, or Low Power Mode: dropped with that reason.
    /// 4. Swiped away by the user: dropped, `userTerminated` ("the system does not automatically
    ///    launch your app if the user has force-quit it").
    /// 5. Running in the background: delivered; suspended: woken; terminated by the system:
    ///    launched. (Throttling is the owner's, ``PushThrottle``.)
    public static func push(_ c: Context) -> Outcome {
        if c.appState.isForeground { return .deliver }
        guard c.backgroundModes.contains(.remoteNotification) else { return .drop(.noRemoteNotificationMode) }
        if let off = c.power.backgroundRefreshOffReason { return .drop(off) }
        switch c.appState {
        case .suspended: return .wake
        case .notRunning: return c.terminatedByUser ? .drop(.userTerminated) : .launch
        default: return .deliver
        }
    }
}
