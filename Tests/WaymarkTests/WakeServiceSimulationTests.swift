import Foundation
import Testing

@testable import Waymark

/// The wake-up services on the simulated device, end to end: who is woken or relaunched, with
/// what cause, and what reaches the app's delegate. Each test cites the rule it checks
/// (`docs/apple-citations.md`, W1–W12).
@MainActor @Suite struct WakeServiceSimulationTests {
    typealias Run = DeviceRuleTests.Run

    /// A drive east at 90 km/h: a fix every 10 s for `duration` seconds.
    static func drive(for duration: Int) -> ListSource { .walk(for: duration, every: 10, step: 250) }

    static func scenario(_ build: (inout Scenario) -> Void) -> Scenario { DeviceRuleTests.scenario(build) }

    static func run(
        _ scenario: Scenario, _ source: ListSource, delegate: (any DeviceLocationManagerDelegate)? = nil,
        app: (any SimulatedApp)? = nil
    ) async throws -> Run {
        // The listener is the app's own delegate: its launch code sets it on the manager of every
        // process, as a relaunched app's code must (a delegate set from outside dies with the
        // process that had it).
        let inner = app ?? TutorialApp(scenario: scenario)
        let simulation = Simulation(
            scenario: scenario, epoch: DeviceRuleTests.epoch,
            app: delegate.map { ListeningApp(inner: inner, delegate: $0) } ?? inner)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(source)
        return Run(simulation: simulation, events: recorder.events)
    }

    /// The launches and wakes, as (offset in seconds, from, to, cause).
    static func transitions(_ run: Run) -> [(Int, AppState, AppState, String)] {
        run.events.compactMap { e in
            guard case .stateChanged(let from, let to, let cause) = e.kind else { return nil }
            return (Int(e.offset.components.seconds), from, to, cause.rawValue)
        }
    }

    static func serviceLocations(_ run: Run, _ action: String? = nil) -> [(Int, AuditEvent.ServiceLocationRecord)] {
        run.events.compactMap { e in
            guard case .serviceLocation(let r) = e.kind, r.location != nil,
                action.map({ r.action.rawValue == $0 }) ?? true
            else { return nil }
            return (Int(e.offset.components.seconds), r)
        }
    }

