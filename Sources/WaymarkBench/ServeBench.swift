// waymark-bench serve: `waymark serve` holding many clients at 10 Hz on loopback. It prints the
// server's CPU (% of one core, from /proc/PID/stat) while N clients watch JSON and read
// everything, and the TPVs each client received per second, against a real gpsd serving the
// same fixes to the same number of clients in the same run (fed the same NMEA log by
// scripts/nmea-feeder.py; the feeder's CPU is not counted, as waymark's trace reading is).
//
// The clients live in this process: nonblocking sockets on one poll(2) loop, so that no
// client process competes with the server for the machine's cores.

import Foundation
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

enum ServeBench {
    struct Result {
        /// The server's CPU seconds (user + system) over the window.
        var cpu: Double
        /// The window's wall seconds.
        var wall: Double
        /// TPVs per second each client received over the window, sorted.
        var rates: [Double]
        /// Bytes all clients received over the window.
        var bytes: Int
        /// Clients that never saw a TPV before the window began.
        var silent: Int
        /// This process's CPU seconds over the window (the clients).
        var clientCPU: Double
        var percent: Double { cpu / wall * 100 }
    }

    static func run(arguments: [String]) throws {
        var clients = 100
        var seconds = 30
        var dir = "bench-out"
        var waymark = ".build/release/waymark"
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--clients": clients = Int(args.next() ?? "") ?? clients
            case "--seconds": seconds = Int(args.next() ?? "") ?? seconds
            case "--dir": dir = args.next() ?? dir
            case "--waymark": waymark = args.next() ?? waymark
            default:
                print("usage: waymark-bench serve [--clients 100] [--seconds 30] [--dir bench-out] [--waymark PATH]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        guard clients > 0, seconds > 0 else {
            print("waymark-bench serve: --clients and --seconds must be above 0")
            exit(64)
        }
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            print("waymark-bench serve: \(waymark) not found; run `swift build -c release --product waymark` first")
            exit(69)
        }
        let hasGPSD = FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd") && available("python3")
        // Each client is a descriptor; the server's limit is its own.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(clients + 64) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(clients + 64))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }

        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-serve-\(getpid())").path
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        chmod(temp, 0o777)
        defer { try? FileManager.default.removeItem(atPath: temp) }

        // A 10 Hz receiver: GGA, GSA and RMC per epoch, as u-blox and SiRF receivers send them,
        // long enough for the warm-up, the window and a margin. Both servers play this log.
        let rate = 10.0
        let epochs = Int(Double(seconds + 30) * rate)
        let log = "\(temp)/receiver.nmea"
        var text = "# Date: 2024-05-01\n"
        for i in 0..<epochs {
            let t = 8 * 3600 * 10 + i  // tenths of a second
            let stamp = String(format: "%02d%02d%02d.%d0", t / 36000 % 24, t / 600 % 60, t / 10 % 60, t % 10)
            let lon = String(format: "011%07.4f", 34.5 + Double(i) * 0.00001)
            text += ReplayBench.nmea("GPGGA,\(stamp),4808.2200,N,\(lon),E,1,08,0.9,520.0,M,47.0,M,,")
            text += ReplayBench.nmea("GPGSA,A,3,01,03,06,11,14,17,19,22,,,,,1.6,0.9,1.3")
            text += ReplayBench.nmea("GPRMC,\(stamp),A,4808.2200,N,\(lon),E,2.72,90.0,010524,,,A")
        }
        try text.write(toFile: log, atomically: true, encoding: .utf8)
        chmod(log, 0o644)

        print(
            "waymark-bench serve: \(clients) clients watching JSON for \(seconds) s, a \(Int(rate)) Hz NMEA log (GGA, GSA, RMC) played in real time"
        )

