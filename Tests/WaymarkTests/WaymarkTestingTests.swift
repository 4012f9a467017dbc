import Foundation
import Testing
import Waymark
import WaymarkTesting

/// The limit catches a sleeper that is never woken (a hang), not slowness: the work takes
/// milliseconds, but in a full parallel run the main actor, where the paced run's test lives, can
/// be busy with other tests for a minute and more.
@Suite(.timeLimit(.minutes(45))) struct ManualClockTests {
    @Test func startsAtZeroAndMovesOnlyWhenAdvanced() {
        let clock = ManualClock()
        #expect(clock.now == .zero)
        clock.advance(by: .seconds(3))
        clock.advance(to: ManualClock.Instant(offset: .seconds(2)))
        #expect(clock.now.offset == .seconds(3))
        clock.advance(to: ManualClock.Instant(offset: .seconds(7)))
        #expect(clock.now.offset == .seconds(7))
    }

    @Test func sleepReturnsAtOnceWhenTheDeadlineHasPassed() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)))
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test func aSleeperWakesWhenTheClockReachesItsDeadline() async throws {
        let clock = ManualClock()
        async let sleeper: Void = clock.sleep(until: ManualClock.Instant(offset: .seconds(10)))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 0)
        try await sleeper
    }

    @Test func anAdvanceWakesOnlyTheSleepersItReaches() async throws {
        let clock = ManualClock()
        let order = OrderBox()
        async let late: Void = {
            try await clock.sleep(until: ManualClock.Instant(offset: .seconds(8)))
            await order.append(8)
        }()
        async let early: Void = {
            try await clock.sleep(until: ManualClock.Instant(offset: .seconds(2)))
            await order.append(2)
        }()
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        try await early
        #expect(await order.values == [2])
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(5))
        try await late
        #expect(await order.values == [2, 8])
    }

    @Test func aCancelledSleeperThrows() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: ManualClock.Instant(offset: .seconds(60))) }
        await clock.waitForSleepers(1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @MainActor @Test func pacesASimulationRunWithoutRealSleeps() async throws {
        let trace = try TraceSource.coordinates(
            [Coordinate(latitude: 48.137, longitude: 11.575), Coordinate(latitude: 48.137, longitude: 11.577)],
            every: .seconds(1), speed: 10)
        #expect(trace.schedule.fixes.count > 10)
        let simulation = Simulation(scenario: Scenario(), epoch: TraceSource.defaultStart)
        let clock = ManualClock()
        let run = Task { try await simulation.run(trace, clock: clock, rate: 1) }
        await clock.waitForSleepers(1)
        // The fix at zero came at once; the one at 1 s waits for the clock.
        #expect(simulation.summary.fixes == 1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(simulation.summary.fixes == 2)
        #expect(simulation.now == .seconds(1))
        clock.advance(by: .seconds(3600))
        let summary = try await withTaskCancellationHandler {
            try await run.value
        } onCancel: {
            run.cancel()
        }
        #expect(summary.fixes == trace.schedule.fixes.count)
    }
}

/// Collects values from several tasks.
private actor OrderBox {
    var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
}

@Suite struct TraceSourceTests {
    static let munich = Coordinate(latitude: 48.1372, longitude: 11.5755)
    static let north = Coordinate(latitude: 48.1381, longitude: 11.5755)

    @Test func coordinatesComeOneEveryInterval() throws {
        let source = try TraceSource.coordinates([Self.munich, Self.north, Self.munich], every: .seconds(5))
        let events = source.allEvents
        #expect(events.map(\.offset) == [.zero, .seconds(5), .seconds(10)])
        let locations = events.compactMap { event -> Location? in
            if case .fix(let location) = event.kind { return location }
            return nil
        }
        #expect(locations.map(\.coordinate) == [Self.munich, Self.north, Self.munich])
        #expect(locations.map(\.timestamp) == [0, 5, 10].map { TraceSource.defaultStart.addingTimeInterval($0) })
        #expect(source.name == "coordinates")
    }

    @Test func coordinatesAtASpeedAreInterpolated() throws {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let metres = Geodesic.distance(Self.munich, Self.north)
        let source = try TraceSource.coordinates([Self.munich, Self.north], every: .seconds(2), speed: 5, start: start)
        let fixes = source.schedule.fixes
        #expect(fixes.count == Int(metres / 5 / 2) + 1)
        #expect(fixes.first?.location.timestamp == start)
        #expect(fixes.map(\.offset) == (0..<fixes.count).map { .seconds(2 * $0) })
        let step = Geodesic.distance(fixes[0].location.coordinate, fixes[1].location.coordinate)
        #expect(abs(step - 10) < 0.01)
        #expect(abs(fixes[1].location.speed - 5) < 0.01)
    }

