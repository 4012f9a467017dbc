import Foundation
import Testing
import Waymark
import WaymarkBackgroundTasks
import WaymarkCoreLocation
import WaymarkTesting
import WaymarkUIKit

// An app written against Apple's documented API only, in Apple's spelling, driven by the test kit
// by its app delegate's type. Each test cites the documentation it checks.

/// Where the app keeps what it must not lose: its "disk", which survives its processes.
@MainActor enum AppDisk {
    static var locations: [CLLocation] = []
    static var launches: [[UIApplication.LaunchOptionsKey: Any]?] = []
    static var authorizationCalls = 0
    static var legacyAuthorizationCalls = 0
    static var errors: [CLError] = []
    static var refreshRuns = 0
    static var fetchResult: UIBackgroundFetchResult = .newData
    static var fetches = 0
    static var pushes = 0
    static var resignations = 0
    static var terminations = 0
    static var registered: Bool?

    static func reset() {
        locations = []
        launches = []
        authorizationCalls = 0
        legacyAuthorizationCalls = 0
        errors = []
        refreshRuns = 0
        fetchResult = .newData
        fetches = 0
        pushes = 0
        resignations = 0
        terminations = 0
        registered = nil
    }
}

/// The app's location code, as an iOS view model would write it.
@MainActor final class TrackerModel: NSObject, CLLocationManagerDelegate {
    let manager = CLLocationManager()

    override init() {
        super.init()
        manager.delegate = self
        manager.desiredAccuracy = kCLLocationAccuracyBest
        manager.distanceFilter = kCLDistanceFilterNone
    }

    func start() {
        if manager.authorizationStatus == .notDetermined { manager.requestWhenInUseAuthorization() }
        manager.startUpdatingLocation()
    }

    nonisolated func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
        MainActor.assumeIsolated { AppDisk.locations += locations }
    }

    nonisolated func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
        MainActor.assumeIsolated { AppDisk.authorizationCalls += 1 }
    }

    nonisolated func locationManager(_ manager: CLLocationManager, didFailWithError error: Error) {
        MainActor.assumeIsolated { if let e = error as? CLError { AppDisk.errors.append(e) } }
    }
}

/// An older app: it implements only the deprecated authorization callback.
@MainActor final class LegacyModel: NSObject, CLLocationManagerDelegate {
    let manager = CLLocationManager()
    override init() {
        super.init()
        manager.delegate = self
    }
    nonisolated func locationManager(_ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus)
    {
        MainActor.assumeIsolated { AppDisk.legacyAuthorizationCalls += 1 }
    }
}

@MainActor final class TrackerAppDelegate: UIResponder, UIApplicationDelegate {
    var window: UIWindow?
    var model: TrackerModel?

    func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        AppDisk.launches.append(launchOptions)
        AppDisk.registered = BGTaskScheduler.shared.register(forTaskWithIdentifier: "app.refresh", using: nil) { task in
            MainActor.assumeIsolated { AppDisk.refreshRuns += 1 }
            task.setTaskCompleted(success: true)
        }
        let model = TrackerModel()
        self.model = model
        if launchOptions?[.location] != nil {
            // Relaunched by a location service: "you must still configure a location manager
            // object and call this method".
            model.manager.startMonitoringSignificantLocationChanges()
        }
        return true
    }

    func applicationWillResignActive(_ application: UIApplication) { AppDisk.resignations += 1 }
    func applicationWillTerminate(_ application: UIApplication) { AppDisk.terminations += 1 }

    func application(
        _ application: UIApplication,
        performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        AppDisk.fetches += 1
        completionHandler(AppDisk.fetchResult)
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async
        -> UIBackgroundFetchResult
    {
        AppDisk.pushes += 1
        return .newData
    }
}

@MainActor @Suite(.serialized) struct AppleSpelledAppTests {
    static func walk(seconds: Int = 120) throws -> GPXReplaySource {
        let coordinates = (0...seconds).map { Coordinate(latitude: 48.1372 + Double($0) * 0.0001, longitude: 11.5755) }
        return try TraceSource.coordinates(coordinates, every: .seconds(1))
    }

    static func scenario(_ build: (inout Scenario) -> Void = { _ in }) -> Scenario {
        var s = Scenario()
        s.device.authorization = .notDetermined
        s.app.launchAt = nil
        build(&s)
        return s
    }

