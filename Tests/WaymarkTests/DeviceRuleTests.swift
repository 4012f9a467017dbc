import Foundation
import Testing

@testable import Waymark

/// A source that plays a list of events.
struct ListSource: LocationSource {
    var events: [SourceEvent]
    var name = "list"
    private var position = 0

    init(_ events: [SourceEvent]) { self.events = events }

    mutating func next() async throws -> SourceEvent? {
        guard position < events.count else { return nil }
        position += 1
        return events[position - 1]
    }

    /// A walk east from Munich: a fix every `every` seconds for `duration`, `step` metres apart.
    static func walk(for duration: Int, every: Int = 10, step: Double = 14) -> ListSource {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        return ListSource(
            stride(from: 0, through: duration, by: every).enumerated().map { i, t in
                let location = Location(
                    coordinate: Geodesic.destination(from: start, bearing: 90, distance: Double(i) * step),
                    altitude: 520, horizontalAccuracy: 5, verticalAccuracy: 8, speed: step / Double(every), course: 90,
                    timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(t)),
                    provenance: Provenance(
                        source: .file(path: "walk", index: i), isSimulatedBySoftware: true, fixMode: .threeD))
                return SourceEvent(offset: .seconds(t), kind: .fix(location), index: i, segment: 0)
            })
    }
}

/// One test per rule of the simulated device (issue "The simulated device, rebuilt", section 3),
/// each citing the Apple page it follows. `docs/ios-versions.md` has the sources in full.
@Suite struct DeviceRuleTests {
    static let epoch = Date(timeIntervalSince1970: 1_714_550_400)

    struct Run {
        let simulation: Simulation
        let events: [AuditEvent]

        /// The fix records at or after `from` seconds, before `to`.
        func fixes(from: Int = 0, to: Int = .max) -> [AuditEvent.FixRecord] {
            events.compactMap { e in
                guard case .fix(let f) = e.kind, e.offset >= .seconds(from), e.offset < .seconds(to) else { return nil }
                return f
            }
        }

        func reasons(from: Int = 0, to: Int = .max) -> Set<FixReason> { Set(fixes(from: from, to: to).map(\.reason)) }

        var names: [String] { events.map(\.name) }

        /// The offset of the first event matching `match`.
        func first(_ match: (AuditEvent.Kind) -> Bool) -> Duration? { events.first { match($0.kind) }?.offset }
    }

    static func run(
        _ scenario: Scenario, _ source: ListSource = .walk(for: 300),
        delegate: (any DeviceLocationManagerDelegate)? = nil
    ) async throws -> Run {
        let simulation = Simulation(scenario: scenario, epoch: epoch)
        simulation.manager.delegate = delegate
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(source)
        return Run(simulation: simulation, events: recorder.events)
    }

    static func scenario(_ build: (inout Scenario) -> Void) -> Scenario {
        var s = Scenario()
        build(&s)
        return s
    }

    // MARK: - Rule 1: "in use"

