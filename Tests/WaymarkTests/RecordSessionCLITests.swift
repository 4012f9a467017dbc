import Foundation
import Testing

@testable import WaymarkStore

/// `record` against `scripts/fake-gpsd.py`: a recording without a fix leaves no session unless
/// `--keep-empty`, `--label` is stored, and `--quiet` prints only the summary and the output.
@Suite(
    .enabled(
        if: which("python3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs python3 and a built waymark"))
struct RecordSessionCLITests {
    typealias FakeGPSD = GPSDMisbehavingTests.FakeGPSD

    /// `drip` never completes a line: gpsd is there, the receiver gives no fix.
    @Test(.timeLimit(.minutes(45)))
    func aRecordingWithoutAFixLeavesNoSessionAndSaysWhy() async throws {
        let fake = try await FakeGPSD("drip")
        defer { fake.stop() }
        let store = fake.directory + "/store.sqlite"
        let r = try await runAsync(
            Paths.waymark.path,
            ["record", "--gpsd", "127.0.0.1:\(fake.port)", "--duration", "1s", "--store", store, "--format", "ndjson"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "No session was kept: no fix from gpsd at 127.0.0.1:\(fake.port) was recorded in 0:00:01"),
            "\(r.stderr)")
        #expect(r.stderr.contains(" (--keep-empty keeps a session without fixes)\n"), "\(r.stderr)")
        #expect(!r.stderr.contains("Session 1:"), "\(r.stderr)")
        #expect(try SessionStore(path: store, mode: .existing).sessions().isEmpty)
    }

    @Test(.timeLimit(.minutes(45)))
    func keepEmptyKeepsTheSessionWithItsLabel() async throws {
        let fake = try await FakeGPSD("drip")
        defer { fake.stop() }
        let store = fake.directory + "/store.sqlite"
        let r = try await runAsync(
            Paths.waymark.path,
            [
                "record", "--gpsd", "127.0.0.1:\(fake.port)", "--duration", "1s", "--store", store, "--format",
                "ndjson", "--keep-empty", "--label", "roof antenna",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Session 1: 0 location(s) stored in \(store)"), "\(r.stderr)")
        let sessions = try SessionStore(path: store, mode: .existing).sessions()
        #expect(sessions.map(\.label) == ["roof antenna"])
        #expect(sessions.first?.locationCount == 0)
    }

    /// The long-line gpsd sends a line over the limit (a warning), then good fixes.
    @Test(.timeLimit(.minutes(45)))
    func quietPrintsOnlyTheSummaryAndTheOutput() async throws {
        let fake = try await FakeGPSD("long-line")
        defer { fake.stop() }
        let store = fake.directory + "/store.sqlite"
        let arguments = [
            "record", "--gpsd", "127.0.0.1:\(fake.port)", "--count", "3", "--duration", "10m", "--store", store,
            "--format", "ndjson", "--label", "quiet one",
        ]
        let loud = try await runAsync(Paths.waymark.path, arguments)
        #expect(loud.status == 0, "\(loud.stderr)")
        #expect(loud.stderr.contains("gpsd: connected to"), "\(loud.stderr)")
        #expect(loud.stderr.contains("waymark: recording session 1 into"), "\(loud.stderr)")

        let quiet = try await runAsync(Paths.waymark.path, arguments + ["--quiet"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(try ndjsonObjects(quiet.stdoutText).count == 3, "the chosen output: \(quiet.stdoutText)")
        // Standard error is the summary: its first line, then the lines of counts, and nothing before it.
        let lines = quiet.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Recording of gpsd at") }, "\(quiet.stderr)")
        #expect(lines[..<start].allSatisfy { $0.isEmpty }, "only the summary: \(quiet.stderr)")
        #expect(!quiet.stderr.contains("gpsd: "), "no gpsd notices: \(quiet.stderr)")
        #expect(!quiet.stderr.contains("recording session"), "\(quiet.stderr)")
        #expect(quiet.stderr.contains("Session 2: 3 location(s) stored in \(store)"), "\(quiet.stderr)")
        // What was left out is counted in the summary, quiet or not.
        #expect(quiet.stderr.contains("waymark: 1 overlong line(s) from gpsd skipped"), "\(quiet.stderr)")
        #expect(try SessionStore(path: store, mode: .existing).session(2).label == "quiet one")
    }
}
