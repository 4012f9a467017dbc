import Foundation
import Testing

@testable import Waymark

/// The rules of the services that wake or relaunch an app, one test each, on the pure state
/// machines, each citing the Apple page it follows (`docs/apple-citations.md`, W1–W12).
@Suite struct WakeServiceMachineTests {
    static let origin = Coordinate(latitude: 47.26, longitude: 11.39)

    static func fix(_ metresEast: Double, index: Int = 0) -> SignificantChangeStateMachine.Fix {
        let c = Geodesic.destination(from: origin, bearing: 90, distance: metresEast)
        return SignificantChangeStateMachine.Fix(
            location: Location(
                coordinate: c, horizontalAccuracy: 5, timestamp: Date(timeIntervalSince1970: 1_714_550_400),
                provenance: Provenance(
                    source: .file(path: "t", index: index), isSimulatedBySoftware: true, fixMode: .threeD)),
            index: index, segment: 0)
    }

    static func east(_ metres: Double) -> Coordinate {
        Geodesic.destination(from: origin, bearing: 90, distance: metres)
    }

    /// The significant-change service's audit event, the app in state `app`.
    static func significant(_ action: ServiceLocationAction, _ app: AppState = .background) -> DeviceAction {
        .record(.serviceLocation(.init(service: .significantLocationChange, action: action, appState: app)))
    }

    /// A significant change handed to the rules to deliver.
    static func report(_ fix: SignificantChangeStateMachine.Fix) -> DeviceAction {
        .post(.serviceEvent(.significantChange(fix)))
    }

    /// A region's start as the manager's regions have it: the audit event and `didStartMonitoring`.
    static func started(_ region: CircularRegion) -> [DeviceAction] {
        [
            .record(.region(action: .started, identifier: region.identifier, state: nil, decision: nil, reason: nil)),
            .call(.delegate(.didStartMonitoring(region), to: .all)),
        ]
    }

    /// `requestState(for:)`'s answer: the audit event and `didDetermineState`.
    static func determined(_ region: CircularRegion, _ state: RegionState) -> [DeviceAction] {
        [
            .record(
                .region(action: .determined, identifier: region.identifier, state: state, decision: nil, reason: nil)),
            .call(.delegate(.didDetermineState(state, region), to: .all)),
        ]
    }

    /// A region's failure: the audit event and `monitoringDidFail` with `regionMonitoringFailure`.
    static func failed(_ region: CircularRegion, _ failure: RegionMonitorStateMachine.Failure) -> [DeviceAction] {
        [
            .record(
                .region(
                    action: .failed, identifier: region.identifier, state: nil, decision: nil,
                    reason: failure.auditReason)),
            .call(
                .delegate(
                    .monitoringDidFail(region, LocationError(.regionMonitoringFailure, reason: failure.rawValue)),
                    to: .all)),
        ]
    }

    /// A crossing handed to the rules to deliver.
    static func crossed(_ region: CircularRegion, _ state: RegionState) -> [DeviceAction] {
        [.post(.serviceEvent(.region(region, state)))]
    }

    // MARK: - Significant-change service (W1)

    /// "Apps can expect a notification as soon as the device moves 500 meters or more from its
    /// previous notification. It should not expect notifications more frequently than once every
    /// five minutes." (startMonitoringSignificantLocationChanges())
    @Test func aSignificantChangeNeedsFiveHundredMetresAndFiveMinutes() {
        var m = SignificantChangeStateMachine()
        #expect(m.handle(.start(at: .zero, cached: nil, app: .active)) == [Self.significant(.started, .active)])
        // The first fix after the start is the first event ("usually the most recently cached").
        #expect(m.handle(.fix(Self.fix(0), at: .seconds(1))) == [Self.report(Self.fix(0))])
        // 2 km in 2 minutes: far enough, too soon.
        #expect(m.handle(.fix(Self.fix(2000), at: .seconds(121))).isEmpty)
        // 10 minutes later, 400 m away: late enough, not far enough.
        var still = m
        #expect(still.handle(.fix(Self.fix(400), at: .seconds(601))).isEmpty)
        // 5 minutes and 500 m: an event; the next is measured from it.
        #expect(m.handle(.fix(Self.fix(500), at: .seconds(301))) == [Self.report(Self.fix(500))])
        #expect(m.handle(.fix(Self.fix(999), at: .seconds(700))).isEmpty)
        #expect(m.handle(.fix(Self.fix(1000), at: .seconds(701))) == [Self.report(Self.fix(1000))])
    }

