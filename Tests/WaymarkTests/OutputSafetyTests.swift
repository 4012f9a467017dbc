import Foundation
import Testing

@testable import WaymarkStore

/// No output replaces what a run reads or keeps: the store and its SQLite files, an input, or
/// another output of the same run, whatever name or link reaches it (issue 15, item 8).
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct OutputSafetyTests {
    /// A private directory with a copy of the walk and a store holding one replay.
    final class Place {
        let directory = temporaryPath("-outputs")
        var walk: String { directory + "/walk.gpx" }
        var store: String { directory + "/store.sqlite" }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixture("scenarios/traces/walk.gpx"), toPath: walk)
            let r = try run(Paths.waymark.path, ["replay", walk, "--store", store, "--quiet", "--rate", "max"])
            #expect(r.status == 0, "\(r.stderr)")
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
    }

    func refused(_ arguments: [String], naming fragment: String) throws {
        let r = try run(Paths.waymark.path, arguments)
        #expect(r.status == 64, "\(arguments): \(r.stderr)")
        #expect(r.stderr.contains(fragment), "\(arguments): \(r.stderr)")
    }

    @Test func anOutputThatIsTheStoreOrItsFilesIsRefused() throws {
        let p = try Place()
        let before = try #require(p.contents(p.store))
        try refused(["replay", p.walk, "--store", p.store, "--audit", p.store], naming: "is the session store")
        try refused(["replay", p.walk, "--store", p.store, "-o", p.store + "-wal"], naming: "-wal file")
        try refused(["sessions", "export", "1", "--store", p.store, "-o", p.store], naming: "is the session store")
        try refused(["render", "--session", "1", "--store", p.store, "-o", p.store], naming: "is the session store")
        try refused(
            ["record", "--gpsd", "localhost:9", "--store", p.store, "--gpx", p.store + "-shm"], naming: "-shm file")
        // The default store, reached through XDG_DATA_HOME, is protected the same way.
        let defaultStore = SessionStore.defaultPath(environment: ProcessInfo.processInfo.environment)
        try refused(["replay", p.walk, "--audit", defaultStore], naming: "is the session store")
        #expect(p.contents(p.store) == before, "the store is untouched")
        let db = try SessionStore(path: p.store, mode: .existing)
        #expect(try db.sessions().count == 1)
    }

    @Test func anOutputThatIsAnInputIsRefusedThroughAnyNameOrLink() throws {
        let p = try Place()
        let before = try #require(p.contents(p.walk))
        let hardLink = p.directory + "/hard.gpx"
        let symbolicLink = p.directory + "/soft.gpx"
        try FileManager.default.linkItem(atPath: p.walk, toPath: hardLink)
        try FileManager.default.createSymbolicLink(atPath: symbolicLink, withDestinationPath: p.walk)
        let dotted = p.directory + "/./walk.gpx"
        for output in [p.walk, hardLink, symbolicLink, dotted] {
            try refused(["render", p.walk, "--format", "gpx", "-o", output], naming: "is an input")
            try refused(["repair", p.walk, "-o", output], naming: "is an input")
            try refused(["replay", p.walk, "--no-store", "--audit", output], naming: "is an input")
        }
        let scenario = p.directory + "/s.yaml"
        try "end: 1m\n".write(toFile: scenario, atomically: false, encoding: .utf8)
        try refused(["replay", p.walk, "--no-store", "--scenario", scenario, "-o", scenario], naming: "is an input")
        #expect(p.contents(p.walk) == before, "the input is untouched")
    }

    @Test func twoOutputsOfOneRunMayNotBeTheSameFile() throws {
        let p = try Place()
        let out = p.directory + "/out.ndjson"
        try refused(["replay", p.walk, "--no-store", "-o", out, "--audit", out], naming: "are the same file")
        try refused(
            [
                "replay", p.walk, "--no-store", "-o", out, "--audit",
                p.directory + "/../" + URL(fileURLWithPath: p.directory).lastPathComponent + "/out.ndjson",
            ],
            naming: "are the same file")
        // Distinct files, and a device written in place, are fine.
        let ok = try run(
            Paths.waymark.path,
            ["replay", p.walk, "--no-store", "--rate", "max", "-o", "/dev/null", "--audit", p.directory + "/a.ndjson"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    // MARK: - Modes and temporary files (issue 15, item 16)

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    /// `render INPUT --format geojson -o OUTPUT` under the umask `mask`.
    static func render(_ input: String, to output: String, umask mask: String) throws -> ProcessResult {
        try run(
            "/bin/sh",
            [
                "-c", #"umask \#(mask) && exec "$0" render "$1" --format geojson -o "$2""#, Paths.waymark.path, input,
                output,
            ])
    }

    /// A new output follows the umask; one that replaces a file keeps that file's mode.
    @Test func outputsFollowTheUmaskAndKeepTheModeTheyReplace() throws {
        let p = try Place()
        let fresh = p.directory + "/fresh.geojson"
        let r = try Self.render(p.walk, to: fresh, umask: "077")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.mode(fresh) == 0o600)
        let open = p.directory + "/open.geojson"
        let r2 = try Self.render(p.walk, to: open, umask: "022")
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(Self.mode(open) == 0o644)
        // Replacing a private file keeps it private, whatever the umask.
        chmod(open, 0o640)
        let r3 = try run(Paths.waymark.path, ["sessions", "export", "1", "--store", p.store, "-o", open])
        #expect(r3.status == 0, "\(r3.stderr)")
        #expect(Self.mode(open) == 0o640)
    }

    /// A `render` started by `argv` (any command ending in render's own) that reads `fifo` and
    /// writes `out` in `directory`: returns once it has its temporary output and has read half a
    /// document, with the FIFO's writing end (which it is still waiting on).
    static func renderWaitingOnFIFO(_ argv: [String], fifo: String, out: String, directory: String) throws
        -> (pid: pid_t, writer: Int32)
    {
        let pid = try spawnUnblocked(argv, output: directory + "/log")
        // Opened without blocking, retried until render has the reading end, at most 10 s.
        var writer: Int32 = -1
        for _ in 0..<1000 where writer < 0 {
            writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if writer < 0 { usleep(10_000) }
        }
        #expect(writer >= 0, "render opened its input")
        let head = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        _ = head.withCString { write(writer, $0, strlen($0)) }
        let prefix = "." + URL(fileURLWithPath: out).lastPathComponent + ".waymark-"
        var temporary: [String] = []
        for _ in 0..<400 {
            temporary = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(prefix) }
            if !temporary.isEmpty { break }
            usleep(10_000)
        }
        #expect(temporary.count == 1, "the run has its temporary file")
        return (pid, writer)
    }

    /// A signal removes the temporary file of an output not yet complete; a later run removes
    /// the ones a killed run left, when they are over a day old, and only its own.
    @Test(.timeLimit(.minutes(45))) func temporaryFilesAreRemovedOnSignalsAndLaterWhenStale() throws {
        let p = try Place()
        let fifo = p.directory + "/input.gpx"
        #expect(mkfifo(fifo, 0o600) == 0)
        let out = p.directory + "/out.geojson"
        let render = [Paths.waymark.path, "render", fifo, "--format", "geojson", "-o", out]
        for number in [SIGINT, SIGTERM, SIGHUP] {
            let (pid, writer) = try Self.renderWaitingOnFIFO(render, fifo: fifo, out: out, directory: p.directory)
            kill(pid, number)
            // At most 10 s: a render that missed the signal is killed, and the test fails.
            let (status, _) = waitForExit(pid, within: 10)
            close(writer)
            #expect(status & 0x7F == number, "signal \(number): ended by it (status \(status))")
            let left = try FileManager.default.contentsOfDirectory(atPath: p.directory).filter {
                $0.contains(".waymark-")
            }
            #expect(left.isEmpty, "signal \(number) left \(left)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // Started with SIGINT ignored (a script's background job, nohup for SIGHUP), it keeps
        // running on SIGINT and is stopped by SIGTERM.
        let ignoring = ["/bin/sh", "-c", #"trap "" INT; exec "$0" "$@""#] + render
        let (pid, writer) = try Self.renderWaitingOnFIFO(ignoring, fifo: fifo, out: out, directory: p.directory)
        kill(pid, SIGINT)
        usleep(300_000)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, WNOHANG) == 0, "an ignored SIGINT stays ignored")
        kill(pid, SIGTERM)
        status = waitForExit(pid, within: 10).status
        close(writer)
        #expect(status & 0x7F == SIGTERM, "status \(status)")
        // Stale leftovers: two days old goes, a minute old stays, another name stays.
        let old = p.directory + "/.out.geojson.waymark-AbC123"
        let recent = p.directory + "/.out.geojson.waymark-XyZ789"
        let other = p.directory + "/.other.gpx.waymark-QwE456"
        for path in [old, recent, other] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        }
        let now = Date()
        try FileManager.default.setAttributes(
            [.modificationDate: now.addingTimeInterval(-2 * 86_400)], ofItemAtPath: old)
        try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-60)], ofItemAtPath: recent)
        try FileManager.default.setAttributes(
            [.modificationDate: now.addingTimeInterval(-2 * 86_400)], ofItemAtPath: other)
        let r = try run(Paths.waymark.path, ["render", p.walk, "--format", "geojson", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: recent))
        #expect(FileManager.default.fileExists(atPath: other))
    }
}
