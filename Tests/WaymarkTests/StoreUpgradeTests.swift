import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// Issue 27, items 9 and 10: bringing a v3 store up to date hides nothing without a word, gives
/// back what it set aside, and keeps the user's triggers and indexes.
@Suite(
    .enabled(
        if: which("sqlite3") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "sqlite3 is installed by scripts/test.sh; the tests run the built waymark"))
struct StoreUpgradeTests {
    /// A v3 store of three sessions, 1, 2 and 7, copied from a store of today; `edits` then run
    /// on it. Returns its path and each session's location and event counts.
    static func v3Store(edits: String) async throws -> (path: String, locations: [Int64: Int], events: [Int64: Int]) {
        let sqlite3 = try #require(which("sqlite3"))
        let source = StoreTests.newStorePath()
        let sourceStore = try SessionStore(path: source)
        var ids: [Int64] = []
        for _ in 0..<3 { ids.append(try await StoreTests.runBusyScenario(into: sourceStore, mode: .batched(50)).2.id) }
        #expect(ids == [1, 2, 3])
        let path = StoreTests.newStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try StoreSchema.createStore(at: path, upTo: "v3: codes of the wake-up services")
        // Session 3 becomes 7 (ids 4 to 6 were used and deleted, as after `sessions delete`).
        let copy = """
            ATTACH '\(source)' AS v4;
            INSERT INTO origin SELECT * FROM v4.origin;
            INSERT INTO session SELECT \(CheckedColumnTests.sessionColumnsOfV4) FROM v4.session;
            INSERT INTO location SELECT * FROM v4.location;
            INSERT INTO event SELECT * FROM v4.event;
            UPDATE session SET id = 7 WHERE id = 3;
            UPDATE location SET id = id - (3 << 40) + (7 << 40) WHERE id >> 40 = 3;
            UPDATE event SET id = id - (3 << 40) + (7 << 40) WHERE id >> 40 = 3;
            """
        let r = try run(sqlite3, [path, copy + edits])
        #expect(r.status == 0, "\(r.stderr)")
        var locations: [Int64: Int] = [:]
        var events: [Int64: Int] = [:]
        for (old, new) in [(Int64(1), Int64(1)), (2, 2), (3, 7)] {
            let info = try sourceStore.session(old)
            locations[new] = info.locationCount
            events[new] = info.eventCount - info.locationCount  // event rows only
        }
        return (path, locations, events)
    }

    static func waymark(_ arguments: [String]) throws -> ProcessResult {
        try run(Paths.waymark.path, arguments)
    }

    /// Rows a v4 check refuses: session 2's start is text that is no time, session 7's epoch is
    /// and its pid text; a location of session 7 has text for its speed (a value that may be
    /// empty) and one of session 1 no latitude (one that must be there).
    static let badRows = """
        UPDATE session SET created_at = 'yesterday' WHERE id = 2;
        UPDATE session SET epoch = 'soon', pid = 'abc' WHERE id = 7;
        UPDATE location SET speed = 'fast' WHERE id = (SELECT min(id) FROM location WHERE id >> 40 = 7);
        UPDATE location SET latitude = NULL WHERE id = (SELECT max(id) FROM location WHERE id >> 40 = 1);
        """

