import Foundation

/// `UIApplicationDelegate`, with the app lifecycle and background execution methods in Apple's
/// signatures.
///
/// Every method is optional on iOS; here each has a default. The defaults fall back as iOS does:
/// - `application(_:didFinishLaunchingWithOptions:)` not implemented: the older
///   `applicationDidFinishLaunching(_:)` is called;
/// - a background push goes to `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`,
///   else to its `async` form, else to the deprecated `application(_:didReceiveRemoteNotification:)`
///   (with `noData`);
/// - a URL session's events go to the completion-handler form, else to the `async` one.
///
/// Linux has no Objective-C runtime, so the device cannot ask which methods the app implements:
/// each default forwards to the next form, and an `async` form runs at once on the main actor
/// (`Task.immediate`) so that a method that does not wait completes in the same step.
@MainActor public protocol UIApplicationDelegate: NSObjectProtocol {
    func application(
        _ application: UIApplication,
        willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool
    func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool
    func applicationDidFinishLaunching(_ application: UIApplication)
    func applicationDidBecomeActive(_ application: UIApplication)
    func applicationWillResignActive(_ application: UIApplication)
    func applicationDidEnterBackground(_ application: UIApplication)
    func applicationWillEnterForeground(_ application: UIApplication)
    func applicationWillTerminate(_ application: UIApplication)
    func applicationDidReceiveMemoryWarning(_ application: UIApplication)

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void)
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async
        -> UIBackgroundFetchResult
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any])
    func application(
        _ application: UIApplication,
        performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void)
    func application(
        _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping () -> Void)
    func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String) async
}

extension UIApplicationDelegate {
    public func application(
        _ application: UIApplication,
        willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool { true }
    public func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        applicationDidFinishLaunching(application)
        return true
    }
    public func applicationDidFinishLaunching(_ application: UIApplication) {}
    public func applicationDidBecomeActive(_ application: UIApplication) {}
    public func applicationWillResignActive(_ application: UIApplication) {}
    public func applicationDidEnterBackground(_ application: UIApplication) {}
    public func applicationWillEnterForeground(_ application: UIApplication) {}
    public func applicationWillTerminate(_ application: UIApplication) {}
    public func applicationDidReceiveMemoryWarning(_ application: UIApplication) {}
    public func application(
        _ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {}
    public func application(
        _ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error
    ) {}
    public func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        let info = UserInfo(userInfo)
        Task.immediate { @MainActor in
            completionHandler(await self.application(application, didReceiveRemoteNotification: info.value))
        }
    }
    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any])
        async -> UIBackgroundFetchResult
    {
        // The deprecated form, which has no result (a synchronous call picks it, not this one).
        func legacy() { self.application(application, didReceiveRemoteNotification: userInfo) }
        legacy()
        return .noData
    }
    @available(iOS, introduced: 3.0, deprecated: 10.0)
    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) {}
    @available(
        iOS, introduced: 7.0, deprecated: 13.0,
        message: "Use a BGAppRefreshTask in the BackgroundTasks framework instead"
    )
    public func application(
        _ application: UIApplication,
        performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        completionHandler(.noData)
    }
    public func application(
        _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping () -> Void
    ) {
        Task.immediate { @MainActor in
            await self.application(application, handleEventsForBackgroundURLSession: identifier)
            completionHandler()
        }
    }
    public func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String) async
    {}
}

/// A push's payload carried into the task that handles it. `@unchecked Sendable`: it is made and
/// read on the main actor only.
struct UserInfo: @unchecked Sendable {
    let value: [AnyHashable: Any]
    init(_ value: [AnyHashable: Any]) { self.value = value }
}

extension UIApplicationDelegate {
    /// The entry point of `@main class AppDelegate: UIResponder, UIApplicationDelegate`, so that an
    /// iOS app's source compiles unchanged. On Linux an app runs on the simulated device instead:
    /// under `WaymarkRunner.main(app:)`, the test kit or `Simulation` (docs/porting.md); run on
    /// its own it says so and exits with 64.
    @MainActor public static func main() {
        let message = """
            \(Self.self) is an iOS app's entry point. On Linux, run the app on Waymark's simulated device: \
            WaymarkRunner.main(app: \(Self.self).self) in an executable target, or TestDevice in a test \
            (docs/porting.md).

            """
        FileHandle.standardError.write(Data(message.utf8))
        exit(64)
    }
}
