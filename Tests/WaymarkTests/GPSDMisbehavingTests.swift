import Foundation
import Testing

@testable import WaymarkGPSD

/// `waymark record` against a gpsd that misbehaves (`scripts/fake-gpsd.py`): it sends part of a
/// report and never the end of its line. libgps then says "ready" for ever while the line is
/// incomplete; `record` must wait on the socket instead of spinning, and report the receiver
/// as silent (issue 15, item 6).
@Suite(
    .enabled(
        if: which("python3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs python3 and a built waymark"))
struct GPSDMisbehavingTests {
    /// `scripts/fake-gpsd.py` in one of its modes, on a free loopback port, with a private
    /// directory for the test's files.
    final class FakeGPSD {
        let directory = temporaryPath("-fake-gpsd")
        let pid: pid_t
        let port: Int

        /// The file whose creation (``go()``) starts a flood that waits for it.
        var trigger: String { directory + "/go" }

        /// `waits`: a flood starts only at ``go()``. It waits for the fake to say "ready" while
        /// the fake runs (without holding a thread of the test pool), however long it takes to
        /// start on a loaded machine.
        init(_ mode: String, waits: Bool = false) async throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let log = directory + "/fake.log"
            let trigger = directory + "/go"
            for _ in 0..<3 {
                let port = try freeLoopbackPorts(1)[0]
                let pid = try spawnUnblocked(
                    ["python3", Paths.root.appendingPathComponent("scripts/fake-gpsd.py").path, String(port), mode]
                        + (waits ? [trigger] : []),
                    output: log)
                func ready() -> Bool { (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true }
                // One that exits could not take the port: another one.
                if await waitUntil(within: 120, { ready() || !isRunning(pid) }), ready() {
                    (self.pid, self.port) = (pid, port)
                    return
                }
                kill(pid, SIGKILL)
                _ = await waitForExitAsync(pid, within: 30)
            }
            throw POSIXError(.EADDRINUSE)
        }

        func go() { _ = FileManager.default.createFile(atPath: trigger, contents: Data()) }

        func stop() {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test(.timeLimit(.minutes(45)), arguments: ["drip", "overlong"])
    func partOfALineNeitherSpinsNorHidesASilentReceiver(_ mode: String) async throws {
        let fake = try await FakeGPSD(mode)
        defer { fake.stop() }
        // bash's `times` gives the CPU time of the recording alone.
        let r = try await runAsync(
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

    /// A line longer than the limit is skipped with a warning, and the reports after it are
    /// recorded: before, libgps's full buffer made every later read fail, which looked like
    /// gpsd going away, again on every reconnection.
    @Test(.timeLimit(.minutes(45)))
    func anOverlongLineIsSkippedAndTheReportsAfterItRecorded() async throws {
        let fake = try await FakeGPSD("long-line")
        defer { fake.stop() }
        let r = try await runAsync(
            Paths.waymark.path,
            [
                "record", "--gpsd", "127.0.0.1:\(fake.port)", "--count", "3", "--duration", "10m", "--no-store",
                "--format", "ndjson",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("a line of 100"), "\(r.stderr)")
        #expect(r.stderr.contains("more than 65536) was skipped"), "\(r.stderr)")
        #expect(r.stderr.contains("1 overlong line(s) from gpsd skipped"), "\(r.stderr)")
        #expect(!r.stderr.contains("outage"), "\(r.stderr)")
        let objects = try ndjsonObjects(r.stdoutText)
        // The delivered locations, one per second of the receiver's clock after the long line.
        #expect(
            objects.compactMap { $0["time"] as? String }.prefix(3) == [
                "2024-05-01T08:00:01.000Z", "2024-05-01T08:00:02.000Z", "2024-05-01T08:00:03.000Z",
            ], "\(r.stdoutText)")
    }

    /// Another process holds the store's write lock while gpsd floods: the recording waits for
    /// the lock instead of ending, keeps gpsd's reports in memory up to its limit, reports what
    /// it had to drop, and stores every location it showed (issue 15, items 7 and 14).
    @Test(.timeLimit(.minutes(45)), .enabled(if: which("sqlite3") != nil))
    func aLockedStoreAndAFloodingGpsdEndNothingAndLoseNothingShown() async throws {
        let fake = try await FakeGPSD("flood", waits: true)
        defer { fake.stop() }
        let directory = fake.directory
        let store = directory + "/store.sqlite"
        let shown = directory + "/shown.ndjson"
        let log = directory + "/record.log"
        // Every step waits for what the recording says, not for a time: this test may wait a
        // while for a thread of the runner's pool, and the recording goes on (its --duration
        // only guards against a hang) until the test stops it.
        let record = try spawnUnblocked(
            [
                Paths.waymark.path, "record", "--gpsd", "127.0.0.1:\(fake.port)", "--duration", "10m", "--store",
                store, "--format", "ndjson", "-o", shown,
            ], output: directory + "/record.out", error: log)
        var status: Int32 = 0
        var ended = false
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        /// Waits until the log says `text` or the recording ends.
        func waitFor(_ text: String) async -> Bool {
            await waitUntil(within: 300) {
                ended = ended || waitpid(record, &status, WNOHANG) == record
                return ended || logText().contains(text)
            } && !ended
        }
        // Once the recording has begun (connected to gpsd: the logger's start is done by then),
        // another process takes the write lock, then gpsd floods; the lock is kept until the
        // recording has said it waits. (Taking it during the flood could wait for ever: the
        // recording commits one report after another.)
        #expect(await waitFor("gpsd: connected to"), "\(logText())")
        let holder = try StoreLockWaitTests.LockHolder(path: store)
        try holder.take()
        fake.go()
        #expect(await waitFor("store: locked by another process for"), "\(logText())")
        holder.end()
        #expect(await waitFor("store: the lock was released after"), "\(logText())")
        #expect(await waitFor("were dropped: 1000 were already waiting to be recorded"), "\(logText())")
        if !ended { kill(record, SIGINT) }
        let (finalStatus, timedOut) = ended ? (status, false) : await waitForExitAsync(record, within: 120)
        let text = logText()
        #expect(!timedOut && exitStatus(finalStatus) == 0, "\(text)")
        #expect(text.contains("report(s) from gpsd dropped because the recording could not keep up"), "\(text)")
        // Everything shown is stored, and the session ended as stopped, not failed.
        let shownCount = try String(contentsOfFile: shown, encoding: .utf8).split(separator: "\n").count
        let export = try run(Paths.waymark.path, ["sessions", "export", "1", "--format", "ndjson", "--store", store])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(shownCount > 0 && export.stdoutText.split(separator: "\n").count == shownCount)
        let list = try run(Paths.waymark.path, ["sessions", "list", "--store", store])
        #expect(list.stdoutText.contains("stopped"), "\(list.stdoutText)")
    }
}

/// The line framer gpsd's client reads with (a pure state machine).
struct GPSDLineFramerTests {
    static func lines(_ pieces: [String], limit: Int = 16) -> [GPSDLineFramer.Output] {
        var framer = GPSDLineFramer(limit: limit)
        var out: [GPSDLineFramer.Output] = []
        for piece in pieces {
            Array(piece.utf8).withUnsafeBytes { framer.feed($0) { out.append($0) } }
        }
        if let last = framer.finish() { out.append(last) }
        return out
    }

    static func line(_ text: String) -> GPSDLineFramer.Output { .line(Array(text.utf8)) }

    @Test func linesAcrossReadsAndCarriageReturns() {
        #expect(
            Self.lines(["{\"a\":1}\n{\"b", "\":2}\r", "\n\n{"]) == [
                Self.line("{\"a\":1}"), Self.line("{\"b\":2}"), Self.line(""),
            ])
        #expect(Self.lines(["abc"]) == [], "a line cut short by the end is dropped")
    }

    @Test func anOverlongLineIsReportedOnceAndTheNextReadWhole() {
        // 40 bytes in three reads, then a good line in the same read as the overlong one's end.
        let long = String(repeating: "x", count: 40)
        let out = Self.lines([
            String(long.prefix(10)), String(long.dropFirst(10).prefix(20)), long.suffix(10) + "\nok\n",
        ])
        #expect(out == [.overlong(bytes: 40), Self.line("ok")])
        // Exactly the limit is taken; one more byte is not.
        #expect(
            Self.lines([String(repeating: "y", count: 16) + "\n"]) == [Self.line(String(repeating: "y", count: 16))])
        #expect(Self.lines([String(repeating: "y", count: 17) + "\nz\n"]) == [.overlong(bytes: 17), Self.line("z")])
        // One that never ends is reported when the stream does.
        #expect(Self.lines([String(repeating: "y", count: 30)]) == [.overlong(bytes: 30)])
    }
}

/// libgps's parser on gpsd's lines, as the client reads them.
struct GPSDLineDecoderTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// Every line is unpacked, as gps_read does: a TPV's report has the satellites and DOPs of
    /// the SKY before it. Lines that are not TPVs give no report.
    @Test(.timeLimit(.minutes(45))) func aTPVCarriesWhatTheSKYBeforeItSaid() throws {
        let decoder = try #require(GPSDLineDecoder())
        let sky =
            #"{"class":"SKY","device":"/dev/ttyUSB0","hdop":1.20,"vdop":2.10,"pdop":2.40,"satellites":["#
            + #"{"PRN":5,"el":40,"az":120,"ss":38,"used":true},{"PRN":7,"el":60,"az":200,"ss":41,"used":true},"#
            + #"{"PRN":9,"el":10,"az":20,"ss":15,"used":false}]}"#
        #expect(decoder.decode(Self.bytes(sky)) == nil)
        #expect(decoder.decode(Self.bytes(#"{"class":"VERSION","release":"3.22"}"#)) == nil)
        let tpv =
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2024-05-01T08:00:01.000Z","#
            + #""lat":51.5,"lon":-0.12,"altHAE":40.0,"epx":3.0,"epy":3.0,"epv":5.0}"#
        let report = try #require(decoder.decode(Self.bytes(tpv)))
        #expect(report.mode == 3 && report.latitude == 51.5 && report.longitude == -0.12)
        #expect(report.satellitesUsed == 2, "\(report)")
        #expect(report.hdop == 1.2 && report.vdop == 2.1 && report.pdop == 2.4, "\(report)")
        // A line that is not JSON, on which libgps's own parser loops for ever (the fuzzer found
        // it), a line cut at a NUL and an empty line give nothing and do not hang or trap.
        let hangsLibgps =
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":51.5,"alt":0.456,:[{"class":"DEVICE","#
            + #""path":"/dev/ttyUSB0","bps":9600}]}"#
        #expect(decoder.decode(Self.bytes(hangsLibgps)) == nil)
        #expect(decoder.notJSON == 1)
        // gpsd's own DEVICES with five receivers (libgps keeps four) loops in libgps too.
        let devices = (1...5).map { #"{"class":"DEVICE","path":"/dev/ttyUSB\#($0)","driver":"NMEA0183"}"# }
        let fiveDevices = #"{"class":"DEVICES","devices":["# + devices.joined(separator: ",") + "]}"
        #expect(decoder.decode(Self.bytes(fiveDevices)) == nil)
        #expect(decoder.notJSON == 1)
        // So does a TPV with nested objects that name a class: they are left out, the rest read.
        let nested = #"{"class":"TPV","mode":2,"lat":10.5,"lon":20.25,"devices":[{"class":"DEVICE","path":"/dev/x"}]}"#
        #expect(decoder.decode(Self.bytes(nested))?.latitude == 10.5)
        // The next TPV still carries the SKY's values.
        #expect(decoder.decode(Self.bytes(tpv))?.satellitesUsed == 2)
        #expect(decoder.decode([0x7B, 0x00, 0x7D]) == nil)
        #expect(decoder.decode([]) == nil)
    }
}

/// The JSON check before libgps's parser: RFC 8259's grammar, in one pass.
struct JSONSyntaxTests {
    @Test func wellFormedObjectsPassAndTheRestDoNot() {
        let good = [
            #"{}"#, #" {"a":1} "#, #"{"a":[1,-2.5e-3,0,true,false,null,"x\"\u00e9",{"b":[]}]}"#,
            #"{"class":"TPV","lat":51.5,"lon":-0.12,"tag":"RMC"}"#,
        ]
        let bad = [
            "", "[]", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1,:[2]}"#, #"{"a":01}"#, #"{"a":1.}"#,
            #"{"a":-}"#, #"{"a":"\x"}"#, #"{"a":tru}"#, #"{"a":1}x"#, #"{a:1}"#, "{\"a\":\"\u{01}\"}",
            String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40),
        ]
        for text in good { #expect(JSONSyntax.isObject(Array(text.utf8)), "\(text)") }
        #expect(JSONSyntax.objectClass(Array(#"{"x":{"class":"A"},"class":"TPV"}"#.utf8)) == "TPV")
        #expect(JSONSyntax.objectClass(Array(#"{"x":{"class":"SKY"}}"#.utf8)) == "")
        #expect(JSONSyntax.objectClass(Array(#"{"class":"T\u0050V"}"#.utf8)) == "")
        let flat = JSONSyntax.flattened(
            Array(
                #" { "class" : "SKY", "x":{"a":[1]}, "hdop":1.5e0 ,"s":[{"b":2}],"satellites":[ {"PRN":5,"n":{"c":3},"used":true} , 7, {"t":"a\"]}"}],"z":null } "#
                    .utf8),
            keeping: "satellites")
        #expect(
            String(decoding: flat, as: UTF8.self)
                == #"{"class":"SKY","hdop":1.5e0,"satellites":[{"PRN":5,"used":true},{"t":"a\"]}"}],"z":null}"#)
        #expect(
            String(decoding: JSONSyntax.flattened(Array(#"{"a":[],"b":{}}"#.utf8), keeping: "s"), as: UTF8.self) == "{}"
        )
        for text in bad { #expect(!JSONSyntax.isObject(Array(text.utf8)), "\(text)") }
    }
}