    @Test func theUpgradeSaysWhatItSetAsideAndRestoreBringsItBack() async throws {
        let (path, locations, _) = try await Self.v3Store(edits: Self.badRows)

        // The command that brings the store up to date says what it set aside, and where.
        let first = try Self.waymark(["sessions", "list", "--store", path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdoutText.split(separator: "\n").dropFirst().map { $0.prefix(3) } == [" 1 "], "\(first.stdoutText)")
        let warning = try #require(
            first.stderr.split(separator: "\n").first {
                $0.hasPrefix("waymark: warning: \(path): bringing the store up to date")
            },
            "\(first.stderr)")
        #expect(
            warning.contains(
                "2 session(s) in table rejected_session: session 2 (walk.gpx: created_at is 'yesterday'), session 7 (walk.gpx: epoch is 'soon', pid is 'abc')"
            ), "\(warning)")
        let hidden = locations[2]! + locations[7]! - 1
        #expect(warning.contains("their \(hidden) location(s)"), "\(warning)")
        #expect(
            warning.contains("2 location row(s) and 0 event row(s) (of session 1, 7) in rejected_location"),
            "\(warning)")
        #expect(warning.contains("`waymark sessions restore --all --store \(path)`"), "\(warning)")

        // Every listing says so, until they are back.
        let again = try Self.waymark(["sessions", "list", "--store", path])
        #expect(!again.stderr.contains("bringing the store up to date"), "\(again.stderr)")
        #expect(
            again.stderr.contains("waymark: note: \(path): set aside when the store was brought up to date"),
            "\(again.stderr)")
        #expect(again.stderr.contains("session 2 (walk.gpx: created_at is 'yesterday')"), "\(again.stderr)")
        let json = try Self.waymark(["sessions", "list", "--store", path, "--json"])
        #expect(json.stderr.contains("waymark: note:"), "\(json.stderr)")

        // Asked for by number, a session set aside says where it is.
        let show = try Self.waymark(["sessions", "show", "2", "--store", path])
        #expect(
            show.status == 66
                && show.stderr.contains(
                    "has session 2 only set aside, in table rejected_session (created_at is 'yesterday'); "
                        + "`waymark sessions restore 2` brings it back"),
            "\(show.stderr)")

        // Bring back what can be mended.
        let restore = try Self.waymark(["sessions", "restore", "--all", "--store", path])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(
            restore.stderr.contains("Session 2: brought back (created_at was 'yesterday', now "), "\(restore.stderr)")
        #expect(restore.stderr.contains("(its epoch)"), "\(restore.stderr)")
        #expect(
            restore.stderr.contains(
                "Session 7: brought back (epoch was 'soon', now 2024-05-01T08:00:00.000Z (from its first location); pid was 'abc', now empty)"
            ), "\(restore.stderr)")
        #expect(
            restore.stderr.contains("Session 1: its rows brought back; \(locations[1]! - 1) location(s)"),
            "\(restore.stderr)")
        #expect(
            restore.stderr.contains(
                "1 location row(s) and 0 event row(s) cannot be mended and stay set aside (the first: location row"),
            "\(restore.stderr)")
        #expect(restore.stderr.contains("latitude is NULL"), "\(restore.stderr)")

        let store = try SessionStore(path: path, mode: .existing)
        let sessions = try store.sessions()
        #expect(sessions.map(\.id) == [7, 2, 1])
        #expect(sessions.map(\.locationCount) == [locations[7]!, locations[2]!, locations[1]! - 1])
        let seven = try store.session(7)
        #expect(seven.epoch == SimulationTests.epoch)
        #expect(seven.outcomeDetail?.contains("restored from rejected_session: epoch was 'soon'") == true, "\(seven)")
        // The mended location lost only its bad speed.
        let mended = try #require(try store.locations(of: 7).first)
        #expect(mended.location.speed == -1 && mended.location.coordinate.latitude != 0)
        let two = try store.session(2)
        #expect(two.createdAt == two.epoch)
        // What cannot be mended is still said.
        let last = try Self.waymark(["sessions", "list", "--store", path])
        #expect(last.stderr.contains("1 location row(s) and 0 event row(s) (of session 1)"), "\(last.stderr)")
        #expect(!last.stderr.contains("rejected_session"), "\(last.stderr)")
        let sqlite3 = try #require(which("sqlite3"))
        let tables = try run(
            sqlite3, [path, "SELECT group_concat(name, ',') FROM sqlite_master WHERE name LIKE 'rejected%'"])
        #expect(tables.stdoutText == "rejected_location\n", "\(tables.stdoutText)")
        #expect(try store.integrityCheck() == ["ok"])
        // Nothing more to bring back of session 2, and no session 5 was set aside.
        let none = try Self.waymark(["sessions", "restore", "2", "5", "--store", path])
        #expect(none.status == 66 && none.stderr.contains("has nothing of session 2 set aside"), "\(none.stderr)")
    }

    /// The same through the library: a replay (here a session begun in code) also says it.
    @Test func openingForARecordingReportsWhatWasSetAside() async throws {
        let (path, _, _) = try await Self.v3Store(edits: Self.badRows)
        let store = try SessionStore(path: path)
        let aside = try #require(store.setAsideByUpgrade)
        #expect(aside.sessions.map(\.id) == [2, 7])
        #expect(aside.sessions.first?.problems == ["created_at is 'yesterday'"])
        #expect(aside.rejectedLocations == [1: 1, 7: 1])
        #expect(try SessionStore(path: path).setAsideByUpgrade == nil)
        #expect(try store.setAside() == aside)
    }

    /// Item 10: the v4 rebuild of `session`, `location` and `event` dropped the triggers and
    /// indexes the user had on them; they are made again, and they work.
    @Test func theUsersTriggersAndIndexesOutliveTheUpgrade() async throws {
        let (path, locations, _) = try await Self.v3Store(
            edits: """
                CREATE TABLE mine (what TEXT, n INTEGER);
                CREATE TRIGGER count_locations AFTER INSERT ON location BEGIN INSERT INTO mine VALUES ('location', new.id); END;
                CREATE TRIGGER count_sessions AFTER INSERT ON session BEGIN INSERT INTO mine VALUES ('session', new.id); END;
                CREATE TRIGGER no_event_deletes BEFORE DELETE ON event BEGIN SELECT RAISE(ABORT, 'mine'); END;
                CREATE INDEX location_by_time ON location(time);
                CREATE INDEX event_by_name ON event(name) WHERE name != 'fix';
                """)
        let store = try SessionStore(path: path)
        let sqlite3 = try #require(which("sqlite3"))
        let schema = try run(
            sqlite3,
            [
                path,
                "SELECT type || ' ' || name || ' ' || tbl_name FROM sqlite_master WHERE name IN ('count_locations', 'count_sessions', 'no_event_deletes', 'location_by_time', 'event_by_name') ORDER BY name",
            ])
        #expect(
            schema.stdoutText.split(separator: "\n") == [
                "trigger count_locations location", "trigger count_sessions session", "index event_by_name event",
                "index location_by_time location", "trigger no_event_deletes event",
            ], "\(schema.stdoutText)")
        // They fire: a new session and its locations are counted; the user's veto holds.
        let (_, _, recorder) = try await StoreTests.runBusyScenario(into: store, mode: .batched(50))
        let counted = try run(sqlite3, [path, "SELECT what, count(*) FROM mine GROUP BY 1 ORDER BY 1"])
        #expect(
            counted.stdoutText == "location|\(try store.session(recorder.id).locationCount)\nsession|1\n",
            "\(counted.stdoutText)")
        let veto = try run(sqlite3, [path, "DELETE FROM event WHERE id = (SELECT min(id) FROM event)"])
        #expect(veto.status != 0 && veto.stderr.contains("mine"), "\(veto.stderr)")
        #expect(try store.sessions().count == 4)
        _ = locations
    }
}
