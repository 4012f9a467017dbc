import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// The session store: what goes in comes back out, every field; foreign, damaged and newer
/// files are refused with an error that names them; sessions left by a dead process are marked.
@Suite struct StoreTests {
    static func newStorePath() -> String { temporaryPath("-store") + "/sub/dir/waymark.sqlite" }

    static func session(_ kind: NewSession.Kind = .replay, epoch: Date = SimulationTests.epoch, pid: Int32 = getpid())
        -> NewSession
    {
        NewSession(
            kind: kind, source: "walk.gpx", settings: "{\"arguments\":[]}", scenario: "timeline: []\n",
            createdAt: Date(timeIntervalSince1970: 1_800_000_000), epoch: epoch, processID: pid)
    }

    /// Runs the busy scenario (prompts, background, suspension, fetch, reduced accuracy) into a
    /// store and returns the simulation, its audit log and the session id.
    static func runBusyScenario(into store: SessionStore, mode: SessionRecorder.Mode) async throws -> (
        Simulation, AuditRecorder, SessionRecorder
    ) {
        let simulation = Simulation(scenario: SimulationTests.busyScenario, epoch: SimulationTests.epoch)
        let recorder = try store.beginSession(session(), mode: mode)
        simulation.addObserver(recorder)
        let audit = AuditRecorder()
        simulation.addObserver(audit)
        try await simulation.run(try SimulationTests.source())
        try recorder.finish(
            outcome: .completed, duration: simulation.now, endedAt: Date(timeIntervalSince1970: 1_800_000_100))
        return (simulation, audit, recorder)
    }

