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
public struct GPSDTraceFeed: GPSDServeFeed {
    private var source: StreamingReplaySource
    private let device: GPSDServedDevice
    /// The first fix's time less its offset: what times a point without a fix.
    private var base: Date

    public init(source: StreamingReplaySource, device: GPSDServedDevice) {
        self.source = source
        self.device = device
        base = device.activated
    }

    public mutating func next() throws -> (offset: Duration, epoch: GPSDEpoch)? {
        guard let event = try source.nextEvent() else { return nil }
        if case .fix(let l) = event.kind {
            base = l.timestamp.addingTimeInterval(-Self.seconds(event.offset))
        }
        let fallback = base.addingTimeInterval(Self.seconds(event.offset))
        return (event.offset, GPSDServeEncoding.epoch(event.kind, time: fallback, device: device))
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}

/// A gpsd for any number of clients, on one thread: `poll(2)` over nonblocking sockets, each
/// epoch encoded once and shared by every client.
///
/// - **Pacing.** The trace starts when the first client enables WATCH. At a rate, epoch `n`
///   goes out at its offset divided by the rate after that; at `max` (rate 0) a new epoch is
///   made as soon as a watching client has taken the last one and its socket has room: the
///   fastest reader sets the pace.
/// - **Slow clients.** The last ``Configuration/window`` epochs are kept; each client has a
///   cursor into them and writes only when its socket has room, never blocking the others. One
///   that falls further behind skips to the oldest epoch kept; the skipped epochs are counted.
///   A client that sends requests but never reads their replies is closed past
///   ``Configuration/replyLimit`` bytes.
/// - **The end.** Without a loop, when the trace ends and every client has what it is owed (or
///   ``Configuration/linger`` has passed), the server closes every connection and returns.
///   ``stop()`` ends it at once, from any thread.
public final class GPSDServer: @unchecked Sendable {
    // @unchecked: `stopPipe` is written by stop() from any thread (a write(2) is atomic); every
    // other member is touched only by the thread inside run().

    public struct Configuration: Sendable, Hashable {
        /// A numeric IPv4 or IPv6 address to listen on.
        public var address: String
        /// 0 lets the kernel pick one (see ``GPSDServer/port``).
        public var port: Int
        /// A factor of real time; 0 is as fast as the clients read.
        public var rate: Double
        /// Epochs kept for clients that lag.
        public var window: Int
        /// Bytes of replies a client may leave unread before it is closed.
        public var replyLimit: Int
        /// How long, after the trace ends, clients may take to read what they are owed.
        public var linger: Duration
        /// Bytes of each client's kernel send buffer (SO_SNDBUF).
        public var socketBuffer: Int

        public init(
            address: String = "127.0.0.1", port: Int = 2947, rate: Double = 1, window: Int = 4096,
            replyLimit: Int = 65_536, linger: Duration = .seconds(5), socketBuffer: Int = 65_536
        ) {
            self.socketBuffer = socketBuffer
            self.address = address
            self.port = port
            self.rate = rate
            self.window = window
            self.replyLimit = replyLimit
            self.linger = linger
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
    }

    /// What a run did.
    public struct Summary: Sendable, Hashable {
        public var epochs = 0
        public var clients = 0
        /// Epochs that lagging clients skipped, added up.
        public var skipped = 0
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
    private let stopPipe: (read: Int32, write: Int32)

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
        for p in fds { _ = fcntl(p, F_SETFL, fcntl(p, F_GETFL) | O_NONBLOCK) }
        listener = fd
        stopPipe = (fds[0], fds[1])
    }

    deinit {
        close(listener)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Ends ``run(feed:device:clock:onEvent:)`` soon, from any thread or a signal handler's queue.
    public func stop() {
        var b: UInt8 = 1
        _ = write(stopPipe.write, &b, 1)
    }

    /// Serves `feed` until it ends (and the clients have read it) or ``stop()``; blocks the
    /// calling thread.
    public func run<F: GPSDServeFeed, C: Clock>(
        feed: inout F, device: GPSDServedDevice, clock: C, onEvent: (Event) -> Void = { _ in }
    ) throws -> Summary where C.Duration == Duration {
        var loop = ServeLoop(configuration: configuration, device: device)
        defer { loop.closeAll(reason: "the server ends", onEvent) }
        var summary = Summary()
        var pending: (offset: Duration, epoch: GPSDEpoch)?
        var ended = false
        var start: C.Instant?
        var endedAt: C.Instant?
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
                            endedAt = clock.now
                            onEvent(.traceEnded(epochs: summary.epochs))
                            break
                        }
                    }
                    let due: Bool
                    if configuration.rate > 0 {
                        due = started.advanced(by: pending!.offset / configuration.rate) <= clock.now
                    } else {
                        due = loop.wantsMore
                    }
                    guard due else { break }
                    loop.append(pending!.epoch)
                    pending = nil
                    summary.epochs += 1
                    made += 1
                }
            }
            summary.skipped += loop.flushAll(onEvent)
            if ended {
                if loop.isDrained || clock.now >= endedAt!.advanced(by: configuration.linger) { return summary }
            }

