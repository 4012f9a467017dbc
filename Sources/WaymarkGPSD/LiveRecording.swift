import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a ``Simulation`` from a live gpsd connection, on an injected clock (the wall clock for
/// `waymark record`, a manual one in tests).
///
/// It is the same simulation and policy as replay, driven step by step: a fix or a report
/// without one is received at its arrival time (measured by the ``GPSDClient`` on its clock,
/// from its start, which is the recording's start: give both the same clock), and the
/// simulation's timers are advanced by a tick every ``tick``. A track segment ends where the
/// receiver's track is broken, as the offline readers of NMEA logs and gpsd captures end theirs:
/// at a loss of fix (a report without one), a loss of gpsd, a simulated fix left out, a jump of
/// the receiver's clock, and a gap of more than ``segmentGap`` between two fixes' times (a
/// tunnel the receiver reports nothing from); the next fix starts a new one. So a logged track
/// never draws a straight line through a tunnel, and its length is what `info` gives for the
/// same feed read from a capture.
///
/// Reports wait in memory while the recording is busy (a slow store, one locked by another
/// process), at most ``backlogLimit`` of them: gpsd's reader goes on, and what arrives while
/// the backlog is full is dropped and reported (``Notice/backlogOverflow(dropped:from:to:)``, at
/// most every 10 s while drops go on, and at the end).
/// Nothing dropped has been delivered or shown.
public final class LiveRecording<C: Clock> where C.Duration == Duration {
    /// Something the recording tells its owner about, besides the simulation's own events.
    public enum Notice: Sendable, Hashable {
        case connected(host: String, port: String)
        case unreachable(reason: String, retryIn: Duration)
        case outage(reason: String)
        case stale(silentFor: Duration)
        case receiving
        /// A fix was dropped: its time (`time`) did not fit the receiver's clock (`expected`).
        case implausibleTime(time: Date, expected: Date)
        /// The receiver's clock moved by this many seconds and stayed there; recording goes on.
        case receiverTimeJumped(seconds: Double)
        /// A line of `bytes` bytes from gpsd, longer than `limit`, was skipped.
        case overlongLine(bytes: Int, limit: Int)
        /// Reports that arrived while ``backlogLimit`` others waited were dropped: `dropped`
        /// of them, received from `from` to `to` (wall-clock instants on the recording's
        /// timeline). None of them was delivered.
        case backlogOverflow(dropped: Int, from: Duration, to: Duration)
        /// gpsd's own notice: an `ERROR`, a receiver activated or deactivated.
        case gpsd(GPSDNotice)
        /// gpsd marked a fix simulated (status 8): the receiver is in simulation mode, and its
        /// fixes are left out (told once; ``simulatedFixes`` counts them).
        case simulatedFixes

        /// The audit log's `source` action for the notice.
        public var action: SourceAction {
            switch self {
            case .gpsd(let notice): notice.action
            case .simulatedFixes: .simulated
            case .connected: .connected
            case .unreachable: .unreachable
            case .outage: .outage
            case .stale: .stale
            case .receiving: .receiving
            case .implausibleTime: .implausibleTime
            case .receiverTimeJumped: .timeJump
            case .overlongLine: .overlongLine
            case .backlogOverflow: .backlogOverflow
            }
        }

        /// The audit log's `source` detail for the notice, in words.
        public var detail: String? {
            switch self {
            case .connected(let host, let port): "gpsd at \(host):\(port)"
            case .unreachable(let reason, let retry): "\(reason); trying again in \(DurationText.format(retry))"
            case .outage(let reason): reason
            case .stale(let silent): "silent for \(DurationText.format(silent))"
            case .receiving: nil
            case .implausibleTime(let time, let expected):
                "a fix timed \(ValueFormatting.iso8601(time)) where the receiver's clock said about \(ValueFormatting.iso8601(expected))"
            case .receiverTimeJumped(let seconds): "by \(ValueFormatting.fixed(seconds, decimals: 3)) s"
            case .overlongLine(let bytes, let limit): "a line of \(bytes) bytes (more than \(limit))"
            case .backlogOverflow(let dropped, let from, let to):
                "\(dropped) report(s) received from \(DurationText.format(from)) to \(DurationText.format(to)) dropped"
            case .gpsd(let notice): notice.detail
            case .simulatedFixes:
                "gpsd marks the receiver's fixes simulated (status 8: simulation mode); they are left out"
            }
        }
    }

    /// Why the recording stopped.
    public enum Ending: Sendable, Hashable {
        /// gpsd could not be reached at the start.
        case unreachable(reason: String)
        /// ``stop()`` was called (a signal, say).
        case stopped
        /// The duration or the count was reached.
        case limitReached
        /// The connection's stream ended.
        case sourceEnded
    }

    public let simulation: Simulation
    public let mapping: GPSDMapping
    public var tick: Duration = .milliseconds(100)
    /// How many reports from gpsd (fixes, and reports without one) may wait to be handled.
    public var backlogLimit = 1_000
    /// Called on the recording's task for every notice.
    public var onNotice: ((Notice) -> Void)?
    /// Which fixes reach the simulation (`record --fix-min`, `--min-move`); the rest are left
    /// out and counted in it.
    public var filter = LoggerFilter()
    /// Called after every fix, with the report and how long it took from its arrival to the
    /// location being decided, delivered and stored.
    public var onFixHandled: ((GPSDReport, Duration) -> Void)?

    /// Fixes left out because gpsd marked them simulated (status 8).
    public private(set) var simulatedFixes = 0
    /// Two fixes further apart than this in the receiver's time are in different segments (nil:
    /// only a loss of fix, of gpsd or of the clock splits). `record --segment-gap`; gpxlogger's
    /// `-i` is 5 s, and 10 s lets a receiver miss a few epochs without a split.
    public var segmentGap: Duration? = .seconds(10)

    private let clock: C
    private let backlog = SharedBacklog()
    private var fixes = 0
    private var segment = 0
    /// Whether the current segment has a fix, and whether the receiver's track broke since it.
    private var segmentHasFixes = false
    private var trackBroken = false
    /// The receiver's time of the last fix.
    private var lastFixTime: Date?

    /// The segment of a fix at `time`: a new one after a break or a gap.
    private func segment(forFixAt time: Date) -> Int {
        if segmentHasFixes, trackBroken || gapExceeded(before: time) {
            segment += 1
        }
        segmentHasFixes = true
        trackBroken = false
        lastFixTime = time
        return segment
    }

    private func gapExceeded(before time: Date) -> Bool {
        guard let gap = segmentGap, gap > .zero, let last = lastFixTime else { return false }
        let seconds = time.timeIntervalSince(last)
        return seconds > Double(gap.components.seconds) + Double(gap.components.attoseconds) / 1e18
    }

    public init(simulation: Simulation, mapping: GPSDMapping = GPSDMapping(), clock: C) {
        self.simulation = simulation
        self.mapping = mapping
        self.clock = clock
        (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
    }

    /// The reports waiting between gpsd's reader and the recording, and those dropped.
    struct Backlog: Sendable {
        var waiting = 0
        var dropped = 0
        /// When the first and the last report dropped arrived, from the start.
        var firstDropped: Duration?
        var lastDropped: Duration?
    }

    /// The backlog, shared by the forwarding task and the recording. A pthread mutex, which
    /// ThreadSanitizer understands (it takes Synchronization's Mutex on Linux for a race).
    final class SharedBacklog: @unchecked Sendable {
        private let lock = PThreadMutex()
        private var state = Backlog()
        func withLock<T>(_ body: (inout Backlog) -> T) -> T { lock.withLock { body(&state) } }
    }

    fileprivate enum Input: Sendable {
        case gpsd(GPSDClient.Event)
        case tick
        case stop
        case ended
    }

    private let inputs: AsyncStream<Input>
    private let continuation: AsyncStream<Input>.Continuation

    /// Stops the recording from anywhere (a signal handler, another task).
    public struct Stopper: Sendable {
        fileprivate let continuation: AsyncStream<Input>.Continuation
        public func stop() { continuation.yield(.stop) }
    }

    /// A handle that stops the recording at its next step; ``run(client:duration:count:)`` then
    /// returns ``Ending/stopped``.
    public var stopper: Stopper { Stopper(continuation: continuation) }

    /// Records until `duration` has passed, `count` fixes have arrived, ``stop()`` is called or
    /// the source ends. If gpsd cannot be reached at the first attempt, it returns at once with
    /// ``Ending/unreachable(reason:)``; later outages are waited out.
    public func run(client: GPSDClient, duration: Duration? = nil, count: Int? = nil) async -> Ending {
        let continuation = self.continuation
        let events = client.start()
        let start = clock.now  // the client's start too: arrival times count from here
        let backlog = self.backlog
        let limit = max(1, backlogLimit)
        let forwarder = Task {
            for await event in events {
                switch event {
                case .fix(_, let received), .noFix(_, let received):
                    let taken = backlog.withLock { b in
                        guard b.waiting < limit else {
                            b.dropped += 1
                            if b.firstDropped == nil { b.firstDropped = received }
                            b.lastDropped = received
                            return false
                        }
                        b.waiting += 1
                        return true
                    }
                    if taken { continuation.yield(.gpsd(event)) }
                default:
                    continuation.yield(.gpsd(event))
                }
            }
            continuation.yield(.ended)
        }
        let clock = self.clock
        let tick = self.tick
        let ticker = Task {
            while !Task.isCancelled {
                try? await clock.sleep(for: tick)
                continuation.yield(.tick)
            }
        }
        defer {
            ticker.cancel()
            client.stop()
            forwarder.cancel()
        }
        simulation.start(source: "gpsd://\(client.configuration.host):\(client.configuration.port)")
        var connectedOnce = false
        // Drops are reported at most every 10 s while they go on, and at the end.
        var nextOverflowReport = Duration.zero
        var ending = Ending.sourceEnded
        loop: for await input in inputs {
            let now = start.duration(to: clock.now)
            if let duration, now >= duration {
                simulation.advance(to: duration)
                ending = .limitReached
                break
            }
            switch input {
            case .tick:
                simulation.advance(to: now)
            case .stop:
                ending = .stopped
                break loop
            case .ended:
                ending = .sourceEnded
                break loop
            case .gpsd(let event):
                if now >= nextOverflowReport, reportOverflow() { nextOverflowReport = now + .seconds(10) }
                switch event {
                case .connected(let host, let port):
                    connectedOnce = true
                    note(.connected(host: host, port: port), at: now)
                case .unreachable(let reason, let retryIn):
                    if !connectedOnce {
                        ending = .unreachable(reason: reason)
                        break loop
                    }
                    note(.unreachable(reason: reason, retryIn: retryIn), at: now)
                case .disconnected(let reason):
                    trackBroken = true
                    filter.restart()
                    note(.outage(reason: reason), at: now)
                case .stale(let silent):
                    note(.stale(silentFor: silent), at: now)
                case .receiving:
                    note(.receiving, at: now)
                case .implausibleTime(let report, let expected):
                    if let time = report.time { note(.implausibleTime(time: time, expected: expected), at: now) }
                case .timeJump(let seconds):
                    trackBroken = true
                    note(.receiverTimeJumped(seconds: seconds), at: now)
                case .overlongLine(let bytes, let limit):
                    note(.overlongLine(bytes: bytes, limit: limit), at: now)
                case .notice(let notice):
                    note(.gpsd(notice), at: now)
                case .fix(let report, _) where report.isSimulated:
                    // A simulator's position, not the receiver's: left out, counted, told once.
                    backlog.withLock { $0.waiting -= 1 }
                    simulatedFixes += 1
                    trackBroken = true
                    if simulatedFixes == 1 { note(.simulatedFixes, at: now) }
                case .fix(let report, let received):
                    backlog.withLock { $0.waiting -= 1 }
                    let offset = max(.zero, received)
                    if let location = mapping.location(for: report),
                        filter.admit(mode: report.mode >= 3 ? 3 : 2, at: location.coordinate) == nil
                    {
                        let fixSegment = segment(forFixAt: location.timestamp)
                        simulation.receive(
                            SourceEvent(offset: offset, kind: .fix(location), index: fixes, segment: fixSegment))
                        fixes += 1
                        onFixHandled?(report, start.duration(to: clock.now) - received)
                        if let count, fixes >= count {
                            ending = .limitReached
                            break loop
                        }
                    }
                case .noFix(_, let received):
                    backlog.withLock { $0.waiting -= 1 }
                    trackBroken = true
                    filter.restart()
                    let offset = max(.zero, received)
                    simulation.receive(SourceEvent(offset: offset, kind: .noFix, index: fixes, segment: segment))
                }
            }
        }
        _ = reportOverflow()
        simulation.finish(at: start.duration(to: clock.now))
        return ending
    }

    /// Reports the reports dropped since the last call, if any; whether there were.
    private func reportOverflow() -> Bool {
        let dropped = backlog.withLock { b -> (Int, Duration, Duration)? in
            guard b.dropped > 0, let first = b.firstDropped, let last = b.lastDropped else { return nil }
            defer { b = Backlog(waiting: b.waiting) }
            return (b.dropped, first, last)
        }
        guard let (count, first, last) = dropped else { return false }
        let from = max(.zero, first)
        let to = max(from, last)
        let notice = Notice.backlogOverflow(dropped: count, from: from, to: to)
        simulation.noteSource(notice.action, detail: notice.detail)
        onNotice?(notice)
        return true
    }

    /// Hands `notice` to the owner and writes it to the audit log (and so the store) as a
    /// `source` event at `now`, the time it arrived.
    private func note(_ notice: Notice, at now: Duration) {
        if now > simulation.now { simulation.advance(to: now) }
        simulation.noteSource(notice.action, detail: notice.detail)
        onNotice?(notice)
    }
}
