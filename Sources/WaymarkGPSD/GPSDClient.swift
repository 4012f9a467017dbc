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

/// A connection to gpsd whose rules run on an injected clock: when a report waiting for the
/// rest of its epoch goes out, when a silent receiver is reported, and when a lost connection
/// is tried again.
///
/// It has three parts, as swift-async-algorithms' time-based operators do:
/// - a pure ``GPSDConnectionMachine`` holds every rule: it takes what the connection reports and
///   the passing of time, and says what to report and when to connect;
/// - a ``GPSDTransport`` reads gpsd: by default libgps on one dedicated thread
///   (``GPSDTransport/libgps(_:)``), which owns the `gps_data_t` and makes every libgps call
///   (`gps_open`, `gps_stream`, `gps_unpack`, `gps_close`); it reads gpsd's socket itself,
///   cutting lines with a ``GPSDLineFramer``, and skips a line longer than
///   ``Configuration/lineLimit`` with a warning instead of losing the connection, as `gps_read`
///   would;
/// - the client carries out what the machine says, and sleeps on the clock until the machine's
///   next deadline. What it learns crosses to the rest of Waymark as Sendable ``Event``s on an
///   `AsyncStream`.
///
/// The rules:
/// - **One location per fix time.** Reports go through a ``FixCoalescer``; a report waiting for
///   the rest of its epoch is sent after ``Configuration/settle`` without further reports.
/// - **Reconnects.** When gpsd goes away (it closes the socket, or reading it fails), the
///   outage is reported and the connection tried again after 250 ms, doubling up to 10 s.
/// - **Staleness.** A receiver silent for ``Configuration/staleAfter`` while gpsd lives is
///   reported once, until reports come again.
/// - **gpsd's notices are data.** gpsd's `ERROR`s and its receivers activated or deactivated
///   are reported (``Event/notice(_:)``), and every line without a fix is counted
///   (``lineCounts``).
/// - **Shutdown.** ``stop()`` closes the connection and finishes the stream.
///
/// Give it the clock of whatever consumes its events (a ``LiveRecording``): arrival times are
/// measured on it, from ``start()``. Tests give both a manual clock and a scripted transport,
/// and drive outages, staleness and reconnection in virtual time.
public final class GPSDClient: Sendable {
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

    /// What the connection reports. Times of arrival are on the client's clock, from ``start()``.
    public enum Event: Sendable, Hashable {
        /// Connected to gpsd, and gpsd has answered the WATCH: reports from here on come to us.
        case connected(host: String, port: String)
        /// gpsd could not be reached: the reason, and the delay before the next attempt.
        case unreachable(reason: String, retryIn: Duration)
        /// A fix (one per fix time), and when it arrived.
        case fix(GPSDReport, received: Duration)
        /// A report without a fix (mode < 2).
        case noFix(GPSDReport, received: Duration)
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
    public var lineCounts: LineCounts { counts.withLock { $0 } }

    public let configuration: Configuration
    private let transport: any GPSDTransport
    private let clock: ErasedClock
    private let inputs: AsyncStream<Input>
    private let inputContinuation: AsyncStream<Input>.Continuation
    private let driver = Locked<Task<Void, Never>?>(nil)
    /// The machine's ``GPSDConnectionMachine/lineCounts``, as the client's task last saw them.
    private let counts = Locked(LineCounts())

    /// What the client's task takes, in order.
    private enum Input: Sendable {
        case transport(GPSDTransportEvent)
        /// The machine's deadline may have come.
        case time
        case stop
    }

