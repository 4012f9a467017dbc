import UIKit

/// What the pushes told the app, and what it downloaded: its disk.
@MainActor public final class PushLog {
    public static let shared = PushLog()
    public private(set) var handled: [Bool] = []
    public private(set) var launchedByPush = 0
    /// The feeds downloaded, as text, in the order they arrived.
    public private(set) var feeds: [String] = []
    /// The downloads that failed, with their errors.
    public private(set) var failures: [String] = []
    /// How many times the app told the system it had handled its session's events.
    public private(set) var eventsHandled = 0
    func note(relaunched: Bool) { handled.append(relaunched) }
    func launched() { launchedByPush += 1 }
    func downloaded(_ feed: String) { feeds.append(feed) }
    func failed(_ error: any Error) { failures.append("\(error)") }
    func handledEvents() { eventsHandled += 1 }
    public func erase() {
        handled = []
        launchedByPush = 0
        feeds = []
        failures = []
        eventsHandled = 0
    }
}

/// Handles silent pushes (the `remote-notification` mode) with the `async` form of the delegate
/// method: a push wakes the suspended app or relaunches it in the background when the system had
/// ended it ("the system launches your app … if it is not running"), and starts a background
/// download of the feed it announces.
@MainActor public final class PushAppDelegate: UIResponder, UIApplicationDelegate {
    public var window: UIWindow?
    private var relaunched = false
    public let downloader = FeedDownloader()

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
        downloader.downloadFeed()
        return .newData
    }

    public func application(
        _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping () -> Void
    ) {
        guard identifier == FeedDownloader.sessionIdentifier else { return completionHandler() }
        downloader.eventsCompletion = completionHandler
        _ = downloader.session  // made again in a relaunched app: its events come to it
    }
}
