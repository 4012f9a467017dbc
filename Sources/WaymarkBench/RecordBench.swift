// waymark-bench record: live recording from a private gpsd at 10 Hz. It prints the latency from
// a TPV arriving to its location being decided, delivered, stored and written to the audit log
// (p50, p99), and the CPU time per hour of recording, against gpspipe watching the same gpsd in
// the same run.

import Foundation
import Waymark
import WaymarkGPSD
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif

enum RecordBench {
    static func run(arguments: [String]) async throws {
        var seconds = 60
        var rate = 10.0
        var dir = "bench-out"
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--seconds": seconds = Int(args.next() ?? "") ?? seconds
            case "--rate": rate = Double(args.next() ?? "") ?? rate
            case "--dir": dir = args.next() ?? dir
            default:
                print("usage: waymark-bench record [--seconds 60] [--rate 10] [--dir bench-out]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd"), available("gpspipe") else {
            print("waymark-bench record: needs gpsd and gpspipe (apt-get install gpsd gpsd-clients)")
            exit(69)
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-record-\(getpid())").path
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        chmod(temp, 0o777)
        defer { try? FileManager.default.removeItem(atPath: temp) }

        // A 10 Hz receiver: GGA, GSA and RMC per epoch, served over TCP to gpsd.
        let epochs = Int(Double(seconds + 5) * rate)
        let log = "\(temp)/receiver.nmea"
        var text = ""
        for i in 0..<epochs {
            let t = 8 * 3600 * 10 + i  // tenths of a second
            let stamp = String(format: "%02d%02d%02d.%d0", t / 36000 % 24, t / 600 % 60, t / 10 % 60, t % 10)
            let minutes = 34.5 + Double(i) * 0.00001
            let lon = String(format: "011%07.4f", minutes)
            text += ReplayBench.nmea("GPGGA,\(stamp),4808.2200,N,\(lon),E,1,08,0.9,520.0,M,47.0,M,,")
            text += ReplayBench.nmea("GPGSA,A,3,01,03,06,11,14,17,19,22,,,,,1.6,0.9,1.3")
            text += ReplayBench.nmea("GPRMC,\(stamp),A,4808.2200,N,\(lon),E,2.72,90.0,010524,,,A")
        }
        try text.write(toFile: log, atomically: true, encoding: .utf8)
        let feedPort = 39_000 + Int(getpid() % 500) * 2
        let gpsdPort = feedPort + 1
        let feeder = try ReplayBench.spawn(
            [
                "python3", "scripts/nmea-feeder.py", String(feedPort), log, "--rate", String(rate), "--wait-for",
                "\(temp)/go",
            ], output: "/dev/null")
        defer { kill(feeder, SIGKILL) }
        usleep(300_000)
        var gpsdArgs = ["/usr/sbin/gpsd", "-N", "-n", "-S", String(gpsdPort), "-F", "\(temp)/gpsd.sock"]
        gpsdArgs.append("tcp://127.0.0.1:\(feedPort)")
        if getuid() == 0 { gpsdArgs = ["runuser", "-u", "nobody", "--"] + gpsdArgs }
        let gpsd = try ReplayBench.spawn(gpsdArgs, output: "/dev/null")
        defer {
            kill(gpsd, SIGTERM)
            _ = try? ReplayBench.spawn(["pkill", "-KILL", "-f", "gpsd -N -n -S \(gpsdPort) "], output: "/dev/null")
        }
        for _ in 0..<100 where !ReplayBench.canConnect(port: gpsdPort) { usleep(50_000) }

        // The peer: gpspipe watching the same gpsd, for the same time.
        let peer = try ReplayBench.spawn(["gpspipe", "-w", "localhost:\(gpsdPort)"], output: "/dev/null")

        // Waymark, in this process: the gpsd thread, the simulation, the session store (a durable
        // commit per fix, as `waymark record` makes), the audit log.
        let simulation = Simulation(scenario: Scenario(), epoch: Date())
        let storePath = "\(dir)/record-store.sqlite"
        StoreBench.removeStore(storePath)
        let session = try SessionStore(path: storePath).beginSession(
            NewSession(
                kind: .record, source: "bench", settings: "{}", scenario: nil, createdAt: Date(),
                epoch: simulation.epoch),
            mode: .durable)
        simulation.addObserver(session)
        let audit = AuditLogWriter(
            sink: try FileSink(atomicPath: "\(dir)/record-audit.ndjson"), epoch: simulation.epoch)
        simulation.addObserver(audit)
        let client = GPSDClient(configuration: .init(host: "localhost", port: String(gpsdPort)))
        let recording = LiveRecording(simulation: simulation, clock: ContinuousClock())
        var latencies: [Duration] = []
        latencies.reserveCapacity(epochs)
        recording.onFixHandled = { _, latency in latencies.append(latency) }
        recording.onNotice = { notice in
            if case .connected = notice { _ = FileManager.default.createFile(atPath: "\(temp)/go", contents: Data()) }
        }
        let before = cpuTime()
        let splitBefore = cpuTimes()
        let wallStart = ContinuousClock.now
        _ = await recording.run(client: client, duration: .seconds(seconds))
        await client.join()
        let wall = ReplayBench.seconds(ContinuousClock.now - wallStart)
        let cpu = cpuTime() - before
        let splitAfter = cpuTimes()
        try audit.finish()
        try session.finish(outcome: .completed, duration: simulation.now, endedAt: Date())
        StoreBench.removeStore(storePath)

        kill(peer, SIGTERM)
        var status: Int32 = 0
        var usage = rusage()
        wait4(peer, &status, 0, &usage)
        let peerCPU = Self.seconds(usage.ru_utime) + Self.seconds(usage.ru_stime)

        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let i = min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)
            return ReplayBench.seconds(latencies[max(0, i)]) * 1000
        }
        print("waymark-bench record: \(latencies.count) fixes at \(rate) Hz over \(String(format: "%.1f", wall)) s")
        print(
            String(
                format:
                    "latency, TPV arrival → decided, delivered, stored, audit-logged: p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                percentile(0.5), percentile(0.99), percentile(1)))
        print(
            String(
                format:
                    "CPU: waymark %.3f s (%.2f %% of one core, %.0f s per hour); gpspipe %.3f s (%.2f %%); ratio %.1f×",
                cpu, cpu / wall * 100, cpu / wall * 3600, peerCPU, peerCPU / wall * 100, cpu / max(peerCPU, 1e-9)))
        print(
            String(
                format: "     of which user %.3f s, system %.3f s (the store's fsync per fix is system time)",
                splitAfter.user - splitBefore.user, splitAfter.system - splitBefore.system))
        print("targets: p99 ≤ 5 ms; CPU ≤ 1 % of one core at 10 Hz")
    }

    static func cpuTime() -> Double {
        let (user, system) = cpuTimes()
        return user + system
    }

    /// User and system CPU seconds of this process so far.
    static func cpuTimes() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    static func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
}
