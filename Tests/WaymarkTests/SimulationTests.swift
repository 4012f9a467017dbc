import Foundation
import Testing

@testable import Waymark

/// A clock that never waits: `sleep(until:)` records the deadline and moves time there at once.
final class RecordingClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private let lock = NSLock()  // guards `current` and `deadlines`
    private var current = Instant(offset: .seconds(1000))
    private var deadlines: [Duration] = []

    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .nanoseconds(1) }
    /// The deadlines slept until, relative to the first reading of the clock.
    var sleeps: [Duration] { lock.withLock { deadlines.map { $0 - .seconds(1000) } } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        lock.withLock {
            deadlines.append(deadline.offset)
            if deadline > current { current = deadline }
        }
    }
}

/// Records what a delegate receives.
final class RecordingDelegate: DeviceLocationManagerDelegate {
    var locations: [Location] = []
    var errors: [LocationError] = []
    var authorizationChanges = 0
    var pauses = 0
    var resumes = 0
    func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
        self.locations += locations
    }
    func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {
        errors.append(error)
    }
    func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) { authorizationChanges += 1 }
    func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) { pauses += 1 }
    func locationManagerDidResumeLocationUpdates(_ manager: DeviceLocationManager) { resumes += 1 }
}

@Suite struct SimulationTests {
    static func source(_ trace: String = "walk", loops: Int? = 1) throws -> GPXReplaySource {
        let path = Paths.fixture("scenarios/traces/\(trace).gpx")
        let (document, _) = try readDocument(path)
        return GPXReplaySource(schedule: try ReplaySchedule(document: document, file: path), name: trace, loops: loops)
    }

    static let epoch = Date(timeIntervalSince1970: 1_714_550_400)

    static var busyScenario: Scenario {
        var s = Scenario()
        s.info.backgroundModes = [.location, .fetch]
        s.device.authorization = .notDetermined
        s.app.request = .always
        s.user.whenInUse = .allowWhileUsing
        // The provisional-Always upgrade prompt comes in the background; the user changes to
        // Always, so the suspended app's fixes queue and come back on resume.
        s.user.always = .changeToAlways
        s.user.answerAfter = .seconds(2)
        s.app.beginsBackgroundTask = true
        s.app.fetchInterval = .every(.seconds(120))
        s.system.taskBudget = .seconds(30)
        s.timeline = [
            .init(at: .seconds(60), .background), .init(at: .seconds(200), .foreground),
            .init(at: .seconds(300), .background), .init(at: .seconds(420), .setPreciseLocation(false)),
            .init(at: .seconds(480), .foreground),
        ]
        return s
    }

    /// The example of the article "Modelling background behaviour".
    @Test func theArticleExampleRuns() async throws {
        let path = Paths.fixture("scenarios/traces/walk.gpx")
        let document = try GPXDocument(reader: GPXReader(contentsOf: path))
        let schedule = try ReplaySchedule(document: document, file: path)

        var scenario = Scenario()
        scenario.info.backgroundModes = [.location]
        scenario.manager.allowsBackgroundLocationUpdates = true
        scenario.timeline = [.init(at: .seconds(90), .background), .init(at: .seconds(600), .foreground)]

        let simulation = Simulation(scenario: scenario, epoch: schedule.fixes[0].location.timestamp)
        let myDelegate = RecordingDelegate()
        simulation.manager.delegate = myDelegate
        let updates = simulation.manager.updates()
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        let summary = try await simulation.run(GPXReplaySource(schedule: schedule, name: path))
        var count = 0
        for await _ in updates { count += 1 }
        #expect(summary.count(.backgroundSession) == 51)
        #expect(count == 61 && myDelegate.locations.count == 61)
    }

    @Test func sameInputsGiveAByteIdenticalAuditLog() async throws {
        var logs: [String] = []
        for _ in 0..<2 {
            let simulation = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
            let recorder = AuditRecorder()
            simulation.addObserver(recorder)
            try await simulation.run(try Self.source())
            logs.append(recorder.ndjson(epoch: Self.epoch))
        }
        #expect(logs[0] == logs[1])
        #expect(logs[0].contains("\"event\":\"prompt\""))
        #expect(logs[0].contains("\"reason\":\"resumed\""))
    }

