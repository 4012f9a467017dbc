import Foundation
import Synchronization
import Testing
import WaymarkTesting

@testable import Waymark
@testable import WaymarkGPSD

/// `record`'s connection to gpsd on an injected clock (issue 25, item 6): the rules of outages,
/// staleness, reconnection and epochs, first as the pure machine, then through the client and a
/// whole recording on a manual clock, with a transport the test scripts. Nothing waits in real
/// time (the time limit only guards against a hang); GPSDLiveTests run the same rules against
/// real gpsds.
@Suite(.timeLimit(.minutes(45))) struct GPSDClientClockTests {
    static let configuration = GPSDClient.Configuration(host: "gpsd.test", port: "2947")

    /// A TPV's report: a 3D fix at `second` past 08:00 on 2024-05-01, with a speed unless not.
    static func report(_ second: Int, speed: Bool = true) -> GPSDReport {
        GPSDReport(
            device: "/dev/test", mode: 3, time: Date(timeIntervalSince1970: 1_714_550_400 + Double(second)),
            latitude: 47 + Double(second) * 0.0001, longitude: 11, altitudeMSL: 500, eph: 5, epv: 8,
            speed: speed ? 1.5 : nil)
    }

    static let noFix = GPSDReport(device: "/dev/test", mode: 1)

    // MARK: - The machine

    @Test func failedAttemptsAreTriedAgainAfterABackoffThatDoublesUpToItsMaximum() {
        var machine = GPSDConnectionMachine(configuration: Self.configuration)
        #expect(machine.start(at: .zero) == [.connect])
        var now = Duration.zero
        var delays: [Duration] = []
        for _ in 0..<8 {
            let actions = machine.handle(.failed(reason: "Connection refused"), at: now)
            guard case .emit(.unreachable(let reason, let delay)) = actions.first, actions.count == 1 else {
                Issue.record("\(actions)")
                return
            }
            #expect(reason == "Connection refused")
            delays.append(delay)
            #expect(machine.deadline == now + delay)
            #expect(machine.timePassed(at: now + delay - .nanoseconds(1)).isEmpty, "not before the delay")
            now += delay
            #expect(machine.timePassed(at: now) == [.connect])
            #expect(machine.deadline == nil, "connecting waits for the transport, not the clock")
        }
        #expect(delays == [0.25, 0.5, 1, 2, 4, 8, 10, 10].map { Duration.milliseconds(Int($0 * 1000)) })
        // A connection that opens starts the backoff over: its loss is tried again after 250 ms.
        #expect(
            machine.handle(.opened(host: "gpsd.test", port: "2947"), at: now) == [
                .emit(.connected(host: "gpsd.test", port: "2947"))
            ])
        now += .seconds(1)
        #expect(
            machine.handle(.lost(reason: "gpsd closed the connection"), at: now) == [
                .emit(.disconnected(reason: "gpsd closed the connection"))
            ])
        #expect(machine.deadline == now + .milliseconds(250))
    }

    @Test func aSilentReceiverIsReportedOnceUntilReportsComeAgain() {
        var machine = GPSDConnectionMachine(configuration: Self.configuration)
        _ = machine.start(at: .zero)
        _ = machine.handle(.opened(host: "h", port: "p"), at: .seconds(1))
        // Silent from the connection on: stale 3 s later, once.
        #expect(machine.deadline == .seconds(4))
        #expect(machine.timePassed(at: .milliseconds(3999)).isEmpty)
        #expect(machine.timePassed(at: .seconds(4)) == [.emit(.stale(silentFor: .seconds(3)))])
        #expect(machine.deadline == nil)
        #expect(machine.timePassed(at: .seconds(60)).isEmpty, "said once")
        // A report ends it; the fix goes on, timed by its arrival.
        #expect(
            machine.handle(.report(Self.report(1)), at: .seconds(61)) == [
                .emit(.receiving), .emit(.fix(Self.report(1), received: .seconds(61))),
            ])
        #expect(machine.deadline == .seconds(64))
        #expect(machine.handle(.report(Self.report(2)), at: .seconds(62)).count == 1)
        #expect(machine.timePassed(at: .seconds(64)).isEmpty, "3 s after the last report, not the first")
        #expect(machine.timePassed(at: .seconds(65)) == [.emit(.stale(silentFor: .seconds(3)))])
    }

    @Test func aReportWaitingForTheRestOfItsEpochGoesOutAfterTheSettleTime() {
        var machine = GPSDConnectionMachine(configuration: Self.configuration)
        _ = machine.start(at: .zero)
        _ = machine.handle(.opened(host: "h", port: "p"), at: .zero)
        // The receiver sends speeds: a report without one waits for the rest of its epoch.
        #expect(machine.handle(.report(Self.report(1)), at: .seconds(1)).count == 1)
        #expect(machine.handle(.report(Self.report(2, speed: false)), at: .seconds(2)).isEmpty)
        #expect(machine.deadline == .milliseconds(2150))
        #expect(machine.timePassed(at: .milliseconds(2149)).isEmpty)
        #expect(
            machine.timePassed(at: .milliseconds(2150)) == [
                .emit(.fix(Self.report(2, speed: false), received: .milliseconds(2150)))
            ])
        // One held when gpsd goes away goes out before the outage.
        #expect(machine.handle(.report(Self.report(3, speed: false)), at: .seconds(3)).isEmpty)
        #expect(
            machine.handle(.lost(reason: "gone"), at: .milliseconds(3100)) == [
                .emit(.fix(Self.report(3, speed: false), received: .milliseconds(3100))),
                .emit(.disconnected(reason: "gone")),
            ])
    }

    @Test func stoppingSendsWhatWaitsAndEndsEverything() {
        var machine = GPSDConnectionMachine(configuration: Self.configuration)
        _ = machine.start(at: .zero)
        _ = machine.handle(.opened(host: "h", port: "p"), at: .zero)
        _ = machine.handle(.report(Self.report(1)), at: .seconds(1))
        _ = machine.handle(.report(Self.report(2, speed: false)), at: .seconds(2))
        #expect(machine.stop(at: .seconds(2)) == [.emit(.fix(Self.report(2, speed: false), received: .seconds(2)))])
        #expect(machine.deadline == nil)
        #expect(machine.handle(.report(Self.report(3)), at: .seconds(3)).isEmpty)
        #expect(machine.timePassed(at: .seconds(100)).isEmpty)
    }

    // MARK: - The client, on a manual clock

    @Test func theClientLivesThroughOutagesAndSilenceInVirtualTime() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: clock)
        let client = GPSDClient(configuration: Self.configuration, clock: clock, transport: transport)
        var events = client.start().makeAsyncIterator()
        // gpsd is not there yet.
        #expect(await transport.nextConnect() == .zero)
        transport.send(.failed(reason: "Connection refused"))
        #expect(await events.next() == .unreachable(reason: "Connection refused", retryIn: .milliseconds(250)))
        clock.advance(by: .milliseconds(250))
        #expect(await transport.nextConnect() == .milliseconds(250))
        transport.send(.opened(host: "gpsd.test", port: "2947"))
        #expect(await events.next() == .connected(host: "gpsd.test", port: "2947"))
        // Fixes, timed by their arrival on the clock (from the client's start).
        clock.advance(by: .seconds(1))
        transport.send(.report(Self.report(1)))
        #expect(await events.next() == .fix(Self.report(1), received: .milliseconds(1250)))
        transport.send(.report(Self.noFix))
        #expect(await events.next() == .noFix(Self.noFix, received: .milliseconds(1250)))
        // Silence: reported 3 s after the last report (the clock is moved to that moment; a
        // jump past it is noticed, and said, when the clock gets there).
        clock.advance(by: .seconds(3))
        #expect(await events.next() == .stale(silentFor: .seconds(3)))
        clock.advance(by: .seconds(7))
        transport.send(.report(Self.report(2)))
        #expect(await events.next() == .receiving)
        #expect(await events.next() == .fix(Self.report(2), received: .milliseconds(11_250)))
        // gpsd goes away: the outage, then attempts after 250 ms and 500 ms.
        transport.send(.lost(reason: "gpsd closed the connection"))
        #expect(await events.next() == .disconnected(reason: "gpsd closed the connection"))
        clock.advance(by: .milliseconds(250))
        #expect(await transport.nextConnect() == .milliseconds(11_500))
        transport.send(.failed(reason: "Connection refused"))
        #expect(await events.next() == .unreachable(reason: "Connection refused", retryIn: .milliseconds(500)))
        clock.advance(by: .milliseconds(500))
        #expect(await transport.nextConnect() == .milliseconds(12_000))
        transport.send(.opened(host: "gpsd.test", port: "2947"))
        #expect(await events.next() == .connected(host: "gpsd.test", port: "2947"))
        client.stop()
        #expect(await events.next() == nil, "the stream finishes")
        await client.join()
        #expect(transport.isStopped)
        #expect(transport.connectTimes.count == 4)
    }

    /// A whole recording on the manual clock: fixes at their virtual arrival, a silent receiver,
    /// an outage that ends the track segment, and the reconnection, in the audit log.
    @Test func aRecordingOnAManualClockSeesOutagesStalenessAndReconnection() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: clock)
        let progress = RecordingProgress()
        let epoch = Date(timeIntervalSince1970: 1_714_550_400)
        let run = Task { () -> (LiveRecording<ManualClock>.Ending, String) in
            let simulation = Simulation(scenario: Scenario.logger(), epoch: epoch)
            let audit = AuditRecorder()
            simulation.addObserver(audit)
            let recording = LiveRecording(simulation: simulation, clock: clock)
            recording.onNotice = { progress.noted($0.action.rawValue) }
            recording.onFixHandled = { _, _ in progress.fixHandled() }
            progress.stopper = recording.stopper
            let client = GPSDClient(configuration: Self.configuration, clock: clock, transport: transport)
            let ending = await recording.run(client: client)
            await client.join()
            return (ending, audit.ndjson(epoch: epoch))
        }
        func waitFor(notices: [String]) async -> Bool { await waitUntil(within: 60) { progress.notices == notices } }
        func waitFor(fixes: Int) async -> Bool { await waitUntil(within: 60) { progress.fixes == fixes } }

        #expect(await transport.nextConnect() == .zero)
        transport.send(.opened(host: "gpsd.test", port: "2947"))
        #expect(await waitFor(notices: ["connected"]))
        for second in 1...3 {
            clock.advance(by: .seconds(1))
            transport.send(.report(Self.report(second)))
            #expect(await waitFor(fixes: second))
        }
        // Five seconds without a report: stale 3 s after the last.
        clock.advance(by: .seconds(3))
        #expect(await waitFor(notices: ["connected", "stale"]))
        clock.advance(by: .seconds(2))
        transport.send(.lost(reason: "gpsd closed the connection"))
        #expect(await waitFor(notices: ["connected", "stale", "outage"]))
        clock.advance(by: .milliseconds(250))
        #expect(await transport.nextConnect() == .milliseconds(8250))
        transport.send(.opened(host: "gpsd.test", port: "2947"))
        #expect(await waitFor(notices: ["connected", "stale", "outage", "connected"]))
        clock.advance(by: .seconds(1))
        transport.send(.report(Self.report(10)))
        #expect(await waitFor(fixes: 4))
        progress.stopper?.stop()
        let (ending, ndjson) = await run.value
        #expect(ending == .stopped)
        #expect(transport.isStopped)

        let lines = try ndjsonObjects(ndjson)
        let source = lines.filter { $0["event"] as? String == "source" }
        #expect(source.compactMap { $0["action"] as? String } == ["connected", "stale", "outage", "connected"])
        // Each notice at its virtual time: connected at 0, stale 3 s after the fix at 3 s, the
        // outage at 8 s, the reconnection at 8.25 s.
        #expect(
            source.compactMap { $0["time"] as? String } == [
                "2024-05-01T08:00:00.000Z", "2024-05-01T08:00:06.000Z", "2024-05-01T08:00:08.000Z",
                "2024-05-01T08:00:08.250Z",
            ], "\(source)")
        #expect(source.count == 4 && source[1]["detail"] as? String == "silent for 3s", "\(source)")
        let fixes = lines.filter { $0["event"] as? String == "fix" }
        #expect(fixes.compactMap { $0["time"] as? String }.count == 4, "\(fixes)")
        #expect(fixes.compactMap { $0["segment"] as? Int } == [0, 0, 0, 1], "the outage ends the segment: \(fixes)")
    }
}

