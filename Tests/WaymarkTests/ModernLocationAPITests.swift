import Foundation
import Testing

@testable import Waymark

/// The iOS 17 and 18 APIs: `CLBackgroundActivitySession`, `CLLocationUpdate.liveUpdates()` with
/// `isStationary` and the iOS 18 diagnostics, `CLServiceSession` and `CLMonitor`
/// (`docs/apple-citations.md`, W12).
@MainActor @Suite struct ModernLocationAPITests {
    typealias Run = DeviceRuleTests.Run

    static func run(
        _ scenario: Scenario, _ source: ListSource = .walk(for: 600), app: (any SimulatedApp)? = nil,
        before: (Simulation) -> Void = { _ in }
    ) async throws -> Run {
        let simulation = Simulation(scenario: scenario, epoch: DeviceRuleTests.epoch, app: app)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        before(simulation)
        try await simulation.run(source)
        return Run(simulation: simulation, events: recorder.events)
    }

    static func scenario(_ ios: Int, _ build: (inout Scenario) -> Void) -> Scenario {
        var s = Scenario()
        s.system.iosVersion = IOSVersion(major: ios)!
        build(&s)
        return s
    }

    /// "An object that manages a visual indicator that keeps your app in use in the background,
    /// allowing it to receive updates or events" (CLBackgroundActivitySession, iOS 17).
    @Test func aBackgroundActivitySessionKeepsAWhenInUseAppInUse() async throws {
        func run(_ ios: Int, sessionAt: Int = 10) async throws -> Run {
            try await Self.run(
                Self.scenario(ios) {
                    $0.info.backgroundModes = [.location]
                    $0.app.beginsBackgroundTask = true  // the app runs, out of use, after its grace period
                    $0.timeline = [
                        .init(at: .seconds(sessionAt), .startBackgroundActivitySession),
                        .init(at: .seconds(60), .background),
                        .init(at: .seconds(300), .invalidateBackgroundActivitySession),
                    ]
                })
        }
        let ios17 = try await run(17)
        let during = ios17.fixes(from: 70, to: 300)
        #expect(!during.isEmpty && during.allSatisfy { $0.reason == .backgroundSession && $0.indicator })
        #expect(ios17.simulation.appState == .suspended, "suspended once the session is invalidated")
        #expect(ios17.reasons(from: 310) == [.notInUse])
        let ios16 = try await run(16)
        #expect(ios16.reasons(from: 70, to: 300) == [.notInUse])
        #expect(
            ios16.events.contains {
                $0.kind == .session(kind: .backgroundActivity, action: .ignored, reason: .needsIOS17)
            })
        // Started out of use (running on a task), it does nothing.
        let late = try await run(17, sessionAt: 70)
        #expect(
            late.events.contains {
                $0.kind == .session(kind: .backgroundActivity, action: .ignored, reason: .notInUse)
            })
        #expect(late.reasons(from: 70, to: 300) == [.notInUse])
    }

    /// "If Core Location stops delivering updates because the device is stationary, then it sets
    /// isStationary to true" (iOS 17); iOS 18's diagnostics say why no location comes: a When In
    /// Use app not in use is `insufficientlyInUse`, once until a location comes again.
    @Test func liveUpdatesSayStationaryAndWhyNothingComes() async throws {
        var updates: [LiveUpdate] = []
        var stream: AsyncStream<LiveUpdate>?
        // Still for 15 minutes: updates pause after 10.
        let still = Simulation(
            scenario: Self.scenario(17) { $0.app.startsUpdates = false }, epoch: DeviceRuleTests.epoch)
        var source = ListSource.walk(for: 900, step: 0)
        still.start(source: "still")
        still.advance(to: .zero)
        stream = still.manager.liveUpdates()
        while let event = try await source.next() { still.receive(event) }
        still.finish()
        for await u in stream! { updates.append(u) }
        #expect(updates.filter(\.isStationary).count == 1)
        #expect(updates.firstIndex { $0.isStationary } == updates.count - 1, "nothing comes after the pause")
        #expect(updates.dropLast().allSatisfy { $0.location != nil && $0.diagnostic == nil })

        func diagnostics(_ ios: Int) async throws -> [LiveUpdate.Diagnostic] {
            let simulation = Simulation(
                scenario: Self.scenario(ios) {
                    $0.app.startsUpdates = false
                    $0.timeline = [.init(at: .seconds(60), .background), .init(at: .seconds(200), .foreground)]
                }, epoch: DeviceRuleTests.epoch)
            var source = ListSource.walk(for: 300)
            simulation.start(source: "walk")
            simulation.advance(to: .zero)
            let live = simulation.manager.liveUpdates()
            while let event = try await source.next() { simulation.receive(event) }
            simulation.finish()
            var out: [LiveUpdate.Diagnostic] = []
            for await u in live { if let d = u.diagnostic { out.append(d) } }
            return out
        }
        #expect(try await diagnostics(18) == [.insufficientlyInUse])
        #expect(try await diagnostics(17) == [])
    }

    /// Live updates hear of their own manager's updates. `CLLocationUpdate.liveUpdates()` asks
    /// a manager of its own (in an app that keeps a `CLLocationManager` as well, not the first):
    /// "If Core Location stops delivering updates because the device is stationary, then it sets
    /// isStationary to true" for the updates that stopped, and iOS 18's diagnostics say why no
    /// location comes to those updates, not to another manager's.
    @Test func liveUpdatesHearTheirOwnManagersUpdates() async throws {
        func streams(_ ios: Int, timeline: [Scenario.TimedAction], step: Double = 1.4) async throws -> (
            first: [LiveUpdate], second: [LiveUpdate], run: Run
        ) {
            let simulation = Simulation(
                scenario: Self.scenario(ios) {
                    $0.app.startsUpdates = false
                    $0.timeline = timeline
                }, epoch: DeviceRuleTests.epoch)
            let recorder = AuditRecorder()
            simulation.addObserver(recorder)
            var source = ListSource.walk(for: 900, step: step)
            simulation.start(source: "walk")
            simulation.advance(to: .zero)
            // The app's first manager does not pause; the second (its stream's) does.
            simulation.manager.pausesLocationUpdatesAutomatically = false
            let first = simulation.manager.liveUpdates()
            let second = simulation.withDevice { DeviceLocationManager().liveUpdates() }
            while let event = try await source.next() { simulation.receive(event) }
            simulation.finish()
            var out: ([LiveUpdate], [LiveUpdate]) = ([], [])
            for await u in first { out.0.append(u) }
            for await u in second { out.1.append(u) }
            return (out.0, out.1, Run(simulation: simulation, events: recorder.events))
        }
        // Still for 15 minutes: the second manager's updates pause after 10, the first's go on.
        let still = try await streams(17, timeline: [], step: 0)
        #expect(still.second.filter(\.isStationary).count == 1)
        #expect(still.second.last?.isStationary == true, "nothing comes to it after the pause")
        #expect(still.first.allSatisfy { !$0.isStationary && $0.location != nil })
        #expect(still.first.count > still.second.count, "the first manager's updates did not pause")
        #expect(
            still.run.events.filter { $0.kind == .liveUpdate(stationary: true, diagnostic: nil, manager: 2) }.count
                == 1)
        #expect(!still.run.events.contains { $0.kind == .liveUpdate(stationary: true, diagnostic: nil) })

        // In the background no location comes to either (When In Use, no session): each stream
        // hears why, once, from its own manager's updates.
        let away = try await streams(
            18, timeline: [.init(at: .seconds(60), .background), .init(at: .seconds(200), .foreground)])
        #expect(away.first.compactMap(\.diagnostic) == [.insufficientlyInUse])
        #expect(away.second.compactMap(\.diagnostic) == [.insufficientlyInUse])
        #expect(
            away.run.events.compactMap {
                if case .liveUpdate(false, .insufficientlyInUse, let manager) = $0.kind { manager } else { nil }
            } == [1, 2], "one for each manager's streams, in the order their fixes were decided")
        // After the app came back, both hear locations again.
        #expect(away.first.last?.location != nil && away.second.last?.location != nil)
    }

    /// With `NSLocationRequireExplicitServiceSession` the session's gate is on each stream: a
    /// stream of another manager than the first hears `serviceSessionRequired`, and a session
    /// taken starts that manager's updates, not the first's.
    @Test func aServiceSessionOpensTheGateForTheStreamsManager() async throws {
        let simulation = Simulation(
            scenario: Self.scenario(18) {
                $0.info.requiresExplicitServiceSession = true
                $0.app.startsUpdates = false
                $0.timeline = [.init(at: .seconds(100), .startServiceSession(.whenInUse))]
            }, epoch: DeviceRuleTests.epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        var source = ListSource.walk(for: 300)
        simulation.start(source: "walk")
        simulation.advance(to: .seconds(10))
        _ = simulation.manager
        let live = simulation.withDevice { DeviceLocationManager().liveUpdates() }
        while let event = try await source.next() { simulation.receive(event) }
        simulation.finish()
        var updates: [LiveUpdate] = []
        for await u in live { updates.append(u) }
        #expect(updates.compactMap(\.diagnostic) == [.serviceSessionRequired])
        #expect(updates.first?.diagnostic == .serviceSessionRequired)
        let run = Run(simulation: simulation, events: recorder.events)
        let delivered = run.fixes(from: 100).filter { $0.manager == 2 && $0.decision == .delivered }
        #expect(delivered.count == 21, "every fix from the session on (100 s to 300 s, one each 10 s)")
        #expect(updates.dropFirst().compactMap(\.location) == delivered.compactMap(\.delivered))
        #expect(run.fixes(to: 100).allSatisfy { $0.manager == 1 }, "the gate held the second's fixes back")
        #expect(
            run.fixes().filter { $0.manager == 1 }.allSatisfy { $0.reason == .notUpdating }, "the first never started")
        #expect(
            recorder.events.compactMap { e -> String? in
                guard case .liveUpdate(_, let d, let manager) = e.kind else { return nil }
                return "\(manager) \(d?.rawValue ?? "stationary")"
            } == ["2 serviceSessionRequired"], "said once, to the streams' manager only")
    }

    /// With `NSLocationRequireExplicitServiceSession`, live updates need a `CLServiceSession`
    /// (`serviceSessionRequired`); a held session asks again when a temporary authorization
    /// lapsed ("automatically re-asking as needed after temporary authorization lapses").
    @Test func serviceSessionsGateLiveUpdatesAndAskAgain() async throws {
        let gated = try await Self.run(
            Self.scenario(18) {
                $0.info.requiresExplicitServiceSession = true
                $0.app.startsUpdates = false
                $0.timeline = [
                    .init(at: .seconds(10), .liveUpdates), .init(at: .seconds(100), .startServiceSession(.whenInUse)),
                ]
            })
        #expect(
            gated.events.contains { $0.kind == .liveUpdate(stationary: false, diagnostic: .serviceSessionRequired) })
        #expect(gated.fixes(to: 100).allSatisfy { $0.reason == .notUpdating })
        #expect(gated.reasons(from: 110) == [.foreground], "the session lets them come")

        let reask = try await Self.run(
            Self.scenario(18) {
                $0.device.authorization = .notDetermined
                $0.user.whenInUse = .allowOnce
                $0.app.startsUpdates = false
                $0.timeline = [
                    .init(at: .seconds(5), .startServiceSession(.whenInUse)), .init(at: .seconds(60), .background),
                    .init(at: .seconds(200), .foreground),
                ]
            })
        let prompts = reask.events.compactMap { e -> Int? in
            if case .prompt(.whenInUse, .shown, _) = e.kind { Int(e.offset.components.seconds) } else { nil }
        }
        #expect(prompts == [5, 200])
        let withoutSession = try await Self.run(
            Self.scenario(18) {
                $0.device.authorization = .notDetermined
                $0.user.whenInUse = .allowOnce
                $0.app.request = .whenInUse
                $0.timeline = [.init(at: .seconds(60), .background), .init(at: .seconds(200), .foreground)]
            })
        #expect(
            withoutSession.events.filter { if case .prompt(_, .shown, _) = $0.kind { true } else { false } }.count == 1
        )
    }

    /// `CLMonitor`: "The initial state is unknown", then each change is an event; "If an iOS app
    /// isn't running when a condition is satisfied, the system tries to launch it. When the app
    /// relaunches, recreate the monitor with the same identifier."
    @Test func aMonitorReportsItsConditionsAndRelaunchesTheApp() async throws {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        let ahead = CircularRegion(
            center: Geodesic.destination(from: start, bearing: 90, distance: 400), radius: 150, identifier: "cafe")
        let scenario = Self.scenario(17) {
            $0.device.authorization = .authorizedAlways
            $0.timeline = [
                .init(at: .seconds(5), .addCondition(monitor: "geo", ahead)), .init(at: .seconds(20), .terminate),
            ]
        }
        let run = try await Self.run(scenario)
        let monitorEvents = run.events.compactMap { e -> (Int, MonitorAction, ServiceDecision?)? in
            guard case .monitor("geo", "cafe", let action, let decision, _) = e.kind else { return nil }
            return (Int(e.offset.components.seconds), action, decision)
        }
        #expect(monitorEvents.first.map { $0.1 == .added } == true)
        #expect(monitorEvents.contains { $0.0 == 10 && $0.1 == .unsatisfied && $0.2 == .delivered })
        let satisfied = try #require(monitorEvents.first { $0.1 == .satisfied })
        #expect(satisfied.2 == .delivered, "the tutorial app recreates its monitor at launch")
        #expect(
            run.events.contains {
                $0.offset == .seconds(satisfied.0)
                    && $0.kind == .stateChanged(from: .notRunning, to: .background, cause: .region)
            })

        final class ForgetfulApp: SimulatedApp {}
        let forgetful = try await Self.run(scenario, app: ForgetfulApp())
        #expect(
            forgetful.events.contains {
                if case .monitor("geo", "cafe", .satisfied, .held, .awaitingMonitor) = $0.kind {
                    true
                } else {
                    false
                }
            })
    }
}
