import Foundation
import Testing

@testable import Waymark

/// The rule machines as pure values, one suite each, and the device's rules as a whole driven
/// without an app (``RulesHarness``): no process, no source, no clock but the one the test moves.
/// Each rule cites the Apple page it follows.
@Suite struct RuleMachineTests {
    static func scenario(
        ios: Int = 26, modes: BackgroundModes = [], _ build: (inout Scenario) -> Void = { _ in }
    ) -> Scenario {
        var s = Scenario()
        s.system.iosVersion = IOSVersion(major: ios)!
        s.info.backgroundModes = modes
        build(&s)
        return s
    }

    // MARK: - KeepRunning

    /// What keeps a backgrounded app running, as invariants over every combination: nothing
    /// keeps it running without an activity; audio needs the `audio` mode ("The app plays audible
    /// content to the user … while in the background", UIBackgroundModes); a held
    /// `CLBackgroundActivitySession` does ("keeps your app in use in the background, allowing it to
    /// receive updates or events"); a location event's wake lasts only its few seconds.
    @Test func keepRunningHoldsItsInvariantsForEveryCombination() {
        var rng = SplitMix64(seed: 25)
        for _ in 0..<5000 {
            let now = Duration.seconds(Int(rng.next() % 100))
            let wake: Duration? = rng.next() % 3 == 0 ? nil : .seconds(Int(rng.next() % 100))
            var handlers: [Int: Bool] = [:]
            for id in 0..<Int(rng.next() % 3) { handlers[id] = rng.next() % 2 == 0 }
            let k = KeepRunning(
                now: now, serviceWakeUntil: wake, pushHandlers: handlers, runningTasks: rng.next() % 4 == 0,
                transferEvents: rng.next() % 4 == 0, audioPlaying: rng.next() % 2 == 0, audioMode: rng.next() % 2 == 0,
                activitySessions: rng.next() % 4 == 0 ? 1 : 0)
            if k.keepsRunning { #expect(k.anyActivity, "\(k)") }
            if k.runningReason != nil { #expect(k.keepsRunning, "\(k)") }
            if k.activitySessions > 0 { #expect(k.keepsRunning, "\(k)") }
            // Each cause alone, with the others taken away.
            let wakeOnly = KeepRunning(
                now: now, serviceWakeUntil: wake, pushHandlers: [:], runningTasks: false, transferEvents: false,
                audioPlaying: false, audioMode: k.audioMode, activitySessions: 0)
            #expect(wakeOnly.keepsRunning == (wake.map { now < $0 } ?? false), "\(wakeOnly)")
            let audioOnly = KeepRunning(
                now: now, serviceWakeUntil: nil, pushHandlers: [:], runningTasks: false, transferEvents: false,
                audioPlaying: k.audioPlaying, audioMode: k.audioMode, activitySessions: 0)
            #expect(audioOnly.keepsRunning == (k.audioPlaying && k.audioMode), "\(audioOnly)")
            #expect(audioOnly.runningReason == (audioOnly.keepsRunning ? .backgroundAudio : nil))
            // A push handler keeps the app running only while it runs against its budget.
            let pushOnly = KeepRunning(
                now: now, serviceWakeUntil: nil, pushHandlers: handlers, runningTasks: false, transferEvents: false,
                audioPlaying: false, audioMode: false, activitySessions: 0)
            #expect(pushOnly.keepsRunning == handlers.values.contains(true), "\(pushOnly)")
        }
    }

    // MARK: - PowerStateMachine

    /// Background App Refresh is available only with both switches on and Low Power Mode off
    /// ("Low Power Mode … disables background app refresh", Apple's Energy Efficiency Guide;
    /// `UIApplication.backgroundRefreshStatus`); external power and the network do not change it.
    /// Low Power Mode is named first, then the device's switch, then the app's. Every change lets
    /// waiting `BGTaskScheduler` requests be looked at again.
    @Test func backgroundRefreshFollowsBothSwitchesAndLowPowerModeOnly() {
        for bits in 0..<32 {
            var settings = PowerAndRefresh()
            settings.backgroundAppRefresh = bits & 1 != 0
            settings.appBackgroundAppRefresh = bits & 2 != 0
            settings.lowPowerMode = bits & 4 != 0
            settings.charging = bits & 8 != 0
            settings.network = bits & 16 != 0
            let expected: AuditReason? =
                settings.lowPowerMode
                ? .lowPowerMode
                : !settings.backgroundAppRefresh
                    ? .backgroundAppRefreshOff : !settings.appBackgroundAppRefresh ? .appBackgroundAppRefreshOff : nil
            #expect(settings.backgroundRefreshOffReason == expected, "\(settings)")
            #expect(settings.backgroundRefreshAvailable == (expected == nil))

            // The machine reaches the same settings by events from the defaults.
            var machine = PowerStateMachine(PowerAndRefresh())
            let events: [PowerStateMachine.Event] = [
                .backgroundAppRefresh(settings.backgroundAppRefresh),
                .appBackgroundAppRefresh(settings.appBackgroundAppRefresh), .lowPowerMode(settings.lowPowerMode),
                .charging(settings.charging), .network(settings.network),
            ]
            for event in events {
                let actions = machine.handle(event)
                #expect(actions.count == 1)
                if case .post(.runDueTasks) = actions.first {} else { Issue.record("\(event) → \(actions)") }
            }
            #expect(machine.settings == settings)
            #expect(machine.backgroundRefreshOffReason == expected)
        }
    }

    // MARK: - AlertStateMachine

    /// A system alert over an app on screen makes it inactive until it goes ("the system displays
    /// an alert … your app moves to the inactive state", UIKit's app life cycle); one alert at a
    /// time; an alert asked off screen is not shown over the app but is still answered; leaving
    /// the app takes the alert down unanswered.
    @Test func anAlertCoversTheAppOnlyOnScreenAndOneAtATime() {
        var alerts = AlertStateMachine()
        let always = SystemAlert.authorization(.always)
        // Off screen: nothing covers the app; the answer is still scheduled.
        var actions = alerts.show(always, appInForeground: false, answerAt: .seconds(3))
        #expect(alerts.onScreen == nil)
        #expect(actions.count == 1)
        if case .schedule(.answer(always), at: .seconds(3)) = actions.first {} else { Issue.record("\(actions)") }

        // On screen: it covers the app.
        actions = alerts.show(always, appInForeground: true, answerAt: nil)
        #expect(alerts.onScreen == always)
        if case .post(.lifecycle(.showAlert)) = actions.first {} else { Issue.record("\(actions)") }
        // A second alert does not replace it.
        actions = alerts.show(.locationServices, appInForeground: true, answerAt: nil)
        #expect(alerts.onScreen == always)
        #expect(actions.isEmpty)
        // Taking down another alert cancels only its answer.
        actions = alerts.hide(.locationServices)
        #expect(alerts.onScreen == always)
        #expect(actions.count == 1)
        // Taking this one down uncovers the app.
        actions = alerts.hide(always)
        #expect(alerts.onScreen == nil)
        #expect(actions.count == 2)
        if case .post(.lifecycle(.dismissAlert)) = actions.last {} else { Issue.record("\(actions)") }

        // Leaving takes it down, unanswered, and says which it was.
        _ = alerts.show(.temporaryFullAccuracy, appInForeground: true, answerAt: nil)
        #expect(alerts.leave() == .temporaryFullAccuracy)
        #expect(alerts.onScreen == nil)
        #expect(alerts.leave() == nil)
    }

    // MARK: - PushThrottle

    /// "Don't try to send more than two or three per hour"; the system "may throttle the
    /// delivery" (Pushing background updates to your App). Over any run of pushes: no hour holds
    /// more than `perHour` admitted pushes, and a push is refused only when its hour is full.
    @Test func thePushThrottleAdmitsAtMostPerHourAndRefusesOnlyWhenFull() {
        var rng = SplitMix64(seed: 3600)
        for round in 0..<200 {
            let perHour = 1 + Int(rng.next() % 4)
            var throttle = PushThrottle(perHour: perHour)
            var time = Duration.zero
            var admitted: [Duration] = []
            for _ in 0..<40 {
                time += .seconds(Int(rng.next() % 1800))
                let inHour = admitted.filter { time - $0 < .seconds(3600) }.count
                let ok = throttle.admit(at: time)
                #expect(ok == (inHour < perHour), "round \(round): \(time), \(inHour) of \(perHour) in the hour")
                if ok { admitted.append(time) }
            }
        }
    }

    // MARK: - AudioStateMachine

    /// Playing twice or stopping twice records once; without the `audio` mode the start says so.
    @Test func audioRecordsEachChangeOnceAndNamesAMissingMode() {
        var audio = AudioStateMachine()
        let first = audio.play(audioMode: false)
        #expect(first.count == 1)
        if case .record(.audio(.started, .noAudioMode)) = first.first {} else { Issue.record("\(first)") }
        #expect(audio.play(audioMode: false).isEmpty)
        #expect(audio.isPlaying)
        let stop = audio.stop(.suspended)
        if case .record(.audio(.stopped, .suspended)) = stop.first {} else { Issue.record("\(stop)") }
        #expect(audio.stop(.app).isEmpty)
        #expect(!audio.isPlaying)
    }

    // MARK: - The rules together, without an app

    /// Launches the app on screen, leaves it, and moves past the grace period.
    static func leftApp(_ scenario: Scenario, before: (inout RulesHarness) -> Void = { _ in }) -> RulesHarness {
        var h = RulesHarness(scenario)
        h.send(.lifecycle(.launch(inBackground: false, cause: .userLaunch)))
        #expect(h.appState == .active)
        before(&h)
        h.send(.lifecycle(.leave))
        h.wait(.seconds(30))
        return h
    }

    /// A background session's download, on the rules alone: it takes the transfer time and comes
    /// in while the app is suspended; then the app is woken to handle its session's events
    /// ("if your app is no longer running, your app is automatically relaunched in the
    /// background, and the app's UIApplicationDelegate is sent an
    /// application(_:handleEventsForBackgroundURLSession:completionHandler:) message",
    /// urlSessionDidFinishEvents(forBackgroundURLSession:)), unless its session sends no launch
    /// events (sessionSendsLaunchEvents). Without a network it fails and is retried; the user's
    /// swipe cancels it.
    @Test func aBackgroundDownloadWakesTheAppWhenItsSessionSendsLaunchEvents() {
        func downloading(launchEvents: Bool, network: Bool = true) -> RulesHarness {
            Self.leftApp(Self.scenario { $0.system.transferDuration = .seconds(60) }) {
                if !network { $0.send(.setting(.setNetwork(false))) }
                $0.send(.download(session: "s", launchEvents: launchEvents))
            }
        }
        func wakes(_ h: RulesHarness) -> [Int] {
            h.calls.compactMap { if case .backgroundURLSessionEvents(let task) = $0 { task } else { nil } }
        }
        var h = downloading(launchEvents: true)
        #expect(h.appState == .suspended)
        #expect(h.rules.transfers.downloads[1] == .init(session: "s", launchEvents: true))
        #expect(h.timer(.transferDone(1)) == .seconds(60), "started at 0 s, the scenario's 60 s transfer")
        #expect(wakes(h).isEmpty)
        h.wait(.seconds(30))
        #expect(wakes(h) == [1])
        #expect(h.appState == .background)
        #expect(h.rules.transfers.downloads.isEmpty)
        h.send(.urlSessionEventsHandled(task: 1))
        #expect(h.appState == .suspended, "done with its events, the app is suspended again")

        var quiet = downloading(launchEvents: false)
        quiet.wait(.seconds(60))
        #expect(wakes(quiet).isEmpty)
        #expect(quiet.appState == .suspended)
        #expect(
            quiet.kinds.contains {
                if case .transfer(.completed, 1, nil, nil, _, "s") = $0 { true } else { false }
            })

        var offline = downloading(launchEvents: true, network: false)
        offline.wait(.seconds(31))
        #expect(
            offline.kinds.contains {
                if case .transfer(.failed, 1, nil, .noNetwork, nil, "s") = $0 { true } else { false }
            })
        #expect(offline.timer(.transferDone(1)) == .seconds(120), "retried a minute after it failed, at 60 s")
        #expect(wakes(offline).isEmpty)

        var swiped = downloading(launchEvents: true)
        swiped.send(.lifecycle(.terminate(.user)))
        swiped.wait(.seconds(60))
        #expect(wakes(swiped).isEmpty)
        #expect(swiped.timer(.transferDone(1)) == nil)
        #expect(
            swiped.kinds.contains {
                if case .transfer(.cancelled, 1, nil, .userTerminated, nil, "s") = $0 { true } else { false }
            })
    }