    @Test func theDelegateAndTheAsyncSequenceReceiveTheSameLocations() async throws {
        let simulation = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let delegate = RecordingDelegate()
        simulation.manager.delegate = delegate
        let stream = simulation.manager.updates()
        let summary = try await simulation.run(try Self.source())
        var streamed: [LocationUpdate] = []
        for await update in stream { streamed.append(update) }
        #expect(!delegate.locations.isEmpty)
        #expect(streamed.map(\.location) == delegate.locations)
        #expect(delegate.locations.count == summary.count(.delivered) + summary.resumedDeliveries)
        #expect(simulation.tutorialApp!.stored.map(\.location) == delegate.locations)
        #expect(streamed.map(\.appState) == simulation.tutorialApp!.stored.map(\.appState))
        #expect(delegate.authorizationChanges >= 2)
    }

    /// An app that does not keep its locations hands each to `onStored` as it stores it: a run's
    /// outputs (GeoJSON without a store) stream them, and the app holds only what its fetch has
    /// yet to sync (issue 15, item 13). The streamed locations are the ones a keeping app has,
    /// in order, and written as GeoJSON they give the same bytes.
    @Test func anAppThatKeepsNothingStreamsWhatItStores() async throws {
        let keeping = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        try await keeping.run(try Self.source(loops: 6))
        let kept = try #require(keeping.tutorialApp?.stored)

        let streaming = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let app = try #require(streaming.tutorialApp)
        app.retainsStoredLocations = false
        nonisolated(unsafe) var streamed: [StoredLocation] = []
        nonisolated(unsafe) var mostHeld = 0
        app.onStored = { location in
            streamed.append(location)
            mostHeld = max(mostHeld, app.stored.count)
        }
        try await streaming.run(try Self.source(loops: 6))
        #expect(kept.count > 20, "\(kept.count)")
        #expect(streamed == kept)
        #expect(mostHeld < kept.count / 2, "held \(mostHeld) of \(kept.count): only what fetch has yet to sync")

        let whole = try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            try writer.writeDelivered(kept, name: "delivered")
            try writer.finish()
        }
        let incremental = try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            writer.beginDelivered()
            for location in streamed { try writer.addDelivered(location) }
            try writer.endDelivered(name: "delivered")
            try writer.finish()
        }
        #expect(whole == incremental)
    }

    @Test func virtualTimeNeverWaitsAndPacedTimeWaitsForEveryEvent() async throws {
        let clock = RecordingClock()
        let simulation = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(try Self.source(), clock: clock, rate: 4)
        // Every fix and timer was waited for at its offset divided by the rate, in order.
        let sleeps = clock.sleeps
        #expect(sleeps == sleeps.sorted())
        let fixOffsets = Set(
            recorder.events.compactMap { e -> Duration? in
                if case .fix = e.kind { return e.offset / 4 } else { return nil }
            })
        #expect(fixOffsets.isSubset(of: Set(sleeps)))
        #expect(sleeps.last == .seconds(150))  // the walk's last fix at 600 s, at 4×

        // The same scenario in virtual time gives the same events.
        let virtual = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let virtualRecorder = AuditRecorder()
        virtual.addObserver(virtualRecorder)
        try await virtual.run(try Self.source())
        #expect(virtualRecorder.ndjson(epoch: Self.epoch) == recorder.ndjson(epoch: Self.epoch))
    }

    /// A driver that feeds events one by one (as a live recorder will) gets the same run.
    @Test func drivingStepByStepGivesTheSameRunAsRun() async throws {
        let whole = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let wholeLog = AuditRecorder()
        whole.addObserver(wholeLog)
        try await whole.run(try Self.source())

        let stepped = Simulation(scenario: Self.busyScenario, epoch: Self.epoch)
        let steppedLog = AuditRecorder()
        stepped.addObserver(steppedLog)
        stepped.start(source: "walk")
        var last: Duration = .zero
        for event in try Self.source().allEvents {
            stepped.receive(event)
            last = event.offset
        }
        stepped.advance(to: last)
        stepped.finish()
        #expect(steppedLog.ndjson(epoch: Self.epoch) == wholeLog.ndjson(epoch: Self.epoch))
    }

    @Test func aLoopedTraceRunsOnWithLaterTimesAndNewSegments() throws {
        let once = try Self.source().allEvents
        let twice = try Self.source(loops: 2).allEvents
        #expect(twice.count == 2 * once.count)
        let second = twice[once.count...]
        #expect(second.first!.offset == once.last!.offset + .seconds(1))
        #expect(zip(twice, twice.dropFirst()).allSatisfy { $0.offset < $1.offset })
        #expect(second.allSatisfy { $0.segment == 1 })
        if case .fix(let a) = once.first!.kind, case .fix(let b) = second.first!.kind {
            #expect(b.timestamp.timeIntervalSince(a.timestamp) == 601)
            #expect(a.coordinate == b.coordinate)
        } else {
            Issue.record("expected fixes")
        }
    }

    @Test func theRunEndsAtTheScenarioEndEvenWhenLoopingForever() async throws {
        var s = Scenario()
        s.end = .seconds(3600)
        let simulation = Simulation(scenario: s, epoch: Self.epoch)
        let summary = try await simulation.run(try Self.source(loops: nil))
        #expect(simulation.now == .seconds(3600))
        // 61 fixes a loop, a loop every 601 s: 5 full loops and 60 fixes (one per 10 s) of the sixth... up to 3600 s.
        #expect(summary.fixes == 5 * 61 + 60)
    }

    /// Rule 7: after a pause the app, not the system, restarts updates ("After a pause occurs,
    /// it's your responsibility to restart location services again when you determine that
    /// they're needed", `pausesLocationUpdatesAutomatically`). The tutorial app restarts them when
    /// it next becomes active.
    @Test func pauseAndResumeReachTheDelegate() async throws {
        let simulation = Simulation(scenario: Scenario(), epoch: Self.epoch)
        let delegate = RecordingDelegate()
        simulation.manager.delegate = delegate
        try await simulation.run(try Self.source("stop"))
        #expect(delegate.pauses == 1)
        #expect(delegate.resumes == 0, "the system never resumes by itself, even when the device moves")

        var scenario = Scenario()
        scenario.timeline = [.init(at: .seconds(900), .deactivate), .init(at: .seconds(960), .activate)]
        let restarted = Simulation(scenario: scenario, epoch: Self.epoch)
        let second = RecordingDelegate()
        restarted.manager.delegate = second
        let recorder = AuditRecorder()
        restarted.addObserver(recorder)
        try await restarted.run(try Self.source("stop"))
        #expect(second.pauses == 1 && second.resumes == 1)
        let log = recorder.ndjson(epoch: Self.epoch)
        #expect(log.contains(#""event":"app","action":"startUpdatingLocation","detail":"restartAfterPause""#))
    }

    @Test func noFixReachesTheDelegateAsLocationUnknown() async throws {
        let simulation = Simulation(scenario: Scenario(), epoch: Self.epoch)
        let delegate = RecordingDelegate()
        simulation.manager.delegate = delegate
        try await simulation.run(try Self.source("nofix"))
        #expect(delegate.errors.map(\.code) == [.locationUnknown, .locationUnknown])
    }

    @Test func timersFireInTimeOrderWithActionsFirstAndThenSchedulingOrder() {
        var queue = TimerQueue()
        queue.schedule(.app(id: 1, launch: 0), at: .seconds(5))
        queue.schedule(.app(id: 2, launch: 0), at: .seconds(3))
        queue.schedule(.action(.background), at: .seconds(5), class: .action)
        queue.schedule(.app(id: 3, launch: 0), at: .seconds(5))
        queue.schedule(.action(.foreground), at: .seconds(5), class: .action)
        var order: [String] = []
        while let e = queue.pop() {
            switch e.timer {
            case .app(let id, _): order.append("timer\(id)@\(e.time)")
            case .action(let a): order.append("\(a.name)@\(e.time)")
            default: break
            }
        }
        #expect(
            order == [
                "timer2@3.0 seconds", "background@5.0 seconds", "foreground@5.0 seconds", "timer1@5.0 seconds",
                "timer3@5.0 seconds",
            ])
    }

    /// A system timer scheduled again replaces the pending one, and a cancelled one never fires:
    /// the device needs no generation counters.
    @Test func aRescheduledOrCancelledSystemTimerFiresOnlyAsLastSet() {
        var queue = TimerQueue()
        queue.schedule(.gracePeriodEnd, at: .seconds(5))
        queue.schedule(.gracePeriodEnd, at: .seconds(8))
        queue.schedule(.taskWarning, at: .seconds(6))
        queue.cancel(.taskWarning)
        queue.schedule(.fetchWake, at: .seconds(7))
        #expect(queue.nextTime == .seconds(7))
        var fired: [String] = []
        while let e = queue.pop() { fired.append("\(e.timer)@\(e.time)") }
        #expect(
            fired == [
                "system(Waymark.TimerKey.fetchWake)@7.0 seconds", "system(Waymark.TimerKey.gracePeriodEnd)@8.0 seconds",
            ])
    }
}