    /// A client of gpsd at `configuration`'s host and port, through libgps, on the continuous
    /// clock.
    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, clock: ContinuousClock())
    }

    /// A client on `clock`, reading `transport` (by default libgps, to `configuration`'s host
    /// and port).
    public init<C: Clock>(configuration: Configuration, clock: C, transport: (any GPSDTransport)? = nil)
    where C.Duration == Duration {
        self.configuration = configuration
        self.clock = ErasedClock(clock)
        self.transport = transport ?? .libgps(configuration)
        (inputs, inputContinuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Starts connecting and returns the events. Call it once.
    public func start() -> AsyncStream<Event> {
        let (events, output) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let started = clock.now()
        let task = Task { await drive(output, from: started) }
        driver.withLock { $0 = task }
        return events
    }

    /// Stops: the connection is closed and the stream finishes.
    public func stop() {
        inputContinuation.yield(.stop)
    }

    /// Waits until the client has stopped (after ``stop()``): its connection is closed, and
    /// ``lineCounts`` counts every line the client took.
    public func join() async {
        await driver.withLock { $0 }?.value
    }

    /// Carries out what the machine says, until stopped.
    private func drive(_ output: AsyncStream<Event>.Continuation, from started: Duration) async {
        let inputContinuation = self.inputContinuation
        let clock = self.clock
        let counts = self.counts
        var machine = GPSDConnectionMachine(configuration: configuration)
        var timer: (task: Task<Void, Never>, deadline: Duration)?
        func now() -> Duration { clock.now() - started }
        func perform(_ actions: [GPSDConnectionMachine.Action]) {
            for action in actions {
                switch action {
                case .emit(let event): output.yield(event)
                case .connect: transport.connect()
                }
            }
        }
        transport.start { inputContinuation.yield(.transport($0)) }
        perform(machine.start(at: now()))
        loop: for await input in inputs {
            switch input {
            case .transport(let event):
                perform(machine.handle(event, at: now()))
                if event.isLineWithoutFix { counts.withLock { $0 = machine.lineCounts } }
            case .time:
                timer = nil
                perform(machine.timePassed(at: now()))
            case .stop:
                perform(machine.stop(at: now()))
                break loop
            }
            // Sleep on the clock until the machine's next deadline, if it moved.
            let deadline = machine.deadline
            if deadline != timer?.deadline {
                timer?.task.cancel()
                timer = deadline.map { deadline in
                    let task = Task {
                        do {
                            try await clock.sleep(until: started + deadline)
                            inputContinuation.yield(.time)
                        } catch {}
                    }
                    return (task, deadline)
                }
            }
        }
        timer?.task.cancel()
        transport.stop()
        inputContinuation.finish()
        output.finish()
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

/// A clock, as the client uses one: time since an origin of its own, and a sleep until such a
/// time. Made from any `Clock` whose durations are `Duration`s.
struct ErasedClock: Sendable {
    let now: @Sendable () -> Duration
    let sleep: @Sendable (_ until: Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    func sleep(until offset: Duration) async throws { try await sleep(offset) }
}

/// A value behind a pthread mutex (which ThreadSanitizer understands).
final class Locked<Value: Sendable>: @unchecked Sendable {
    // `value` is guarded by `lock`.
    private let lock = PThreadMutex()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try lock.withLock { try body(&value) } }
}

/// What a ``GPSDTransport`` reports about its connection to gpsd.
public enum GPSDTransportEvent: Sendable, Hashable {
    /// Connected, and gpsd answered the WATCH (or sent a report, which only a watch brings).
    case opened(host: String, port: String)
    /// A connection could not be made (or was lost before gpsd answered the WATCH).
    case failed(reason: String)
    /// A report of gpsd's (a TPV, carrying what the SKY before it said).
    case report(GPSDReport)
    /// A line longer than `limit` bytes was skipped.
    case overlongLine(bytes: Int, limit: Int)
    /// The connection was lost; the transport has closed it.
    case lost(reason: String)
    /// gpsd's own notice (an `ERROR`, a `DEVICE` activated or deactivated).
    case notice(GPSDNotice)
    /// A line that carries no fix, of this class (VERSION, DEVICES, WATCH, SKY, PPS, a `DEVICE`
    /// that says neither, a TPV libgps could not read; "" for an object without a class).
    case other(class: String)
    /// A line that is not a JSON object.
    case notJSON

    /// Whether the event is a line from gpsd that the client counts (``GPSDClient/LineCounts``).
    var isLineWithoutFix: Bool {
        switch self {
        case .notice, .other, .notJSON: true
        default: false
        }
    }
}

/// Where a ``GPSDClient`` reads gpsd from: it opens a connection when asked, and reports what
/// comes, in order, from any thread.
///
/// The default reads gpsd through libgps (``libgps(_:)``); a test gives a transport of its own
/// that says what the test wants, when it wants.
public protocol GPSDTransport: Sendable {
    /// Starts the transport: every later event goes to `deliver`, in order.
    func start(delivering deliver: @escaping @Sendable (GPSDTransportEvent) -> Void)
    /// Opens a connection and watches; answered by ``GPSDTransportEvent/opened(host:port:)`` or
    /// ``GPSDTransportEvent/failed(reason:)``.
    func connect()
    /// Ends everything: the connection is closed (after an unwatch) and nothing more is
    /// delivered. Returns once it is.
    func stop()
}

extension GPSDTransport where Self == LibgpsTransport {
    /// gpsd at `configuration`'s host and port, read through libgps on a thread of its own.
    public static func libgps(_ configuration: GPSDClient.Configuration) -> LibgpsTransport {
        LibgpsTransport(configuration: configuration)
    }
}

/// gpsd through libgps, on one dedicated thread that owns the `gps_data_t` and makes every
/// libgps call. The thread waits on gpsd's socket and on a pipe of commands (poll), never
/// spinning, and cuts lines itself (``GPSDLineFramer``).
public final class LibgpsTransport: GPSDTransport, @unchecked Sendable {
    // `commands`, `deliver` and `thread` are guarded by `lock`; the pipe is written from any
    // thread (write(2) is atomic); everything else belongs to the thread.
    private enum Command { case connect, stop }

    let configuration: GPSDClient.Configuration
    private let lock = PThreadMutex()
    private var commands: [Command] = []
    private var deliver: (@Sendable (GPSDTransportEvent) -> Void)?
    private var thread: pthread_t?
    private let wake: (read: Int32, write: Int32)

    init(configuration: GPSDClient.Configuration) {
        self.configuration = configuration
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wake = (fds[0], fds[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    public func start(delivering deliver: @escaping @Sendable (GPSDTransportEvent) -> Void) {
        lock.withLock { self.deliver = deliver }
        let box = Unmanaged.passRetained(self)
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { raw in
                let transport = Unmanaged<LibgpsTransport>.fromOpaque(raw!).takeRetainedValue()
                transport.runThread()
                return nil
            }, box.toOpaque())
        if rc != 0 {
            box.release()
            deliver(.failed(reason: "cannot start the gpsd thread (error \(rc))"))
        } else {
            lock.withLock { thread = handle }
        }
    }

    public func connect() { send(.connect) }

    public func stop() {
        send(.stop)
        guard
            let thread = lock.withLock({ () -> pthread_t? in
                defer { self.thread = nil }
                return self.thread
            })
        else { return }
        pthread_join(thread, nil)
    }

    private func send(_ command: Command) {
        lock.withLock { commands.append(command) }
        var b: UInt8 = 1
        _ = write(wake.write, &b, 1)
    }

    private func emit(_ event: GPSDTransportEvent) {
        lock.withLock { deliver }?(event)
    }

    /// The next command, waiting for one.
    private func nextCommand(wait: Bool) -> Command? {
        while true {
            if let command = lock.withLock({ commands.isEmpty ? nil : commands.removeFirst() }) { return command }
            guard wait else { return nil }
            var entry = pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, -1)
            drainWakePipe()
        }
    }

    private func drainWakePipe() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &bytes, bytes.count) > 0 {}
    }

    private func runThread() {
        while let command = nextCommand(wait: true) {
            switch command {
            case .stop: return
            case .connect: if !session() { return }
            }
        }
    }

    /// One connection, from opening to its loss (false: stopped meanwhile).
    private func session() -> Bool {
        guard let decoder = GPSDLineDecoder(), let data = cgps_create() else {
            emit(.failed(reason: "out of memory"))
            return true
        }
        defer { cgps_destroy(data) }
        if cgps_open(configuration.host, configuration.port, data) != 0 {
            emit(.failed(reason: String(cString: cgps_errstr(errno))))
            return true
        }
        _ = cgps_watch(data, configuration.device)
        let fd = cgps_fd(data)
        var framer = GPSDLineFramer(limit: configuration.lineLimit)
        var watching = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let limit = configuration.lineLimit
        let (host, port) = (configuration.host, configuration.port)
        /// Takes one line from gpsd: gpsd's answer to the WATCH (or a TPV's report, which only
        /// a watch brings) opens the connection; every line goes to libgps's parser
        /// (``GPSDLineDecoder/read(_:)``) and on as what it is: a TPV's report, gpsd's notice,
        /// another class, or a line that is not JSON.
        func take(_ output: GPSDLineFramer.Output) {
            switch output {
            case .overlong(let n): emit(.overlongLine(bytes: n, limit: limit))
            case .line(let bytes):
                let line = decoder.read(bytes)
                if !watching {
                    switch line {
                    case .report, .other("WATCH"):
                        watching = true
                        emit(.opened(host: host, port: port))
                    default: break
                    }
                }
                switch line {
                case .report(let report): emit(.report(report))
                case .notice(let notice): emit(.notice(notice))
                case .other(let kind): emit(.other(class: kind))
                case .notJSON: emit(.notJSON)
                }
            }
        }
        var lost: String?
        while lost == nil {
            var entries = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&entries, 2, -1) < 0 && errno != EINTR {
                lost = String(cString: strerror(errno))
                break
            }
            if entries[1].revents != 0 {
                drainWakePipe()
                while let command = nextCommand(wait: false) {
                    if command == .stop {
                        _ = cgps_unwatch(data)
                        _ = cgps_close(data)
                        return false
                    }
                }
            }
            guard entries[0].revents != 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 {
                lost = "gpsd closed the connection"
            } else if n < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                lost = String(cString: strerror(code))
            } else {
                chunk.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[..<n]), take) }
            }
        }
        if let output = framer.finish() { take(output) }
        _ = cgps_close(data)
        emit(watching ? .lost(reason: lost!) : .failed(reason: lost!))
        return true
    }
}

