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

/// Where the epochs a server sends come from, in time order.
public protocol GPSDServeFeed {
    /// The next epoch and when it comes (time since the first, on the trace's timeline); nil at
    /// the end.
    mutating func next() throws -> (offset: Duration, epoch: GPSDEpoch)?
}

/// A trace, laid out by ``StreamingReplaySource`` (its times, or an untimed speed, loops), as
/// gpsd's epochs for `device`.
///
/// Where the trace's track breaks (a new segment) or goes silent for longer than
/// ``NoFixFiller/gap``, the feed sends epochs without a fix (TPVs of mode 1, NMEA with no fix) at
/// the trace's own rate, as gpsd does for a receiver in a tunnel: a client's "no fix" path is
/// exercised, and `waymark record` ends its segment there as it does for a real receiver.
public struct GPSDTraceFeed: GPSDServeFeed {
    private var source: StreamingReplaySource
    private let device: GPSDServedDevice
    /// The first fix's time less its offset: what times a point without a fix.
    private var base: Date
    private var filler = NoFixFiller()
    /// Seconds added to every time of the trace (`serve --now`).
    public var timeShift: TimeInterval = 0
    /// An NMEA log's own sentences, sent to NMEA clients with each fix instead of sentences made
    /// from it; the epochs without a fix that the feed adds then send none, since the log's own
    /// come with the next fix.
    public var rawNMEA: GPSDRawNMEA?
    /// Whether NMEA clients get ``rawNMEA``'s sentences; when not (`serve --now`, whose moved
    /// times the log's sentences would contradict), they only give SKY its satellites.
    public var passesSentences = true
    /// The satellites the log's GSV and GSA name, for SKY (with ``rawNMEA``).
    private var sky = GPSDSkyView()
    /// Epochs without a fix still to send, then the event they precede.
    private var pending: [Duration] = []
    private var nextPending = 0
    private var held: SourceEvent?

    public init(source: StreamingReplaySource, device: GPSDServedDevice) {
        self.source = source
        self.device = device
        base = device.activated
    }

    public mutating func next() throws -> (offset: Duration, epoch: GPSDEpoch)? {
        if nextPending < pending.count {
            let offset = pending[nextPending]
            nextPending += 1
            let time = base.addingTimeInterval(Self.seconds(offset))
            return (
                offset,
                GPSDServeEncoding.epoch(
                    .noFix, time: time, device: device,
                    ownSentences: passesSentences ? rawNMEA.map { _ in [UInt8]() } : nil)
            )
        }
        let event: SourceEvent
        if let held {
            event = held
            self.held = nil
        } else {
            guard let next = try source.nextEvent() else { return nil }
            var isFix = false
            if case .fix = next.kind { isFix = true }
            pending = filler.fillers(before: next.offset, segment: next.segment, isFix: isFix)
            nextPending = 0
            if !pending.isEmpty {
                held = next
                return try self.next()
            }
            event = next
        }
        var kind = event.kind
        if case .fix(var l) = kind {
            l.timestamp = l.timestamp.addingTimeInterval(timeShift)
            kind = .fix(l)
            base = l.timestamp.addingTimeInterval(-Self.seconds(event.offset))
        }
        let fallback = base.addingTimeInterval(Self.seconds(event.offset))
        var own: [UInt8]?
        var satellites: [GPSDSkyView.Satellite]?
        if let rawNMEA {
            if case .fix = kind {
                let sentences = rawNMEA.sentences(forFix: event.index)
                own = passesSentences ? sentences : nil
                // The satellites as the log's GSV and GSA say them up to this fix.
                for line in sentences.split(separator: 10) { sky.take(line.last == 13 ? line.dropLast() : line) }
                // None reported is no SKY of its own, as gpsd reports none before a good GSV group.
                satellites = sky.satellites.isEmpty ? nil : sky.satellites
            } else {
                own = passesSentences ? [] : nil
            }
        }
        return (
            event.offset,
            GPSDServeEncoding.epoch(
                kind, time: fallback, device: device, ownSentences: own, satellites: satellites)
        )
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}

/// Where a served trace has no fix: the epochs without one that gpsd would send between two of
/// its events. A pure rule, apart from the feed that carries it out.
///
/// After a fix, an event of another segment (the file's track broke there) or one more than
/// ``gap`` later (the receiver said nothing) is preceded by epochs without a fix, one per
/// cadence (the interval between the last two fixes of a segment, when at most half of ``gap``;
/// 1 s until there are two),
/// from one cadence after the last fix to half a cadence before the event, for at most
/// ``longest``.
public struct NoFixFiller: Sendable {
    /// A silence longer than this is a loss of fix: `record --segment-gap`'s default, so that
    /// what serve sends as a gap, record ends a segment at.
    public var gap: Duration = .seconds(10)
    /// The most of a gap filled (longer gaps are left silent past it).
    public var longest: Duration = .seconds(3600)
    private var last: (offset: Duration, segment: Int)?
    private var cadence: Duration = .seconds(1)