    /// An app whose launch code makes `delegate` its manager's delegate, then runs `inner`.
    final class ListeningApp: SimulatedApp {
        let inner: any SimulatedApp
        let delegate: any DeviceLocationManagerDelegate
        init(inner: any SimulatedApp, delegate: any DeviceLocationManagerDelegate) {
            self.inner = inner
            self.delegate = delegate
        }
        func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
            system.manager.delegate = delegate
            inner.didFinishLaunching(system, inBackground: inBackground)
        }
        func didBecomeActive(_ system: Simulation) { inner.didBecomeActive(system) }
        func willEnterForeground(_ system: Simulation) { inner.willEnterForeground(system) }
        func didEnterBackground(_ system: Simulation) { inner.didEnterBackground(system) }
        func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
            inner.performFetch(system, completion: completion)
        }
        func didReceiveRemoteNotification(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
            inner.didReceiveRemoteNotification(system, completion: completion)
        }
        func handleEventsForBackgroundURLSession(_ system: Simulation, completion: @escaping () -> Void) {
            inner.handleEventsForBackgroundURLSession(system, completion: completion)
        }
        func didTerminate(_ system: Simulation, cause: TerminationCause) { inner.didTerminate(system, cause: cause) }
    }

    /// A delegate that keeps what it hears.
    final class Listener: DeviceLocationManagerDelegate {
        var locations: [Location] = []
        var entered: [String] = []
        var exited: [String] = []
        var states: [(String, RegionState)] = []
        var failures: [LocationError] = []
        var visits: [Visit] = []
        var errors: [LocationError] = []
        func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
            self.locations += locations
        }
        func locationManager(_ manager: DeviceLocationManager, didEnterRegion region: CircularRegion) {
            entered.append(region.identifier)
        }
        func locationManager(_ manager: DeviceLocationManager, didExitRegion region: CircularRegion) {
            exited.append(region.identifier)
        }
        func locationManager(
            _ manager: DeviceLocationManager, didDetermineState state: RegionState, for region: CircularRegion
        ) {
            states.append((region.identifier, state))
        }
        func locationManager(
            _ manager: DeviceLocationManager, monitoringDidFailFor region: CircularRegion,
            withError error: LocationError
        ) {
            failures.append(error)
        }
        func locationManager(_ manager: DeviceLocationManager, didVisit visit: Visit) { visits.append(visit) }
        func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {
            errors.append(error)
        }
    }

    // MARK: - Significant changes (W1)

    /// "If you start this service and your app is subsequently terminated, the system
    /// automatically relaunches the app into the background if a new event arrives"; "Upon
    /// relaunch, you must still configure a location manager object and call this method to
    /// continue receiving location events." An Always app swiped away is relaunched (from iOS 7.1,
    /// every release Waymark models), and its launch names the service.
    @Test func anAlwaysAppSwipedAwayIsRelaunchedBySignificantChanges() async throws {
        let listener = Listener()
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.app.monitorsSignificantChanges = true
                $0.timeline = [.init(at: .seconds(60), .background), .init(at: .seconds(120), .terminate)]
            }, Self.drive(for: 1200), delegate: listener)
        let launches = Self.transitions(run).filter { $0.1 == .notRunning && $0.2 == .background }
        #expect(launches.count == 1)
        #expect(launches.first?.3 == "significantLocationChange")
        #expect(launches.first.map { $0.0 >= 300 } == true, "no sooner than 5 minutes after the first event")
        let delivered = Self.serviceLocations(run, "delivered")
        #expect(delivered.first?.0 == 0, "the first fix after the start is an event")
        #expect(delivered.count >= 3)
        #expect(delivered.allSatisfy { $0.1.reason == .significantLocationChange })
        for (a, b) in zip(delivered, delivered.dropFirst()) {
            #expect(b.0 - a.0 >= 300)
            #expect(Geodesic.distance(a.1.location!.coordinate, b.1.location!.coordinate) >= 500)
        }
        // After the relaunch, the app's delegate receives them through didUpdateLocations.
        #expect(listener.locations.count >= delivered.count)
        #expect(run.simulation.launchCause == .significantLocationChange)
    }

    /// The same with When In Use: "receive events while the app is in use"; no relaunch.
    @Test func aWhenInUseAppSwipedAwayIsNotRelaunched() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedWhenInUse
                $0.app.monitorsSignificantChanges = true
                $0.timeline = [.init(at: .seconds(60), .background), .init(at: .seconds(120), .terminate)]
            }, Self.drive(for: 1200))
        #expect(!Self.transitions(run).contains { $0.1 == .notRunning && $0.2 == .background })
        let dropped = Self.serviceLocations(run, "dropped")
        #expect(!dropped.isEmpty && dropped.allSatisfy { $0.1.reason == .notInUse })
        #expect(Self.serviceLocations(run, "delivered").map(\.0) == [0], "only the event on screen")
    }

    /// A suspended Always app is woken, and suspended again once the event's time is over; a
    /// relaunched app that does not start the service again does not receive the event.
    @Test func aSuspendedAppIsWokenAndARelaunchedOneMustRestartTheService() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.timeline = [
                    .init(at: .zero, .startMonitoringSignificantLocationChanges), .init(at: .seconds(60), .background),
                ]
            }, Self.drive(for: 700))
        let wake = Self.transitions(run).first { $0.1 == .suspended && $0.2 == .background }
        #expect(wake?.3 == "significantLocationChange")
        #expect(
            Self.transitions(run).contains { $0.0 == wake!.0 + 10 && $0.2 == .suspended },
            "suspended again after the wake's 10 s")

        // An app whose launch code does not start the service again (the tutorial app does, as
        // Apple asks) does not receive the events after a relaunch.
        final class ForgetfulApp: SimulatedApp {}
        // Started on screen, the app goes to the background, and the system ends it at 120 s.
        let endedBySystem = Self.scenario {
            $0.device.authorization = .authorizedAlways
            $0.timeline = [
                .init(at: .zero, .startMonitoringSignificantLocationChanges), .init(at: .seconds(60), .background),
                .init(at: .seconds(120), .systemTerminate),
            ]
        }
        let relaunched = try await Self.run(endedBySystem, Self.drive(for: 700), app: ForgetfulApp())
        #expect(Self.transitions(relaunched).contains { $0.2 == .background && $0.3 == "significantLocationChange" })
        let after = Self.serviceLocations(relaunched).filter { $0.0 > 120 }
        #expect(!after.isEmpty && after.allSatisfy { $0.1.action != .delivered })
        #expect(after.contains { $0.1.action == .held && $0.1.reason == .awaitingRestart })

        // One whose launch code stops the service (tracking turned off while it was away): the
        // event that relaunched it never reaches it, and the log says so.
        final class StoppingApp: SimulatedApp {
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                if inBackground { system.manager.stopMonitoringSignificantLocationChanges() }
            }
        }
        let stopped = try await Self.run(endedBySystem, Self.drive(for: 700), app: StoppingApp())
        let relaunch = try #require(
            Self.transitions(stopped).first { $0.2 == .background && $0.3 == "significantLocationChange" })
        let events = Self.serviceLocations(stopped).filter { $0.0 == relaunch.0 }
        #expect(events.map(\.1.action) == [.dropped], "\(events)")
        #expect(events.last?.1.reason == .serviceStopped)
        #expect(Self.serviceLocations(stopped).filter { $0.0 > relaunch.0 }.isEmpty, "the service stays stopped")
    }

    /// "If significant location updates are running and your app is terminated, this property is
    /// updated with the most recent location data when your app is relaunched (and you create a
    /// new location manager object)" (CLLocationManager.location): the managers of the relaunched
    /// process start with the service's latest location, as the service delivers it, before they
    /// start anything. Before, `location` was nil until a delivery. The first process's managers,
    /// with the service not yet running, start without one.
    @Test func aRelaunchedAppsNewManagersStartWithTheServicesLatestLocation() async throws {
        final class ReadsAtLaunch: SimulatedApp {
            var read: [(background: Bool, first: Location?, created: Location?)] = []
            var kept: [DeviceLocationManager] = []
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                let created = DeviceLocationManager()
                kept.append(created)
                read.append((inBackground, system.manager.location, created.location))
            }
        }
        let app = ReadsAtLaunch()
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.timeline = [
                    .init(at: .zero, .startMonitoringSignificantLocationChanges), .init(at: .seconds(60), .background),
                    .init(at: .seconds(120), .systemTerminate),
                ]
            }, Self.drive(for: 700), app: app)
        let relaunch = try #require(
            Self.transitions(run).first { $0.2 == .background && $0.3 == "significantLocationChange" })
        try #require(app.read.count >= 2, "\(app.read.count) launches")
        #expect(app.read[0].first == nil && app.read[0].created == nil, "the service did not run yet")
        // The change that relaunched the app, at the relaunch: held for the app that has not
        // started the service again, its position the service's.
        let change = try #require(Self.serviceLocations(run).first { $0.0 == relaunch.0 }?.1.location)
        for location in [app.read[1].first, app.read[1].created] {
            let location = try #require(location, "a relaunched process's manager has a location")
            #expect(location.coordinate == change.coordinate)
            #expect(location.horizontalAccuracy >= AccuracyModel.Positioning.wifi.accuracyFloor)
            #expect(location.timestamp == change.timestamp)
        }
        #expect(app.read[1].background)
    }

    /// The guards of that rule: the location is the app's to read only while it may receive
    /// locations. With the service stopped there is no "most recent location" of it; with
    /// Location Services off or the app denied a new manager reads none ("the value of this
    /// property is nil" when no location data was ever retrieved to it); with Precise Location off
    /// it is the reduced grid's ("approximate location"). The app stops the service while in
    /// use; the user changes a setting after the system ended the app, before anything relaunched
    /// it, so the service itself still has its location.
    @Test(arguments: [
        Scenario.Action.stopMonitoringSignificantLocationChanges, .setLocationServices(false),
        .setAuthorization(.denied), .setPreciseLocation(false),
    ])
    func aNewManagersLocationFollowsTheSettings(_ change: Scenario.Action) async throws {
        final class ReadsAtLaunch: SimulatedApp {
            var read: [Location?] = []
            var kept: [DeviceLocationManager] = []
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                let created = DeviceLocationManager()
                kept.append(created)
                read.append(created.location)
            }
        }
        let app = ReadsAtLaunch()
        _ = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.timeline = [
                    .init(at: .zero, .startMonitoringSignificantLocationChanges),
                    .init(at: .seconds(change == .stopMonitoringSignificantLocationChanges ? 50 : 121), change),
                    .init(at: .seconds(60), .background), .init(at: .seconds(120), .systemTerminate),
                    .init(at: .seconds(600), .foreground),
                ]
            }, Self.drive(for: 700), app: app)
        try #require(app.read.count >= 2, "\(app.read.count) launches")
        let later = app.read.dropFirst()
        if change == .setPreciseLocation(false) {
            for location in later {
                let location = try #require(location, "the service runs with approximate locations")
                #expect(location.horizontalAccuracy >= AccuracyModel.Positioning.reduced.accuracyFloor)
            }
        } else {
            #expect(later.allSatisfy { $0 == nil }, "\(change.name): \(later)")
        }
    }

    /// The scenario switch for the report that iOS 26.4 no longer relaunches a swiped-away app.
    @Test func theRelaunchAfterASwipeCanBeTurnedOff() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.app.monitorsSignificantChanges = true
                $0.system.locationRelaunchAfterSwipe = false
                $0.timeline = [.init(at: .seconds(60), .terminate)]
            }, Self.drive(for: 900))
        #expect(Self.transitions(run).last?.2 == .notRunning)
        let dropped = Self.serviceLocations(run, "dropped")
        #expect(!dropped.isEmpty && dropped.allSatisfy { $0.1.reason == .userTerminated })
    }

    // MARK: - Regions (W2)

    /// "If a region boundary is crossed while an app isn't running, that app is relaunched into
    /// the background to handle the event"; the delegate hears `didEnterRegion` and
    /// `didDetermineState`.
    @Test func aRegionEnteredAfterASwipeRelaunchesTheApp() async throws {
        let listener = Listener()
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        let ahead = Geodesic.destination(from: start, bearing: 90, distance: 5000)
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.app.regions = [CircularRegion(center: ahead, radius: 1000, identifier: "office")]
                $0.timeline = [.init(at: .seconds(30), .terminate)]
            }, Self.drive(for: 600), delegate: listener)
        let launch = Self.transitions(run).first { $0.1 == .notRunning && $0.2 == .background }
        #expect(launch?.3 == "region")
        // The first fix 100 m inside the boundary is at 170 s (4 250 m from the start, 750 m from
        // the centre); 20 s later, still inside, the entry is reported.
        #expect(launch?.0 == 190)
        #expect(listener.entered == ["office"])
        #expect(listener.states.first.map { $0.0 == "office" && $0.1 == .inside } == true)
    }

    /// A region's event that relaunched the app, whose launch code stops monitoring that region
    /// (the user turned the geofence off while the app was away), never reaches the delegate:
    /// it is written as dropped, `serviceStopped`. Before, the delegate heard of a region the app
    /// had just stopped monitoring. *Assumption*: Apple does not say; "Stops monitoring the
    /// specified region" (stopMonitoring(for:)).
    @Test func aRegionsLaunchEventGoesWhenTheLaunchCodeStopsTheRegion() async throws {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        let ahead = Geodesic.destination(from: start, bearing: 90, distance: 5000)
        let office = CircularRegion(center: ahead, radius: 1000, identifier: "office")
        final class StopsOnLaunch: SimulatedApp {
            let listener = Listener()
            let office: CircularRegion
            init(office: CircularRegion) { self.office = office }
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                system.manager.delegate = listener
                if inBackground {
                    for region in system.manager.monitoredRegions { system.manager.stopMonitoring(for: region) }
                } else {
                    system.manager.startMonitoring(for: office)
                }
            }
        }
        let app = StopsOnLaunch(office: office)
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.timeline = [.init(at: .seconds(30), .terminate)]
            }, Self.drive(for: 600), app: app)
        let launch = try #require(Self.transitions(run).first { $0.1 == .notRunning && $0.2 == .background })
        #expect(launch.3 == "region")
        #expect(app.listener.entered.isEmpty && app.listener.states.isEmpty, "the delegate hears nothing of it")
        let crossings = run.events.compactMap { event -> (RegionAction, ServiceDecision?, AuditReason?)? in
            guard case .region(let action, "office", _, let decision, let reason) = event.kind,
                action == .entered || action == .exited
            else { return nil }
            return (action, decision, reason)
        }
        #expect(crossings.count == 1 && crossings.first?.0 == .entered, "\(crossings)")
        #expect(crossings.first?.1 == .dropped && crossings.first?.2 == .serviceStopped, "\(crossings)")
    }

    /// "Because regions are a shared application resource, every active location manager object
    /// delivers this message to its associated delegate. It doesn't matter which location manager
    /// actually registered the specified region. If multiple location managers share a delegate
    /// object, that delegate receives the message multiple times" (locationManager(_:didExitRegion:)).
    @Test func aRegionsEventsComeToEveryManagerWhicheverRegisteredIt() async throws {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        let region = CircularRegion(
            center: Geodesic.destination(from: start, bearing: 90, distance: 3000), radius: 500, identifier: "depot")
        final class ThreeManagers: SimulatedApp {
            let shared = Listener()
            let own = Listener()
            var managers: [DeviceLocationManager] = []
            let region: CircularRegion
            init(region: CircularRegion) { self.region = region }
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                system.manager.delegate = shared
                let second = DeviceLocationManager()
                second.delegate = shared
                let third = DeviceLocationManager()
                third.delegate = own
                third.startMonitoring(for: region)
                managers = [second, third]
            }
        }
        let app = ThreeManagers(region: region)
        _ = try await Self.run(
            Self.scenario { $0.device.authorization = .authorizedAlways }, Self.drive(for: 400), app: app)
        #expect(app.own.entered == ["depot"] && app.own.exited == ["depot"], "the manager that registered it")
        #expect(app.shared.entered == ["depot", "depot"], "two managers, one delegate: twice")
        #expect(app.shared.exited == ["depot", "depot"])
    }

    /// "If the value is `CLAccuracyAuthorization.reducedAccuracy`, … your app can't use region
    /// monitoring" (CLLocationManager.accuracyAuthorization). An Always app with Precise Location
    /// off hears of no entry, on screen or off, and is not relaunched for one; its regions stay
    /// registered, and once the user turns Precise Location on again, the next crossing reaches
    /// it. The same holds for a `CLMonitor`'s condition.
    @Test func reducedAccuracyMeansNoRegionMonitoring() async throws {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        let region = { (km: Double, id: String) in
            CircularRegion(
                center: Geodesic.destination(from: start, bearing: 90, distance: km * 1000), radius: 500, identifier: id
            )
        }
        // Off screen and terminated: nothing, and no relaunch.
        let listener = Listener()
        let away = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.device.preciseLocation = false
                $0.app.regions = [region(5, "office")]
                $0.timeline = [.init(at: .seconds(30), .terminate)]
            }, Self.drive(for: 600), delegate: listener)
        #expect(listener.entered.isEmpty)
        #expect(!Self.transitions(away).contains { $0.1 == .notRunning && $0.2 == .background })
        #expect(
            away.events.contains {
                if case .region(.entered, "office", _, .dropped, .reducedAccuracy) = $0.kind { true } else { false }
            })

        // On screen, with a condition too; Precise Location back on between two regions.
        let onScreen = Listener()
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.device.preciseLocation = false
                $0.app.regions = [region(3, "first"), region(9, "second")]
                $0.timeline = [
                    .init(at: .seconds(5), .addCondition(monitor: "m", region(3, "condition"))),
                    .init(at: .seconds(250), .setPreciseLocation(true)),
                ]
            }, Self.drive(for: 600), delegate: onScreen)
        #expect(onScreen.entered == ["second"])
        for identifier in ["first", "condition"] {
            #expect(
                run.events.contains {
                    switch $0.kind {
                    case .region(.entered, identifier, _, .dropped, .reducedAccuracy): true
                    case .monitor(_, identifier, .satisfied, .dropped, .reducedAccuracy): true
                    default: false
                    }
                }, "\(identifier)")
        }
    }

    /// A When In Use app hears of region events only while in use; the 21st region fails.
    @Test func regionsNeedAlwaysOffScreenAndStopAtTwenty() async throws {
        let listener = Listener()
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        var regions = (0..<21).map {
            CircularRegion(
                center: Geodesic.destination(from: start, bearing: 0, distance: 10_000), radius: 100,
                identifier: "far\($0)")
        }
        regions[0] = CircularRegion(
            center: Geodesic.destination(from: start, bearing: 90, distance: 3000), radius: 1000, identifier: "near")
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedWhenInUse
                $0.app.regions = regions
                $0.timeline = [.init(at: .seconds(30), .background)]
            }, Self.drive(for: 600), delegate: listener)
        #expect(listener.failures.map(\.code) == [.regionMonitoringFailure])
        #expect(listener.entered.isEmpty)
        #expect(
            run.events.contains {
                if case .region(.entered, "near", _, .dropped, .notInUse) = $0.kind { true } else { false }
            })
    }

    // MARK: - Visits (W3)

    /// Walk 5 minutes, stop 15 minutes, walk on: a fix every 10 s.
    static func stopAndGo() -> ListSource {
        var events: [SourceEvent] = []
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        var position = 0.0
        for (i, t) in stride(from: 0, through: 1800, by: 10).enumerated() {
            if t < 300 || t >= 1200 { position += 14 }
            let location = Location(
                coordinate: Geodesic.destination(from: start, bearing: 90, distance: position), horizontalAccuracy: 5,
                timestamp: DeviceRuleTests.epoch.addingTimeInterval(Double(t)),
                provenance: Provenance(
                    source: .file(path: "stop", index: i), isSimulatedBySoftware: true, fixMode: .threeD))
            events.append(SourceEvent(offset: .seconds(t), kind: .fix(location), index: i, segment: 0))
        }
        return ListSource(events)
    }

    /// "Enabling visit events for one location manager enables visit events for all other
    /// location manager objects in your app. When a new visit event arrives, the location
    /// manager object delivers the event to the locationManager(_:didVisit:) method of its
    /// delegate" (startMonitoringVisits()): a manager that never asked hears them too.
    @Test func visitsComeToEveryManagerOnceOneStartsThem() async throws {
        final class TwoManagers: SimulatedApp {
            let first = Listener()
            let second = Listener()
            var other: DeviceLocationManager?
            func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
                system.manager.delegate = first
                let other = DeviceLocationManager()
                other.delegate = second
                other.startMonitoringVisits()
                self.other = other
            }
        }
        let app = TwoManagers()
        _ = try await Self.run(
            Self.scenario { $0.device.authorization = .authorizedAlways }, Self.stopAndGo(), app: app)
        #expect(app.second.visits.count == 2, "an arrival and its departure")
        #expect(app.first.visits == app.second.visits, "the first manager never started visits")
    }

    /// "If your app is terminated while this service is active, the system relaunches your app
    /// when new visit events are ready to be delivered … You don't need to call this method again."
    @Test func aVisitRelaunchesTheApp() async throws {
        let listener = Listener()
        let run = try await Self.run(
            Self.scenario {
                $0.device.authorization = .authorizedAlways
                $0.app.monitorsVisits = true
                $0.timeline = [.init(at: .seconds(60), .terminate)]
            }, Self.stopAndGo(), delegate: listener)
        #expect(Self.transitions(run).contains { $0.1 == .notRunning && $0.2 == .background && $0.3 == "visit" })
        #expect(listener.visits.count == 2)
        #expect(listener.visits.first?.isArrival == true)
        #expect(listener.visits.last.map { !$0.isArrival } == true)
    }

    // MARK: - Background pushes (W4)

    /// A push wakes a suspended app and launches one the system ended, for 30 s at most; it does
    /// not launch an app the user swiped away ("the system does not automatically launch your app
    /// if the user has force-quit it").
    @Test func silentPushesBeforeAndAfterASwipe() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.remoteNotification]
                $0.timeline = [
                    .init(at: .seconds(10), .push(contentAvailable: true)),
                    .init(at: .seconds(30), .background),
                    .init(at: .seconds(60), .push(contentAvailable: true)),
                    .init(at: .seconds(100), .systemTerminate),
                    .init(at: .seconds(120), .push(contentAvailable: true)),
                    .init(at: .seconds(200), .terminate),
                    .init(at: .seconds(220), .push(contentAvailable: true)),
                ]
            }, .walk(for: 300))
        let pushes = run.events.compactMap { e -> (Int, String, String?)? in
            guard case .push(let action, _, let reason, _) = e.kind else { return nil }
            return (Int(e.offset.components.seconds), action.rawValue, reason?.rawValue)
        }
        #expect(pushes.contains { $0 == (10, "delivered", "foreground") })
        #expect(pushes.contains { $0 == (60, "delivered", "woken") })
        #expect(pushes.contains { $0 == (120, "delivered", "woken") })
        #expect(pushes.contains { $0 == (220, "dropped", "userTerminated") })
        let wakes = Self.transitions(run).filter { $0.3 == "remoteNotification" }
        #expect(wakes.map(\.0) == [60, 120])
        #expect(wakes.map(\.1) == [.suspended, .notRunning])
    }

    /// "Your app has 30 seconds to perform any tasks and call the provided completion handler";
    /// overrun terminates the app, as with fetch.
    @Test func aPushHandlerThatOverrunsGetsTheAppTerminated() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.remoteNotification]
                $0.app.pushHandlerDuration = .seconds(40)
                $0.timeline = [
                    .init(at: .seconds(30), .background), .init(at: .seconds(60), .push(contentAvailable: true)),
                ]
            }, .walk(for: 300))
        #expect(
            run.events.contains {
                $0.offset == .seconds(90) && $0.kind == .terminated(reason: .remoteNotificationBudgetExceeded)
            })
    }

    /// Throttled pushes are held, the newest only, and delivered when the user launches the app;
    /// "If something force quits or kills the app, the system discards the held notification."
    @Test func throttledPushesAreHeldNewestFirstUntilTheUserLaunchesTheApp() async throws {
        var s = Self.scenario {
            $0.info.backgroundModes = [.remoteNotification]
            $0.app.launchAt = nil
            $0.system.pushesPerHour = 0
            $0.timeline = [
                .init(at: .seconds(10), .push(contentAvailable: true)),
                .init(at: .seconds(20), .push(contentAvailable: true)),
                .init(at: .seconds(30), .foreground),
            ]
        }
        var run = try await Self.run(s, .walk(for: 60))
        var pushes = run.events.compactMap { e -> String? in
            if case .push(let action, _, let reason, _) = e.kind {
                return "\(action) \(reason?.rawValue ?? "")"
            } else {
                return nil
            }
        }
        #expect(pushes == ["held throttled", "discarded newerHeld", "held throttled", "delivered held", "completed "])
        s.app.launchAt = .zero
        s.timeline = [
            .init(at: .seconds(5), .background), .init(at: .seconds(10), .push(contentAvailable: true)),
            .init(at: .seconds(20), .systemTerminate),
        ]
        run = try await Self.run(s, .walk(for: 60))
        pushes = run.events.compactMap { e -> String? in
            if case .push(let action, _, let reason, _) = e.kind {
                return "\(action) \(reason?.rawValue ?? "")"
            } else {
                return nil
            }
        }
        #expect(pushes == ["held throttled", "discarded terminated"])
    }

    // MARK: - BGTaskScheduler (W6, W7)

    /// An app-refresh task runs from its earliest begin date, waits while the app is on screen,
    /// and has about 30 s: its expiration handler runs, and a task still not completed gets the
    /// app terminated ("Not calling setTaskCompleted(success:) before the time for the task
    /// expires may result in the system killing your app").
    @Test func anAppRefreshTaskRunsWhenDueAndMustComplete() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.app.resubmitsAppRefresh = false
                $0.timeline = [
                    .init(at: .seconds(10), .submitAppRefresh(earliestBegin: .seconds(60))),
                    .init(at: .seconds(120), .background),
                ]
            }, .walk(for: 300))
        let tasks = run.events.compactMap { e -> (Int, String, String?)? in
            guard case .scheduledTask(let action, _, _, _, let reason, let begin, _) = e.kind else { return nil }
            let why = begin.map { "earliestBegin at \(DurationText.format(max(.zero, $0)))" } ?? reason?.rawValue
            return (Int(e.offset.components.seconds), action.rawValue, why)
        }
        #expect(tasks.contains { $0 == (70, "waiting", "appInForeground") })
        #expect(tasks.contains { $0.0 == 120 && $0.1 == "began" })
        #expect(tasks.contains { $0.0 == 125 && $0.1 == "completed" })

        let overrun = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.app.resubmitsAppRefresh = false
                $0.app.refreshTaskDuration = .seconds(60)
                $0.app.endsTaskOnExpiration = false
                $0.timeline = [
                    .init(at: .seconds(10), .background),
                    .init(at: .seconds(10), .submitAppRefresh(earliestBegin: nil)),
                ]
            }, .walk(for: 300))
        #expect(overrun.events.contains { $0.kind == .terminated(reason: .scheduledTaskExpired) })
        #expect(
            overrun.events.contains {
                $0.offset == .seconds(40) && $0.kind == .terminated(reason: .scheduledTaskExpired)
            })

        let polite = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.app.resubmitsAppRefresh = false
                $0.app.refreshTaskDuration = .seconds(60)
                $0.timeline = [
                    .init(at: .seconds(10), .background),
                    .init(at: .seconds(10), .submitAppRefresh(earliestBegin: nil)),
                ]
            }, .walk(for: 300))
        #expect(!polite.events.contains { if case .terminated = $0.kind { true } else { false } })
        #expect(
            polite.events.contains {
                if case .scheduledTask(.completed, _, _, false, _, _, _) = $0.kind { true } else { false }
            })
    }

    /// A processing task that requires external power waits for the charger; Background App
    /// Refresh off makes the submission fail with `unavailable`, and turns background fetch off.
    @Test func settingsGateScheduledTasksAndFetch() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.info.backgroundModes = [.processing, .fetch]
                $0.timeline = [
                    .init(at: .seconds(5), .background),
                    .init(at: .seconds(5), .submitProcessing(.init(requiresExternalPower: true))),
                    .init(at: .seconds(100), .setCharging(true)),
                    .init(at: .seconds(200), .setBackgroundAppRefresh(false)),
                    .init(at: .seconds(250), .foreground),
                    .init(at: .seconds(260), .submitAppRefresh(earliestBegin: nil)),
                ]
            }, .walk(for: 300))
        #expect(Self.transitions(run).contains { $0.0 == 100 && $0.3 == "backgroundProcessing" })
        #expect(
            run.events.contains {
                $0.offset == .seconds(260)
                    && $0.kind
                        == .scheduledTask(
                            action: .rejected, kind: .appRefresh, identifier: TutorialApp.refreshTaskIdentifier,
                            success: nil, reason: .unavailable)
            })

        var fetch = Self.scenario {
            $0.info.backgroundModes = [.fetch]
            $0.app.fetchInterval = .every(.seconds(60))
            $0.device.power.lowPowerMode = true
            $0.timeline = [.init(at: .seconds(5), .background)]
        }
        let lowPower = try await Self.run(fetch, .walk(for: 300))
        #expect(
            lowPower.events.contains {
                $0.kind == .fetch(action: .skipped, result: nil, synced: nil, reason: .lowPowerMode)
            })
        #expect(!lowPower.events.contains { $0.kind == .fetch(action: .began, result: nil, synced: nil, reason: nil) })
        fetch.device.power.lowPowerMode = false
        let normal = try await Self.run(fetch, .walk(for: 300))
        #expect(normal.events.contains { $0.kind == .fetch(action: .began, result: nil, synced: nil, reason: nil) })
    }

    // MARK: - Audio (W8)

    /// "As long as it is playing audio … the app continues to run in the background"; it does not
    /// make a When In Use app "in use" (Apple's three cases are the foreground, the grace period
    /// and the indicator).
    @Test func audioKeepsTheAppRunningButNotInUse() async throws {
        func run(_ status: AuthorizationStatus, modes: BackgroundModes) async throws -> Run {
            try await Self.run(
                Self.scenario {
                    $0.device.authorization = status
                    $0.info.backgroundModes = modes
                    $0.timeline = [
                        .init(at: .seconds(10), .playAudio), .init(at: .seconds(60), .background),
                        .init(at: .seconds(200), .stopAudio),
                    ]
                }, .walk(for: 300))
        }
        let whenInUse = try await run(.authorizedWhenInUse, modes: [.audio])
        #expect(whenInUse.reasons(from: 70, to: 200) == [.notInUse])
        #expect(whenInUse.fixes(from: 70, to: 200).allSatisfy { $0.appState == .background })
        let always = try await run(.authorizedAlways, modes: [.audio])
        #expect(always.reasons(from: 70, to: 200) == [.backgroundAudio])
        #expect(always.reasons(from: 210) == [.suspended], "suspended once the audio stops")
        let noMode = try await run(.authorizedAlways, modes: [])
        #expect(noMode.reasons(from: 70, to: 200) == [.suspended])
    }

    // MARK: - Background URL session (W9)

    /// "Transfers … continue even when the app itself is suspended or terminated", and the app is
    /// "automatically relaunched in the background" to handle them; "If the user terminates the app
    /// from the multitasking screen, the system cancels all of the session's background transfers."
    @Test func aBackgroundUploadWakesTheAppAndASwipeCancelsIt() async throws {
        let directory = temporaryPath("-uploads")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenario = Self.scenario {
            $0.app.uploadsInBackground = true
            $0.system.transferDuration = .seconds(60)
            $0.timeline = [.init(at: .seconds(30), .background), .init(at: .seconds(50), .systemTerminate)]
        }
        let simulation = Simulation(scenario: scenario, epoch: DeviceRuleTests.epoch)
        simulation.uploadDirectory = directory
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(ListSource.walk(for: 200))
        let run = Run(simulation: simulation, events: recorder.events)
        #expect(Self.transitions(run).contains { $0.0 == 90 && $0.1 == .notRunning && $0.3 == "urlSession" })
        let uploaded = try String(contentsOfFile: directory + "/upload-1.csv", encoding: .utf8)
        #expect(uploaded.split(separator: "\n").count == 3, "the locations delivered before it left (0–20 s)")

        let swiped = try await Self.run(
            Self.scenario {
                $0.app.uploadsInBackground = true
                $0.timeline = [.init(at: .seconds(30), .background), .init(at: .seconds(40), .terminate)]
            }, .walk(for: 200))
        #expect(
            swiped.events.contains {
                $0.kind == .transfer(action: .cancelled, task: 1, count: 3, reason: .userTerminated)
            })
        #expect(
            !swiped.events.contains { if case .transfer(.completed, _, _, _, _, _) = $0.kind { true } else { false } })
    }

    /// The upload directory may be shared: a run adds new files and touches nothing there. Names
    /// already taken (an earlier run's file, a link to another file, a link to nowhere, a
    /// directory) are skipped, never opened, followed or replaced (issue 27, item 16).
    @Test func uploadsAreNewFilesNumberedAroundWhatIsThere() async throws {
        let directory = temporaryPath("-shared-uploads")
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: directory) }
        let victim = directory + "/victim.txt"
        try "keep me\n".write(toFile: victim, atomically: false, encoding: .utf8)
        try "an earlier run\n".write(toFile: directory + "/upload-1.csv", atomically: false, encoding: .utf8)
        try fm.createSymbolicLink(atPath: directory + "/upload-2.csv", withDestinationPath: victim)
        try fm.createSymbolicLink(atPath: directory + "/upload-3.csv", withDestinationPath: directory + "/planted")
        try fm.createDirectory(atPath: directory + "/upload-5.csv", withIntermediateDirectories: false)

        let scenario = Self.scenario {
            $0.app.uploadsInBackground = true
            $0.system.transferDuration = .seconds(20)
            $0.timeline = [
                .init(at: .seconds(30), .background), .init(at: .seconds(100), .foreground),
                .init(at: .seconds(130), .background),
            ]
        }
        let simulation = Simulation(scenario: scenario, epoch: DeviceRuleTests.epoch)
        simulation.uploadDirectory = directory
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(ListSource.walk(for: 300))

        let completed = recorder.events.filter {
            if case .transfer(.completed, _, _, _, _, _) = $0.kind { true } else { false }
        }
        #expect(completed.count == 2)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
        #expect(try String(contentsOfFile: directory + "/upload-1.csv", encoding: .utf8) == "an earlier run\n")
        #expect(!fm.fileExists(atPath: directory + "/planted"))
        #expect(try fm.destinationOfSymbolicLink(atPath: directory + "/upload-2.csv") == victim)
        for name in ["upload-4.csv", "upload-6.csv"] {
            var isDirectory: ObjCBool = true
            #expect(
                fm.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue,
                "\(name)")
            let lines = try String(contentsOfFile: directory + "/" + name, encoding: .utf8).split(separator: "\n")
            #expect(!lines.isEmpty, "\(name)")
        }
        #expect(!fm.fileExists(atPath: directory + "/upload-7.csv"))
    }

    // MARK: - requestLocation() and temporary full accuracy (W10, W11)

    /// "Only one location fix is reported to the delegate, after which location services are
    /// stopped. If a location fix cannot be determined in a timely manner, the location manager
    /// calls the delegate's locationManager(_:didFailWithError:) … locationUnknown."
    @Test func requestLocationDeliversOneLocationOrFails() async throws {
        let listener = Listener()
        let run = try await Self.run(
            Self.scenario {
                $0.app.startsUpdates = false
                $0.timeline = [.init(at: .seconds(15), .requestLocation)]
            }, .walk(for: 120), delegate: listener)
        #expect(Self.serviceLocations(run, "delivered").map(\.0) == [20])
        #expect(listener.locations.count == 1)

        let late = Listener()
        _ = try await Self.run(
            Self.scenario {
                $0.app.startsUpdates = false
                $0.timeline = [.init(at: .seconds(200), .requestLocation), .init(at: .seconds(300), .background)]
            }, .walk(for: 120), delegate: late)
        #expect(late.locations.isEmpty)
        #expect(late.errors.map(\.code) == [.locationUnknown])
    }

    /// "Your app can access that data in the foreground or in the background, until its permission
    /// automatically expires. Expiration is postponed while your app is actively in use"; the
    /// request "always fails with a CLError.Code.promptDeclined error" without the purpose key.
    @Test func temporaryFullAccuracyLastsWhileTheAppIsInUse() async throws {
        let run = try await Self.run(
            Self.scenario {
                $0.device.preciseLocation = false
                $0.info.temporaryUsageDescriptionKeys = ["navigation"]
                $0.user.temporaryFullAccuracy = true
                $0.timeline = [
                    .init(at: .seconds(10), .requestTemporaryFullAccuracy(purposeKey: "navigation")),
                    .init(at: .seconds(100), .background),
                    .init(at: .seconds(150), .foreground),
                    .init(at: .seconds(160), .requestTemporaryFullAccuracy(purposeKey: "unknown")),
                ]
            }, .walk(for: 200))
        let changes = run.events.compactMap { e -> (Int, AccuracyAuthorization)? in
            if case .accuracyChanged(_, let to) = e.kind { (Int(e.offset.components.seconds), to) } else { nil }
        }
        #expect(changes.map(\.0) == [10, 105])
        #expect(changes.map(\.1) == [.fullAccuracy, .reducedAccuracy])
        #expect(
            run.fixes(from: 20, to: 100).allSatisfy { $0.accuracy == .fullAccuracy && $0.positioning == .satellite })
        #expect(run.fixes(from: 110, to: 150).allSatisfy { $0.accuracy == .reducedAccuracy })
        #expect(
            run.events.contains {
                $0.kind == .prompt(prompt: .temporaryFullAccuracy, phase: .declined, answer: .noSuchPurposeKey)
            })
    }
}