        // Waymark: `waymark serve LOG --rate 1`; the trace starts at the first WATCH.
        func runWaymark(clients: Int) throws -> Result {
            let port = freePort()
            let server = try ReplayBench.spawn(
                [waymark, "serve", log, "--port", String(port), "--rate", "1", "--max-clients", String(clients)],
                output: "\(dir)/serve-waymark.log")
            defer { stop(server) }
            waitForListener(port: port)
            return measure(server: server, port: port, clients: clients, seconds: seconds, start: {})
        }
        // The peer: gpsd reading the same log from a loopback TCP receiver, unprivileged.
        func runGPSD(clients: Int) throws -> Result {
            let feedPort = freePort()
            let gpsdPort = freePort()
            let go = "\(temp)/go"
            try? FileManager.default.removeItem(atPath: go)
            let feeder = try ReplayBench.spawn(
                ["python3", "scripts/nmea-feeder.py", String(feedPort), log, "--rate", String(rate), "--wait-for", go],
                output: "/dev/null")
            defer { stop(feeder) }
            // Not by connecting: the feeder serves one connection at a time, and a probe would
            // take gpsd's place.
            waitForListener(port: feedPort)
            // setpriv executes gpsd in its own process (runuser would fork and wait), so the
            // process measured is gpsd's.
            var gpsdArgs = ["/usr/sbin/gpsd", "-N", "-n", "-S", String(gpsdPort), "-F", "\(temp)/gpsd.sock"]
            gpsdArgs.append("tcp://127.0.0.1:\(feedPort)")
            if getuid() == 0 {
                gpsdArgs = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + gpsdArgs
            }
            let gpsd = try ReplayBench.spawn(gpsdArgs, output: "\(dir)/serve-gpsd.log")
            defer { stop(gpsd) }
            waitForListener(port: gpsdPort)
            return measure(
                server: gpsd, port: gpsdPort, clients: clients, seconds: seconds,
                start: { _ = FileManager.default.createFile(atPath: go, contents: Data()) })
        }

        var rows: [(name: String, clients: Int, result: Result)] = []
        let ours = try runWaymark(clients: clients)
        rows.append(("waymark", clients, ours))
        // The ratio is taken at the same number of clients served: gpsd serves at most as many
        // as it was built for (Debian's gpsd 3.22: 64) and leaves the others without reports;
        // then waymark runs again with that many.
        var ratio: (ours: Result, peer: Result, clients: Int)?
        if hasGPSD {
            let peer = try runGPSD(clients: clients)
            rows.append(("gpsd", clients, peer))
            let served = clients - peer.silent
            if served == clients {
                ratio = (ours, peer, clients)
            } else if served > 0 {
                let again = try runWaymark(clients: served)
                rows.append(("waymark", served, again))
                ratio = (again, peer, served)
            }
        }