extension GPSDClientClockTests {
    /// A logged track ends its segment where the receiver's track breaks, as the capture and
    /// NMEA readers do: at a loss of fix (reports without one, as in a tunnel), and at a gap of
    /// more than `segmentGap` between two fixes' times (a receiver that says nothing there).
    @Test func aLossOfFixAndAGapInTimeEndTheSegment() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: clock)
        let progress = RecordingProgress()
        let epoch = Date(timeIntervalSince1970: 1_714_550_400)
        let run = Task { () -> String in
            let simulation = Simulation(scenario: Scenario.logger(), epoch: epoch)
            let audit = AuditRecorder()
            simulation.addObserver(audit)
            let recording = LiveRecording(simulation: simulation, clock: clock)
            recording.onNotice = { progress.noted($0.action.rawValue) }
            recording.onFixHandled = { _, _ in progress.fixHandled() }
            progress.stopper = recording.stopper
            let client = GPSDClient(configuration: Self.configuration, clock: clock, transport: transport)
            _ = await recording.run(client: client)
            await client.join()
            return audit.ndjson(epoch: epoch)
        }
        #expect(await transport.nextConnect() == .zero)
        transport.send(.opened(host: "gpsd.test", port: "2947"))
        #expect(await waitUntil(within: 60) { progress.notices == ["connected"] })
        var sent = 0
        func fix(_ second: Int) async {
            clock.advance(by: .seconds(1))
            transport.send(.report(Self.report(second)))
            sent += 1
            let expected = sent
            #expect(await waitUntil(within: 60) { progress.fixes == expected })
        }
        for second in 1...3 { await fix(second) }
        // The tunnel: two reports without a fix.
        for _ in 0..<2 {
            clock.advance(by: .seconds(1))
            transport.send(.report(Self.noFix))
        }
        for second in 6...8 { await fix(second) }
        // Nothing for 12 s of the receiver's time (more than the 10 s default), then fixes again.
        await fix(20)
        await fix(21)
        // 10 s exactly is not more than 10 s.
        await fix(31)
        progress.stopper?.stop()
        let ndjson = await run.value
        let fixes = try ndjsonObjects(ndjson).filter {
            $0["event"] as? String == "fix" && $0["reason"] as? String != "noFix"
        }
        #expect(
            fixes.compactMap { $0["segment"] as? Int } == [0, 0, 0, 1, 1, 1, 2, 2, 2],
            "\(fixes.map { "\($0["time"] ?? "") \($0["segment"] ?? "")" })")
    }
}