/// The rules a second read found untested, and the fixes it led to.
@MainActor @Suite struct WakeServiceEdgeTests {
    typealias T = WakeServiceSimulationTests

    /// Background App Refresh off (or Low Power Mode) keeps location services from waking or
    /// launching the app ("it may launched or resumed in the background to handle significant
    /// location changes", UIApplication.h); a running app still gets the events.
    @Test func backgroundAppRefreshOffStopsLocationWakes() async throws {
        let run = try await T.run(
            T.scenario {
                $0.device.authorization = .authorizedAlways
                $0.device.power.lowPowerMode = true
                $0.app.monitorsSignificantChanges = true
                $0.timeline = [.init(at: .seconds(30), .terminate)]
            }, T.drive(for: 900))
        #expect(!T.transitions(run).contains { $0.2 == .background })
        let dropped = T.serviceLocations(run, "dropped")
        #expect(!dropped.isEmpty && dropped.allSatisfy { $0.1.reason == .lowPowerMode })
        #expect(T.serviceLocations(run, "delivered").map(\.0) == [0], "on screen it was delivered")

        // Nor is a suspended app resumed (mutation m26: the rule held for launches only), with
        // Background App Refresh off as with Low Power Mode.
        let suspended = try await T.run(
            T.scenario {
                $0.device.authorization = .authorizedAlways
                $0.device.power.backgroundAppRefresh = false
                $0.timeline = [
                    .init(at: .zero, .startMonitoringSignificantLocationChanges), .init(at: .seconds(60), .background),
                ]
            }, T.drive(for: 700))
        #expect(!T.transitions(suspended).contains { $0.1 == .suspended && $0.2 == .background }, "never woken")
        let droppedWhileSuspended = T.serviceLocations(suspended, "dropped").filter { $0.0 > 60 }
        #expect(
            !droppedWhileSuspended.isEmpty
                && droppedWhileSuspended.allSatisfy { $0.1.reason == .backgroundAppRefreshOff },
            "\(droppedWhileSuspended)")
    }

    /// A swipe is remembered until the user launches the app: a relaunch by a location service
    /// does not clear it, so a later push still launches nothing ("the user must relaunch your
    /// app"). And a system-ended app swiped from the switcher counts as swiped.
    @Test func aSwipeLastsUntilTheUserLaunchesTheApp() async throws {
        let run = try await T.run(
            T.scenario {
                $0.device.authorization = .authorizedAlways
                $0.info.backgroundModes = [.remoteNotification]
                $0.app.monitorsSignificantChanges = true
                $0.timeline = [
                    .init(at: .seconds(30), .terminate),
                    .init(at: .seconds(700), .systemTerminate),
                    .init(at: .seconds(710), .push(contentAvailable: true)),
                ]
            }, T.drive(for: 800))
        #expect(T.transitions(run).contains { $0.1 == .notRunning && $0.3 == "significantLocationChange" })
        #expect(run.events.contains { $0.kind == .push(action: .dropped, result: nil, reason: .userTerminated) })

        let swipedAfterSystem = try await T.run(
            T.scenario {
                $0.info.backgroundModes = [.remoteNotification]
                $0.timeline = [
                    .init(at: .seconds(10), .background), .init(at: .seconds(30), .systemTerminate),
                    .init(at: .seconds(40), .terminate), .init(at: .seconds(50), .push(contentAvailable: true)),
                ]
            }, .walk(for: 100))
        #expect(
            swipedAfterSystem.events.contains {
                $0.kind == .push(action: .dropped, result: nil, reason: .userTerminated)
            })
    }

    /// A held (throttled) push comes when the user opens the app, not only at a cold launch.
    @Test func aHeldPushComesWhenTheUserOpensTheApp() async throws {
        let run = try await T.run(
            T.scenario {
                $0.info.backgroundModes = [.remoteNotification]
                $0.system.pushesPerHour = 0
                $0.timeline = [
                    .init(at: .seconds(10), .background), .init(at: .seconds(30), .push(contentAvailable: true)),
                    .init(at: .seconds(60), .foreground),
                ]
            }, .walk(for: 100))
        #expect(
            run.events.contains {
                $0.offset == .seconds(60) && $0.kind == .push(action: .delivered, result: nil, reason: .held)
            })
    }

    /// "The system terminates any background processing tasks running when the user starts using
    /// the device": the task ends, unsuccessful, and the app is not terminated.
    @Test func aProcessingTaskEndsWhenTheUserOpensTheApp() async throws {
        let run = try await T.run(
            T.scenario {
                $0.info.backgroundModes = [.processing]
                $0.app.processingTaskDuration = .seconds(200)
                $0.timeline = [
                    .init(at: .seconds(10), .background), .init(at: .seconds(10), .submitProcessing(.init())),
                    .init(at: .seconds(60), .foreground),
                ]
            }, .walk(for: 400))
        #expect(
            run.events.contains {
                $0.offset == .seconds(60)
                    && $0.kind
                        == .scheduledTask(
                            action: .completed, kind: .processing, identifier: TutorialApp.processingTaskIdentifier,
                            success: false, reason: nil)
            })
        #expect(!run.events.contains { if case .terminated = $0.kind { true } else { false } })
    }

    /// A handler that resubmits its request at once, and completes at once, cannot run for ever in
    /// one instant: the resubmission runs a second later at the earliest.
    @Test func anImmediateResubmissionDoesNotSpinInOneInstant() async throws {
        let run = try await T.run(
            T.scenario {
                $0.info.backgroundModes = [.fetch]
                $0.app.refreshTaskDuration = .zero
                $0.system.minimumFetchInterval = .zero
                $0.timeline = [
                    .init(at: .seconds(10), .background),
                    .init(at: .seconds(10), .submitAppRefresh(earliestBegin: nil)),
                ]
                $0.end = .seconds(15)
            }, .walk(for: 20))
        let began = run.events.filter {
            if case .scheduledTask(.began, _, _, _, _, _, _) = $0.kind { true } else { false }
        }
        #expect(began.map { Int($0.offset.components.seconds) } == [10, 11, 12, 13, 14, 15])
    }

    /// Regions and CLMonitor conditions share the 20.
    @Test func regionsAndConditionsShareTheLimit() async throws {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        var timeline: [Scenario.TimedAction] = (0..<20).map { i in
            .init(
                at: .seconds(5),
                .addCondition(
                    monitor: "m",
                    CircularRegion(
                        center: Geodesic.destination(from: start, bearing: 0, distance: 5000), radius: 100,
                        identifier: "c\(i)")))
        }
        timeline.append(
            .init(at: .seconds(6), .startMonitoring(CircularRegion(center: start, radius: 100, identifier: "r"))))
        let listener = T.Listener()
        var s = Scenario()
        s.device.authorization = .authorizedAlways
        s.timeline = timeline
        let run = try await T.run(s, .walk(for: 30), delegate: listener)
        #expect(listener.failures.map(\.code) == [.regionMonitoringFailure])
        #expect(
            run.events.contains {
                $0.kind == .region(action: .failed, identifier: "r", state: nil, decision: nil, reason: .limitReached)
            })
    }

    /// "Calling this method while location services are already running does nothing"; starting
    /// updates "cancels any pending request".
    @Test func requestLocationWhileUpdatingDoesNothingAndStartingCancelsIt() async throws {
        let busy = try await T.run(
            T.scenario { $0.timeline = [.init(at: .seconds(15), .requestLocation)] }, .walk(for: 60))
        #expect(T.serviceLocations(busy).isEmpty)
        #expect(
            busy.events.contains {
                if case .diagnostic(let m) = $0.kind { m.contains("requestLocation") } else { false }
            })
        let cancelled = try await T.run(
            T.scenario {
                $0.app.startsUpdates = false
                $0.timeline = [.init(at: .seconds(15), .requestLocation), .init(at: .seconds(16), .startUpdates)]
            }, .walk(for: 60))
        #expect(
            cancelled.events.contains {
                if case .serviceLocation(let r) = $0.kind { r.action == .cancelled } else { false }
            })
        #expect(T.serviceLocations(cancelled, "delivered").isEmpty)
    }
}