/// The delivery policy's table: every authorization against every app state.
@Suite struct DeliveryPolicyTests {
    @Test(arguments: AuthorizationStatus.allCases, AppState.allCases)
    func everyStatusAgainstEveryState(_ status: AuthorizationStatus, _ state: AppState) {
        let c = DeliveryPolicy.Context(appState: state, isUpdating: true, authorization: status, running: .gracePeriod)
        let (decision, reason) = DeliveryPolicy.decide(c)
        switch (status, state) {
        case (_, .notRunning): #expect((decision, reason) == (.dropped, .appNotRunning))
        case (.notDetermined, _): #expect((decision, reason) == (.dropped, .notDetermined))
        case (.denied, _): #expect((decision, reason) == (.dropped, .denied))
        case (.restricted, _): #expect((decision, reason) == (.dropped, .restricted))
        case (_, .active), (_, .inactive): #expect((decision, reason) == (.delivered, .foreground))
        case (_, .background): #expect((decision, reason) == (.delivered, .gracePeriod))
        case (_, .suspended): #expect((decision, reason) == (.held, .suspended))
        }
    }

    @Test func backgroundRulesInOrder() {
        func decide(_ c: DeliveryPolicy.Context) -> FixReason { DeliveryPolicy.decide(c).1 }
        let base = DeliveryPolicy.Context(appState: .background, isUpdating: true, authorization: .authorizedWhenInUse)
        var c = base
        c.hasBackgroundSession = true
        #expect(decide(c) == .backgroundSession)
        c = base
        c.startedInBackgroundWhenInUse = true
        c.running = .backgroundTask
        #expect(decide(c) == .whenInUseStartedInBackground)
        c.authorization = .authorizedAlways
        #expect(decide(c) == .backgroundTask)
        c = base
        c.running = .backgroundFetch
        #expect(decide(c) == .backgroundFetch)
        c.isPaused = true
        #expect(decide(c) == .paused)
        c.isUpdating = false
        #expect(DeliveryPolicy.decide(c) == (.ignored, .notUpdating))
        c.isUpdating = true
        c.locationServicesEnabled = false
        #expect(decide(c) == .locationServicesDisabled)
    }
}

