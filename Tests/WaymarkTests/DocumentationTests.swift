import Foundation
import Testing
import Waymark
import WaymarkGPSD

/// The README and the documentation say what is true: their Swift examples compile and run,
/// their links lead somewhere, and the README keeps the test command CI runs.
@Suite struct DocumentationTests {
    private static let cityWalk = Paths.root.appendingPathComponent("traces/city-walk.gpx").path

    /// The README's library example and the steps of the DocC article "Replaying a trace", as
    /// written there (with the trace's path for "walk.gpx").
    @MainActor @Test func replayExamplesRun() async throws {
        let walk = Self.cityWalk
        // docs/library.md, "Reading, writing and replaying" (once the README's example).
        do {
            let schedule = try ReplaySchedule(document: try GPXDocument(contentsOf: walk), file: "walk.gpx")
            var scenario = Scenario()
            scenario.timeline = [.init(at: .seconds(90), .background), .init(at: .seconds(600), .foreground)]
            let simulation = Simulation(scenario: scenario, epoch: schedule.fixes[0].location.timestamp)
            let myDelegate = CountingDelegate()
            simulation.manager.delegate = myDelegate
            let summary = try await simulation.run(GPXReplaySource(schedule: schedule, name: "walk.gpx"))
            #expect(myDelegate.count == summary.count(FixDecision.delivered))
            #expect(summary.count(FixReason.notInUse) > 0)
        }
        // "Replaying a trace".
        let document = try GPXDocument(contentsOf: walk)
        let schedule = try ReplaySchedule(
            document: document, file: "walk.gpx",
            options: ReplaySchedule.Options(interval: .seconds(1), startOffset: .seconds(30)))
        let source = GPXReplaySource(schedule: schedule, name: "walk.gpx")
        let streamed = try StreamingReplaySource(contentsOf: walk, loops: 2)
        #expect(streamed.pointCount == 360)

        var scenario = Scenario()
        scenario.system.iosVersion = IOSVersion(major: 16)!
        scenario.info.backgroundModes = [.location]
        scenario.manager.allowsBackgroundLocationUpdates = true
        scenario.timeline = [
            .init(at: .seconds(90), .background),
            .init(at: .seconds(600), .foreground),
        ]
        scenario.end = .seconds(900)

        let simulation = Simulation(scenario: scenario, epoch: schedule.fixes[0].location.timestamp)
        let delegate = CountingDelegate()
        simulation.manager.delegate = delegate
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        let log = temporaryPath(".ndjson")
        let sink = try FileSink(atomicPath: log)
        let writer = AuditLogWriter(sink: sink, epoch: simulation.epoch)
        simulation.addObserver(writer)
        let summary = try await simulation.run(source)
        try writer.finish()
        #expect(summary.count(FixReason.backgroundSession) > 0)
        #expect(delegate.count == summary.count(FixDecision.delivered))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == recorder.ndjson(epoch: simulation.epoch))
    }

    /// The DocC article "Recording from gpsd", as written there; it needs a gpsd, so it is
    /// compiled, not run (GPSDLiveTests run the same calls against real ones).
    private func recordingExample() async {
        let simulation = Simulation(scenario: Scenario.logger(), epoch: Date())
        let recording = LiveRecording(simulation: simulation, clock: ContinuousClock())
        recording.onNotice = { notice in print(notice.action, notice.detail ?? "") }
        let client = GPSDClient(configuration: GPSDClient.Configuration(host: "localhost", port: "2947"))
        let ending = await recording.run(client: client, duration: .seconds(60))
        await client.join()
        print(ending, simulation.summary.count(FixDecision.delivered))
    }

    /// CI (`.ci/run`) runs the README's test command: the README names it in "The two commands".
    @Test func readmeKeepsTheTwoCommands() throws {
        let readme = try String(contentsOf: Paths.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("## The two commands"))
        #expect(readme.contains("scripts/run-traces.sh   # the main job, end to end on the bundled traces/"))
        #expect(readme.contains("scripts/test.sh         # the whole test suite"))
        let ci = try String(contentsOf: Paths.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.contains("exec scripts/test.sh"))
        #expect(readme.split(separator: "\n").count <= 300, "the README stays short; details go to docs/")
    }

    /// Every relative link in the README and docs/*.md leads to a file that exists, and every
    /// `#anchor` into a Markdown file to one of its headings (as GitHub spells them).
    @Test func relativeLinksResolve() throws {
        let root = Paths.root
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var broken: [String] = []
        for page in ["README.md"] + docs {
            let url = root.appendingPathComponent(page)
            let text = try String(contentsOf: url, encoding: .utf8)
            for target in Self.links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file =
                    parts[0].isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(String(parts[0]))
                guard FileManager.default.fileExists(atPath: file.path) else {
                    broken.append("\(page): \(target)")
                    continue
                }
                if parts.count == 2, file.pathExtension == "md" {
                    let anchors = Self.anchors(in: try String(contentsOf: file, encoding: .utf8))
                    if !anchors.contains(String(parts[1])) { broken.append("\(page): \(target)") }
                }
            }
        }
        #expect(broken.isEmpty, "broken links: \(broken)")
    }

    /// The targets of `[text](target)` links, outside code blocks.
    static func links(in markdown: String) -> [String] {
        var targets: [String] = []
        var inCode = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            if inCode { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        return targets
    }

    /// GitHub's anchors for a Markdown file's headings: lower case, punctuation but `-` and `_`
    /// left out, spaces as `-`.
    static func anchors(in markdown: String) -> Set<String> {
        var anchors: Set<String> = []
        var inCode = false
        for line in markdown.split(separator: "\n") {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            let title = line.drop(while: { $0 == "#" }).drop(while: { $0 == " " })
            let slug = title.lowercased().compactMap { c -> Character? in
                if c == " " { return "-" }
                if c.isLetter || c.isNumber || c == "-" || c == "_" { return c }
                return nil
            }
            anchors.insert(String(slug))
        }
        return anchors
    }
}

/// Counts the locations delivered to it.
private final class CountingDelegate: DeviceLocationManagerDelegate {
    var count = 0
    func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
        count += locations.count
    }
}
