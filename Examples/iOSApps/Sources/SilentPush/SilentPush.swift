import UIKit

/// What the pushes told the app: its disk.
@MainActor public final class PushLog {
    public static let shared = PushLog()
    public private(set) var handled: [Bool] = []
    public private(set) var launchedByPush = 0
    func note(relaunched: Bool) { handled.append(relaunched) }
    func launched() { launchedByPush += 1 }
    public func erase() {
        handled = []
        launchedByPush = 0
    }
}

/// Handles silent pushes (the `remote-notification` mode) with the `async` form of the delegate
/// method: a push wakes the suspended app or relaunches it in the background when the system had
/// ended it ("the system launches your app … if it is not running").
@MainActor public final class PushAppDelegate: UIResponder, UIApplicationDelegate {
    public var window: UIWindow?
    private var relaunched = false

    public func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        relaunched = launchOptions?[.remoteNotification] != nil
        if relaunched { PushLog.shared.launched() }
        application.registerForRemoteNotifications()
        return true
    }

    public func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult {
        PushLog.shared.note(relaunched: relaunched)
        return .newData
    }
}
