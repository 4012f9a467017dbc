import Foundation
import Testing

/// `replay --quiet`, and what a paced replay shows a person at a terminal: a line with the pace,
/// how long the run takes and how to run it at once, then its progress on the last line. Only
/// when standard error is a terminal (here forced with WAYMARK_TERMINAL_UI=1: the tests' pipes
/// are not), never with --quiet.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct ReplayTerminalCLITests {
    static let walk = Paths.fixture("scenarios/traces/walk.gpx")
    static let noZone = Paths.fixture("gpx/no-zone.gpx")
    static let clearLine = "\r\u{1B}[K"

    /// Runs waymark with `WAYMARK_TERMINAL_UI` set to `ui` (nil: unset), without holding a
    /// thread of the test pool while a paced run waits.
    func waymark(_ arguments: [String], ui: String? = nil) async throws -> ProcessResult {
        try await runAsync(
            "/usr/bin/env",
            ["-u", "WAYMARK_TERMINAL_UI"] + (ui.map { ["WAYMARK_TERMINAL_UI=\($0)"] } ?? []) + [Paths.waymark.path]
                + arguments)
    }

    @Test(.timeLimit(.minutes(45)))
    func aRealTimeRunOnATerminalSaysHowLongAndHowToSkipIt() async throws {
        let r = try await waymark(
            ["replay", Self.walk, "--end", "2s", "--rate", "1", "--no-store", "--format", "ndjson"], ui: "1")
        #expect(r.status == 0, "\(r.stderr)")
        let first = r.stderr.split(separator: "\n").first.map(String.init)
        #expect(
            first
                == "waymark: replaying in real time: this takes about 2s; --rate max replays it at once (Ctrl-C stops it)",
            "\(r.stderr)")
        // With a store, Ctrl-C keeps what the run stored.
        let store = temporaryPath("-store") + "/s.sqlite"
        let stored = try await waymark(
            ["replay", Self.walk, "--end", "2m", "--rate", "1000", "--store", store, "--format", "ndjson"], ui: "1")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(
            stored.stderr.split(separator: "\n").first?.hasSuffix(
                "--rate max replays it at once (Ctrl-C stops it and keeps the session)") == true, "\(stored.stderr)")
    }

    @Test(.timeLimit(.minutes(45)))
    func aFasterRunGivesItsFactorTheTraceTimeAndItsProgress() async throws {
        let r = try await waymark(
            ["replay", Self.walk, "--end", "2m", "--rate", "300", "--no-store", "--format", "ndjson"], ui: "1")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.hasPrefix(
                "waymark: replaying at 300× real time: this takes about 1s (2m of trace time); --rate max replays it at once"
            ), "\(r.stderr)")
        #expect(
            r.stderr.contains(Self.clearLine + "replay +0:00:00 of 0:02:00 (0%) · 1 fix(es), 1 delivered"),
            "\(r.stderr)")
        // The status line is cleared before the summary, which starts on a clean line.
        #expect(r.stderr.contains(Self.clearLine + "\nReplay of "), "\(r.stderr)")
        #expect(!r.stdoutText.contains("\u{1B}"), "standard output has none of it")
    }

    /// The length comes from the trace when no --end cuts it: walk.gpx lasts 10 minutes.
    @Test(.timeLimit(.minutes(45)))
    func theLengthIsTheTracesWithoutEnd() async throws {
        let r = try await waymark(["replay", Self.walk, "--rate", "1000", "--no-store", "--format", "ndjson"], ui: "1")
        #expect(
            r.stderr.hasPrefix("waymark: replaying at 1000× real time: this takes about 1s (10m of trace time);"),
            "\(r.stderr)")
        #expect(r.stderr.contains(" of 0:10:00 ("), "\(r.stderr)")
    }

    @Test(
        .timeLimit(.minutes(45)),
        arguments: [
            (["--rate", "300"], nil as String?), (["--rate", "300"], "0"), (["--rate", "300", "--quiet"], "1"),
            (["--rate", "max"], "1"),
        ])
    func noNoticeOrProgressInPipesWithQuietOrAtMax(_ extra: [String], ui: String?) async throws {
        let r = try await waymark(
            ["replay", Self.walk, "--end", "2m", "--no-store", "--format", "ndjson"] + extra, ui: ui)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("replaying"), "\(extra) \(ui ?? "unset"): \(r.stderr)")
        #expect(!r.stderr.contains("\u{1B}"), "\(extra) \(ui ?? "unset"): \(r.stderr)")
    }

    /// --quiet: standard error is the summary alone (a warning of the trace is counted in it, not
    /// shown), standard output the chosen output alone.
    @Test(.timeLimit(.minutes(45)))
    func quietLeavesTheSummaryAndTheOutput() async throws {
        let arguments = ["replay", Self.noZone, "--no-store", "--format", "ndjson", "--background-at", "30s"]
        let loud = try await waymark(arguments)
        #expect(loud.status == 0, "\(loud.stderr)")
        #expect(loud.stderr.contains("has no zone; it is taken as UTC"), "\(loud.stderr)")
        #expect(loud.stderr.contains("app: inactive → background"), "\(loud.stderr)")

        let quiet = try await waymark(arguments + ["--quiet"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(try !ndjsonObjects(quiet.stdoutText).isEmpty, "only NDJSON: \(quiet.stdoutText)")
        #expect(
            quiet.stderr.hasPrefix("\(Self.noZone): 1 warning(s) not shown (--quiet)\n\nReplay of "), "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("app:") && !quiet.stderr.contains("has no zone"), "\(quiet.stderr)")
    }

    /// With text, the UI lines are the chosen output; background log lines are not shown.
    @Test(.timeLimit(.minutes(45)))
    func quietTextKeepsTheUILinesAndDropsTheLog() async throws {
        let r = try await waymark([
            "replay", Self.walk, "--no-store", "--background-modes", "location", "--allows-background-updates",
            "--background-at", "1m", "--foreground-at", "3m", "--end", "4m", "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.stdoutText.contains("+0:00:50  UI  48.137, 11.5759433"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("Replay of \(Self.walk): 25 fixes"), "\(r.stdoutText)")
        #expect(!r.stdoutText.contains("background  48."), "\(r.stdoutText)")
    }
}