/// The rules of a connection to gpsd, as a pure state machine: what the transport reports and
/// the passing of time in, what to report and when to connect out. No socket, no clock: times
/// are offsets on the owner's clock, and ``deadline`` says when the machine next needs to hear
/// the time. It also counts gpsd's lines without a fix, over every connection
/// (``lineCounts``).
struct GPSDConnectionMachine {
    enum Action: Sendable, Hashable {
        case emit(GPSDClient.Event)
        /// Open a connection (the transport answers `opened` or `failed`).
        case connect
    }

    /// An open connection.
    struct Connection: Sendable {
        var openedAt: Duration
        var lastReport: Duration
        var isStale = false
        var coalescer = FixCoalescer()
    }

    enum State: Sendable {
        case idle
        case connecting
        /// Waiting to try again.
        case waiting(until: Duration)
        case connected(Connection)
        case stopped
    }

    let configuration: GPSDClient.Configuration
    private(set) var state = State.idle
    /// The delay before the next attempt after a failure.
    private var backoff: Duration
    /// Every line without a fix so far, over every connection.
    private(set) var lineCounts = GPSDClient.LineCounts()
    /// The receivers told activated on this connection, so that a DEVICE repeated for one (gpsd
    /// sends another when it learns the driver) is not told again until it is deactivated.
    private var activated: Set<String> = []