@Suite struct AccuracyModelTests {
    /// Rule 5: the service delivers what it can at or better than the requested accuracy, from
    /// the hardware it needs ("Core Location turns on the hardware it needs to deliver that data
    /// in the most power-efficient way", Apple, *Configuring your app to use location services*).
    @Test func desiredAccuracyChoosesThePositioningSource() {
        let cases: [(DesiredAccuracy, AccuracyModel.Positioning)] = [
            (.bestForNavigation, .satellite), (.best, .satellite), (.nearestTenMeters, .satellite),
            (DesiredAccuracy(rawValue: 5), .satellite), (DesiredAccuracy(rawValue: 50), .satellite),
            (DesiredAccuracy(rawValue: 65), .wifi), (.hundredMeters, .wifi), (DesiredAccuracy(rawValue: 500), .wifi),
            (DesiredAccuracy(rawValue: 999), .wifi), (.kilometer, .cell),
            (.threeKilometers, .cell), (DesiredAccuracy(rawValue: 10_000), .cell), (.reduced, .reduced),
        ]
        for (accuracy, source) in cases {
            #expect(
                AccuracyModel.positioning(desiredAccuracy: accuracy, accuracy: .fullAccuracy) == source, "\(accuracy)")
            // "If your app isn't authorized to access precise location information, changes to this
            // property's value have no effect; the accuracy is always kCLLocationAccuracyReduced."
            #expect(AccuracyModel.positioning(desiredAccuracy: accuracy, accuracy: .reducedAccuracy) == .reduced)
        }
        // Reduced accuracy arrived in iOS 14.
        let ios13 = IOSVersion(major: 13)!
        #expect(
            AccuracyModel.positioning(desiredAccuracy: .reduced, accuracy: .fullAccuracy, version: ios13) != .reduced)
        // "updating the location at most a few times per hour" (kCLLocationAccuracyReduced).
        #expect(AccuracyModel.Positioning.reduced.minimumInterval! >= .seconds(900))
    }

    /// Full-accuracy positions are neither moved to a grid nor capped in rate: every coarse source
    /// passes the trace's position through.
    @Test func fullAccuracySourcesKeepThePositionAndTheRate() {
        let fix = Location(
            coordinate: Coordinate(latitude: 48.137, longitude: 11.575), altitude: 520, horizontalAccuracy: 5,
            verticalAccuracy: 8, speed: 12, course: 90, timestamp: Date(timeIntervalSince1970: 0),
            provenance: Provenance(source: .file(path: "x", index: 0), isSimulatedBySoftware: true, fixMode: .threeD))
        for source in [AccuracyModel.Positioning.satellite, .wifi, .cell] {
            #expect(AccuracyModel.apply(source, to: fix).coordinate == fix.coordinate)
            #expect(source.minimumInterval == nil)
        }
        #expect(AccuracyModel.apply(.satellite, to: fix) == fix)
        #expect(AccuracyModel.apply(.reduced, to: fix).coordinate != fix.coordinate)
    }

    @Test func coarsenedPositionsLieWithinTheReducedRadius() {
        var rng = SplitMix64(seed: 42)
        let radius = AccuracyModel.Positioning.reduced.accuracyFloor
        for _ in 0..<2000 {
            let c = Coordinate(
                latitude: Double.random(in: -85...85, using: &rng),
                longitude: Double.random(in: -180..<180, using: &rng))
            let coarse = AccuracyModel.coarsen(c, radius: radius)
            #expect(coarse.isValid)
            let d = Geodesic.distance(c, coarse)
            #expect(d <= radius, "\(c) → \(coarse): \(d) m")
            // A coarsened position is the centre of its own cell.
            #expect(AccuracyModel.coarsen(coarse, radius: radius) == coarse)
        }
    }

    /// Auto-pause's fast distance check agrees with the geodesic, right up to its radius.
    @Test func theStationaryCheckAgreesWithTheGeodesic() {
        var rng = SplitMix64(seed: 9)
        var near = 0
        for _ in 0..<20_000 {
            let a = Coordinate(
                latitude: Double.random(in: -89.9...89.9, using: &rng),
                longitude: Double.random(in: -180..<180, using: &rng))
            let metres = Double.random(in: 0...60, using: &rng)
            let b = Geodesic.destination(from: a, bearing: Double.random(in: 0..<360, using: &rng), distance: metres)
            let exact = Geodesic.distance(a, b) <= AutoPause.radius
            #expect(AutoPause.isNear(a, b) == exact, "\(a) → \(b): \(metres) m")
            if exact { near += 1 }
        }
        #expect(near > 5000)
        // Right at the radius, where the flat bounds are tightest: near the equator (a cosine
        // near 1) and at every latitude, on both sides of it.
        var inside = 0
        for i in 0..<20_000 {
            let latitude =
                i % 2 == 0 ? Double.random(in: -3...3, using: &rng) : Double.random(in: -84...84, using: &rng)
            let a = Coordinate(latitude: latitude, longitude: Double.random(in: -180..<180, using: &rng))
            let metres = AutoPause.radius + Double.random(in: -0.5...0.5, using: &rng)
            let b = Geodesic.destination(from: a, bearing: Double.random(in: 0..<360, using: &rng), distance: metres)
            let exact = Geodesic.distance(a, b) <= AutoPause.radius
            #expect(AutoPause.isNear(a, b) == exact, "\(a) → \(b): \(metres) m")
            if exact { inside += 1 }
        }
        #expect(inside > 8000 && inside < 12_000)
    }

    @Test func sourcesWithoutSatellitesDropAltitudeSpeedAndCourse() {
        let fix = Location(
            coordinate: Coordinate(latitude: 48.137, longitude: 11.575), altitude: 520, horizontalAccuracy: 5,
            verticalAccuracy: 8, speed: 12, course: 90, timestamp: Date(timeIntervalSince1970: 0),
            provenance: Provenance(source: .file(path: "x", index: 0), isSimulatedBySoftware: true, fixMode: .threeD))
        #expect(AccuracyModel.apply(.satellite, to: fix) == fix)
        let wifi = AccuracyModel.apply(.wifi, to: fix)
        #expect(wifi.horizontalAccuracy == 65)
        let cell = AccuracyModel.apply(.cell, to: fix)
        #expect(cell.horizontalAccuracy == 1000)
        #expect(!cell.hasValidAltitude && cell.speed < 0 && cell.course < 0)
        #expect(cell.coordinate == fix.coordinate)
    }
}

@Suite struct DurationTextTests {
    @Test func readsWhatPeopleWrite() {
        let cases: [(String, Duration?)] = [
            ("90s", .seconds(90)), ("2m", .seconds(120)), ("1h5m", .seconds(3900)), ("1.5s", .milliseconds(1500)),
            ("250ms", .milliseconds(250)), ("3d", .seconds(259_200)), ("45", .seconds(45)), ("1h5m30s", .seconds(3930)),
            ("", nil), ("5x", nil), ("-5s", nil), ("m", nil), ("1.2.3s", nil),
        ]
        for (text, expected) in cases { #expect(DurationText.parse(text) == expected, "\(text)") }
    }

    @Test func formatsWhatItReads() {
        for d: Duration in [.seconds(90), .seconds(3900), .milliseconds(1500), .zero, .seconds(7322)] {
            #expect(DurationText.parse(DurationText.format(d)) == d)
        }
        #expect(DurationText.format(.seconds(3930)) == "1h5m30s")
    }
}