    /// The prompt appears when the app asks; the test taps Allow While Using, as a user would
    /// ("The system displays the prompt … the user's choice"); the delegate hears the change and
    /// the fixes come.
    @Test func thePromptIsAnsweredAsItAppears() async throws {
        AppDisk.reset()
        let device = try TestDevice(app: TrackerAppDelegate.self, scenario: Self.scenario(), trace: Self.walk())
        device.launch()
        let delegate = try #require(device.appDelegate(as: TrackerAppDelegate.self))
        delegate.model?.start()
        #expect(device.prompt == .authorization(.whenInUse(forAlways: false)))
        #expect(device.appState == .inactive, "the prompt covers the app")
        #expect(AppDisk.resignations == 1, "applicationWillResignActive as the alert comes")
        device.tap(.allowWhileUsing)
        #expect(device.prompt == nil)
        #expect(delegate.model?.manager.authorizationStatus == .authorizedWhenInUse)
        device.advance(by: .seconds(10))
        #expect(AppDisk.locations.count == 11, "the fixes at 0 to 10 s")
        // Created, then the user's change: "Core Location always calls
        // locationManagerDidChangeAuthorization(_:) when the user's action results in an
        // authorization status change, and when your app creates an instance".
        #expect(AppDisk.authorizationCalls == 2)
    }

    /// "If the user's choice doesn't change the authorization status after you call the
    /// requestWhenInUseAuthorization() … the location manager doesn't report the current
    /// authorization status": Don't Allow from notDetermined does change it, to denied, and
    /// updates then fail with CLError.denied.
    @Test func dontAllowGivesACLErrorDenied() async throws {
        AppDisk.reset()
        let device = try TestDevice(app: TrackerAppDelegate.self, scenario: Self.scenario(), trace: Self.walk())
        device.launch()
        device.appDelegate(as: TrackerAppDelegate.self)?.model?.start()
        device.tap(.dontAllow)
        device.advance(by: .seconds(3))
        #expect(AppDisk.errors.map(\.code) == [.denied])
        #expect(AppDisk.locations.isEmpty)
    }

    /// A delegate that implements only the deprecated `locationManager(_:didChangeAuthorization:)`
    /// hears it where the new method would be called.
    @Test func theDeprecatedAuthorizationCallbackIsTheFallback() async throws {
        AppDisk.reset()
        let device = try TestDevice(app: TrackerAppDelegate.self, scenario: Self.scenario(), trace: Self.walk())
        device.launch()
        let legacy = LegacyModel()
        device.advance(by: .seconds(1))
        #expect(AppDisk.legacyAuthorizationCalls == 1, "at creation")
        legacy.manager.requestWhenInUseAuthorization()
        device.tap(.allowOnce)
        device.advance(by: .seconds(1))
        #expect(AppDisk.legacyAuthorizationCalls == 2, "at the user's change")
    }

