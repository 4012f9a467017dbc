import Foundation
import Testing

@testable import Waymark

/// `waymark record` against a real gpsd that reads NMEA from a loopback TCP "receiver" the test
/// runs (`scripts/nmea-feeder.py`), with the project's own logs: so these run without
/// `../shared`. gpsd is killed and restarted, the receiver goes silent, the input is garbled.
@Suite(
    .enabled(if: GPSDLiveHarness.available, "needs gpsd, python3 and a built waymark"),
    .serialized)
struct GPSDLiveTests {
    /// gpspipe watches the same gpsd in the same run: Waymark must record one location for each
    /// fix time gpsd reports (3D with altitude, 2D without) and a locationUnknown for each TPV
    /// without a fix. (gpsd's first epochs depend on its device detection, so the truth is what
    /// gpsd says in this run, not a fixed count.)
    @Test(.timeLimit(.minutes(45)))
    func recordsWhatGpsdReportsForTheWalk() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea")
        defer { h.tearDown() }
        let pipe = try h.startGpspipe()
        let r = try await h.record(["--duration", "9s"])
        let tpvs = h.stopGpspipe(pipe)
        #expect(r.status == 0, "\(r.stderr)")
        let fixes = h.fixes(r)
        let isFix: ([String: Any]) -> Bool = {
            ($0["mode"] as? Int ?? 0) >= 2 && $0["time"] != nil && $0["lat"] != nil && $0["lon"] != nil
        }
        var times: [String] = []
        for tpv in tpvs where isFix(tpv) {
            let t = tpv["time"] as! String
            if t > (times.last ?? "") { times.append(t) }
        }
        #expect(times.count >= 45, "gpsd reported \(times.count) fix times")
        #expect(fixes.compactMap { $0["time"] as? String } == times.map(GPSDCorpusTests.normalised))
        for fix in fixes {
            let time = fix["time"] as! String
            let modes = tpvs.filter { isFix($0) && GPSDCorpusTests.normalised($0["time"] as! String) == time }
                .compactMap { $0["mode"] as? Int }
            if modes.allSatisfy({ $0 == 2 }) { #expect(fix["altitude"] == nil, "\(time): a 2D fix has no altitude") }
            if modes.allSatisfy({ $0 == 3 }) && time < "2024-05-01T08:00:40" {
                #expect(fix["altitude"] as? Double == 520, "\(time)")
            }
        }
        let unknown = h.audit().filter {
            $0["event"] as? String == "error" && $0["code"] as? String == "locationUnknown"
        }
        #expect(unknown.count == tpvs.filter { !isFix($0) }.count)
        #expect(unknown.count >= 10)
    }

