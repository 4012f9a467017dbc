import Foundation
import Synchronization
import Testing
import Waymark
import WaymarkPostGIS
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif

/// The PostGIS store against a real server: a private cluster of this test process
/// (``PostgresCluster``), a database of its own per test.
@Suite(.serialized) struct PostGISTests {
    static var root: String { Paths.root.path }

    /// A local store with sessions from the bundled walk and its commute scenario (held fixes,
    /// wakes, fetches, a swipe: every kind of row), and a long generated walk.
    static func localStore(runs: Int = 2) throws -> String {
        let store = temporaryPath("-local.sqlite")
        for i in 0..<runs {
            var arguments = [
                "replay", root + "/traces/city-walk.gpx", "--store", store, "--rate", "max", "--quiet", "--format",
                "ndjson", "-o", "/dev/null", "--device-name", "van-\(i)",
            ]
            if i % 2 == 0 { arguments += ["--scenario", root + "/traces/commute.yaml"] }
            let r = try run(Paths.waymark.path, arguments)
            #expect(r.status == 0, "\(r.stderr)")
        }
        return store
    }

    static func waymark(_ arguments: [String]) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    /// Every row of every session of `local` is at the server exactly once, with the same
    /// values: the audit logs, made from both tables, are the same bytes from either store.
    static func expectSameSessions(local: String, server url: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let localList = try waymark(["sessions", "list", "--store", local, "--json"])
        let serverList = try waymark(["sessions", "list", "--store", url, "--json"])
        #expect(localList.status == 0 && serverList.status == 0, "\(serverList.stderr)", sourceLocation: sourceLocation)
        let localSessions = try #require(
            try JSONSerialization.jsonObject(with: localList.stdout) as? [[String: Any]], sourceLocation: sourceLocation
        )
        let serverSessions = try #require(
            try JSONSerialization.jsonObject(with: serverList.stdout) as? [[String: Any]],
            sourceLocation: sourceLocation)
        let byUUID = Dictionary(uniqueKeysWithValues: serverSessions.map { ($0["uuid"] as? String ?? "", $0) })
        #expect(serverSessions.count == localSessions.count, sourceLocation: sourceLocation)
        for session in localSessions {
            let uuid = try #require(session["uuid"] as? String, sourceLocation: sourceLocation)
            let remote = try #require(
                byUUID[uuid], "session \(uuid) is not at the server", sourceLocation: sourceLocation)
            for key in ["locationCount", "eventCount", "fixCount", "outcome", "device", "label", "started", "epoch"] {
                #expect(
                    "\(session[key] ?? "nil")" == "\(remote[key] ?? "nil")", "\(key) of \(uuid)",
                    sourceLocation: sourceLocation)
            }
            let localID = try #require(session["id"] as? Int, sourceLocation: sourceLocation)
            let remoteID = try #require(remote["id"] as? Int, sourceLocation: sourceLocation)
            let a = try waymark(["sessions", "export", String(localID), "--store", local, "--format", "audit"])
            let b = try waymark(["sessions", "export", String(remoteID), "--store", url, "--format", "audit"])
            #expect(a.status == 0 && b.status == 0, "\(b.stderr)", sourceLocation: sourceLocation)
            #expect(
                !a.stdout.isEmpty && a.stdout == b.stdout, "the audit log of \(uuid)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - The same commands on both stores

    /// A pushed session reads back the same from the PostGIS store as from the local one, in
    /// every export format, byte for byte; pushing again sends nothing.
    @Test func everyExportIsTheSameFromBothStores() throws {
        let cluster = try PostgresCluster.start()
        let url = cluster.address(database: try cluster.newDatabase())
        let local = try Self.localStore()
        let push = try Self.waymark(["sessions", "push", "--to", url, "--store", local])
        #expect(push.status == 0, "\(push.stderr)")
        #expect(push.stderr.contains("row(s) sent; 2 session(s) looked at"), "\(push.stderr)")
        for format in ["geojson", "gpx", "text", "ndjson", "audit", "html"] {
            for id in ["1", "2"] {
                let a = try Self.waymark(["sessions", "export", id, "--store", local, "--format", format])
                let b = try Self.waymark(["sessions", "export", id, "--store", url, "--format", format])
                #expect(a.status == 0 && b.status == 0, "\(b.stderr)")
                #expect(!a.stdout.isEmpty && a.stdout == b.stdout, "\(format) of session \(id)")
            }
        }
        let a = try Self.waymark(["sessions", "show", "1", "--store", local, "--json"])
        let b = try Self.waymark(["sessions", "show", "1", "--store", url, "--json"])
        #expect(a.stdout == b.stdout, "\(b.stderr)")
        try Self.expectSameSessions(local: local, server: url)

        // An acknowledgement lost (the server committed, the client never heard): the server's
        // mark is set back, the local marks forgotten, and everything is sent again. Each row
        // is still there once.
        _ = try cluster.psql("UPDATE waymark.session SET last_seq = -1", database: Self.database(url))
        _ = try run(try #require(which("sqlite3")), [local, "DELETE FROM forwarded"])
        let resent = try Self.waymark(["sessions", "push", "--to", url, "--store", local])
        #expect(resent.status == 0, "\(resent.stderr)")
        try Self.expectSameSessions(local: local, server: url)

        let again = try Self.waymark(["sessions", "push", "--to", url, "--store", local])
        #expect(again.status == 0)
        #expect(
            again.stderr.contains("0 row(s) sent") && again.stderr.contains("2 already complete"), "\(again.stderr)")
        #expect(try cluster.psql("SELECT count(*) FROM waymark.session", database: Self.database(url)) == "2")

        // Deleted at the server, from the server only.
        let deleted = try Self.waymark(["sessions", "delete", "1", "--store", url])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(
            try cluster.psql(
                "SELECT count(*) FROM waymark.location WHERE session_id = 1", database: Self.database(url)) == "0")
        #expect(try Self.waymark(["sessions", "show", "1", "--store", local]).status == 0)
        let gone = try Self.waymark(["sessions", "show", "1", "--store", url])
        #expect(gone.status != 0 && gone.stderr.contains("has no session 1"), "\(gone.stderr)")
    }

    /// The database of an address `PostgresCluster.address(database:)` made.
    /// Several sessions in one file, from either store alike: GeoJSON with a feature per
    /// session (or per segment) carrying the session's attributes, GPX with a track per session.
    @Test func severalSessionsExportTogetherFromBothStores() throws {
        let cluster = try PostgresCluster.start()
        let url = cluster.address(database: try cluster.newDatabase())
        let local = try Self.localStore(runs: 3)
        #expect(try Self.waymark(["sessions", "push", "--to", url, "--store", local]).status == 0)
        let store = try SessionStore(path: local, mode: .existing)
        let sessions = try store.sessions().sorted { $0.id < $1.id }
        let segments = try sessions.map { s in Set(try store.locations(of: s.id).map(\.segment)).count }
        for (options, features) in [
            (["--all"], sessions.count), (["--all", "--per", "segment"], segments.reduce(0, +)),
            (["1", "3"], 2), (["--device", "van-1"], 1),
        ] {
            let a = try Self.waymark(["sessions", "export", "--store", local, "-f", "geojson"] + options)
            let b = try Self.waymark(["sessions", "export", "--store", url, "-f", "geojson"] + options)
            #expect(a.status == 0 && b.status == 0, "\(options): \(a.stderr) \(b.stderr)")
            #expect(a.stdout == b.stdout, "\(options)")
            let object = try #require(try JSONSerialization.jsonObject(with: a.stdout) as? [String: Any])
            let list = try #require(object["features"] as? [[String: Any]])
            #expect(list.count == features, "\(options)")
            for feature in list {
                let properties = try #require(feature["properties"] as? [String: Any])
                let id = try #require(properties["session"] as? Int)
                let session = try #require(sessions.first { $0.id == Int64(id) })
                #expect(properties["uuid"] as? String == session.uuid)
                #expect(properties["device"] as? String == session.device)
                #expect(properties["outcome"] as? String == "completed")
            }
        }
        let gpx = try Self.waymark(["sessions", "export", "--all", "--store", url, "-f", "gpx"])
        #expect(gpx.status == 0, "\(gpx.stderr)")
        #expect(gpx.stdoutText.components(separatedBy: "<trk>").count - 1 == sessions.count)
        #expect(gpx.stdoutText.components(separatedBy: "<gpx ").count - 1 == 1)
        if let xmllint = which("xmllint") {
            let path = temporaryPath(".gpx")
            try gpx.stdout.write(to: URL(fileURLWithPath: path))
            #expect(try run(xmllint, ["--noout", path]).status == 0)
        }
        let refused = try Self.waymark(["sessions", "export", "1", "2", "--store", local, "-f", "audit"])
        #expect(refused.status == 64 && refused.stderr.contains("GeoJSON or GPX"), "\(refused.stderr)")
    }

    static func database(_ url: String) -> String {
        String(url.split(separator: "@/", maxSplits: 1).last?.split(separator: "?").first ?? "")
    }

    /// `$WAYMARK_STORE` names the store as `--store` does.
    @Test func theEnvironmentNamesTheStore() throws {
        let cluster = try PostgresCluster.start()
        let url = cluster.address(database: try cluster.newDatabase())
        let local = try Self.localStore(runs: 1)
        #expect(try Self.waymark(["sessions", "push", "--to", url, "--store", local]).status == 0)
        let listed = try run(
            Paths.waymark.path, ["sessions", "list", "--json"],
            environment: ProcessInfo.processInfo.environment.merging(["WAYMARK_STORE": url]) { $1 })
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdoutText.contains("\"device\":\"van-0\""), "\(listed.stdoutText)")
    }

    // MARK: - Store and forward under cut links

    /// A push through a link that drops at random moments, resumed until it ends: every row
    /// arrives exactly once (the server's key would refuse a second; the counts and the audit
    /// logs match the local store's).
    @Test func aPushCutAtRandomMomentsGivesEveryRowExactlyOnce() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try Self.localStore(runs: 3)
        let proxy = try CuttingProxy(target: cluster.port, seed: 0x5EED_F1EE7, meanBytes: 60_000)
        defer { proxy.stop() }
        let through = try PostGISAddress(cluster.tcpAddress(database: name, port: proxy.port))
        let store = try SessionStore(path: local, mode: .existing)
        var attempts = 0
        var failures: [String] = []
        while true {
            attempts += 1
            try #require(attempts < 400, "no push got through: \(failures.suffix(3))")
            do {
                let server = try await PostGISStore.open(through)
                do {
                    // Small pages: many transactions, so that cuts fall inside and between them.
                    for session in try store.transferSessions() {
                        _ = try await server.upsert(session)
                        _ = try await server.push(session, from: store, pageSize: 97)
                    }
                    await server.close()
                    break
                } catch {
                    await server.close()
                    throw error
                }
            } catch let error as PostGISError where error.isTransient {
                failures.append(error.message)
            }
        }
        #expect(proxy.cuts >= 3, "the link was cut \(proxy.cuts) times in \(attempts) attempts")
        #expect(
            try cluster.psql(
                "SELECT count(*) = count(DISTINCT (session_id, seq)) FROM waymark.location", database: name) == "t")
        try Self.expectSameSessions(local: local, server: cluster.address(database: name))
    }

    /// A push of more than one page writes its pages over extra connections, and closes them
    /// when it ends: the server then sees the store's own connection alone.
    @Test func aPushClosesTheConnectionsItOpened() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try Self.localStore(runs: 1)
        let store = try SessionStore(path: local, mode: .existing)
        let rows = try store.sessions().map(\.locationCount).reduce(0, +)
        try #require(rows > 4 * 16, "the session must take several pages: \(rows) rows")
        // The other connections to the database, counted from psql's own.
        @Sendable func others() -> Int? {
            (try? cluster.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                database: name)).flatMap(Int.init)
        }
        let server = try await PostGISStore.open(PostGISAddress(cluster.address(database: name)))
        for session in try store.transferSessions() {
            _ = try await server.upsert(session)
            _ = try await server.push(session, from: store, pageSize: 16, lanes: 3)
        }
        // A closed connection's server process ends a moment after the close.
        #expect(await waitUntil(within: 300) { others() == 1 }, "\(others() ?? -1) connections")
        await server.close()
        try Self.expectSameSessions(local: local, server: cluster.address(database: name))
    }

    /// `sessions push` cut by the proxy, run again and again: each run goes on from where the
    /// last stopped, and ends with every row there once.
    @Test func sessionsPushResumesAfterACut() throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try Self.localStore(runs: 2)
        let proxy = try CuttingProxy(target: cluster.port, seed: 42, meanBytes: 150_000)
        defer { proxy.stop() }
        let through = cluster.tcpAddress(database: name, port: proxy.port)
        var runs = 0
        var last = ProcessResult(status: -1, stdout: Data(), stderr: "")
        while runs < 200 {
            runs += 1
            last = try Self.waymark(["sessions", "push", "--to", through, "--store", local])
            if last.status == 0 { break }
            #expect(last.status == 69, "a cut link is a transient failure: \(last.stderr)")
        }
        #expect(last.status == 0, "\(last.stderr)")
        try Self.expectSameSessions(local: local, server: cluster.address(database: name))
        let done = try Self.waymark(["sessions", "push", "--to", through, "--store", local, "--dry-run"])
        #expect(done.stderr.contains("Nothing waits"), "\(done.stderr)")
    }

    /// A session that ends while it is being pushed reaches the server ended, with the rows
    /// committed at its end, in the same push: not left there as running until a later one.
    @Test func aSessionThatEndsDuringItsPushArrivesEnded() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let path = temporaryPath("-ending.sqlite")
        let store = try SessionStore(path: path, mode: .create)
        let created = 1_780_000_000.0
        var session = TransferSession(
            id: 0, uuid: UUID().uuidString.lowercased(), device: "van", kind: "record", source: "generated",
            settings: "{}", scenario: nil, createdAt: created, epoch: created, endedAt: nil, duration: nil,
            outcome: "running", outcomeDetail: nil, pid: nil, host: "elsewhere", label: nil)
        let id = try store.importSession(session)
        @Sendable func page(_ range: Range<Int64>) -> TransferPage {
            var page = TransferPage()
            page.locations = range.map {
                FleetQueryTests.row(
                    sequence: $0, offset: Double($0), time: created + Double($0), latitude: 48.2,
                    longitude: 16.37 + Double($0) * 1e-5)
            }
            page.last = range.upperBound - 1
            return page
        }
        try store.importRows(session: id, page(0..<10))
        session.outcome = "completed"
        session.endedAt = created + 15
        session.duration = 15
        let ended = session
        let server = try await PostGISStore.open(PostGISAddress(cluster.address(database: name)))
        // The recording's last rows and its end are committed once the first rows have gone.
        let ends = Mutex(true)
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: created) }
        let report = try await Forwarding.push(from: store, to: server, now: clock) { progress in
            guard case .sent = progress else { return }
            let first = ends.withLock { first in
                defer { first = false }
                return first
            }
            guard first else { return }
            try? store.importRows(session: id, page(10..<15))
            _ = try? store.importSession(ended)
        }
        await server.close()
        #expect(report.complete == [id])
        #expect(try cluster.psql("SELECT outcome FROM waymark.session", database: name) == "completed")
        #expect(try cluster.psql("SELECT count(*) FROM waymark.location", database: name) == "15")
        #expect(try store.forwardMark(session: id, target: server.address.description)?.complete == true)
    }

    /// `--prune` deletes only what the server holds whole: session 1, pushed and then missing a
    /// row at the server, is kept; session 2, pushed by this run, goes.
    @Test func pruneDeletesOnlyWhatTheServerHoldsWhole() throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let local = try Self.localStore(runs: 2)
        #expect(try Self.waymark(["sessions", "push", "1", "--to", url, "--store", local]).status == 0)
        // The server loses a row of session 1 (someone deleted it): pruning must keep it here.
        _ = try cluster.psql(
            "DELETE FROM waymark.event WHERE seq = (SELECT max(seq) FROM waymark.event)", database: name)
        let pruned = try Self.waymark(["sessions", "push", "--to", url, "--store", local, "--prune"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stderr.contains("Pruned 1 session(s)") && pruned.stderr.contains(": 2."), "\(pruned.stderr)")
        let left = try Self.waymark(["sessions", "list", "--store", local, "--json"])
        let ids = try #require(try JSONSerialization.jsonObject(with: left.stdout) as? [[String: Any]]).compactMap {
            $0["id"] as? Int
        }
        #expect(ids == [1])
    }

    /// A link that goes silent (packets dropped, no FIN, no RST) is given up once a statement
    /// outlives its deadline: the push fails as on a cut, instead of waiting for TCP for
    /// many minutes. The deadline's clock moves only once the link is silent.
    @Test(.timeLimit(.minutes(1))) func aLinkThatGoesSilentIsGivenUpAtTheDeadline() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try Self.localStore(runs: 1)
        let proxy = try CuttingProxy(target: cluster.port, seed: 1, meanBytes: .infinity)
        defer { proxy.stop() }
        let silence = Gate()
        let deadline = PostGISStore.Deadline(limit: .seconds(60)) { _ in
            await silence.wait()
            try Task.checkCancellation()  // an operation that ended in time cancelled its watchdog
        }
        let server = try await PostGISStore.open(
            try PostGISAddress(cluster.tcpAddress(database: name, port: proxy.port)), deadline: deadline)
        let store = try SessionStore(path: local, mode: .existing)
        let session = try #require(try store.transferSessions().first)
        proxy.blackHole()
        let push = Task { try await server.push(session, from: store) }
        silence.open()
        do {
            _ = try await push.value
            Issue.record("the push went through a silent link")
        } catch let error as PostGISError {
            #expect(error.isTransient, "\(error)")
        }
        await server.close()
    }

    // MARK: - Recorders

    /// `record --forward` from a served trace: the session is at the server whole when the
    /// command ends, and the same as the local one.
    @Test(.enabled(if: ServeHarness.available)) func aRecordingIsForwardedWhileItRuns() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 60)
        let serve = try ServeHarness(trace: trace, ["--rate", "50"])
        defer { serve.tearDown() }
        let local = serve.directory + "/record.sqlite"
        let r = try await runUnblockedAsync([
            Paths.waymark.path, "record", "--gpsd", "127.0.0.1:\(serve.port)", "--count", String(points.count),
            "--no-auto-pause", "--store", local, "--forward", url, "--format", "ndjson", "-o", "/dev/null",
            "--duration", "60s",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("forwarded to") && r.stderr.contains("every row is there"), "\(r.stderr)")
        try Self.expectSameSessions(local: local, server: url)
        let device = try cluster.psql("SELECT device FROM waymark.session", database: name)
        #expect(device == SessionStore.hostName + ":gpsd 127.0.0.1:\(serve.port)")
    }

    /// A recorder killed with SIGKILL mid-run loses nothing it acknowledged: the local store has
    /// every committed row, the server a prefix of them, and `sessions push` sends the rest
    /// exactly once.
    @Test func aKilledRecorderLosesNothingAndPushFinishesIt() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 3000)
        let local = temporaryPath("-killed.sqlite")
        let pid = try spawnUnblocked(
            [
                Paths.waymark.path, "replay", trace, "--rate", "20", "--store", local, "--forward", url,
                "--format", "ndjson", "-o", "/dev/null",
            ], output: temporaryPath("-killed.log"))
        // Progress, not time: the server has rows of it.
        let forwarded = await waitUntil(within: 300) {
            (try? cluster.psql("SELECT count(*) FROM waymark.location", database: name)).flatMap(Int.init) ?? 0 >= 40
        }
        #expect(forwarded)
        kill(pid, SIGKILL)
        _ = await waitForExitAsync(pid, within: 60)
        let before = Int(try cluster.psql("SELECT count(*) FROM waymark.location", database: name)) ?? 0
        let list = try Self.waymark(["sessions", "list", "--store", local, "--json"])
        #expect(list.stdoutText.contains("\"outcome\":\"interrupted\""), "\(list.stdoutText)")
        let push = try Self.waymark(["sessions", "push", "--to", url, "--store", local])
        #expect(push.status == 0, "\(push.stderr)")
        #expect(Int(try cluster.psql("SELECT count(*) FROM waymark.location", database: name)) ?? 0 >= before)
        try Self.expectSameSessions(local: local, server: url)
        #expect(try cluster.psql("SELECT outcome FROM waymark.session", database: name) == "interrupted")
    }

    /// The server stops (as a crash: `pg_ctl stop -m immediate`) mid-recording and starts
    /// again: the recorder keeps recording locally, says the link is down, and catches up when
    /// the server is back, before it ends.
    @Test func aServerThatStopsAndComesBackIsCaughtUpWith() async throws {
        // Its own server: the shared one serves the other suites' tests meanwhile.
        let cluster = try PostgresCluster()
        defer { cluster.remove() }
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let (trace, _) = try GPSDServeLiveTests.makeTrace(count: 20_000)
        let local = temporaryPath("-outage.sqlite")
        let log = temporaryPath("-outage.log")
        let pid = try spawnUnblocked(
            [
                Paths.waymark.path, "replay", trace, "--rate", "50", "--store", local, "--forward", url,
                "--format", "ndjson", "-o", "/dev/null",
            ], output: log)
        defer {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, within: 10)
        }
        func serverRows() -> Int {
            (try? cluster.psql("SELECT count(*) FROM waymark.location", database: name)).flatMap(Int.init) ?? -1
        }
        func localRows() -> Int {
            guard let store = try? SessionStore(path: local, mode: .existing) else { return 0 }
            return (try? store.sessions().first?.locationCount) ?? 0
        }
        #expect(await waitUntil(within: 300) { serverRows() >= 20 })
        cluster.stopImmediately()
        let atStop = localRows()
        // The recording goes on without the server.
        #expect(await waitUntil(within: 300) { localRows() >= atStop + 40 })
        try cluster.startServer()
        let local1 = localRows()
        // Caught up: the server holds what the local store held after the restart.
        #expect(await waitUntil(within: 300) { serverRows() >= local1 })
        kill(pid, SIGINT)
        let ended = await waitForExitAsync(pid, within: 300)
        #expect(exitStatus(ended.status) == 0)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("rows wait in the local store; retrying"), "\(text.suffix(2000))")
        #expect(text.contains("reached again"), "\(text.suffix(2000))")
        #expect(text.contains("every row is there"), "\(text.suffix(2000))")
        try Self.expectSameSessions(local: local, server: url)
    }

    /// Fifty recorders at once into one new database: the schema is made once, and every
    /// session arrives whole.
    @Test func fiftyRecordersAtOnce() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 200)
        let directory = temporaryPath("-fifty")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let results = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
            for i in 0..<50 {
                group.addTask {
                    try await runUnblockedAsync([
                        Paths.waymark.path, "replay", trace, "--rate", "max", "--quiet", "--store",
                        directory + "/r\(i).sqlite", "--forward", url, "--device-name", "unit-\(i)", "--format",
                        "ndjson", "-o", "/dev/null",
                    ])
                }
            }
            var all: [ProcessResult] = []
            for try await r in group { all.append(r) }
            return all
        }
        for r in results { #expect(r.status == 0, "\(r.stderr)") }
        #expect(try cluster.psql("SELECT count(*) FROM waymark.schema_migration", database: name) == "1")
        #expect(try cluster.psql("SELECT count(DISTINCT device) FROM waymark.session", database: name) == "50")
        #expect(
            try cluster.psql("SELECT count(*) FROM waymark.location", database: name) == String(50 * points.count))
        let units = try Self.waymark(["sessions", "list", "--store", url, "--device", "unit-7", "--json"])
        #expect(units.stdoutText.components(separatedBy: "\"device\":\"unit-7\"").count == 2, "\(units.stdoutText)")
    }

    // MARK: - What GIS tools see

    /// `ogrinfo` reads the session layers with their geometry types, and a session's segment
    /// line has a vertex per location, with the fix's time as M.
    @Test(.enabled(if: which("ogrinfo") != nil)) func ogrinfoReadsTheLayers() throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try Self.localStore(runs: 1)
        #expect(
            try Self.waymark(["sessions", "push", "--to", cluster.address(database: name), "--store", local]).status
                == 0)
        let connection = "PG:host=\(cluster.directory) port=\(cluster.port) dbname=\(name) user=waymark"
        let layers = try run(try #require(which("ogrinfo")), ["-ro", "-q", connection])
        #expect(layers.status == 0, "\(layers.stderr)")
        #expect(layers.stdoutText.contains("waymark.segment (3D Measured Line String)"), "\(layers.stdoutText)")
        #expect(layers.stdoutText.contains("waymark.location_view (3D Measured Point)"), "\(layers.stdoutText)")
        let store = try SessionStore(path: local, mode: .existing)
        let locations = try store.locations(of: 1)
        let first = try #require(locations.first)
        let segment = try run(
            try #require(which("ogrinfo")),
            [
                "-ro", "-al", "-q", connection, "waymark.segment", "-where",
                "session_id = 1 AND segment = \(first.segment)",
            ])
        #expect(segment.status == 0, "\(segment.stderr)")
        let segmentZero = locations.filter { $0.segment == first.segment }
        // LINESTRING ZM (lon lat alt time, …)
        let wkt = try #require(segment.stdoutText.split(separator: "\n").first { $0.contains("LINESTRING ZM") })
        let vertices = wkt.split(separator: ",")
        #expect(vertices.count == segmentZero.count)
        let firstVertex = wkt.split(separator: "(")[1].split(separator: ",")[0].split(separator: " ").compactMap {
            Double($0)
        }
        #expect(firstVertex.count == 4)
        #expect(abs(firstVertex[0] - first.location.coordinate.longitude) < 1e-9)
        #expect(abs(firstVertex[1] - first.location.coordinate.latitude) < 1e-9)
        #expect(abs(firstVertex[3] - first.location.timestamp.timeIntervalSince1970) < 1e-3)
    }

    // MARK: - Refusals

    /// A database whose Waymark schema is newer than this Waymark's is refused, with a message
    /// that says so; an unreachable server is a transient error that says where.
    @Test func aNewerSchemaAndADeadServerAreClearErrors() throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let url = cluster.address(database: name)
        let local = try Self.localStore(runs: 1)
        #expect(try Self.waymark(["sessions", "push", "--to", url, "--store", local]).status == 0)
        _ = try cluster.psql(
            "INSERT INTO waymark.schema_migration (version, name) VALUES (99, 'future')", database: name)
        let newer = try Self.waymark(["sessions", "list", "--store", url])
        #expect(newer.status == 65)
        #expect(newer.stderr.contains("schema v99, from a newer Waymark"), "\(newer.stderr)")
        let port = try freeLoopbackPorts(1)[0]
        let dead = try Self.waymark([
            "sessions", "list", "--store", "postgresql://waymark@127.0.0.1:\(port)/x?sslmode=disable",
        ])
        #expect(dead.status == 69, "\(dead.stderr)")
        #expect(dead.stderr.contains("postgresql://waymark@127.0.0.1:\(port)/x"), "\(dead.stderr)")
        let bad = try Self.waymark(["sessions", "list", "--store", "postgresql://u@h:99999/d"])
        #expect(bad.status == 64 && bad.stderr.contains("port"), "\(bad.stderr)")
    }
}

