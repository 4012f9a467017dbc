import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// Sessions from the command line: replay stores one, `sessions` lists, shows, exports and
/// deletes it, `render --session` draws it, and bad stores (missing, foreign, damaged, full,
/// read-only) give an error that names the file.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct SessionsCLITests {
    static let walk = Paths.fixture("scenarios/traces/walk.gpx")

    func waymark(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try run(Paths.waymark.path, arguments, environment: environment)
    }

    /// A replay with background time, so that app states and reasons vary.
    func replayIntoStore(_ store: String, extra: [String] = []) throws -> ProcessResult {
        try waymark(
            [
                "replay", Self.walk, "--store", store, "--background-modes", "location", "--allows-background-updates",
                "--background-at", "1m", "--foreground-at", "3m", "--format", "ndjson", "--quiet",
            ] + extra)
    }

    static func lines(_ text: String) -> [String] { text.split(whereSeparator: \.isNewline).map(String.init) }

    @Test func aReplayIsASessionThatExportsWhatTheAppReceived() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let audit = temporaryPath(".ndjson")
        let r = try replayIntoStore(store, extra: ["--audit", audit])
        #expect(r.status == 0, "\(r.stderr)")
        let delivered = Self.lines(r.stdoutText)
        #expect(delivered.count > 20)
        #expect(r.stderr.contains("Session 1: \(delivered.count) location(s) stored in \(store)"), "\(r.stderr)")

        // Exports give back exactly what the run wrote.
        let ndjson = try waymark(["sessions", "export", "1", "--format", "ndjson", "--store", store])
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        #expect(ndjson.stdoutText == r.stdoutText, "the stored locations are the delivered ones")
        let auditExport = try waymark(["sessions", "export", "1", "--format", "audit", "--store", store])
        #expect(auditExport.stdoutText == (try String(contentsOfFile: audit, encoding: .utf8)))

        // list and show.
        let list = try waymark(["sessions", "list", "--json", "--store", store])
        #expect(list.status == 0, "\(list.stderr)")
        let sessions = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        #expect(sessions.count == 1)
        #expect(sessions[0]["id"] as? Int == 1 && sessions[0]["source"] as? String == Self.walk)
        #expect(sessions[0]["locationCount"] as? Int == delivered.count)
        #expect(sessions[0]["outcome"] as? String == "completed" && sessions[0]["kind"] as? String == "replay")
        let table = try waymark(["sessions", "list", "--store", store]).stdoutText
        #expect(table.hasPrefix("ID  KIND") && table.contains(" completed\n"), "\(table)")
        // The table's start is the whole date and time, not only the time of day (mutation m56):
        // sessions of different days must not look alike.
        let started = try #require(sessions[0]["started"] as? String)
        let shown = started.prefix(19).replacingOccurrences(of: "T", with: " ")
        #expect(started.count >= 19 && table.contains(shown), "\(started): \(table)")
        let show = try waymark(["sessions", "show", "1", "--store", store])
        #expect(show.stdoutText.contains("by app state: active "), "\(show.stdoutText)")
        #expect(show.stdoutText.contains("background "))
        #expect(show.stdoutText.contains("\"--background-at\",\"1m\""), "the settings are kept")
        let showJSON =
            try JSONSerialization.jsonObject(
                with: try waymark(["sessions", "show", "1", "--json", "--store", store]).stdout) as? [String: Any]
        #expect((showJSON?["locationsByReason"] as? [String: Int])?["backgroundSession"] ?? 0 > 0)
        // The path's length is that of the delivered locations, by the same statistics as `info`.
        var stats = TraceStatistics()
        try SessionStore(path: store, mode: .existing).locations(of: 1).forEachGPXEvent(name: "") { stats.add($0) }
        #expect(stats.length2D > 100)
        #expect(abs((showJSON?["length2D"] as? Double ?? 0) - stats.length2D) < 0.001)
        #expect(
            show.stdoutText.contains("  path:       \(ValueFormatting.fixed(stats.length2D / 1000, decimals: 2)) km"))
    }

    @Test(.enabled(if: Paths.sharedAvailable, "needs ../shared/tools"))
    func exportsAndRenderPassTheSharedCheckers() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        #expect(try replayIntoStore(store).status == 0)
        let gpx = temporaryPath(".gpx")
        let geojson = temporaryPath(".geojson")
        let rendered = temporaryPath(".geojson")
        #expect(try waymark(["sessions", "export", "1", "-f", "gpx", "-o", gpx, "--store", store]).status == 0)
        #expect(try waymark(["sessions", "export", "1", "-f", "geojson", "-o", geojson, "--store", store]).status == 0)
        let render = try waymark(["render", "--session", "1", "--store", store, "-f", "geojson", "-o", rendered])
        #expect(render.status == 0, "\(render.stderr)")
        let tools = Paths.shared.appendingPathComponent("tools")
        for file in [geojson, rendered] {
            let g = try run(tools.appendingPathComponent("check-geojson").path, ["--strict", file])
            #expect(g.status == 0, "\(g.stdoutText)\(g.stderr)")
        }
        let x = try run(tools.appendingPathComponent("check-gpx").path, [gpx])
        #expect(x.status == 0, "\(x.stdoutText)\(x.stderr)")
        // The GPX holds every delivered location, in its segments.
        let (document, _) = try readDocument(gpx)
        let store2 = try SessionStore(path: store, mode: .existing)
        let locations = try store2.locations(of: 1)
        #expect(
            document.tracks.first?.segments.flatMap(\.points).map(\.coordinate) == locations.map(\.location.coordinate))
        #expect(document.tracks.first?.segments.count == Set(locations.map(\.segment)).count)
        let text = try waymark(["sessions", "export", "1", "-f", "text", "--store", store])
        #expect(text.stdoutText.contains("points    \(locations.count) in 1 track(s)"), "\(text.stdoutText)")
    }

    /// With a store, the GeoJSON of the delivered locations is read back from it at the end;
    /// without one, from memory: the same bytes.
    @Test func geoJSONFromTheStoreEqualsGeoJSONFromMemory() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let args = [
            "replay", Self.walk, "--background-modes", "location", "--allows-background-updates", "--background-at",
            "1m", "--foreground-at", "3m", "--format", "geojson", "--quiet",
        ]
        let stored = try waymark(args + ["--store", store])
        let memory = try waymark(args + ["--no-store"])
        #expect(stored.status == 0 && memory.status == 0, "\(stored.stderr)\(memory.stderr)")
        #expect(stored.stdout.count > 1000)
        #expect(stored.stdout == memory.stdout)
    }

    @Test func theDefaultStoreIsUnderXDGDataHome() throws {
        let data = temporaryPath("-xdg")
        var env = ProcessInfo.processInfo.environment
        env["XDG_DATA_HOME"] = data
        #expect(try waymark(["replay", Self.walk, "--format", "ndjson", "-q"], environment: env).status == 0)
        #expect(FileManager.default.fileExists(atPath: data + "/waymark/waymark.sqlite"))
        let list = try waymark(["sessions", "list", "--json"], environment: env)
        #expect((try JSONSerialization.jsonObject(with: list.stdout) as? [Any])?.count == 1)
        #expect(try waymark(["replay", Self.walk, "-q", "--no-store"], environment: env).status == 0)
        let again = try waymark(["sessions", "list", "--json"], environment: env)
        #expect(
            (try JSONSerialization.jsonObject(with: again.stdout) as? [Any])?.count == 1, "--no-store stores nothing")
    }

    @Test func missingSessionsAndStoresAreClearErrors() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let missing = try waymark(["sessions", "list", "--store", store])
        #expect(missing.status == 66 && missing.stderr.contains("\(store): no store here yet"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store), "reading never creates a store")
        #expect(try replayIntoStore(store).status == 0)
        let noSession = try waymark(["sessions", "show", "7", "--store", store])
        #expect(noSession.status == 66 && noSession.stderr.contains("has no session 7"), "\(noSession.stderr)")
        let render = try waymark(["render", "--session", "7", "--store", store])
        #expect(render.status == 66)
        let both = try waymark(["render", Self.walk, "--session", "1", "--store", store])
        #expect(both.status == 64)
    }

    @Test func deleteRemovesTheSession() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        #expect(try replayIntoStore(store).status == 0)
        #expect(try replayIntoStore(store).status == 0)
        let d = try waymark(["sessions", "delete", "1", "--store", store])
        #expect(d.status == 0 && d.stderr.contains("Deleted session 1"), "\(d.stderr)")
        let list =
            try JSONSerialization.jsonObject(
                with: try waymark(["sessions", "list", "--json", "--store", store]).stdout) as? [[String: Any]]
        #expect(list?.map { $0["id"] as? Int } == [2])
        #expect(try waymark(["sessions", "delete", "1", "--store", store]).status == 66)
    }

    @Test func foreignAndDamagedFilesAreRefusedWithTheirPath() throws {
        let garbage = temporaryPath(".sqlite")
        try Data(repeating: 0x5A, count: 10_000).write(to: URL(fileURLWithPath: garbage))
        for args in [["replay", Self.walk, "-q", "--store", garbage], ["sessions", "list", "--store", garbage]] {
            let r = try waymark(args)
            #expect(r.status == 65, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("\(garbage): is not an SQLite database"), "\(r.stderr)")
        }
        if let sqlite3 = which("sqlite3") {
            let foreign = temporaryPath(".sqlite")
            _ = try run(sqlite3, [foreign, "CREATE TABLE t (x)"])
            let r = try waymark(["replay", Self.walk, "-q", "--store", foreign])
            #expect(r.status == 65 && r.stderr.contains("\(foreign): is an SQLite database but not a Waymark store"))
        }
    }

    /// A store whose pages are damaged is refused by replay and record exactly as `sessions`
    /// refuses it, and nothing is written into it (issue 15, item 10).
    @Test func aDamagedStoreIsRefusedBeforeAnythingIsWrittenIntoIt() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        for _ in 0..<3 { #expect(try replayIntoStore(store).status == 0) }
        // Overwrite 200 bytes in the middle of every page after the second.
        let handle = try #require(FileHandle(forUpdatingAtPath: store))
        let size = try handle.seekToEnd()
        #expect(size >= 5 * 4096, "a store of a few pages")
        for page in stride(from: UInt64(2 * 4096), to: size, by: 4096) {
            try handle.seek(toOffset: page + 100)
            handle.write(Data(repeating: 0xFF, count: 200))
        }
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let list = try waymark(["sessions", "list", "--store", store])
        #expect(list.status == 65)
        let message = "\(store): the database is damaged"
        #expect(list.stderr.contains(message), "\(list.stderr)")
        for args in [
            ["replay", Self.walk, "-q", "--store", store],
            ["record", "--gpsd", "localhost:9", "--store", store, "--duration", "1s"],
        ] {
            let r = try waymark(args)
            #expect(r.status == 65, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "nothing was written")
        let wal = (try? Data(contentsOf: URL(fileURLWithPath: store + "-wal"))) ?? Data()
        #expect(wal.isEmpty, "nothing was written into the write-ahead log either")
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: store).deletingLastPathComponent().path)
    }

    // MARK: - Full and read-only file systems

    /// A small tmpfs, when this process may mount one (root in CI).
    final class TinyFileSystem {
        let path: String
        private let mount: String
        init?(size: String) {
            path = temporaryPath("-tmpfs")
            // WAYMARK_TEST_NO_MOUNT=1 exercises the fallbacks used where mounting is not allowed.
            guard getuid() == 0, ProcessInfo.processInfo.environment["WAYMARK_TEST_NO_MOUNT"] == nil,
                let mount = which("mount"),
                (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil,
                (try? run(mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]))?.status == 0
            else { return nil }
            self.mount = mount
        }
        func remountReadOnly() throws -> Bool {
            try run(mount, ["-o", "remount,ro", path]).status == 0
        }
        deinit { _ = try? run(which("umount") ?? "/bin/umount", [path]) }
    }

    /// A long trace: 20 000 points a second apart.
    static let longTrace: String = {
        let path = temporaryPath("-long.gpx")
        var text =
            "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        let start = 1_714_550_400
        for i in 0..<20_000 {
            let time = ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(start + i)))
            text +=
                "<trkpt lat=\"\(48.1 + Double(i) * 1e-5)\" lon=\"\(11.5 + Double(i) * 1e-5)\"><ele>500</ele><time>\(time)</time></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        try? text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }()

    /// On a 700 KiB tmpfs when this process may mount one (root in CI), else under a file size
    /// limit (`ulimit -f`), which the store meets the same way. (600 KiB until schema v6, whose
    /// new store is a few pages larger: the first batch of a `--rate max` run no longer fit.)
    @Test(arguments: ["max", "2000"])
    func aFullDiskStopsCleanlyAndKeepsWhatWasStored(rate: String) throws {
        let fs = TinyFileSystem(size: "700k")
        let store = (fs?.path ?? temporaryPath("-fsize")) + "/s.sqlite"
        try FileManager.default.createDirectory(
            atPath: (store as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let arguments = ["replay", Self.longTrace, "--store", store, "--format", "ndjson", "--rate", rate]
        let r: ProcessResult
        if fs != nil {
            r = try waymark(arguments)
        } else {
            let quoted = ([Paths.waymark.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            r = try run("/bin/sh", ["-c", "ulimit -f 1200 && exec \(quoted)"])
        }
        #expect(r.status == 74, "\(r.stderr.suffix(500))")
        #expect(
            r.stderr.contains("waymark: \(store): the disk is full, or the file may grow no larger"),
            "\(r.stderr.suffix(500))")
        let printed = Self.lines(r.stdoutText)
        #expect(printed.count > (rate == "max" ? 100 : 10), "a durable commit per event fills the WAL sooner")
        // Everything printed is stored, the store opens cleanly, and the session says it failed.
        let db = try SessionStore(path: store, mode: .existing)
        #expect(try db.integrityCheck() == ["ok"])
        let stored = try db.locations(of: 1).map { $0.ndjson().dropLast() }.map(String.init)
        #expect(Set(printed).isSubset(of: Set(stored)), "every acknowledged location is in the store")
        #expect(stored.count >= printed.count && stored.count < 20_000)
        // Failed when the full disk still took the closing update; else its process is gone and
        // it shows as interrupted. Never "completed".
        #expect([.failed, .interrupted].contains(try db.session(1).outcome))
    }

    /// Issue 15, item 4: rows the schema allows but Waymark never writes (from `sqlite3
    /// .recover`, which Waymark's own error message suggests) trapped `sessions` and `render
    /// --session`. Each is now left out with a warning naming the session and the row, and the
    /// rest is still listed and exported.
    @Test(.enabled(if: which("sqlite3") != nil, "needs the sqlite3 shell"))
    func rowsWaymarkNeverWritesAreReportedAndTheRestRead() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        defer { try? FileManager.default.removeItem(atPath: (store as NSString).deletingLastPathComponent) }
        let r = try replayIntoStore(store)
        #expect(r.status == 0, "\(r.stderr)")
        let delivered = Self.lines(r.stdoutText)
        let audit = try waymark(["sessions", "export", "1", "--format", "audit", "--store", store])
        // The store's checks refuse such rows (schema v4); a repair may turn them off.
        let sql = """
            PRAGMA ignore_check_constraints = ON;
            UPDATE location SET latitude = NULL WHERE id = (SELECT min(id) FROM location);
            UPDATE location SET fix_index = 'abc' WHERE id = (SELECT min(id) + 1 FROM location);
            UPDATE location SET time = 1e300 WHERE id = (SELECT min(id) + 2 FROM location);
            UPDATE event SET name = X'FFFE' WHERE id = (SELECT min(id) FROM event);
            INSERT INTO session (kind, source, settings, created_at, epoch, outcome)
              VALUES ('replay', 'recovered.gpx', '{}', 'yesterday', 0, 'completed');
            """
        let edit = try run(try #require(which("sqlite3")), [store, sql])
        #expect(edit.status == 0, "\(edit.stderr)")

        let list = try waymark(["sessions", "list", "--json", "--store", store])
        #expect(list.status == 0, "\(list.stderr)")
        let sessions = try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]]
        #expect(sessions?.map { $0["id"] as? Int } == [1])
        #expect(
            list.stderr.contains("session 2: its row cannot be read (created_at holds the text 'yesterday'"),
            "\(list.stderr)")

        let ndjson = try waymark(["sessions", "export", "1", "--format", "ndjson", "--store", store])
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        #expect(Self.lines(ndjson.stdoutText).count == delivered.count - 3)
        #expect(ndjson.stderr.contains("time 1e+300 is outside the years −9999 to 9999"), "\(ndjson.stderr)")
        #expect(
            ndjson.stderr.contains(/session 1, location row [0-9]+: latitude is NULL; the row is left out/),
            "\(ndjson.stderr)")
        #expect(ndjson.stderr.contains(/location row [0-9]+: fix index holds the text 'abc'/), "\(ndjson.stderr)")

        let events = try waymark(["sessions", "export", "1", "--format", "audit", "--store", store])
        #expect(events.status == 0, "\(events.stderr)")
        #expect(Self.lines(events.stdoutText).count == Self.lines(audit.stdoutText).count - 4)
        #expect(
            events.stderr.contains(/event row [0-9]+: name holds bytes that are not UTF-8 text/), "\(events.stderr)")

        for format in ["geojson", "gpx", "text"] {
            let out = try waymark(["render", "--session", "1", "--format", format, "--store", store])
            #expect(out.status == 0, "\(format): \(out.stderr)")
            #expect(out.stderr.contains("latitude is NULL"), "\(format): \(out.stderr)")
        }
    }

    @Test func aReadOnlyStoreIsAClearError() throws {
        // Root writes through file modes: a read-only mount stops it, or running the replay as
        // nobody. Anyone else: file modes.
        let fs = getuid() == 0 ? TinyFileSystem(size: "4m") : nil
        let directory = fs?.path ?? temporaryPath("-ro")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = directory + "/s.sqlite"
        #expect(try replayIntoStore(store).status == 0)
        if let fs {
            #expect(try fs.remountReadOnly())
        } else {
            chmod(store, 0o444)
            chmod(directory, 0o555)
        }
        let r: ProcessResult
        if fs == nil && getuid() == 0, let runuser = which("runuser") {
            chmod(Self.walk, 0o644)
            r = try run(
                runuser,
                [
                    "-u", "nobody", "--", Paths.waymark.path, "replay", Self.walk, "--store", store, "--format",
                    "ndjson", "--quiet",
                ])
        } else {
            r = try replayIntoStore(store)
        }
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.contains("waymark: \(store): cannot "), "\(r.stderr)")
        #expect(r.stderr.contains("read-only") || r.stderr.contains("not writable"), "\(r.stderr)")
        #expect(r.stdoutText.isEmpty, "nothing is shown that is not stored")

        // Issue 15, item 17: what is stored can still be listed and exported, with a note.
        func asTheUser(_ arguments: [String]) throws -> ProcessResult {
            if fs == nil && getuid() == 0, let runuser = which("runuser") {
                return try run(runuser, ["-u", "nobody", "--", Paths.waymark.path] + arguments)
            }
            return try waymark(arguments)
        }
        let list = try asTheUser(["sessions", "list", "--json", "--store", store])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stderr.contains("\(store) is read-only for this user; it is read as it is"), "\(list.stderr)")
        let sessions = try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]]
        #expect(sessions?.count == 1 && sessions?.first?["outcome"] as? String == "completed")
        let export = try asTheUser(["sessions", "export", "1", "--format", "ndjson", "--store", store])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(Self.lines(export.stdoutText).count > 20)
        // Deleting needs writing: refused, with the reason.
        let delete = try asTheUser(["sessions", "delete", "1", "--store", store])
        #expect(delete.status != 0, "\(delete.stderr)")
        if fs == nil { chmod(directory, 0o755) }
    }
}