            // Wait for the sockets, the stop pipe or the next epoch.
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            loop.addPollEntries(&fds)
            var timeout: Int32 = -1
            if ended {
                timeout = 100
            } else if let started = start {
                if configuration.rate > 0 {
                    let wait =
                        pending.map { clock.now.duration(to: started.advanced(by: $0.offset / configuration.rate)) }
                        ?? .zero
                    timeout = Int32(max(0, min(1000, Self.milliseconds(wait))))
                } else {
                    timeout = loop.wantsMore ? 0 : -1
                }
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ServerError(
                    address: configuration.address, port: port, message: "poll: \(String(cString: strerror(errno)))",
                    inUse: false)
            }
            if ready == 0 { continue }
            if fds[0].revents != 0 {
                summary.stopped = true
                return summary
            }
            // Clients' requests and writable sockets.
            for entry in fds[2...] where entry.revents != 0 {
                guard let id = loop.id(of: entry.fd) else { continue }
                if entry.revents & Int16(POLLOUT) != 0 { loop.unblock(id) }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let n = chunk.withUnsafeMutableBytes {
                        recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    if n == 0 {
                        loop.remove(id, reason: "disconnected", onEvent)
                        continue
                    }
                    if n < 0 {
                        let code = errno
                        if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                        loop.remove(id, reason: String(cString: strerror(code)), onEvent)
                        continue
                    }
                    let started = loop.received(id, chunk[0..<n], onEvent)
                    if started && start == nil {
                        start = clock.now
                        onEvent(.started)
                    }
                }
            }
            // New clients: VERSION first, as gpsd.
            if fds[1].revents != 0 {
                while true {
                    var peer = sockaddr_storage()
                    var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let fd = withUnsafeMutablePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            accept(listener, $0, &peerLength)
                        }
                    }
                    if fd < 0 { break }
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    // A fixed kernel buffer per client: a client that stops reading holds at most
                    // this much there, and then lags in the window, where it is counted.
                    var size = Int32(configuration.socketBuffer)
                    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                    let id = nextID
                    nextID += 1
                    summary.clients += 1
                    loop.add(fd: fd, id: id)
                    onEvent(.connected(client: id, peer: Self.describe(peer)))
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
        /// The bytes being written, and how many have gone.
        var current: [UInt8] = []
        var offset = 0
        /// The socket had no room at the last write.
        var blocked = false
        /// Epochs skipped because it lagged a whole window.
        var skipped = 0
    }

    let configuration: GPSDServer.Configuration
    let device: GPSDServedDevice
    private var clients: [Int: Client] = [:]
    private var byFD: [Int32: Int] = [:]
    /// Epochs `base..<head`, in a ring of ``GPSDServer/Configuration/window`` slots.
    private var ring: [GPSDEpoch?]
    private var base = 0
    private var head = 0

    init(configuration: GPSDServer.Configuration, device: GPSDServedDevice) {
        self.configuration = configuration
        self.device = device
        ring = Array(repeating: nil, count: max(1, configuration.window))
    }

    var context: GPSDServeSession.Context {
        GPSDServeSession.Context(device: device, last: head > 0 ? ring[(head - 1) % ring.count] : nil)
    }

    /// At `max`: a watching client has everything and room for more.
    var wantsMore: Bool {
        clients.values.contains { $0.session.policy.enable && $0.cursor == head && !$0.blocked && $0.current.isEmpty }
    }

    /// Every client has been sent all it is owed.
    var isDrained: Bool {
        clients.values.allSatisfy {
            $0.current.isEmpty && $0.replies.isEmpty && (!$0.session.policy.enable || $0.cursor >= head)
        }
    }

    func id(of fd: Int32) -> Int? { byFD[fd] }

    mutating func add(fd: Int32, id: Int) {
        var client = Client(fd: fd)
        client.replies = GPSDServeSession.version()
        clients[id] = client
        byFD[fd] = id
    }

    mutating func append(_ epoch: GPSDEpoch) {
        ring[head % ring.count] = epoch
        head += 1
        if head - base > ring.count { base = head - ring.count }
    }

    mutating func unblock(_ id: Int) { clients[id]?.blocked = false }

    /// Handles a client's bytes; whether it started watching.
    mutating func received(_ id: Int, _ bytes: ArraySlice<UInt8>, _ onEvent: (GPSDServer.Event) -> Void) -> Bool {
        guard var client = clients[id] else { return false }
        let output = client.session.received(bytes, context: context)
        client.replies += output.reply
        if output.startedWatching {
            client.cursor = head  // a client joins the live stream where it is
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

    func addPollEntries(_ fds: inout [pollfd]) {
        for client in clients.values {
            let wantsOut = client.blocked
            fds.append(pollfd(fd: client.fd, events: Int16(POLLIN) | (wantsOut ? Int16(POLLOUT) : 0), revents: 0))
        }
    }

    /// Writes what each client that is not blocked is owed; the epochs skipped, added up.
    mutating func flushAll(_ onEvent: (GPSDServer.Event) -> Void) -> Int {
        var skipped = 0
        for id in Array(clients.keys) {
            guard var client = clients[id] else { continue }
            var failure: String?
            if client.session.policy.enable && client.cursor < base {
                if client.skipped == 0 { onEvent(.lagging(client: id)) }
                client.skipped += base - client.cursor
                skipped += base - client.cursor
                client.cursor = base
                clients[id] = client
            }
            if client.blocked { continue }
            write: while true {
                if client.current.isEmpty {
                    client.offset = 0
                    if !client.replies.isEmpty {
                        swap(&client.current, &client.replies)
                    } else if client.session.policy.enable && client.cursor < head {
                        client.current = ring[client.cursor % ring.count]!.bytes(for: client.session.policy)
                        client.cursor += 1
                        continue write
                    } else {
                        break write
                    }
                }
                let n = client.current.withUnsafeBytes {
                    send(
                        client.fd, $0.baseAddress! + client.offset, $0.count - client.offset,
                        Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if n >= 0 {
                    client.offset += n
                    if client.offset == client.current.count {
                        client.current.removeAll(keepingCapacity: false)
                        client.offset = 0
                    }
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
            clients[id] = client
            if let failure { remove(id, reason: failure, onEvent) }
        }
        return skipped
    }
}