    /// With the `audio` mode, audio keeps the backgrounded app running; without it the app is
    /// suspended and the audio stops with it (UIBackgroundModes: `audio`).
    @Test func audioKeepsABackgroundedAppRunningOnlyWithTheAudioMode() {
        let withMode = Self.leftApp(Self.scenario(modes: .audio)) { $0.send(.audio(playing: true)) }
        #expect(withMode.appState == .background)
        #expect(withMode.rules.runningReason == .backgroundAudio)

        var without = Self.leftApp(Self.scenario()) { $0.send(.audio(playing: true)) }
        #expect(without.appState == .suspended)
        #expect(!without.rules.audio.isPlaying)
        #expect(
            without.kinds.contains {
                if case .audio(.stopped, .suspended) = $0 { true } else { false }
            })
        // Audio begun by an app that has stopped running is not playing after it runs again.
        without.send(.lifecycle(.open))
        #expect(!without.rules.audio.isPlaying)

        // Stopping audio lets the app be suspended.
        var stopping = withMode
        stopping.send(.audio(playing: false))
        #expect(stopping.appState == .suspended)
    }

    /// `CLBackgroundActivitySession` (iOS 17): started in use with the `location` mode, it keeps the
    /// app in use in the background; invalidated, the app is suspended. Started off screen, or
    /// without the mode, or before iOS 17, it is ignored with a reason.
    @Test func anActivitySessionKeepsTheAppInUseOnlyWhenStartedInUse() {
        var held = Self.leftApp(Self.scenario(modes: .location)) { $0.send(.startActivitySession) }
        #expect(held.appState == .background)
        #expect(held.rules.isInUse)
        held.send(.invalidateActivitySession(id: held.rules.sessions.counter))
        #expect(held.appState == .suspended)

        for (scenario, reason) in [
            (Self.scenario(), AuditReason.noLocationMode), (Self.scenario(ios: 16, modes: .location), .needsIOS17),
        ] {
            let h = Self.leftApp(scenario) { $0.send(.startActivitySession) }
            #expect(h.appState == .suspended)
            #expect(
                h.kinds.contains {
                    if case .session(.backgroundActivity, .ignored, reason) = $0 { true } else { false }
                }, "\(reason)")
        }
    }

    /// A background push wakes the suspended app with `remote-notification`, runs its handler
    /// against its budget, and the app is suspended again once the handler completes ("the
    /// system … gives it up to 30 seconds", Pushing background updates to your App). Beyond the
    /// hour's budget the push is held until the user launches the app.
    @Test func aPushWakesTheAppUntilItsHandlerCompletes() throws {
        var h = Self.leftApp(Self.scenario(modes: .remoteNotification))
        #expect(h.appState == .suspended)
        let mark = h.calls.count
        h.send(.push(contentAvailable: true))
        #expect(h.appState == .background)
        let id = try #require(
            h.calls(since: mark).lazy.compactMap { if case .remoteNotification(let id) = $0 { id } else { nil } }
                .first)
        h.wait(.seconds(5))
        #expect(h.appState == .background)
        h.send(.pushCompleted(id: id, .newData, note: nil))
        #expect(h.appState == .suspended)

        // Past the budget, handler unfinished: the app is terminated.
        var slow = Self.leftApp(Self.scenario(modes: .remoteNotification))
        slow.send(.push(contentAvailable: true))
        slow.wait(.seconds(60))
        #expect(slow.appState == .notRunning)
        #expect(slow.kinds.contains { if case .push(.expired, _, .budget, _) = $0 { true } else { false } })
    }

    // MARK: - Invariants over random walks

    enum Step: CaseIterable {
        case open, leave, interrupt, endInterruption, swipe, systemTerminate, wait, audioOn, audioOff
        case session, endSession, beginTask, endTask, push, completePush, lowPower
    }

    /// Random walks of the user, the system and the app's calls through the rules of several
    /// releases. After every step: the lifecycle's reported states form one chain; no timer is
    /// set in the past; the device is settled (a backgrounded app past its grace period has
    /// something keeping it running); audio plays and a session is held only while the app runs.
    @Test(arguments: [13, 17, 26]) func randomWalksKeepTheDevicesInvariants(ios: Int) {
        var rng = SplitMix64(seed: UInt64(ios))
        let modes: [BackgroundModes] = [[], .location, .audio, [.remoteNotification, .location], .fetch]
        for walk in 0..<150 {
            var h = RulesHarness(Self.scenario(ios: ios, modes: modes[walk % modes.count]))
            h.send(.lifecycle(.launch(inBackground: false, cause: .userLaunch)))
            var tasks: [Int] = []
            var pushes: [Int] = []
            var trail: [Step] = []
            for _ in 0..<60 {
                let step = Step.allCases[Int(rng.next() % UInt64(Step.allCases.count))]
                trail.append(step)
                let mark = h.calls.count
                switch step {
                case .open: h.send(.lifecycle(.open))
                case .leave: h.send(.lifecycle(.leave))
                case .interrupt: h.send(.lifecycle(.interrupt))
                case .endInterruption: h.send(.lifecycle(.endInterruption))
                case .swipe:
                    let wasRunning = h.appState != .notRunning
                    h.send(.lifecycle(.terminate(.user)))
                    h.send(.swipedAway(wasRunning: wasRunning))
                case .systemTerminate:
                    if h.appState != .notRunning { h.send(.lifecycle(.terminate(.system))) }
                case .wait: h.wait(.seconds(Int(rng.next() % 200)))
                case .audioOn: if h.rules.appCodeRuns { h.send(.audio(playing: true)) }
                case .audioOff: if h.rules.appCodeRuns { h.send(.audio(playing: false)) }
                case .session: if h.rules.appCodeRuns { h.send(.startActivitySession) }
                case .endSession:
                    if h.rules.appCodeRuns { h.send(.invalidateActivitySession(id: h.rules.sessions.counter)) }
                case .beginTask:
                    if h.rules.appCodeRuns {
                        h.send(.beginBackgroundTask(name: "t"))
                        if let id = h.rules.tasks.tasks.max() { tasks.append(id) }
                    }
                case .endTask:
                    if h.rules.appCodeRuns, let id = tasks.popLast() { h.send(.endBackgroundTask(id, name: "t")) }
                case .push: h.send(.push(contentAvailable: true))
                case .completePush:
                    if h.rules.appCodeRuns, let id = pushes.popLast() {
                        h.send(.pushCompleted(id: id, .noData, note: nil))
                    }
                case .lowPower: h.send(.setting(.setLowPowerMode(rng.next() % 2 == 0)))
                }
                for call in h.calls(since: mark) {
                    if case .remoteNotification(let id) = call { pushes.append(id) }
                }
                if h.appState == .notRunning {
                    tasks = []
                    pushes = []
                }
                if let broken = Self.brokenInvariant(h) {
                    Issue.record("iOS \(ios), walk \(walk): \(broken), after \(trail)")
                    return
                }
            }
        }
    }

    /// The join between the rules and their driver: the same script of the user's and the
    /// system's actions, carried out by ``Simulation`` (with the scenario's app, which starts
    /// nothing) and by the harness written apart from it, gives the same states at the same times
    /// and the same terminations.
    @Test func theDriverCarriesOutTheRulesAsTheHarnessDoes() async throws {
        var rng = SplitMix64(seed: 17)
        let script: [Scenario.Action] = [
            .foreground, .background, .deactivate, .activate, .terminate, .systemTerminate, .setLowPowerMode(true),
            .setLowPowerMode(false),
        ]
        for round in 0..<40 {
            var scenario = Self.scenario(ios: [13, 17, 26][round % 3], modes: round % 2 == 0 ? [] : .location)
            scenario.app.startsUpdates = false
            var time = Duration.zero
            for _ in 0..<12 {
                time += .seconds(Int(rng.next() % 40))
                scenario.timeline.append(.init(at: time, script[Int(rng.next() % UInt64(script.count))]))
            }
            scenario.end = time + .seconds(60)

            let simulation = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 1_714_550_400))
            let recorder = AuditRecorder()
            simulation.addObserver(recorder)
            try await simulation.run(ListSource([]))
            let driven = recorder.events.compactMap { Self.lifecycleLine($0.offset, $0.kind) }

            var h = RulesHarness(scenario)
            h.send(.lifecycle(.launch(inBackground: false, cause: .userLaunch)))
            for item in scenario.timeline {
                h.advance(to: item.at)
                switch item.action {
                case .foreground: h.send(.lifecycle(.open))
                case .background: h.send(.lifecycle(.leave))
                case .deactivate: h.send(.lifecycle(.interrupt))
                case .activate: h.send(.lifecycle(.endInterruption))
                case .terminate:
                    let wasRunning = h.appState != .notRunning
                    h.send(.lifecycle(.terminate(.user)))
                    h.send(.swipedAway(wasRunning: wasRunning))
                case .systemTerminate: if h.appState != .notRunning { h.send(.lifecycle(.terminate(.system))) }
                default: h.send(.setting(item.action))
                }
            }
            h.advance(to: scenario.end!)
            let harnessed = h.records.compactMap { Self.lifecycleLine($0.time, $0.kind) }
            #expect(driven == harnessed, "round \(round): \(scenario.timeline.map { "\($0.at) \($0.action.name)" })")
        }
    }

    static func lifecycleLine(_ time: Duration, _ kind: AuditEvent.Kind) -> String? {
        switch kind {
        case .stateChanged(let from, let to, let cause): "\(time) \(from)→\(to) \(cause)"
        case .terminated(let reason): "\(time) terminated \(reason)"
        default: nil
        }
    }

    /// The first invariant `h` breaks, in words; nil when it holds them all.
    static func brokenInvariant(_ h: RulesHarness) -> String? {
        var state = AppState.notRunning
        for record in h.records {
            guard case .stateChanged(let from, let to, _) = record.kind else { continue }
            if from != state { return "a change from \(from) to \(to) after \(state)" }
            state = to
        }
        if state != h.appState { return "the last reported state \(state) is not \(h.appState)" }
        if let past = h.timerTimes.first(where: { $0 < h.now }) { return "a timer at \(past), before \(h.now)" }
        var rules = h.rules
        if case .idle = rules.settleStep(), !h.rules.lifecycle.isInUse {
            // Only the grace period may hold off suspension now.
            return "unsettled: nothing keeps the app running in \(h.appState)"
        }
        if h.rules.audio.isPlaying && !h.rules.lifecycle.isRunning { return "audio plays in \(h.appState)" }
        if h.rules.sessions.activitySessions > 0 && h.appState == .notRunning {
            return "a session outlives the process"
        }
        return nil
    }
}
