import Foundation
import Testing

@testable import Waymark

/// The location service's rules, from tables: every start, every decision of a fix by the app's
/// state, authorization, session and iOS release, the queue of a suspended app, and the
/// provisional-Always prompt's held event.
@Suite struct LocationServiceMachineTests {
    typealias Machine = LocationServiceStateMachine

    static let ios12 = IOSVersion(major: 12)!

    /// A context by short name: where the app is, and what it may do.
    static func context(
        _ state: AppState, inUse: Bool = false, running: DeliveryPolicy.Running? = nil,
        auth: AuthorizationStatus = .authorizedWhenInUse, provisional: Bool = false, services: Bool = true,
        locationMode: Bool = false, allows: Bool = false, indicator: Bool = false, now: Duration = .seconds(100),
        distanceFilter: Double = -1
    ) -> Machine.Context {
        var settings = Machine.Settings()
        settings.allowsBackgroundLocationUpdates = allows
        settings.showsBackgroundLocationIndicator = indicator
        settings.distanceFilter = distanceFilter
        settings.pausesLocationUpdatesAutomatically = false
        return Machine.Context(
            now: now, appState: state, appInUse: inUse || state.isForeground, running: running, authorization: auth,
            isProvisionalAlways: provisional, accuracy: .fullAccuracy, locationServicesEnabled: services,
            hasLocationMode: locationMode, settings: settings)
    }

    static func fix(_ index: Int, metresEast: Double = 0, at seconds: Int = 100) -> SourceEvent {
        let c = Geodesic.destination(
            from: Coordinate(latitude: 48.137, longitude: 11.575), bearing: 90, distance: metresEast)
        let location = Location(
            coordinate: c, altitude: 520, horizontalAccuracy: 5, verticalAccuracy: 8, speed: 1, course: 90,
            timestamp: Date(timeIntervalSince1970: Double(seconds)),
            provenance: Provenance(
                source: .file(path: "t", index: index), isSimulatedBySoftware: true, fixMode: .threeD))
        return SourceEvent(offset: .seconds(seconds), kind: .fix(location), index: index, segment: 0)
    }

    /// The first manager's actions, short: each decision, each delivery, each error, and the
    /// service's own events. The delegate calls that go with an error, a pause and a resume are
    /// left out here (``theMachineAnswersInTheDeviceActions()`` checks them); anything else is
    /// `unexpected`.
    static func decisions(_ actions: [DeviceAction]) -> [String] {
        actions.compactMap { action -> String? in
            switch action {
            case .decided(let o):
                "\(o.decision.rawValue):\(o.reason.rawValue)\(o.indicator ? "+indicator" : "")"
            case .deliver(let count, _, manager: 1): "deliver\(count)"
            case .record(.error(let e, _)): "error:\(e.code.name)"
            case .call(.delegate(.didFailWithError, to: .manager(_))),
                .call(.delegate(.didPauseLocationUpdates, to: .manager(1))),
                .call(.delegate(.didResumeLocationUpdates, to: .manager(1))):
                nil
            case .post(.authorization(.neededAlways)): "needsAlways"
            case .record(.heldDiscarded(let n, let r, _)): "discarded\(n):\(r.rawValue)"
            case .record(.updates(.started, manager: 1)): "started"
            case .record(.updates(.stopped, manager: 1)): "stopped"
            case .record(.paused(.stationary, manager: 1)): "paused"
            case .record(.resumed(.appRestarted, manager: 1)): "resumed"
            default: "unexpected \(action)"
            }
        }
    }

