import Foundation
import Testing
import WaymarkTesting

@testable import Waymark

/// The app's processes, as on iOS: a launch starts one, a termination ends every object of it,
/// and a relaunch starts afresh. Apple: "the system … terminates your app … the next time the user
/// launches it, your app launches from scratch" (About the app launch sequence); a relaunched app
/// "must … configure a location manager object" again (startMonitoringSignificantLocationChanges).
extension TestDevice {
    /// Lets the main queue turn until `done` holds, at most `turns` times (a bound on progress,
    /// not on the clock): app code awaiting in tasks runs in between. Returns `done()`.
    @discardableResult
    func idle(until done: () -> Bool, turns: Int = 1000, isolation: isolated (any Actor)? = #isolation) async -> Bool {
        var turn = 0
        while !done() && turn < turns {
            await idle(isolation: isolation)
            turn += 1
        }
        return done()
    }
}

@MainActor @Suite struct ProcessModelTests {
    static func walk(fixes: Int = 30) throws -> GPXReplaySource {
        let coordinates = (0..<fixes).map { Coordinate(latitude: 48.1372 + Double($0) * 0.0001, longitude: 11.5755) }
        return try TraceSource.coordinates(coordinates, every: .seconds(1))
    }

    /// An app whose view model creates its own manager at launch, as an app's code creates
    /// `CLLocationManager()`, and keeps what its delegate hears.
    final class ModelApp: SimulatedApp {
        nonisolated(unsafe) static var instances = 0
        var model: Model?
        init() { Self.instances += 1 }
        func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
            model = Model()
        }
    }

    final class Model: DeviceLocationManagerDelegate {
        let manager = DeviceLocationManager()
        var locations = 0
        var authorizationCalls = 0
        init() { manager.delegate = self }
        func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
            self.locations += locations.count
        }
        func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) { authorizationCalls += 1 }
    }

    /// A delegate from the test, outside the app.
    final class Outsider: DeviceLocationManagerDelegate {
        var locations = 0
        var authorizationCalls = 0
        func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
            self.locations += locations.count
        }
        func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) { authorizationCalls += 1 }
    }

    /// Two managers the app's code creates (after its launch), each with a delegate that records
    /// what it hears.
    /// A device running a bare app under `scenario`, on a walk of `fixes`, and two managers its
    /// code created, with their delegates.
    static func launchedWithTwoManagers(_ scenario: Scenario = Scenario(), fixes: Int = 30) throws -> (
        TestDevice, (DeviceLocationManager, DeviceLocationManager, RecordingDelegate, RecordingDelegate)
    ) {
        let device = TestDevice(scenario: scenario, trace: try Self.walk(fixes: fixes), app: BareApp())
        device.launch()
        return (device, Self.twoManagers())
    }

    static func twoManagers() -> (DeviceLocationManager, DeviceLocationManager, RecordingDelegate, RecordingDelegate) {
        let managers = (DeviceLocationManager(), DeviceLocationManager())
        let delegates = (RecordingDelegate(), RecordingDelegate())
        managers.0.delegate = delegates.0
        managers.1.delegate = delegates.1
        return (managers.0, managers.1, delegates.0, delegates.1)
    }

    @Test func eachLaunchIsANewProcessWithNewObjects() throws {
        ModelApp.instances = 0
        let device = TestDevice(trace: try Self.walk(), makeApp: { ModelApp() })
        device.launch()
        let first = try #require(device.process)
        #expect(first.number == 1 && first.cause == .userLaunch && !first.inBackground)
        let model = try #require((first.app as? ModelApp)?.model)
        #expect(device.manager === model.manager, "the app's first manager is the device's")
        model.manager.startUpdatingLocation()
        device.advance(to: .seconds(5))
        #expect(model.locations == 6)

        device.terminate()
        #expect(first.hasEnded && first.endCause == .user)
        device.advance(to: .seconds(8))
        device.bringToForeground()
        let second = try #require(device.process)
        #expect(second.number == 2 && second !== first)
        #expect(ModelApp.instances == 2, "the factory made a new app")
        let newModel = try #require((second.app as? ModelApp)?.model)
        #expect(newModel !== model && newModel.manager !== model.manager)
        newModel.manager.startUpdatingLocation()
        device.advance(to: .seconds(12))
        #expect(newModel.locations == 4)
        #expect(model.locations == 6, "the ended process's delegate hears nothing of the next launch")
        #expect(model.authorizationCalls == 1, "only its own launch's")
    }

    /// A delegate set on the first process's manager from outside does not survive: a test
    /// cannot "prove" that a track survived termination when the app never saved it.
    @Test func anOutsideDelegateDiesWithTheProcess() throws {
        let device = TestDevice(trace: try Self.walk(), app: BareApp())
        let outsider = Outsider()
        device.manager.delegate = outsider
        device.launch()
        device.manager.startUpdatingLocation()
        device.advance(to: .seconds(3))
        #expect(outsider.locations == 4)
        let old = device.manager
        device.terminate()
        device.bringToForeground()
        #expect(device.manager !== old, "the relaunched app has a new manager")
        device.manager.startUpdatingLocation()
        device.advance(to: .seconds(10))
        #expect(outsider.locations == 4)
        #expect(device.fixes(reason: .foreground).count > 4, "the new manager's fixes are delivered")
    }

    @Test func anEndedProcesssManagerIsInertAndTheLogSaysSo() async throws {
        let device = TestDevice(trace: try Self.walk(), app: BareApp())
        device.launch()
        let old = device.manager
        let stream = old.updates()
        old.startUpdatingLocation()
        device.advance(to: .seconds(2))
        device.terminate()
        old.startUpdatingLocation()
        old.requestAlwaysAuthorization()
        #expect(!old.isUpdatingLocation)
        let said = device.events(named: "diagnostic").compactMap { e -> String? in
            if case .diagnostic(let m) = e.kind { m } else { nil }
        }
        #expect(said.count == 2)
        #expect(said.allSatisfy { $0.contains("process 1, which has ended") })
        #expect(said.first?.hasPrefix("startUpdatingLocation()") == true)
        // Its stream finished with the process (no stream is open on it), and what it had
        // buffered is still there to read.
        #expect(old.openStreamCount == 0)
        var read = 0
        if old.openStreamCount == 0 { for await _ in stream { read += 1 } }
        #expect(read == 3)
        device.advance(to: .seconds(6))
        #expect(device.events(named: "authorizationRequest").isEmpty)
    }

    /// A manager the app's code creates after launch (a screen's model) belongs to the running
    /// process: it hears its authorization (iOS 14+), asks for more, and gets fixes.
    @Test func aManagerCreatedAfterLaunchWorks() throws {
        var scenario = Scenario()
        scenario.device.authorization = .notDetermined
        scenario.user.whenInUse = .allowWhileUsing
        let device = TestDevice(scenario: scenario, trace: try Self.walk(), app: BareApp())
        device.launch()
        device.advance(to: .seconds(1))
        let model = Model()  // on the test's task: the device it created
        #expect(model.authorizationCalls == 0, "the callback comes after the code that created it")
        device.advance(to: .seconds(2))
        #expect(model.authorizationCalls == 1)
        #expect(device.events(named: "managerCreated").count == 2, "the launch's and this one's")
        model.manager.requestWhenInUseAuthorization()
        device.advance(to: .seconds(3))
        #expect(model.manager.authorizationStatus == .authorizedWhenInUse)
        model.manager.startUpdatingLocation()
        device.advance(to: .seconds(8))
        #expect(model.locations == 5)
        #expect(device.events(named: "authorizationRequest").count == 1)
    }

    /// Several managers: each with its own properties, delegate and updates, sharing the app's
    /// authorization. The first manager's decisions are the log's `fix` events; another's carry
    /// its number.
    @Test func severalManagersEachHaveTheirOwnUpdates() throws {
        let device = TestDevice(trace: try Self.walk(), app: BareApp())
        device.launch()
        let first = Model()
        let second = Model()
        second.manager.distanceFilter = 50
        first.manager.startUpdatingLocation()
        second.manager.startUpdatingLocation()
        device.advance(to: .seconds(20))
        #expect(first.locations == 21)
        // 11 m a fix, a 50 m filter: every fifth.
        #expect(second.locations == 5)
        #expect(first.manager.distanceFilter == DeviceLocationManager.distanceFilterNone)
        let seconds = device.fixes().filter { $0.manager == 2 }
        #expect(seconds.filter { $0.decision == .delivered }.count == 5)
        #expect(seconds.filter { $0.reason == .distanceFilter }.count == 16)
        #expect(device.fixes().filter { $0.manager == 1 }.count == 21)
        #expect(device.auditLog.contains("\"manager\":2"))
        #expect(first.manager.authorizationStatus == second.manager.authorizationStatus)
        second.manager.stopUpdatingLocation()
        device.advance(to: .seconds(25))
        #expect(second.locations == 5 && first.locations == 26)
    }

    /// "If this property contains the value false and you start location updates anyway, the
    /// Core Location framework prompts the user with a confirmation alert asking whether location
    /// services should be reenabled" (CLLocationManager.locationServicesEnabled): whichever of the
    /// app's managers starts them, once while the alert is up, and again at a start after the
    /// user answered it. Each manager hears `denied`.
    @Test func anyManagerStartingWithLocationServicesOffBringsUpTheirAlert() throws {
        var scenario = Scenario()
        scenario.device.locationServices = false
        scenario.user.answerAfter = .seconds(5)
        let (device, (first, second, firstDelegate, secondDelegate)) = try Self.launchedWithTwoManagers(scenario)
        func alerts(_ phase: PromptPhase) -> Int {
            device.events(named: "prompt").filter {
                if case .prompt(.locationServices, phase, _) = $0.kind { true } else { false }
            }.count
        }
        second.startUpdatingLocation()
        device.advance(by: .seconds(1))
        #expect(alerts(.shown) == 1, "the second manager's start brings the alert up")
        #expect(device.simulation.rules.alerts.onScreen == .locationServices)
        first.startUpdatingLocation()
        device.advance(by: .seconds(1))
        #expect(alerts(.shown) == 1, "not a second time while it is up")
        device.advance(to: .seconds(10))
        #expect(alerts(.answered) == 1)
        second.stopUpdatingLocation()
        second.startUpdatingLocation()
        device.advance(by: .seconds(1))
        #expect(alerts(.shown) == 2, "a start after the answer brings it up again")
        #expect(firstDelegate.errors.map(\.code).contains(.denied))
        #expect(secondDelegate.errors.map(\.code).contains(.denied))
    }

    /// The Location Services alert does not come up, nor is it recorded as shown, while another
    /// system alert is on screen: here the app's authorization prompt, up when the user switched
    /// Location Services off.
    @Test func theLocationServicesAlertWaitsForNoOtherAlert() throws {
        var scenario = Scenario()
        scenario.device.authorization = .notDetermined
        let device = TestDevice(scenario: scenario, trace: try Self.walk(), app: BareApp())
        device.launch()
        let manager = DeviceLocationManager()
        manager.requestWhenInUseAuthorization()
        device.advance(by: .seconds(1))
        #expect(device.simulation.rules.alerts.onScreen == .authorization(.whenInUse(forAlways: false)))
        device.setLocationServices(false)
        manager.startUpdatingLocation()
        device.advance(by: .seconds(1))
        let shown = device.events(named: "prompt").filter {
            if case .prompt(.locationServices, .shown, _) = $0.kind { true } else { false }
        }
        #expect(shown.isEmpty)
        #expect(device.simulation.rules.alerts.onScreen == .authorization(.whenInUse(forAlways: false)))
    }

    /// "An app is considered in use … when the app shows the background location usage
    /// indicator" (Choosing the Location Services Authorization to Request): the indicator of any
    /// of the app's managers, not only the first's. A second manager's background session keeps
    /// an Allow Once grant, which "expires when the app is no longer in use"
    /// (requestWhenInUseAuthorization()), and its own fixes with it.
    @Test func anyManagersIndicatorKeepsTheAppInUse() throws {
        var scenario = Scenario()
        scenario.info.backgroundModes = [.location]
        scenario.device.authorization = .notDetermined
        scenario.app.request = .whenInUse
        scenario.app.startsUpdates = false
        scenario.user.whenInUse = .allowOnce
        let device = TestDevice(scenario: scenario, trace: try Self.walk(fixes: 60))
        device.launch()
        device.advance(to: .seconds(2))
        #expect(device.manager.authorizationStatus == .authorizedWhenInUse)
        let second = DeviceLocationManager()
        second.allowsBackgroundLocationUpdates = true
        second.startUpdatingLocation()
        device.advance(to: .seconds(10))
        device.sendToBackground()
        device.advance(to: .seconds(40))
        #expect(device.simulation.isInUse, "the second manager's indicator shows")
        #expect(device.simulation.hasBackgroundSession, "the second manager's session")
        #expect(second.authorizationStatus == .authorizedWhenInUse, "Allow Once holds while in use")
        let background = device.fixes().filter { $0.manager == 2 && $0.appState == .background }
        #expect(background.count > 20)
        #expect(background.allSatisfy { $0.decision == .delivered }, "\(background.map(\.reason))")
    }

    /// Provisional Always's second prompt comes for an event that needs Always ("typically …
    /// when your app isn't running", requestAlwaysAuthorization()), and the event waits for the
    /// answer: the answer reaches every manager that held a fix for it, not only the first.
    /// Before, a second manager kept its held fix for ever and dropped each later one as
    /// `alwaysPromptShowing`.
    @Test func theUpgradePromptsAnswerReachesEveryManagerThatHeldAFix() throws {
        var scenario = Scenario()
        scenario.device.authorization = .notDetermined
        scenario.app.request = .always
        scenario.app.beginsBackgroundTask = true
        scenario.user.whenInUse = .allowWhileUsing
        scenario.user.always = .changeToAlways
        scenario.user.answerAfter = .seconds(10)
        let device = TestDevice(scenario: scenario, trace: try Self.walk(fixes: 120))
        device.launch()
        device.advance(to: .seconds(12))
        #expect(device.manager.authorizationStatus == .authorizedAlways)
        let second = DeviceLocationManager()
        second.startUpdatingLocation()
        device.advance(to: .seconds(30))
        device.sendToBackground()
        device.advance(to: .seconds(58))
        let seconds = device.fixes().filter { $0.manager == 2 }
        let held = try #require(seconds.first { $0.decision == .held })
        #expect(held.reason == .awaitingAlways)
        #expect(seconds.contains { $0.reason == .alwaysGranted }, "its held fix is delivered at the answer")
        let answered = try #require(seconds.firstIndex { $0.reason == .alwaysGranted })
        let after = seconds[(answered + 1)...]
        // The task keeps the app running for a while after the answer, then it is suspended.
        #expect(after.contains { $0.decision == .delivered }, "\(after.map(\.reason))")
        #expect(!after.contains { $0.reason == .alwaysPromptShowing }, "\(after.map(\.reason))")
    }

    /// `requestLocation()` is each manager's own: its delegate hears the one location or the
    /// failure, and "calling this method while location services are already running does
    /// nothing" is about its own updates (CLLocationManager.requestLocation()). Before, every
    /// request was the first manager's: its answer and its failure went to the first delegate.
    @Test func eachManagersRequestLocationIsItsOwn() throws {
        let (device, (first, second, firstDelegate, secondDelegate)) = try Self.launchedWithTwoManagers(fixes: 20)
        // Another manager's start neither cancels the request (starting updates "cancels any
        // pending request" of the same manager) nor makes it one that does nothing.
        first.requestLocation()
        second.startUpdatingLocation()
        device.advance(to: .seconds(3))
        #expect(firstDelegate.locations.count == 1, "answered although another manager's updates run")
        second.requestLocation()
        device.advance(to: .seconds(4))
        second.stopUpdatingLocation()
        let updates = secondDelegate.locations.count
        device.advance(to: .seconds(6))
        #expect(secondDelegate.locations.count == updates, "its own updates ran: the request did nothing")
        let nothing = device.events(named: "diagnostic").filter {
            if case .diagnostic(let m) = $0.kind {
                m.hasPrefix("requestLocation() while standard updates run")
            } else {
                false
            }
        }
        #expect(nothing.count == 1)
        // Its own desiredAccuracy: three kilometres, so the answer is coarse.
        second.desiredAccuracy = .threeKilometers
        second.requestLocation()
        device.advance(to: .seconds(8))
        #expect(secondDelegate.locations.count == updates + 1, "its own request is answered to it")
        #expect(try #require(secondDelegate.locations.last).horizontalAccuracy >= 1000)
        #expect(try #require(firstDelegate.locations.first).horizontalAccuracy < 100)
        #expect(firstDelegate.locations.count == 1)
        // Its own start cancels it.
        second.requestLocation()
        second.startUpdatingLocation()
        second.stopUpdatingLocation()
        device.advance(to: .seconds(12))
        #expect(secondDelegate.locations.count == updates + 1, "cancelled: no answer")
        // Past the trace's end no location comes: the second's request fails, on its own delegate.
        device.advance(to: .seconds(25))
        second.requestLocation()
        device.advance(to: .seconds(40))
        #expect(secondDelegate.errors.map(\.code) == [.locationUnknown])
        #expect(firstDelegate.errors.isEmpty)
        #expect(firstDelegate.locations.count == 1)
        // The audit log names the manager of each request, when not the first.
        let requests = device.events.compactMap { e -> String? in
            guard case .serviceLocation(let r) = e.kind, r.service == .requestLocation else { return nil }
            return "\(r.manager) \(r.action.rawValue)"
        }
        #expect(
            requests == [
                "1 requested", "1 delivered", "2 requested", "2 delivered", "2 requested", "2 cancelled",
                "2 requested", "2 failed",
            ])
        let lines = device.auditLog.split(separator: "\n").filter { $0.contains("\"requestLocation\"") }
        #expect(lines.filter { $0.contains("\"manager\":2") }.count == 6)
        #expect(!lines.contains { $0.contains("\"manager\":1") })
    }

    /// Fixes held while the app was suspended come when it runs again ("the system enqueues
    /// location updates and delivers them when the app runs again", Handling location updates in
    /// the background), to every manager that held some: the first manager's alone reached its
    /// delegate before, and the others' stayed held.
    @Test func heldFixesComeToEveryManagerWhenTheAppResumes() throws {
        var scenario = Scenario()
        scenario.device.authorization = .authorizedAlways
        let (device, (first, second, firstDelegate, secondDelegate)) = try Self.launchedWithTwoManagers(
            scenario, fixes: 60)
        first.startUpdatingLocation()
        second.startUpdatingLocation()
        device.advance(to: .seconds(5))
        device.sendToBackground()
        device.advance(to: .seconds(30))
        #expect(device.appState == .suspended)
        for number in [1, 2] {
            #expect(device.fixes().contains { $0.manager == number && $0.decision == .held }, "manager \(number)")
        }
        let before = (firstDelegate.locations.count, secondDelegate.locations.count)
        device.bringToForeground()
        device.advance(to: .seconds(31))
        let resumed = device.fixes(reason: .resumed)
        #expect(
            resumed.contains { $0.manager == 1 } && resumed.contains { $0.manager == 2 }, "\(resumed.map(\.manager))")
        #expect(firstDelegate.locations.count > before.0 + 1)
        #expect(secondDelegate.locations.count - before.1 == firstDelegate.locations.count - before.0)
        // The run's summary counts the first manager's, as it counts its fixes: once each.
        let summary = device.simulation.summary
        let away = device.fixes().filter {
            $0.manager == 1 && $0.decision == .delivered && (!$0.appState.isForeground || $0.reason == .resumed)
        }
        #expect(summary.deliveredWhileAway == away.count && away.count > 2)
        #expect(summary.resumedDeliveries == resumed.filter { $0.manager == 1 }.count)
    }

    /// The significant-change service's events go to each manager that started it ("Location
    /// events are delivered to your delegate's locationManager(_:didUpdateLocations:) method",
    /// startMonitoringSignificantLocationChanges()), not to the first manager; one manager's stop
    /// leaves it running for the others, and it stops with the last.
    @Test func eachManagerThatStartedSignificantChangesHearsThem() throws {
        var scenario = Scenario()
        scenario.device.authorization = .authorizedAlways
        let (device, (first, second, firstDelegate, secondDelegate)) = try Self.launchedWithTwoManagers(
            scenario, fixes: 700)
        func records(_ action: ServiceLocationAction) -> Int {
            device.events.filter {
                if case .serviceLocation(let r) = $0.kind {
                    r.service == .significantLocationChange && r.action == action
                } else {
                    false
                }
            }.count
        }
        second.startMonitoringSignificantLocationChanges()
        device.advance(to: .seconds(2))
        #expect(secondDelegate.locations.count == 1 && firstDelegate.locations.isEmpty)
        first.startMonitoringSignificantLocationChanges()
        first.startMonitoringSignificantLocationChanges()
        #expect(records(.started) == 1, "one service for the app")
        // 500 m and five minutes later, both hear the next event.
        device.advance(to: .seconds(320))
        #expect(secondDelegate.locations.count == 2 && firstDelegate.locations.count == 1)
        second.stopMonitoringSignificantLocationChanges()
        // A manager that never started it stops nothing.
        let third = DeviceLocationManager()
        third.stopMonitoringSignificantLocationChanges()
        #expect(records(.stopped) == 0, "the first still listens")
        device.advance(to: .seconds(640))
        #expect(secondDelegate.locations.count == 2 && firstDelegate.locations.count == 2)
        first.stopMonitoringSignificantLocationChanges()
        #expect(records(.stopped) == 1)
        #expect(records(.delivered) == 3)
    }

    /// The audit log says which manager set a property, started or stopped its updates, or had
    /// an error: `manager` when it is not the first, as on a fix (format 5). Before, another
    /// manager's settings and its updates' start and stop were not written at all, and its errors
    /// were written as the first's.
    @Test func everyManagersSettingsUpdatesAndErrorsAreInTheAuditLog() throws {
        var scenario = Scenario()
        scenario.device.authorization = .denied
        let (device, (first, second, _, secondDelegate)) = try Self.launchedWithTwoManagers(scenario, fixes: 10)
        second.distanceFilter = 50
        first.startUpdatingLocation()
        second.startUpdatingLocation()
        device.advance(to: .seconds(2))
        second.stopUpdatingLocation()
        first.stopUpdatingLocation()
        device.advance(to: .seconds(3))
        #expect(secondDelegate.errors.map(\.code) == [.denied])
        let said = device.events.compactMap { e -> String? in
            switch e.kind {
            case .setting(let name, _, let manager): "\(manager) setting \(name.rawValue)"
            case .updates(let action, let manager): "\(manager) \(action.rawValue)"
            case .error(let error, let manager): "\(manager) error \(error.code.name)"
            default: nil
            }
        }
        #expect(
            said == [
                "2 setting distanceFilter", "1 started", "1 error denied", "2 started", "2 error denied",
                "2 stopped", "1 stopped",
            ])
        let lines = device.auditLog.split(separator: "\n")
        let second2 = lines.filter { $0.contains("\"manager\":2") && !$0.contains("\"event\":\"fix\"") }
        #expect(second2.count == 4, "\(second2)")
        #expect(!lines.contains { $0.contains("\"manager\":1") })
    }

    /// An authorization change reaches every manager, not only the first: with updates running
    /// on two, revoking authorization fails both with `denied` and stops the fixes of both
    /// (Apple, locationManager(_:didFailWithError:): "If the user denies your app's use of the
    /// location service, this method reports a CLError.Code.denied error"; mutation m24 told the
    /// first manager only).
    @Test func revokingAuthorizationFailsTheUpdatesOfEveryManager() throws {
        // The trace ends before the revocation: the failure is the change's, not a later fix's.
        let device = TestDevice(trace: try Self.walk(fixes: 4), app: BareApp())
        device.launch()
        let managers = [DeviceLocationManager(), DeviceLocationManager(), DeviceLocationManager()]
        let delegates = managers.map { _ in RecordingDelegate() }
        for (m, d) in zip(managers, delegates) {
            m.delegate = d
            m.startUpdatingLocation()
        }
        device.advance(to: .seconds(6))
        #expect(delegates.allSatisfy { !$0.locations.isEmpty })
        device.setAuthorization(.denied)
        device.advance(to: .seconds(10))
        let counts = delegates.map(\.locations.count)
        for (i, d) in delegates.enumerated() {
            #expect(d.errors.map(\.code) == [.denied], "manager \(i + 1): \(d.errors)")
            #expect(d.authorizationChanges >= 1, "manager \(i + 1) is told of the change")
        }
        device.advance(to: .seconds(15))
        #expect(delegates.map(\.locations.count) == counts, "no fix after the revocation, on any manager")
    }

    /// The new process learns why it was launched: the counterpart of
    /// `launchOptions[.location]`.
    @Test func aBackgroundLaunchSaysWhy() throws {
        var scenario = Scenario()
        scenario.device.authorization = .authorizedAlways
        scenario.app.monitorsSignificantChanges = true
        scenario.timeline = [.init(at: .seconds(10), .terminate)]
        let coordinates = (0..<80).map { Coordinate(latitude: 48.1372 + Double($0) * 0.001, longitude: 11.5755) }
        let trace = try TraceSource.coordinates(coordinates, every: .seconds(10))
        let device = TestDevice(scenario: scenario, trace: trace)
        device.runToEnd()
        let process = try #require(device.process)
        #expect(process.number == 2)
        #expect(process.cause == .significantLocationChange && process.inBackground)
    }

    /// Precise Location off, the purpose key `navigation` declared, the user allowing full
    /// accuracy `answerAfter` the prompt comes up.
    static func temporaryAccuracyScenario(answerAfter: Duration) -> Scenario {
        var scenario = Scenario()
        scenario.device.preciseLocation = false
        scenario.info.temporaryUsageDescriptionKeys = ["navigation"]
        scenario.user.temporaryFullAccuracy = true
        scenario.user.answerAfter = answerAfter
        return scenario
    }

    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:completion:)`: "completion: A
    /// block that's called after the user responds to the prompt" for each request its own. A
    /// second manager's request while the first's prompt is up is declined at once ("The request
    /// always fails with a CLError.Code.promptDeclined error" when it cannot ask), and the first's
    /// completion still comes with the answer. Before, the second request's completion took the
    /// first's place, and the first was never called.
    @Test func eachTemporaryAccuracyRequestGetsItsOwnCompletion() throws {
        let device = TestDevice(
            scenario: Self.temporaryAccuracyScenario(answerAfter: .seconds(5)), trace: try Self.walk(fixes: 30))
        device.launch()
        device.advance(to: .seconds(1))
        var answers: [String] = []
        device.manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "navigation") { error in
            answers.append("first: \(error.map { "\($0.code.name)" } ?? "granted")")
        }
        device.advance(to: .seconds(2))
        let second = DeviceLocationManager()
        second.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "navigation") { error in
            answers.append("second: \(error.map { "\($0.code.name)" } ?? "granted")")
        }
        #expect(answers == ["second: promptDeclined"], "declined at once: the first's prompt is up")
        device.advance(to: .seconds(10))
        #expect(answers == ["second: promptDeclined", "first: granted"])
        #expect(device.manager.accuracyAuthorization == .fullAccuracy)
        #expect(second.accuracyAuthorization == .fullAccuracy)
    }

    /// The `async` form of the request returns once the user allowed; it throws `promptDeclined`
    /// when the prompt is dismissed (the app's process ends under it), at once when a task of a
    /// suspended app asks (nothing asks then, and no answer would come), and when the app's own
    /// code ends its process on hearing of the new accuracy, before the answer reaches it (here,
    /// by setting `allowsBackgroundLocationUpdates` without the `location` background mode).
    /// Before, the last two never returned.
    @Test func anAwaitedTemporaryAccuracyRequestAlwaysReturns() async throws {
        enum Story { case answered, terminated, suspended, endsOnTheAnswer }
        final class EndsOnFullAccuracy: DeviceLocationManagerDelegate {
            func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) {
                if manager.accuracyAuthorization == .fullAccuracy { manager.allowsBackgroundLocationUpdates = true }
            }
        }
        let ending = EndsOnFullAccuracy()
        for story in [Story.answered, .terminated, .suspended, .endsOnTheAnswer] {
            let device = TestDevice(
                scenario: Self.temporaryAccuracyScenario(answerAfter: .seconds(20)), trace: try Self.walk(fixes: 60))
            device.launch()
            let manager = device.manager
            if story == .endsOnTheAnswer { manager.delegate = ending }
            if story == .suspended {
                device.sendToBackground()
                device.advance(to: .seconds(20))
                #expect(device.appState == .suspended)
            }
            final class Returned { var yes = false }
            let returned = Returned()
            let request = Task { @MainActor in
                defer { returned.yes = true }
                try await manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "navigation")
            }
            if story != .suspended {
                await device.idle(until: { device.simulation.rules.temporaryAccuracy.state != .none })
                #expect(device.simulation.rules.temporaryAccuracy.state == .asking(request: 1))
            }
            if story == .terminated { device.terminate() }
            if story != .suspended { device.advance(to: .seconds(30)) }
            // Waits on progress: the request's task returns within a few turns of the main
            // queue, or the test fails (instead of waiting for ever).
            guard await device.idle(until: { returned.yes }) else {
                Issue.record("\(story): the await never returned")
                continue
            }
            let result = await request.result
            switch (story, result) {
            case (.answered, .success): #expect(manager.accuracyAuthorization == .fullAccuracy)
            case (.terminated, .failure(let error as LocationError)):
                #expect(error.code == .promptDeclined && error.reason == "dismissed")
            case (.suspended, .failure(let error as LocationError)):
                // Made in the background: declined at once, as Apple lists, and written so.
                #expect(error.code == .promptDeclined && error.reason == "notInForeground", "\(error)")
                #expect(device.simulation.rules.temporaryAccuracy.counter == 1)
                #expect(Self.temporaryAccuracyPrompts(device) == ["declined notInForeground"])
            case (.endsOnTheAnswer, .failure(let error as LocationError)):
                #expect(error.code == .promptDeclined && error.reason.contains("process ended"), "\(error)")
                #expect(device.process?.hasEnded == true)
            default: Issue.record("\(story): \(result)")
            }
        }
    }

    /// The temporary full accuracy prompt's audit records, as "phase answer".
    static func temporaryAccuracyPrompts(_ device: TestDevice) -> [String] {
        device.events.compactMap {
            guard case .prompt(.temporaryFullAccuracy, let phase, let answer) = $0.kind else { return nil }
            return "\(phase.rawValue) \(answer.map(\.rawValue) ?? "-")"
        }
    }

    /// The callback form, asked by a task of a suspended app, is called at once with
    /// `promptDeclined`: a request made in the background ("The request always fails with a
    /// CLError.Code.promptDeclined error in the following cases: … The app is in the background",
    /// requestTemporaryFullAccuracyAuthorization(withPurposeKey:completion:)). Before, it was never
    /// called, and nothing was written.
    @Test func aSuspendedAppsTemporaryAccuracyRequestIsDeclinedAtOnce() async throws {
        let device = TestDevice(
            scenario: Self.temporaryAccuracyScenario(answerAfter: .seconds(20)), trace: try Self.walk(fixes: 60))
        device.launch()
        device.sendToBackground()
        device.advance(to: .seconds(20))
        #expect(device.appState == .suspended)
        final class Answers { var all: [String] = [] }
        let answers = Answers()
        let manager = device.manager
        let request = Task { @MainActor in
            manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "navigation") { error in
                answers.all.append(error.map { "\($0.code.name) \($0.reason)" } ?? "granted")
            }
        }
        await request.value
        #expect(answers.all == ["promptDeclined notInForeground"])
        #expect(Self.temporaryAccuracyPrompts(device) == ["declined notInForeground"])
        #expect(manager.accuracyAuthorization == .reducedAccuracy)
    }

    /// A manager that can never work, with no device to belong to, stops the program with a
    /// message that names the fix: it is never silently inert.
    @Test func aManagerWithNoDeviceFailsLoudly() async {
        await #expect(processExitsWith: .failure) {
            DeviceLocationManager().startUpdatingLocation()
        }
    }

    /// A `CLMonitor` is the app's code's, so it belongs to a process; one made before the app was
    /// ever launched belongs to none. It is inert, and the log says so when it is used, rather
    /// than adding conditions that a later process would hear of.
    @Test func aMonitorMadeBeforeTheFirstLaunchIsInert() throws {
        var scenario = Scenario()
        scenario.system.iosVersion = IOSVersion(major: 17)!
        scenario.device.authorization = .authorizedAlways
        let device = TestDevice(scenario: scenario, trace: try Self.walk(fixes: 30), app: BareApp())
        let early = device.simulation.monitor(named: "geo")
        let cafe = CircularRegion(
            center: Coordinate(latitude: 48.1372, longitude: 11.5755), radius: 400, identifier: "x")
        device.launch()
        device.advance(to: .seconds(2))
        let before = device.events.count
        early.add(cafe, identifier: "cafe")
        #expect(early.identifiers.isEmpty && device.simulation.monitorNames.isEmpty, "nothing added")
        let said = device.events[before...].compactMap { e -> String? in
            if case .diagnostic(let message) = e.kind { message } else { nil }
        }
        #expect(
            said == [
                "add(_:identifier:) on the CLMonitor \"geo\", made while no process of the app ran (before its launch, or while the app object was made): it does nothing; create the monitor in the app's code once it is launched"
            ])
        // The launched app's own monitor of that name works.
        let own = device.simulation.monitor(named: "geo")
        own.add(cafe, identifier: "cafe")
        #expect(own.identifiers == ["cafe"])
    }

    /// `CLMonitor.record(for:)` answers from what the system keeps under the monitor's name: the
    /// condition, and the last event the app handled ("When your app handles a new event, the
    /// record contains the prior event … the record updates with the new event when the handling
    /// is complete"); before any, the state it was added in, at the time it was added. "When the
    /// app relaunches, recreate the monitor with the same identifier": the new process's monitor
    /// reads the records, while the ended process's monitor is inert and the log says so when it
    /// is used.
    @Test func aMonitorsRecordsOutliveItsProcessAndItsObject() async throws {
        var scenario = Scenario()
        scenario.system.iosVersion = IOSVersion(major: 17)!
        scenario.device.authorization = .authorizedAlways
        let device = TestDevice(scenario: scenario, trace: try Self.walk(fixes: 120), app: BareApp())
        let epoch = device.simulation.epoch
        let cafe = CircularRegion(
            center: Coordinate(latitude: 48.1372 + 0.004, longitude: 11.5755), radius: 400, identifier: "ignored")
        device.launch()
        device.advance(to: .seconds(2))
        let first = device.simulation.monitor(named: "geo")
        first.add(cafe, identifier: "cafe")
        let added = try #require(first.record(for: "cafe"))
        #expect(added.condition.center == cafe.center && added.condition.radius == 400)
        #expect(added.condition.identifier == "cafe")
        #expect(added.lastEvent == ConditionEvent(identifier: "cafe", state: .unknown, date: epoch + 2))
        #expect(first.record(for: "elsewhere") == nil)

        device.advance(to: .seconds(4))
        #expect(first.record(for: "cafe") == added, "the first state came, but the app has not handled it")
        // Delivered (the log says so) before it is read: reading an empty stream would wait.
        try #require(
            device.events.contains {
                $0.kind
                    == .monitor(
                        name: "geo", identifier: "cafe", action: .unsatisfied, decision: .delivered, reason: .region)
            })
        var events = first.events.makeAsyncIterator()
        let outside = try #require(await events.next())
        #expect(outside == ConditionEvent(identifier: "cafe", state: .unsatisfied, date: epoch + 3))
        first.handled(outside)
        #expect(first.record(for: "cafe")?.lastEvent == outside)

        device.terminate()
        let eventsBefore = device.events.count
        first.add(cafe, identifier: "other")
        first.remove("cafe")
        #expect(first.identifiers == ["cafe"], "the ended process's monitor changes nothing")
        let said = device.events[eventsBefore...].compactMap { e -> String? in
            if case .diagnostic(let message) = e.kind { message } else { nil }
        }
        #expect(said.count == 2)
        #expect(said.allSatisfy { $0.contains("CLMonitor \"geo\" of the app's process 1, which has ended") })
        #expect(said.first?.hasPrefix("add(_:identifier:)") == true && said.last?.hasPrefix("remove(_:)") == true)

        // In from 145 m, for 20 s: the crossing relaunches the app, whose launch code does not
        // create the monitor; the event waits for it, and is dropped when the app is suspended.
        device.advance(to: .seconds(60))
        let relaunched = try #require(device.process)
        #expect(relaunched.number == 2 && !relaunched.hasEnded, "the crossing relaunched the app")
        #expect(
            device.events.contains {
                $0.kind
                    == .monitor(
                        name: "geo", identifier: "cafe", action: .satisfied, decision: .dropped, reason: .suspended)
            })
        device.bringToForeground()  // the user opens it: its code runs and creates the monitor
        #expect(device.process === relaunched)
        let again = device.simulation.monitor(named: "geo")
        #expect(
            again.record(for: "cafe")?.lastEvent == outside,
            "the last event the app handled, in the ended process: it never received the entry")
        #expect(first.record(for: "cafe") == again.record(for: "cafe"), "one record, the system's")

        first.add(cafe, identifier: "other")
        #expect(again.identifiers == ["cafe"], "the old monitor does not reach the new process")
        // Added again under its identifier, the condition is a new one: a new record.
        again.add(cafe, identifier: "cafe", assuming: .inside)
        #expect(
            again.record(for: "cafe")?.lastEvent
                == ConditionEvent(identifier: "cafe", state: .satisfied, date: epoch + device.now.inSeconds))
    }
}