    public init() {}

    /// The offsets of the epochs without a fix to send before an event at `offset` of
    /// `segment` (a fix, or the trace's own report without one).
    public mutating func fillers(before offset: Duration, segment: Int, isFix: Bool) -> [Duration] {
        defer {
            if isFix {
                if let last, last.segment == segment {
                    let interval = offset - last.offset
                    if interval >= .milliseconds(50) && interval <= gap / 2 { cadence = interval }
                }
                last = (offset, segment)
            } else if let previous = last {
                // The trace's own report without a fix says where it is: fill after it.
                last = (offset, previous.segment)
            }
        }
        guard let last, offset > last.offset else { return [] }
        guard segment != last.segment || offset - last.offset > gap else { return [] }
        var out: [Duration] = []
        var t = last.offset + cadence
        let end = last.offset + longest
        while t + cadence / 2 <= offset && t <= end {
            out.append(t)
            t += cadence
        }
        return out
    }
}

/// A gpsd for any number of clients, on one thread: `poll(2)` over nonblocking sockets, each
/// epoch encoded once and shared by every client.
///
/// - **Pacing.** The trace starts when the first client enables WATCH. Then ``Pacing`` says
///   when each epoch goes out: at its offset divided by a rate, as soon as a watching client has
///   taken the last one and its socket has room (the fastest reader sets the pace), or when a
///   controller lets it out with ``release(_:)``.
/// - **Slow clients.** The epochs from the slowest watching client's next one to the newest are
///   kept, at most ``Configuration/window`` of them; each client has a cursor into them and
///   writes only when its socket has room, never blocking the others. One that falls further
///   behind skips to the oldest epoch kept; the skipped epochs are counted. Memory follows the
///   slowest client's lag: with every client up to date, no epoch is kept but the last (for
///   POLL). A client that sends requests but never reads their replies is closed past
///   ``Configuration/replyLimit`` bytes.
/// - **A network service.** At most ``Configuration/maxClients`` clients are served, fewer when
///   the descriptor limit (`ulimit -n`) leaves room for fewer; one more is accepted and closed at
///   once. Idle clients (``Configuration/idleTimeout``) are closed. When no descriptor is left
///   for a new connection, the listener is not polled until a client leaves (or a second has
///   passed): the server never spins. Client events beyond ``Configuration/clientEventLimit``
///   a second are counted and reported as one summary per second, so that a storm of
///   connections does not become a storm of log lines.
/// - **The end.** Without a loop, when the trace ends and every client has what it is owed (or
///   ``Configuration/linger`` has passed), the server closes every connection and returns.
///   ``stop()`` ends it at once, from any thread.
public final class GPSDServer: @unchecked Sendable {
    // @unchecked: `control` is guarded by its own mutex, and `wakePipe` is written by stop() and
    // release(_:) from any thread (a write(2) is atomic); every other member is touched only by
    // the thread inside run().

    /// When the epochs of the trace go out, once a client watches.
    public enum Pacing: Sendable, Hashable {
        /// Epoch `n` goes out at its offset divided by this factor of real time after the start
        /// (1 is real time).
        case rate(Double)
        /// As fast as the fastest watching client reads.
        case fastestReader
        /// Only as many epochs as ``GPSDServer/release(_:)`` has let out, each as soon as it is:
        /// a controller steps the trace, so that what a client receives does not depend on how
        /// fast anything runs (tests of gpsd clients).
        case stepped
    }

