import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// Issue 27, item 10: bringing a v3 store up to date keeps the user's triggers and indexes.
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