@Suite struct SwipeAfterSystemTerminationTests {
    /// The system ended the app, which stays in the app switcher: a swipe marks it swiped, with no
    /// state change and nothing for the app's code; before any launch there is nothing to swipe.
    @Test func aSwipeOfASystemEndedAppMarksItSwiped() {
        var m = AppLifecycleStateMachine(gracePeriod: .seconds(5), state: .notRunning(terminated: .system))
        #expect(!m.wasTerminatedByUser)
        #expect(m.handle(.terminate(.user), at: .zero).isEmpty)
        #expect(m.wasTerminatedByUser && m.state == .notRunning(terminated: .user))
        var never = AppLifecycleStateMachine(gracePeriod: .seconds(5))
        #expect(never.handle(.terminate(.user), at: .zero).isEmpty)
        #expect(!never.wasTerminatedByUser)
    }
}

/// More of the rules a second read found untested.
@MainActor @Suite struct WakeServiceMoreTests {
    typealias T = WakeServiceSimulationTests

    /// Without network an upload fails and is retried; the retry after the network is back
    /// completes it.
    @Test func anUploadWithoutNetworkIsRetried() async throws {
        let run = try await T.run(
            T.scenario {
                $0.app.uploadsInBackground = true
                $0.device.power.network = false
                $0.system.transferDuration = .seconds(10)
                $0.system.transferRetryAfter = .seconds(30)
                $0.timeline = [.init(at: .seconds(30), .background), .init(at: .seconds(75), .setNetwork(true))]
            }, .walk(for: 200))
        let transfers = run.events.compactMap { e -> (Int, String)? in
            if case .transfer(let action, _, _, _, _, _) = e.kind {
                (Int(e.offset.components.seconds), action.rawValue)
            } else {
                nil
            }
        }
        #expect(transfers.map(\.1) == ["scheduled", "failed", "failed", "completed", "eventsHandled"])
        #expect(transfers.map(\.0) == [30, 40, 70, 100, 100])
    }