    public struct Configuration: Sendable, Hashable {
        /// A numeric IPv4 or IPv6 address to listen on.
        public var address: String
        /// 0 lets the kernel pick one (see ``GPSDServer/port``).
        public var port: Int
        public var pacing: Pacing
        /// Epochs kept for clients that lag.
        public var window: Int
        /// Bytes of replies a client may leave unread before it is closed.
        public var replyLimit: Int
        /// How long, after the trace ends, clients may take to read what they are owed.
        public var linger: Duration
        /// Bytes of each client's kernel send buffer (SO_SNDBUF).
        public var socketBuffer: Int
        /// The most clients served at once (gpsd's default is 64); fewer when the descriptor
        /// limit leaves room for fewer.
        public var maxClients: Int
        /// A client that is not watching and has sent no request for this long, or that watches
        /// and has read nothing for this long, is closed; nil never closes one.
        public var idleTimeout: Duration?
        /// Client events (connections, watches, lags, closes, rejections) reported one by one in
        /// a second; the rest are counted and summarised at the end of the second.
        public var clientEventLimit: Int

        public init(
            address: String = "127.0.0.1", port: Int = 2947, pacing: Pacing = .rate(1), window: Int = 4096,
            replyLimit: Int = 65_536, linger: Duration = .seconds(5), socketBuffer: Int = 65_536,
            maxClients: Int = 64, idleTimeout: Duration? = .seconds(60), clientEventLimit: Int = 20
        ) {
            self.address = address
            self.port = port
            self.pacing = pacing
            self.window = window
            self.replyLimit = replyLimit
            self.linger = linger
            self.socketBuffer = socketBuffer
            self.maxClients = maxClients
            self.idleTimeout = idleTimeout
            self.clientEventLimit = clientEventLimit
        }
    }

    /// What happens, for a log; reported on the server's thread.
    public enum Event: Sendable, Hashable {
        case connected(client: Int, peer: String)
        case watching(client: Int, policy: GPSDWatchPolicy)
        case started
        /// The client fell a whole window behind and skips epochs from now on (once per client).
        case lagging(client: Int)
        /// The connection ended; `skipped` epochs the client missed for reading too slowly.
        case closed(client: Int, reason: String, skipped: Int)
        case traceEnded(epochs: Int)
        /// A connection turned away at once: `clients` are served, the most there may be.
        case rejected(peer: String, clients: Int)
        /// At the start: the descriptor limit (`descriptors`) leaves room for only `clients`
        /// clients, fewer than ``Configuration/maxClients``.
        case clientLimit(clients: Int, descriptors: Int)
        /// No descriptor was left to accept a connection (EMFILE, ENFILE) while `clients` were
        /// served: the listener rests until a client leaves, or a second has passed.
        case descriptorsExhausted(clients: Int)
        /// Client events past ``Configuration/clientEventLimit`` in `over`, counted instead of
        /// reported one by one.
        case clientEventsSummarised(ClientEventCounts, over: Duration)
    }

    /// Client events counted instead of reported.
    public struct ClientEventCounts: Sendable, Hashable {
        public var connected = 0
        public var watching = 0
        public var lagging = 0
        public var closed = 0
        public var rejected = 0

        public init() {}

        public var total: Int { connected + watching + lagging + closed + rejected }
    }

    /// What a run did.
    public struct Summary: Sendable, Hashable {
        public var epochs = 0
        public var clients = 0
        /// Epochs that lagging clients skipped, added up.
        public var skipped = 0
        /// Connections turned away because the most clients were served.
        public var rejected = 0
        /// Whether ``GPSDServer/stop()`` ended it (else the trace did).
        public var stopped = false
    }

    /// An error of the server's sockets.
    public struct ServerError: Error, Sendable, Hashable, CustomStringConvertible {
        public var address: String
        public var port: Int
        public var message: String
        /// The port is taken (EADDRINUSE).
        public var inUse: Bool
        public var description: String { "cannot listen on \(address):\(port): \(message)" }
    }

    public let configuration: Configuration
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    /// Wakes the server's poll: written by ``stop()`` and ``release(_:)``.
    private let wakePipe: (read: Int32, write: Int32)
    private let control = Control()

    /// What other threads tell the server, guarded by a pthread mutex (which ThreadSanitizer
    /// understands).
    private final class Control: @unchecked Sendable {
        private let lock = PThreadMutex()
        private var stopped = false
        private var released = 0
        func stop() { lock.withLock { stopped = true } }
        func release(_ n: Int) { lock.withLock { released = released > Int.max - n ? Int.max : released + n } }
        var isStopped: Bool { lock.withLock { stopped } }
        var releasedEpochs: Int { lock.withLock { released } }
    }