    /// One row: how updates were started (the context at the start), the context of the fix, the
    /// release, and what the machine does.
    static let decisionTable: [(String, Machine.Context, Machine.Context, IOSVersion, [String])] = [
        ("foreground", context(.active), context(.active), .newest, ["delivered:foreground", "deliver1"]),
        ("inactive", context(.active), context(.inactive), .newest, ["delivered:foreground", "deliver1"]),
        (
            "grace period", context(.active), context(.background, inUse: true, running: .gracePeriod), .newest,
            ["delivered:gracePeriod", "deliver1"]
        ),
        // iOS 13+: a task does not make a When In Use app in use.
        (
            "task, iOS 13+", context(.active), context(.background, running: .backgroundTask), .newest,
            ["dropped:notInUse"]
        ),
        (
            "fetch, iOS 13+", context(.active), context(.background, running: .backgroundFetch), .newest,
            ["dropped:notInUse"]
        ),
        (
            "task, iOS 12", context(.active), context(.background, running: .backgroundTask), ios12,
            ["delivered:backgroundTask", "deliver1"]
        ),
        (
            "started in the background, iOS 12", context(.background, running: .backgroundTask),
            context(.background, running: .backgroundTask), ios12, ["dropped:whenInUseStartedInBackground"]
        ),
        ("suspended, iOS 13+", context(.active), context(.suspended), .newest, ["dropped:notInUse"]),
        ("suspended, iOS 12", context(.active), context(.suspended), ios12, ["held:suspended"]),
        (
            "suspended, Always", context(.active, auth: .authorizedAlways),
            context(.suspended, auth: .authorizedAlways),
            .newest, ["held:suspended"]
        ),
        // A session needs the mode, allowsBackgroundLocationUpdates and a start in use (or Always).
        (
            "session, When In Use", context(.active, locationMode: true, allows: true),
            context(.background, locationMode: true, allows: true), .newest,
            ["delivered:backgroundSession+indicator", "deliver1"]
        ),
        (
            "session started in the grace period", context(.background, inUse: true, locationMode: true, allows: true),
            context(.background, locationMode: true, allows: true), .newest,
            ["delivered:backgroundSession+indicator", "deliver1"]
        ),
        (
            "no session without allows", context(.active, locationMode: true),
            context(.background, running: .backgroundTask, locationMode: true), .newest, ["dropped:notInUse"]
        ),
        (
            "session, Always started out of use",
            context(.background, auth: .authorizedAlways, locationMode: true, allows: true),
            context(.background, auth: .authorizedAlways, locationMode: true, allows: true), .newest,
            ["delivered:backgroundSession", "deliver1"]
        ),
        (
            "session, Always with the indicator",
            context(.background, auth: .authorizedAlways, locationMode: true, allows: true, indicator: true),
            context(.background, auth: .authorizedAlways, locationMode: true, allows: true, indicator: true), .newest,
            ["delivered:backgroundSession+indicator", "deliver1"]
        ),
        // A downgrade applies at once: no session for a start out of use under When In Use.
        (
            "downgraded to When In Use",
            context(.background, auth: .authorizedAlways, locationMode: true, allows: true),
            context(.background, running: .backgroundTask, locationMode: true, allows: true), .newest,
            ["dropped:notInUse"]
        ),
        (
            "provisional Always out of use", context(.active, auth: .authorizedAlways, provisional: true),
            context(.background, running: .backgroundTask, auth: .authorizedAlways, provisional: true), .newest,
            ["needsAlways", "held:awaitingAlways"]
        ),
        (
            "provisional Always in the grace period", context(.active, auth: .authorizedAlways, provisional: true),
            context(.background, inUse: true, running: .gracePeriod, auth: .authorizedAlways, provisional: true),
            .newest, ["delivered:gracePeriod", "deliver1"]
        ),
        ("not running", context(.active), context(.notRunning), .newest, ["dropped:appNotRunning"]),
        ("denied", context(.active), context(.active, auth: .denied), .newest, ["dropped:denied", "error:denied"]),
        (
            "restricted", context(.active), context(.active, auth: .restricted), .newest,
            ["dropped:restricted", "error:denied"]
        ),
        (
            "not determined", context(.active), context(.active, auth: .notDetermined), .newest,
            ["dropped:notDetermined"]
        ),
        (
            "services off", context(.active), context(.active, auth: .denied, services: false), .newest,
            ["dropped:locationServicesDisabled", "error:denied"]
        ),
    ]

    @Test(arguments: decisionTable.indices)
    func eachDecision(_ row: Int) {
        let (name, start, c, version, expected) = Self.decisionTable[row]
        var machine = Machine(version: version, heldDelivery: .all)
        _ = machine.handle(.start(start))
        #expect(Self.decisions(machine.handle(.source(Self.fix(0), c))) == expected, "\(name)")
    }

    @Test func updatesNotStartedIgnoreFixesAndStopEndsThem() {
        var machine = Machine(version: .newest, heldDelivery: .all)
        #expect(Self.decisions(machine.handle(.source(Self.fix(0), Self.context(.active)))) == ["ignored:notUpdating"])
        #expect(Self.decisions(machine.handle(.start(Self.context(.active)))) == ["started"])
        #expect(machine.handle(.start(Self.context(.active))).isEmpty, "a second start does nothing")
        #expect(Self.decisions(machine.handle(.stop)) == ["stopped"])
        #expect(machine.handle(.stop).isEmpty)
        #expect(machine.state == .stopped)
    }

