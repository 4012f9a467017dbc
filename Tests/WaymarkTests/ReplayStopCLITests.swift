import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `waymark replay` stopped by a signal: the run ends where it is, and what it wrote is whole.
@Suite struct ReplayStopCLITests {
    /// A paced replay stopped (SIGTERM, as Ctrl-C) in a long gap of its trace ends at once, not
    /// when the fix after the gap comes: before `RunStop`, it slept out the gap, and then the
    /// rules' timers until `--end`, in real time. Waits on the output's progress, never on the
    /// clock; the bound on the exit is far below the gap (30 minutes at this rate).
    @Test(.timeLimit(.minutes(15))) func aPacedReplayStoppedInAGapEndsAtOnce() async throws {
        // 20 fixes a second apart, then one 10 hours later.
        var points = (0..<20).map { i in
            String(
                format: "<trkpt lat=\"48.1372\" lon=\"%.5f\"><time>2024-05-01T08:00:%02dZ</time></trkpt>",
                11.5755 + Double(i) * 0.0001, i)
        }
        points.append("<trkpt lat=\"48.1380\" lon=\"11.5800\"><time>2024-05-01T18:00:00Z</time></trkpt>")
        let gpx = temporaryPath("-gap.gpx")
        try
            (#"<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"#
            + points.joined() + "</trkseg></trk></gpx>").write(toFile: gpx, atomically: true, encoding: .utf8)
        let audit = temporaryPath("-gap.audit.ndjson")
        let out = temporaryPath("-gap.ndjson")
        let errors = temporaryPath("-gap.err")
        let pid = try spawnUnblocked(
            [
                Paths.waymark.path, "replay", gpx, "--rate", "20", "--end", "11h", "--no-store", "--quiet",
                "--audit", audit, "--format", "ndjson",
            ], output: out, error: errors)
        defer {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, within: 10)
        }
        // A paced replay writes each delivered line at once: the 20 before the gap are progress.
        func lines() -> Int {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        #expect(await waitUntil(within: 300) { lines() >= 20 })
        kill(pid, SIGTERM)
        let ended = await waitForExitAsync(pid, within: 300)
        #expect(!ended.timedOut, "still waiting out the gap")
        #expect(exitStatus(ended.status) == 0, "\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        #expect(lines() == 20, "the fix after the gap never came")
        let events = try String(contentsOfFile: audit, encoding: .utf8).split(separator: "\n")
        let last = try #require(events.last)
        #expect(last.contains(#""event":"finished""#) && last.contains(#""fixes":20,"#), "\(last)")
        // It ends where it was, long before the fix after the gap (a timer of the rules may
        // have come after the last fix before the signal did).
        let time = try #require(last.firstRange(of: #""time":""#).map { last[$0.upperBound...].prefix(24) })
        #expect(time >= "2024-05-01T08:00:19.000Z" && time < "2024-05-01T18:00:00.000Z", "\(last)")
    }
}