    @Test func anIntervalOfZeroIsAnError() {
        #expect(throws: ReplaySchedule.ScheduleError.self) {
            try TraceSource.coordinates([Self.munich, Self.north], every: .zero)
        }
        #expect(throws: ReplaySchedule.ScheduleError.self) {
            try TraceSource.coordinates([Self.munich, Self.north], speed: 0)
        }
    }

    @Test func readsGPXText() throws {
        let text = """
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="48.1" lon="11.5"><time>2024-05-01T08:00:00Z</time></trkpt>
            <trkpt lat="48.2" lon="11.5"><time>2024-05-01T08:00:04Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let source = try TraceSource.gpx(text, name: "two.gpx")
        #expect(source.name == "two.gpx")
        #expect(source.allEvents.map(\.offset) == [.zero, .seconds(4)])
        #expect(throws: GPXError.self) { try TraceSource.gpx("<gpx>", name: "broken.gpx") }
    }

    @Test func readsAGPXFile() throws {
        let path = Paths.root.appendingPathComponent("traces/city-walk.gpx").path
        let source = try TraceSource.gpx(contentsOf: path)
        #expect(source.schedule.fixes.count == 360)
        #expect(source.schedule.fixes.last?.segment == 1)
        let looped = try TraceSource.gpx(contentsOf: path, loops: 2)
        #expect(looped.allEvents.count == 720)
    }

    /// `TraceSource.trace` replays whatever format a file's content tells, as `waymark replay`
    /// does: a Garmin Connect TCX (its four positioned trackpoints, in three segments) and the
    /// same walk as a FIT course.
    @Test func readsAnActivityFileOfAnyFormat() throws {
        let tcx = try TraceSource.trace(contentsOf: Paths.fixture("activity/garmin-connect.tcx"))
        #expect(tcx.schedule.fixes.count == 4)
        #expect(tcx.schedule.fixes.last?.segment == 2)
        let fit = try TraceSource.trace(contentsOf: Paths.fixture("activity/gpsbabel-course.fit"))
        let gpx = try TraceSource.trace(contentsOf: Paths.fixture("activity/gpsbabel-history.tcx"))
        #expect(fit.schedule.fixes.count == 40 && gpx.schedule.fixes.count == 40)
        #expect(fit.schedule.fixes.map(\.offset) == gpx.schedule.fixes.map(\.offset))
        #expect(throws: GPXError.self) { try TraceSource.gpx(contentsOf: Paths.fixture("activity/garmin-connect.tcx")) }
    }
}

/// `TraceSource.degraded`: a seeded bad day to measure an app's filter on.
@Suite struct DegradedTraceSourceTests {
    @Test func aSimpleOutlierFilterMeasuresBetterOnASeededBadDay() throws {
        let path = Paths.root.appendingPathComponent("traces/city-walk.gpx").path
        var canyon = DegradeProfile(name: "canyon")
        canyon.noise = .init(sigma: 4, tau: 30)
        canyon.jumps = .init(every: 120, distance: 200, lasting: 4, reportedAccuracy: 12)
        let a = try TraceSource.degraded(contentsOf: path, profile: canyon, seed: 21)
        let b = try TraceSource.degraded(contentsOf: path, profile: canyon, seed: 21)
        let plain = try TraceSource.trace(contentsOf: path)
        #expect(a.schedule.fixes.map(\.location) == b.schedule.fixes.map(\.location))
        #expect(a.schedule.fixes.map(\.location) != plain.schedule.fixes.map(\.location))
        // The app's filter: drop a fix that implies more than 15 m/s from the last one kept.
        var kept: [Location] = []
        for fix in a.schedule.fixes.map(\.location) {
            if let last = kept.last {
                let dt = fix.timestamp.timeIntervalSince(last.timestamp)
                if dt > 0 && Geodesic.distance(last.coordinate, fix.coordinate) / dt > 15 { continue }
            }
            kept.append(fix)
        }
        let (truth, _) = try readDocument(path)
        let evaluation = DegradeEvaluation(truth: truth.tracks.flatMap { $0.segments.flatMap(\.points) })
        func score(_ locations: [Location]) -> DegradeEvaluation.Report {
            evaluation.evaluate(locations.map { ($0.timestamp.timeIntervalSince1970, $0.coordinate) })
        }
        let raw = score(a.schedule.fixes.map(\.location))
        let filtered = score(kept)
        #expect(raw.worst > 150, "the bad day has its jumps: \(raw)")
        // It rejects most jumps (the RMS falls by a third or more), not all: one after the tunnel's
        // 90 s gap implies a walking pace and is kept. The measurement shows both.
        #expect(filtered.count < raw.count && filtered.rms < raw.rms * 0.67, "\(filtered) against \(raw)")
        #expect(filtered.p95 < raw.p95)
    }
}

@MainActor @Suite struct TestDeviceTests {
    /// Ten fixes a second apart, walking north.
    static func walk(fixes: Int = 10) throws -> GPXReplaySource {
        let coordinates = (0..<fixes).map { Coordinate(latitude: 48.1372 + Double($0) * 0.00002, longitude: 11.5755) }
        return try TraceSource.coordinates(coordinates, every: .seconds(1))
    }

    @Test func nothingHappensUntilTheTestMovesTime() throws {
        let device = TestDevice(trace: try Self.walk())
        #expect(device.appState == .notRunning)
        #expect(device.events.map(\.name) == ["started"])
        #expect(device.nextEventOffset == .zero)
        device.launch()
        #expect(device.appState == .active)
        #expect(device.now == .zero)
        // The fix at zero waits for the next advance, after whatever the test does at launch.
        #expect(device.fixes().isEmpty)
        device.advance(to: .zero)
        #expect(device.fixes(reason: .foreground).count == 1)
    }

    @Test func advancingDeliversTheFixesUpToThatTime() throws {
        let trace = try Self.walk()
        let device = TestDevice(trace: trace)
        device.launch()
        device.advance(to: .seconds(4))
        #expect(device.fixes(reason: .foreground).count == 5)
        #expect(device.manager.location?.coordinate == trace.schedule.fixes[4].location.coordinate)
        #expect(device.nextEventOffset == .seconds(5))
        device.advance(by: .milliseconds(500))
        #expect(device.fixes().count == 5)
        #expect(device.now == .milliseconds(4500))
        device.advance(by: .milliseconds(500))
        #expect(device.fixes(decision: .delivered).count == 6)
    }

    @Test func theTutorialAppIsTheDefault() throws {
        let device = TestDevice(trace: try Self.walk())
        #expect(device.simulation.tutorialApp != nil)
        device.runToEnd()
        #expect(device.simulation.tutorialApp?.storedCount == 10)
    }

    @Test func aBareAppLeavesTheManagerToTheTest() throws {
        let app = BareApp()
        let device = TestDevice(trace: try Self.walk(), app: app)
        device.launch()
        #expect(app.launches == 1)
        #expect(app.activations == 1)
        device.advance(to: .seconds(2))
        #expect(device.fixes(reason: .notUpdating).count == 3)
        #expect(device.manager.location == nil)
        device.manager.startUpdatingLocation()
        device.advance(to: .seconds(4))
        #expect(device.fixes(reason: .foreground).count == 2)
        #expect(device.manager.location != nil)
        device.sendToBackground()
        #expect(app.backgroundEntries == 1)
    }

    /// An app's view model creates its own manager, as it would create `CLLocationManager()`,
    /// and sets it up before any device exists; the device adopts it, records what was set when
    /// the run starts, and delivers to it.
    @Test func aManagerTheAppCreatedIsAdoptedWithItsSettings() throws {
        let model = OwnManagerModel()
        #expect(model.manager.authorizationStatus == .notDetermined, "no device yet")
        #expect(!model.manager.isUpdatingLocation)
        let device = TestDevice(trace: try Self.walk(), app: BareApp(), manager: model.manager)
        #expect(device.manager === model.manager)
        let settings = device.events(named: "setting").compactMap { event -> String? in
            if case .setting(let name, let value, _) = event.kind { return "\(name)=\(value)" }
            return nil
        }
        #expect(settings == ["distanceFilter=5", "desiredAccuracy=nearestTenMeters"])
        #expect(device.events.first?.name == "started")
        device.launch()
        #expect(model.manager.authorizationStatus == .authorizedWhenInUse)
        model.manager.startUpdatingLocation()
        device.runToEnd()
        // A fix every 2.2 m, a 5 m filter: every third one, starting with the first.
        #expect(model.received == 4)
        #expect(device.fixes(reason: .distanceFilter).count == 6)
        // A new instance of the app sets its manager up the same way.
        device.simulation.perform(.terminate)
        #expect(model.manager.distanceFilter == 5 && model.manager.desiredAccuracy == .nearestTenMeters)
    }

    /// Background updates set before the device runs the app, without the `location` mode, are
    /// undone at the start with a diagnostic (iOS raises at the setting).
    @Test func backgroundUpdatesSetBeforeAdoptionWithoutTheModeAreUndone() throws {
        let manager = DeviceLocationManager()
        manager.allowsBackgroundLocationUpdates = true
        let device = TestDevice(trace: try Self.walk(), app: BareApp(), manager: manager)
        #expect(!manager.allowsBackgroundLocationUpdates)
        #expect(device.events(named: "diagnostic").count == 1)

        let allowed = DeviceLocationManager()
        allowed.allowsBackgroundLocationUpdates = true
        var scenario = Scenario()
        scenario.info.backgroundModes = [.location]
        let withMode = TestDevice(scenario: scenario, trace: try Self.walk(), app: BareApp(), manager: allowed)
        #expect(allowed.allowsBackgroundLocationUpdates)
        #expect(withMode.events(named: "diagnostic").isEmpty)
    }

    @Test func aWhenInUseAppIsSuspendedAndReceivesNothingUntilItReturns() throws {
        let device = TestDevice(trace: try Self.walk(fixes: 60))
        device.launch()
        device.advance(to: .seconds(10))
        device.sendToBackground()
        #expect(device.appState == .background)
        device.advance(by: .seconds(30))
        #expect(device.appState == .suspended)
        // The grace period is 5 s: the fixes at 11–14 s; at 15 s the app is suspended first.
        #expect(device.fixes(reason: .gracePeriod).count == 4)
        #expect(device.fixes(reason: .notInUse).count == 26)
        device.bringToForeground()
        #expect(device.appState == .active)
        device.advance(by: .seconds(5))
        #expect(device.fixes(reason: .foreground).count == 11 + 5)
        let states = device.events(named: "stateChanged").compactMap { event -> AppState? in
            if case .stateChanged(_, let to, _) = event.kind { return to }
            return nil
        }
        #expect(states.suffix(4) == [.background, .suspended, .background, .inactive, .active].suffix(4))
    }

    @Test func userActionsGoThroughTheSimulation() throws {
        let device = TestDevice(trace: try Self.walk())
        device.launch()
        device.setAuthorization(.denied)
        #expect(device.manager.authorizationStatus == .denied)
        device.advance(to: .seconds(1))
        #expect(device.fixes(reason: .denied).count == 2)
        device.setAuthorization(.authorizedWhenInUse)
        device.terminate()
        #expect(device.appState == .notRunning)
        let actions = device.events(named: "action").compactMap { event -> String? in
            if case .action(let name, let value) = event.kind { return "\(name) \(value ?? "")" }
            return nil
        }
        #expect(actions == ["setAuthorization denied", "setAuthorization authorizedWhenInUse", "terminate "])
    }

    @Test func runToEndPlaysTheRestAndEndsTheUpdateStreams() async throws {
        let device = TestDevice(trace: try Self.walk())
        let updates = device.manager.updates()
        device.launch()
        device.advance(to: .seconds(3))
        let summary = device.runToEnd()
        #expect(device.isFinished)
        #expect(summary.fixes == 10)
        #expect(summary.count(.delivered) == 10)
        #expect(device.events.last?.name == "finished")
        var received = 0
        for await _ in updates { received += 1 }
        #expect(received == 10)
    }

    @Test func runToEndStopsAtTheScenarioEnd() throws {
        var scenario = Scenario()
        scenario.end = .seconds(4)
        let device = TestDevice(scenario: scenario, trace: try Self.walk())
        device.runToEnd()
        #expect(device.fixes().count == 5)
        #expect(device.now == .seconds(4))
    }

    @Test func theAuditLogIsNDJSONWithTheTraceTimes() throws {
        let trace = try Self.walk()
        let device = TestDevice(trace: trace)
        device.runToEnd()
        let lines = device.auditLog.split(separator: "\n")
        #expect(lines.count == device.events.count)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["event"] as? String == "started")
        #expect(first?["source"] as? String == "coordinates")
        #expect(first?["time"] as? String == "2024-05-01T08:00:00.000Z")
        let fix = device.events(named: "fix").first?.ndjson(epoch: device.simulation.epoch)
        #expect(fix.map { lines.contains(Substring($0.dropLast())) } == true)
    }
}

/// A view model that owns its manager from its own initialiser, as iOS apps do.
@MainActor final class OwnManagerModel {
    let manager = DeviceLocationManager()
    var received = 0

    init() {
        manager.distanceFilter = 5
        manager.desiredAccuracy = .nearestTenMeters
        manager.delegate = self
    }
}

extension OwnManagerModel: @MainActor DeviceLocationManagerDelegate {
    func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
        received += locations.count
    }
}