    @Test(.timeLimit(.minutes(45)))
    func gpsdKilledAndRestartedIsAnOutageAndANewSegment() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 4, loop: true)
        defer { h.tearDown() }
        // Each step waits for what the recording has done, never for a time (its --duration
        // only guards against a hang; the test stops it).
        let recording = try h.startRecording(["--duration", "10m"])
        #expect(await h.waitUntil(recording) { $0.printed.count >= 5 }, "\(h.said(recording))")
        h.killGPSD()
        #expect(await h.waitUntil(recording) { $0.said.contains("gpsd: outage (") }, "\(h.said(recording))")
        try h.startGPSD()
        #expect(
            await h.waitUntil(recording) { $0.printed.filter { $0["segment"] as? Int == 1 }.count >= 5 },
            "\(h.said(recording))")
        kill(recording.pid, SIGINT)
        let r = try await h.finish(recording)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("gpsd: outage ("), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "gpsd: connected to").count - 1 >= 2, "\(r.stderr)")
        let segments = h.fixes(r).compactMap { $0["segment"] as? Int }
        #expect(segments.first == 0 && segments.last == 1, "\(segments)")
        // The outage and the reconnection are in the audit log (and so the store), in order.
        let source = h.audit().filter { $0["event"] as? String == "source" }.compactMap { $0["action"] as? String }
        #expect(source.first == "connected" && source.contains("outage"), "\(source)")
        #expect(source.lastIndex(of: "connected")! > source.firstIndex(of: "outage")!, "\(source)")
        #expect(segments.filter { $0 == 1 }.count >= 5, "it keeps recording after the restart")
    }

    /// Issue 16, part 3: without app options record is a logger; `-o FILE.gpx` writes GPX 1.1
    /// (valid against the schema) as fixes arrive, `--fix-min 3d` keeps 3D fixes only, and
    /// gpsd's comings and goings are `source` events in the audit log and the store.
    @Test(.timeLimit(.minutes(45)))
    func withoutAppOptionsRecordLogsGPXOfTheFixesAsked() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10)
        defer { h.tearDown() }
        let gpx = h.directory + "/walk.gpx"
        let store = h.directory + "/store.sqlite"
        let r = try await h.finish(
            try h.startRecording(
                ["--duration", "8s", "--fix-min", "3d", "-o", gpx, "--store", store], format: nil, app: false))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("logging every fix"), "\(r.stderr)")
        let text = try String(contentsOfFile: gpx, encoding: .utf8)
        let points = text.components(separatedBy: "<trkpt ").count - 1
        // walk.nmea: 40 s of 3D fixes, then 10 s of 2D, then 10 s without a fix.
        #expect(points >= 30 && points <= 41, "\(points) points")
        #expect(text.components(separatedBy: "<fix>3d</fix>").count - 1 == points, "only 3D fixes")
        let withoutAltitude = text.components(separatedBy: "<trkpt ").dropFirst().filter { !$0.contains("<ele>") }
        // Every point has its altitude but at 08:00:40, the first epoch of 2D fixes: gpsd's first
        // TPV of it still says 3D (its mode holds until the epoch's GSA), without an altitude,
        // and record keeps gpsd's word.
        #expect(
            withoutAltitude.allSatisfy { $0.contains("<time>2024-05-01T08:00:40.000Z</time>") },
            "every point has its altitude: \(withoutAltitude)")
        // Above mean sea level (the log's GGA says 520.0 m; its geoid separation is 47 m).
        #expect(text.components(separatedBy: "<ele>520</ele>").count - 1 == points - withoutAltitude.count, "\(text)")
        #expect(r.stderr.contains("fix(es) below --fix-min left out"), "\(r.stderr)")
        if let xmllint = which("xmllint"), Paths.sharedAvailable {
            let schema = Paths.shared.appendingPathComponent("schema/gpx-1.1.xsd").path
            let check = try run(xmllint, ["--nonet", "--noout", "--schema", schema, gpx])
            #expect(check.status == 0, "\(check.stderr)")
        }
        let connected = h.audit().filter {
            $0["event"] as? String == "source" && $0["action"] as? String == "connected"
        }
        #expect(connected.count == 1, "\(h.audit().filter { $0["event"] as? String == "source" })")
        let started = h.audit().first { $0["event"] as? String == "started" }
        #expect(started?["logger"] as? Bool == true, "a logger's recording says so: \(String(describing: started))")
        let show = try run(Paths.waymark.path, ["sessions", "show", "1", "--store", store])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdoutText.contains("source events (gpsd):"), "\(show.stdoutText)")
        #expect(show.stdoutText.contains("connected: gpsd at localhost:\(h.gpsdPort)"), "\(show.stdoutText)")
    }

    @Test(.timeLimit(.minutes(45)))
    func aSilentReceiverIsReportedStale() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, silenceAfter: 2)
        defer { h.tearDown() }
        let r = try await h.record(["--duration", "8s", "--stale-after", "2s"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("gpsd: the receiver has been silent for"), "\(r.stderr)")
    }

    @Test(.timeLimit(.minutes(45)))
    func garbledInputNeverCrashesOrGivesInvalidValues() async throws {
        let h = try GPSDLiveHarness(log: "garbled.nmea", rate: 20)
        defer { h.tearDown() }
        let r = try await h.record(["--duration", "7s"])
        #expect(r.status == 0, "\(r.stderr)")
        let fixes = h.fixes(r)
        #expect(fixes.count >= 40, "\(fixes.count)")
        for f in fixes {
            let lat = f["latitude"] as? Double ?? .nan
            let lon = f["longitude"] as? Double ?? .nan
            #expect(abs(lat) <= 90 && abs(lon) <= 180, "\(f)")
            #expect(abs(lat - 48.137) < 0.01, "a damaged sentence became a fix: \(f)")
            #expect((f["horizontalAccuracy"] as? Double ?? -1) > 0)
        }
    }

    /// Background and foreground moments are offsets from the start, on the wall clock.
    @Test(.timeLimit(.minutes(45)))
    func theTimelineRunsOnTheWallClock() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, loop: true)
        defer { h.tearDown() }
        let r = try await h.record(["--duration", "5s", "--background-at", "2s", "--foreground-at", "4s"])
        #expect(r.status == 0, "\(r.stderr)")
        let states = h.fixes(r).compactMap { $0["appState"] as? String }
        #expect(states.first == "active" && states.last == "active")
        #expect(states.filter { $0 == "background" }.count >= 10, "\(states)")
        let changes = h.audit().filter {
            $0["event"] as? String == "stateChanged" && $0["to"] as? String == "background"
        }
        #expect(changes.count == 1)
        // The audit time of the change is the epoch (the start) plus 2 s.
        let started = try #require(h.audit().first?["time"] as? String)
        let changed = try #require(changes.first?["time"] as? String)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let seconds = f.date(from: changed)!.timeIntervalSince(f.date(from: started)!)
        #expect(abs(seconds - 2) < 0.2, "\(seconds)")
    }

    @Test(.timeLimit(.minutes(45)))
    func sigintStopsCleanlyWithASummary() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, loop: true)
        defer { h.tearDown() }
        let recording = try h.startRecording([], format: "text")
        #expect(await h.waitUntil(recording) { $0.output.contains("  UI  48.137") }, "\(h.said(recording))")
        kill(recording.pid, SIGINT)
        let r = try await h.finish(recording)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutText.contains("Recording of gpsd at localhost:\(h.gpsdPort)"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("  UI  48.137"))
    }

    /// A reader of `record -o live.gpx` reads a complete document whenever it opens the file,
    /// even one that keeps the file open while points arrive (issue 28, item 6): every read of
    /// the file during the recording is strict GPX, and a held file is the one it opened.
    @Test(.timeLimit(.minutes(45)))
    func theLiveGPXIsCompleteWheneverItIsRead() async throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, loop: true)
        defer { h.tearDown() }
        let gpx = h.directory + "/live.gpx"
        let recording = try h.startRecording(["-o", gpx], format: nil, app: false)
        var reads = 0
        var complete = 0
        /// Reads the file whole, as a new reader: its points, or nil if it is not strict GPX.
        func points() -> Int? {
            guard let data = FileManager.default.contents(atPath: gpx) else { return nil }
            reads += 1
            guard let document = try? parseDocument(String(decoding: data, as: UTF8.self)) else { return nil }
            complete += 1
            return document.tracks.flatMap(\.segments).flatMap(\.points).count
        }
        #expect(await waitUntil(within: 120) { (points() ?? 0) >= 3 || !isRunning(recording.pid) })
        let opened = try #require(FileManager.default.contents(atPath: gpx).map { Array($0) })
        let held = try LiveGPXReadingTests.SlowReader(gpx)
        held.read(opened.count - 40)
        let before = try LiveGPXReadingTests.points(in: opened)
        #expect(await waitUntil(within: 120) { (points() ?? 0) >= before + 5 || !isRunning(recording.pid) })
        held.readToEnd()
        kill(recording.pid, SIGINT)
        let r = try await h.finish(recording)
        #expect(r.status == 0, "\(r.stderr)")
        let unchanged = held.bytes == opened
        #expect(unchanged, "the file held open changed under its reader")
        #expect(reads > 2 && complete == reads, "\(reads - complete) of \(reads) reads were not complete GPX")
        #expect((points() ?? 0) >= before + 5)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: h.directory).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "the recording left \(hidden)")
    }
}