    /// A suspended app that resumes on its way to the foreground gets its held fixes once it is
    /// active, once; a process that ends first gets none.
    @Test func heldFixesWaitForActivationAfterAResumeToTheForeground() {
        let always = { (state: AppState) in Self.context(state, auth: .authorizedAlways) }
        var machine = Machine(version: .newest, heldDelivery: .all)
        _ = machine.handle(.start(always(.active)))
        func hold(_ i: Int) {
            #expect(Self.decisions(machine.handle(.source(Self.fix(i), always(.suspended)))) == ["held:suspended"])
        }
        hold(1)
        #expect(machine.handle(.appBecameActive(always(.active))).isEmpty, "nothing resumed")
        #expect(machine.handle(.resumedForForeground).isEmpty, "held until the app is active")
        #expect(machine.heldCount == 1)
        #expect(Self.decisions(machine.handle(.appBecameActive(always(.active)))) == ["delivered:resumed", "deliver1"])
        hold(2)
        #expect(machine.handle(.appBecameActive(always(.active))).isEmpty, "once")
        _ = machine.handle(.resumedForForeground)
        _ = machine.handle(.appTerminated)
        #expect(machine.handle(.appBecameActive(always(.active))).isEmpty, "the ended process resumed nothing")
    }

    /// Starting updates under a provisional Always out of use needs Always; starting them with
    /// Location Services off reports denied.
    @Test func startsThatNeedAlwaysOrMeetServicesOff() {
        var provisional = Machine(version: .newest, heldDelivery: .all)
        let c = Self.context(.background, running: .backgroundTask, auth: .authorizedAlways, provisional: true)
        #expect(Self.decisions(provisional.handle(.start(c))) == ["started", "needsAlways"])
        var off = Machine(version: .newest, heldDelivery: .all)
        #expect(
            Self.decisions(off.handle(.start(Self.context(.active, auth: .denied, services: false))))
                == ["started", "error:denied"])
    }

    /// Rule 2: queued fixes obey distanceFilter like any other, and come back in one call.
    @Test(arguments: [Scenario.HeldDelivery.all, .newest, .none])
    func aSuspendedAppsQueueObeysTheFiltersAndComesBackInOneCall(_ held: Scenario.HeldDelivery) {
        var machine = Machine(version: .newest, heldDelivery: held)
        let always = { (state: AppState) in
            Self.context(state, auth: .authorizedAlways, distanceFilter: 50)
        }
        _ = machine.handle(.start(always(.active)))
        _ = machine.handle(.source(Self.fix(0), always(.active)))
        var queued = 0
        for i in 1...10 {
            let actions = Self.decisions(
                machine.handle(.source(Self.fix(i, metresEast: Double(i) * 14), always(.suspended))))
            if actions == ["held:suspended"] { queued += 1 } else { #expect(actions == ["dropped:distanceFilter"]) }
        }
        // 14 m steps: one fix in four leaves 50 m behind (56, 112, 168 m: 4, 8 of 10 steps).
        #expect(queued == 2)
        #expect(machine.heldCount == 2)
        let resumed = Self.decisions(machine.handle(.appResumed(always(.active))))
        switch held {
        case .all: #expect(resumed == ["delivered:resumed", "delivered:resumed", "deliver2"])
        case .newest: #expect(resumed == ["discarded1:resume", "delivered:resumed", "deliver1"])
        case .none: #expect(resumed == ["discarded2:resume"])
        }
        #expect(machine.heldCount == 0)
    }

    /// Rule 4: the event that brought up the provisional upgrade prompt waits for the answer,
    /// then is delivered, or dropped when declined or too old; while the prompt shows, later
    /// fixes are dropped.
    @Test func theEventThatNeedsAlwaysWaitsForTheAnswer() {
        let out = { (now: Int) in
            Self.context(
                .background, running: .backgroundTask, auth: .authorizedAlways, provisional: true,
                now: .seconds(now))
        }
        func started() -> Machine {
            var m = Machine(version: .newest, heldDelivery: .all)
            _ = m.handle(.start(Self.context(.active, auth: .authorizedAlways, provisional: true)))
            #expect(Self.decisions(m.handle(.source(Self.fix(0), out(100)))) == ["needsAlways", "held:awaitingAlways"])
            #expect(Self.decisions(m.handle(.source(Self.fix(1), out(110)))) == ["dropped:alwaysPromptShowing"])
            return m
        }
        let always = { (now: Int, state: AppState) in
            Self.context(state, running: .backgroundTask, auth: .authorizedAlways, now: .seconds(now))
        }
        var granted = started()
        #expect(
            Self.decisions(granted.handle(.alwaysAnswered(granted: true, always(130, .background))))
                == ["delivered:alwaysGranted", "deliver1"])
        var late = started()
        #expect(
            Self.decisions(late.handle(.alwaysAnswered(granted: true, always(161, .background))))
                == ["discarded1:stale"])
        var declined = started()
        #expect(
            Self.decisions(declined.handle(.alwaysAnswered(granted: false, Self.context(.background))))
                == ["discarded1:alwaysDeclined"])
        var suspended = started()
        #expect(suspended.handle(.alwaysAnswered(granted: true, always(130, .suspended))).isEmpty)
        #expect(suspended.heldCount == 1, "granted while suspended, it waits in the queue")
    }

    /// Rule 7: a stationary device pauses updates; only the app's own start resumes them.
    @Test func onlyTheAppRestartsPausedUpdates() {
        var machine = Machine(version: .newest, heldDelivery: .all)
        var c = Self.context(.active)
        c.settings.pausesLocationUpdatesAutomatically = true
        _ = machine.handle(.start(c))
        var paused = false
        for minute in 0...11 {
            c.now = .seconds(minute * 60)
            let actions = Self.decisions(machine.handle(.source(Self.fix(minute, at: minute * 60), c)))
            if actions.contains("paused") { paused = true }
        }
        #expect(paused && machine.isPaused)
        // The device moves far: still paused.
        c.now = .seconds(720)
        #expect(
            Self.decisions(machine.handle(.source(Self.fix(12, metresEast: 500, at: 720), c))) == ["dropped:paused"])
        #expect(Self.decisions(machine.handle(.start(c))) == ["resumed"])
        #expect(!machine.isPaused && machine.isUpdating)
    }

    /// "For apps that have in-use authorization, a pause to location updates ends access to
    /// location changes until the app launches again and is able to restart those updates": a
    /// restart out of use gives a When In Use app no background session.
    @Test func aRestartOutOfUseGivesAWhenInUseAppNoSession() {
        var machine = Machine(version: .newest, heldDelivery: .all)
        var c = Self.context(.active, locationMode: true, allows: true)
        c.settings.pausesLocationUpdatesAutomatically = true
        _ = machine.handle(.start(c))
        for minute in 0...11 {
            c.now = .seconds(minute * 60)
            _ = machine.handle(.source(Self.fix(minute, at: minute * 60), c))
        }
        #expect(machine.isPaused)
        var away = Self.context(.background, running: .backgroundTask, locationMode: true, allows: true)
        away.now = .seconds(720)
        #expect(Self.decisions(machine.handle(.start(away))) == ["resumed"])
        #expect(!machine.hasBackgroundSession(away))
        var always = away
        always.authorization = .authorizedAlways
        #expect(machine.hasBackgroundSession(always), "Always may run on in the background")
    }

    /// A terminated app's queue and held event are discarded, and its updates stop.
    @Test func terminationDiscardsTheQueue() {
        var machine = Machine(version: .newest, heldDelivery: .all)
        let always = Self.context(.suspended, auth: .authorizedAlways)
        _ = machine.handle(.start(Self.context(.active, auth: .authorizedAlways)))
        _ = machine.handle(.source(Self.fix(0), always))
        #expect(Self.decisions(machine.handle(.appTerminated)) == ["discarded1:terminated"])
        #expect(machine.state == .stopped && machine.lastCoordinate == nil)
    }

    /// The machine's answers are the device's actions, as the manager it serves has them: the
    /// starts, stops and errors of every manager are audit events (another's with its number),
    /// and another's ignored fixes are left out; errors, pauses and resumes go to the manager's own delegate;
    /// a fix dropped for a reason live updates report is a diagnostic for them first (the one for
    /// a request in progress only while its prompt is up), and a delivery after a diagnostic
    /// makes it stale.
    @Test func theMachineAnswersInTheDeviceActions() throws {
        // Another manager.
        var second = Machine(version: .newest, heldDelivery: .all, manager: 2)
        #expect(second.handle(.source(Self.fix(0), Self.context(.active))).isEmpty, "ignored, not recorded")
        #expect(second.handle(.start(Self.context(.active))) == [.record(.updates(action: .started, manager: 2))])
        let delivered = second.handle(.source(Self.fix(1), Self.context(.active)))
        guard delivered.count == 2, case .decided(let o) = delivered[0] else {
            Issue.record("\(delivered)")
            return
        }
        #expect(o.manager == 2 && o.decision == .delivered)
        #expect(delivered[1] == .deliver(count: 1, reason: .foreground, manager: 2))
        let error = LocationError(.denied, reason: "denied")
        #expect(
            second.handle(.authorizationChanged(Self.context(.active, auth: .denied)))
                == [.record(.error(error, manager: 2)), .call(.delegate(.didFailWithError(error), to: .manager(2)))])
        #expect(second.handle(.stop) == [.record(.updates(action: .stopped, manager: 2))])

        // Each manager's live updates hear of its own fixes (CLLocationUpdate.liveUpdates() has
        // a manager of its own, often not the app's first).
        for number in [1, 3] {
            var first = Machine(version: .newest, heldDelivery: .all, manager: number)
            _ = first.handle(.start(Self.context(.active)))
            var denied = Self.context(.active, auth: .denied)
            denied.live.listening = true
            let dropped = first.handle(.source(Self.fix(2), denied))
            #expect(dropped.first == .post(.liveDiagnostic(.authorizationDenied, manager: number)))
            #expect(Self.decisions(Array(dropped.dropFirst())) == ["dropped:denied", "error:denied"])
            denied.live.listening = false
            #expect(
                !first.handle(.source(Self.fix(3), denied)).contains(
                    .post(.liveDiagnostic(.authorizationDenied, manager: number))))
            // A request in progress is a diagnostic only while its prompt is up.
            var asking = Self.context(.active, auth: .notDetermined)
            asking.live.listening = true
            #expect(
                !first.handle(.source(Self.fix(4), asking)).contains(
                    .post(.liveDiagnostic(.authorizationRequestInProgress, manager: number))))
            asking.live.promptPending = true
            #expect(
                first.handle(.source(Self.fix(5), asking)).first
                    == .post(.liveDiagnostic(.authorizationRequestInProgress, manager: number)))
            var shown = Self.context(.active)
            shown.live.diagnosticShown = true
            // The diagnostic is cleared before the delegate hears of the location.
            #expect(
                first.handle(.source(Self.fix(6), shown)).suffix(2) == [
                    .post(.liveUpdateDelivered(manager: number)),
                    .deliver(count: 1, reason: .foreground, manager: number),
                ])
            #expect(
                first.handle(.source(Self.fix(7), Self.context(.active))).last
                    == .deliver(count: 1, reason: .foreground, manager: number))
        }
    }

    /// A pause is said to the manager's delegate, and to live updates when the app listens
    /// (iOS 17: "If Core Location stops delivering updates because the device is stationary").
    @Test func aPauseIsSaidToTheDelegateAndToLiveUpdates() {
        for listening in [false, true] {
            var machine = Machine(version: .newest, heldDelivery: .all)
            var c = Self.context(.active)
            c.settings.pausesLocationUpdatesAutomatically = true
            c.live.listening = listening
            _ = machine.handle(.start(c))
            var pause: [DeviceAction] = []
            for minute in 0...11 where pause.isEmpty {
                c.now = .seconds(minute * 60)
                let actions = machine.handle(.source(Self.fix(minute, at: minute * 60), c))
                if let i = actions.firstIndex(of: .record(.paused(reason: .stationary))) {
                    pause = Array(actions[i...].prefix { if case .decided = $0 { false } else { true } })
                }
            }
            #expect(
                pause
                    == [
                        .record(.paused(reason: .stationary)),
                        .call(.delegate(.didPauseLocationUpdates, to: .manager(1))),
                    ]
                    + (listening
                        ? [
                            .record(.liveUpdate(stationary: true, diagnostic: nil)), .call(.liveStationary(manager: 1)),
                        ] : []),
                "listening: \(listening)")
            #expect(
                machine.handle(.start(c))
                    == [
                        .record(.resumed(reason: .appRestarted)),
                        .call(.delegate(.didResumeLocationUpdates, to: .manager(1))),
                    ])
        }
    }
}