    /// Binds and listens (so that the port is taken, or the error known, before ``run(feed:device:clock:onEvent:)``).
    ///
    /// - Throws: ``ServerError`` when the address is not numeric or the socket cannot listen.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        func failure(_ what: String, _ code: Int32 = errno) -> ServerError {
            ServerError(
                address: configuration.address, port: configuration.port,
                message: "\(what): \(String(cString: strerror(code)))", inUse: code == EADDRINUSE)
        }
        var storage = sockaddr_storage()
        var length: socklen_t
        var family: Int32
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, configuration.address, &v4) == 1 {
            family = AF_INET
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(truncatingIfNeeded: configuration.port).bigEndian)
            a.sin_addr = v4
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: a, as: sockaddr_in.self) }
        } else if inet_pton(AF_INET6, configuration.address, &v6) == 1 {
            family = AF_INET6
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(truncatingIfNeeded: configuration.port).bigEndian)
            a.sin6_addr = v6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: a, as: sockaddr_in6.self) }
        } else {
            throw ServerError(
                address: configuration.address, port: configuration.port,
                message: "not a numeric IPv4 or IPv6 address (such as 127.0.0.1, 0.0.0.0 or ::1)", inUse: false)
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw failure("bind", code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        port = withUnsafeBytes(of: &actual) { raw in
            family == AF_INET
                ? Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
                : Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(fd)
            throw failure("pipe")
        }
        for p in fds {
            _ = fcntl(p, F_SETFL, fcntl(p, F_GETFL) | O_NONBLOCK)
            _ = fcntl(p, F_SETFD, FD_CLOEXEC)
        }
        listener = fd
        wakePipe = (fds[0], fds[1])
    }

    deinit {
        close(listener)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// Ends ``run(feed:device:clock:onEvent:)`` soon, from any thread or a signal handler's queue.
    public func stop() {
        control.stop()
        wake()
    }

    /// With ``Pacing/stepped``: lets `epochs` more epochs of the trace out (from any thread).
    /// Epochs let out before the trace starts go out once it does.
    public func release(_ epochs: Int) {
        guard epochs > 0 else { return }
        control.release(epochs)
        wake()
    }

    private func wake() {
        var b: UInt8 = 1
        _ = write(wakePipe.write, &b, 1)
    }

    /// Serves `feed` until it ends (and the clients have read it) or ``stop()``; blocks the
    /// calling thread. `clock` times the pacing, idle clients and the summaries of client events.
    public func run<F: GPSDServeFeed, C: Clock>(
        feed: inout F, device: GPSDServedDevice, clock: C, onEvent: (Event) -> Void = { _ in }
    ) throws -> Summary where C.Duration == Duration {
        let origin = clock.now
        func now() -> Duration { origin.duration(to: clock.now) }
        var throttle = ClientEventThrottle(limit: configuration.clientEventLimit, interval: .seconds(1))
        func report(_ event: Event) {
            if let kind = ClientEventThrottle.Kind(event), !throttle.admit(kind, at: now()) { return }
            onEvent(event)
        }
        func reportSummary() {
            if let (counts, over) = throttle.summary(at: now()) {
                onEvent(.clientEventsSummarised(counts, over: over))
            }
        }
        var loop = ServeLoop(configuration: configuration, device: device)
        defer {
            loop.closeAll(reason: "the server ends", report)
            if let (counts, over) = throttle.remaining() { onEvent(.clientEventsSummarised(counts, over: over)) }
        }
        let capacity = Self.clientCapacity(configuration.maxClients)
        if let descriptors = capacity.descriptors, capacity.clients < configuration.maxClients {
            onEvent(.clientLimit(clients: capacity.clients, descriptors: descriptors))
        }
        var summary = Summary()
        var pending: (offset: Duration, epoch: GPSDEpoch)?
        var ended = false
        var start: Duration?
        var endedAt: Duration?
        /// While descriptors are out: when the listener is tried again, and how many clients
        /// were served then (one leaving wakes it sooner).
        var resting: (until: Duration, clients: Int)?
        var fds: [pollfd] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var nextID = 1

        while true {
            // Epochs that are due.
            if let started = start, !ended {
                var made = 0
                while made < 256 {
                    if pending == nil {
                        pending = try feed.next()
                        if pending == nil {
                            ended = true
                            endedAt = now()
                            onEvent(.traceEnded(epochs: summary.epochs))
                            break
                        }
                    }
                    let due: Bool
                    switch configuration.pacing {
                    case .rate(let factor): due = started + pending!.offset / factor <= now()
                    case .fastestReader: due = loop.wantsMore
                    case .stepped: due = summary.epochs < control.releasedEpochs
                    }
                    guard due else { break }
                    loop.append(pending!.epoch)
                    pending = nil
                    summary.epochs += 1
                    made += 1
                }
            }
            summary.skipped += loop.flushAll(at: now(), report)
            loop.keepOnlyWhatIsOwed()
            if ended {
                if loop.isDrained || now() >= endedAt! + configuration.linger { return summary }
            }
            if let idle = configuration.idleTimeout { loop.closeIdle(at: now(), after: idle, report) }
            reportSummary()
            if let rest = resting, now() >= rest.until || loop.count < rest.clients { resting = nil }

            // Wait for the sockets, the wake pipe, the next epoch or the next deadline.
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: resting == nil ? listener : -1, events: Int16(POLLIN), revents: 0))
            loop.addPollEntries(&fds)
            var deadlines: [Duration] = []
            if ended { deadlines.append(now() + .milliseconds(100)) }
            if let started = start, !ended {
                switch configuration.pacing {
                case .rate(let factor):
                    deadlines.append(pending.map { started + $0.offset / factor } ?? now())
                case .fastestReader:
                    if loop.wantsMore { deadlines.append(now()) }
                case .stepped:
                    if summary.epochs < control.releasedEpochs { deadlines.append(now()) }
                }
            }
            if let idle = configuration.idleTimeout, let next = loop.nextIdleDeadline(after: idle) {
                deadlines.append(next)
            }
            if let next = throttle.deadline { deadlines.append(next) }
            if let rest = resting { deadlines.append(rest.until) }
            var timeout: Int32 = -1
            if let first = deadlines.min() {
                timeout = Int32(max(0, min(1000, Self.milliseconds(first - now()))))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ServerError(
                    address: configuration.address, port: port, message: "poll: \(String(cString: strerror(errno)))",
                    inUse: false)
            }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.read, &drain, drain.count) > 0 {}
            }
            if control.isStopped {
                summary.stopped = true
                return summary
            }
            if ready == 0 { continue }
            // Clients' requests and writable sockets.
            for entry in fds[2...] where entry.revents != 0 {
                guard let id = loop.id(of: entry.fd) else { continue }
                if entry.revents & Int16(POLLOUT) != 0 { loop.unblock(id) }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let n = chunk.withUnsafeMutableBytes {
                        recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    if n == 0 {
                        loop.remove(id, reason: "disconnected", report)
                        continue
                    }
                    if n < 0 {
                        let code = errno
                        if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                        loop.remove(id, reason: String(cString: strerror(code)), report)
                        continue
                    }
                    let started = loop.received(id, chunk[0..<n], at: now(), report)
                    if started && start == nil {
                        start = now()
                        onEvent(.started)
                    }
                }
            }
            // New clients: VERSION first, as gpsd.
            if fds[1].revents != 0 {
                accepting: while true {
                    var peer = sockaddr_storage()
                    var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let fd = withUnsafeMutablePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            accept(listener, $0, &peerLength)
                        }
                    }
                    if fd < 0 {
                        switch errno {
                        case EINTR, ECONNABORTED, EPROTO: continue accepting
                        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                            resting = (now() + .seconds(1), loop.count)
                            onEvent(.descriptorsExhausted(clients: loop.count))
                        default: break
                        }
                        break accepting
                    }
                    if loop.count >= capacity.clients {
                        close(fd)
                        summary.rejected += 1
                        report(.rejected(peer: Self.describe(peer), clients: loop.count))
                        continue
                    }
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    // A fixed kernel buffer per client: a client that stops reading holds at most
                    // this much there, and then lags in the window, where it is counted.
                    var size = Int32(configuration.socketBuffer)
                    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                    let id = nextID
                    nextID += 1
                    summary.clients += 1
                    loop.add(fd: fd, id: id, at: now())
                    report(.connected(client: id, peer: Self.describe(peer)))
                }
            }
        }
    }

    /// ``run(feed:device:clock:onEvent:)`` on the continuous clock.
    public func run<F: GPSDServeFeed>(
        feed: inout F, device: GPSDServedDevice, onEvent: (Event) -> Void = { _ in }
    ) throws -> Summary {
        try run(feed: &feed, device: device, clock: ContinuousClock(), onEvent: onEvent)
    }

    /// Descriptors kept free beside the clients': one to accept a connection and turn it away,
    /// and a few for what the process opens meanwhile.
    static let spareDescriptors = 4

    /// How many clients the descriptor limit leaves room for, at most `wanted`, and the limit
    /// (nil when there is none).
    static func clientCapacity(_ wanted: Int) -> (clients: Int, descriptors: Int?) {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int32.max)
        else { return (max(1, wanted), nil) }
        let descriptors = Int(limit.rlim_cur)
        let room = descriptors - openDescriptors(below: descriptors) - spareDescriptors
        return (max(1, min(wanted, room)), descriptors)
    }

    /// How many descriptors below `limit` are open (`fcntl(F_GETFD)` on each).
    static func openDescriptors(below limit: Int) -> Int {
        var open = 0
        for fd in 0..<Int32(min(limit, 65_536)) where fcntl(fd, F_GETFD) != -1 { open += 1 }
        return open
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        let (s, a) = d.components
        return s * 1000 + (a + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    private static func describe(_ peer: sockaddr_storage) -> String {
        var peer = peer
        var text = [CChar](repeating: 0, count: 64)
        return withUnsafeBytes(of: &peer) { raw -> String in
            if Int32(raw.load(as: sockaddr.self).sa_family) == AF_INET {
                var a = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &a.sin_addr, &text, socklen_t(text.count))
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    + ":\(UInt16(bigEndian: a.sin_port))"
            }
            var a = raw.load(as: sockaddr_in6.self)
            inet_ntop(AF_INET6, &a.sin6_addr, &text, socklen_t(text.count))
            return "["
                + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                + "]:\(UInt16(bigEndian: a.sin6_port))"
        }
    }
}

