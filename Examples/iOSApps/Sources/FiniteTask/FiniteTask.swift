import UIKit

/// What the app saw of its background tasks: its disk.
@MainActor public final class TaskLog {
    public static let shared = TaskLog()
    public private(set) var events: [String] = []
    public func note(_ event: String) { events.append(event) }
    public func erase() { events = [] }
}

/// Finishes its work with a finite background task when it leaves the screen, and begins a new
/// one each time it becomes active (the pattern that keeps the time available at the next exit):
/// "Each call to this method must be balanced by a matching call to the endBackgroundTask(_:)
/// method … If you don't call endBackgroundTask(_:) for each task before time expires, the system
/// kills the app."
@MainActor public final class FiniteTaskAppDelegate: UIResponder, UIApplicationDelegate {
    public var window: UIWindow?
    private var task: UIBackgroundTaskIdentifier = .invalid
    private var observer: NSObjectProtocol?

    public func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        // The block form: #selector observers need the Objective-C runtime.
        observer = NotificationCenter.default.addObserver(
            forName: UIApplication.didBecomeActiveNotification, object: nil, queue: nil
        ) { [weak self] _ in
            MainActor.assumeIsolated { self?.reinstate() }
        }
        return true
    }

    /// Begins a task for the next stay in the background, unless one is running.
    private func reinstate() {
        guard task == .invalid else { return }
        task = UIApplication.shared.beginBackgroundTask(withName: "finish work") { [weak self] in
            // Called shortly before the time runs out: end the task, or the app is killed.
            TaskLog.shared.note("expiring")
            self?.endTask()
        }
        TaskLog.shared.note(task == .invalid ? "refused" : "began")
    }

    private func endTask() {
        guard task != .invalid else { return }
        UIApplication.shared.endBackgroundTask(task)
        task = .invalid
        TaskLog.shared.note("ended")
    }

    public func applicationDidEnterBackground(_ application: UIApplication) {
        TaskLog.shared.note("background, \(Int(application.backgroundTimeRemaining)) s left")
    }
}
