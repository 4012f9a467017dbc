import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// `waymark serve` as a network service (issue 27, items 1 to 5): descriptors running out, a log
/// nobody reads, a storm of connections, a client streaming newlines, a reader as fast as the
/// server, and gpsd captures. Every wait follows the server's progress (its log, its clients'
/// replies, its exit); CPU is measured from /proc as a ratio, never against a wall deadline.
@Suite(.enabled(if: ServeHarness.available, "needs gpspipe, gpxlogger and a built waymark"))
struct GPSDServeServiceTests {
    /// Waits until serve's log holds `text` or serve has exited (at most two minutes, a guard
    /// against a hang).
    static func waitForLog(_ serve: ServeHarness, _ text: String) async -> Bool {
        await waitUntil(within: 120) { serve.log().contains(text) || !isRunning(serve.pid) }
            && serve.log().contains(text)
    }

    /// Under `ulimit -n 48`, 80 idle connections: the server serves what its descriptors allow
    /// (saying so), turns the rest away, rests its listener instead of spinning, closes the
    /// idle ones after --idle-timeout, and then serves a new client.
    @Test func descriptorExhaustionNeitherSpinsNorLocksNewClientsOut() async throws {
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 20)
        let serve = try ServeHarness(
            trace: trace, ["--rate", "max", "--idle-timeout", "2s"], shell: "ulimit -n 48")
        defer { serve.tearDown() }
        let cpuBefore = try #require(cpuSeconds(of: serve.pid))
        let wallBefore = ContinuousClock.now
        // 80 connections that never say a word, opened from this process.
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for _ in 0..<80 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(serve.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            #expect(connected, "connection \(idle.count + 1): \(String(cString: strerror(errno)))")
            idle.append(fd)
        }
        // The window measured: from before the connections until the server has closed the
        // idle ones, whenever that is on this machine.
        #expect(await Self.waitForLog(serve, "closed (idle: no request for 2s)"), "\(serve.log())")
        let cpu = try #require(cpuSeconds(of: serve.pid)) - cpuBefore
        let wall = (ContinuousClock.now - wallBefore).inSeconds
        // Spinning on a listener that stays readable costs a whole core (or all a loaded
        // machine gives it, a third of one at least); waiting costs next to nothing.
        #expect(cpu / wall < 0.1, "\(cpu) CPU seconds in \(wall) s with 80 idle connections")
        let log = serve.log()
        #expect(log.contains("the descriptor limit (ulimit -n 48) leaves room for"), "\(log)")
        #expect(log.contains("turned away"), "\(log)")
        // Once the idle clients are gone, a new one is served the whole trace.
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        #expect(GPSDServeLiveTests.tpvs(pipe.stdoutText).count == points.count, "\(pipe.stderr)\n\(serve.log())")
    }

    /// Standard error is a pipe nobody reads: thousands of connections later, clients are still
    /// served, and SIGTERM still ends the server (with its usual exit status).
    @Test func aLogNobodyReadsNeitherStallsClientsNorKeepsSIGTERMFromEndingIt() async throws {
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 5)
        let directory = (trace as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/stderr.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The read end is opened (so that serve can open the write end) and never read; its
        // pipe holds one page, so the server meets a full pipe after a few dozen lines.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { close(reader) }
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ (Linux)
        _ = fcntl(reader, setPipeSize, 4096)
        let port = try freeLoopbackPorts(1)[0]
        let pid = try spawnUnblocked(
            [Paths.waymark.path, "serve", trace, "--port", String(port), "--rate", "1", "--loop"],
            output: "/dev/null", error: fifo)
        defer {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, within: 5)
        }
        // Serve listens (however long it takes to start), and it is this test's: its DEVICES
        // names the trace.
        #expect(await waitUntil(within: 120) { GPSDCorpusTests.accepts(port: port) || !isRunning(pid) })
        let probe = try RawClient(port: port)
        _ = try probe.line()
        try probe.send("?DEVICES;\n")
        #expect(try probe.line().contains(trace), "another program has port \(port)")
        probe.close()
        // Each connection is answered with VERSION, the 2,000th as the first.
        let answered = try await Self.connectAndReadVersion(port: port, times: 2000)
        #expect(answered == 2000, "\(answered) of 2000 connections answered")
        // A client that watches still gets its reports.
        let client = try RawClient(port: port)
        defer { client.close() }
        try client.send("?WATCH={\"enable\":true,\"json\":true};\n")
        var sawTPV = false
        for _ in 0..<20 where !sawTPV { sawTPV = try client.line().contains("\"class\":\"TPV\"") }
        #expect(sawTPV)
        kill(pid, SIGTERM)
        let (status, timedOut) = await waitForExitAsync(pid, within: 120)
        #expect(!timedOut, "SIGTERM did not end serve")
        #expect(exitStatus(status) == 0)
    }

    /// Opens `times` connections one after another, each read up to its VERSION line and closed,
    /// on one of Dispatch's threads (not the test pool's); how many were answered.
    static func connectAndReadVersion(port: Int, times: Int) async throws -> Int {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var answered = 0
                for _ in 0..<times {
                    guard let client = try? RawClient(port: port) else { break }
                    defer { client.close() }
                    guard (try? client.line())?.contains("\"class\":\"VERSION\"") == true else { break }
                    answered += 1
                }
                continuation.resume(returning: answered)
            }
        }
    }

    /// A storm of connections is summarised: past 20 client events a second, one line of counts
    /// a second; and the counts add up to every connection and close.
    @Test func aConnectionStormIsCountedNotLoggedLineByLine() async throws {
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 5)
        let serve = try ServeHarness(trace: trace, ["--rate", "1", "--loop"])
        defer { serve.tearDown() }
        let storm = 3000
        #expect(try await Self.connectAndReadVersion(port: serve.port, times: storm) == storm)
        // Each close is logged (one by one or counted) once the server has seen it; SIGTERM
        // then ends the run, and the last counts are written.
        kill(serve.pid, SIGTERM)
        let ended = await serve.finish(within: 120)
        #expect(ended.status == 0 && !ended.timedOut, "\(serve.log())")
        let log = serve.log()
        let lines = log.split(separator: "\n")
        // The harness's own probe is one more connection.
        var connected = lines.filter { $0.hasSuffix("): connected") }.count
        var closed = lines.filter { $0.contains(": closed (") }.count
        for line in lines where line.hasPrefix("clients: ") {
            for part in line.split(separator: ":").last!.split(separator: ",") {
                let words = part.split(separator: " ")
                guard let n = Int(words[0]) else { continue }
                if words.dropFirst().first == "connected" { connected += n }
                if words.dropFirst().first == "closed" { closed += n }
            }
        }
        #expect(connected == storm + 1, "\(connected) connections logged or counted")
        #expect(closed == storm + 1, "\(closed) closes logged or counted")
        #expect(log.contains("more event(s) in 1s, counted"), "\(log.prefix(2000))")
        // Line by line, 3,000 connections wrote about 270 KB.
        #expect(log.utf8.count < 40_000, "\(log.utf8.count) bytes of log for \(storm) connections")
    }

    /// A client streaming newlines costs the server about what one streaming long lines does:
    /// request parsing is linear. (Each line used to copy the rest of what had arrived.)
    @Test func newlinesCostNoMoreThanOtherBytes() async throws {
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 5)
        let serve = try ServeHarness(trace: trace, ["--rate", "1", "--loop"])
        defer { serve.tearDown() }
        let mebibytes = 32
        let longLines = [UInt8](repeating: UInt8(ascii: "x"), count: 4095) + [10]
        let cpu0 = try #require(cpuSeconds(of: serve.pid))
        try await Self.stream(longLines, mebibytes: mebibytes, port: serve.port)
        let cpu1 = try #require(cpuSeconds(of: serve.pid))
        try await Self.stream([UInt8](repeating: 10, count: 4096), mebibytes: mebibytes, port: serve.port)
        let cpu2 = try #require(cpuSeconds(of: serve.pid))
        let (baseline, newlines) = (cpu1 - cpu0, cpu2 - cpu1)
        #expect(
            newlines <= max(10 * baseline, 1.0),
            "\(mebibytes) MiB: \(newlines) CPU seconds of newlines, \(baseline) of 4 KiB lines")
    }

    /// Sends `mebibytes` MiB made of `pattern` to serve on a connection of its own (on one of
    /// Dispatch's threads), then `?VERSION;`, and waits for its answer: serve has then read
    /// and parsed everything.
    static func stream(_ pattern: [UInt8], mebibytes: Int, port: Int) async throws {
        let ok: Bool = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                guard let client = try? RawClient(port: port, receiveTimeout: nil) else {
                    return continuation.resume(returning: false)
                }
                defer { client.close() }
                _ = try? client.line()  // VERSION on connect
                var chunk: [UInt8] = []
                while chunk.count < 65_536 { chunk += pattern }
                var sent = 0
                while sent < mebibytes << 20 {
                    guard (try? client.send(chunk)) != nil else { return continuation.resume(returning: false) }
                    sent += chunk.count
                }
                guard (try? client.send(Array("?VERSION;\n".utf8))) != nil else {
                    return continuation.resume(returning: false)
                }
                continuation.resume(returning: (try? client.line())?.contains("\"class\":\"VERSION\"") == true)
            }
        }
        #expect(ok, "serve answered after the stream")
    }

    /// `--rate max --loop --queue 1000000` with one reader as fast as the server: the memory
    /// kept follows that reader's lag (none), not the queue's size; it stops growing.
    @Test func memoryFollowsTheSlowestClientNotTheQueue() async throws {
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 300)
        let serve = try ServeHarness(trace: trace, ["--rate", "max", "--loop", "--queue", "1000000"])
        defer { serve.tearDown() }
        let reader = TPVCounter(port: serve.port)
        defer { reader.stop() }
        #expect(await waitUntil(within: 600) { reader.count >= 1_000 || reader.failed }, "\(serve.log())")
        let early = try #require(residentBytes(of: serve.pid))
        #expect(await waitUntil(within: 600) { reader.count >= 21_000 || reader.failed }, "\(serve.log())")
        let late = try #require(residentBytes(of: serve.pid))
        // Kept five times over in a ring of a million, 50,000 epochs grew it by 300 MB; kept once
        // but all of the --queue, these 20,000 would by 14 MB; kept only while a client needs
        // them, by nothing.
        #expect(late - early < 8 << 20, "\(early >> 20) MiB after 1,000 epochs, \(late >> 20) MiB after 21,000")
    }

    /// A `gpspipe -w` capture is served like any trace: its fixes, in order.
    @Test func aGpsdCaptureIsServed() async throws {
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 30)
        let first = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { first.tearDown() }
        let capture = first.directory + "/capture.json"
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(first.port)"])
        try pipe.stdout.write(to: URL(fileURLWithPath: capture))
        let second = try ServeHarness(trace: capture, ["--rate", "max"], ownsTraceDirectory: false)
        defer { second.tearDown() }
        let again = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(second.port)"])
        let tpvs = GPSDServeLiveTests.tpvs(again.stdoutText)
        #expect(tpvs.count == points.count, "\(second.log())")
        for (tpv, point) in zip(tpvs, points) {
            #expect(tpv["time"] as? String == GPSDServeLiveTests.time(point))
            #expect(tpv["lat"] as? Double == point.coordinate.latitude)
            #expect(tpv["lon"] as? Double == point.coordinate.longitude)
        }
    }

    /// Without a reader for gpsd captures, the library's error says what the file is and what
    /// reading it needs, in words, not in the library's type names.
    @Test func aCaptureWithoutItsReaderIsRefusedInWords() throws {
        let bytes = Array(#"{"class":"VERSION","release":"3.22"}"#.utf8) + [10]
        let error = #expect(throws: GPXError.self) {
            _ = try TraceFormat.reader(for: MemoryByteSource(bytes), name: "capture.json")
        }
        let text = "\(try #require(error))"
        #expect(text.contains("capture of gpsd's JSON reports (gpspipe -w)"), "\(text)")
        for internalName in ["TraceReaders", "WaymarkGPSD", "withGPSDCaptures", "Reader"] {
            #expect(!text.contains(internalName), "\(text)")
        }
    }
}