/// Which client events a server reports one by one and which it counts: at most `limit` in an
/// interval, then a count of the rest at the interval's end. A pure state machine on offsets
/// from any fixed instant.
struct ClientEventThrottle {
    enum Kind {
        case connected, watching, lagging, closed, rejected

        init?(_ event: GPSDServer.Event) {
            switch event {
            case .connected: self = .connected
            case .watching: self = .watching
            case .lagging: self = .lagging
            case .closed: self = .closed
            case .rejected: self = .rejected
            default: return nil
            }
        }
    }

    let limit: Int
    let interval: Duration
    private var intervalStart: Duration?
    private var reported = 0
    private var held = GPSDServer.ClientEventCounts()

    init(limit: Int, interval: Duration) {
        self.limit = max(0, limit)
        self.interval = interval
    }

    /// Whether an event of `kind` at `now` is reported; if not, it is counted. An interval
    /// starts at the first event after the last one ended.
    mutating func admit(_ kind: Kind, at now: Duration) -> Bool {
        if let started = intervalStart, now >= started + interval, held.total == 0 { intervalStart = nil }
        if intervalStart == nil {
            intervalStart = now
            reported = 0
        }
        if reported < limit {
            reported += 1
            return true
        }
        switch kind {
        case .connected: held.connected += 1
        case .watching: held.watching += 1
        case .lagging: held.lagging += 1
        case .closed: held.closed += 1
        case .rejected: held.rejected += 1
        }
        return false
    }

