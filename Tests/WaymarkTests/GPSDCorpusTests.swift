import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

enum GPSDTestSupport {
    static var corpusAvailable: Bool {
        Paths.sharedAvailable && which("gpsfake") != nil
            && FileManager.default.isExecutableFile(atPath: Paths.waymark.path)
    }
}

/// Every receiver log of gpsd 3.22's regression suite, replayed by gpsfake through a private gpsd
/// and recorded by `waymark record`; what Waymark records is checked against the TPV lines of
/// the log's `.chk` (gpsd 3.22's own output for it). The replay is stepped by the test (see
/// ``record(_:)``): it does not depend on how fast anything starts.
@Suite(
    .enabled(if: GPSDTestSupport.corpusAvailable, "needs ../shared (corpus and tools), gpsfake and a built waymark"),
    .serialized)
struct GPSDCorpusTests {
    static let directory = Paths.corpus.appendingPathComponent("gpsd/release-3.22")
    static let logs: [String] = Paths.files(under: directory, suffix: ".log").filter {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent($0 + ".chk").path)
    }

    /// A TPV line of a `.chk` file.
    struct TPV {
        var object: [String: Any]
        var mode: Int { object["mode"] as? Int ?? 0 }
        var time: String? { object["time"] as? String }
        var lat: Double? { object["lat"] as? Double }
        var lon: Double? { object["lon"] as? Double }
        var isFix: Bool { mode >= 2 && time != nil && lat != nil && lon != nil }
        func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
        var fieldCount: Int { object.count }
    }

    static func expected(_ log: String) throws -> [TPV] {
        let text = try String(contentsOf: directory.appendingPathComponent(log + ".chk"), encoding: .utf8)
        return try text.split(whereSeparator: \.isNewline).filter { $0.contains("\"class\":\"TPV\"") }.map {
            TPV(object: try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])
        }
    }

    /// A replay that did not produce a recording; says what went wrong.
    struct ReplayFailed: Error, CustomStringConvertible {
        var log: String
        var problems: [String]
        var description: String { "\(log): no complete replay in 3 attempts: \(problems.joined(separator: "; "))" }
    }

    /// Records `log` through gpsfake on a loopback port picked free for it; returns the delivered
    /// locations and the audit events.
    ///
    /// Every step waits for the one before it, never for a time: gpsfake single-steps the log
    /// (`-i`: a line on its standard input before each sentence), and its input is held until
    /// `waymark record` says gpsd has answered its WATCH; record is stopped once it reports the
    /// outage that gpsfake's end makes (gpsd goes with it), so it has taken every report. Its
    /// store is its own. A replay whose own watching client (gpsfake's `-p`) saw fewer TPVs than
    /// the `.chk` did not play the whole log: it is tried again, on a new port, as is one whose
    /// port was taken first.
    static func record(_ log: String) async throws -> (fixes: [[String: Any]], audit: [[String: Any]]) {
        var problems: [String] = []
        let expectedTPVs = try expected(log).count
        for _ in 0..<3 {
            let directory = temporaryPath("-gpsfake")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            chmod(directory, 0o777)  // gpsfake, as nobody, makes its control socket here
            let copy = directory + "/" + log
            try FileManager.default.copyItem(atPath: Self.directory.appendingPathComponent(log).path, toPath: copy)
            chmod(copy, 0o644)
            let go = directory + "/go"
            let port = try freeLoopbackPorts(1)[0]
            let asNobody = getuid() == 0 ? "runuser -u nobody -- " : ""
            let gpsfake = try UnblockedRun(
                [
                    "/bin/bash", "-c",
                    #"{ while [ ! -e "$1" ]; do sleep 0.02; done; yes ""; } | "#
                        + asNobody + #"env TMPDIR="$2" gpsfake -1 -q -p -i -P "$3" "$4""#,
                    "replay", go, directory, String(port), copy,
                ], processGroup: true)
            defer { gpsfake.killGroup() }
            let listening = await waitUntil(within: 120) {
                !isRunning(gpsfake.pid) || Self.accepts(port: port)
            }
            guard listening && isRunning(gpsfake.pid) else {
                gpsfake.killGroup()  // one that never listened may still be running
                let r = await gpsfake.finish()
                problems.append("gpsd never listened on \(port) (exit \(r.status)): \(r.stderr.suffix(300))")
                continue
            }
            let audit = directory + "/audit.ndjson"
            let recording = try UnblockedRun([
                Paths.waymark.path, "record", "--gpsd", "localhost:\(port)", "--format", "ndjson", "--no-auto-pause",
                "--audit", audit, "--store", directory + "/store.sqlite",
            ])
            defer { kill(recording.pid, SIGKILL) }
            func recordSays(_ text: String) async -> Bool {
                func said() -> Bool {
                    ((try? String(contentsOfFile: recording.err, encoding: .utf8)) ?? "").contains(text)
                }
                return await waitUntil(within: 300) { said() || !isRunning(recording.pid) } && said()
            }
            guard await recordSays("gpsd: connected to") else {
                kill(recording.pid, SIGKILL)  // record retries for ever; it may still be running
                let r = await recording.finish()
                problems.append("record never watched gpsd (exit \(r.status)): \(r.stderr.suffix(300))")
                continue
            }
            _ = FileManager.default.createFile(atPath: go, contents: Data())
            let outage = await recordSays("gpsd: outage")
            kill(recording.pid, SIGINT)
            let r = await recording.finish()
            // gpsfake ends with the log; a guard against one that hangs in its cleanup.
            let (fakeStatus, _) = await waitForExitAsync(gpsfake.pid, within: 120)
            let fake = gpsfake.result(status: fakeStatus)
            let seen = fake.stdoutText.components(separatedBy: "\"class\":\"TPV\"").count - 1
            guard outage, r.status == 0, FileManager.default.fileExists(atPath: audit) else {
                problems.append("record ended without an outage, or failed (exit \(r.status)): \(r.stderr.suffix(300))")
                continue
            }
            guard seen >= expectedTPVs else {
                problems.append("gpsfake's own client saw \(seen) of \(expectedTPVs) TPVs (exit \(fake.status))")
                continue
            }
            return (try ndjsonObjects(r.stdoutText), try ndjsonObjects(String(contentsOfFile: audit, encoding: .utf8)))
        }
        throw ReplayFailed(log: log, problems: problems)
    }

    /// Whether something accepts a TCP connection on the loopback `port` now.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @Test func theRegressionLogsAreHere() {
        #expect(Self.logs.count >= 20)
    }

    @Test(.timeLimit(.minutes(45)), arguments: logs)
    func recordsWhatGpsdReports(_ log: String) async throws {
        let tpvs = try Self.expected(log)
        let (fixes, audit) = try await Self.record(log)

        // One location per epoch of gpsd's (a run of TPVs with one time), in order, but for
        // the fixes whose time does not fit the receiver's clock (GPSDMappingTests.corpusDrops
        // says which, and why). gpsd may send several TPVs for one time, with different values
        // (one per sentence of the epoch); Waymark's location must be one of them, mapped field
        // by field.
        var epochs: [(time: String, tpvs: [TPV])] = []
        for tpv in tpvs where tpv.isFix {
            if epochs.last?.time == tpv.time {
                epochs[epochs.count - 1].tpvs.append(tpv)
            } else {
                epochs.append((tpv.time!, [tpv]))
            }
        }
        let dropped = Set((GPSDMappingTests.corpusDrops[log] ?? []).map(\.time))
        epochs.removeAll { dropped.contains($0.time) }
        #expect(fixes.count == epochs.count, "\(log): \(fixes.count) locations for \(epochs.count) epochs")
        for (got, epoch) in zip(fixes, epochs) {
            #expect(got["time"] as? String == Self.normalised(epoch.time), "\(log) \(epoch.time)")
            let matching = epoch.tpvs.filter { Self.matches(got, $0) }
            #expect(!matching.isEmpty, "\(log) \(epoch.time): \(got) is none of gpsd's TPVs for that time")
        }
        // Fix loss gives locationUnknown: one per TPV without a fix.
        let unknown = audit.filter { $0["event"] as? String == "error" && $0["code"] as? String == "locationUnknown" }
        let noFix = tpvs.filter { !$0.isFix }.count
        #expect(unknown.count == noFix, "\(log): \(unknown.count) locationUnknown for \(noFix) TPVs without a fix")
    }

    /// Whether a recorded location is `tpv`, mapped: position, altitude (3D only) and `epv`,
    /// `eph`, speed and `eps`, course and `epd`, to the precision of Waymark's NDJSON.
    static func matches(_ got: [String: Any], _ want: TPV) -> Bool {
        guard let lat = got["latitude"] as? Double, let lon = got["longitude"] as? Double,
            abs(lat - want.lat!) <= 5.1e-8, abs(lon - want.lon!) <= 5.1e-8  // 7 decimals, rounded
        else { return false }
        if want.mode == 3, let alt = want.number("altMSL") {
            guard let altitude = got["altitude"] as? Double, abs(altitude - alt) < 0.006 else { return false }
            if let epv = want.number("epv"), epv > 0 {  // gpsd's 0 means unknown; Waymark uses its default
                guard let v = got["verticalAccuracy"] as? Double, abs(v - epv) < 0.051 else { return false }
            }
        } else if got["altitude"] != nil {
            return false  // a 2D fix has no valid altitude
        }
        if let eph = want.number("eph") {
            guard let h = got["horizontalAccuracy"] as? Double, abs(h - eph) < 0.051 else { return false }
        }
        if let speed = want.number("speed") {
            guard let s = got["speed"] as? Double, abs(s - speed) < 0.0051 else { return false }
            if let eps = want.number("eps") {
                guard let a = got["speedAccuracy"] as? Double, abs(a - eps) < 0.0051 else { return false }
            }
        } else if got["speed"] != nil {
            return false
        }
        if let track = want.number("track"), track < 360 {
            guard let c = got["course"] as? Double, abs(c - track) < 0.051 else { return false }
            if let epd = want.number("epd") {
                guard let a = got["courseAccuracy"] as? Double, abs(a - epd) < 0.051 else { return false }
            }
        }
        return true
    }

    /// gpsd writes times with the receiver's precision; Waymark with milliseconds.
    static func normalised(_ time: String) -> String {
        guard let dot = time.firstIndex(of: ".") else { return String(time.dropLast()) + ".000Z" }
        let fraction = time[time.index(after: dot)..<time.index(before: time.endIndex)]
        let millis = String((fraction + "000").prefix(3))
        return String(time[..<dot]) + "." + millis + "Z"
    }
}