/// What a recording running in a task of its own has done, for the test that drives it.
final class RecordingProgress: Sendable {
    private let state = Mutex((notices: [String](), fixes: 0, stopper: LiveRecording<ManualClock>.Stopper?.none))
    var notices: [String] { state.withLock { $0.notices } }
    var fixes: Int { state.withLock { $0.fixes } }
    var stopper: LiveRecording<ManualClock>.Stopper? {
        get { state.withLock { $0.stopper } }
        set { state.withLock { $0.stopper = newValue } }
    }
    func noted(_ action: String) { state.withLock { $0.notices.append(action) } }
    func fixHandled() { state.withLock { $0.fixes += 1 } }
}

/// A transport the test speaks for: it records when it is asked to connect (on the test's
/// manual clock, which the client's times also count from) and delivers what the test sends.
final class ScriptedTransport: GPSDTransport, Sendable {
    private struct State {
        var deliver: (@Sendable (GPSDTransportEvent) -> Void)?
        var connectTimes: [Duration] = []
        /// Connect requests the test has taken (``nextConnect()``), and one waiting for the next.
        var taken = 0
        var waiter: CheckedContinuation<Duration, Never>?
        var stopped = false
    }

    private let state = Mutex(State())
    private let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    var connectTimes: [Duration] { state.withLock { $0.connectTimes } }
    var isStopped: Bool { state.withLock { $0.stopped } }

    func start(delivering deliver: @escaping @Sendable (GPSDTransportEvent) -> Void) {
        state.withLock { $0.deliver = deliver }
    }

    func connect() {
        let now = clock.now.offset
        let waiter = state.withLock { state -> CheckedContinuation<Duration, Never>? in
            state.connectTimes.append(now)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.taken += 1
            return waiter
        }
        waiter?.resume(returning: now)
    }

    func stop() { state.withLock { $0.stopped = true } }

    /// Delivers `event`, as gpsd's connection would.
    func send(_ event: GPSDTransportEvent) {
        state.withLock { $0.deliver }?(event)
    }

    /// Waits for the next connect request the test has not taken yet; the clock's time then.
    func nextConnect() async -> Duration {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Duration? in
                if state.connectTimes.count > state.taken {
                    state.taken += 1
                    return state.connectTimes[state.taken - 1]
                }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
