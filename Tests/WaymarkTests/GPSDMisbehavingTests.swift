import Foundation
import Testing

/// `waymark record` against a gpsd that misbehaves (`scripts/fake-gpsd.py`): it sends part of a
/// report and never the end of its line. libgps then says "ready" for ever while the line is
/// incomplete; `record` must wait on the socket instead of spinning, and report the receiver
/// as silent (issue 15, item 6).
@Suite(
    .enabled(
        if: which("python3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs python3 and a built waymark"))
struct GPSDMisbehavingTests {
    /// Starts the fake on a free loopback port; its port once it says it listens there.
    static func startFake(_ mode: String, log: String) throws -> (pid: pid_t, port: Int) {
        for _ in 0..<3 {
            let port = try freeLoopbackPorts(1)[0]
            let pid = try spawnUnblocked(
                ["python3", Paths.root.appendingPathComponent("scripts/fake-gpsd.py").path, String(port), mode],
                output: log)
            for _ in 0..<200 {
                if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("ready") {
                    return (pid, port)
                }
                if kill(pid, 0) != 0 { break }  // it could not take the port: another one
                usleep(25_000)
            }
            kill(pid, SIGKILL)
        }
        throw POSIXError(.EADDRINUSE)
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["drip", "overlong"])
    func partOfALineNeitherSpinsNorHidesASilentReceiver(_ mode: String) throws {
        let directory = temporaryPath("-fake-gpsd")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fake = try Self.startFake(mode, log: directory + "/fake.log")
        defer {
            kill(fake.pid, SIGKILL)
            var status: Int32 = 0
            waitpid(fake.pid, &status, 0)
        }
        // bash's `times` gives the CPU time of the recording alone.
        let r = try run(
            "/bin/bash",
            [
                "-c",
                "\"$0\" record --gpsd 127.0.0.1:\(fake.port) --duration 3s --stale-after 1s --no-store "
                    + "--format ndjson; status=$?; times >&2; exit $status",
                Paths.waymark.path,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("gpsd: connected to 127.0.0.1:\(fake.port)"), "\(r.stderr)")
        #expect(r.stderr.contains("gpsd: the receiver has been silent for"), "\(r.stderr)")
        // The children's line of `times`: user and system time, e.g. "0m0.090s 0m0.013s".
        let line = try #require(r.stderr.split(separator: "\n").last)
        let seconds = line.split(separator: " ").map { part -> Double in
            let minutes = Double(part.split(separator: "m")[0]) ?? 0
            let rest = part.split(separator: "m").last.map { Double($0.dropLast()) ?? 0 } ?? 0
            return minutes * 60 + rest
        }
        // Spinning costs a whole core for the 3 s; waiting, a few hundredths.
        #expect(seconds.reduce(0, +) < 1.0, "\(mode): \(line) of CPU in a 3 s recording")
    }
}