    @Test(arguments: [SessionRecorder.Mode.durable, .batched(7)])
    func aSessionComesBackAsItWasRecorded(mode: SessionRecorder.Mode) async throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let (simulation, audit, recorder) = try await Self.runBusyScenario(into: store, mode: mode)
        #expect(simulation.tutorialApp!.stored.count > 10)
        #expect(simulation.tutorialApp!.stored.contains { $0.appState == .background })
        #expect(
            simulation.tutorialApp!.stored.contains { $0.reason == .resumed }
                || simulation.tutorialApp!.stored.contains { $0.appState != .active })

        let back = try SessionStore(path: path, mode: .existing)
        let locations = try back.locations(of: recorder.id)
        #expect(locations.count == simulation.tutorialApp!.stored.count)
        #expect(locations.map { $0.ndjson() } == simulation.tutorialApp!.stored.map { $0.ndjson() })
        for (a, b) in zip(locations, simulation.tutorialApp!.stored) {
            #expect(a.offset == b.offset && a.index == b.index && a.segment == b.segment)
            #expect(a.location.provenance == b.location.provenance)
            #expect(abs(a.location.timestamp.timeIntervalSince(b.location.timestamp)) < 1e-6)
        }
        var lines: [String] = []
        try back.forEachEventLine(of: recorder.id) { lines.append($0) }
        #expect(lines.joined() == audit.ndjson(epoch: SimulationTests.epoch), "the store holds the audit log")

        let info = try back.session(recorder.id)
        #expect(info.outcome == .completed && info.kind == "replay" && info.source == "walk.gpx")
        #expect(info.locationCount == locations.count && info.eventCount == audit.events.count)
        #expect(info.fixCount == simulation.summary.fixes)
        #expect(info.scenario == "timeline: []\n" && info.settings == "{\"arguments\":[]}")
        #expect(info.duration == simulation.now.inSeconds)
        let b = try back.breakdown(of: recorder.id)
        #expect(b.byAppState.map(\.1).reduce(0, +) == locations.count)
        #expect(try back.integrityCheck() == ["ok"])
    }

    /// A long session whose delivered and other fixes interleave across many pages: the audit
    /// log and the locations still come back whole and in order.
    /// Several openers of a store that does not exist yet (parallel `waymark replay` runs, say)
    /// take turns: none sees the schema half made by another.
    @Test func storesOpenedAtTheSameMomentAllOpen() throws {
        for _ in 0..<20 {
            let path = Self.newStorePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let failures = Failures()
            let threads = (0..<6).map { _ in
                Thread {
                    do { _ = try SessionStore(path: path) } catch { failures.add("\(error)") }
                }
            }
            for thread in threads { thread.start() }
            while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
            #expect(failures.all.isEmpty, "\(failures.all)")
        }
    }

    /// Issue 15, item 7: anyone who can read a shared directory could flock it and block every
    /// store command in it forever. The store's directory is no longer locked; a lock held on
    /// the store's lock file is waited for a while, then reported with the process that holds
    /// it.
    @Test(.timeLimit(.minutes(45))) func aLockOnTheDirectoryDoesNotBlockAndOneOnTheStoreIsNamed() throws {
        let path = Self.newStorePath()
        let directory = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: temporaryRoot(of: path)) }
        _ = try SessionStore(path: path)
        // Close-on-exec: a program another test starts meanwhile must not inherit these
        // descriptors, whose flocks it would then hold until it exits (a clean-clone run saw
        // the store still locked after close(storeFD)).
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(dirFD >= 0 && flock(dirFD, LOCK_EX) == 0)
        defer { close(dirFD) }
        _ = try SessionStore(path: path, mode: .existing)  // returns: the directory's lock is not waited for

        let storeFD = open(SessionStore.lockPath(of: path), O_RDONLY | O_CLOEXEC)
        #expect(storeFD >= 0 && flock(storeFD, LOCK_EX) == 0)
        do {
            _ = try SessionStore(path: path, mode: .existing, lockAttempts: 2)
            Issue.record("opened a store another holder has locked")
        } catch let error as StoreError {
            #expect(error.kind == .busy)
            #expect("\(error)".contains("process \(getpid())"), "\(error)")
        }
        close(storeFD)
        _ = try SessionStore(path: path, mode: .existing, lockAttempts: 2)  // free again
    }

    /// The directory `newStorePath()` made under the temporary directory.
    func temporaryRoot(of path: String) -> String {
        var p = path as NSString
        for _ in 0..<3 { p = p.deletingLastPathComponent as NSString }
        return p as String
    }

    /// Errors from several threads.
    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ text: String) { lock.withLock { list.append(text) } }
        var all: [String] { lock.withLock { list } }
    }

    @Test func aLongSessionReadsBackAcrossPages() async throws {
        var scenario = Scenario()
        scenario.info.backgroundModes = [.location]
        scenario.timeline = (0..<330).flatMap { i in
            [.init(at: .seconds(600 * i + 100), .background), .init(at: .seconds(600 * i + 550), .foreground)]
        }
        let simulation = Simulation(scenario: scenario, epoch: SimulationTests.epoch)
        let store = try SessionStore(path: Self.newStorePath())
        let recorder = try store.beginSession(Self.session(), mode: .batched(1000))
        simulation.addObserver(recorder)
        let audit = AuditRecorder()
        simulation.addObserver(audit)
        try await simulation.run(try SimulationTests.source(loops: 300))
        try recorder.finish(outcome: .completed, duration: simulation.now, endedAt: SimulationTests.epoch)
        let fixEvents = audit.events.filter { if case .fix = $0.kind { true } else { false } }
        #expect(
            simulation.tutorialApp!.stored.count > 4096
                && fixEvents.count - simulation.tutorialApp!.stored.count > 4096,
            "\(simulation.tutorialApp!.stored.count) of \(fixEvents.count)")
        var lines: [String] = []
        try store.forEachEventLine(of: recorder.id) { lines.append($0) }
        #expect(lines.count == audit.events.count)
        #expect(lines.joined() == audit.ndjson(epoch: SimulationTests.epoch))
        #expect(
            try store.locations(of: recorder.id).map { $0.ndjson() }
                == simulation.tutorialApp!.stored.map { $0.ndjson() })
    }

    /// Without retaining, the simulated app keeps in memory only what fetch has yet to sync;
    /// the run, the counts and what fetch syncs are the same.
    @Test func aSimulationNeedNotHoldEveryLocation() async throws {
        final class Collecting: FetchSink {
            var synced: [StoredLocation] = []
            func sync(_ locations: ArraySlice<StoredLocation>) throws { synced += locations }
        }
        var results: [(stored: [StoredLocation], count: Int, synced: [StoredLocation], audit: String)] = []
        for retains in [true, false] {
            let simulation = Simulation(scenario: SimulationTests.busyScenario, epoch: SimulationTests.epoch)
            simulation.tutorialApp!.retainsStoredLocations = retains
            let sink = Collecting()
            simulation.tutorialApp!.fetchSink = sink
            let audit = AuditRecorder()
            simulation.addObserver(audit)
            try await simulation.run(try SimulationTests.source(loops: 4))
            results.append(
                (
                    simulation.tutorialApp!.stored, simulation.tutorialApp!.storedCount, sink.synced,
                    audit.ndjson(epoch: SimulationTests.epoch)
                ))
        }
        #expect(results[0].audit == results[1].audit)
        #expect(results[0].count == results[1].count && results[0].count == results[0].stored.count)
        #expect(results[0].synced == results[1].synced && !results[0].synced.isEmpty)
        #expect(results[1].stored.count < results[0].stored.count)
        #expect(results[1].stored == Array(results[0].stored.suffix(results[1].stored.count)), "the unsynced tail")

        // An app that does not fetch keeps nothing.
        let simulation = Simulation(scenario: Scenario(), epoch: SimulationTests.epoch)
        simulation.tutorialApp!.retainsStoredLocations = false
        try await simulation.run(try SimulationTests.source())
        #expect(simulation.tutorialApp!.stored.isEmpty && simulation.tutorialApp!.storedCount > 50)
    }

    /// A location whose origin row is gone (a store damaged outside Waymark, foreign keys off)
    /// is not sent as a fix from nowhere: the page stops with an error naming the row, and the
    /// rows before it still read.
    @Test func aLocationWithoutItsOriginStopsThePageNamingIt() throws {
        guard let sqlite3 = which("sqlite3") else { return }
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let recorder = try store.beginSession(Self.session(.record), mode: .durable)
        let origins: [Provenance.Source] = [
            .file(path: "a.gpx", index: 0), .file(path: "a.gpx", index: 1), .gpsd(device: "/dev/x"),
        ]
        for (i, source) in origins.enumerated() {
            let l = Location(
                coordinate: Coordinate(latitude: 1, longitude: Double(i)), horizontalAccuracy: 5,
                timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i)),
                provenance: Provenance(source: source, isSimulatedBySoftware: true, fixMode: .twoD))
            let record = AuditEvent.FixRecord(
                index: i, segment: 0, decision: .delivered, reason: .foreground, appState: .active,
                authorization: .authorizedWhenInUse, accuracy: .fullAccuracy, coordinate: l.coordinate, delivered: l,
                backgroundTimeRemaining: nil, indicator: false)
            #expect(recorder.record(AuditEvent(offset: .seconds(i), kind: .fix(record))))
        }
        try recorder.finish(
            outcome: .stopped, duration: .seconds(3), endedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let whole = try store.transferPage(session: recorder.id, after: -1)
        #expect(whole.locations.map(\.originName) == ["a.gpx", "a.gpx", "/dev/x"])
        let sequences = whole.locations.map(\.sequence)

        _ = try run(sqlite3, [path, "DELETE FROM origin WHERE kind = 'gpsd'"])
        do {
            _ = try store.transferPage(session: recorder.id, after: -1)
            Issue.record("a location without its origin was sent")
        } catch let error as StoreError {
            #expect(error.kind == .corrupt)
            #expect(error.message.contains("location \(sequences[2]) of session \(recorder.id)"))
        }
        let before = try store.transferPage(session: recorder.id, after: -1, limit: 2)
        #expect(before.locations.map(\.originName) == ["a.gpx", "a.gpx"])
    }

    /// Every `Location` field survives, and "invalid" is NULL for the sqlite3 shell.
    @Test func everyLocationFieldSurvives() throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let recorder = try store.beginSession(Self.session(.record), mode: .durable)
        let full = Location(
            coordinate: Coordinate(latitude: -33.8567844, longitude: 151.2152967), altitude: 12.25,
            ellipsoidalAltitude: 34.5, horizontalAccuracy: 3.5, verticalAccuracy: 4.75, speed: 1.5, speedAccuracy: 0.25,
            course: 271.5, courseAccuracy: 2.5, timestamp: Date(timeIntervalSince1970: 1_714_550_400.125),
            provenance: Provenance(
                source: .gpsd(device: "/dev/ttyACM0"), isSimulatedBySoftware: false, fixMode: .threeD,
                satellitesUsed: 9, hdop: 0.9, vdop: 1.1, pdop: 1.4, differential: .rtkFixed, speedIsDerived: false,
                courseIsDerived: true))
        let sparse = Location(
            coordinate: Coordinate(latitude: 89.9999999, longitude: -180), horizontalAccuracy: 65,
            timestamp: Date(timeIntervalSince1970: 1_714_550_401),
            provenance: Provenance(
                source: .file(path: "a b/ü.gpx", index: 41), isSimulatedBySoftware: true, fixMode: .twoD,
                speedIsDerived: true))
        for (i, l) in [full, sparse].enumerated() {
            let record = AuditEvent.FixRecord(
                index: i, segment: i, decision: .delivered, reason: i == 0 ? .foreground : .backgroundSession,
                appState: i == 0 ? .active : .background, authorization: .authorizedAlways, accuracy: .fullAccuracy,
                coordinate: l.coordinate, delivered: l, backgroundTimeRemaining: nil, indicator: false)
            #expect(recorder.record(AuditEvent(offset: .milliseconds(1500 * i), kind: .fix(record))))
        }
        try recorder.finish(
            outcome: .stopped, duration: .seconds(2), endedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let back = try store.locations(of: recorder.id)
        #expect(back.count == 2)
        #expect(back[0].location.provenance == full.provenance && back[1].location.provenance == sparse.provenance)
        #expect(back[0].location == full)
        #expect(back[1].location.hasValidAltitude == false && back[1].location.speed == -1)
        #expect(back[1].location.course == -1 && back[1].location.ellipsoidalAltitude == nil)
        #expect(back[1].appState == .background && back[1].reason == .backgroundSession && back[1].segment == 1)
        #expect(back[1].offset == .milliseconds(1500))

        if let sqlite3 = which("sqlite3") {
            let r = try run(
                sqlite3,
                [
                    path,
                    "SELECT quote(altitude), quote(speed), quote(course), fix_mode, origin_kind, app_state, decision, time FROM location_view ORDER BY seq",
                ])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(
                r.stdoutText
                    == "12.25|1.5|271.5|threeD|gpsd|active|delivered|2024-05-01T08:00:00.125Z\n"
                    + "NULL|NULL|NULL|twoD|file|background|delivered|2024-05-01T08:00:01.000Z\n")
        }
    }

    /// Every case of every enumeration stored as a code has one (an unlisted case would be
    /// stored as code 0, silently), and the `code` table names each as its raw value.
    @Test func everyEnumerationCaseHasACode() throws {
        func covers<T: CaseIterable & Hashable>(_ table: [T], _ type: T.Type) -> Bool {
            Set(table) == Set(T.allCases) && table.count == T.allCases.count
        }
        #expect(covers(StoreCodes.fixMode, Provenance.FixMode.self))
        #expect(covers(StoreCodes.differential, Provenance.Differential.self))
        #expect(covers(StoreCodes.appState, AppState.self))
        #expect(covers(StoreCodes.decision, FixDecision.self))
        #expect(covers(StoreCodes.reason, FixReason.self))
        #expect(covers(StoreCodes.authorization, AuthorizationStatus.self))
        #expect(covers(StoreCodes.accuracy, AccuracyAuthorization.self))
        let sqlite3 = try #require(which("sqlite3"))
        let path = Self.newStorePath()
        _ = try SessionStore(path: path)
        let r = try run(sqlite3, [path, "SELECT name FROM code WHERE kind = 'reason' ORDER BY code"])
        #expect(r.stdoutText == StoreCodes.reason.map { $0.rawValue + "\n" }.joined())
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(
            SessionStore.defaultPath(environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/home/u"])
                == "/x/data/waymark/waymark.sqlite")
        #expect(
            SessionStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/waymark/waymark.sqlite")
        // The spec says a relative XDG_DATA_HOME is invalid and must be ignored.
        #expect(
            SessionStore.defaultPath(environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"])
                == "/h/.local/share/waymark/waymark.sqlite")
    }

    @Test func aMissingStoreIsAnErrorForReaders() throws {
        let path = Self.newStorePath()
        #expect(throws: StoreError.self) { try SessionStore(path: path, mode: .existing) }
        do {
            _ = try SessionStore(path: path, mode: .existing)
        } catch let e as StoreError {
            #expect(e.kind == .missing && e.description.hasPrefix(path))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let path = temporaryPath(".sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: StoreError.self) { try SessionStore(path: path) }
        #expect(error.kind == .notADatabase, "\(error)")
        #expect(error.description.contains(path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftAlone() throws {
        let sqlite3 = try #require(which("sqlite3"), "sqlite3 is installed by scripts/test.sh")
        let path = temporaryPath(".sqlite")
        #expect(
            try run(sqlite3, [path, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = try #require(throws: StoreError.self) { try SessionStore(path: path) }
        #expect(error.kind == .foreign && error.message.contains("notes"), "\(error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing was written to it")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// A store of the first round (schema v1) learns the rebuilt device's codes and the
    /// positioning column (v2), and keeps its sessions.
    @Test func aFirstRoundStoreIsMigratedToV2() async throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let (_, _, recorder) = try await Self.runBusyScenario(into: store, mode: .durable)
        let sqlite3 = try #require(which("sqlite3"))
        // Back to v1, as the first round left it: no v2 migration, its view, none of its codes.
        let firstNew = StoreCodes.reason.firstIndex(of: .alwaysGranted)!
        let back =
            "DELETE FROM grdb_migrations WHERE identifier LIKE 'v2%'; DROP VIEW location_view; "
            + StoreSchema.locationView(positioning: false)
            + "DELETE FROM code WHERE kind = 'positioning' OR (kind = 'reason' AND code >= \(firstNew));"
        #expect(try run(sqlite3, [path, back]).status == 0)
        #expect(try run(sqlite3, [path, "SELECT positioning FROM location_view LIMIT 1"]).status != 0)

        let reopened = try SessionStore(path: path, mode: .existing)
        #expect(try reopened.locations(of: recorder.id).count > 10)
        let names = try run(
            sqlite3,
            [path, "SELECT name FROM code WHERE kind = 'reason' AND code >= \(firstNew) ORDER BY code"]
        ).stdoutText
        #expect(
            names.split(separator: "\n") == [
                "alwaysGranted", "awaitingAlways", "notInUse", "alwaysPromptShowing", "backgroundWake",
                "backgroundAudio", "significantLocationChange", "requestLocation",
            ])
        let positioning = try run(
            sqlite3, [path, "SELECT DISTINCT positioning FROM location_view ORDER BY positioning"]
        ).stdoutText
        #expect(
            positioning.split(separator: "\n").allSatisfy { ["satellite", "reduced"].contains($0) }, "\(positioning)")
        #expect(positioning.contains("reduced"), "the busy scenario turns Precise Location off")
    }

    /// A store made before the wake-up services learns the names of their reasons (v3), and keeps
    /// its sessions.
    @Test func aV2StoreIsMigratedToV3() async throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let (_, _, recorder) = try await Self.runBusyScenario(into: store, mode: .durable)
        let sqlite3 = try #require(which("sqlite3"))
        let firstNew = StoreCodes.reason.firstIndex(of: .backgroundWake)!
        let back =
            "DELETE FROM grdb_migrations WHERE identifier LIKE 'v3%'; "
            + "DELETE FROM code WHERE kind = 'reason' AND code >= \(firstNew);"
        #expect(try run(sqlite3, [path, back]).status == 0)
        let reopened = try SessionStore(path: path, mode: .existing)
        #expect(try reopened.locations(of: recorder.id).count > 10)
        let names = try run(
            sqlite3, [path, "SELECT name FROM code WHERE kind = 'reason' AND code >= \(firstNew) ORDER BY code"]
        ).stdoutText
        #expect(
            names.split(separator: "\n") == [
                "backgroundWake", "backgroundAudio", "significantLocationChange", "requestLocation",
            ])
    }

    @Test func aStoreFromANewerWaymarkIsRefused() throws {
        let path = Self.newStorePath()
        _ = try SessionStore(path: path)
        let sqlite3 = try #require(which("sqlite3"))
        #expect(try run(sqlite3, [path, "INSERT INTO grdb_migrations VALUES ('v9: from the future')"]).status == 0)
        let error = try #require(throws: StoreError.self) { try SessionStore(path: path) }
        #expect(error.kind == .newer, "\(error)")
    }

    /// A store whose pages were overwritten: an error, never a crash.
    @Test func aDamagedStoreGivesAnError() async throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        _ = try await Self.runBusyScenario(into: store, mode: .batched(64))
        // Checkpoint into the main file, then damage its pages after the first.
        _ = try run(which("sqlite3")!, [path, "PRAGMA wal_checkpoint(TRUNCATE);"])
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()
        do {
            let damaged = try SessionStore(path: path, mode: .existing)
            _ = try damaged.sessions()
            _ = try damaged.locations(of: 1)
            Issue.record("a damaged store read without an error")
        } catch let e as StoreError {
            #expect([.corrupt, .notADatabase].contains(e.kind), "\(e)")
            #expect(e.description.hasPrefix(path))
        }
    }

    /// A session whose process died is `interrupted`; the next session starts normally.
    @Test func aSessionLeftByADeadProcessIsInterrupted() throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let dead = try run("/bin/sh", ["-c", "echo $$"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let orphan = try store.beginSession(Self.session(.record, pid: Int32(dead)!), mode: .durable)
        let event = AuditEvent(offset: .seconds(3), kind: .started(source: "gpsd", iosVersion: .newest))
        #expect(orphan.record(event))
        #expect(try store.session(orphan.id).outcome == .interrupted, "shown as interrupted at once")
        let next = try store.beginSession(Self.session(.record), mode: .durable)
        #expect(next.id == orphan.id + 1)
        #expect(try store.session(next.id).outcome == .running, "this process is alive")
        let sqlite3 = try #require(which("sqlite3"))
        let r = try run(sqlite3, [path, "SELECT outcome, duration FROM session WHERE id = \(orphan.id)"])
        #expect(r.stdoutText == "interrupted|3.0\n", "and marked so in the file")
    }

    @Test func deletingASessionDeletesItsLocationsAndEvents() async throws {
        let path = Self.newStorePath()
        let store = try SessionStore(path: path)
        let (_, _, first) = try await Self.runBusyScenario(into: store, mode: .batched(100))
        let (_, _, second) = try await Self.runBusyScenario(into: store, mode: .batched(100))
        #expect(try store.deleteSession(first.id))
        #expect(try !store.deleteSession(first.id))
        #expect(try store.sessions().map(\.id) == [second.id])
        let sqlite3 = try #require(which("sqlite3"))
        let r = try run(
            sqlite3,
            [
                path,
                "SELECT count(*) FROM location_view WHERE session_id = \(first.id); SELECT count(*) FROM event_view WHERE session_id = \(first.id)",
            ])
        #expect(r.stdoutText == "0\n0\n")
        #expect(throws: StoreError.self) { try store.session(first.id) }
    }
}

