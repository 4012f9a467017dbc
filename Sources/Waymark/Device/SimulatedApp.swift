/// The app's code on the simulated device: what UIKit's app delegate would receive.
///
/// Every method has a default that does nothing, so an app implements only what it uses. Calls
/// come on the simulation's isolation, in simulation-time order, and only while the app runs
/// (never while it is suspended or terminated). The ``Simulation`` passed in is the app's
/// `UIApplication`: it owns the ``DeviceLocationManager`` (``Simulation/manager``), begins and ends
/// background tasks, sets the fetch interval and schedules the app's own work.
///
/// ``TutorialApp`` is the default, the app the command line runs.
public protocol SimulatedApp: AnyObject {
    /// `application(_:didFinishLaunchingWithOptions:)`: configure the manager here.
    /// `inBackground` when a service launched the app without showing it.
    func didFinishLaunching(_ system: Simulation, inBackground: Bool)
    /// `applicationDidBecomeActive(_:)`.
    func didBecomeActive(_ system: Simulation)
    /// `applicationWillEnterForeground(_:)`: the app was in the background or suspended.
    func willEnterForeground(_ system: Simulation)
    /// `applicationWillResignActive(_:)`: the app is about to become inactive (an alert, an
    /// interruption, the user leaving).
    func willResignActive(_ system: Simulation)
    /// `applicationWillTerminate(_:)`: the system terminates the app while it runs (not while it
    /// is suspended, when it gets no notice).
    func willTerminate(_ system: Simulation)
    /// `applicationDidEnterBackground(_:)`.
    func didEnterBackground(_ system: Simulation)
    /// `application(_:performFetchWithCompletionHandler:)`: call `completion` within the fetch
    /// budget (30 s), or the system terminates the app.
    func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void)
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` for a background
    /// push: call `completion` within 30 s, or the system terminates the app.
    func didReceiveRemoteNotification(_ system: Simulation, completion: @escaping (FetchResult) -> Void)
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`: the app's
    /// background session has finished its transfers; call `completion` when done.
    func handleEventsForBackgroundURLSession(_ system: Simulation, completion: @escaping () -> Void)
    /// The same, naming the session: `identifier` is a download's background session, nil for
    /// the uploads of ``Simulation/uploadInBackground(_:)``. By default, the form above.
    func handleEventsForBackgroundURLSession(
        _ system: Simulation, identifier: String?, completion: @escaping () -> Void)
    /// A background download finished while the app's code runs: its session's delegate hears of
    /// it (``Simulation/takeFinishedDownloads(session:)``). By default nothing.
    func backgroundTransfersFinished(_ system: Simulation)
    /// The app was terminated. iOS gives a suspended app no notice; this is for the model's own
    /// bookkeeping (the next launch starts afresh).
    func didTerminate(_ system: Simulation, cause: TerminationCause)
}

extension SimulatedApp {
    public func didFinishLaunching(_ system: Simulation, inBackground: Bool) {}
    public func didBecomeActive(_ system: Simulation) {}
    public func willEnterForeground(_ system: Simulation) {}
    public func willResignActive(_ system: Simulation) {}
    public func willTerminate(_ system: Simulation) {}
    public func didEnterBackground(_ system: Simulation) {}
    public func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
        completion(.noData)
    }
    public func didTerminate(_ system: Simulation, cause: TerminationCause) {}
    public func didReceiveRemoteNotification(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
        completion(.noData)
    }
    public func handleEventsForBackgroundURLSession(_ system: Simulation, completion: @escaping () -> Void) {
        completion()
    }
    public func handleEventsForBackgroundURLSession(
        _ system: Simulation, identifier: String?, completion: @escaping () -> Void
    ) {
        handleEventsForBackgroundURLSession(system, completion: completion)
    }
    public func backgroundTransfersFinished(_ system: Simulation) {}
}

/// A background task, as `UIBackgroundTaskIdentifier`.
public struct BackgroundTaskIdentifier: RawRepresentable, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `UIBackgroundTaskIdentifier.invalid`: running in the background is not possible.
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)
}