    init(configuration: GPSDClient.Configuration) {
        self.configuration = configuration
        backoff = configuration.initialBackoff
    }

    mutating func start(at now: Duration) -> [Action] {
        guard case .idle = state else { return [] }
        return connect()
    }

    /// A new connection: what the last one told is forgotten.
    private mutating func connect() -> [Action] {
        state = .connecting
        activated = []
        return [.connect]
    }

    mutating func handle(_ event: GPSDTransportEvent, at now: Duration) -> [Action] {
        switch event {
        case .notice(.error): lineCounts.byClass["ERROR", default: 0] += 1
        case .notice: lineCounts.byClass["DEVICE", default: 0] += 1
        case .other(let kind): lineCounts.byClass[kind, default: 0] += 1
        case .notJSON: lineCounts.notJSON += 1
        default: break
        }
        switch (state, event) {
        case (.connecting, .opened(let host, let port)):
            backoff = configuration.initialBackoff
            state = .connected(Connection(openedAt: now, lastReport: now))
            return [.emit(.connected(host: host, port: port))]
        case (.connecting, .failed(let reason)):
            return [.emit(.unreachable(reason: reason, retryIn: retry(at: now)))]
        case (.connected(var connection), .report(let report)):
            var actions: [Action] = []
            connection.lastReport = now
            if connection.isStale {
                connection.isStale = false
                actions.append(.emit(.receiving))
            }
            for output in connection.coalescer.add(report, arrival: now - connection.openedAt) {
                actions.append(.emit(Self.event(output, received: now)))
            }
            state = .connected(connection)
            return actions
        case (.connected, .overlongLine(let bytes, let limit)):
            return [.emit(.overlongLine(bytes: bytes, limit: limit))]
        case (.connecting, .notice(let notice)), (.connected, .notice(let notice)):
            // gpsd speaks on this connection, answered the WATCH or not (an ERROR may be its
            // answer).
            switch notice {
            case .deviceActivated(let path, _): guard activated.insert(path).inserted else { return [] }
            case .deviceDeactivated(let path): activated.remove(path)
            case .error: break
            }
            return [.emit(.notice(notice))]
        case (.connected(var connection), .lost(let reason)):
            var actions = connection.coalescer.finish().map { Action.emit(Self.event($0, received: now)) }
            actions.append(.emit(.disconnected(reason: reason)))
            _ = retry(at: now)
            return actions
        default:
            return []
        }
    }

