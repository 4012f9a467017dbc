// waymark-bench postgis --store postgresql://… : the PostGIS store (docs/fleet.md). Needs a
// server with PostGIS where the role may create databases (scripts/bench-postgis.sh starts a
// private one); each measure uses a new database.
//   1. Ingest: each layout's GPX (GPXLayouts, about --points points) replayed into a local SQLite
//      store, then pushed into PostGIS from one process (COPY into a temporary table, a page of
//      8192 rows per transaction), in fixes per second. Peers: the server's own COPY of the
//      same rows (psql, two sessions, into an empty copy of the database: the ceiling a client
//      can reach), and `ogr2ogr -f PostgreSQL` loading the same GPX's track points into the same
//      server, in the same run.
//   2. A backlog of --backlog fixes (default 1 000 000, one session) forwarded, timed.
//   3. Fifty recorders at 10 Hz for --seconds: each commits one fix per transaction as
//      `record --forward` would with a page of one row; p50 and p99 commit latency. Peer:
//      pgbench with a one-row INSERT per transaction at the same total rate.

import Foundation
import GPXLayouts
import Synchronization
import Waymark
import WaymarkPostGIS
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif

enum PostGISBench {
    static func run(arguments: [String]) async throws {
        var url: String?
        var points = 300_000
        var backlog = 1_000_000
        var seconds = 20
        var dir = "bench-out"
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--store": url = args.next()
            case "--points": points = Int(args.next() ?? "") ?? points
            case "--backlog": backlog = Int(args.next() ?? "") ?? backlog
            case "--seconds": seconds = Int(args.next() ?? "") ?? seconds
            case "--dir": dir = args.next() ?? dir
            default:
                print(
                    "usage: waymark-bench postgis --store postgresql://… [--points 300000] [--backlog 1000000] "
                        + "[--seconds 20] [--dir bench-out]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        guard let url, let base = try? PostGISAddress(url) else {
            print("waymark-bench postgis: --store postgresql://user@host:port/database is required")
            exit(64)
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let clock = ContinuousClock()

        print("waymark-bench postgis: \(base)")
        print("")
        print(
            "\(column("ingest, one process", 40))  \(column("fixes", 9))  \(column("fix/s", 9))  "
                + "\(column("vs the server's own COPY", 30))  vs ogr2ogr")
        for layout in GPXLayout.allCases {
            let trace = "\(dir)/postgis-\(layout.rawValue)-\(points).gpx"
            if !FileManager.default.fileExists(atPath: trace) {
                let text = layout.document(bytes: points * 200)
                try text.write(toFile: trace, atomically: true, encoding: .utf8)
            }
            let local = "\(dir)/postgis-local.sqlite"
            StoreBench.removeStore(local)
            let store = try SessionStore(path: local)
            let fixes = try await replay(trace, into: store)
            let target = try newDatabase(base, name: "bench_\(layout.rawValue.lowercased())")
            let server = try await PostGISStore.open(target)
            let start = clock.now
            _ = try await Forwarding.push(from: store, to: server, now: { Date() })
            let elapsed = Self.seconds(clock.now - start)
            await server.close()
            let rate = Double(fixes) / elapsed
            // What the server alone can take: the rows just stored, copied back by psql.
            var own = "–"
            if available("psql"), let ownSeconds = serverCopy(target, base: base, dir: dir) {
                own = String(
                    format: "%.2f× (%.0f fix/s)", rate / (Double(fixes) / ownSeconds), Double(fixes) / ownSeconds)
            }
            // Peer: ogr2ogr loads the same file's track points into another new database.
            var peer = "–"
            if available("ogr2ogr") {
                let peerDB = try newDatabase(base, name: "bench_ogr_\(layout.rawValue.lowercased())")
                _ = StoreBench.shell(psql(peerDB) + " -c 'CREATE EXTENSION IF NOT EXISTS postgis'")
                let started = clock.now
                let r = StoreBench.shell(
                    "ogr2ogr -f PostgreSQL \(quote(ogrConnection(peerDB))) \(quote(trace)) track_points "
                        + "-lco SPATIAL_INDEX=GIST --config PG_USE_COPY YES -gt 65536")
                let peerSeconds = Self.seconds(clock.now - started)
                if r.status == 0 {
                    peer = String(
                        format: "%.2f× (%.0f fix/s)", rate / (Double(fixes) / peerSeconds), Double(fixes) / peerSeconds)
                } else {
                    peer = "failed: \(r.output.prefix(120))"
                }
            }
            print(
                "\(column(layout.title, 40))  \(column(String(fixes), 9))  \(column(String(format: "%.0f", rate), 9))  "
                    + "\(column(own, 30))  \(peer)")
        }

        // 2. A backlog.
        do {
            let trace = "\(dir)/postgis-backlog-\(backlog).gpx"
            if !FileManager.default.fileExists(atPath: trace) {
                try GPXLayout.strava.document(bytes: backlog * 200).write(
                    toFile: trace, atomically: true, encoding: .utf8)
            }
            let local = "\(dir)/postgis-backlog.sqlite"
            StoreBench.removeStore(local)
            let store = try SessionStore(path: local)
            let fixes = try await replay(trace, into: store)
            let server = try await PostGISStore.open(try newDatabase(base, name: "bench_backlog"))
            let start = clock.now
            _ = try await Forwarding.push(from: store, to: server, now: { Date() })
            let elapsed = Self.seconds(clock.now - start)
            await server.close()
            print("")
            print(
                String(
                    format: "backlog: %d fixes forwarded in %.1f s (%.0f fix/s)", fixes, elapsed,
                    Double(fixes) / elapsed))
        }

        // 3. Fifty recorders at 10 Hz.
        let recorders = 50
        let database = try newDatabase(base, name: "bench_fleet")
        let latencies = try await fleet(recorders: recorders, seconds: seconds, target: database, dir: dir)
        var peerLine = "–"
        if available("pgbench") {
            _ = StoreBench.shell(
                psql(database)
                    + " -c 'CREATE TABLE bench_fix (recorder int, seq bigint, lat float8, lon float8, at timestamptz)'")
            let script = "\(dir)/pgbench-fix.sql"
            try "\\set r random(1, \(recorders))\nINSERT INTO bench_fix VALUES (:r, :client_id, 48.2, 16.37, now());\n"
                .write(toFile: script, atomically: true, encoding: .utf8)
            let r = StoreBench.shell(
                "pgbench -n -c \(recorders) -j 2 -R \(recorders * 10) -T \(seconds) -f \(quote(script)) -r "
                    + "--log --log-prefix=\(quote(dir + "/pgbench")) " + pgbenchConnection(database) + " 2>&1")
            let logs =
                (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasPrefix("pgbench.") } ?? []
            var peerLatencies: [Double] = []
            for log in logs {
                let text = (try? String(contentsOfFile: dir + "/" + log, encoding: .utf8)) ?? ""
                for line in text.split(separator: "\n") {
                    let fields = line.split(separator: " ")
                    if fields.count > 2, let micros = Double(fields[2]) { peerLatencies.append(micros / 1000) }
                }
                try? FileManager.default.removeItem(atPath: dir + "/" + log)
            }
            if r.status == 0, !peerLatencies.isEmpty {
                peerLine = String(
                    format: "pgbench one-row INSERT: p50 %.1f ms, p99 %.1f ms", percentile(peerLatencies, 0.5),
                    percentile(peerLatencies, 0.99))
            } else {
                peerLine = "pgbench failed: \(r.output.suffix(200))"
            }
        }
        print("")
        print(
            String(
                format: "%d recorders at 10 Hz for %d s: %d commits, p50 %.1f ms, p99 %.1f ms  (vs %@)", recorders,
                seconds, latencies.count, percentile(latencies, 0.5), percentile(latencies, 0.99), peerLine))
    }

    /// Replays `trace` at the maximal rate into a new session of `store`; the fixes stored.
    static func replay(_ trace: String, into store: SessionStore) async throws -> Int {
        let schedule = try ReplaySchedule(document: try GPXDocument(reader: GPXReader(contentsOf: trace)), file: trace)
        let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 0))
        let recorder = try store.beginSession(
            NewSession(
                kind: .replay, source: trace, settings: "{}", scenario: nil, createdAt: Date(), epoch: simulation.epoch),
            mode: .batched(8192))
        simulation.addObserver(recorder)
        try await simulation.run(GPXReplaySource(schedule: schedule, name: trace))
        try recorder.finish(outcome: .completed, duration: simulation.now, endedAt: Date())
        return recorder.committedLocations
    }