    /// "Registration of all launch handlers must be complete before the end of
    /// applicationDidFinishLaunching"; a submitted app refresh task runs in the background, and
    /// an identifier not in BGTaskSchedulerPermittedIdentifiers is refused.
    @Test func backgroundTasksRunAsSubmitted() async throws {
        AppDisk.reset()
        let device = try TestDevice(
            app: TrackerAppDelegate.self,
            scenario: Self.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.info.taskSchedulerPermittedIdentifiers = ["app.refresh"]
            }, trace: Self.walk())
        device.launch()
        #expect(AppDisk.registered == true)
        let request = BGAppRefreshTaskRequest(identifier: "app.refresh")
        request.earliestBeginDate = Date(timeIntervalSinceNow: 30)
        try device.simulation.withDevice { try BGTaskScheduler.shared.submit(request) }
        #expect(throws: BGTaskScheduler.Error.self) {
            try device.simulation.withDevice {
                try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "not.listed"))
            }
        }
        device.sendToBackground()
        device.advance(by: .seconds(20))
        #expect(AppDisk.refreshRuns == 0, "not before its earliest begin date")
        device.advance(by: .seconds(20))
        #expect(AppDisk.refreshRuns == 1)
        // After launch, registering is a fatal error that ends the app.
        device.bringToForeground()
        _ = device.simulation.withDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: "app.refresh", using: nil) { _ in }
        }
        #expect(device.appState == .notRunning)
        #expect(device.events(named: "terminated").count == 1)
    }

    /// Background fetch's three results reach the log as the app reports them.
    @Test(arguments: [UIBackgroundFetchResult.newData, .noData, .failed])
    func fetchReportsTheAppsResult(_ result: UIBackgroundFetchResult) async throws {
        AppDisk.reset()
        AppDisk.fetchResult = result
        let device = try TestDevice(
            app: TrackerAppDelegate.self, scenario: Self.scenario { $0.info.backgroundModes = [.fetch] },
            trace: Self.walk(seconds: 400))
        device.launch()
        device.simulation.setMinimumBackgroundFetchInterval(.every(.seconds(60)))
        device.sendToBackground()
        device.advance(by: .seconds(100))
        #expect(AppDisk.fetches == 1)
        let completed = device.events(named: "fetch").compactMap { e -> FetchResult? in
            if case .fetch(.completed, let r, _, _, _) = e.kind { r } else { nil }
        }
        #expect(completed.map(\.rawValue) == [["newData", "noData", "failed"][Int(result.rawValue)]])
    }

    /// A silent push wakes the suspended app: its `async` handler runs and its result is the
    /// push's ("the system calls … whether your app is in the foreground or background").
    @Test func aSilentPushRunsTheAsyncHandler() async throws {
        AppDisk.reset()
        let device = try TestDevice(
            app: TrackerAppDelegate.self, scenario: Self.scenario { $0.info.backgroundModes = [.remoteNotification] },
            trace: Self.walk())
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(20))
        #expect(device.appState == .suspended)
        device.perform(.push(contentAvailable: true))
        await device.idle()
        #expect(AppDisk.pushes == 1)
        let pushes = device.events(named: "push").compactMap { e -> String? in
            if case .push(let action, let result, _, _) = e.kind {
                "\(action.rawValue) \(result?.rawValue ?? "")"
            } else {
                nil
            }
        }
        #expect(pushes == ["delivered ", "completed newData"])
    }

    /// Swiped away, the app's next launch is a new process with a new delegate; a relaunch by
    /// the significant-change service says so in the launch options ("launched in response to a
    /// CoreLocation event": `.location`), and a running app hears applicationWillTerminate.
    @Test func aRelaunchIsANewProcessWithLaunchOptions() async throws {
        AppDisk.reset()
        let coordinates = (0..<80).map { Coordinate(latitude: 48.1372 + Double($0) * 0.001, longitude: 11.5755) }
        let device = try TestDevice(
            app: TrackerAppDelegate.self, scenario: Self.scenario { $0.device.authorization = .authorizedAlways },
            trace: TraceSource.coordinates(coordinates, every: .seconds(10)))
        device.launch()
        let first = try #require(device.appDelegate(as: TrackerAppDelegate.self))
        first.model?.manager.startMonitoringSignificantLocationChanges()
        device.terminate()
        #expect(AppDisk.terminations == 1)
        device.advance(by: .seconds(700))
        let second = try #require(device.appDelegate(as: TrackerAppDelegate.self))
        #expect(second !== first)
        #expect(AppDisk.launches.count == 2)
        #expect(AppDisk.launches.first.map { $0 == nil } == true)
        #expect(AppDisk.launches.last??[.location] as? Bool == true)
        #expect(device.process?.cause == .significantLocationChange)
        #expect(!AppDisk.locations.isEmpty, "the relaunched app's manager receives the change")
    }

    /// `try await requestTemporaryFullAccuracyAuthorization(withPurposeKey:)` from the app's
    /// main-actor code, as Apple spells it: it runs on the caller's actor (it did not compile
    /// there before: the manager was sent off the main actor) and returns once the user allowed.
    @Test func theAwaitedFullAccuracyRequestWorksFromMainActorCode() async throws {
        AppDisk.reset()
        let scenario = Self.scenario {
            $0.device.authorization = .authorizedWhenInUse
            $0.device.preciseLocation = false
            $0.info.temporaryUsageDescriptionKeys = ["navigation"]
            $0.user.temporaryFullAccuracy = true
            $0.user.answerAfter = .seconds(3)
        }
        let device = try TestDevice(app: TrackerAppDelegate.self, scenario: scenario, trace: Self.walk())
        device.launch()
        let model = try #require(device.appDelegate(as: TrackerAppDelegate.self)?.model)
        #expect(model.manager.accuracyAuthorization == .reducedAccuracy)
        final class Returned { var yes = false }
        let returned = Returned()
        let request = Task { @MainActor in
            defer { returned.yes = true }
            try await model.manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "navigation")
        }
        await device.idle(until: { device.simulation.rules.temporaryAccuracy.state != .none })
        #expect(device.simulation.rules.temporaryAccuracy.state == .asking(request: 1))
        device.advance(by: .seconds(5))
        // Waits on progress, not on the clock: a request that never returns fails here.
        let didReturn = await device.idle(until: { returned.yes })
        try #require(didReturn, "the await never returned")
        try await request.value
        #expect(model.manager.accuracyAuthorization == .fullAccuracy)
    }

    /// `await device.idle()` waits until a `for await` reader of `CLLocationUpdate.liveUpdates()`
    /// has handled every update delivered: no yield loop.
    @Test func idleWaitsForTheLiveUpdatesReader() async throws {
        AppDisk.reset()
        var scenario = Self.scenario()
        scenario.device.authorization = .authorizedWhenInUse
        let device = try TestDevice(app: TrackerAppDelegate.self, scenario: scenario, trace: Self.walk())
        device.launch()
        final class Box: @unchecked Sendable { var count = 0 }
        let box = Box()
        let reader = Task { @MainActor in
            for try await update in device.simulation.withDevice({ CLLocationUpdate.liveUpdates() })
            where update.location != nil {
                box.count += 1
            }
        }
        await device.idle()
        device.advance(by: .seconds(9))
        await device.idle()
        #expect(box.count == 10)
        device.advance(by: .seconds(5))
        await device.idle()
        #expect(box.count == 15)
        device.finish()
        _ = await reader.result
    }
}

