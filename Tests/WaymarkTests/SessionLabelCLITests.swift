import Foundation
import Testing

@testable import WaymarkStore

/// `--label` on replay and record, `sessions list --label`, `sessions delete --older-than`, and
/// a recording without a fix that leaves no session (unless `--keep-empty`).
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct SessionLabelCLITests {
    static let walk = Paths.fixture("scenarios/traces/walk.gpx")

    func waymark(_ arguments: [String]) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    func replay(into store: String, _ extra: [String] = []) throws {
        let r = try waymark(["replay", Self.walk, "--store", store, "--end", "1m", "--format", "ndjson"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func aLabelIsShownListedAndFiltered() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        try replay(into: store, ["--label", "commute, iOS 17"])
        try replay(into: store)
        try replay(into: store, ["--label", "commute"])

        let table = try waymark(["sessions", "list", "--store", store])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("SOURCE") == true && lines.first?.contains("LABEL") == true, "\(lines)")
        #expect(lines.count == 4)
        #expect(lines[1].contains("  commute  ") && lines[3].contains("  commute, iOS 17  "), "\(table.stdoutText)")
        #expect(lines[2].contains("  -  "), "no label: a dash")

        let filtered = try waymark(["sessions", "list", "--store", store, "--label", "commute", "--json"])
        let objects = try #require(
            try JSONSerialization.jsonObject(with: filtered.stdout) as? [[String: Any]], "\(filtered.stdoutText)")
        #expect(objects.map { $0["id"] as? Int } == [3], "exact match: not 'commute, iOS 17'")
        #expect(objects.first?["label"] as? String == "commute")
        let all = try #require(
            try JSONSerialization.jsonObject(
                with: try waymark(["sessions", "list", "--store", store, "--json"]).stdout) as? [[String: Any]])
        #expect(all.count == 3)
        #expect(all[1]["label"] is NSNull, "label is null when there is none")

        let none = try waymark(["sessions", "list", "--store", store, "--label", "nope"])
        #expect(none.status == 0 && none.stdoutText == "No sessions labelled \"nope\" in \(store).\n")

        let show = try waymark(["sessions", "show", "1", "--store", store])
        #expect(show.stdoutText.contains("\n  label:      commute, iOS 17\n"), "\(show.stdoutText)")
        let showJSON = try waymark(["sessions", "show", "1", "--store", store, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: showJSON.stdout) as? [String: Any])
        #expect(object["label"] as? String == "commute, iOS 17")
    }

    @Test func withoutLabelsTheTableIsAsBefore() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        try replay(into: store)
        let table = try waymark(["sessions", "list", "--store", store]).stdoutText
        #expect(table.hasPrefix("ID  KIND    SOURCE  ") && !table.contains("LABEL"), "\(table)")
    }

    @Test func badLabelsAreUsageErrors() throws {
        for arguments in [["--label", ""], ["--label", "  "], ["--label", "a\nb"], ["--label", "x", "--no-store"]] {
            let r = try waymark(["replay", Self.walk, "--end", "1m"] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("--label"), "\(r.stderr)")
        }
    }

    @Test func olderThanDeletesOnlyOldSessionsAndSaysWhich() throws {
        let sqlite3 = try #require(which("sqlite3"))
        let store = temporaryPath("-store") + "/s.sqlite"
        for _ in 0..<3 { try replay(into: store) }
        // Sessions 1 and 2 began 40 and 8 days ago: the test moves their start, not the clock.
        let aged = try run(
            sqlite3,
            [
                store,
                "UPDATE session SET created_at = created_at - 40 * 86400 WHERE id = 1;"
                    + "UPDATE session SET created_at = created_at - 8 * 86400 WHERE id = 2",
            ])
        #expect(aged.status == 0, "\(aged.stderr)")

        let dry = try waymark(["sessions", "delete", "--older-than", "30d", "--dry-run", "--store", store])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stderr.contains("Would delete 1 session(s) older than 30d"), "\(dry.stderr)")
        #expect(dry.stderr.contains("Nothing was deleted (--dry-run)"), "\(dry.stderr)")
        #expect(dry.stdoutText.split(separator: "\n").count == 2, "the table of what would go: \(dry.stdoutText)")
        #expect(try SessionStore(path: store, mode: .existing).sessions().count == 3)

        let week = try waymark(["sessions", "delete", "--older-than", "1w", "--store", store])
        #expect(week.status == 0, "\(week.stderr)")
        #expect(week.stderr.contains("Deleted 2 session(s) older than 1w"), "\(week.stderr)")
        #expect(week.stderr.contains("): 2, 1 ("), "\(week.stderr)")
        #expect(try SessionStore(path: store, mode: .existing).sessions().map(\.id) == [3])

        let nothing = try waymark(["sessions", "delete", "--older-than", "24h", "--store", store])
        #expect(nothing.status == 0 && nothing.stderr.contains("nothing was deleted"), "\(nothing.stderr)")
        #expect(try SessionStore(path: store, mode: .existing).sessions().map(\.id) == [3])
    }

    @Test(arguments: ["30", "30x", "d", "-3d", "1.5d", "30 d", "99999999999999999w"])
    func aBadAgeIsAUsageErrorThatSaysWhatIsExpected(_ age: String) throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let r = try waymark(["sessions", "delete", "--older-than=\(age)", "--store", store])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("is not an age: give a number and a unit, s, m (minutes), h, d or w"), "\(r.stderr)")
    }

    @Test func deleteTakesAnIdOrAnAgeAndDryRunOnlyWithAnAge() throws {
        #expect(try waymark(["sessions", "delete"]).status == 64)
        #expect(try waymark(["sessions", "delete", "3", "--older-than", "1d"]).status == 64)
        #expect(try waymark(["sessions", "delete", "3", "--dry-run"]).status == 64)
    }
}