/// A feeder, a private gpsd reading from it, and `waymark record`.
final class GPSDLiveHarness {
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd") && which("python3") != nil
            && FileManager.default.isExecutableFile(atPath: Paths.waymark.path)
    }

    private(set) var feedPort = 0
    private(set) var gpsdPort = 0
    let directory: String
    let auditPath: String
    private var feeder: pid_t = 0
    private var gpsd: pid_t = 0

    struct Recording {
        var pid: pid_t
        var out: String
        var err: String
    }

    /// Starts the feeder and a private gpsd on two loopback ports picked free for this harness
    /// (`freeLoopbackPorts`); when either process is not the one that then listens (it exited, so
    /// another program took the port in between), it starts again on new ports.
    init(log: String, rate: Double = 10, silenceAfter: Double? = nil, loop: Bool = false) throws {
        directory = temporaryPath("-gpsd")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o777)
        auditPath = directory + "/audit.ndjson"
        var attempt = 0
        while true {
            attempt += 1
            let ports = try freeLoopbackPorts(2)
            feedPort = ports[0]
            gpsdPort = ports[1]
            var argv = [
                "python3", Paths.root.appendingPathComponent("scripts/nmea-feeder.py").path, String(feedPort),
                Paths.fixture("nmea/\(log)"), "--rate",
                String(rate),
            ]
            if let silenceAfter { argv += ["--silence-after", String(silenceAfter)] }
            if loop { argv.append("--loop") }
            argv += ["--wait-for", directory + "/go"]
            feeder = try spawnUnblocked(argv, output: directory + "/feeder.log")
            do {
                try waitForPort(feedPort, listener: feeder)
                try startGPSD()
                return
            } catch {
                // The feeder and gpsd of this attempt go, whether another attempt follows or not.
                tearDownProcesses()
                if attempt >= 3 { throw error }
            }
        }
    }

    func startGPSD() throws {
        var argv = [
            "/usr/sbin/gpsd", "-N", "-n", "-S", String(gpsdPort), "-F", directory + "/gpsd.sock",
            "tcp://127.0.0.1:\(feedPort)",
        ]
        if getuid() == 0 { argv = ["runuser", "-u", "nobody", "--"] + argv }
        gpsd = try spawnUnblocked(argv, output: directory + "/gpsd.log")
        try waitForPort(gpsdPort, listener: gpsd)
        try checkGPSDIsOurs()
    }

    /// The gpsd that answers on the port must be the one this harness started: its DEVICES names
    /// this harness's feeder (`tcp://127.0.0.1:PORT`), which no other gpsd reads. A test once read
    /// another daemon's fixes (an altitude of 56 m where its own log says 520 m).
    func checkGPSDIsOurs() throws {
        let expected = "tcp://127.0.0.1:\(feedPort)"
        var seen: [String] = []
        for _ in 0..<2400 {  // two minutes guard against a hang
            let client = try RawClient(port: gpsdPort)
            defer { client.close() }
            try client.send("?DEVICES;\n")
            for _ in 0..<8 {
                let line = try client.line()
                guard line.contains("\"class\":\"DEVICES\"") else { continue }
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                seen = (object?["devices"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
                if seen.contains(expected) { return }
                break
            }
            // gpsd lists a device once it has opened it; give it a moment.
            usleep(50_000)
        }
        throw GPSDNotOurs(port: gpsdPort, expected: expected, seen: seen)
    }

    struct GPSDNotOurs: Error, CustomStringConvertible {
        var port: Int
        var expected: String
        var seen: [String]
        var description: String {
            "the gpsd on port \(port) is not this test's: its DEVICES lists \(seen), not \(expected) (another gpsd runs on this machine?)"
        }
    }

    func killGPSD() {
        // runuser forwards the signal to gpsd; kill the whole group it leads, to be sure.
        kill(gpsd, SIGKILL)
        _ = runQuietly(["pkill", "-KILL", "-f", "gpsd -N -n -S \(gpsdPort) "])
        var status: Int32 = 0
        waitpid(gpsd, &status, 0)
    }

    /// gpspipe -w on the same gpsd, watching before the receiver starts.
    func startGpspipe() throws -> Recording {
        let out = directory + "/gpspipe.out"
        let pid = try spawnUnblocked(["stdbuf", "-oL", "gpspipe", "-w", "localhost:\(gpsdPort)"], output: out)
        for _ in 0..<4800 {  // while gpspipe runs; two minutes guard against a hang
            if let text = try? String(contentsOfFile: out, encoding: .utf8), text.contains("\"class\":\"WATCH\"") {
                break
            }
            if !isRunning(pid) { break }
            usleep(25_000)
        }
        return Recording(pid: pid, out: out, err: out)
    }

    /// Stops gpspipe and returns the TPVs it saw.
    func stopGpspipe(_ r: Recording) -> [[String: Any]] {
        kill(r.pid, SIGTERM)
        var status: Int32 = 0
        waitpid(r.pid, &status, 0)
        return ((try? String(contentsOfFile: r.out, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline)
            .filter { $0.contains("\"class\":\"TPV\"") }
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Starts `waymark record` on this harness's gpsd, with `--format format` (none when nil)
    /// and, when `app`, `--no-auto-pause` (an app option: the simulated app runs).
    func startRecording(_ extra: [String], format: String? = "ndjson", app: Bool = true) throws -> Recording {
        let out = directory + "/record.out"
        let err = directory + "/record.err"
        let argv =
            [Paths.waymark.path, "record", "--gpsd", "localhost:\(gpsdPort)"]
            + (format.map { ["--format", $0] } ?? []) + (app ? ["--no-auto-pause"] : []) + ["--audit", auditPath]
            + extra
        let pid = try spawnUnblocked(argv, output: out, error: err)
        // The receiver starts sending once the recording watches gpsd.
        if !FileManager.default.fileExists(atPath: directory + "/go") {
            // "connected" means gpsd has answered record's WATCH: all the receiver sends now
            // reaches it. Waited for while record runs (two minutes guard against a hang).
            for _ in 0..<4800 {
                if let text = try? String(contentsOfFile: err, encoding: .utf8), text.contains("gpsd: connected") {
                    break
                }
                if !isRunning(pid) { break }
                usleep(25_000)
            }
            _ = FileManager.default.createFile(atPath: directory + "/go", contents: Data())
        }
        return Recording(pid: pid, out: out, err: err)
    }

    func finish(_ r: Recording, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let (status, timedOut) = waitForExit(r.pid, within: hangGuardSeconds)
        if timedOut { recordHang(["waymark", "record"], sourceLocation) }
        return result(r, status: status)
    }

    /// What a finished recording left: its exit status and output.
    private func result(_ r: Recording, status: Int32) -> ProcessResult {
        ProcessResult(
            status: exitStatus(status), stdout: (try? Data(contentsOf: URL(fileURLWithPath: r.out))) ?? Data(),
            stderr: (try? String(contentsOfFile: r.err, encoding: .utf8)) ?? "")
    }

    /// Waits for the recording to end, at most `seconds`: one still running then is killed
    /// (SIGKILL), so a test of how it stops fails rather than hangs. `timedOut` says which.
    func finish(_ r: Recording, within seconds: Double) -> (result: ProcessResult, timedOut: Bool) {
        let (status, timedOut) = waitForExit(r.pid, within: seconds)
        return (result(r, status: status), timedOut)
    }

    func record(_ extra: [String]) throws -> ProcessResult { try finish(try startRecording(extra)) }

    /// ``finish(_:)`` without holding a thread of the test runner's pool while it waits.
    func finish(_ r: Recording) async throws -> ProcessResult {
        var status: Int32 = 0
        while true {
            let done = waitpid(r.pid, &status, WNOHANG)
            if done == r.pid || (done == -1 && errno != EINTR) { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return result(r, status: status)
    }

    /// ``record(_:)`` without holding a thread of the test runner's pool while it waits.
    func record(_ extra: [String]) async throws -> ProcessResult { try await finish(try startRecording(extra)) }

    /// What a running recording has written so far: its output, its complete NDJSON lines, and
    /// its standard error.
    struct SoFar {
        var output: String
        var said: String
        var printed: [[String: Any]] {
            output.split(separator: "\n").dropLast(output.hasSuffix("\n") ? 0 : 1).compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    func soFar(_ r: Recording) -> SoFar {
        SoFar(
            output: (try? String(contentsOfFile: r.out, encoding: .utf8)) ?? "",
            said: (try? String(contentsOfFile: r.err, encoding: .utf8)) ?? "")
    }

    func said(_ r: Recording) -> String { soFar(r).said }

    /// Waits until `condition` holds of what the recording has written, or it has ended (two
    /// minutes at most: a guard against a hang, not a measure of how long it should take).
    func waitUntil(_ r: Recording, _ condition: @escaping (SoFar) -> Bool) async -> Bool {
        await WaymarkTests.waitUntil(within: 120) { condition(self.soFar(r)) || !isRunning(r.pid) }
            && condition(soFar(r))
    }

    func fixes(_ r: ProcessResult) -> [[String: Any]] {
        r.stdoutText.split(whereSeparator: \.isNewline).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func audit() -> [[String: Any]] {
        ((try? String(contentsOfFile: auditPath, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline)
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func tearDown() {
        tearDownProcesses()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func tearDownProcesses() {
        if gpsd != 0 { killGPSD() }
        if feeder != 0 {
            kill(feeder, SIGKILL)
            var status: Int32 = 0
            waitpid(feeder, &status, 0)
        }
        gpsd = 0
        feeder = 0
    }

    /// Waits until `port` accepts a connection while `listener`, the process meant to open it,
    /// still runs: a port that answers after its process exited is another program's.
    private func waitForPort(_ port: Int, listener: pid_t) throws {
        for _ in 0..<2400 {  // while the listener runs; two minutes guard against a hang
            if hasExited(listener) { throw POSIXError(.EADDRINUSE) }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if ok {
                if hasExited(listener) { throw POSIXError(.EADDRINUSE) }
                return
            }
            usleep(50_000)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    private func runQuietly(_ argv: [String]) -> Int32 {
        (try? runUnblocked(argv).status) ?? -1
    }
}