/// A screen's view model, in Apple's spelling, whose `start()` reads live updates in a task of
/// its own, and `watch()` creates a `CLMonitor`, as a SwiftUI screen's model does.
@MainActor final class LiveTripModel {
    var locations: [CLLocation] = []
    var events: [String] = []
    private var reading: Task<Void, any Error>?
    private var watching: Task<Void, Never>?

    func start() {
        reading = Task {
            for try await update in CLLocationUpdate.liveUpdates(.fitness) {
                if let location = update.location { locations.append(location) }
            }
        }
    }

    func watch(_ center: CLLocationCoordinate2D, assuming: CLMonitor.Event.State? = nil) {
        watching = Task {
            let monitor = await CLMonitor("geofences")
            let cafe = CLMonitor.CircularGeographicCondition(center: center, radius: 300)
            if let assuming {
                await monitor.add(cafe, identifier: "cafe", assuming: assuming)
            } else {
                await monitor.add(cafe, identifier: "cafe")
            }
            do {
                for try await event in await monitor.events {
                    events.append("\(event.identifier) \(event.state == .satisfied ? "in" : "out")")
                }
            } catch {}
        }
    }
}

/// The objects app code creates belong to the device the code runs on, a task's too.
@MainActor @Suite struct DeviceOwnershipTests {
    static let start = Coordinate(latitude: 48.1372, longitude: 11.5755)

    /// A launched When In Use device walking north from ``start``: `fixes` fixes, `every` apart.
    static func launchedWalk(fixes: Int, every: Duration) throws -> TestDevice {
        var scenario = Scenario()
        scenario.device.authorization = .authorizedWhenInUse
        let coordinates = (0..<fixes).map {
            Coordinate(latitude: start.latitude + Double($0) * 0.0001, longitude: start.longitude)
        }
        let device = TestDevice(scenario: scenario, trace: try TraceSource.coordinates(coordinates, every: every))
        device.launch()
        return device
    }

    /// A test that calls a view model's `start()`, as a screen would, runs it inside
    /// `device.withDevice { }`: the tasks it starts inherit the device, so their live updates
    /// and monitor are the running process's (before, `TestDevice` had no `withDevice`, and a
    /// task started outside the app's callbacks belonged to no device).
    @Test(arguments: [nil, CLMonitor.Event.State.unsatisfied, .satisfied])
    func aViewModelsTasksBelongToTheDeviceTheyStartOn(assuming: CLMonitor.Event.State?) async throws {
        let device = try Self.launchedWalk(fixes: 60, every: .seconds(1))
        let start = Self.start
        let model = LiveTripModel()
        device.withDevice {
            model.start()
            model.watch(
                CLLocationCoordinate2D(latitude: start.latitude + 0.005, longitude: start.longitude), assuming: assuming
            )
        }
        await device.idle()
        device.advance(by: .seconds(59))
        await device.idle()
        #expect(model.locations.count == 60)
        // Added "with the … initial state you specify" (add(_:identifier:assuming:)): assumed
        // unsatisfied, the device far outside says nothing until it enters; assumed satisfied,
        // it is not far enough outside for 20 s before it comes in, so nothing changes. Unknown
        // at first: the first state, then the entry.
        let expected: [String] =
            switch assuming {
            case .unsatisfied?: ["cafe in"]
            case .satisfied?: []
            default: ["cafe out", "cafe in"]
            }
        #expect(model.events == expected, "\(device.events(named: "monitor"))")
        device.finish()
    }

