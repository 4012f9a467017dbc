import Foundation
import Testing
import WaymarkPostGIS

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL cluster for the tests: `initdb` into the test process's scratch
/// directory, a port this process found free (and a Unix socket in that directory, which only
/// this cluster can own), started with Debian's binaries and stopped when the process exits.
/// It never touches a system cluster. As root, the server runs as the `postgres` user, which
/// PostgreSQL requires.
///
/// `scripts/test.sh` installs `postgresql` and `postgresql-15-postgis-3` when missing.
final class PostgresCluster: @unchecked Sendable {
    let directory: String
    let data: String
    let bin: String
    private let lock = NSLock()
    private var portValue: Int

    var port: Int { lock.withLock { portValue } }

    /// The cluster of this test process, started on first use.
    static let shared: Result<PostgresCluster, any Error> = {
        Result {
            let cluster = try PostgresCluster()
            atexit { if case .success(let c) = PostgresCluster.shared { c.stopImmediately() } }
            return cluster
        }
    }()

    /// The shared cluster, or the reason there is none (recorded as the test's failure).
    static func start() throws -> PostgresCluster { try shared.get() }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A cluster of its own, for a test that stops its server (``stopImmediately()``): the
    /// shared one serves tests running meanwhile. ``remove()`` ends it.
    init() throws {
        guard
            let bin = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .compactMap(Int.init).sorted().last.map({ "/usr/lib/postgresql/\($0)/bin" }),
            FileManager.default.isExecutableFile(atPath: bin + "/initdb")
        else {
            throw Failure(
                description: "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb); "
                    + "scripts/test.sh installs postgresql and postgresql-15-postgis-3")
        }
        self.bin = bin
        directory = temporaryPath("-pg")
        data = directory + "/data"
        portValue = 0
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            _ = try run("/bin/chown", ["postgres:postgres", directory])
        }
        let made = try asServerUser(
            bin + "/initdb",
            ["-D", data, "-U", "waymark", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        guard made.status == 0 else { throw Failure(description: "initdb failed: \(made.output)") }
        try startServer()
        let created = try run(bin + "/createdb", ["-h", directory, "-p", String(port), "-U", "waymark", "waymark"])
        guard created.status == 0 else { throw Failure(description: "createdb failed: \(created.stderr)") }
    }

    /// Runs `program` as the user the server runs as, its output in a file of the cluster's
    /// directory, not a pipe: a server it starts lives on and would hold a pipe open. Spawned
    /// with no signal blocked (``spawnUnblocked(_:output:error:input:processGroup:)``) and
    /// waited for with waitpid.
    func asServerUser(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = directory + "/command-\(UUID().uuidString).out"
        let argv = (getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []) + [program] + arguments
        let pid = try spawnUnblocked(argv, output: output)
        let ended = waitForExit(pid, within: hangGuardSeconds)
        defer { try? FileManager.default.removeItem(atPath: output) }
        return (exitStatus(ended.status), (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    func pgctl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try asServerUser(bin + "/pg_ctl", arguments)
    }

    /// Starts the server, on a new free port when `port` is 0 or taken meanwhile (a few tries):
    /// `pg_ctl -w` returns once it accepts connections.
    func startServer() throws {
        var last = ""
        for _ in 0..<5 {
            let port = self.port == 0 ? try freeLoopbackPorts(1)[0] : self.port
            let started = try pgctl([
                "-D", data, "-l", directory + "/server.log", "-w", "-t", "300", "-o",
                "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                "start",
            ])
            if started.status == 0 {
                lock.withLock { portValue = port }
                return
            }
            last = started.output + ((try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "")
            lock.withLock { portValue = 0 }
        }
        throw Failure(description: "the private PostgreSQL server did not start: \(last)")
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint, every
    /// connection cut); ``startServer()`` brings it back on the same port.
    func stopImmediately() {
        _ = try? pgctl(["-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// Stops the server and removes its directory.
    func remove() {
        stopImmediately()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The address of database `name` through the Unix socket.
    func address(database name: String = "waymark") -> String {
        "postgresql://waymark@/\(name)?host=\(directory)&port=\(port)"
    }

    /// The address of database `name` over TCP, at `port` (default the server's own).
    func tcpAddress(database name: String = "waymark", port: Int? = nil) -> String {
        "postgresql://waymark@127.0.0.1:\(port ?? self.port)/\(name)?sslmode=disable"
    }

    /// A new empty database of this cluster, for one test: tests do not see each other's
    /// sessions.
    func newDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let created = try run(bin + "/createdb", ["-h", directory, "-p", String(port), "-U", "waymark", name])
        guard created.status == 0 else { throw Failure(description: "createdb failed: \(created.stderr)") }
        return name
    }

    /// Runs SQL with psql on database `name`; its output, unaligned, without headers.
    func psql(_ sql: String, database name: String) throws -> String {
        let result = try run(
            bin + "/psql",
            [
                "-h", directory, "-p", String(port), "-U", "waymark", "-d", name, "-X", "-A", "-t", "-v",
                "ON_ERROR_STOP=1",
                "-c", sql,
            ])
        guard result.status == 0 else { throw Failure(description: "psql failed: \(result.stderr)") }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
