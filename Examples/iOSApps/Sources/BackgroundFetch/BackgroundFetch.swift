import UIKit

/// What the server has for the app, and what it synced: its disk.
@MainActor public final class Inbox {
    public static let shared = Inbox()
    /// What the server holds: new messages, none, or it cannot be reached.
    public enum Server: Sendable {
        case new(Int)
        case empty, down
    }
    public var server: Server = .empty
    public private(set) var messages = 0

    func fetch() -> UIBackgroundFetchResult {
        switch server {
        case .new(let count):
            messages += count
            server = .empty
            return .newData
        case .empty: return .noData
        case .down: return .failed
        }
    }

    public func erase() {
        server = .empty
        messages = 0
    }
}

/// Fetches new messages in the background (the `fetch` mode): "call the completion handler …
/// with the result: newData, noData or failed".
@MainActor public final class FetchAppDelegate: UIResponder, UIApplicationDelegate {
    public var window: UIWindow?

    public func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        application.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum)
        return true
    }

    public func application(
        _ application: UIApplication,
        performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        completionHandler(Inbox.shared.fetch())
    }
}
