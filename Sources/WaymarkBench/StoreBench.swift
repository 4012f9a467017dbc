// waymark-bench store: the session store.
//   1. Insert throughput: a 1 M-point replay at --rate max into a fresh store (batched
//      transactions of 8192 events, synchronous=NORMAL), in locations per second; also the same
//      replay without a store, so the store's own cost shows. Peer: the sqlite3 shell's `.import`
//      of the same location rows (CSV) into the same table, in the same run.
//   2. Durable live commits: one transaction per delivered fix with synchronous=FULL (the WAL
//      is synced before the commit returns), p50 and p99. Peer: Python's sqlite3 module making
//      the same single-row commits with the same settings.

import Foundation
import Waymark
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif

enum StoreBench {
    static func run(arguments: [String]) async throws {
        var points = 1_000_000
        var commits = 2000
        var dir = "bench-out"
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--points": points = Int(args.next() ?? "") ?? points
            case "--commits": commits = Int(args.next() ?? "") ?? commits
            case "--dir": dir = args.next() ?? dir
            default:
                print("usage: waymark-bench store [--points 1000000] [--commits 2000] [--dir bench-out]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let trace = "\(dir)/store-\(points)-1hz.gpx"
        if !FileManager.default.fileExists(atPath: trace) {
            FileHandle.standardError.write(Data("generating \(trace)…\n".utf8))
            try ReplayBench.generateDay(path: trace, seconds: points)
        }
        let schedule = try ReplaySchedule(document: try GPXDocument(reader: GPXReader(contentsOf: trace)), file: trace)
        print("waymark-bench store: \(schedule.fixes.count) fixes replayed at --rate max into a fresh store")

        let clock = ContinuousClock()
        // Without a store.
        var bare = Double.infinity
        for _ in 0..<2 {
            let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 0))
            let start = clock.now
            try await simulation.run(GPXReplaySource(schedule: schedule, name: trace))
            bare = min(bare, seconds(clock.now - start))
        }
        // With the store.
        let storePath = "\(dir)/bench-store.sqlite"
        var stored = 0
        var withStore = Double.infinity
        var size = 0
        for _ in 0..<2 {
            removeStore(storePath)
            let store = try SessionStore(path: storePath)
            let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 0))
            let start = clock.now
            let recorder = try store.beginSession(
                NewSession(
                    kind: .replay, source: trace, settings: "{}", scenario: nil, createdAt: Date(),
                    epoch: simulation.epoch),
                mode: .batched(8192))
            simulation.addObserver(recorder)
            try await simulation.run(GPXReplaySource(schedule: schedule, name: trace))
            try recorder.finish(outcome: .completed, duration: simulation.now, endedAt: Date())
            withStore = min(withStore, seconds(clock.now - start))
            stored = recorder.committedLocations
            size = fileSize(storePath) + fileSize(storePath + "-wal")
        }
        let rate = Double(stored) / withStore
        let storeOnly = Double(stored) / max(withStore - bare, 1e-9)

        // Peer: sqlite3 .import of the same rows.
        var peerRate: Double?
        if available("sqlite3") {
            let csv = "\(dir)/bench-locations.csv"
            _ = shell("sqlite3 -csv '\(storePath)' 'SELECT * FROM location' > '\(csv)'")
            let peerPath = "\(dir)/bench-peer.sqlite"
            removeStore(peerPath)
            let schema = shell("sqlite3 '\(storePath)' '.schema location'").output
            _ = shell("sqlite3 '\(peerPath)' 'PRAGMA journal_mode=WAL;' \"\(schema)\"")
            let start = clock.now
            let r = shell(
                "sqlite3 '\(peerPath)' -cmd 'PRAGMA synchronous=NORMAL' '.import --csv \(csv) location'")
            let elapsed = seconds(clock.now - start)
            if r.status == 0 { peerRate = Double(stored) / elapsed }
            try? FileManager.default.removeItem(atPath: csv)
            removeStore(peerPath)
        }

        print("")
        print("\(column("batched replay", 62))  \(column("loc/s", 10))  vs sqlite3 .import")
        let ratio = peerRate.map { String(format: "%.2f×", rate / $0) } ?? "–"
        print(
            "\(column("replay + store (\(schedule.fixes.count) fixes, \(stored) locations; \(size >> 20) MiB)", 62))  "
                + "\(column(String(format: "%.0f", rate), 10))  \(ratio)")
        print(
            "\(column("the time the store adds (with store − without), as loc/s", 62))  \(column(String(format: "%.0f", storeOnly), 10))"
        )
        print("\(column("replay without a store", 62))  \(column(String(format: "%.0f", Double(stored) / bare), 10))")
        if let peerRate {
            print(
                "\(column("sqlite3 .import --csv of the same location rows (no events)", 62))  \(column(String(format: "%.0f", peerRate), 10))"
            )
        } else {
            print("sqlite3: not installed (apt-get install sqlite3); no ratio")
        }
        print("target: ≥ 300 000 locations/s batched")
        removeStore(storePath)

        try durableCommits(count: commits, dir: dir)
    }

    /// One durable transaction per delivered fix, as live recording commits them.
    static func durableCommits(count: Int, dir: String) throws {
        let path = "\(dir)/bench-durable.sqlite"
        removeStore(path)
        let store = try SessionStore(path: path)
        let recorder = try store.beginSession(
            NewSession(
                kind: .record, source: "bench", settings: "{}", scenario: nil, createdAt: Date(),
                epoch: Date(timeIntervalSince1970: 0)),
            mode: .durable)
        let clock = ContinuousClock()
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for i in 0..<count {
            let location = Location(
                coordinate: Coordinate(latitude: 48.137 + Double(i) * 1e-6, longitude: 11.575), altitude: 520,
                horizontalAccuracy: 3.2, verticalAccuracy: 5, speed: 1.4, speedAccuracy: 0.3, course: 90,
                timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i) / 10),
                provenance: Provenance(
                    source: .gpsd(device: "/dev/ttyUSB0"), isSimulatedBySoftware: false, fixMode: .threeD,
                    satellitesUsed: 9, hdop: 0.8))
            let event = AuditEvent(
                offset: .milliseconds(100 * i),
                kind: .fix(
                    AuditEvent.FixRecord(
                        index: i, segment: 0, decision: .delivered, reason: .foreground, appState: .active,
                        authorization: .authorizedWhenInUse, accuracy: .fullAccuracy, coordinate: location.coordinate,
                        delivered: location, backgroundTimeRemaining: nil, indicator: false)))
            let start = clock.now
            guard recorder.record(event) else { throw recorder.failure! }
            latencies.append(seconds(clock.now - start) * 1000)
        }
        latencies.sort()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        removeStore(path)

        let peer = pythonCommits(count: count, dir: dir)
        print("")
        print(
            "\(column("durable live commits (synchronous=FULL, WAL)", 62))  \(column("p50 ms", 8))  \(column("p99 ms", 8))  p99 vs Python"
        )
        let ratio = peer.map { String(format: "%.2f×", p99 / $0.p99) } ?? "–"
        print(
            "\(column("waymark: one delivered fix (and its audit entry) per commit (\(count))", 62))  "
                + "\(column(String(format: "%.3f", p50), 8))  \(column(String(format: "%.3f", p99), 8))  \(ratio)")
        if let peer {
            print(
                "\(column("python3 sqlite3: one row per transaction (\(count))", 62))  "
                    + "\(column(String(format: "%.3f", peer.p50), 8))  \(column(String(format: "%.3f", peer.p99), 8))")
        } else {
            print("python3: not available; no ratio")
        }
        print("target: p99 ≤ 5 ms per durable commit")
    }

    /// Python's sqlite3 committing one row per transaction into the same kind of file.
    static func pythonCommits(count: Int, dir: String) -> (p50: Double, p99: Double)? {
        guard available("python3") else { return nil }
        let path = "\(dir)/bench-python.sqlite"
        removeStore(path)
        let script = """
            import sqlite3, time
            db = sqlite3.connect('\(path)', isolation_level=None)
            db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=FULL')
            db.execute('CREATE TABLE location (seq INTEGER PRIMARY KEY, time REAL, latitude REAL, longitude REAL, altitude REAL, horizontal_accuracy REAL, speed REAL, course REAL, app_state TEXT)')
            db.execute('CREATE TABLE event (seq INTEGER PRIMARY KEY, offset REAL, name TEXT, data TEXT)')
            lat = []
            for i in range(\(count)):
                t = time.perf_counter()
                db.execute('BEGIN IMMEDIATE')
                db.execute('INSERT INTO event VALUES (?,?,?,?)', (i, i / 10, 'fix', '{"index":%d}' % i))
                db.execute('INSERT INTO location VALUES (?,?,?,?,?,?,?,?,?)', (i, 1714550400 + i / 10, 48.137, 11.575, 520.0, 3.2, 1.4, 90.0, 'active'))
                db.execute('COMMIT')
                lat.append((time.perf_counter() - t) * 1000)
            lat.sort()
            print(lat[len(lat) // 2], lat[min(len(lat) - 1, len(lat) * 99 // 100)])
            """
        let r = shell("python3 -c \"$WAYMARK_BENCH_SCRIPT\"", environment: ["WAYMARK_BENCH_SCRIPT": script])
        removeStore(path)
        let parts = r.output.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return parts.count == 2 ? (parts[0], parts[1]) : nil
    }

    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Runs `command` with /bin/sh; returns its status and standard output.
    static func shell(_ command: String, environment: [String: String] = [:]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return (-1, "") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
