import Foundation
import Testing

@testable import Waymark

/// One small scenario per rule of the delivery policy and the app's lifecycle (DESIGN §4), each
/// with its audit log as a golden file.
///
/// Each `Fixtures/scenarios/NAME.yaml` names its trace in its first line (`# trace: walk`) and
/// says in comments what it shows; `NAME.audit.ndjson` is the audit log `waymark replay` must
/// write for it, byte for byte. After a deliberate change of behaviour, re-record the golden
/// files with `WAYMARK_RECORD_GOLDEN=1 swift test --filter ScenarioTests` and review the diff.
@Suite struct ScenarioTests {
    static let directory = Paths.fixtures.appendingPathComponent("scenarios")
    static let names = Paths.files(under: directory, suffix: ".yaml").map { String($0.dropLast(5)) }
    static let recording = ProcessInfo.processInfo.environment["WAYMARK_RECORD_GOLDEN"] == "1"

    /// The trace a scenario names in its first line.
    static func trace(of name: String) throws -> String {
        let text = try String(contentsOf: directory.appendingPathComponent("\(name).yaml"), encoding: .utf8)
        let first = text.split(separator: "\n").first ?? ""
        guard first.hasPrefix("# trace: ") else { throw ScenarioFixtureError(name: name) }
        return "traces/\(first.dropFirst(9)).gpx"
    }

    struct ScenarioFixtureError: Error { var name: String }

    /// Runs `waymark replay` on a scenario and returns its audit log.
    static func audit(_ name: String, extra: [String] = []) throws -> (String, ProcessResult) {
        let out = URL(fileURLWithPath: temporaryPath(".ndjson"))
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try run(
            Paths.waymark.path,
            [
                "replay", try trace(of: name), "--scenario", "\(name).yaml", "--audit", out.path, "--quiet", "--format",
                "ndjson", "-o", "/dev/null", "--rate", "max",
            ] + extra,
            directory: directory)
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        return (text, result)
    }

    @Test func everyScenarioHasAGoldenFile() {
        #expect(Self.names.count >= 40)
        for name in Self.names {
            let golden = Self.directory.appendingPathComponent("\(name).audit.ndjson")
            #expect(Self.recording || FileManager.default.fileExists(atPath: golden.path), "\(name) has no golden file")
        }
    }

    @Test(arguments: names)
    func auditLogMatchesGoldenFile(_ name: String) throws {
        let (log, result) = try Self.audit(name)
        #expect(result.status == 0, "\(result.stderr)")
        let golden = Self.directory.appendingPathComponent("\(name).audit.ndjson")
        if Self.recording {
            try log.write(to: golden, atomically: false, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        if log != expected {
            let got = log.split(separator: "\n", omittingEmptySubsequences: false)
            let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let line =
                zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
            Issue.record(
                """
                \(name): the audit log differs from the golden file at line \(line + 1)
                  got:  \(line < got.count ? got[line] : "<end>")
                  want: \(line < want.count ? want[line] : "<end>")
                """)
        }
    }

    /// Every trace point yields exactly one `fix` event when it arrives (a held fix delivered
    /// later gets a second, `delivered`/`resumed`), and every line is one JSON object with the
    /// fields the audit log promises.
    @Test(arguments: names)
    func oneFixEventPerPointWithTheRequiredFields(_ name: String) throws {
        let (log, _) = try Self.audit(name)
        var arrivals = 0
        var resumed = 0
        var finished: [String: Any]?
        for line in log.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let time = try #require(object["time"] as? String)
            #expect(time.count == 24 && time.hasSuffix("Z") && time.contains("."), "\(time)")
            let event = try #require(object["event"] as? String)
            if event == "finished" { finished = object }
            guard event == "fix" else { continue }
            for key in ["decision", "reason", "appState", "authorization"] {
                #expect(object[key] is String, "\(name): fix without \(key)")
            }
            if object["reason"] as? String == "noFix" {
                #expect(object["latitude"] is NSNull)
            } else {
                #expect(object["latitude"] is Double || object["latitude"] is Int)
                #expect(object["longitude"] is Double || object["longitude"] is Int)
            }
            // A held fix delivered later (on resume, or when the user changed to Always) was counted
            // when it arrived.
            if ["resumed", "alwaysGranted"].contains(object["reason"] as? String) {
                #expect(object["decision"] as? String == "delivered")
                resumed += 1
            } else {
                arrivals += 1
            }
        }
        let summary = try #require(finished)
        #expect(summary["fixes"] as? Int == arrivals)
        let yaml = try String(contentsOf: Self.directory.appendingPathComponent("\(name).yaml"), encoding: .utf8)
        if !yaml.contains("\nend:") {
            let gpx = try String(
                contentsOf: Self.directory.appendingPathComponent(try Self.trace(of: name)), encoding: .utf8)
            #expect(arrivals == gpx.components(separatedBy: "<trkpt ").count - 1, "\(name): not one event per point")
        }
        #expect(summary["resumed"] as? Int == resumed)
    }
}