    /// `CLMonitor.record(for:)`, in Apple's spelling: the condition as it was added, and its last
    /// event: "unknown" when added, then the last event the app handled. "When your app handles
    /// a new event, the record contains the prior event … the record updates with the new event
    /// when the handling is complete" (CLMonitoringRecord): a screen that reads the record while
    /// it handles an event reads the one before.
    @Test func aMonitorsRecordHoldsItsConditionAndLastEvent() async throws {
        let device = try Self.launchedWalk(fixes: 60, every: .seconds(1))
        let epoch = device.simulation.epoch
        device.advance(by: .seconds(2))
        let center = CLLocationCoordinate2D(latitude: Self.start.latitude + 0.005, longitude: Self.start.longitude)
        let monitor = await device.withDevice { await CLMonitor("geofences") }
        await monitor.add(CLMonitor.CircularGeographicCondition(center: center, radius: 300), identifier: "cafe")
        let added = try #require(await monitor.record(for: "cafe"))
        let condition = try #require(added.condition as? CLMonitor.CircularGeographicCondition)
        #expect(condition.center.latitude == center.latitude && condition.center.longitude == center.longitude)
        #expect(condition.radius == 300)
        #expect(added.lastEvent.identifier == "cafe" && added.lastEvent.state == .unknown)
        #expect(added.lastEvent.date == epoch + 2, "added 2 s after the launch")
        #expect(await monitor.record(for: "bakery") == nil)
        // A beacon's condition compiles as on iOS; the device, with no Bluetooth, does not keep
        // it, and the log says so.
        let door = CLMonitor.BeaconIdentityCondition(uuid: UUID(), major: 7)
        #expect(door.major == 7 && door.minor == nil)
        await monitor.add(door, identifier: "door")
        #expect(await monitor.record(for: "door") == nil)
        #expect(await monitor.identifiers == ["cafe"])
        #expect(
            device.events.contains {
                if case .diagnostic(let message) = $0.kind {
                    message.contains("\"door\", a BeaconIdentityCondition")
                } else {
                    false
                }
            })

