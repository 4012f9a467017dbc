import Foundation
import Waymark

/// Runs an app given by its `UIApplicationDelegate` on the simulated device: one process, one
/// `UIApplication` and one delegate, created anew at every launch, as on iOS. The device's
/// lifecycle calls become the delegate's methods and the `UIApplication` notifications.
@MainActor public final class UIKitAppHost: SimulatedApp {
    /// The process's `UIApplication.shared`.
    public let application: UIApplication
    /// `URLSession.shared` in this process.
    nonisolated let sharedSession = URLSession(configuration: .default)
    /// Its background URL sessions, by identifier.
    private var backgroundSessions: [String: WeakSession] = [:]
    /// The sessions whose events the app was woken or launched to handle, until it hears they
    /// are all delivered.
    private var eventsRequested: Set<String> = []

    private struct WeakSession {
        weak var session: URLSession?
    }
    /// The app's delegate for this process.
    public let delegate: any UIApplicationDelegate

    /// A new process of the app whose delegate `makeDelegate` creates.
    public init(device: Simulation?, delegate makeDelegate: () -> any UIApplicationDelegate) {
        application = UIApplication(device: device)
        delegate = makeDelegate()
        application.delegate = delegate
    }

    /// A factory for ``Waymark/Simulation/init(scenario:epoch:makeApp:)``: each launch makes a
    /// new delegate of type `Delegate` (its `init()`), as `UIApplicationMain` does.
    public static func factory<Delegate: UIResponder & UIApplicationDelegate>(_ type: Delegate.Type)
        -> () -> any SimulatedApp
    {
        factory { Delegate() }
    }

    /// A factory whose every launch makes a new delegate with `make` (an app delegate that is
    /// not a `UIResponder`).
    public static func factory(_ make: @escaping @MainActor () -> any UIApplicationDelegate)
        -> () -> any SimulatedApp
    {
        { MainActor.assumeIsolated { UIKitAppHost(device: Simulation.current, delegate: make) } }
    }

    private func post(_ name: Notification.Name) {
        NotificationCenter.default.post(name: name, object: application)
    }

    /// The launch options of this process: what launched it.
    static func launchOptions(_ cause: LifecycleCause?) -> [UIApplication.LaunchOptionsKey: Any]? {
        switch cause {
        case .significantLocationChange, .region, .visit: [.location: true]
        case .remoteNotification: [.remoteNotification: ["aps": ["content-available": 1]]]
        default: nil
        }
    }

    // The device calls these on its isolation, which for an app with a UIKit delegate is the main
    // actor (where UIKit runs the app): each asserts it and runs the delegate there.

    public nonisolated func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
        nonisolated(unsafe) let system = system
        MainActor.assumeIsolated {
            application.device = system
            let options = Self.launchOptions(system.launchCause)
            _ = delegate.application(application, willFinishLaunchingWithOptions: options)
            _ = delegate.application(application, didFinishLaunchingWithOptions: options)
            post(UIApplication.didFinishLaunchingNotification)
        }
    }

    public nonisolated func didBecomeActive(_ system: Simulation) {
        nonisolated(unsafe) let system = system
        MainActor.assumeIsolated {
            // Downloads of a session that sends no launch events wait for the app to run.
            if !system.sessionsWithFinishedDownloads.isEmpty {
                system.schedule(after: .zero) { [weak self] in self?.deliverBackgroundEvents() }
            }
            delegate.applicationDidBecomeActive(application)
            post(UIApplication.didBecomeActiveNotification)
        }
    }

    public nonisolated func willResignActive(_ system: Simulation) {
        MainActor.assumeIsolated {
            delegate.applicationWillResignActive(application)
            post(UIApplication.willResignActiveNotification)
        }
    }

    public nonisolated func willEnterForeground(_ system: Simulation) {
        MainActor.assumeIsolated {
            delegate.applicationWillEnterForeground(application)
            post(UIApplication.willEnterForegroundNotification)
        }
    }

    public nonisolated func didEnterBackground(_ system: Simulation) {
        MainActor.assumeIsolated {
            delegate.applicationDidEnterBackground(application)
            post(UIApplication.didEnterBackgroundNotification)
        }
    }

    public nonisolated func willTerminate(_ system: Simulation) {
        MainActor.assumeIsolated {
            delegate.applicationWillTerminate(application)
            post(UIApplication.willTerminateNotification)
        }
    }

    public nonisolated func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
        nonisolated(unsafe) let completion = completion
        MainActor.assumeIsolated {
            delegate.application(application, performFetchWithCompletionHandler: { completion($0.result) })
        }
    }

    public nonisolated func didReceiveRemoteNotification(
        _ system: Simulation, completion: @escaping (FetchResult) -> Void
    ) {
        nonisolated(unsafe) let completion = completion
        MainActor.assumeIsolated {
            delegate.application(
                application, didReceiveRemoteNotification: ["aps": ["content-available": 1]],
                fetchCompletionHandler: { completion($0.result) })
        }
    }

    /// The identifier of the app's background URL session.
    public static let backgroundSessionIdentifier = "waymark.background-session"

    public nonisolated func handleEventsForBackgroundURLSession(_ system: Simulation, completion: @escaping () -> Void)
    {
        handleEventsForBackgroundURLSession(system, identifier: nil, completion: completion)
    }

    /// The app is told which session has events (a download's, or the uploads' fixed one); once
    /// its code returns, the session of that identifier it made (again) hears of its downloads,
    /// then `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
    public nonisolated func handleEventsForBackgroundURLSession(
        _ system: Simulation, identifier: String?, completion: @escaping () -> Void
    ) {
        nonisolated(unsafe) let completion = completion
        nonisolated(unsafe) let system = system
        MainActor.assumeIsolated {
            let identifier = identifier ?? Self.backgroundSessionIdentifier
            eventsRequested.insert(identifier)
            delegate.application(
                application, handleEventsForBackgroundURLSession: identifier, completionHandler: completion)
            system.schedule(after: .zero) { [weak self] in self?.deliverBackgroundEvents() }
        }
    }

    public nonisolated func backgroundTransfersFinished(_ system: Simulation) {
        MainActor.assumeIsolated { deliverBackgroundEvents() }
    }

    // MARK: - The process's background URL sessions

    /// Makes `session` the process's session for `identifier` ("create exactly one session per
    /// identifier"); once the code that made it returns, it hears of the downloads the device
    /// holds for it.
    nonisolated func register(_ session: URLSession, identifier: String) {
        MainActor.assumeIsolated {
            backgroundSessions[identifier] = WeakSession(session: session)
            session.device?.schedule(after: .zero) { [weak self] in self?.deliverBackgroundEvents() }
        }
    }

    nonisolated func unregister(_ session: URLSession, identifier: String) {
        MainActor.assumeIsolated {
            if backgroundSessions[identifier]?.session === session { backgroundSessions[identifier] = nil }
        }
    }

    /// Hands each background session of the process the downloads the device holds for it;
    /// a session whose events the app was woken to handle then hears that they are all delivered.
    func deliverBackgroundEvents() {
        guard let device = application.device else { return }
        for identifier in backgroundSessions.keys.sorted() {
            guard let session = backgroundSessions[identifier]?.session else { continue }
            for finished in device.takeFinishedDownloads(session: identifier) { session.deliver(finished) }
            if eventsRequested.remove(identifier) != nil {
                session.delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: session)
            }
        }
    }
}