/// Another process that holds SQLite's write lock (issue 15, item 7): an ordinary statement gives
/// up after 5 s with a busy error; a recording waits as long as the lock is held, and hears how
/// long. Time here is the lock waiting's injected sleep, so the test waits for nothing: the
/// other process is the `sqlite3` shell, in a transaction until the test tells it to commit.
@Suite(.enabled(if: which("sqlite3") != nil, "sqlite3 is installed by scripts/test.sh"))
struct StoreLockWaitTests {
    /// The `sqlite3` shell on a store, holding its write lock from ``take()`` to ``release()``.
    final class LockHolder: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        private let lock = NSLock()
        private var released = false

        init(path: String) throws {
            process.executableURL = URL(fileURLWithPath: which("sqlite3")!)
            process.arguments = [path]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// Begins a write transaction and returns once the shell has it.
        func take() throws {
            // The shell waits for a writer that holds the lock now; "locked" follows its BEGIN.
            input.fileHandleForWriting.write(Data(".timeout 30000\nBEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("locked") {
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { throw POSIXError(.EIO) }
                seen += more
            }
        }

        /// Commits, once, and returns once the shell has committed: the lock is free then, not
        /// at some later moment the waiter could miss on a loaded machine.
        func release() {
            lock.lock()
            defer { lock.unlock() }
            guard !released else { return }
            released = true
            input.fileHandleForWriting.write(Data("COMMIT;\nSELECT 'released';\n".utf8))
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("released") {
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { break }
                seen += more
            }
            input.fileHandleForWriting.write(Data(".quit\n".utf8))
        }

        func end() {
            release()
            process.waitUntilExit()
        }
    }

    /// The lock waiting's sleep: virtual time, which releases the holder once it reaches `after`.
    final class VirtualTime: @unchecked Sendable {
        private let lock = NSLock()
        private var total: Duration = .zero
        var releaseAfter: Duration?
        var holder: LockHolder?
        var elapsed: Duration { lock.withLock { total } }
        func reset() { lock.withLock { total = .zero } }
        func sleep(_ d: Duration) {
            let now = lock.withLock {
                total += d
                return total
            }
            if let after = releaseAfter, now >= after {
                holder?.release()
                sched_yield()
            }
        }
    }

    @Test(.timeLimit(.minutes(45)))
    func aRecordingWaitsOutALockThatEndsAnOrdinaryStatement() throws {
        let path = StoreTests.newStorePath()
        let time = VirtualTime()
        let store = try SessionStore(
            path: path, mode: .create, lockAttempts: 200, lockWaiting: LockWaiting(sleep: { time.sleep($0) }))
        let recorder = try store.beginSession(StoreTests.session(.record), mode: .durable)
        let holder = try LockHolder(path: path)
        defer { holder.end() }
        time.holder = holder
        try holder.take()

        // An ordinary statement: 5 s, then a busy error that says so.
        #expect(throws: StoreError.self) { try store.beginSession(StoreTests.session(.record), mode: .durable) }
        #expect(time.elapsed >= .seconds(5) && time.elapsed < .seconds(5) + .milliseconds(60), "\(time.elapsed)")

        // A recording: a lock held for 60 s is waited out, with a notice after 1 s and every 10 s.
        time.reset()
        time.releaseAfter = .seconds(60)
        let notices = NoticeList()
        store.lockWaiting.waitPatiently { notices.append($0) }
        nonisolated(unsafe) var released: Duration?
        recorder.onLockReleased = { released = $0 }
        let event = AuditEvent(offset: .seconds(3), kind: .started(source: "gpsd", iosVersion: .newest))
        #expect(recorder.record(event), "\(String(describing: recorder.failure))")
        #expect(recorder.failure == nil)
        #expect(notices.values.map { Int($0.components.seconds) } == [1, 11, 21, 31, 41, 51], "\(notices.values)")
        #expect(released.map { $0 >= .seconds(60) } == true, "\(String(describing: released))")
        #expect(try store.session(recorder.id).eventCount == 1, "the event waited for is in the store")
    }

    /// A patient wait that is abandoned (a stop signal) fails its statement as busy.
    @Test(.timeLimit(.minutes(45)))
    func anAbandonedWaitFailsAsBusy() throws {
        let path = StoreTests.newStorePath()
        nonisolated(unsafe) var waiting: LockWaiting?
        let time = VirtualTime()
        let lockWaiting = LockWaiting(sleep: { d in
            time.sleep(d)
            if time.elapsed >= .seconds(30) { waiting?.abandon() }
        })
        waiting = lockWaiting
        let store = try SessionStore(path: path, mode: .create, lockAttempts: 200, lockWaiting: lockWaiting)
        let recorder = try store.beginSession(StoreTests.session(.record), mode: .durable)
        let holder = try LockHolder(path: path)
        defer { holder.end() }
        try holder.take()
        store.lockWaiting.waitPatiently { _ in }
        let event = AuditEvent(offset: .seconds(3), kind: .started(source: "gpsd", iosVersion: .newest))
        #expect(!recorder.record(event))
        #expect(recorder.failure?.kind == .busy, "\(String(describing: recorder.failure))")
        #expect(time.elapsed >= .seconds(30) && time.elapsed < .seconds(31))
        // The statements after it (the recording's last ones) still wait the ordinary 5 s.
        time.reset()
        #expect(throws: StoreError.self) { try store.beginSession(StoreTests.session(.record), mode: .durable) }
        #expect(time.elapsed >= .seconds(5) && time.elapsed < .seconds(6), "\(time.elapsed)")
    }

    /// The wait that gave a notice is the one reported when the lock is released, not a short
    /// wait after it.
    @Test func aLongWaitIsReportedOverAShortOneAfterIt() {
        let waiting = LockWaiting(sleep: { _ in })
        waiting.waitPatiently { _ in }
        var tries = 0
        while tries < 60 {
            _ = waiting.shouldRetry(tries: tries)
            tries += 1
        }
        _ = waiting.shouldRetry(tries: 0)
        _ = waiting.shouldRetry(tries: 1)
        let reported = waiting.takeNoticedWait()
        #expect(reported.map { $0 >= .seconds(2) } == true, "\(String(describing: reported))")
        #expect(waiting.takeNoticedWait() == nil)
    }

    final class NoticeList: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Duration] = []
        func append(_ d: Duration) { lock.withLock { list.append(d) } }
        var values: [Duration] { lock.withLock { list } }
    }
}

