import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// `waymark record` killed with SIGKILL at random moments while a real gpsd feeds it at 10 Hz:
/// every fix it acknowledged (printed) is in the store, the store opens cleanly, the live GPX is
/// valid with no acknowledged fix lost, and the next session starts normally.
@Suite(
    .enabled(if: GPSDLiveHarness.available, "needs gpsd, python3 and a built waymark"),
    .serialized)
struct CrashSafetyTests {
    static let kills = 24

    @Test(.timeLimit(.minutes(45)))
    func killNineAtRandomMomentsLosesNothingAcknowledged() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["WAYMARK_KILL_SEED"] ?? "") ?? 0x5EED_2026
        var random = SplitMix64(seed: seed)
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, loop: true)
        defer { h.tearDown() }
        let store = h.directory + "/store.sqlite"
        var acknowledgedInAll = 0
        var validGPX = 0
        for round in 1...Self.kills {
            let gpx = h.directory + "/live-\(round).gpx"
            let recording = try h.startRecording(["--store", store, "--gpx", gpx])
            // The random moment counts from when the run has begun (its session made, then its
            // GPX file), not from the process's start, which a loaded machine can delay past
            // the shortest kill.
            for _ in 0..<2000 where !FileManager.default.fileExists(atPath: gpx) { usleep(10_000) }
            let delay = Double.random(in: 0.25...2.5, using: &random)
            usleep(useconds_t(delay * 1_000_000))
            kill(recording.pid, SIGKILL)
            let r = try h.finish(recording)
            let context = "round \(round), killed after \(delay) s (seed \(seed))"
            #expect(r.status == 128 + SIGKILL, "\(context): \(r.stderr)")

            // Acknowledged: the complete lines it printed.
            var text = r.stdoutText
            if !text.hasSuffix("\n"), let last = text.lastIndex(of: "\n") {
                text = String(text[...last])
            } else if !text.hasSuffix("\n") {
                text = ""
            }
            let acknowledged = text.split(whereSeparator: \.isNewline).map(String.init)
            acknowledgedInAll += acknowledged.count

            // The store opens cleanly and holds every acknowledged location.
            let db = try SessionStore(path: store, mode: .existing)
            #expect(try db.integrityCheck() == ["ok"], "\(context)")
            let sessions = try db.sessions()
            #expect(sessions.count == round, "\(context): one session per run")
            let session = try #require(sessions.first)
            #expect(session.outcome == .interrupted, "\(context)")
            let stored = Set(try db.locations(of: session.id).map { String($0.ndjson().dropLast()) })
            let missing = acknowledged.filter { !stored.contains($0) }
            #expect(missing.isEmpty, "\(context): acknowledged but not stored: \(missing.prefix(3))")

            // The live GPX is valid as it stands (each point is published whole, by a swap of
            // names), with every acknowledged fix.
            let points: [GPXPoint]
            do {
                points = try readDocument(gpx).0.tracks.flatMap(\.segments).flatMap(\.points)
                validGPX += 1
            } catch {
                Issue.record("\(context): the live GPX is not valid as left: \(error)")
                continue
            }
            #expect(points.count >= acknowledged.count, "\(context): the GPX lost acknowledged fixes")
            let printedTimes = acknowledged.compactMap { line -> String? in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["time"] as? String
            }
            let gpxTimes = Set(points.compactMap(\.time).map(ValueFormatting.iso8601))
            #expect(printedTimes.allSatisfy(gpxTimes.contains), "\(context)")
        }
        #expect(acknowledgedInAll >= Self.kills * 3, "the kills came while fixes were flowing")
        print(
            "kill -9: \(Self.kills) rounds, \(acknowledgedInAll) acknowledged fixes, GPX valid \(validGPX)"
        )

        // The next session starts and ends normally.
        let recording = try h.startRecording(["--store", store, "--duration", "2s"])
        let r = try h.finish(recording)
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try SessionStore(path: store, mode: .existing).sessions()
        #expect(sessions.first?.outcome == .completed && (sessions.first?.locationCount ?? 0) > 5)
        #expect(sessions.dropFirst().allSatisfy { $0.outcome == .interrupted })
        #expect(r.stderr.contains("Session \(Self.kills + 1):"), "\(r.stderr)")
    }

    /// A dropped SSH session (SIGHUP) or SIGQUIT stops a recording as SIGINT and SIGTERM do:
    /// the audit log and the live GPX are complete, the session is closed as stopped, and the
    /// summary comes; no crash report.
    @Test(.timeLimit(.minutes(45)), arguments: [SIGHUP, SIGQUIT, SIGTERM])
    func everyStopSignalEndsARecordingCleanly(_ signal: Int32) throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 10, loop: true)
        defer { h.tearDown() }
        let store = h.directory + "/store.sqlite"
        let gpx = h.directory + "/live.gpx"
        let recording = try h.startRecording(["--store", store, "--gpx", gpx])
        // Stop once a few locations have been printed (the audit log appears only at the end).
        func printed() -> Int {
            ((try? String(contentsOfFile: recording.out, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        for _ in 0..<400 where printed() < 5 { usleep(25_000) }
        #expect(printed() >= 5, "signal \(signal): locations were printed before it")
        kill(recording.pid, signal)
        let (r, timedOut) = h.finish(recording, within: 20)
        #expect(!timedOut, "signal \(signal): still running 20 s later")
        #expect(r.status == 0, "signal \(signal): \(r.stderr.suffix(600))")
        #expect(!r.stderr.contains("Crash") && !r.stderr.contains("Backtrace"), "\(r.stderr.suffix(600))")
        #expect(r.stderr.contains("Recording of gpsd at localhost:\(h.gpsdPort)"), "the summary comes")
        #expect(h.audit().last?["event"] as? String == "finished", "signal \(signal): the audit log is complete")
        let (document, _) = try readDocument(gpx)
        #expect(!document.tracks.isEmpty, "the live GPX is whole")
        let db = try SessionStore(path: store, mode: .existing)
        #expect(try db.sessions().first?.outcome == .stopped, "signal \(signal)")
    }

    /// A live recording whose store fills up stops cleanly, says which file and why, exits 74,
    /// and keeps every fix it printed.
    @Test(.timeLimit(.minutes(45)))
    func aFullDiskStopsARecordingCleanly() throws {
        let h = try GPSDLiveHarness(log: "walk.nmea", rate: 20, loop: true)
        defer { h.tearDown() }
        let fs = SessionsCLITests.TinyFileSystem(size: "400k")
        let directory = fs?.path ?? (h.directory + "/limited")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = directory + "/store.sqlite"
        let argv = [
            Paths.waymark.path, "record", "--gpsd", "localhost:\(h.gpsdPort)", "--format", "ndjson", "--store", store,
            "--duration", "40s",
        ]
        let out = h.directory + "/full.out"
        let err = h.directory + "/full.err"
        let command =
            fs != nil
            ? argv : ["/bin/sh", "-c", "ulimit -f 800 && exec " + argv.map { "'\($0)'" }.joined(separator: " ")]
        let pid = try spawnUnblocked(command, output: out, error: err)
        for _ in 0..<200 where !((try? String(contentsOfFile: err, encoding: .utf8)) ?? "").contains("gpsd: connected")
        {
            usleep(25_000)
        }
        _ = FileManager.default.createFile(atPath: h.directory + "/go", contents: Data())
        let r = try h.finish(GPSDLiveHarness.Recording(pid: pid, out: out, err: err))
        #expect(r.status == 74, "\(r.stderr.suffix(600))")
        #expect(r.stderr.contains("waymark: \(store): the disk is full"), "\(r.stderr.suffix(600))")
        #expect(r.stderr.contains("Recording of gpsd at localhost:\(h.gpsdPort)"), "the summary still comes")
        let printed = r.stdoutText.split(whereSeparator: \.isNewline).map(String.init)
        #expect(printed.count > 5)
        let db = try SessionStore(path: store, mode: .existing)
        #expect(try db.integrityCheck() == ["ok"])
        let stored = Set(try db.locations(of: 1).map { String($0.ndjson().dropLast()) })
        #expect(printed.allSatisfy(stored.contains), "every printed fix is stored")
    }
}