        print("")
        print(
            "\(column("server", 8))  \(column("clients", 7))  \(column("CPU s", 6))  \(column("% core", 6))  "
                + "\(column("TPV/s per client served: min", 29))  \(column("median", 6))  \(column("max", 6))  "
                + "\(column("kB/s out", 8))  \(column("served none", 11))"
        )
        for (name, count, r) in rows {
            let served = r.rates.suffix(count - r.silent)
            let median = served.isEmpty ? 0 : served[served.startIndex + served.count / 2]
            print(
                "\(column(name, 8))  \(column(String(count), 7))  \(column(String(format: "%.2f", r.cpu), 6))  "
                    + "\(column(String(format: "%.2f", r.percent), 6))  \(column(String(format: "%.2f", served.first ?? 0), 29))  "
                    + "\(column(String(format: "%.2f", median), 6))  \(column(String(format: "%.2f", served.last ?? 0), 6))  "
                    + "\(column(String(format: "%.1f", Double(r.bytes) / r.wall / 1e3), 8))  \(column(String(r.silent), 11))"
            )
        }
        print("")
        if let ratio {
            print(
                "ratio at \(ratio.clients) clients: waymark's CPU / gpsd's = "
                    + String(format: "%.2f×", ratio.ours.cpu / max(ratio.peer.cpu, 1e-9))
                    + (ratio.clients < clients ? " (gpsd served \(ratio.clients) of \(clients) clients)" : ""))
        } else {
            print(
                hasGPSD
                    ? "peer: gpsd served no client; no ratio"
                    : "peer: gpsd not installed (apt-get install gpsd); no ratio")
        }
        print(
            "the clients' own CPU (this process) and the feeder's are not counted: "
                + rows.map { "\($0.name) (\($0.clients)) " + String(format: "%.2f s", $0.result.clientCPU) }.joined(
                    separator: ", "))
        let everyClient = (ours.rates.first ?? 0) >= rate * 0.9 && ours.silent == 0
        let verdict =
            ours.percent < 5 && everyClient
            ? "met" : everyClient ? "NOT met" : "NOT met (some clients got fewer than 9 TPVs a second)"
        print(
            String(
                format: "target: %d clients at %.0f Hz with < 5 %% of a core: %.2f %%, ", clients, rate, ours.percent)
                + verdict)
    }

    /// Connects `clients` clients to `port`, has each watch JSON, calls `start` (which starts
    /// the peer's receiver), waits until every client has had a TPV (at most 15 s) and a second
    /// more, then reads everything for `seconds` and measures the server's CPU over that window.
    static func measure(
        server: pid_t, port: Int, clients: Int, seconds: Int, start: () -> Void
    ) -> Result {
        var fds: [Int32] = []
        for _ in 0..<clients {
            let fd = connectTo(port: port)
            if fd >= 0 { fds.append(fd) }
        }
        let watch = Array("?WATCH={\"enable\":true,\"json\":true}\n".utf8)
        for fd in fds {
            _ = watch.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        start()
        var counters = [TPVCounter](repeating: TPVCounter(), count: fds.count)
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 16)
        defer { buffer.deallocate() }
        var bytes = 0
        func pump(until deadline: ContinuousClock.Instant, while condition: () -> Bool = { true }) {
            while ContinuousClock.now < deadline, condition() {
                guard poll(&polls, nfds_t(polls.count), 100) > 0 else { continue }
                for i in polls.indices where polls[i].revents != 0 {
                    polls[i].revents = 0
                    while true {
                        let n = recv(polls[i].fd, buffer, 1 << 16, 0)
                        if n <= 0 {
                            // The server closed (or failed): stop polling this client.
                            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { polls[i].fd = -1 }
                            break
                        }
                        bytes += n
                        counters[i].scan(buffer, n)
                    }
                }
            }
        }
        let clock = ContinuousClock()
        pump(until: clock.now + .seconds(15)) { counters.contains { $0.tpvs == 0 } }
        pump(until: clock.now + .seconds(1))
        let silent = counters.count { $0.tpvs == 0 } + (clients - fds.count)
        let before = counters.map(\.tpvs)
        bytes = 0
        let cpuBefore = cpuSeconds(of: server)
        let ownBefore = RecordBench.cpuTime()
        let windowStart = clock.now
        pump(until: windowStart + .seconds(seconds))
        let wall = ReplayBench.seconds(clock.now - windowStart)
        let cpu = cpuSeconds(of: server) - cpuBefore
        let own = RecordBench.cpuTime() - ownBefore
        for fd in fds { close(fd) }
        let rates = zip(counters, before).map { Double($0.tpvs - $1) / wall }.sorted()
        return Result(cpu: cpu, wall: wall, rates: rates, bytes: bytes, silent: silent, clientCPU: own)
    }

    /// Counts the lines of a stream that are TPV reports, across reads.
    struct TPVCounter {
        private static let tpv = Array("{\"class\":\"TPV\"".utf8)
        private(set) var tpvs = 0
        /// How many bytes of the current line matched `tpv` so far; -1 once it cannot.
        private var matched = 0

        mutating func scan(_ p: UnsafePointer<UInt8>, _ n: Int) {
            for i in 0..<n {
                let b = p[i]
                if b == 10 {
                    matched = 0
                } else if matched >= 0 && matched < Self.tpv.count {
                    if b == Self.tpv[matched] {
                        matched += 1
                        if matched == Self.tpv.count { tpvs += 1 }
                    } else {
                        matched = -1
                    }
                }
            }
        }
    }

    /// The user and system CPU seconds of process `pid` and all its threads
    /// (fields 14 and 15 of /proc/PID/stat, in clock ticks).
    static func cpuSeconds(of pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .nan }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state); utime is field 14, stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Waits up to 5 s until a socket listens on TCP `port` of 127.0.0.1, as /proc/net/tcp tells
    /// (state 0A), without connecting to it.
    static func waitForListener(port: Int) {
        let local = String(format: "0100007F:%04X", port)
        for _ in 0..<200 {
            let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
            let listening = table.split(separator: "\n").contains { row in
                let columns = row.split(separator: " ")
                return columns.count > 3 && columns[1] == local && columns[3] == "0A"
            }
            if listening { return }
            usleep(25_000)
        }
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A blocking connection to 127.0.0.1:`port`, or -1.
    static func connectTo(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !connected {
            close(fd)
            return -1
        }
        return fd
    }

    /// SIGTERM, then SIGKILL after 2 s, and reaps the process.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<40 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }
}