        @MainActor final class Screen {
            /// Each event's state, and the record's state read while handling it.
            var seen: [(event: CLMonitor.Event.State, record: CLMonitor.Event.State?)] = []
            var reading: Task<Void, Never>?
        }
        let screen = Screen()
        device.withDevice {
            screen.reading = Task {
                do {
                    for try await event in await monitor.events {
                        screen.seen.append((event.state, await monitor.record(for: event.identifier)?.lastEvent.state))
                    }
                } catch {}
            }
        }
        await device.run(for: .seconds(57))
        await device.idle()
        #expect(screen.seen.map(\.event) == [.unsatisfied, .satisfied])
        #expect(screen.seen.map(\.record) == [.unknown, .unsatisfied], "while handling, the record is the prior event")
        let entered = try #require(
            device.events.last {
                if case .monitor("geofences", "cafe", .satisfied, _, _) = $0.kind { true } else { false }
            })
        let last = try #require(await monitor.record(for: "cafe")).lastEvent
        #expect(
            last.state == .satisfied && last.date == epoch + entered.offset.inSeconds,
            "handled, the event is the record")
        await monitor.remove("cafe")
        #expect(await monitor.record(for: "cafe") == nil, "a removed condition has no record")
        device.finish()
        screen.reading?.cancel()  // the monitor's events go on while the app lives
        _ = await screen.reading?.value
    }

    /// A `Task` the test itself starts, outside `withDevice`, inherits the test, and so finds
    /// the device the test made: a view model made and started there reads live updates, and a
    /// `CLLocationManager()` made there is the running process's (`managerCreated`). Before, each
    /// stopped the program (no device could be told).
    @Test func aTaskTheTestStartsFindsTheTestsDevice() async throws {
        let device = try Self.launchedWalk(fixes: 30, every: .seconds(1))
        @MainActor final class Made {
            var model: LiveTripModel?
            var manager: CLLocationManager?
        }
        let made = Made()
        let before = device.events(named: "managerCreated").count
        await Task { @MainActor in
            made.model = LiveTripModel()
            made.model?.start()
            made.manager = CLLocationManager()
        }.value
        let model = try #require(made.model)
        let manager = try #require(made.manager)
        await device.idle()
        device.advance(by: .seconds(29))
        await device.idle()
        #expect(model.locations.count == 30)
        #expect(manager.authorizationStatus == .authorizedWhenInUse)
        #expect(
            device.events(named: "managerCreated").count == before + 2, "the live updates' manager and the other")
        device.finish()
    }

    /// A `Task` the delegate starts for one location has run before the next comes, when the
    /// test moves time with `run(for:)`, as the main run loop runs queued work between two events
    /// on iOS; `advance(by:)` runs it only after the whole advance.
    @Test func runLetsTheDelegatesTasksRunBetweenTwoFixes() async throws {
        @MainActor final class Counting: NSObject, CLLocationManagerDelegate {
            let manager = CLLocationManager()
            var processed = 0
            var seen: [Int] = []
            override init() {
                super.init()
                manager.delegate = self
                manager.startUpdatingLocation()
            }
            nonisolated func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
                MainActor.assumeIsolated {
                    seen.append(processed)
                    Task { @MainActor in self.processed += 1 }
                }
            }
        }
        for live in [true, false] {
            let device = try Self.launchedWalk(fixes: 30, every: .seconds(5))
            let model = device.withDevice { Counting() }
            if live { await device.run(for: .seconds(20)) } else { device.advance(by: .seconds(20)) }
            await device.idle()
            #expect(model.seen == (live ? [0, 1, 2, 3, 4] : [0, 0, 0, 0, 0]), "live: \(live)")
            #expect(model.processed == 5)
            device.finish()
        }
    }

    /// Apple's objects that need a device stop the program, naming the fix, when there is none
    /// to belong to (as a `CLLocationManager` does): never silently inert.
    @Test func appleSpelledObjectsWithNoDeviceFailLoudly() async {
        func said(_ result: ExitTest.Result?, _ call: String) {
            let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            #expect(text.contains(call) && text.contains("device.withDevice { }"), "\(text)")
        }
        said(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = CLServiceSession(authorization: .whenInUse)
            }, "CLServiceSession(authorization:), which belongs to no simulated device")
        said(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = CLBackgroundActivitySession()
            }, "CLBackgroundActivitySession(), which belongs to no simulated device")
        said(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                for try await _ in CLLocationUpdate.liveUpdates() { break }
            }, "liveUpdates() (CLLocationUpdate.liveUpdates()), which belongs to no simulated device")
        said(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = await CLMonitor("orphan")
            }, "CLMonitor(\"orphan\"), which belongs to no simulated device")
    }
}

/// `CLLocationCoordinate2DIsValid` as Apple's page states it: a coordinate is invalid when its
/// latitude is above 90 or below −90 degrees, or its longitude above 180 or below −180; the
/// poles and the antimeridian themselves are valid (mutation m64 survived without this test).
@Suite struct CoordinateValidityTests {
    @Test func theBoundsThemselvesAreValidAndBeyondThemNot() {
        for (latitude, longitude) in [(90.0, 180.0), (-90.0, -180.0), (0.0, 180.0), (0.0, -180.0), (90.0, 0.0), (0, 0)]
        {
            #expect(
                CLLocationCoordinate2DIsValid(CLLocationCoordinate2DMake(latitude, longitude)),
                "\(latitude), \(longitude)")
        }
        for (latitude, longitude) in [
            (90.000001, 0.0), (-90.000001, 0.0), (0.0, 180.000001), (0.0, -180.000001), (.nan, 0), (0, .nan),
            (kCLLocationCoordinate2DInvalid.latitude, kCLLocationCoordinate2DInvalid.longitude),
        ] {
            #expect(
                !CLLocationCoordinate2DIsValid(CLLocationCoordinate2DMake(latitude, longitude)),
                "\(latitude), \(longitude)")
        }
    }
}