    /// "An app is considered in use: when the app runs in the foreground; in the few seconds after
    /// an app leaves the foreground …; when the app shows the background location usage
    /// indicator." "If the user stops using your app, any outstanding requests suspend until the
    /// user resumes using your app." (Choosing the Location Services Authorization to Request)
    @Test func inUseIsTheForegroundTheGracePeriodAndTheIndicator() async throws {
        let task = try await Self.run(
            Self.scenario {
                $0.app.beginsBackgroundTask = true
                $0.timeline = [.init(at: .seconds(60), .background)]
            })
        #expect(task.reasons(from: 60, to: 65) == [.gracePeriod])
        // The task keeps the app running, but does not make it in use.
        #expect(task.reasons(from: 65, to: 85) == [.notInUse])
        #expect(task.fixes(from: 65, to: 85).allSatisfy { $0.appState == .background })

        let session = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.location]
                $0.manager.allowsBackgroundLocationUpdates = true
                $0.timeline = [.init(at: .seconds(60), .background)]
            })
        let background = session.fixes(from: 65)
        #expect(!background.isEmpty && background.allSatisfy { $0.reason == .backgroundSession && $0.indicator })
        #expect(session.simulation.isInUse, "the indicator shows: in use")
    }

    /// "If the user's choice grants temporary When In Use authorization, the authorization expires
    /// when the app is no longer in use, reverting to Not Determined status."
    /// (requestWhenInUseAuthorization()) A task still running does not keep it.
    @Test func allowOnceEndsWhenTheAppStopsBeingInUseNotWhenATaskEnds() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .notDetermined
                $0.app.request = .whenInUse
                $0.user.whenInUse = .allowOnce
                $0.app.beginsBackgroundTask = true
                $0.timeline = [.init(at: .seconds(60), .background)]
            })
        let reverted = run.first {
            if case .authorizationChanged(.authorizedWhenInUse, .notDetermined) = $0 { true } else { false }
        }
        let taskEnded = run.first { if case .backgroundTask(.ended, _, _, _) = $0 { true } else { false } }
        #expect(reverted == .seconds(65), "at the end of the grace period")
        #expect(try #require(taskEnded) > .seconds(65), "while the task still runs")
    }

    /// Starting updates within the grace period counts as starting in use: "When your app starts
    /// standard location services in the foreground, they continue to run in the background if
    /// your app has enabled background location updates"; the grace period is in use.
    @Test func startingUpdatesInTheGracePeriodCountsAsStartingInUse() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.location]
                $0.manager.allowsBackgroundLocationUpdates = true
                $0.app.startsUpdates = false
                $0.timeline = [.init(at: .seconds(20), .background), .init(at: .seconds(22), .startUpdates)]
            })
        #expect(run.reasons(from: 30) == [.backgroundSession])
        // "Attempts to start location updates while your app runs in the background will fail."
        let late = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.location]
                $0.manager.allowsBackgroundLocationUpdates = true
                $0.app.startsUpdates = false
                $0.app.beginsBackgroundTask = true
                $0.timeline = [.init(at: .seconds(20), .background), .init(at: .seconds(30), .startUpdates)]
            })
        #expect(late.reasons(from: 30) == [.notInUse])
    }

    /// When Always is downgraded to When In Use, the in-use rule applies at once to updates
    /// already running (Apple says nothing of the timing; the conservative reading:
    /// locationManagerDidChangeAuthorization is called at once, so the rule applies at once).
    @Test func aDowngradeToWhenInUseAppliesAtOnceToRunningUpdates() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.location]
                $0.device.authorization = .authorizedAlways
                $0.manager.allowsBackgroundLocationUpdates = true
                $0.app.startsUpdates = false
                $0.app.beginsBackgroundTask = true
                $0.timeline = [
                    .init(at: .seconds(20), .background), .init(at: .seconds(30), .startUpdates),
                    .init(at: .seconds(60), .setAuthorization(.authorizedWhenInUse)),
                ]
            })
        #expect(run.reasons(from: 30, to: 60) == [.backgroundSession])
        #expect(run.reasons(from: 60) == [.notInUse])
        #expect(run.simulation.appState == .suspended)
    }

    // MARK: - Rule 2: held fixes

    /// "In this suspended state, apps don't run and don't receive location updates from the
    /// system. Instead, the system enqueues location updates and delivers them when the app runs
    /// again" (Handling location updates in the background), in one call: "If … multiple
    /// locations arrived before they could be delivered, the array may contain additional
    /// entries … the most recent location update is at the end of the array."
    /// (locationManager(_:didUpdateLocations:))
    @Test func heldFixesArriveInOneCallAsAnArray() async throws {
        final class Calls: DeviceLocationManagerDelegate {
            var sizes: [Int] = []
            var last: [Location] = []
            func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
                sizes.append(locations.count)
                last = locations
            }
        }
        let calls = Calls()
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.manager.distanceFilter = 30
                $0.timeline = [.init(at: .seconds(60), .background), .init(at: .seconds(180), .foreground)]
            }, delegate: calls)
        let held = run.fixes().filter { $0.decision == .held }
        // 14 m a step, a 30 m filter: one fix in three is generated, and only those queue.
        #expect(held.count >= 3)
        #expect(run.fixes(from: 65, to: 180).contains { $0.reason == .distanceFilter })
        #expect(calls.sizes.contains(held.count), "one call with every queued fix: \(calls.sizes)")
        let batch = run.events.first { if case .locationsDelivered = $0.kind { true } else { false } }
        #expect(batch?.offset == .seconds(180))
    }

    // MARK: - Rule 3: Location Services off

    /// "denied: The user denied the use of location services for the app or they are disabled
    /// globally in Settings." (CLAuthorizationStatus.denied) "If users disable or deny location
    /// services and you attempt to start location updates anyway, the location manager reports an
    /// error to its delegate." (locationServicesEnabled()) The system's alert to turn them on,
    /// rather than the app's own prompt, is the rule 3 (Apple's current pages no longer
    /// describe it; docs/apple-citations.md, R3).
    @Test func locationServicesOffReadDeniedAndStartingShowsTheSystemAlert() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.locationServices = false
                $0.timeline = [.init(at: .seconds(60), .setLocationServices(true))]
            })
        #expect(run.events.contains { if case .managerCreated(.denied, _) = $0.kind { true } else { false } })
        #expect(
            run.events.contains {
                if case .prompt(.locationServices, .shown, _) = $0.kind { true } else { false }
            })
        #expect(!run.events.contains { if case .authorizationRequest = $0.kind { true } else { false } })
        #expect(run.events.contains { if case .error(let e, _) = $0.kind { e.code == .denied } else { false } })
        #expect(run.reasons(to: 60) == [.locationServicesDisabled])
        #expect(run.reasons(from: 60) == [.foreground], "the user's When In Use is back")
    }

    /// The join of rule 3's two answers to a start with Location Services off: the system's
    /// alert is already up when the app's didFailWithError hears of the denied start, so what the
    /// app asks for there meets an alert on screen. (Handing the alert on after the location
    /// service's answer changed this while every golden log stayed the same.)
    @Test func theLocationServicesAlertIsUpWhenTheAppHearsOfTheDeniedStart() async throws {
        final class Watch: DeviceLocationManagerDelegate {
            var onScreen: () -> SystemAlert? = { nil }
            var seen: [SystemAlert?] = []
            func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {
                seen.append(onScreen())
            }
        }
        var scenario = Scenario()
        scenario.device.locationServices = false
        let simulation = Simulation(scenario: scenario, epoch: Self.epoch)
        let watch = Watch()
        watch.onScreen = { [unowned simulation] in simulation.rules.alerts.onScreen }
        simulation.manager.delegate = watch
        try await simulation.run(ListSource.walk(for: 30))
        #expect(watch.seen.first == .some(.locationServices), "\(watch.seen)")
    }

    // MARK: - Rule 4: prompts

    /// "Your app must be in the foreground to show a location authorization prompt." System alerts
    /// make the app inactive ("temporary interruptions, such as when displaying system alerts",
    /// sceneWillResignActive). Leaving dismisses an unanswered prompt; answering makes it active.
    @Test func promptsMakeTheAppInactiveAndLeavingDismissesThem() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .notDetermined
                $0.app.request = .whenInUse
                $0.user.whenInUse = .allowWhileUsing
                $0.user.answerAfter = .seconds(30)
                $0.timeline = [.init(at: .seconds(10), .background), .init(at: .seconds(60), .foreground)]
            })
        let inactive = run.first {
            if case .stateChanged(.active, .inactive, .alertShown) = $0 { true } else { false }
        }
        #expect(inactive == .zero)
        #expect(run.events.contains { if case .prompt(_, .dismissed, _) = $0.kind { true } else { false } })
        #expect(!run.events.contains { if case .prompt(_, .answered, _) = $0.kind { true } else { false } })
        #expect(run.simulation.manager.authorizationStatus == .notDetermined)
    }

    /// The provisional upgrade prompt comes for an event that needs Always ("typically … when
    /// your app isn't running", requestAlwaysAuthorization()), not for a session started in use
    /// nor in the grace period; the event waits for the answer.
    @Test func theUpgradePromptComesOnlyForAnEventThatNeedsAlways() async throws {
        func provisional(_ build: (inout Scenario) -> Void) async throws -> Run {
            try await Self.run(
                Self.scenario {
                    $0.device.authorization = .notDetermined
                    $0.app.request = .always
                    $0.user.whenInUse = .allowWhileUsing
                    $0.user.always = .changeToAlways
                    $0.user.answerAfter = .seconds(5)
                    $0.timeline = [.init(at: .seconds(60), .background)]
                    build(&$0)
                })
        }
        func shown(_ run: Run) -> Bool {
            run.events.contains { if case .prompt(.always, .shown, _) = $0.kind { true } else { false } }
        }
        let session = try await provisional {
            $0.info.backgroundModes = [.location]
            $0.manager.allowsBackgroundLocationUpdates = true
        }
        #expect(!shown(session), "a session started in use needs no Always")
        // In the grace period the app is in use; suspended after it, its next fix needs Always.
        let suspended = try await provisional { _ in }
        let prompt = suspended.first { if case .prompt(.always, .shown, _) = $0 { true } else { false } }
        #expect(prompt == .seconds(70), "the first fix after the grace period (60 s + 5 s)")
        let task = try await provisional { $0.app.beginsBackgroundTask = true }
        #expect(shown(task))
        #expect(task.fixes().first { $0.decision == .held }?.reason == .awaitingAlways)
        #expect(task.fixes().contains { $0.reason == .alwaysGranted })
    }

    // MARK: - Rule 5: desired accuracy

    /// "The location service does its best to achieve the requested accuracy" (desiredAccuracy);
    /// "Core Location turns on the hardware it needs … in the most power-efficient way"
    /// (Configuring your app to use location services): a coarse request changes the source, not
    /// the positions or their rate. Reduced accuracy: "within 1–20 kilometers", "at most a few
    /// times per hour" (kCLLocationAccuracyReduced).
    @Test func desiredAccuracyChoosesTheSourceNotAGridOrARate() async throws {
        let best = try await Self.run(Scenario())
        let coarse = try await Self.run(Self.scenario { $0.manager.desiredAccuracy = .hundredMeters })
        #expect(coarse.fixes().filter { $0.decision == .delivered }.count == best.fixes().count)
        #expect(coarse.fixes().allSatisfy { $0.delivered?.coordinate == $0.coordinate })
        #expect(coarse.fixes().allSatisfy { $0.positioning == .wifi && $0.delivered!.horizontalAccuracy >= 65 })
        let reduced = try await Self.run(Self.scenario { $0.manager.desiredAccuracy = .reduced })
        let delivered = reduced.fixes().filter { $0.decision == .delivered }
        #expect(delivered.count == 1, "at most one update per 15 minutes")
        #expect(delivered.allSatisfy { $0.positioning == .reduced && $0.delivered!.coordinate != $0.coordinate })
    }

    // MARK: - Rule 6: background tasks

    /// "This method returns invalid if running in the background isn't possible"
    /// (beginBackgroundTask(expirationHandler:)): it succeeds whenever the app runs, even after an
    /// earlier task expired. The seeds' "re-register when active" pattern is the app's own.
    @Test func beginBackgroundTaskSucceedsWheneverTheAppRuns() async throws {
        func stays(reRegister: Bool) async throws -> Run {
            try await Self.run(
                Self.scenario {
                    $0.device.authorization = .authorizedAlways
                    $0.app.beginsBackgroundTaskAtLaunch = true
                    $0.app.reRegistersTaskWhenActive = reRegister
                    $0.timeline = [
                        .init(at: .seconds(30), .background), .init(at: .seconds(120), .foreground),
                        .init(at: .seconds(180), .background),
                    ]
                })
        }
        let bug = try await stays(reRegister: false)
        #expect(bug.reasons(from: 185, to: 240).isDisjoint(with: [.backgroundTask]), "no time the second time")
        let fix = try await stays(reRegister: true)
        #expect(fix.reasons(from: 185, to: 200) == [.backgroundTask])
        // (Format 1 wrote `refused` for a second task; the typed vocabulary has no such action.)
        #expect(
            fix.events.contains {
                if case .backgroundTask(.began, _, _, "reRegistered") = $0.kind { true } else { false }
            })

        let simulation = Simulation(scenario: Scenario(), epoch: Self.epoch)
        #expect(simulation.beginBackgroundTask() == .invalid, "no code runs before launch")
    }

    // MARK: - Rule 7: auto-pause

    /// "After a pause occurs, it's your responsibility to restart location services again when you
    /// determine that they're needed." (pausesLocationUpdatesAutomatically) The tutorial app
    /// restarts them when it becomes active again, and the audit shows that as the app's call.
    @Test func afterAPauseTheAppNotTheSystemRestartsUpdates() async throws {
        let still = ListSource.walk(for: 1500, every: 30, step: 0)
        let run = try await Self.run(
            Self.scenario {
                $0.timeline = [.init(at: .seconds(1200), .background), .init(at: .seconds(1260), .foreground)]
            }, still)
        let paused = try #require(run.first { if case .paused = $0 { true } else { false } })
        let restart = try #require(run.first { if case .app("startUpdatingLocation", _) = $0 { true } else { false } })
        let resumed = try #require(run.first { if case .resumed = $0 { true } else { false } })
        #expect(paused < .seconds(1200) && restart == .seconds(1260) && resumed == restart)
    }

    // MARK: - Rule 8: fetch

    /// A fetch that came due in the foreground runs once the app is in the background, running
    /// or suspended ("The system calls this method … when an opportunity arises to download
    /// data", application(_:performFetchWithCompletionHandler:)).
    @Test func aFetchDeferredInTheForegroundRunsOnceInTheBackground() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.app.fetchInterval = .every(.seconds(60))
                $0.timeline = [.init(at: .seconds(90), .background)]
            })
        let deferred = run.first { if case .fetch(.deferred, _, _, _, _) = $0 { true } else { false } }
        let began = run.first { if case .fetch(.began, _, _, _, _) = $0 { true } else { false } }
        #expect(deferred == .seconds(60) && began == .seconds(90), "in the background at once, in the grace period")
    }

    // MARK: - Rule 9: the smaller ones

    /// "Setting the value to true but omitting the UIBackgroundModes key and location value in
    /// your app's Info.plist file is a fatal error that terminates the app."
    /// (allowsBackgroundLocationUpdates)
    @Test func backgroundUpdatesWithoutTheModeTerminateTheApp() async throws {
        let run = try await Self.run(
            Self.scenario { $0.timeline = [.init(at: .seconds(30), .setAllowsBackgroundLocationUpdates(true))] })
        #expect(run.events.contains { if case .terminated(.fatalError) = $0.kind { true } else { false } })
        #expect(run.reasons(from: 31) == [.appNotRunning])
    }

    /// "Your app must be in the foreground to show a location authorization prompt": a request
    /// from elsewhere shows nothing, changes nothing, and is logged.
    @Test func aRequestOutsideTheForegroundLogsADiagnostic() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .notDetermined
                $0.app.beginsBackgroundTask = true
                $0.timeline = [
                    .init(at: .seconds(10), .background), .init(at: .seconds(20), .requestAuthorization(.always)),
                ]
            })
        #expect(
            run.events.contains { if case .diagnostic(let m) = $0.kind { m.contains("foreground") } else { false } })
        #expect(!run.events.contains { if case .prompt = $0.kind { true } else { false } })
    }

    /// "While the app is running in the foreground, the value in this property remains suitably
    /// large." (backgroundTimeRemaining)
    @Test func backgroundTimeRemainingIsUnlimitedInTheForeground() {
        let simulation = Simulation(scenario: Scenario(), epoch: Self.epoch)
        simulation.start(source: "none")
        simulation.advance(to: .seconds(1))
        #expect(simulation.appState == .active)
        #expect(simulation.backgroundTimeRemainingSeconds == .greatestFiniteMagnitude)
        #expect(simulation.backgroundTimeRemaining == nil)
    }

    // MARK: - Found in review

    /// "Core Location always calls locationManagerDidChangeAuthorization(_:) when the user's
    /// action results in an authorization status change … whether your app runs in the
    /// foreground or in the background": a change made while the app is suspended reaches its
    /// delegate when it runs again.
    @Test func aChangeWhileSuspendedReachesTheDelegateWhenTheAppRunsAgain() async throws {
        let delegate = RecordingDelegate()
        _ = try await Self.run(
            Self.scenario {
                $0.timeline = [
                    .init(at: .seconds(30), .background), .init(at: .seconds(60), .setAuthorization(.denied)),
                    .init(at: .seconds(90), .foreground),
                ]
            }, delegate: delegate)
        // Once at creation (iOS 14+), once on return.
        #expect(delegate.authorizationChanges == 2)
        #expect(delegate.errors.map(\.code) == [.denied], "denied reported once the app runs")
    }

    /// A suspended app woken for a fetch starts a new stay in the background: a task its fetch
    /// handler begins gets a fresh budget, not what was left of the last stay.
    @Test func aFetchWakeGetsAFreshTaskBudget() async throws {
        final class TaskInFetch: SimulatedApp {
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                system.setMinimumBackgroundFetchInterval(.every(.seconds(120)))
            }
            func didEnterBackground(_ system: Simulation) {
                // 40 s of work against a 30 s budget: the expiration handler ends the task.
                let task = system.beginBackgroundTask {
                    for task in system.backgroundTasks { system.endBackgroundTask(task) }
                }
                system.schedule(after: .seconds(40)) { system.endBackgroundTask(task) }
            }
            func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
                let task = system.beginBackgroundTask()
                system.schedule(after: .seconds(10)) {
                    system.endBackgroundTask(task)
                    completion(.noData)
                }
            }
        }
        var scenario = Scenario()
        scenario.info.backgroundModes = [.fetch]
        scenario.timeline = [.init(at: .seconds(10), .background)]
        let simulation = Simulation(scenario: scenario, epoch: Self.epoch, app: TaskInFetch())
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(ListSource.walk(for: 300))
        let tasks = recorder.events.compactMap { e -> String? in
            if case .backgroundTask(let action, _, _, _) = e.kind { return action.rawValue } else { return nil }
        }
        // The first stay's task expires (30 s budget, 40 s of work); the fetch's task does not.
        #expect(tasks.filter { $0 == "expiring" }.count == 1, "\(tasks)")
        #expect(!recorder.events.contains { if case .terminated = $0.kind { true } else { false } })
        #expect(recorder.events.contains { if case .fetch(.completed, _, _, _, _) = $0.kind { true } else { false } })
    }

    /// After a fatal error the rest of the app's code has no effect: the launch that set
    /// allowsBackgroundLocationUpdates without the mode begins no task and requests nothing.
    @Test func nothingTheAppDoesAfterAFatalErrorTakesEffect() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.manager.allowsBackgroundLocationUpdates = true
                $0.app.beginsBackgroundTaskAtLaunch = true
                $0.device.authorization = .notDetermined
                $0.app.request = .whenInUse
            }, .walk(for: 30))
        #expect(!run.events.contains { if case .backgroundTask = $0.kind { true } else { false } })
        #expect(!run.events.contains { if case .authorizationRequest = $0.kind { true } else { false } })
        let states = run.events.compactMap { e -> String? in
            if case .stateChanged(let from, let to, _) = e.kind { return "\(from.rawValue)>\(to.rawValue)" }
            return nil
        }
        #expect(states == ["notRunning>inactive", "inactive>notRunning"])
    }

    /// When the Always prompt goes away because the user set the authorization in Settings, the
    /// event it held follows what the user chose.
    @Test func theHeldEventFollowsAChoiceMadeInSettings() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .notDetermined
                $0.app.request = .always
                $0.app.beginsBackgroundTask = true
                $0.user.whenInUse = .allowWhileUsing
                $0.timeline = [
                    .init(at: .seconds(60), .background), .init(at: .seconds(75), .setAuthorization(.authorizedAlways)),
                ]
            })
        #expect(run.fixes().contains { $0.reason == .awaitingAlways })
        #expect(run.fixes().contains { $0.reason == .alwaysGranted })
    }

    // MARK: - Versions

    /// About 30 s from iOS 13 ("On current systems you can expect about 30 seconds", Apple DTS,
    /// UIApplication Background Task Notes); about 180 s before (an assumption: see
    /// docs/ios-versions.md).
    @Test func theTaskBudgetFollowsTheRelease() async throws {
        for (version, expiring) in [(IOSVersion(major: 12)!, 235), (IOSVersion(major: 13)!, 85), (.newest, 85)] {
            let run = try await Self.run(
                Self.scenario {
                    $0.system.iosVersion = version
                    $0.device.authorization = .authorizedAlways
                    $0.app.beginsBackgroundTask = true
                    $0.timeline = [.init(at: .seconds(60), .background)]
                })
            let warned = run.first { if case .backgroundTask(.expiring, _, _, _) = $0 { true } else { false } }
            #expect(warned == .seconds(expiring), "\(version)")
        }
    }

    /// "Core Location always calls locationManagerDidChangeAuthorization(_:) … when your app
    /// creates an instance of CLLocationManager" (iOS 14 and later).
    @Test func managerCreationReportsAuthorizationFromIOS14() async throws {
        final class Count: DeviceLocationManagerDelegate {
            var calls = 0
            func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) { calls += 1 }
        }
        for (major, calls) in [(13, 0), (14, 1), (26, 1)] {
            let count = Count()
            let run = try await Self.run(
                Self.scenario { $0.system.iosVersion = IOSVersion(major: major)! }, .walk(for: 10), delegate: count)
            #expect(count.calls == calls, "iOS \(major)")
            #expect(run.events.contains { if case .managerCreated(_, calls == 1) = $0.kind { true } else { false } })
        }
    }

    /// A scenario that uses what its release lacks says so.
    @Test func scenarioProblemsNameWhatTheReleaseLacks() {
        var s = Scenario()
        #expect(s.problems.isEmpty)
        s.system.iosVersion = IOSVersion(major: 12)!
        s.user.whenInUse = .allowOnce
        s.device.preciseLocation = false
        #expect(s.problems.count == 2)
        #expect(IOSVersion(parsing: "17.4")?.major == 17 && IOSVersion(parsing: "iOS 14") != nil)
        #expect(IOSVersion(parsing: "19") == nil && IOSVersion(parsing: "11") == nil && IOSVersion(parsing: "x") == nil)
    }
}