/// Issue 15, item 4: the store's columns are checked (schema v4), so rows Waymark never writes
/// are refused where they would be written; a store made before is migrated without losing a row.
@Suite(.enabled(if: which("sqlite3") != nil, "sqlite3 is installed by scripts/test.sh"))
struct CheckedColumnTests {
    static let badEdits = [
        "INSERT INTO session (kind, source, settings, created_at, epoch, outcome) VALUES ('replay', 'r.gpx', '{}', 'yesterday', 0, 'completed')",
        "UPDATE location SET latitude = NULL WHERE id = (SELECT min(id) FROM location)",
        "UPDATE location SET longitude = 200 WHERE id = (SELECT min(id) FROM location)",
        "UPDATE location SET fix_index = 'abc' WHERE id = (SELECT min(id) FROM location)",
        "UPDATE location SET time = 1e300 WHERE id = (SELECT min(id) FROM location)",
        "UPDATE event SET name = X'FFFE' WHERE id = (SELECT min(id) FROM event)",
        "UPDATE event SET offset = NULL WHERE id = (SELECT min(id) FROM event)",
        "UPDATE session SET outcome = 'maybe'",
        "UPDATE location SET speed = 9e999 WHERE id = (SELECT min(id) FROM location)",
    ]

    /// The columns of `session` up to v4 (the source store is newer: v5 added `label`).
    static var sessionColumnsOfV4: String {
        StoreSchema.checkedTables[0].columns.map(\.name).joined(separator: ", ")
    }

