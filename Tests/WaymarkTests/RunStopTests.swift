import Dispatch
import Foundation
import Testing
import WaymarkTesting

@testable import Waymark

/// Ending a run early (`RunStop`): from the app's own thread, from another thread, in virtual
/// time and at a clock's pace, with the command line's source and any other. The run ends at the
/// time of the fix it was handling, with nothing later, and its log ends as a whole run's does.
@Suite struct RunStopTests {
    /// Requests the stop as the `at`-th fix is recorded, and keeps the log.
    final class StopAtFix: SimulationObserver {
        let stop: RunStop
        let at: Int
        /// The log (only its first `at` fixes' worth when another thread requests the stop: the
        /// run goes on until that thread runs, which may be a while on a loaded machine).
        var events: [AuditEvent] = []
        /// The last event, and the last fix's time, whatever `events` keeps.
        var last: AuditEvent?
        var lastFix: Duration?
        var fixes = 0
        /// Signalled once `at` fixes are recorded, for a stop made on another thread.
        let reached = DispatchSemaphore(value: 0)
        /// Whether this observer requests the stop itself.
        let requests: Bool

        init(stop: RunStop, at: Int, requests: Bool = true) {
            self.stop = stop
            self.at = at
            self.requests = requests
        }

        func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
            if requests || fixes < at { events.append(event) }
            last = event
            guard case .fix = event.kind else { return }
            fixes += 1
            lastFix = event.offset
            if fixes == at {
                if requests { stop.request() } else { reached.signal() }
            }
        }
    }

    enum Source: String, CaseIterable, CustomTestStringConvertible {
        /// The command line's source, which the run plays in a loop of its own type.
        case streaming
        /// Any other synchronous source, through the protocol.
        case schedule
        var testDescription: String { rawValue }
    }

    /// The walk, played for ever: only a stop ends the run.
    static func source(_ kind: Source) throws -> any SynchronousLocationSource {
        let path = Paths.fixture("scenarios/traces/walk.gpx")
        switch kind {
        case .streaming: return try StreamingReplaySource(contentsOf: path, loops: nil)
        case .schedule:
            let (document, _) = try readDocument(path)
            return GPXReplaySource(schedule: try ReplaySchedule(document: document, file: path), name: path, loops: nil)
        }
    }

    /// A scenario with a scripted action long after the stop, which must not happen, and a
    /// backgrounded app whose fixes are held, which the end discards.
    static var scenario: Scenario {
        var s = Scenario()
        s.device.authorization = .authorizedAlways  // a suspended app's fixes are held
        s.timeline = [.init(at: .seconds(40), .background), .init(at: .seconds(180_000), .foreground)]
        return s
    }

    static func run(_ kind: Source, stop: RunStop, observer: StopAtFix, paced: Bool = false) async throws
        -> (Simulation, RunSummary)
    {
        let simulation = Simulation(scenario: Self.scenario, epoch: SimulationTests.epoch)
        simulation.addObserver(observer)
        let summary: RunSummary
        switch (try Self.source(kind), paced) {
        case (let source, false): summary = try await simulation.run(source, stoppingOn: stop)
        case (let source, true):
            summary = try await simulation.run(source, clock: RecordingClock(), rate: 1, stoppingOn: stop)
        }
        return (simulation, summary)
    }

    /// The log of a run stopped at its 120th fix: those fixes, nothing after the last (no later
    /// action, no later timer), the held fixes discarded, and `finished` last, at that fix's time.
    static func expectStoppedAtTheFix(_ simulation: Simulation, _ summary: RunSummary, _ observer: StopAtFix) throws {
        let fixes = observer.events.filter { if case .fix = $0.kind { true } else { false } }
        #expect(fixes.count == observer.at)
        #expect(summary.fixes == observer.at)
        let last = try #require(fixes.last)
        #expect(observer.events.allSatisfy { $0.offset <= last.offset }, "nothing after the fix it was handling")
        #expect(simulation.now == last.offset)
        guard case .finished(let logged) = observer.events.last?.kind else {
            Issue.record("the log ends with `finished`: \(String(describing: observer.events.last))")
            return
        }
        #expect(logged == summary)
        let actions = observer.events.compactMap { if case .action(let name, _) = $0.kind { name } else { nil } }
        #expect(actions == ["background"], "the action at 40 s came, the one 50 hours on did not")
        #expect(summary.discardedHeld > 0, "the fixes held since the app was suspended are discarded")
    }

    /// Requested by the app's side during the run (an observer, as a failing output does).
    @Test(arguments: Source.allCases, [false, true])
    func aStopEndsTheRunAtTheFixItWasHandling(_ kind: Source, paced: Bool) async throws {
        let stop = RunStop()
        let observer = StopAtFix(stop: stop, at: 120)
        let (simulation, summary) = try await Self.run(kind, stop: stop, observer: observer, paced: paced)
        #expect(stop.isRequested)
        try Self.expectStoppedAtTheFix(simulation, summary, observer)
    }

    /// Requested from another thread (a signal handler's queue) once the run has made progress:
    /// the run ends soon after, whole. Waits on the run's progress, never on the clock.
    @Test(.timeLimit(.minutes(5)), arguments: Source.allCases)
    func aStopFromAnotherThreadEndsARunThatWouldNeverEnd(_ kind: Source) async throws {
        let stop = RunStop()
        let observer = StopAtFix(stop: stop, at: 50, requests: false)
        let reached = observer.reached
        DispatchQueue.global().async {
            reached.wait()
            stop.request()
        }
        // A stop never seen would keep the run going for ever: the suite's hang watch (test.sh)
        // names the test, since a time limit cannot end a loop that never suspends.
        let (simulation, summary) = try await Self.run(kind, stop: stop, observer: observer)
        #expect(summary.fixes >= 50)
        guard let last = observer.last, case .finished(let logged) = last.kind else {
            Issue.record("the log ends with `finished`")
            return
        }
        #expect(logged == summary)
        // It ended at the step it was handling: the last fix, or a timer after it.
        let lastFix = try #require(observer.lastFix)
        #expect(last.offset == simulation.now && simulation.now >= lastFix)
    }

    /// A paced run waiting for its next fix stops waiting when the stop comes: the fix's time has
    /// not come, so it is not handled, and the run ends at the last one's time (a trace's gap of
    /// hours does not keep a stopped replay running). The clock never moves.
    @MainActor @Test(.timeLimit(.minutes(5))) func aPacedRunWaitingForItsNextFixStopsAtOnce() async throws {
        let clock = ManualClock()
        let stop = RunStop()
        let simulation = Simulation(scenario: Scenario(), epoch: SimulationTests.epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        let source = try SimulationTests.source()  // a fix every 10 s
        let run = Task { try await simulation.run(source, clock: clock, rate: 1, stoppingOn: stop) }
        await clock.waitForSleepers(1)
        #expect(simulation.summary.fixes == 1, "the fix at 0 came; the one at 10 s is waited for")
        stop.request()
        let summary = try await run.value
        #expect(summary.fixes == 1)
        #expect(simulation.now == .zero)
        guard case .finished = recorder.events.last?.kind else {
            Issue.record("the log ends with `finished`")
            return
        }
        #expect(recorder.events.allSatisfy { $0.offset == .zero })
        #expect(clock.sleeperCount == 0, "the wait was let go")
    }

    /// Cancelling a paced run's task still throws, whether the stop is requested too or not: the
    /// stop is not a cancellation, nor the other way round.
    @MainActor @Test(.timeLimit(.minutes(5)), arguments: [false, true])
    func cancellingAPacedRunWithAStopStillThrows(requestedToo: Bool) async throws {
        let clock = ManualClock()
        let stop = RunStop()
        let simulation = Simulation(scenario: Scenario(), epoch: SimulationTests.epoch)
        let source = try SimulationTests.source()
        let run = Task { try await simulation.run(source, clock: clock, rate: 1, stoppingOn: stop) }
        await clock.waitForSleepers(1)
        run.cancel()
        if requestedToo { stop.request() }
        await #expect(throws: CancellationError.self) { try await run.value }
        #expect(stop.isRequested == requestedToo)
    }

    /// Several paced runs may share one stop (one Ctrl-C for several devices): each stops
    /// waiting when it comes.
    @MainActor @Test(.timeLimit(.minutes(5))) func runsSharingAStopAllStopWaiting() async throws {
        let clock = ManualClock()
        let stop = RunStop()
        var runs: [Task<RunSummary, any Error>] = []
        for _ in 0..<3 {
            let simulation = Simulation(scenario: Scenario(), epoch: SimulationTests.epoch)
            let source = try SimulationTests.source()
            runs.append(Task { try await simulation.run(source, clock: clock, rate: 1, stoppingOn: stop) })
        }
        await clock.waitForSleepers(3)
        stop.request()
        for run in runs { #expect(try await run.value.fixes == 1) }
        #expect(clock.sleeperCount == 0)
    }

    /// A stop never requested changes nothing: the same log, byte for byte, as a run without one,
    /// in virtual time and at a clock's pace (whose loop is another, and came before `RunStop`).
    @Test(arguments: Source.allCases)
    func aStopNeverRequestedChangesNothing(_ kind: Source) async throws {
        var logs: [String] = []
        for (withStop, paced) in [(false, false), (true, false), (false, true), (true, true)] {
            let simulation = Simulation(scenario: SimulationTests.busyScenario, epoch: SimulationTests.epoch)
            let recorder = AuditRecorder()
            simulation.addObserver(recorder)
            let path = Paths.fixture("scenarios/traces/walk.gpx")
            let source: any SynchronousLocationSource =
                switch kind {
                case .streaming: try StreamingReplaySource(contentsOf: path, name: "walk", loops: 2)
                case .schedule: try SimulationTests.source(loops: 2)
                }
            switch (withStop, paced) {
            case (false, false): try await simulation.run(source)
            case (true, false): try await simulation.run(source, stoppingOn: RunStop())
            case (false, true): try await simulation.run(source, clock: RecordingClock(), rate: 1)
            case (true, true): try await simulation.run(source, clock: RecordingClock(), rate: 1, stoppingOn: RunStop())
            }
            logs.append(recorder.ndjson(epoch: SimulationTests.epoch))
        }
        #expect(logs.allSatisfy { $0 == logs[0] })
        #expect(logs[0].contains("\"event\":\"finished\""))
    }
}