    /// `cancel(taskRequestWithIdentifier:)` removes a pending request; a request whose identifier
    /// has no registered handler is dropped when it comes due (`notRegistered`).
    @Test func aCancelledRequestNeverRunsAndAnUnregisteredOneIsDropped() async throws {
        final class PlainApp: SimulatedApp {}
        let simulation = Simulation(
            scenario: T.scenario { $0.info.backgroundModes = [.fetch] }, epoch: DeviceRuleTests.epoch, app: PlainApp())
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        simulation.start(source: "walk")
        simulation.advance(to: .zero)
        try simulation.taskScheduler.submit(.init(identifier: "gone", kind: .appRefresh, earliestBegin: .seconds(30)))
        simulation.taskScheduler.cancel(taskRequestWithIdentifier: "gone")
        #expect(simulation.taskScheduler.pendingTaskRequests.isEmpty)
        try simulation.taskScheduler.submit(.init(identifier: "nobody", kind: .appRefresh, earliestBegin: .seconds(30)))
        simulation.perform(.background)
        simulation.advance(to: .seconds(60))
        simulation.finish()
        let tasks = recorder.events.compactMap { e -> String? in
            if case .scheduledTask(let action, _, let id, _, let reason, let begin, _) = e.kind {
                "\(action) \(id) \(begin.map { "earliestBegin at \(DurationText.format(max(.zero, $0)))" } ?? reason?.rawValue ?? "")"
            } else {
                nil
            }
        }
        #expect(tasks.contains("cancelled gone "))
        #expect(tasks.contains("dropped nobody notRegistered"))
        #expect(!tasks.contains { $0.hasPrefix("began") })
    }

