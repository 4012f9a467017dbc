import Foundation
import Waymark

/// `UIResponder`: app delegates subclass it, as on iOS.
@MainActor open class UIResponder: NSObject {
    /// Required, so that the device can make an app delegate from its type at every launch, as
    /// `UIApplicationMain` does.
    public required override init() { super.init() }
}

/// `UIWindow`: there to let an app delegate's `var window: UIWindow?` compile; the simulated
/// device shows nothing.
@MainActor open class UIWindow: UIResponder {}

/// `UIBackgroundTaskIdentifier`.
public struct UIBackgroundTaskIdentifier: Hashable, Equatable, RawRepresentable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Running in the background is not possible.
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// `UIBackgroundRefreshStatus`.
public enum UIBackgroundRefreshStatus: Int, @unchecked Sendable {
    case restricted = 0
    case denied = 1
    case available = 2
}

/// `UIBackgroundFetchResult`.
public enum UIBackgroundFetchResult: UInt, @unchecked Sendable {
    case newData = 0
    case noData = 1
    case failed = 2

    var result: FetchResult {
        switch self {
        case .newData: .newData
        case .noData: .noData
        case .failed: .failed
        }
    }
}

/// `UIApplication`: the app's view of the simulated device's lifecycle and background
/// execution. `UIApplication.shared` is the running app's.
@MainActor open class UIApplication: UIResponder {
    /// The device this application object belongs to. `nonisolated(unsafe)`: set once, when the
    /// app launches, and used on the device's isolation (the main actor).
    nonisolated(unsafe) weak var device: Simulation?
    /// The app's delegate (`unowned(unsafe)` on iOS; the device keeps the delegate alive).
    public weak var delegate: (any UIApplicationDelegate)?
    /// Whether the app asked to register for remote notifications.
    public private(set) var isRegisteredForRemoteNotifications = false

    init(device: Simulation?) {
        self.device = device
        super.init()
    }

    public required init() {
        device = Simulation.current
        super.init()
    }

    /// The running app's application object.
    public class var shared: UIApplication {
        let device = Simulation.current
        if let host = device?.process?.app as? UIKitAppHost { return host.application }
        return UIApplication(device: device)
    }

    /// `UIApplication.State`.
    public enum State: Int, @unchecked Sendable {
        case active = 0
        case inactive = 1
        case background = 2
    }

    /// The app's state as its running code sees it (a suspended app's code does not run).
    public var applicationState: State {
        switch device?.appState ?? .active {
        case .active: .active
        case .inactive: .inactive
        case .background, .suspended, .notRunning: .background
        }
    }

    /// Seconds left to the app's background tasks; `Double.greatestFiniteMagnitude` in the
    /// foreground ("remains suitably large").
    nonisolated public var backgroundTimeRemaining: TimeInterval {
        MainActor.assumeIsolated { device?.backgroundTimeRemainingSeconds ?? .greatestFiniteMagnitude }
    }

    /// `beginBackgroundTask(expirationHandler:)`: ``UIBackgroundTaskIdentifier/invalid`` when
    /// running in the background is not possible.
    nonisolated public func beginBackgroundTask(expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil)
        -> UIBackgroundTaskIdentifier
    {
        beginBackgroundTask(withName: nil, expirationHandler: handler)
    }

    /// `beginBackgroundTask(withName:expirationHandler:)`: the name is the app's word for the
    /// task in the audit log.
    nonisolated public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier {
        MainActor.assumeIsolated {
            guard let device else { return .invalid }
            let task = device.beginBackgroundTask(
                reason: taskName ?? "app", expirationHandler: handler.map { h in { MainActor.assumeIsolated { h() } } })
            return UIBackgroundTaskIdentifier(rawValue: task.rawValue)
        }
    }

    /// `endBackgroundTask(_:)`.
    nonisolated public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {
        MainActor.assumeIsolated {
            device?.endBackgroundTask(BackgroundTaskIdentifier(rawValue: identifier.rawValue))
        }
    }

    /// `UIApplication.backgroundFetchIntervalMinimum`.
    public static let backgroundFetchIntervalMinimum: TimeInterval = 0
    /// `UIApplication.backgroundFetchIntervalNever`.
    public static let backgroundFetchIntervalNever: TimeInterval = .greatestFiniteMagnitude
    /// `UIApplication.openSettingsURLString`.
    public static let openSettingsURLString = "app-settings:"

    @available(
        iOS, introduced: 7.0, deprecated: 13.0,
        message: "Use a BGAppRefreshTask in the BackgroundTasks framework instead"
    )
    public func setMinimumBackgroundFetchInterval(_ minimumBackgroundFetchInterval: TimeInterval) {
        let interval: Scenario.FetchInterval =
            if minimumBackgroundFetchInterval >= Self.backgroundFetchIntervalNever {
                .never
            } else if minimumBackgroundFetchInterval <= Self.backgroundFetchIntervalMinimum {
                .minimum
            } else {
                .every(.milliseconds(Int64(minimumBackgroundFetchInterval * 1000)))
            }
        device?.setMinimumBackgroundFetchInterval(interval)
    }

    /// Background App Refresh for the app: available when both switches are on and Low Power
    /// Mode is off.
    public var backgroundRefreshStatus: UIBackgroundRefreshStatus {
        (device?.power.backgroundRefreshAvailable ?? true) ? .available : .denied
    }

    /// Registers for remote notifications: the delegate hears a device token (a fixed one: the
    /// simulated device has no push service of its own; pushes come from the scenario).
    public func registerForRemoteNotifications() {
        isRegisteredForRemoteNotifications = true
        let token = Data("waymark-simulated-device".utf8)
        Task { @MainActor [weak self] in
            guard let self else { return }
            self.delegate?.application(self, didRegisterForRemoteNotificationsWithDeviceToken: token)
        }
    }

    public func unregisterForRemoteNotifications() { isRegisteredForRemoteNotifications = false }

    // MARK: - Notifications

    nonisolated public static let didBecomeActiveNotification = Notification.Name(
        "UIApplicationDidBecomeActiveNotification")
    nonisolated public static let willResignActiveNotification = Notification.Name(
        "UIApplicationWillResignActiveNotification")
    nonisolated public static let didEnterBackgroundNotification = Notification.Name(
        "UIApplicationDidEnterBackgroundNotification")
    nonisolated public static let willEnterForegroundNotification = Notification.Name(
        "UIApplicationWillEnterForegroundNotification")
    nonisolated public static let willTerminateNotification = Notification.Name(
        "UIApplicationWillTerminateNotification")
    nonisolated public static let didFinishLaunchingNotification = Notification.Name(
        "UIApplicationDidFinishLaunchingNotification")
    nonisolated public static let backgroundRefreshStatusDidChangeNotification = Notification.Name(
        "UIApplicationBackgroundRefreshStatusDidChangeNotification")

    /// `UIApplication.LaunchOptionsKey`.
    public struct LaunchOptionsKey: Hashable, Equatable, RawRepresentable, @unchecked Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let url = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsURLKey")
        public static let sourceApplication = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsSourceApplicationKey")
        public static let remoteNotification = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsRemoteNotificationKey")
        /// The app was launched in response to a Core Location event.
        public static let location = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsLocationKey")
        public static let bluetoothCentrals = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsBluetoothCentralsKey")
        public static let bluetoothPeripherals = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsBluetoothPeripheralsKey")
        public static let shortcutItem = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsShortcutItemKey")
        public static let userActivityDictionary = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsUserActivityDictionaryKey")
        public static let userActivityType = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsUserActivityTypeKey")
    }
}
