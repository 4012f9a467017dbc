import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a ``Simulation`` from a live gpsd connection, in wall-clock time.
///
/// It is the same simulation and policy as replay, driven step by step: a fix or a report
/// without one is received at its arrival time (measured on the injected clock from the start),
/// and the simulation's timers are advanced by a tick every ``tick``. A loss of gpsd ends the
/// track segment; the next fix starts a new one.
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
    /// Called on the recording's task for every notice.
    public var onNotice: ((Notice) -> Void)?
    /// Called after every fix, with the report and how long it took from its arrival to the
    /// location being decided, delivered and stored.
    public var onFixHandled: ((GPSDReport, Duration) -> Void)?

    private let clock: C
    private var fixes = 0
    private var segment = 0

    public init(simulation: Simulation, mapping: GPSDMapping = GPSDMapping(), clock: C) {
        self.simulation = simulation
        self.mapping = mapping
        self.clock = clock
        (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
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
        let forwarder = Task {
            for await event in events { continuation.yield(.gpsd(event)) }
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
        let start = clock.now
        simulation.start(source: "gpsd://\(client.configuration.host):\(client.configuration.port)")
        var connectedOnce = false
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
                switch event {
                case .connected(let host, let port):
                    connectedOnce = true
                    onNotice?(.connected(host: host, port: port))
                case .unreachable(let reason, let retryIn):
                    if !connectedOnce {
                        ending = .unreachable(reason: reason)
                        break loop
                    }
                    onNotice?(.unreachable(reason: reason, retryIn: retryIn))
                case .disconnected(let reason):
                    segment += 1
                    onNotice?(.outage(reason: reason))
                case .stale(let silent):
                    onNotice?(.stale(silentFor: silent))
                case .receiving:
                    onNotice?(.receiving)
                case .implausibleTime(let report, let expected):
                    if let time = report.time { onNotice?(.implausibleTime(time: time, expected: expected)) }
                case .timeJump(let seconds):
                    onNotice?(.receiverTimeJumped(seconds: seconds))
                case .fix(let report, let received):
                    let offset = max(.zero, start.duration(to: Self.instant(received, clock: clock, start: start)))
                    if let location = mapping.location(for: report) {
                        simulation.receive(
                            SourceEvent(offset: offset, kind: .fix(location), index: fixes, segment: segment))
                        fixes += 1
                        onFixHandled?(report, ContinuousClock.now - received)
                        if let count, fixes >= count {
                            ending = .limitReached
                            break loop
                        }
                    }
                case .noFix(_, let received):
                    let offset = max(.zero, start.duration(to: Self.instant(received, clock: clock, start: start)))
                    simulation.receive(SourceEvent(offset: offset, kind: .noFix, index: fixes, segment: segment))
                }
            }
        }
        simulation.finish(at: start.duration(to: clock.now))
        return ending
    }

    /// The arrival instant on this recording's clock. The gpsd thread stamps arrivals on the
    /// continuous clock; for another clock the arrival counts as now.
    private static func instant(_ received: ContinuousClock.Instant, clock: C, start: C.Instant) -> C.Instant {
        if let same = received as? C.Instant { return same }
        return clock.now
    }
}