    /// Waits `backoff` from `now` (doubling it for the next time); the delay.
    private mutating func retry(at now: Duration) -> Duration {
        let delay = backoff
        backoff = min(backoff * 2, configuration.maximumBackoff)
        state = .waiting(until: now + delay)
        return delay
    }

    /// What is due at `now`: a new attempt, a report whose epoch has settled, a silent receiver.
    mutating func timePassed(at now: Duration) -> [Action] {
        switch state {
        case .waiting(let until) where now >= until:
            return connect()
        case .connected(var connection):
            var actions: [Action] = []
            if connection.coalescer.isHolding && now - connection.lastReport >= configuration.settle {
                actions += connection.coalescer.flush().map { .emit(Self.event($0, received: now)) }
            }
            if !connection.isStale && now - connection.lastReport >= configuration.staleAfter {
                connection.isStale = true
                actions.append(.emit(.stale(silentFor: now - connection.lastReport)))
            }
            state = .connected(connection)
            return actions
        default:
            return []
        }
    }

    /// Stops: what waits for the rest of its epoch goes out, and nothing more happens.
    mutating func stop(at now: Duration) -> [Action] {
        defer { state = .stopped }
        guard case .connected(var connection) = state else { return [] }
        return connection.coalescer.finish().map { .emit(Self.event($0, received: now)) }
    }

    /// When the machine next needs to hear the time; nil when only the transport can move it.
    var deadline: Duration? {
        switch state {
        case .waiting(let until): return until
        case .connected(let connection):
            let settle = connection.coalescer.isHolding ? connection.lastReport + configuration.settle : nil
            let stale = connection.isStale ? nil : connection.lastReport + configuration.staleAfter
            return [settle, stale].compactMap { $0 }.min()
        default: return nil
        }
    }

    private static func event(_ output: FixCoalescer.Output, received: Duration) -> GPSDClient.Event {
        switch output {
        case .fix(let r): .fix(r, received: received)
        case .noFix(let r): .noFix(r, received: received)
        case .implausibleTime(let r, let expected): .implausibleTime(r, expected: expected)
        case .timeJump(let seconds): .timeJump(seconds: seconds)
        }
    }
}

/// A mutex (pthread), for what the client and the transport share with the transport's thread.
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