    /// Fifty recorders, each a local store and a connection: a fix every 100 ms, forwarded as a
    /// page of one row; the commit latencies, in milliseconds.
    static func fleet(recorders: Int, seconds: Int, target: PostGISAddress, dir: String) async throws -> [Double] {
        let clock = ContinuousClock()
        final class Latencies: Sendable {
            let values = Mutex<[Double]>([])
        }
        let all = Latencies()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for r in 0..<recorders {
                group.addTask {
                    let local = "\(dir)/postgis-fleet-\(r).sqlite"
                    StoreBench.removeStore(local)
                    let store = try SessionStore(path: local)
                    let uuid = UUID().uuidString.lowercased()
                    let created = Date().timeIntervalSince1970
                    let id = try store.importSession(
                        TransferSession(
                            id: 0, uuid: uuid, device: "bench-\(r)", kind: "record", source: "bench", settings: "{}",
                            scenario: nil, createdAt: created, epoch: created, endedAt: nil, duration: nil,
                            outcome: "running", outcomeDetail: nil, pid: nil, host: nil, label: nil))
                    let server = try await PostGISStore.open(target)
                    guard let session = try store.transferSessions([id]).first else { return }
                    var mine: [Double] = []
                    let end = clock.now + .seconds(seconds)
                    var next = clock.now
                    var i: Int64 = 0
                    while clock.now < end {
                        var page = TransferPage()
                        page.locations = [
                            fix(
                                sequence: i, latitude: 48.2 + Double(i) * 1e-5, longitude: 16.37 + Double(r) * 1e-3,
                                epoch: created)
                        ]
                        page.last = i
                        try store.importRows(session: id, page)
                        let start = clock.now
                        _ = try await server.push(session, from: store)
                        mine.append(Self.seconds(clock.now - start) * 1000)
                        i += 1
                        next = next + .milliseconds(100)
                        try await clock.sleep(until: next)
                    }
                    await server.close()
                    all.values.withLock { $0 += mine }
                }
            }
            try await group.waitForAll()
        }
        return all.values.withLock { $0 }
    }

    /// One delivered fix, as the store keeps it.
    static func fix(sequence: Int64, latitude: Double, longitude: Double, epoch: Double) -> TransferLocation {
        let offset = Double(sequence) / 10
        let values: [String: TransferValue] = [
            "offset": .real(offset), "time": .real(epoch + offset), "latitude": .real(latitude),
            "longitude": .real(longitude), "altitude": .real(200), "horizontal_accuracy": .real(5),
            "fix_mode": .integer(2), "differential": .integer(0), "flags": .integer(0), "fix_index": .integer(sequence),
            "segment": .integer(0), "app_state": .integer(1), "reason": .integer(0), "authorization": .integer(4),
            "accuracy_authorization": .integer(0),
        ]
        return TransferLocation(
            sequence: sequence, originKind: "gpsd", originName: "bench",
            values: StoreSchema.transferLocationColumns.map { values[$0.name] ?? .null })
    }

    /// The server's own ceiling for a push into `target`: its `location` rows dumped by psql in
    /// COPY text, then copied back by two psql sessions at once (as a push's two lanes, a page
    /// of 8192 rows each in turn) into an empty copy of the database, with its partitions and
    /// indexes. Seconds, or nil when a step fails. No Waymark code runs in what is timed.
    static func serverCopy(_ target: PostGISAddress, base: PostGISAddress, dir: String) -> Double? {
        let files = (0..<2).map { "\(dir)/postgis-rows-\($0).copy" }
        for (lane, file) in files.enumerated() {
            let dump = StoreBench.shell(
                psql(target) + " -c "
                    + quote(
                        "\\copy (SELECT * FROM waymark.location WHERE seq / 8192 % 2 = \(lane) ORDER BY session_id, seq) "
                            + "TO '\(file)'"))
            guard dump.status == 0 else { return nil }
        }
        defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        let name = target.database + "_own"
        dropDatabase(base, name: name)
        guard
            StoreBench.shell(
                psql(base, database: "postgres") + " -c 'CREATE DATABASE \(name) TEMPLATE \(target.database)'"
            ).status == 0,
            StoreBench.shell(psql(base, database: name) + " -c 'TRUNCATE waymark.location'").status == 0
        else { return nil }
        // Two processes of our own, not a shell's `&` and `wait`: a shell started by `Process`
        // may wait for ever on a child that has already ended.
        let copies = files.map { file in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c",
                psql(base, database: name) + " -v ON_ERROR_STOP=1 -c "
                    + quote("\\copy waymark.location FROM '\(file)'") + " >/dev/null",
            ]
            return process
        }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            for process in copies { try process.run() }
        } catch {
            return nil
        }
        for process in copies { process.waitUntilExit() }
        let ok = copies.allSatisfy { $0.terminationStatus == 0 }
        let elapsed = seconds(clock.now - start)
        dropDatabase(base, name: name)
        return ok ? elapsed : nil
    }

    /// Drops database `name` on `base`'s server if it is there (quietly if it is not).
    static func dropDatabase(_ base: PostGISAddress, name: String) {
        _ = StoreBench.shell(
            psql(base, database: "postgres")
                + " -c 'SET client_min_messages = warning' -c 'DROP DATABASE IF EXISTS \(name)'")
    }

    static func newDatabase(_ base: PostGISAddress, name: String) throws -> PostGISAddress {
        dropDatabase(base, name: name)
        let r = StoreBench.shell(psql(base, database: "postgres") + " -c 'CREATE DATABASE \(name)'")
        guard r.status == 0 else { throw BenchError("cannot create database \(name): \(r.output)") }
        var address = base
        address.database = name
        return address
    }

    static func psql(_ a: PostGISAddress, database: String? = nil) -> String {
        "psql -X -q " + libpqOptions(a, database: database)
    }

    static func libpqOptions(_ a: PostGISAddress, database: String? = nil) -> String {
        "-h \(quote(a.host ?? a.socketDirectory)) -p \(a.port) -U \(quote(a.user)) -d \(quote(database ?? a.database))"
    }

    static func pgbenchConnection(_ a: PostGISAddress) -> String { libpqOptions(a) }

    static func ogrConnection(_ a: PostGISAddress) -> String {
        "PG:host=\(a.host ?? a.socketDirectory) port=\(a.port) dbname=\(a.database) user=\(a.user)"
            + (a.password.map { " password=\($0)" } ?? "")
    }

    static func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }
}
