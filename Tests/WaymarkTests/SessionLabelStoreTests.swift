import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// Schema v5: a session's label, and deleting the sessions older than an age (the caller gives
/// "now", so no test reads the wall clock or sleeps).
@Suite struct SessionLabelStoreTests {
    static func session(label: String? = nil, createdAt: Date) -> NewSession {
        NewSession(
            kind: .replay, source: "walk.gpx", settings: "{}", scenario: nil, createdAt: createdAt,
            epoch: SimulationTests.epoch, label: label)
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aLabelIsStoredAndSessionsAreFilteredByIt() throws {
        let store = try SessionStore(path: StoreTests.newStorePath())
        let a = try store.beginSession(Self.session(label: "commute, iOS 17", createdAt: Self.now), mode: .durable)
        let b = try store.beginSession(Self.session(createdAt: Self.now), mode: .durable)
        let c = try store.beginSession(Self.session(label: "commute", createdAt: Self.now), mode: .durable)
        let empty = try store.beginSession(Self.session(label: "", createdAt: Self.now), mode: .durable)
        #expect(try store.session(a.id).label == "commute, iOS 17")
        #expect(try store.session(b.id).label == nil)
        #expect(try store.session(empty.id).label == nil, "an empty label is no label")
        #expect(try store.sessions(label: "commute, iOS 17").map(\.id) == [a.id], "exact match only")
        #expect(try store.sessions(label: "commute").map(\.id) == [c.id])
        #expect(try store.sessions(label: "nothing").isEmpty)
        #expect(try store.sessions().count == 4)
    }

    /// A store of schema v4 (sessions without labels) opens, gains the column, keeps its
    /// sessions unlabelled, and stores the label of a new session.
    @Test(.enabled(if: which("sqlite3") != nil, "sqlite3 is installed by scripts/test.sh"))
    func aV4StoreOpensAndGainsTheLabelColumn() throws {
        let sqlite3 = try #require(which("sqlite3"))
        let path = StoreTests.newStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try StoreSchema.createStore(at: path, upTo: "v4: checked columns")
        let insert = try run(
            sqlite3,
            [
                path,
                "INSERT INTO session (kind, source, settings, created_at, epoch, outcome, duration) "
                    + "VALUES ('replay', 'old.gpx', '{}', 1700000000, 1700000000, 'completed', 60)",
            ])
        #expect(insert.status == 0, "\(insert.stderr)")
        let before = try run(sqlite3, [path, "SELECT label FROM session"])
        #expect(before.status != 0 && before.stderr.contains("no such column"), "\(before.stderr)")

        let store = try SessionStore(path: path, mode: .existing)
        let old = try #require(try store.sessions().first)
        #expect(old.source == "old.gpx" && old.label == nil && old.outcome == .completed)
        let new = try store.beginSession(Self.session(label: "after", createdAt: Self.now), mode: .durable)
        #expect(try store.session(new.id).label == "after")
        let migrations = try run(sqlite3, [path, "SELECT identifier FROM grdb_migrations ORDER BY rowid"])
        #expect(
            migrations.stdoutText.hasSuffix(
                "v4: checked columns\nv5: session labels\nv6: session identity and forwarding\n"),
            "\(migrations.stdoutText)")
        // The column is checked like the others: text (a number given becomes text) or NULL, never empty.
        let bad = try run(sqlite3, [path, "UPDATE session SET label = X'FFFE' WHERE id = \(new.id)"])
        #expect(bad.status != 0 && bad.stderr.contains("constraint failed"), "\(bad.stderr)")
        let emptyLabel = try run(sqlite3, [path, "UPDATE session SET label = '' WHERE id = \(new.id)"])
        #expect(emptyLabel.status != 0, "\(emptyLabel.stderr)")
    }

    @Test func sessionsOlderThanTheCutoffAreDeletedWithTheirRows() async throws {
        let store = try SessionStore(path: StoreTests.newStorePath())
        let day = 86_400.0
        let old = try store.beginSession(Self.session(createdAt: Self.now - 40 * day), mode: .durable)
        #expect(old.record(AuditEvent(offset: .seconds(1), kind: .started(source: "walk.gpx", iosVersion: .newest))))
        try old.finish(outcome: .completed, duration: .seconds(1), endedAt: Self.now - 40 * day)
        let young = try store.beginSession(Self.session(createdAt: Self.now - 10 * day), mode: .durable)
        try young.finish(outcome: .completed, duration: .seconds(1), endedAt: Self.now - 10 * day)
        // Still recording, in this (live) process: kept, however old.
        let running = try store.beginSession(Self.session(createdAt: Self.now - 50 * day), mode: .durable)
        let cutoff = Self.now - 30 * day

        let dry = try store.deleteSessions(createdBefore: cutoff, dryRun: true)
        #expect(dry.map(\.id) == [old.id])
        #expect(dry.first?.eventCount == 1)
        #expect(try store.sessions().count == 3, "a dry run deletes nothing")

        let deleted = try store.deleteSessions(createdBefore: cutoff)
        #expect(deleted.map(\.id) == [old.id])
        #expect(try store.sessions().map(\.id) == [running.id, young.id])
        #expect(try store.deleteSessions(createdBefore: cutoff).isEmpty)
    }
}