    @Test func aNewStoreRefusesRowsWaymarkNeverWrites() async throws {
        let sqlite3 = try #require(which("sqlite3"))
        let path = StoreTests.newStorePath()
        let store = try SessionStore(path: path)
        _ = try await StoreTests.runBusyScenario(into: store, mode: .batched(50))
        for edit in Self.badEdits {
            let r = try run(sqlite3, [path, edit])
            #expect(r.status != 0 && r.stderr.contains("constraint failed"), "\(edit): \(r.stderr)")
        }
        // What Waymark writes, and a number given as text that SQLite turns into one, pass.
        let good = try run(
            sqlite3,
            [
                path,
                "INSERT INTO session (kind, source, created_at, epoch) VALUES ('record', 'gpsd', 1800000000, '1800000000');"
                    + "UPDATE location SET fix_index = '12' WHERE id = (SELECT min(id) FROM location);"
                    // Any finite number where GPX and gpsd allow one (an hdop of 1e301 reads).
                    + "UPDATE location SET hdop = 1e301, speed = -1e308 WHERE id = (SELECT min(id) FROM location)",
            ])
        #expect(good.status == 0, "\(good.stderr)")
    }

    /// A store of schema v3 with bad rows (as `sqlite3 .recover` may leave them): after the
    /// migration every good row reads as before, every bad one is kept in a `rejected_` table,
    /// and session ids already used are not given again.
    @Test func aV3StoreIsMigratedWithoutLosingARow() async throws {
        let sqlite3 = try #require(which("sqlite3"))
        let source = StoreTests.newStorePath()
        let sourceStore = try SessionStore(path: source)
        let (_, _, first) = try await StoreTests.runBusyScenario(into: sourceStore, mode: .batched(50))
        let (_, _, second) = try await StoreTests.runBusyScenario(into: sourceStore, mode: .batched(50))
        let locations = try sourceStore.locations(of: first.id).map { $0.ndjson() }
        let events = try sourceStore.session(first.id).eventCount

        let path = StoreTests.newStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try StoreSchema.createStore(at: path, upTo: "v3: codes of the wake-up services")
        let copy = """
            ATTACH '\(source)' AS v4;
            INSERT INTO origin SELECT * FROM v4.origin;
            INSERT INTO session SELECT \(Self.sessionColumnsOfV4) FROM v4.session;
            INSERT INTO location SELECT * FROM v4.location;
            INSERT INTO event SELECT * FROM v4.event;
            DELETE FROM session WHERE id = \(second.id);
            DELETE FROM location WHERE id >> 40 = \(second.id);
            DELETE FROM event WHERE id >> 40 = \(second.id);
            UPDATE location SET latitude = NULL WHERE id = (SELECT max(id) FROM location);
            UPDATE event SET name = X'FFFE' WHERE id = (SELECT max(id) FROM event);
            CREATE VIEW mine AS SELECT count(*) AS n FROM location;
            INSERT INTO session (id, kind, source, settings, created_at, epoch, outcome)
              VALUES (7, 'replay', 'recovered.gpx', '{}', 'yesterday', 0, 'completed');
            """
        let r = try run(sqlite3, [path, copy])
        #expect(r.status == 0, "\(r.stderr)")

        let store = try SessionStore(path: path, mode: .existing)
        #expect(try store.sessions().map(\.id) == [first.id])
        #expect(try store.locations(of: first.id).map { $0.ndjson() } == Array(locations.dropLast()))
        // Its count of events has both tables' rows: one of each was rejected.
        #expect(try store.session(first.id).eventCount == events - 2)
        let rejected = try run(
            sqlite3,
            [
                path,
                "SELECT (SELECT count(*) FROM rejected_session), (SELECT count(*) FROM rejected_location),"
                    + " (SELECT count(*) FROM rejected_event), (SELECT latitude IS NULL FROM rejected_location)",
            ])
        #expect(rejected.stdoutText == "1|1|1|1\n", "\(rejected.stdoutText)\(rejected.stderr)")
        // A user's own view of a rebuilt table still works.
        let mine = try run(sqlite3, [path, "SELECT n FROM mine"])
        #expect(mine.status == 0 && mine.stdoutText == "\(locations.count - 1)\n", "\(mine.stdoutText)\(mine.stderr)")
        // Session 7 was used (and is kept aside): the next is 8.
        let next = try store.beginSession(StoreTests.session(), mode: .durable)
        #expect(next.id == 8)
        // The checks hold on the migrated store.
        let refused = try run(sqlite3, [path, Self.badEdits[2]])
        #expect(refused.status != 0, "\(refused.stderr)")
    }
}