    /// When the events counted so far are due to be summarised; nil when none are.
    var deadline: Duration? { held.total > 0 ? intervalStart.map { $0 + interval } : nil }

    /// The events counted in an interval that has ended by `now`, and its length; a new
    /// interval starts.
    mutating func summary(at now: Duration) -> (GPSDServer.ClientEventCounts, Duration)? {
        guard let due = deadline, now >= due else { return nil }
        let counts = held
        held = GPSDServer.ClientEventCounts()
        intervalStart = now
        reported = 0
        return (counts, interval)
    }

    /// Whatever is counted, at the end of a run.
    mutating func remaining() -> (GPSDServer.ClientEventCounts, Duration)? {
        guard held.total > 0 else { return nil }
        defer { held = GPSDServer.ClientEventCounts() }
        return (held, interval)
    }
}

/// The epochs kept for the clients: every epoch from the slowest watching client's next one to
/// the newest, in sequence (epoch `n` is the `n`-th made). It shrinks as the slowest client
/// reads, so its memory follows that client's lag.
struct EpochQueue {
    private var storage: [GPSDEpoch] = []
    /// The index in `storage` of epoch ``base``.
    private var first = 0
    /// The oldest epoch kept.
    private(set) var base = 0
    /// The newest epoch made (for POLL), kept when no client needs it.
    private(set) var last: GPSDEpoch?