/// The library from `@MainActor` app code, under Swift 6 strict concurrency: the delegate is a
/// main-actor class through an isolated conformance, and `for await` reads the updates there.
@MainActor final class MainActorViewModel {
    var received = 0
    var authorizationCalls = 0
    let simulation: Simulation

    init(simulation: Simulation) {
        self.simulation = simulation
        simulation.manager.delegate = self
    }
}

extension MainActorViewModel: @MainActor DeviceLocationManagerDelegate {
    func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
        received += locations.count
    }
    func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) { authorizationCalls += 1 }
}

@Suite struct UpdateStreamTests {
    /// A stream whose reader has gone is let go at the next delivery; the others go on.
    @Test func aStreamWhoseReaderHasGoneIsLetGo() async throws {
        let simulation = Simulation(scenario: Scenario(), epoch: DeviceRuleTests.epoch)
        var dropped: AsyncStream<LocationUpdate>? = simulation.manager.updates()
        let kept = simulation.manager.updates()
        #expect(simulation.manager.openStreamCount == 2 && dropped != nil)
        dropped = nil  // the consumer stops: its stream terminates
        simulation.start(source: "list")
        var source = ListSource.walk(for: 30)
        let first = try #require(try await source.next())
        simulation.receive(first)
        #expect(simulation.manager.openStreamCount == 1, "let go at the first delivery")
        while let event = try await source.next() { simulation.receive(event) }
        simulation.finish()
        var count = 0
        for await _ in kept { count += 1 }
        #expect(count == 4)
    }
}

@Suite struct MainActorUseTests {
    @MainActor @Test func aMainActorClassIsTheDelegateAndReadsTheUpdates() async throws {
        let model = MainActorViewModel(simulation: Simulation(scenario: Scenario(), epoch: DeviceRuleTests.epoch))
        let updates = model.simulation.manager.updates()
        try await model.simulation.run(ListSource.walk(for: 60))
        var streamed = 0
        for await update in updates where update.appState == .active { streamed += 1 }
        #expect(model.received == 7 && streamed == 7)
        #expect(model.authorizationCalls == 1, "at creation, iOS 14+")
    }
}