/// A TCP relay to a server that cuts each connection after a random number of bytes from the
/// client (seeded; about `meanBytes` on average, exponentially distributed): a link that drops
/// at any moment, inside a COPY or a COMMIT as well as between them.
final class CuttingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let target: Int
    private let lock = NSLock()
    private var random: UInt64
    private let meanBytes: Double
    private var cutCount = 0
    private var stopped = false
    private var silent = false

    /// From now on, nothing is relayed and nothing is closed: a link that drops every packet.
    func blackHole() { lock.withLock { silent = true } }
    var isSilent: Bool { lock.withLock { silent } }

    var cuts: Int { lock.withLock { cutCount } }

    init(target: Int, seed: UInt64, meanBytes: Double) throws {
        self.target = target
        self.random = seed | 1
        self.meanBytes = meanBytes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func stop() {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// The next budget: exponential with the mean asked (xorshift64*).
    private func budget() -> Int {
        lock.withLock {
            random ^= random >> 12
            random ^= random << 25
            random ^= random >> 27
            let u = Double((random &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
            return meanBytes.isInfinite ? Int.max : max(1, Int(-log(1 - u) * meanBytes))
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if lock.withLock({ stopped }) { return }
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(target).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            let pair = Pair(client: client, server: server, budget: budget(), proxy: self)
            Thread.detachNewThread { pair.relay(from: client, to: server, counted: true) }
            Thread.detachNewThread { pair.relay(from: server, to: client, counted: false) }
        }
    }

    fileprivate func noteCut() { lock.withLock { cutCount += 1 } }

    /// One relayed connection: both ends close together when the budget runs out or either
    /// side closes.
    final class Pair: @unchecked Sendable {
        let client: Int32
        let server: Int32
        let lock = NSLock()
        var remaining: Int
        var closed = false
        weak var proxy: CuttingProxy?

        init(client: Int32, server: Int32, budget: Int, proxy: CuttingProxy) {
            self.client = client
            self.server = server
            self.remaining = budget
            self.proxy = proxy
        }

        func relay(from source: Int32, to destination: Int32, counted: Bool) {
            var buffer = [UInt8](repeating: 0, count: 16384)
            while true {
                let n = read(source, &buffer, buffer.count)
                if n <= 0 { break }
                if proxy?.isSilent == true { continue }
                var length = n
                var cut = false
                if counted {
                    lock.withLock {
                        if remaining <= n {
                            length = remaining
                            cut = true
                        }
                        remaining -= length
                    }
                }
                var offset = 0
                while offset < length {
                    let w = buffer.withUnsafeBytes {
                        send(destination, $0.baseAddress! + offset, length - offset, Int32(MSG_NOSIGNAL))
                    }
                    if w <= 0 { break }
                    offset += w
                }
                if cut {
                    proxy?.noteCut()
                    break
                }
            }
            end()
        }

        func end() {
            let first = lock.withLock { () -> Bool in
                defer { closed = true }
                return !closed
            }
            guard first else { return }
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            // Each relay thread ends on its read; the descriptors close once both have.
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { [client, server] in
                close(client)
                close(server)
            }
        }
    }
}

/// A gate that tasks wait at until it is opened.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func open() {
        let all = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { waiting = [] }
            return waiting
        }
        for c in all { c.resume() }
    }
}
