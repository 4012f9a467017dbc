import CGPS
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connection to gpsd through libgps, on one dedicated thread.
///
/// The thread owns the `gps_data_t` and makes every libgps call: `gps_open`, `gps_stream`,
/// `gps_unpack` and `gps_close`. Nothing else touches it. It reads gpsd's socket itself, cutting
/// lines with a ``GPSDLineFramer``: it waits on the socket (poll) without spinning while a line
/// is incomplete, and skips a line longer than ``Configuration/lineLimit`` with a warning
/// instead of losing the connection, as `gps_read` would. What it learns crosses to
/// the rest of Waymark as Sendable ``Event``s on an `AsyncStream`.
///
/// - **One location per fix time.** Reports go through a ``FixCoalescer``; a report waiting for
///   the rest of its epoch is sent after ``Configuration/settle`` without further reports.
/// - **Reconnects.** When gpsd goes away (it closes the socket, or reading it fails), the
///   thread closes the connection, reports the outage and tries again after 250 ms, doubling up
///   to 10 s.
/// - **Staleness.** A receiver silent for ``Configuration/staleAfter`` while gpsd lives is
///   reported once, until reports come again.
/// - **Shutdown.** ``stop()`` ends the thread within about 100 ms and finishes the stream.
public final class GPSDClient: @unchecked Sendable {
    // `stopped` and `counts` are guarded by `lock`; everything else belongs to the thread.

    /// Where gpsd is and how to watch it.
    public struct Configuration: Sendable, Hashable {
        public var host: String
        public var port: String
        /// Watch only this device (`WATCH_DEVICE`); nil watches all.
        public var device: String?
        /// How long a report waits for the rest of its epoch.
        public var settle: Duration
        /// Silence after which the receiver is reported stale.
        public var staleAfter: Duration
        /// The first reconnect delay, doubled after every failed attempt up to ``maximumBackoff``.
        public var initialBackoff: Duration
        public var maximumBackoff: Duration
        /// The longest line from gpsd taken, in bytes; a longer one is skipped and reported
        /// (``Event/overlongLine(bytes:limit:)``).
        public var lineLimit: Int

        public init(
            host: String = "localhost", port: String = "2947", device: String? = nil,
            settle: Duration = .milliseconds(150), staleAfter: Duration = .seconds(3),
            initialBackoff: Duration = .milliseconds(250), maximumBackoff: Duration = .seconds(10),
            lineLimit: Int = 65_536
        ) {
            self.host = host
            self.port = port
            self.device = device
            self.settle = settle
            self.staleAfter = staleAfter
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.lineLimit = lineLimit
        }
    }

    /// What the connection reports.
    public enum Event: Sendable, Hashable {
        /// Connected to gpsd and watching.
        case connected(host: String, port: String)
        /// gpsd could not be reached: the reason, and the delay before the next attempt.
        case unreachable(reason: String, retryIn: Duration)
        /// A fix (one per fix time), and when it arrived.
        case fix(GPSDReport, received: ContinuousClock.Instant)
        /// A report without a fix (mode < 2).
        case noFix(GPSDReport, received: ContinuousClock.Instant)
        /// A fix dropped because its time does not fit the receiver's clock (``FixCoalescer``),
        /// with the time that would have.
        case implausibleTime(GPSDReport, expected: Date)
        /// The receiver's clock moved by this many seconds and stayed there (a reset, a GPS week
        /// rollover); fixes go on from the new time.
        case timeJump(seconds: Double)
        /// gpsd went away: an outage begins.
        case disconnected(reason: String)
        /// The receiver has been silent for this long while gpsd lives.
        case stale(silentFor: Duration)
        /// Reports came again after a stale period.
        case receiving
        /// A line of `bytes` bytes from gpsd, longer than `limit`, was skipped; the lines after
        /// it are read.
        case overlongLine(bytes: Int, limit: Int)
        /// gpsd's own notice: an `ERROR`, a receiver activated or deactivated (a `DEVICE`
        /// repeated for a receiver already active, as when gpsd learns its driver, is not told).
        case notice(GPSDNotice)
    }