    /// "Calling stopMonitoringSignificantLocationChanges() in between, however, does cause a new
    /// initial event to be sent the next time you call this method"; starting it again while it
    /// runs does not.
    @Test func onlyAStopThenAStartSendsANewInitialEvent() {
        var m = SignificantChangeStateMachine()
        _ = m.handle(.start(at: .zero, cached: nil, app: .background))
        _ = m.handle(.fix(Self.fix(0), at: .zero))
        #expect(m.handle(.start(at: .seconds(10), cached: nil, app: .background)).isEmpty)
        #expect(m.handle(.fix(Self.fix(10), at: .seconds(20))).isEmpty)
        #expect(m.handle(.stop(app: .suspended)) == [Self.significant(.stopped, .suspended)])
        #expect(m.handle(.stop(app: .suspended)).isEmpty, "stopped already")
        #expect(m.handle(.fix(Self.fix(5000), at: .seconds(1000))).isEmpty, "stopped: no events")
        // A cached fix passed at the start is the first event at once.
        #expect(
            m.handle(.start(at: .seconds(1001), cached: Self.fix(5001), app: .active))
                == [Self.significant(.started, .active), Self.report(Self.fix(5001))])
        #expect(m.handle(.fix(Self.fix(5002), at: .seconds(1400))).isEmpty, "measured from the cached fix")
    }

    // MARK: - Region monitoring (W2)

    /// "An app can register up to 20 regions at a time"; one more fails with
    /// `regionMonitoringFailure`, as does a radius above `maximumRegionMonitoringDistance`; "If
    /// an existing region with the same identifier is already being monitored by the app, the
    /// old region is replaced by the new one." (startMonitoring(for:), CLError.regionMonitoringFailure)
    @Test func twentyRegionsAtMostAndTheSameIdentifierReplaces() {
        var m = RegionMonitorStateMachine()
        for i in 0..<20 {
            let r = CircularRegion(center: Self.origin, radius: 100, identifier: "r\(i)")
            #expect(m.handle(.start(r, at: .zero)) == Self.started(r))
        }
        let extra = CircularRegion(center: Self.origin, radius: 100, identifier: "r20")
        #expect(m.handle(.start(extra, at: .zero)) == Self.failed(extra, .limitReached))
        let again = CircularRegion(center: Self.east(1000), radius: 300, identifier: "r3")
        #expect(m.handle(.start(again, at: .zero)) == Self.started(again), "a replacement is not one more")
        #expect(m.regions.count == 20 && m.regions.contains { $0.region == again })
        var one = RegionMonitorStateMachine()
        let huge = CircularRegion(center: Self.origin, radius: 1e7, identifier: "huge")
        #expect(one.handle(.start(huge, at: .zero)) == Self.failed(huge, .radiusTooLarge))
        // The limit counts the regions the app monitors elsewhere (its monitors' conditions).
        let small = CircularRegion(center: Self.origin, radius: 100, identifier: "small")
        #expect(one.handle(.start(small, elsewhere: 20, at: .zero)) == Self.failed(small, .limitReached))
        #expect(one.handle(.start(small, elsewhere: 19, at: .zero)) == Self.started(small))
        #expect(
            one.handle(.start(small, elsewhere: 20, at: .zero)) == Self.started(small), "a replacement is not one more")
        // Denied or restricted, it fails with regionMonitoringDenied ("Location region monitoring
        // has been denied by the user", CLError.h); a monitor's condition is the monitor's to say.
        for status in [AuthorizationStatus.denied, .restricted] {
            #expect(
                one.handle(.start(extra, authorization: status, at: .zero)) == [
                    .record(
                        .region(action: .failed, identifier: "r20", state: nil, decision: nil, reason: .denied)),
                    .call(
                        .delegate(
                            .monitoringDidFail(extra, LocationError(.regionMonitoringDenied, reason: status.rawValue)),
                            to: .all)),
                ])
        }
        #expect(one.regions.count == 1)
        #expect(one.handle(.start(extra, authorization: .authorizedWhenInUse, at: .zero)) == Self.started(extra))
        var monitor = RegionMonitorStateMachine(owner: .monitor(name: "m"))
        #expect(
            monitor.handle(.start(extra, authorization: .denied, at: .zero))
                == [.record(.monitor(name: "m", identifier: "r20", action: .added, decision: nil, reason: nil))])
    }

    /// "The user must travel a minimum distance over the boundary and remain on the same side of
    /// the boundary for at least 20 seconds" (region monitoring, Apple's earlier article); the
    /// first fix only sets the state: "The initial state is unknown" until then, and only a
    /// crossing is an event.
    @Test func aCrossingCountsPastTheHysteresisAfterTwentySeconds() {
        var m = RegionMonitorStateMachine(hysteresis: 100)
        let home = CircularRegion(center: Self.origin, radius: 500, identifier: "home")
        _ = m.handle(.start(home, at: .zero))
        #expect(m.handle(.requestState(identifier: "home")) == Self.determined(home, .unknown))
        #expect(m.handle(.fix(Self.east(1000), at: .zero)).isEmpty, "the first fix sets the state silently")
        #expect(m.handle(.requestState(identifier: "home")) == Self.determined(home, .outside))
        // With reduced accuracy region monitoring is unavailable: the state is not known.
        #expect(
            m.handle(.requestState(identifier: "home", reducedAccuracy: true)) == Self.determined(home, .unknown))
        // Just inside the boundary, within the hysteresis: nothing, however long.
        #expect(m.handle(.fix(Self.east(450), at: .seconds(10))).isEmpty)
        #expect(m.handle(.fix(Self.east(450), at: .seconds(60))).isEmpty)
        // 100 m past it: the dwell starts; 19 s is not enough, 20 s is.
        #expect(m.handle(.fix(Self.east(390), at: .seconds(70))).isEmpty)
        #expect(m.handle(.fix(Self.east(380), at: .seconds(89))).isEmpty)
        #expect(m.handle(.fix(Self.east(370), at: .seconds(90))) == Self.crossed(home, .inside))
        // Out again, but back into the band before 20 s: the dwell starts over.
        #expect(m.handle(.fix(Self.east(700), at: .seconds(100))).isEmpty)
        #expect(m.handle(.fix(Self.east(520), at: .seconds(110))).isEmpty)
        #expect(m.handle(.fix(Self.east(700), at: .seconds(125))).isEmpty, "15 s since it left the band again")
        #expect(m.handle(.fix(Self.east(700), at: .seconds(145))) == Self.crossed(home, .outside))
    }

    /// A `CLMonitor`'s conditions answer as the monitor's: its audit `monitor` events, no delegate
    /// call, the first state an event too ("The initial state is unknown", then satisfied or
    /// unsatisfied), and their crossings handed on as the monitor's condition events.
    @Test func aMonitorsConditionsAnswerAsTheMonitor() {
        var m = RegionMonitorStateMachine(hysteresis: 100, owner: .monitor(name: "trips"))
        let home = CircularRegion(center: Self.origin, radius: 500, identifier: "home")
        #expect(
            m.handle(.start(home, at: .zero))
                == [.record(.monitor(name: "trips", identifier: "home", action: .added, decision: nil, reason: nil))])
        let huge = CircularRegion(center: Self.origin, radius: 1e7, identifier: "huge")
        #expect(
            m.handle(.start(huge, at: .zero))
                == [
                    .record(
                        .monitor(
                            name: "trips", identifier: "huge", action: .failed, decision: nil, reason: .radiusTooLarge))
                ])
        #expect(m.handle(.requestState(identifier: "home")).isEmpty, "a monitor has no requestState")
        #expect(
            m.handle(.fix(Self.east(1000), at: .zero))
                == [.post(.serviceEvent(.condition(monitor: "trips", identifier: "home", state: .outside)))])
        _ = m.handle(.fix(Self.east(300), at: .seconds(10)))
        #expect(
            m.handle(.fix(Self.east(300), at: .seconds(30)))
                == [.post(.serviceEvent(.condition(monitor: "trips", identifier: "home", state: .inside)))])
        #expect(
            m.handle(.stop(identifier: "home"))
                == [.record(.monitor(name: "trips", identifier: "home", action: .removed, decision: nil, reason: nil))])
    }

    /// `add(_:identifier:assuming:)`: "Adds the monitoring condition with the identifier and
    /// initial state you specify" (CLMonitor): a condition assumed in the state the device is in
    /// says nothing at the first fix; one assumed in the other state is reported as a crossing
    /// would be, past the hysteresis for 20 s. Before, the assumed state was ignored, and the
    /// first fix reported the state whatever the app assumed.
    @Test func aConditionAddedInAnAssumedStateReportsOnlyAChange() {
        let home = CircularRegion(center: Self.origin, radius: 500, identifier: "home")
        func event(_ state: RegionState) -> [DeviceAction] {
            [.post(.serviceEvent(.condition(monitor: "trips", identifier: "home", state: state)))]
        }
        var outside = RegionMonitorStateMachine(hysteresis: 100, owner: .monitor(name: "trips"))
        _ = outside.handle(.start(home, assuming: .outside, at: .zero))
        #expect(outside.handle(.fix(Self.east(1000), at: .zero)).isEmpty, "as assumed: no event")
        #expect(outside.handle(.fix(Self.east(300), at: .seconds(10))).isEmpty)
        #expect(outside.handle(.fix(Self.east(300), at: .seconds(30))) == event(.inside))
        // Assumed satisfied while the device is far away: unsatisfied once it is surely out.
        var inside = RegionMonitorStateMachine(hysteresis: 100, owner: .monitor(name: "trips"))
        _ = inside.handle(.start(home, assuming: .inside, at: .zero))
        #expect(inside.handle(.fix(Self.east(1000), at: .zero)).isEmpty, "the dwell starts")
        #expect(inside.handle(.fix(Self.east(1000), at: .seconds(20))) == event(.outside))
        // Through the monitor machine, as CLMonitor adds it.
        var monitors = ConditionMonitorStateMachine(version: .newest, hysteresis: 100)
        _ = monitors.handle(.create(name: "trips", appRuns: true))
        _ = monitors.handle(
            .add(
                home, identifier: "home", monitor: "trips", regionsElsewhere: 0, assuming: .outside,
                at: .zero))
        #expect(monitors.handle(.fix(Self.east(1000), at: .zero)).isEmpty)
        var unknown = ConditionMonitorStateMachine(version: .newest, hysteresis: 100)
        _ = unknown.handle(
            .add(home, identifier: "home", monitor: "trips", regionsElsewhere: 0, at: .zero))
        #expect(unknown.handle(.fix(Self.east(1000), at: .zero)) == event(.outside), "unknown at first")
    }

    /// CLMonitor (iOS 17): "If an iOS app isn't running when a condition is satisfied, the system
    /// tries to launch it. When the app relaunches, recreate the monitor with the same
    /// identifier." A monitor's conditions notify on entry and exit under the app's identifier,
    /// count toward the app's 20 regions with its own (*assumption*), and outlive the process; a
    /// monitor left without conditions is not kept.
    @Test func conditionMonitorsOutliveTheProcessAndShareTheLimit() {
        typealias M = ConditionMonitorStateMachine
        func added(_ monitor: String, _ identifier: String) -> [DeviceAction] {
            [.record(.monitor(name: monitor, identifier: identifier, action: .added, decision: nil, reason: nil))]
        }
        let quiet = CircularRegion(
            center: Self.origin, radius: 500, identifier: "ignored", notifyOnEntry: false, notifyOnExit: false)
        var old = M(version: IOSVersion(major: 16)!, hysteresis: 100)
        #expect(
            old.handle(.create(name: "trips", appRuns: true))
                == [.record(.diagnostic(message: "CLMonitor needs iOS 17 (this run models iOS 16)"))])
        #expect(old.created.isEmpty)

        var m = M(version: .newest, hysteresis: 100)
        #expect(m.handle(.create(name: "trips", appRuns: false)).isEmpty && m.created.isEmpty)
        #expect(
            m.handle(.create(name: "trips", appRuns: true))
                == [.post(.deliverPendingServiceEvents(.condition(monitor: "trips")))])
        #expect(m.created == ["trips"])
        let add = { (m: inout M, id: String, monitor: String, elsewhere: Int) in
            m.handle(
                .add(quiet, identifier: id, monitor: monitor, regionsElsewhere: elsewhere, at: .zero))
        }
        #expect(add(&m, "home", "trips", 0) == added("trips", "home"))
        let home = m.monitors["trips"]?.regions.first?.region
        #expect(home?.identifier == "home" && home?.notifyOnEntry == true && home?.notifyOnExit == true)
        // 18 regions of the app's own and one condition: one more fits, then none.
        #expect(add(&m, "work", "errands", 18) == added("errands", "work"))
        #expect(m.count == 2 && m.names == ["errands", "trips"])
        #expect(
            add(&m, "gym", "errands", 18)
                == [
                    .record(
                        .monitor(
                            name: "errands", identifier: "gym", action: .failed, decision: nil, reason: .limitReached))
                ], "the 21st fails")
        #expect(add(&m, "work", "errands", 18) == added("errands", "work"), "a replacement is not one more")
        // Both monitors see a fix; each condition's first state is an event.
        #expect(
            m.handle(.fix(Self.east(2000), at: .zero)) == [
                .post(.serviceEvent(.condition(monitor: "errands", identifier: "work", state: .outside))),
                .post(.serviceEvent(.condition(monitor: "trips", identifier: "home", state: .outside))),
            ])
        // The process ends: its monitors must be created again; the conditions stay.
        _ = m.handle(.appTerminated)
        #expect(m.created.isEmpty && m.count == 2)
        #expect(
            m.handle(.remove(identifier: "work", monitor: "errands"))
                == [
                    .record(.monitor(name: "errands", identifier: "work", action: .removed, decision: nil, reason: nil))
                ])
        #expect(m.names == ["trips"], "a monitor without conditions is not kept")
        #expect(m.handle(.remove(identifier: "work", monitor: "errands")).isEmpty)
    }

    /// A monitor's `add` and `remove` are calls of the app's code: `DeviceRules` hands them to
    /// the machine only while that code runs (one rule for every call of the app's, asked at the
    /// door), and a condition the app added outlives its process.
    @Test func aMonitorsCallsCountOnlyWhileTheAppsCodeRuns() {
        var scenario = Scenario()
        scenario.system.iosVersion = IOSVersion(major: 17)!
        var h = RulesHarness(scenario)
        let cafe = CircularRegion(center: Self.origin, radius: 200, identifier: "ignored")
        #expect(!h.rules.appCodeRuns)
        h.send(.addCondition(cafe, identifier: "cafe", monitor: "geo"))
        #expect(h.rules.conditions.count == 0 && h.kinds.isEmpty, "not launched: no code of the app runs")

        h.send(.lifecycle(.launch(inBackground: false, cause: .userLaunch)))
        h.send(.addCondition(cafe, identifier: "cafe", monitor: "geo"))
        #expect(h.rules.conditions.count == 1)
        h.send(.lifecycle(.terminate(.user)))
        #expect(!h.rules.appCodeRuns)
        h.send(.removeCondition(identifier: "cafe", monitor: "geo"))
        #expect(h.rules.conditions.count == 1, "the ended process's remove does not count; the condition stays")
    }

    /// A condition's record (`CLMonitoringRecord`) holds the last event the app handled ("the
    /// record updates with the new event when the handling is complete"). A condition added again
    /// under its identifier is a new one, with a new record; an add the rules refuse (the radius
    /// too large) changes nothing: the condition and its record stay. A monitor
    /// whose last condition goes is let go with its records.
    @Test func aRefusedReAddKeepsTheConditionAndItsRecord() throws {
        typealias M = ConditionMonitorStateMachine
        let cafe = CircularRegion(center: Self.origin, radius: 200, identifier: "ignored")
        var huge = cafe
        huge.radius = RegionMonitorStateMachine.maximumRadius * 2
        var m = M(version: .newest, hysteresis: 100)
        let add = { (m: inout M, region: CircularRegion, elsewhere: Int, at: Duration) in
            m.handle(
                .add(region, identifier: "cafe", monitor: "geo", regionsElsewhere: elsewhere, at: at))
        }
        _ = add(&m, cafe, 0, .seconds(1))
        #expect(m.handle(.fix(Self.east(2000), at: .seconds(2))).count == 1, "the first state is an event")
        let outside = ConditionEvent(identifier: "cafe", state: .unsatisfied, date: Date(timeIntervalSince1970: 2))
        _ = m.handle(.handled(outside, monitor: "geo"))
        let before = try #require(m.record(for: "cafe", monitor: "geo"))
        #expect(before.handled == outside && before.condition.added == .seconds(1))

        // Refused: the radius too large (a replacement is never refused for the limit).
        #expect(
            add(&m, huge, 0, .seconds(3)).contains(
                .record(
                    .monitor(name: "geo", identifier: "cafe", action: .failed, decision: nil, reason: .radiusTooLarge)))
        )
        #expect(m.record(for: "cafe", monitor: "geo")?.handled == outside, "a refused add keeps the record")
        #expect(m.record(for: "cafe", monitor: "geo")?.condition == before.condition)
        #expect(m.record(for: "cafe", monitor: "geo")?.condition.region.radius == 200)

        // Accepted: a new condition, whose record is its added state, from its add time.
        _ = add(&m, cafe, 19, .seconds(4))
        let again = try #require(m.record(for: "cafe", monitor: "geo"))
        #expect(again.handled == nil && again.condition.added == .seconds(4))

        // Removed: the monitor holds nothing and is let go, its records with it.
        _ = m.handle(.handled(outside, monitor: "geo"))
        _ = m.handle(.remove(identifier: "cafe", monitor: "geo"))
        #expect(m.state == .none && m.handled.isEmpty)
        _ = add(&m, cafe, 0, .seconds(5))
        #expect(m.record(for: "cafe", monitor: "geo")?.handled == nil)
    }

    /// `notifyOnEntry` and `notifyOnExit` choose which crossings are reported; the state follows
    /// either way.
    @Test func aRegionReportsOnlyTheCrossingsItAsksFor() {
        var m = RegionMonitorStateMachine(hysteresis: 50)
        let r = CircularRegion(center: Self.origin, radius: 200, identifier: "exit-only", notifyOnEntry: false)
        _ = m.handle(.start(r, at: .zero))
        _ = m.handle(.fix(Self.east(1000), at: .zero))
        _ = m.handle(.fix(Self.east(0), at: .seconds(10)))
        #expect(m.handle(.fix(Self.east(0), at: .seconds(30))).isEmpty)
        #expect(m.handle(.requestState(identifier: "exit-only")) == Self.determined(r, .inside))
        _ = m.handle(.fix(Self.east(1000), at: .seconds(40)))
        #expect(m.handle(.fix(Self.east(1000), at: .seconds(60))) == Self.crossed(r, .outside))
    }

    // MARK: - Visits (W3)

    /// "When the user arrives at a location, the system may send an event with only an arrival
    /// time"; the departure, when it comes, completes the visit. `departureDate` is
    /// `distantFuture` while "the visit object does not include departure information". The
    /// model: a stay within the radius for the minimum time.
    @Test func aVisitIsAnArrivalThenADeparture() {
        var m = VisitStateMachine(radius: 100, minimumStay: .seconds(600))
        #expect(m.handle(.start) == [.record(.visit(action: .started, visit: nil, decision: nil, reason: nil))])
        #expect(m.handle(.start).isEmpty, "started already")
        let t0 = Date(timeIntervalSince1970: 1_714_550_400)
        func at(_ s: Int, _ metres: Double) -> [DeviceAction] {
            m.handle(.fix(Self.east(metres), date: t0.addingTimeInterval(Double(s)), at: .seconds(s)))
        }
        #expect(at(0, 0).isEmpty)
        #expect(at(300, 30).isEmpty)
        let arrival = at(600, 20)
        guard case .post(.serviceEvent(.visit(let v)))? = arrival.first, arrival.count == 1 else {
            Issue.record("no arrival after the minimum stay")
            return
        }
        #expect(v.isArrival && v.arrivalDate == t0 && v.departureDate == .distantFuture)
        #expect(Geodesic.distance(v.coordinate, Self.east(50.0 / 3)) < 0.5, "the mean of the stay's fixes")
        #expect(v.horizontalAccuracy == 100)
        #expect(at(900, 40).isEmpty)
        guard case .post(.serviceEvent(.visit(let whole)))? = at(1000, 500).first else {
            Issue.record("no departure when the device left")
            return
        }
        #expect(!whole.isArrival && whole.arrivalDate == t0 && whole.departureDate == t0.addingTimeInterval(900))
        // A stop shorter than the minimum is no visit.
        #expect(at(1200, 520).isEmpty && at(1500, 3000).isEmpty)
        #expect(m.handle(.stop) == [.record(.visit(action: .stopped, visit: nil, decision: nil, reason: nil))])
    }

    // MARK: - requestLocation() (W10)

    static func situation(
        _ app: AppState, runs: Bool = true, inUse: Bool = false, auth: AuthorizationStatus = .authorizedWhenInUse,
        services: Bool = true, accuracy: AccuracyAuthorization = .fullAccuracy
    ) -> LocationRequestStateMachine.Situation {
        LocationRequestStateMachine.Situation(
            appState: app, appRuns: runs, inUse: inUse || app.isForeground, authorization: auth,
            isProvisionalAlways: false, accuracy: accuracy, locationServicesEnabled: services,
            desiredAccuracy: .best)
    }

    static func request(_ action: ServiceLocationAction, _ app: AppState, reason: AuditReason? = nil) -> DeviceAction {
        .record(.serviceLocation(.init(service: .requestLocation, action: action, reason: reason, appState: app)))
    }

    /// "Only one location fix is reported to the delegate, after which location services are
    /// stopped. If a location fix cannot be determined in a timely manner, the location manager
    /// calls the delegate's locationManager(_:didFailWithError:) method instead and reports a
    /// CLError.Code.locationUnknown error." "Calling the startUpdatingLocation() … cancels any
    /// pending request made using this method. Calling this method while location services are
    /// already running does nothing." (requestLocation())
    @Test func aLocationRequestGetsOneFixOrFailsInTime() {
        var m = LocationRequestStateMachine(version: .newest)
        #expect(
            m.handle(.request(at: .seconds(5), timeout: .seconds(10), updatesRunning: true, app: .active))
                == [.record(.diagnostic(message: "requestLocation() while standard updates run does nothing"))])
        #expect(!m.isWaiting)
        #expect(m.handle(.fix(Self.fix(0).location, index: 0, segment: 0, Self.situation(.active))).isEmpty)
        #expect(
            m.handle(.request(at: .seconds(5), timeout: .seconds(10), updatesRunning: false, app: .active))
                == [
                    Self.request(.requested, .active), .schedule(.locationRequestTimeout(manager: 1), at: .seconds(15)),
                ])
        // A fix the app may not have is dropped, and the request waits on: out of use under
        // When In Use (iOS 13+), Location Services off, no authorization, a suspended app.
        for (s, reason) in [
            (Self.situation(.background), AuditReason.notInUse),
            (Self.situation(.active, services: false), .locationServicesDisabled),
            (Self.situation(.active, auth: .denied), .denied),
            (Self.situation(.suspended, runs: false, auth: .authorizedAlways), .suspended),
        ] {
            let fix = Self.fix(1).location
            #expect(
                m.handle(.fix(fix, index: 1, segment: 0, s)) == [
                    .record(
                        .serviceLocation(
                            .init(
                                service: .requestLocation, action: .dropped, reason: reason, index: 1, segment: 0,
                                appState: s.appState, location: fix)))
                ], "\(reason)")
            #expect(m.isWaiting)
        }
        // Up to iOS 12, When In Use needs no use for it.
        var old = LocationRequestStateMachine(version: IOSVersion(major: 12)!)
        _ = old.handle(.request(at: .zero, timeout: .seconds(10), updatesRunning: false, app: .background))
        #expect(old.handle(.fix(Self.fix(1).location, index: 1, segment: 0, Self.situation(.background))).count == 3)
        // The first fix it may have answers it, with the accuracy the app has, and ends it.
        let reduced = Self.situation(.active, accuracy: .reducedAccuracy)
        let answer = m.handle(.fix(Self.fix(2).location, index: 2, segment: 0, reduced))
        guard answer.count == 3, case .call(.serviceLocation(let update, manager: 1)) = answer[2] else {
            Issue.record("\(answer)")
            return
        }
        #expect(answer[0] == .cancel(.locationRequestTimeout(manager: 1)))
        #expect(update.location.horizontalAccuracy >= 1000, "reduced accuracy: \(update.location.horizontalAccuracy)")
        #expect(update.reason == .requestLocation && update.index == 2)
        #expect(!m.isWaiting)
        #expect(
            m.handle(.fix(Self.fix(3).location, index: 3, segment: 0, Self.situation(.active))).isEmpty, "one fix only")
        #expect(m.handle(.timeout(app: .active, appRuns: true)).isEmpty, "answered: no timeout")
        // No fix in time: locationUnknown, to the delegate if the app's code runs.
        let error = LocationError(.locationUnknown, reason: "requestLocationTimeout")
        for runs in [true, false] {
            _ = m.handle(.request(at: .seconds(20), timeout: .seconds(10), updatesRunning: false, app: .active))
            #expect(
                m.handle(.timeout(app: .background, appRuns: runs))
                    == [Self.request(.failed, .background, reason: .timeout), .record(.error(error))]
                    + (runs ? [.call(.delegate(.didFailWithError(error), to: .manager(1)))] : []))
            #expect(!m.isWaiting)
        }
        // Starting updates cancels it; the app's end ends it silently.
        _ = m.handle(.request(at: .seconds(40), timeout: .seconds(10), updatesRunning: false, app: .active))
        #expect(
            m.handle(.cancel(app: .active)) == [
                .cancel(.locationRequestTimeout(manager: 1)), Self.request(.cancelled, .active),
            ])
        #expect(m.handle(.cancel(app: .active)).isEmpty)
        _ = m.handle(.request(at: .seconds(50), timeout: .seconds(10), updatesRunning: false, app: .active))
        #expect(m.handle(.appTerminated) == [.cancel(.locationRequestTimeout(manager: 1))])
        #expect(!m.isWaiting && m.handle(.appTerminated).isEmpty)
    }

    // MARK: - Temporary full accuracy (W11)

    /// "The request always fails with a CLError.Code.promptDeclined error in the following cases:
    /// The Info.plist file doesn't have an entry for the given purposeKey value. The app is
    /// already authorized for full accuracy. The app is in the background." Otherwise the prompt;
    /// allowed, full accuracy "until its permission automatically expires" (when the app is no
    /// longer in use), unless the user chose in Settings since.
    @Test func temporaryFullAccuracyIsDeclinedAskedGrantedAndEnds() {
        typealias M = TemporaryAccuracyStateMachine
        let asking = M.Request(
            hasReducedAccuracy: true, purposeKeyDeclared: true, accuracy: .reducedAccuracy, inForeground: true,
            alertShowing: false)
        for (change, declined) in [
            ({ (r: inout M.Request) in r.hasReducedAccuracy = false }, PromptAnswer.notInThisVersion),
            ({ $0.purposeKeyDeclared = false }, .noSuchPurposeKey),
            ({ $0.accuracy = .fullAccuracy }, .alreadyFullAccuracy),
            ({ $0.inForeground = false }, .notInForeground), ({ $0.alertShowing = true }, .promptAlreadyShowing),
        ] {
            var m = M()
            var r = asking
            change(&r)
            #expect(
                m.handle(.request(r)) == [
                    .record(.prompt(prompt: .temporaryFullAccuracy, phase: .declined, answer: declined)),
                    .call(
                        .temporaryFullAccuracyCompletion(
                            LocationError(.promptDeclined, reason: declined.rawValue), request: 1)),
                ])
            #expect(m.state == .none)
        }
        var m = M()
        #expect(
            m.handle(.request(asking)) == [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .shown, answer: nil)),
                .post(.showAlert(.temporaryFullAccuracy)),
            ])
        #expect(m.state == .asking(request: 1))
        // A second request while the prompt is up is declined at once, under its own number.
        var again = asking
        again.alertShowing = true
        #expect(
            m.handle(.request(again)).last
                == .call(
                    .temporaryFullAccuracyCompletion(
                        LocationError(.promptDeclined, reason: PromptAnswer.promptAlreadyShowing.rawValue), request: 2))
        )
        #expect(m.state == .asking(request: 1), "the first still waits for its answer")
        #expect(
            m.handle(.answered(allow: true)) == [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .answered, answer: .allow)),
                .post(.authorization(.setPreciseLocation(true))), .post(.temporaryFullAccuracyCompleted(request: 1)),
            ])
        #expect(m.handle(.noLongerInUse) == [.post(.authorization(.setPreciseLocation(false)))])
        #expect(m.handle(.noLongerInUse).isEmpty && m.state == .none)
        // Denied: nothing changes; left unanswered: declined.
        _ = m.handle(.request(asking))
        #expect(
            m.handle(.answered(allow: false)) == [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .answered, answer: .deny)),
                .post(.temporaryFullAccuracyCompleted(request: 3)),
            ])
        _ = m.handle(.request(asking))
        #expect(
            m.handle(.answered(allow: nil)) == [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .dismissed, answer: nil)),
                .call(
                    .temporaryFullAccuracyCompletion(LocationError(.promptDeclined, reason: "dismissed"), request: 4)),
            ])
        #expect(m.handle(.answered(allow: true)).isEmpty, "no prompt up: no answer")
        // The user's own choice in Settings is not undone when the app is no longer in use.
        _ = m.handle(.request(asking))
        _ = m.handle(.answered(allow: true))
        #expect(m.handle(.userChose).isEmpty)
        #expect(m.handle(.noLongerInUse).isEmpty)
    }

    // MARK: - Where an event goes (W4, W5)

    static func context(
        _ state: AppState, _ status: AuthorizationStatus, inUse: Bool = false, byUser: Bool = false,
        modes: BackgroundModes = [], power: PowerAndRefresh = PowerAndRefresh(), services: Bool = true
    ) -> ServiceDelivery.Context {
        ServiceDelivery.Context(
            appState: state, appInUse: inUse, terminatedByUser: byUser, authorization: status,
            isProvisionalAlways: false, locationServicesEnabled: services, backgroundModes: modes, power: power)
    }

    /// "When In Use: Your app can use all location services and receive events while the app is in
    /// use." "Always: … If your app isn't running, the system launches your app and delivers the
    /// event." (Choosing the Location Services Authorization to Request)
    @Test func onlyAlwaysWakesOrLaunchesForALocationEvent() {
        typealias D = ServiceDelivery
        #expect(D.locationEvent(Self.context(.suspended, .authorizedAlways)) == .wake)
        #expect(D.locationEvent(Self.context(.notRunning, .authorizedAlways)) == .launch)
        #expect(D.locationEvent(Self.context(.notRunning, .authorizedAlways, byUser: true)) == .launch)
        #expect(D.locationEvent(Self.context(.background, .authorizedAlways)) == .deliver)
        #expect(D.locationEvent(Self.context(.notRunning, .authorizedWhenInUse)) == .drop(.notInUse))
        #expect(D.locationEvent(Self.context(.suspended, .authorizedWhenInUse)) == .drop(.notInUse))
        #expect(D.locationEvent(Self.context(.background, .authorizedWhenInUse, inUse: true)) == .deliver)
        #expect(D.locationEvent(Self.context(.active, .authorizedWhenInUse)) == .deliver)
        #expect(D.locationEvent(Self.context(.active, .denied)) == .drop(.denied))
        #expect(
            D.locationEvent(Self.context(.notRunning, .authorizedAlways, services: false))
                == .drop(.locationServicesDisabled))
    }

    /// Who receives a service's event, in one place: Background App Refresh off, no wake ("When
    /// background refresh is available for an application, it may launched or resumed in the
    /// background to handle significant location changes", UIApplication.h); up to iOS 12 these
    /// services are Always's ("Significant-change location service: Not available" to When In
    /// Use); with reduced accuracy "your app can't use region monitoring"
    /// (CLLocationManager.accuracyAuthorization). A launched app hears its events once its launch
    /// code ran, a significant change once it started the service again, a condition once it
    /// created its monitor again (said held once).
    @Test func aServiceEventGoesWhereTheRulesSayAndWaitsForTheRelaunchedApp() {
        typealias M = ServiceEventStateMachine
        let region = CircularRegion(center: Self.origin, radius: 100, identifier: "home")
        let crossing = PendingServiceEvent.region(region, .inside)
        let change = PendingServiceEvent.significantChange(Self.fix(600))
        let condition = PendingServiceEvent.condition(monitor: "trips", identifier: "home", state: .outside)
        func at(
            _ s: Int, _ app: AppState, _ status: AuthorizationStatus = .authorizedAlways,
            power: PowerAndRefresh = .init(), byUser: Bool = false, accuracy: AccuracyAuthorization = .fullAccuracy,
            monitors: Set<String> = []
        ) -> M.Situation {
            M.Situation(
                now: .seconds(s), appRuns: app == .active || app == .background,
                delivery: Self.context(app, status, byUser: byUser, power: power), accuracy: accuracy,
                monitors: monitors)
        }
        func entered(_ decision: ServiceDecision, _ reason: AuditReason) -> [DeviceAction] {
            [.record(.region(action: .entered, identifier: "home", state: .inside, decision: decision, reason: reason))]
        }
        var m = M(version: .newest, wakeTime: .seconds(10), relaunchAfterSwipe: false)
        let wake: [DeviceAction] = [
            .post(.lifecycle(.wake(.region))), .post(.openServiceWake), .post(.deliverServiceEvent(crossing)),
        ]
        #expect(m.handle(.route(crossing), in: at(0, .suspended)) == wake)
        var off = PowerAndRefresh()
        off.lowPowerMode = true
        #expect(m.handle(.route(crossing), in: at(0, .suspended, power: off)) == entered(.dropped, .lowPowerMode))
        #expect(
            m.handle(.route(crossing), in: at(0, .notRunning, byUser: true)) == entered(.dropped, .userTerminated))
        var relaunching = M(version: .newest, wakeTime: .seconds(10), relaunchAfterSwipe: true)
        #expect(
            relaunching.handle(.route(crossing), in: at(0, .notRunning, byUser: true)) == [
                .post(.lifecycle(.wake(.region))), .post(.openServiceWake), .post(.deliverPendingServiceEvents(nil)),
            ])
        #expect(relaunching.waiting == [.init(event: crossing, said: false)])
        #expect(
            m.handle(.route(crossing), in: at(0, .active, accuracy: .reducedAccuracy))
                == entered(.dropped, .reducedAccuracy), "even on screen")
        var old = M(version: IOSVersion(major: 12)!, wakeTime: .seconds(10), relaunchAfterSwipe: false)
        #expect(
            old.handle(.route(crossing), in: at(0, .active, .authorizedWhenInUse)) == entered(.dropped, .needsAlways))
        #expect(
            m.handle(.route(crossing), in: at(0, .active, .authorizedWhenInUse)) == [
                .post(.deliverServiceEvent(crossing))
            ])
        // A running Always app in the background gets the wake's time too.
        #expect(
            m.handle(.route(crossing), in: at(5, .background))
                == [.schedule(.serviceWakeEnd, at: .seconds(15)), .post(.deliverServiceEvent(crossing))])
        #expect(m.wakeUntil == .seconds(15))
        #expect(m.handle(.wakeEnded, in: at(15, .background)).isEmpty && m.wakeUntil == nil)

        // Launched: the events wait for the launch code; then what the new process has not set
        // up again is held, said once, and comes once it is.
        for event in [change, condition, crossing] { _ = m.handle(.route(event), in: at(20, .notRunning)) }
        #expect(m.waiting.count == 3)
        #expect(m.handle(.deliverWaiting(nil), in: at(20, .notRunning)).isEmpty, "its code does not run yet")
        let launched = m.handle(.deliverWaiting(nil), in: at(21, .background))
        #expect(launched.contains(.post(.deliverServiceEvent(crossing))))
        #expect(launched.filter { if case .record = $0 { true } else { false } }.count == 2, "held, said once")
        #expect(m.handle(.deliverWaiting(nil), in: at(22, .background)).isEmpty)
        #expect(
            m.handle(.deliverWaiting(.condition(monitor: "trips")), in: at(23, .background, monitors: ["trips"]))
                == [.post(.deliverServiceEvent(condition))])
        #expect(
            m.handle(.significantChanges(listening: true, manager: 1), in: at(24, .background))
                == [.post(.deliverServiceEvent(change))])
        // The significant change comes with at best Wi-Fi's accuracy.
        let delivered = m.handle(.deliver(change), in: at(24, .background))
        guard case .call(.serviceLocation(let update, manager: 1)) = delivered.last else {
            Issue.record("no didUpdateLocations: \(delivered)")
            return
        }
        #expect(update.location.horizontalAccuracy >= AccuracyModel.Positioning.wifi.accuracyFloor)
        #expect(m.handle(.deliver(crossing), in: at(25, .suspended)) == entered(.dropped, .suspended))

        // The app stops: what still waits is dropped, and the wake ends.
        _ = m.handle(.route(crossing), in: at(30, .notRunning))
        #expect(
            m.handle(.appStopped(terminated: true), in: at(31, .notRunning))
                == entered(.dropped, .terminated) + [.cancel(.serviceWakeEnd)])
        #expect(m.waiting.isEmpty && !m.significantChangesListening)
        // Handed to a new process that has not started the service, or created the monitor,
        // again: held, and kept for when it does.
        let held = m.handle(.deliver(change), in: at(40, .background))
        guard case .record(.serviceLocation(let record)) = held.first, held.count == 1 else {
            Issue.record("not held: \(held)")
            return
        }
        #expect(record.action == .held && record.reason == .awaitingRestart && record.index == 0)
        #expect(
            m.handle(.deliver(condition), in: at(41, .background)) == [
                .record(
                    .monitor(
                        name: "trips", identifier: "home", action: .unsatisfied, decision: .held,
                        reason: .awaitingMonitor))
            ])
        #expect(m.waiting == [.init(event: change, said: true), .init(event: condition, said: true)])
        // The app removes another condition, or the same identifier from another monitor: the
        // held event stays; removing its condition drops it, and says so (kept for the end).
        #expect(m.handle(.conditionRemoved(monitor: "trips", identifier: "work"), in: at(41, .background)).isEmpty)
        #expect(m.handle(.conditionRemoved(monitor: "runs", identifier: "home"), in: at(41, .background)).isEmpty)
        var removing = m
        #expect(
            removing.handle(.conditionRemoved(monitor: "trips", identifier: "home"), in: at(41, .background))
                == M.record(condition, decision: .dropped, reason: .serviceStopped, app: .background))
        #expect(removing.waiting == [.init(event: change, said: true)])
        // A manager of the relaunched app stops the service none of its managers started again:
        // the change that waited for it is dropped, and says so; a later stop has nothing left.
        #expect(
            m.handle(.significantChanges(listening: false, manager: 2), in: at(42, .background))
                == M.record(change, decision: .dropped, reason: .serviceStopped, app: .background))
        #expect(m.waiting == [.init(event: condition, said: true)])
        #expect(m.handle(.significantChanges(listening: false, manager: 1), in: at(43, .background)).isEmpty)
        // A visit that launched the app waits for its launch code, which stops visits: dropped.
        let visit = PendingServiceEvent.visit(
            Visit(
                coordinate: Self.origin, horizontalAccuracy: 50,
                arrivalDate: Date(timeIntervalSince1970: 1_719_792_000),
                departureDate: .distantFuture))
        _ = m.handle(.appStopped(terminated: true), in: at(50, .notRunning))
        #expect(
            m.handle(.route(visit), in: at(60, .notRunning)) == [
                .post(.lifecycle(.wake(.visit))), .post(.openServiceWake), .post(.deliverPendingServiceEvents(nil)),
            ], "launches the app")
        #expect(
            m.handle(.visitsStopped, in: at(61, .background))
                == M.record(visit, decision: .dropped, reason: .serviceStopped, app: .background))
        #expect(m.waiting.isEmpty)
        // A region's event that launched the app waits for its launch code, which stops
        // monitoring that region: dropped; another region's stop leaves it.
        _ = m.handle(.appStopped(terminated: true), in: at(70, .notRunning))
        #expect(m.handle(.route(crossing), in: at(80, .notRunning)).count == 3, "launches the app")
        #expect(m.handle(.regionStopped(identifier: "office"), in: at(81, .background)).isEmpty)
        #expect(m.handle(.visitsStopped, in: at(81, .background)).isEmpty)
        #expect(
            m.handle(.regionStopped(identifier: "home"), in: at(81, .background))
                == entered(.dropped, .serviceStopped))
        #expect(m.waiting.isEmpty)
    }

    /// "The system does not automatically launch your app if the user has force-quit it"
    /// (application(_:didReceiveRemoteNotification:fetchCompletionHandler:)); background pushes
    /// need the `remote-notification` mode, and Background App Refresh ("it may launched or
    /// resumed in the background to handle … remote notifications", UIApplication.h), which Low
    /// Power Mode turns off ("Background App Refresh is disabled automatically when a device is
    /// operating in low-power mode", backgroundRefreshStatus).
    @Test func aBackgroundPushWakesOrLaunchesUnlessTheUserSwipedTheAppAway() {
        typealias D = ServiceDelivery
        let mode: BackgroundModes = [.remoteNotification]
        #expect(D.push(Self.context(.active, .authorizedAlways)) == .deliver, "on screen, without the mode too")
        #expect(D.push(Self.context(.suspended, .denied, modes: mode)) == .wake, "pushes need no location")
        #expect(D.push(Self.context(.notRunning, .denied, modes: mode)) == .launch)
        #expect(D.push(Self.context(.notRunning, .denied, byUser: true, modes: mode)) == .drop(.userTerminated))
        #expect(D.push(Self.context(.suspended, .denied)) == .drop(.noRemoteNotificationMode))
        var lowPower = PowerAndRefresh()
        lowPower.lowPowerMode = true
        #expect(D.push(Self.context(.suspended, .denied, modes: mode, power: lowPower)) == .drop(.lowPowerMode))
        var off = PowerAndRefresh()
        off.appBackgroundAppRefresh = false
        #expect(
            D.push(Self.context(.suspended, .denied, modes: mode, power: off)) == .drop(.appBackgroundAppRefreshOff))
    }

    /// "Don't try to send more than two or three per hour" (Pushing background updates to your
    /// App): the fourth in an hour is throttled, and an hour after the first one more passes.
    @Test func pushesAreThrottledToThreeAnHour() {
        var t = PushThrottle(perHour: 3)
        let admitted = [0, 60, 120, 3599, 3600, 3601].map { t.admit(at: .seconds($0)) }
        #expect(admitted == [true, true, true, false, true, false])
    }

    /// A background push's life: an alert push runs no code; off screen the throttle holds the
    /// newest ("it discards the older notification and only holds the newest one"), delivered
    /// when the user launches the app, discarded when the app is killed; the handler has its
    /// budget off screen only ("Your app has 30 seconds to perform any tasks and call the
    /// specified completion handler block"), and overrunning it ends the app.
    @Test func aPushWakesTheAppIsHeldWhenThrottledAndHasItsBudgetOffScreen() {
        func push(_ action: PushAction, _ reason: AuditReason?) -> DeviceAction {
            .record(.push(action: action, result: nil, reason: reason))
        }
        var m = PushStateMachine(perHour: 1, budget: .seconds(30))
        #expect(
            m.handle(.receive(contentAvailable: false, .wake, inForeground: false, at: .zero))
                == [push(.received, .alert)])
        #expect(
            m.handle(.receive(contentAvailable: true, .drop(.denied), inForeground: false, at: .zero))
                == [push(.dropped, .denied)])
        #expect(
            m.handle(.receive(contentAvailable: true, .wake, inForeground: false, at: .seconds(1)))
                == [.post(.lifecycle(.wake(.remoteNotification))), .post(.callPushHandler(reason: .woken))])
        // The hour's one push is used: the next are held, the newest kept.
        #expect(
            m.handle(.receive(contentAvailable: true, .launch, inForeground: false, at: .seconds(2)))
                == [push(.held, .throttled)])
        #expect(
            m.handle(.receive(contentAvailable: true, .wake, inForeground: false, at: .seconds(3)))
                == [push(.discarded, .newerHeld), push(.held, .throttled)])
        // On screen the throttle does not apply.
        #expect(
            m.handle(.receive(contentAvailable: true, .deliver, inForeground: true, at: .seconds(4)))
                == [.post(.callPushHandler(reason: .foreground))])
        // The handler: timed off screen, not on screen.
        #expect(
            m.handle(.callHandler(reason: .woken, appRuns: true, inForeground: false, at: .seconds(10))) == [
                .schedule(.pushDeadline(1), at: .seconds(40)), push(.delivered, .woken),
                .call(.remoteNotification(id: 1)),
            ])
        #expect(m.handle(.callHandler(reason: .woken, appRuns: false, inForeground: false, at: .seconds(10))).isEmpty)
        // The user launches the app: the held push is delivered, untimed on screen.
        #expect(
            m.handle(.launched(appRuns: true, inForeground: true, at: .seconds(20)))
                == [push(.delivered, .held), .call(.remoteNotification(id: 2))])
        #expect(!m.isHolding && m.handle(.launched(appRuns: true, inForeground: true, at: .seconds(21))).isEmpty)
        // On screen the budgets stop; off screen again they start afresh.
        #expect(m.handle(.enteredForeground) == [.cancel(.pushDeadline(1))])
        #expect(m.handle(.deadlineDue(id: 1)).isEmpty, "no watchdog on screen")
        #expect(
            m.handle(.enteredBackground(at: .seconds(100)))
                == [.schedule(.pushDeadline(1), at: .seconds(130)), .schedule(.pushDeadline(2), at: .seconds(130))])
        #expect(
            m.handle(.completed(id: 2, .newData, note: AppNote(synced: 0, note: "ok"))) == [
                .cancel(.pushDeadline(2)),
                .record(.push(action: .completed, result: .newData, reason: nil, detail: "ok")),
            ])
        #expect(m.handle(.completed(id: 2, .newData, note: nil)).isEmpty, "completed once")
        #expect(
            m.handle(.deadlineDue(id: 1))
                == [push(.expired, .budget), .post(.lifecycle(.terminate(.remoteNotificationBudgetExceeded)))])
        // Killed: the handlers' timers go, and the held push is discarded.
        _ = m.handle(.receive(contentAvailable: true, .wake, inForeground: false, at: .seconds(200)))
        #expect(m.isHolding)
        #expect(m.handle(.appTerminated) == [.cancel(.pushDeadline(1)), push(.discarded, .terminated)])
        #expect(m.handlers.isEmpty && !m.isHolding)
    }

    // MARK: - Apple's sessions (W12)

    /// "Use CLBackgroundActivitySession to start a background activity session that allows a
    /// when-in-use authorized app to receive location updates or monitoring events": only one
    /// started in use, with the `location` mode, on iOS 17+, counts. A CLServiceSession (iOS 18+)
    /// asks for its authorization while notDetermined, "including automatically re-asking as
    /// needed after temporary authorization lapses", Always first.
    @Test func sessionsCountOnlyWhenTheyMayAndAskForWhatTheyWant() {
        typealias M = SessionStateMachine
        func activity(_ action: SessionAction, _ reason: AuditReason?) -> [DeviceAction] {
            [.record(.session(kind: .backgroundActivity, action: action, reason: reason))]
        }
        let start = M.ActivityStart(
            version: .newest, appState: .background, appRuns: true, locationMode: true, inUse: true)
        var m = M()
        for (change, why) in [
            ({ (s: inout M.ActivityStart) in s.version = IOSVersion(major: 16)! }, AuditReason.needsIOS17),
            (
                {
                    $0.appRuns = false
                    $0.appState = .suspended
                }, .suspended
            ), ({ $0.locationMode = false }, .noLocationMode),
            ({ $0.inUse = false }, .notInUse),
        ] {
            var s = start
            change(&s)
            #expect(m.handle(.startActivity(s)) == activity(.ignored, why))
        }
        #expect(m.activitySessions == 0 && m.counter == 4)
        #expect(m.handle(.startActivity(start)) == activity(.started, nil))
        #expect(m.activity == [5])
        #expect(m.handle(.invalidateActivity(id: 4)).isEmpty, "an ignored session holds nothing")
        #expect(m.handle(.invalidateActivity(id: 5)) == activity(.invalidated, nil))
        #expect(m.activitySessions == 0)

        #expect(
            m.handle(.startService(.whenInUse, version: IOSVersion(major: 17)!, app: .active, appRuns: true))
                == [.record(.session(kind: .service, action: .ignored, reason: .needsIOS18))])
        #expect(
            m.handle(.startService(.whenInUse, version: .newest, app: .active, appRuns: true)) == [
                .record(.session(kind: .service, action: .started, reason: .whenInUse)), .post(.updateLiveGate),
                .post(.askForServiceSessionAuthorization),
            ])
        #expect(
            m.handle(.askForAuthorization(canPrompt: true, status: .notDetermined))
                == [.post(.requestAuthorization(always: false))])
        _ = m.handle(.startService(.always, version: .newest, app: .active, appRuns: true))
        #expect(
            m.handle(.askForAuthorization(canPrompt: true, status: .notDetermined))
                == [.post(.requestAuthorization(always: true))])
        #expect(m.handle(.askForAuthorization(canPrompt: false, status: .notDetermined)).isEmpty)
        #expect(m.handle(.askForAuthorization(canPrompt: true, status: .authorizedWhenInUse)).isEmpty)
        #expect(
            m.handle(.invalidateService(id: 8))
                == [.record(.session(kind: .service, action: .invalidated, reason: .always)), .post(.updateLiveGate)])
        _ = m.handle(.startActivity(start))
        #expect(m.handle(.appTerminated).isEmpty)
        #expect(m.service.isEmpty && m.activity.isEmpty)
        #expect(m.handle(.askForAuthorization(canPrompt: true, status: .notDetermined)).isEmpty, "none held")
    }

    /// CLServiceSession: with NSLocationRequireExplicitServiceSession "Core Location does not set
    /// up the implicit session", so live updates carry no location until the app holds a
    /// session; the iOS 18 diagnostics say why no location comes, once until one comes again;
    /// liveUpdates() needs iOS 17 (CLLocationUpdate.liveUpdates availability).
    @Test func liveUpdatesWaitForAServiceSessionAndSayEachDiagnosticOnce() {
        typealias M = LiveUpdateStateMachine
        func said(_ d: LiveUpdate.Diagnostic, to manager: Int = 1) -> [DeviceAction] {
            [
                .record(.liveUpdate(stationary: false, diagnostic: d, manager: manager)),
                .call(.liveDiagnostic(d, manager: manager)),
            ]
        }
        let ios17 = M(version: IOSVersion(major: 17)!, requiresExplicitServiceSession: true)
        #expect(ios17.mayStart(appRuns: true) == (true, []))
        let (may, log) = M(version: IOSVersion(major: 16)!, requiresExplicitServiceSession: false).mayStart(
            appRuns: true)
        #expect(!may && log.count == 1)
        var old = ios17
        #expect(old.handle(.gate(serviceSession: false, appRuns: true)).isEmpty)
        #expect(!old.blocked, "the key is iOS 18's")
        #expect(old.handle(.diagnostic(.locationUnavailable, manager: 1)).isEmpty, "diagnostics are iOS 18's")

        var m = M(version: .newest, requiresExplicitServiceSession: true)
        #expect(m.handle(.start(manager: 2, serviceSession: false, appRuns: false, askForAuthorization: true)).isEmpty)
        _ = m.handle(.listeners([2]))
        #expect(
            m.handle(.start(manager: 2, serviceSession: false, appRuns: true, askForAuthorization: true))
                == said(.serviceSessionRequired, to: 2), "blocked: said once, not twice, to its manager's streams")
        #expect(m.blocked && m.lastDiagnostic(manager: 2) == .serviceSessionRequired)
        #expect(m.lastDiagnostic(manager: 1) == nil)
        _ = m.handle(.listeners([2, 3]))
        #expect(
            m.handle(.gate(serviceSession: true, appRuns: true))
                == [.post(.startUpdates(manager: 2)), .post(.startUpdates(manager: 3))],
            "a session lets locations flow again: each listening manager's updates start")
        #expect(m.handle(.gate(serviceSession: true, appRuns: true)).isEmpty, "no change, nothing said")
        #expect(
            m.handle(.start(manager: 2, serviceSession: true, appRuns: true, askForAuthorization: true))
                == [.post(.requestAuthorization(always: false)), .post(.startUpdates(manager: 2))])
        #expect(
            m.handle(.start(manager: 3, serviceSession: true, appRuns: true, askForAuthorization: false))
                == [.post(.startUpdates(manager: 3))])
        #expect(m.handle(.diagnostic(.insufficientlyInUse, manager: 2)) == said(.insufficientlyInUse, to: 2))
        #expect(m.handle(.diagnostic(.insufficientlyInUse, manager: 2)).isEmpty, "once until a location comes")
        #expect(
            m.handle(.diagnostic(.insufficientlyInUse, manager: 3)) == said(.insufficientlyInUse, to: 3),
            "each manager's streams hear it once")
        _ = m.handle(.delivered(manager: 2))
        #expect(m.handle(.diagnostic(.insufficientlyInUse, manager: 3)).isEmpty, "a location came to 2, not 3")
        _ = m.handle(.listeners([2]))
        _ = m.handle(.listeners([2, 3]))
        #expect(
            m.handle(.diagnostic(.insufficientlyInUse, manager: 3)) == said(.insufficientlyInUse, to: 3),
            "3's streams closed and a new one opened: it has not heard it")
        // The scenario's listener stays the first manager's whatever the app's streams do.
        var scripted = M(version: .newest, requiresExplicitServiceSession: false)
        _ = scripted.handle(.scriptListens)
        _ = scripted.handle(.listeners([4]))
        #expect(scripted.listeners == [1, 4])
        _ = scripted.handle(.listeners([]))
        #expect(scripted.listeners == [1])
        #expect(m.handle(.diagnostic(.insufficientlyInUse, manager: 2)) == said(.insufficientlyInUse, to: 2))
        #expect(
            m.handle(.gate(serviceSession: false, appRuns: true))
                == said(.serviceSessionRequired, to: 2) + said(.serviceSessionRequired, to: 3),
            "the session invalidated while streams listen: each hears it")
        // The process ends with a session held: its streams end first, so the gate closing with
        // the session says nothing, and a session taken again starts nothing.
        _ = m.handle(.gate(serviceSession: true, appRuns: true))
        #expect(m.handle(.appTerminated).isEmpty, "nobody listens any more")
        #expect(!m.listening && m.lastDiagnostic(manager: 2) == nil && m.blocked)
        #expect(m.handle(.gate(serviceSession: true, appRuns: true)).isEmpty, "nobody listens: nothing started")
        #expect(!m.blocked)

        var free = M(version: .newest, requiresExplicitServiceSession: false)
        _ = free.handle(.listeners([1]))
        #expect(free.handle(.gate(serviceSession: false, appRuns: true)).isEmpty)
        #expect(!free.blocked, "without the key the implicit session serves")
    }

    // MARK: - Background URL sessions (W9)

    /// background(withIdentifier:): "this configuration makes it possible for transfers to
    /// continue even when the app itself is suspended or terminated"; "when a background transfer
    /// completes … if your app is no longer running, your app is automatically relaunched in the
    /// background" (urlSessionDidFinishEvents(forBackgroundURLSession:)), unless the session's
    /// sessionSendsLaunchEvents is false; "If the user terminates the app from the multitasking
    /// screen, the system cancels all of the session's background transfers."
    @Test func transfersGoOnWithoutTheAppAndWakeItWhenTheyEnd() {
        typealias M = TransferStateMachine
        func at(_ s: Int, _ app: AppState = .suspended, network: Bool = true) -> M.Situation {
            M.Situation(now: .seconds(s), app: app, appRuns: app == .active || app == .background, network: network)
        }
        func transfer(
            _ action: TransferAction, _ task: Int, count: Int? = nil, _ reason: AuditReason? = nil,
            session: String? = nil, detail: String? = nil
        ) -> DeviceAction {
            .record(
                .transfer(action: action, task: task, count: count, reason: reason, detail: detail, session: session))
        }
        let woken: (Int) -> [DeviceAction] = {
            [.post(.lifecycle(.wake(.urlSession))), .post(.handleURLSessionEvents(task: $0))]
        }
        var m = M(timing: .init(duration: .seconds(20), retryAfter: .seconds(60), eventsBudget: .seconds(30)))
        #expect(m.handle(.upload(count: 3), in: at(0, .suspended)).isEmpty, "a suspended app's code does not run")
        #expect(m.handle(.upload(count: 0), in: at(0, .active)).isEmpty, "nothing to upload")
        #expect(
            m.handle(.upload(count: 3), in: at(10, .active))
                == [transfer(.scheduled, 1, count: 3), .schedule(.transferDone(1), at: .seconds(30))])
        let quiet = M.Download(session: "q", launchEvents: false)
        #expect(
            m.handle(.download(.init(session: "s", launchEvents: true)), in: at(10, .background))
                == [transfer(.scheduled, 2, session: "s"), .schedule(.transferDone(2), at: .seconds(30))])
        _ = m.handle(.download(quiet), in: at(10, .active))
        #expect(m.transfers == [1: 3] && m.downloads.count == 2)

        // Its time is up while the app is suspended: without a network it fails and is retried.
        #expect(
            m.handle(.due(task: 1), in: at(30, network: false))
                == [transfer(.failed, 1, count: 3, .noNetwork), .schedule(.transferDone(1), at: .seconds(90))])
        #expect(
            m.handle(.due(task: 2), in: at(30, network: false))
                == [transfer(.failed, 2, .noNetwork, session: "s"), .schedule(.transferDone(2), at: .seconds(90))])
        #expect(m.handle(.due(task: 1), in: at(90)) == [.sendUpload(task: 1)])
        #expect(m.handle(.due(task: 2), in: at(90)) == [.receiveDownload(task: 2)])
        #expect(
            m.handle(.uploadWritten(task: 1, failure: "disk full"), in: at(90))
                == [
                    transfer(.failed, 1, count: 3, .cannotWrite, detail: "disk full"),
                    .schedule(.transferDone(1), at: .seconds(150)),
                ])
        // Done, the suspended app is woken to handle its session's events; on screen it is not.
        #expect(
            m.handle(.uploadWritten(task: 1, failure: nil), in: at(150)) == [transfer(.completed, 1, count: 3)]
                + woken(1))
        #expect(m.handle(.uploadWritten(task: 1, failure: nil), in: at(150)).isEmpty, "completed once")
        #expect(
            m.handle(.downloadReceived(task: 2, detail: "200"), in: at(150, .notRunning))
                == [transfer(.completed, 2, session: "s", detail: "200")] + woken(2), "relaunched")
        #expect(
            m.handle(.downloadReceived(task: 3, detail: nil), in: at(150, .notRunning))
                == [transfer(.completed, 3, session: "q")], "sessionSendsLaunchEvents false: no launch")

        // The woken app has its budget to call the completion, and runs until it does.
        #expect(
            m.handle(.handleEvents(task: 2), in: at(150, .background))
                == [.schedule(.transferEventsDeadline, at: .seconds(180)), .call(.backgroundURLSessionEvents(task: 2))])
        #expect(m.eventsPending)
        #expect(
            m.handle(.eventsHandled(task: 2), in: at(160, .background))
                == [.cancel(.transferEventsDeadline), transfer(.eventsHandled, 2)])
        #expect(!m.eventsPending && m.handle(.eventsDeadlineDue, in: at(180)).isEmpty)
        _ = m.handle(.handleEvents(task: 2), in: at(200, .background))
        #expect(
            m.handle(.eventsDeadlineDue, in: at(230)) == [transfer(.eventsTimedOut, 2, .budget)],
            "the transfer whose events the app handles, not the last one")

        // The system ends the app: transfers go on. The user swipes it away: they are cancelled.
        _ = m.handle(.upload(count: 1), in: at(300, .active))
        _ = m.handle(.download(quiet), in: at(300, .active))
        #expect(m.handle(.cancelDownload(task: 5), in: at(301, .suspended)).isEmpty, "the app's code must run")
        #expect(m.handle(.appTerminated(byUser: false), in: at(310, .notRunning)).isEmpty)
        #expect(m.inFlight.count == 2)
        #expect(
            m.handle(.appTerminated(byUser: true), in: at(320, .notRunning)) == [
                .cancel(.transferDone(4)), transfer(.cancelled, 4, count: 1, .userTerminated),
                .cancel(.transferDone(5)), transfer(.cancelled, 5, .userTerminated, session: "q"),
            ])
        #expect(m.inFlight.isEmpty)
        _ = m.handle(.download(quiet), in: at(400, .active))
        #expect(
            m.handle(.cancelDownload(task: 6), in: at(401, .active))
                == [.cancel(.transferDone(6)), transfer(.cancelled, 6, .app, session: "q")])
    }

    // MARK: - BGTaskScheduler (W6, W7)

    /// `notPermitted`: "The app didn't set the appropriate mode in the UIBackgroundModes array";
    /// `unavailable`: "A person disabled background refresh in settings"; "There can be a total of 1
    /// refresh task and 10 processing tasks scheduled at any time"; "Submitting a task request for
    /// an unexecuted task that's already in the queue replaces the previous task request."
    /// (BGTaskScheduler.submit(_:) and its error codes)
    @Test func submissionsNeedTheModeRefreshAndRoom() {
        var m = TaskSchedulerStateMachine()
        let refresh = TaskSchedulerStateMachine.Request(identifier: "r", kind: .appRefresh)
        let all: BackgroundModes = [.fetch, .processing]
        #expect(m.submit(refresh, at: .zero, modes: [.processing], power: .init()) == .notPermitted)
        var off = PowerAndRefresh()
        off.backgroundAppRefresh = false
        #expect(m.submit(refresh, at: .zero, modes: all, power: off) == .unavailable)
        #expect(m.submit(refresh, at: .zero, modes: all, power: .init()) == nil)
        #expect(m.submit(refresh, at: .seconds(5), modes: all, power: .init()) == nil, "the same identifier replaces")
        let other = TaskSchedulerStateMachine.Request(identifier: "r2", kind: .appRefresh)
        #expect(m.submit(other, at: .zero, modes: all, power: .init()) == .tooManyPendingTaskRequests)
        for i in 0..<10 {
            let p = TaskSchedulerStateMachine.Request(identifier: "p\(i)", kind: .processing)
            #expect(m.submit(p, at: .zero, modes: all, power: .init()) == nil)
        }
        let p10 = TaskSchedulerStateMachine.Request(identifier: "p10", kind: .processing)
        #expect(m.submit(p10, at: .zero, modes: all, power: .init()) == .tooManyPendingTaskRequests)
        #expect(m.pendingRequests.count == 11)
    }

    /// `earliestBeginDate`: "the system doesn't guarantee launching the task at the specified
    /// date, but only that it won't begin sooner"; `requiresExternalPower` and
    /// `requiresNetworkConnectivity` hold a processing task until they are met; a force-quit app
    /// runs no task until the user opens it again.
    @Test func aRequestRunsFromItsEarliestBeginWhenItsConditionsHold() {
        var m = TaskSchedulerStateMachine()
        let all: BackgroundModes = [.fetch, .processing]
        let power = TaskSchedulerStateMachine.Request(
            identifier: "p", kind: .processing, earliestBegin: .seconds(600), requiresExternalPower: true)
        _ = m.submit(power, at: .zero, modes: all, power: .init())
        #expect(m.nextDue(after: .zero) == .seconds(600))
        #expect(m.takeRunnable(at: .seconds(599), app: .suspended, terminatedByUser: false, power: .init()).isEmpty)
        #expect(m.takeRunnable(at: .seconds(600), app: .suspended, terminatedByUser: false, power: .init()).isEmpty)
        #expect(
            m.waiting(at: .seconds(600), app: .suspended, terminatedByUser: false, power: .init()).map(\.1)
                == [.requiresExternalPower])
        var charging = PowerAndRefresh()
        charging.charging = true
        #expect(m.takeRunnable(at: .seconds(700), app: .active, terminatedByUser: false, power: charging).isEmpty)
        #expect(m.takeRunnable(at: .seconds(700), app: .notRunning, terminatedByUser: true, power: charging).isEmpty)
        #expect(m.takeRunnable(at: .seconds(700), app: .suspended, terminatedByUser: false, power: charging) == [power])
        #expect(m.pendingRequests.isEmpty, "a request runs once")
    }

    /// BGAppRefreshTask "provides your app up to 30 seconds of background runtime. Complete your
    /// work within this time period and call setTaskCompleted(success:), or the system terminates
    /// your app"; "Not setting an expiration handler results in the system marking your task as
    /// complete and unsuccessful instead of sending a warning"; "The system terminates any
    /// background processing tasks running when the user starts using the device"
    /// (Choosing Background Strategies for Your App, BGTask.expirationHandler, BGProcessingTask).
    @Test func scheduledTasksRunAgainstTheirBudgetsAndEndWithTheProcess() {
        typealias M = ScheduledTaskStateMachine
        typealias Request = TaskSchedulerStateMachine.Request
        func at(_ s: Int, _ app: AppState = .background, swiped: Bool = false, power: PowerAndRefresh = .init())
            -> M.Situation
        {
            M.Situation(
                now: .seconds(s), app: app, appRuns: app != .suspended && app != .notRunning, terminatedByUser: swiped,
                power: power)
        }
        func task(
            _ action: ScheduledTaskAction, _ kind: TaskSchedulerStateMachine.Kind, _ identifier: String,
            _ reason: AuditReason? = nil, success: Bool? = nil
        ) -> DeviceAction {
            .record(
                .scheduledTask(action: action, kind: kind, identifier: identifier, success: success, reason: reason))
        }
        let timing = M.Timing(
            appRefreshBudget: .seconds(30), processingBudget: .seconds(300), expirationWarning: .seconds(5))
        let refresh = Request(identifier: "r", kind: .appRefresh, earliestBegin: .seconds(100))
        let processing = Request(identifier: "p", kind: .processing, requiresExternalPower: true)

        var old = M(version: IOSVersion(major: 12)!, modes: [.fetch, .processing], timing: timing)
        #expect(old.handle(.submit(refresh), in: at(0, .active)) == [task(.rejected, .appRefresh, "r", .needsIOS13)])
        #expect(old.lastSubmitError == .unavailable, "BGTaskScheduler arrived with iOS 13")

        var m = M(version: .newest, modes: [.fetch, .processing], timing: timing)
        #expect(m.handle(.submit(refresh), in: at(0, .suspended)).isEmpty)
        #expect(m.lastSubmitError == .unavailable, "a suspended app's code does not run")
        #expect(
            m.handle(.submit(refresh), in: at(0, .active)) == [
                .record(
                    .scheduledTask(
                        action: .submitted, kind: .appRefresh, identifier: "r", success: nil, reason: nil,
                        earliestBegin: .seconds(100))),
                .schedule(.taskRequestsDue, at: .seconds(100)),
            ])
        #expect(m.lastSubmitError == nil)
        #expect(
            m.handle(.submit(processing), in: at(10, .active)).last == .schedule(.taskRequestsDue, at: .seconds(10)),
            "due at once: looked at now")

        // Due, the processing request waits for power; said once for that reason.
        let waiting = [task(.waiting, .processing, "p", .requiresExternalPower)]
        let next: [DeviceAction] = [.post(.runDueTasks), .post(.scheduleNextTaskCheck)]
        #expect(
            m.handle(.requestsDue, in: at(10, .active)) == [task(.waiting, .processing, "p", .appInForeground)] + next)
        #expect(m.handle(.requestsDue, in: at(20, .suspended)) == waiting + next)
        #expect(m.handle(.requestsDue, in: at(30, .suspended)) == next, "said once")
        #expect(m.handle(.scheduleNext, in: at(30)) == [.schedule(.taskRequestsDue, at: .seconds(100))])
        #expect(m.handle(.runDue, in: at(100, .suspended)) == [.post(.startScheduledTask(refresh))])
        #expect(m.handle(.lookAgain, in: at(100)) == [.schedule(.taskRequestsDue, at: .seconds(100))], "p pends")

        // It runs: the suspended app is woken; without a handler registered it is dropped.
        #expect(
            m.handle(.start(refresh), in: at(100, .suspended))
                == [.post(.lifecycle(.wake(.backgroundAppRefresh))), .post(.launchScheduledTask(refresh))])
        #expect(m.handle(.launch(refresh), in: at(100)) == [task(.dropped, .appRefresh, "r", .notRegistered)])
        _ = m.handle(.register(identifier: "r"), in: at(100))
        #expect(
            m.handle(.launch(refresh), in: at(100)) == [
                .schedule(.scheduledTaskWarning(1), at: .seconds(125)),
                .schedule(.scheduledTaskDeadline(1), at: .seconds(130)), task(.began, .appRefresh, "r"),
                .call(.scheduledTaskLaunch(id: 1, identifier: "r", kind: .appRefresh)),
            ])
        #expect(
            m.handle(.warningDue(id: 1, reason: nil), in: at(125))
                == [task(.expiring, .appRefresh, "r"), .call(.scheduledTaskExpiration(id: 1))])
        // Resubmitted from the running task, it runs no sooner than a second later.
        #expect(
            m.handle(.submit(Request(identifier: "r", kind: .appRefresh)), in: at(126)).first
                == .record(
                    .scheduledTask(
                        action: .submitted, kind: .appRefresh, identifier: "r", success: nil, reason: nil,
                        earliestBegin: .seconds(127))))
        #expect(
            m.handle(.deadlineDue(id: 1), in: at(130))
                == [task(.expired, .appRefresh, "r", .budget), .post(.lifecycle(.terminate(.scheduledTaskExpired)))])

        // The user comes back: an app-refresh task's budget stops; a processing task is warned
        // and ends unsuccessfully. Off screen again, the budget starts afresh.
        var charging = PowerAndRefresh()
        charging.charging = true
        _ = m.handle(.register(identifier: "p"), in: at(140))
        #expect(
            m.handle(.runDue, in: at(140, .suspended, power: charging)) == [
                .post(.startScheduledTask(processing)),
                .post(.startScheduledTask(Request(identifier: "r", kind: .appRefresh, earliestBegin: .seconds(127)))),
            ])
        _ = m.handle(.launch(processing), in: at(140))
        #expect(
            m.handle(.enteredForeground, in: at(150, .active)) == [
                .cancel(.scheduledTaskWarning(1)), .cancel(.scheduledTaskDeadline(1)),
                .cancel(.scheduledTaskWarning(2)), .cancel(.scheduledTaskDeadline(2)),
                .post(.scheduledTaskWarning(id: 2, reason: .userActive)),
                .post(.completeScheduledTaskIfRunning(id: 2)),
            ])
        #expect(
            m.handle(.completeIfRunning(id: 2), in: at(150, .active)) == [
                .cancel(.scheduledTaskDeadline(2)), .cancel(.scheduledTaskWarning(2)),
                task(.completed, .processing, "p", success: false), .call(.scheduledTaskEnded(id: 2)),
            ])
        #expect(m.handle(.completeIfRunning(id: 2), in: at(150, .active)).isEmpty, "completed once")
        #expect(
            m.handle(.enteredBackground, in: at(200)) == [
                .schedule(.scheduledTaskWarning(1), at: .seconds(225)),
                .schedule(.scheduledTaskDeadline(1), at: .seconds(230)),
            ])

        // The process ends: its tasks end, and its handlers must be registered again.
        #expect(
            m.handle(.appTerminated, in: at(210, .notRunning)) == [
                .cancel(.scheduledTaskDeadline(1)), .cancel(.scheduledTaskWarning(1)),
                task(.ended, .appRefresh, "r", .terminated),
            ])
        #expect(m.running.isEmpty && m.registered.isEmpty)
        #expect(m.handle(.deadlineDue(id: 1), in: at(230)).isEmpty)
    }
}

/// The lifecycle names each wake by the cause of the same name: the two lists must agree (the
/// mapping from one to the other relies on it).
@Suite struct WakeCauseNamesTests {
    @Test func everyWakeCauseIsALifecycleCause() {
        for wake in WakeCause.allCases {
            #expect(LifecycleCause(rawValue: wake.rawValue) != nil, "\(wake)")
            #expect(AppLifecycleStateMachine.cause(wake).rawValue == wake.rawValue)
        }
    }
}