    /// Temporary full accuracy is declined in the background, and with full accuracy already.
    @Test func temporaryFullAccuracyIsDeclinedWhereAppleSays() async throws {
        let run = try await T.run(
            T.scenario {
                $0.user.temporaryFullAccuracy = true
                $0.app.beginsBackgroundTask = true
                $0.timeline = [
                    .init(at: .seconds(10), .requestTemporaryFullAccuracy(purposeKey: "nav")),
                    .init(at: .seconds(20), .setPreciseLocation(false)),
                    .init(at: .seconds(30), .background),
                    .init(at: .seconds(40), .requestTemporaryFullAccuracy(purposeKey: "nav")),
                ]
            }, .walk(for: 60))
        let declined = run.events.compactMap { e -> String? in
            if case .prompt(.temporaryFullAccuracy, .declined, let why) = e.kind { why?.rawValue } else { nil }
        }
        #expect(declined == ["alreadyFullAccuracy", "notInForeground"])
    }

    /// With reduced accuracy, a visit's place is on the reduced grid, with its accuracy.
    @Test func aVisitUnderReducedAccuracyIsCoarse() async throws {
        let listener = T.Listener()
        var events: [SourceEvent] = []
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        for (i, t) in stride(from: 0, through: 900, by: 30).enumerated() {
            let location = Location(
                coordinate: start, horizontalAccuracy: 5,
                timestamp: DeviceRuleTests.epoch.addingTimeInterval(Double(t)),
                provenance: Provenance(
                    source: .file(path: "still", index: i), isSimulatedBySoftware: true, fixMode: .threeD))
            events.append(SourceEvent(offset: .seconds(t), kind: .fix(location), index: i, segment: 0))
        }
        _ = try await T.run(
            T.scenario {
                $0.device.authorization = .authorizedAlways
                $0.device.preciseLocation = false
                $0.app.monitorsVisits = true
            }, ListSource(events), delegate: listener)
        let visit = try #require(listener.visits.first)
        #expect(visit.horizontalAccuracy >= AccuracyModel.Positioning.reduced.accuracyFloor)
        #expect(
            visit.coordinate == AccuracyModel.coarsen(start, radius: AccuracyModel.Positioning.reduced.accuracyFloor))
    }
}