/// A reader of serve's JSON on one of Dispatch's threads, as fast as its socket goes, counting
/// the TPV lines.
final class TPVCounter: Sendable {
    private let state = Mutex((count: 0, failed: false, stopped: false))

    var count: Int { state.withLock { $0.count } }
    var failed: Bool { state.withLock { $0.failed } }

    init(port: Int) {
        DispatchQueue.global().async { [self] in
            guard let client = try? RawClient(port: port, receiveTimeout: nil) else {
                return state.withLock { $0.failed = true }
            }
            defer { client.close() }
            guard (try? client.send("?WATCH={\"enable\":true,\"json\":true};\n")) != nil else {
                return state.withLock { $0.failed = true }
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            var tail: [UInt8] = []
            let marker = Array("\n{\"class\":\"TPV\"".utf8)
            while !state.withLock({ $0.stopped }) {
                let n = recv(client.fd, &chunk, chunk.count, 0)
                guard n > 0 else { return state.withLock { $0.failed = true } }
                // Count the markers in what came, with the tail of the last read before it.
                let bytes = tail + chunk[0..<n]
                var found = 0
                bytes.withUnsafeBytes { raw in
                    // Each line after a newline that starts as a TPV does.
                    var at = 0
                    while let hit = memchr(raw.baseAddress! + at, 10, raw.count - at) {
                        at = raw.baseAddress!.distance(to: UnsafeRawPointer(hit))
                        if raw.count - at >= marker.count && memcmp(hit, marker, marker.count) == 0 { found += 1 }
                        at += 1
                    }
                }
                tail = Array(bytes.suffix(marker.count - 1))
                state.withLock { $0.count += found }
            }
        }
    }

    func stop() { state.withLock { $0.stopped = true } }
}