    /// One past the newest epoch made.
    var head: Int { base + storage.count - first }
    var count: Int { storage.count - first }

    mutating func append(_ epoch: GPSDEpoch) {
        storage.append(epoch)
        last = epoch
    }

    subscript(sequence: Int) -> GPSDEpoch { storage[first + sequence - base] }

    /// Forgets the epochs before `sequence`. The storage is compacted (to a buffer of its
    /// size) once half of it is forgotten, so that forgetting costs O(1) per epoch.
    mutating func forget(before sequence: Int) {
        let n = min(sequence, head) - base
        guard n > 0 else { return }
        first += n
        base += n
        if first >= 64 && first * 2 >= storage.count {
            storage = Array(storage[first...])
            first = 0
        }
    }
}

/// The server's clients and the epochs kept for them; only the thread inside ``GPSDServer/run``
/// touches it.
private struct ServeLoop {
    struct Client {
        var fd: Int32
        var session = GPSDServeSession()
        /// The next epoch to send.
        var cursor = 0
        /// Replies waiting to go out, after the bytes in flight.
        var replies: [UInt8] = []
        /// The bytes being written (a slice of an epoch, or replies).
        var current: ArraySlice<UInt8> = []
        /// The socket had no room at the last write.
        var blocked = false
        /// Epochs skipped because it lagged a whole window.
        var skipped = 0
        /// When it last sent bytes, and since when its socket has been full (while it was owed
        /// bytes): on the server's clock, from its start.
        var lastHeard: Duration
        var fullSince: Duration?

        var isWatching: Bool { session.policy.enable }
    }

    let configuration: GPSDServer.Configuration
    let device: GPSDServedDevice
    private var clients: [Int: Client] = [:]
    private var byFD: [Int32: Int] = [:]
    private var epochs = EpochQueue()

    init(configuration: GPSDServer.Configuration, device: GPSDServedDevice) {
        self.configuration = configuration
        self.device = device
    }

    var count: Int { clients.count }

    var context: GPSDServeSession.Context { GPSDServeSession.Context(device: device, last: epochs.last) }

    /// At `max`: a watching client has everything and room for more.
    var wantsMore: Bool {
        clients.values.contains { $0.isWatching && $0.cursor == epochs.head && !$0.blocked && $0.current.isEmpty }
    }

    /// Every client has been sent all it is owed.
    var isDrained: Bool {
        clients.values.allSatisfy {
            $0.current.isEmpty && $0.replies.isEmpty && (!$0.isWatching || $0.cursor >= epochs.head)
        }
    }

    func id(of fd: Int32) -> Int? { byFD[fd] }

    mutating func add(fd: Int32, id: Int, at now: Duration) {
        var client = Client(fd: fd, lastHeard: now)
        client.replies = GPSDServeSession.version()
        clients[id] = client
        byFD[fd] = id
    }

    /// A new epoch; beyond the window, the oldest kept is forgotten (clients that still need it
    /// skip ahead at the next flush, where they are counted).
    mutating func append(_ epoch: GPSDEpoch) {
        epochs.append(epoch)
        if epochs.count > max(1, configuration.window) {
            epochs.forget(before: epochs.head - max(1, configuration.window))
        }
    }

    /// Forgets the epochs every watching client has been sent.
    mutating func keepOnlyWhatIsOwed() {
        var oldest = epochs.head
        for client in clients.values where client.isWatching { oldest = min(oldest, client.cursor) }
        epochs.forget(before: oldest)
    }

    mutating func unblock(_ id: Int) { clients[id]?.blocked = false }