    /// The lines from gpsd that gave no fix, counted over every connection: what is not JSON,
    /// and each class of report but TPV (VERSION, DEVICES, WATCH, SKY, PPS, ERROR, DEVICE…).
    public struct LineCounts: Sendable, Hashable {
        public var notJSON = 0
        public var byClass: [String: Int] = [:]
        public init() {}
    }

    /// What ``LineCounts`` says so far (read it after ``join()`` for the whole run).
    public var lineCounts: LineCounts { lock.withLock { counts } }

    public let configuration: Configuration
    private let lock = PThreadMutex()
    private var stopped = false
    private var counts = LineCounts()
    private var continuation: AsyncStream<Event>.Continuation?
    private var thread: pthread_t?

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Starts the thread and returns its events. Call it once.
    public func start() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        let box = Unmanaged.passRetained(self)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, &attributes,
            { raw in
                let client = Unmanaged<GPSDClient>.fromOpaque(raw!).takeRetainedValue()
                client.runThread()
                return nil
            }, box.toOpaque())
        pthread_attr_destroy(&attributes)
        if rc != 0 {
            box.release()
            continuation.yield(.unreachable(reason: "cannot start the gpsd thread (error \(rc))", retryIn: .zero))
            continuation.finish()
        } else {
            thread = handle
        }
        return stream
    }

    /// Stops the thread: it closes the connection and finishes the stream.
    public func stop() {
        lock.withLock { stopped = true }
    }

    /// Waits for the thread to end (after ``stop()``).
    public func join() {
        guard let thread else { return }
        pthread_join(thread, nil)
        self.thread = nil
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    // MARK: - The thread

    private func runThread() {
        guard let continuation else { return }
        let clock = ContinuousClock()
        var backoff = configuration.initialBackoff
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !isStopped {
            guard let decoder = GPSDLineDecoder(), let data = cgps_create() else {
                continuation.yield(.unreachable(reason: "out of memory", retryIn: backoff))
                break
            }
            defer { cgps_destroy(data) }
            if cgps_open(configuration.host, configuration.port, data) != 0 {
                let reason = String(cString: cgps_errstr(errno))
                continuation.yield(.unreachable(reason: reason, retryIn: backoff))
                sleep(for: backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
                continue
            }
            backoff = configuration.initialBackoff
            _ = cgps_watch(data, configuration.device)
            continuation.yield(.connected(host: configuration.host, port: configuration.port))
            let fd = cgps_fd(data)
            var framer = GPSDLineFramer(limit: configuration.lineLimit)
            var coalescer = FixCoalescer()
            let connectedAt = clock.now
            var lastReport = clock.now
            var isStale = false
            var lostReason: String?
            // The devices told activated, so that a DEVICE repeated for one (gpsd sends another
            // when it learns the driver) is not told again until it is deactivated.
            var activated: Set<String> = []
            /// Reports the receiver stale once it has sent no report for `staleAfter`.
            func checkStale(at now: ContinuousClock.Instant) {
                if !isStale && now - lastReport >= configuration.staleAfter {
                    isStale = true
                    continuation.yield(.stale(silentFor: now - lastReport))
                }
            }
            func count(_ kind: String) { lock.withLock { counts.byClass[kind, default: 0] += 1 } }
            /// Takes one line from gpsd: every line goes to libgps's parser, and the report of a
            /// TPV to the coalescer; other lines (and a TPV libgps cannot read) keep a receiver
            /// stale.
            func take(_ output: GPSDLineFramer.Output) {
                let report: GPSDReport
                switch output {
                case .overlong(let n):
                    continuation.yield(.overlongLine(bytes: n, limit: configuration.lineLimit))
                    return
                case .line(let bytes):
                    switch decoder.read(bytes) {
                    case .report(let decoded):
                        report = decoded
                    case .notice(let notice):
                        count(notice.action == .gpsdError ? "ERROR" : "DEVICE")
                        if case .deviceActivated(let path, _) = notice {
                            guard activated.insert(path).inserted else { return }
                        } else if case .deviceDeactivated(let path) = notice {
                            activated.remove(path)
                        }
                        continuation.yield(.notice(notice))
                        return
                    case .other(let kind):
                        count(kind)
                        return
                    case .notJSON:
                        lock.withLock { counts.notJSON += 1 }
                        return
                    }
                }
                let received = clock.now
                lastReport = received
                if isStale {
                    isStale = false
                    continuation.yield(.receiving)
                }
                for output in coalescer.add(report, arrival: received - connectedAt) {
                    continuation.yield(Self.event(output, received: received))
                }
            }
            while !isStopped {
                let waitFor = coalescer.isHolding ? configuration.settle : .milliseconds(100)
                if Self.socketReadable(fd, within: waitFor) {
                    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    if n == 0 {
                        lostReason = "gpsd closed the connection"
                        break
                    }
                    if n < 0 {
                        let code = errno
                        if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                        lostReason = String(cString: strerror(code))
                        break
                    }
                    chunk.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[..<n]), take) }
                    checkStale(at: clock.now)
                } else {
                    let now = clock.now
                    if coalescer.isHolding && now - lastReport >= configuration.settle {
                        for output in coalescer.flush() { continuation.yield(Self.event(output, received: now)) }
                    }
                    checkStale(at: now)
                }
            }
            if let output = framer.finish() { take(output) }
            for output in coalescer.finish() { continuation.yield(Self.event(output, received: clock.now)) }
            if let lostReason {
                _ = cgps_close(data)
                continuation.yield(.disconnected(reason: lostReason))
                sleep(for: backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
            } else {
                _ = cgps_unwatch(data)
                _ = cgps_close(data)
            }
        }
        continuation.finish()
    }

    /// Whether `fd` has bytes to read within `d` (poll(2)); a hang-up or an error counts as
    /// ready, so that the read that follows reports it.
    private static func socketReadable(_ fd: Int32, within d: Duration) -> Bool {
        guard fd >= 0 else { return true }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(microseconds(d) / 1000)
        while true {
            let status = poll(&entry, 1, milliseconds)
            if status >= 0 { return status > 0 }
            if errno != EINTR { return true }
        }
    }

    /// Sleeps for `d`, waking early when stopped.
    private func sleep(for d: Duration) {
        var left = d
        while left > .zero && !isStopped {
            let step = min(left, .milliseconds(50))
            usleep(UInt32(Self.microseconds(step)))
            left -= step
        }
    }

    private static func event(_ output: FixCoalescer.Output, received: ContinuousClock.Instant) -> Event {
        switch output {
        case .fix(let r): .fix(r, received: received)
        case .noFix(let r): .noFix(r, received: received)
        case .implausibleTime(let r, let expected): .implausibleTime(r, expected: expected)
        case .timeJump(let seconds): .timeJump(seconds: seconds)
        }
    }

    private static func microseconds(_ d: Duration) -> Int {
        Int(d.components.seconds) * 1_000_000 + Int(d.components.attoseconds / 1_000_000_000_000)
    }

    /// The report's values, with NaN turned into nil, and DOPs of 0 too: libgps holds 0 until
    /// the first SKY of a session, and no receiver reports a DOP of 0.
    static func report(from r: inout cgps_report) -> GPSDReport {
        func value(_ d: Double) -> Double? { d.isFinite ? d : nil }
        func dop(_ d: Double) -> Double? { d.isFinite && d > 0 ? d : nil }
        let device = withUnsafeBytes(of: &r.device) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return GPSDReport(
            device: device, mode: Int(r.mode), status: Int(r.status),
            time: r.has_time
                ? Date(timeIntervalSince1970: Double(r.time_sec) + Double(r.time_nsec) / 1e9) : nil,
            latitude: value(r.latitude), longitude: value(r.longitude), altitudeHAE: value(r.alt_hae),
            altitudeMSL: value(r.alt_msl), eph: value(r.eph), epx: value(r.epx), epy: value(r.epy),
            epv: value(r.epv), speed: value(r.speed), eps: value(r.eps), track: value(r.track), epd: value(r.epd),
            satellitesUsed: r.satellites_used >= 0 ? Int(r.satellites_used) : nil, hdop: dop(r.hdop),
            vdop: dop(r.vdop), pdop: dop(r.pdop))
    }
}

/// A mutex (pthread), for the one flag the client shares with its thread.
final class PThreadMutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