    /// Handles a client's bytes; whether it started watching.
    mutating func received(
        _ id: Int, _ bytes: ArraySlice<UInt8>, at now: Duration, _ onEvent: (GPSDServer.Event) -> Void
    ) -> Bool {
        guard var client = clients[id] else { return false }
        client.lastHeard = now
        let output = client.session.received(bytes, context: context)
        client.replies += output.reply
        if output.startedWatching {
            client.cursor = epochs.head  // a client joins the live stream where it is
            onEvent(.watching(client: id, policy: client.session.policy))
        }
        clients[id] = client
        if output.close {
            remove(id, reason: "a request longer than \(GPSDServeSession.requestLimit) bytes", onEvent)
        } else if client.replies.count > configuration.replyLimit {
            remove(id, reason: "more than \(configuration.replyLimit) bytes of replies unread", onEvent)
        }
        return output.startedWatching
    }

    mutating func remove(_ id: Int, reason: String, _ onEvent: (GPSDServer.Event) -> Void) {
        guard let client = clients.removeValue(forKey: id) else { return }
        byFD[client.fd] = nil
        close(client.fd)
        onEvent(.closed(client: id, reason: reason, skipped: client.skipped))
    }

    mutating func closeAll(reason: String, _ onEvent: (GPSDServer.Event) -> Void) {
        for id in clients.keys.sorted() { remove(id, reason: reason, onEvent) }
    }

    /// The idle deadline of `client`: when it has sent nothing for `idle` while not watching,
    /// or read nothing for `idle` while watching.
    private static func idleDeadline(_ client: Client, after idle: Duration) -> Duration? {
        if client.isWatching { return client.fullSince.map { $0 + idle } }
        return client.lastHeard + idle
    }

    /// The earliest idle deadline of a client.
    func nextIdleDeadline(after idle: Duration) -> Duration? {
        clients.values.compactMap { Self.idleDeadline($0, after: idle) }.min()
    }

    /// Closes the clients idle at `now`.
    mutating func closeIdle(at now: Duration, after idle: Duration, _ onEvent: (GPSDServer.Event) -> Void) {
        let text = DurationText.format(idle)
        for (id, client) in clients {
            guard let deadline = Self.idleDeadline(client, after: idle), now >= deadline else { continue }
            remove(
                id, reason: client.isWatching ? "read nothing for \(text)" : "idle: no request for \(text)", onEvent)
        }
    }

    func addPollEntries(_ fds: inout [pollfd]) {
        for client in clients.values {
            let wantsOut = client.blocked
            fds.append(pollfd(fd: client.fd, events: Int16(POLLIN) | (wantsOut ? Int16(POLLOUT) : 0), revents: 0))
        }
    }

    /// Writes what each client that is not blocked is owed; the epochs skipped, added up. A
    /// client whose socket stays full is noted (`fullSince`) until a write goes through.
    mutating func flushAll(at now: Duration, _ onEvent: (GPSDServer.Event) -> Void) -> Int {
        var skipped = 0
        for id in Array(clients.keys) {
            guard var client = clients[id] else { continue }
            var failure: String?
            if client.isWatching && client.cursor < epochs.base {
                if client.skipped == 0 { onEvent(.lagging(client: id)) }
                client.skipped += epochs.base - client.cursor
                skipped += epochs.base - client.cursor
                client.cursor = epochs.base
                clients[id] = client
            }
            if client.blocked { continue }
            var wrote = false
            write: while true {
                if client.current.isEmpty {
                    if !client.replies.isEmpty {
                        client.current = client.replies[...]
                        client.replies = []
                    } else if client.isWatching && client.cursor < epochs.head {
                        client.current = epochs[client.cursor].bytes(for: client.session.policy)
                        client.cursor += 1
                        continue write
                    } else {
                        break write
                    }
                }
                let n = client.current.withUnsafeBytes {
                    send(client.fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if n >= 0 {
                    wrote = wrote || n > 0
                    client.current = client.current.dropFirst(n)
                    if client.current.isEmpty { client.current = [] }
                } else {
                    let code = errno
                    if code == EINTR { continue }
                    if code == EAGAIN || code == EWOULDBLOCK {
                        client.blocked = true
                    } else {
                        failure = String(cString: strerror(code))
                    }
                    break write
                }
            }
            if wrote || (!client.blocked && client.current.isEmpty) {
                client.fullSince = nil
            } else if client.blocked && client.fullSince == nil {
                client.fullSince = now
            }
            clients[id] = client
            if let failure { remove(id, reason: failure, onEvent) }
        }
        return skipped
    }
}
