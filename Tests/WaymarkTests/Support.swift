import Foundation
import Testing

@testable import Waymark

/// Paths and helpers the tests share.
enum Paths {
    /// The package root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    /// `../shared` beside the project: the third-party corpus and checkers (present in CI).
    static let shared = root.deletingLastPathComponent().appendingPathComponent("shared")
    static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: shared.appendingPathComponent("corpus").path)
    }
    static let corpus = shared.appendingPathComponent("corpus")
    /// The built tool. Reaching it first points XDG_DATA_HOME, in this process and so in every
    /// child, at a fresh directory: the CLI tests never write into the user's own session store.
    static let waymark: URL = {
        let data = URL(fileURLWithPath: TestScratch.directory).appendingPathComponent("data")
        try? FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        setenv("XDG_DATA_HOME", data.path, 1)
        return builtProducts.appendingPathComponent("waymark")
    }()

    /// Where the build put its products: beside the test binary, whatever the configuration,
    /// sanitizer or `--build-path` (on Linux the tests run as WaymarkPackageTests.xctest, an
    /// executable among the products); else `.build/debug`.
    static let builtProducts: URL = {
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("waymark").path) {
                return directory
            }
        }
        return root.appendingPathComponent(".build/debug")
    }()

    static func fixture(_ relative: String) -> String { fixtures.appendingPathComponent(relative).path }

    /// Every GPX file the project has, good and bad (fixtures and `traces/`), as full paths;
    /// with `corpus`, the third-party corpus too when it is present.
    static func projectGPXFiles(corpus: Bool) -> [String] {
        var files = ["gpx", "bad"].flatMap { dir in
            Paths.files(under: fixtures.appendingPathComponent(dir), suffix: ".gpx").map { fixture("\(dir)/\($0)") }
        }
        files += Paths.files(under: root.appendingPathComponent("traces"), suffix: ".gpx").map {
            root.appendingPathComponent("traces/\($0)").path
        }
        if corpus && sharedAvailable {
            files += Paths.files(under: Paths.corpus, suffix: ".gpx").map {
                Paths.corpus.appendingPathComponent($0).path
            }
        }
        return files
    }

    /// Files under `directory` with `suffix`, sorted, relative to it.
    static func files(under directory: URL, suffix: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(suffix) }.sorted()
    }
}

/// Loopback TCP ports that were free a moment ago: the kernel picks each by binding port 0, and all
/// are held at once so that they differ. The gpsd tests' private ports come from here, never from
/// a fixed number another program may hold; a caller still checks that the process it started is
/// the one that listens (it retries with new ports when not).
func freeLoopbackPorts(_ count: Int) throws -> [Int] {
    var sockets: [Int32] = []
    defer { for fd in sockets { close(fd) } }
    var ports: [Int] = []
    for _ in 0..<count {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        sockets.append(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE) }
        ports.append(Int(UInt16(bigEndian: address.sin_port)))
    }
    return ports
}

/// The JSON objects of NDJSON text, one per line; a line that is not an object is an error.
func ndjsonObjects(_ text: String) throws -> [[String: Any]] {
    try text.split(whereSeparator: \.isNewline).map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
}

/// A raw wait status as a shell reports it: the exit code, or 128 plus the signal that ended it.
func exitStatus(_ raw: Int32) -> Int32 {
    (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
}

/// Waits for the child `pid` to end, at most `seconds`: one still running then is killed
/// (SIGKILL), so a test of how a program stops fails rather than hangs. Returns its raw wait
/// status and whether it had to be killed.
func waitForExit(_ pid: pid_t, within seconds: Double) -> (status: Int32, timedOut: Bool) {
    var status: Int32 = 0
    var timedOut = false
    var waited = 0.0
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid || (done == -1 && errno != EINTR) { break }
        if waited >= seconds && !timedOut {
            kill(pid, SIGKILL)
            timedOut = true
        }
        usleep(10_000)
        waited += 0.01
    }
    return (status, timedOut)
}

/// ``waitForExit(_:within:)`` without holding a thread of the test runner's pool: the child is
/// polled for every 20 ms. `seconds` guards against a hang; it is no measure of how long the
/// program should take.
func waitForExitAsync(_ pid: pid_t, within seconds: Double) async -> (status: Int32, timedOut: Bool) {
    var status: Int32 = 0
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var timedOut = false
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid || (done == -1 && errno != EINTR) { break }
        if ContinuousClock.now >= deadline && !timedOut {
            kill(pid, SIGKILL)
            timedOut = true
        }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return (status, timedOut)
}

/// The CPU time (user and system) the calling thread has used so far: a measure of the work a
/// synchronous test does, whatever else the machine does meanwhile.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Runs a program to completion (as ``runUnblockedAsync(_:)``) and measures the CPU time it
/// used, from its own resource usage (wait4).
func runMeasuringCPU(_ argv: [String]) async throws -> (result: ProcessResult, cpu: Double) {
    let run = try UnblockedRun(argv)
    var status: Int32 = 0
    var usage = rusage()
    while true {
        let done = wait4(run.pid, &status, WNOHANG, &usage)
        if done == run.pid || (done == -1 && errno != EINTR) { break }
        try? await Task.sleep(for: .milliseconds(20))
    }
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (run.result(status: status), seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

/// The CPU time (user and system) the process `pid` has used so far, from `/proc/PID/stat`.
func cpuSeconds(of pid: pid_t) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // After the command's name: state is field 3, utime 14 and stime 15 (man 5 proc).
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// The resident memory of the process `pid` (VmRSS in `/proc/PID/status`), in bytes.
func residentBytes(of pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return nil }
    return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
}

/// Whether the child `pid` is still running; one that has ended is not reaped (its exit status
/// stays for whoever waits for it).
func isRunning(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return false }
    return info._sifields._sigchld.si_pid == 0
}

/// Whether the child `pid` has exited (it is reaped if so).
func hasExited(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == pid
}

/// A finished process.
struct ProcessResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

/// Runs a program to completion, feeding `input` to its standard input.
func run(
    _ executable: String, _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil,
    directory: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if let environment { process.environment = environment }
    let outPipe = Pipe()
    let errPipe = Pipe()
    let inPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = inPipe
    try process.run()
    let group = DispatchGroup()
    nonisolated(unsafe) var out = Data()
    nonisolated(unsafe) var err = Data()
    DispatchQueue.global().async(group: group) { out = outPipe.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { err = errPipe.fileHandleForReading.readDataToEndOfFile() }
    if let input { inPipe.fileHandleForWriting.write(input) }
    try? inPipe.fileHandleForWriting.close()
    if group.wait(timeout: .now() + hangGuardSeconds) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        recordHang([executable] + arguments, sourceLocation)
        group.wait()
    }
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: out, stderr: String(decoding: err, as: UTF8.self))
}

/// Runs a program to completion without holding a thread of the test runner's pool while it
/// waits: tests that wait seconds for a program must not starve the others (the pool has one
/// thread per core, two in CI), whose time limits would then run out.
func runAsync(_ executable: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation)
    async throws -> ProcessResult
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let outPipe = Pipe()
    let errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = FileHandle.nullDevice
    let ended = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in ended.signal() }
    try process.run()
    // The hang guard: a program still running then is killed, and the test fails saying so.
    let pid = process.processIdentifier
    let killed = ManagedFlag()
    let guardTimer = DispatchSource.makeTimerSource(queue: .global())
    guardTimer.schedule(deadline: .now() + hangGuardSeconds)
    guardTimer.setEventHandler {
        killed.set()
        kill(pid, SIGKILL)
    }
    guardTimer.resume()
    defer { guardTimer.cancel() }
    // The pipes are read, both at once, and the end waited for, on Dispatch's threads.
    let result = await withCheckedContinuation { continuation in
        let group = DispatchGroup()
        nonisolated(unsafe) var out = Data()
        nonisolated(unsafe) var err = Data()
        DispatchQueue.global().async(group: group) { out = outPipe.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { err = errPipe.fileHandleForReading.readDataToEndOfFile() }
        group.notify(queue: .global()) {
            ended.wait()
            continuation.resume(
                returning: ProcessResult(
                    status: process.terminationStatus, stdout: out, stderr: String(decoding: err, as: UTF8.self)))
        }
    }
    if killed.isSet { recordHang([executable] + arguments, sourceLocation) }
    return result
}

/// How long a program a test runs may take before it counts as hung: a guard far above what
/// any run in the suite needs on a loaded machine (the whole suite takes minutes), so that a
/// hang fails the one test with the command named instead of stopping the run until CI's limit.
let hangGuardSeconds = 900.0

/// Fails the test: `argv` was still running after the hang guard, and was killed.
func recordHang(_ argv: [String], _ sourceLocation: SourceLocation) {
    Issue.record(
        "still running after \(Int(hangGuardSeconds)) s, killed: \(argv.joined(separator: " "))",
        sourceLocation: sourceLocation)
}

/// A flag set on one thread and read on another.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Waits, without holding a thread of the test runner's pool, until `condition` holds or
/// `seconds` pass; whether it held. For a test that watches another program's progress:
/// `seconds` is a guard against a hang, far above what any machine needs, never a measure of
/// how long something should take.
func waitUntil(within seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

/// Finds a program on PATH.
func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// Reads every event of a GPX source into a list.
func events(of reader: GPXReader) throws -> [GPXEvent] {
    var list: [GPXEvent] = []
    try reader.read { list.append($0) }
    return list
}

func readDocument(_ path: String, lenient: Bool = false) throws -> (GPXDocument, [GPXWarning]) {
    var warnings: [GPXWarning] = []
    let doc = try GPXDocument(contentsOf: path, options: GPXReadOptions(lenient: lenient)) { warnings.append($0) }
    return (doc, warnings)
}

func parseDocument(_ text: String, lenient: Bool = false, pieceSize: Int = .max) throws -> GPXDocument {
    let reader = GPXReader(
        source: MemoryByteSource(Array(text.utf8), pieceSize: pieceSize), name: "test.gpx",
        options: GPXReadOptions(lenient: lenient))
    return try GPXDocument(reader: reader, warnings: nil)
}

/// Writes into a temporary file through a FileSink and returns the bytes.
func render(_ body: (FileSink) throws -> Void) throws -> Data {
    let path = temporaryPath("")
    let sink = try FileSink(atomicPath: path)
    try body(sink)
    try sink.commit()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try Data(contentsOf: URL(fileURLWithPath: path))
}

func temporaryPath(_ suffix: String) -> String {
    TestScratch.directory + "/waymark-test-\(UUID().uuidString)\(suffix)"
}

/// The test process's own scratch directory, `waymark-tests-PID` in the system's temporary
/// directory: every temporary file of the tests goes in it, and so does every temporary file of
/// the programs they run (TMPDIR points there), and it is removed when the process exits.
/// Directories that earlier test processes left (killed, so their exit handler never ran) are
/// removed when the next one starts, if their process is gone.
enum TestScratch {
    static let directory: String = {
        let system = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let base = system.hasSuffix("/") ? String(system.dropLast()) : system
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        where name.hasPrefix("waymark-tests-") {
            if let pid = pid_t(name.dropFirst("waymark-tests-".count)), pid != getpid(),
                kill(pid, 0) == -1 && errno == ESRCH
            {
                try? FileManager.default.removeItem(atPath: base + "/" + name)
            }
        }
        let path = base + "/waymark-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)  // gpsd runs as nobody in directories made inside it
        setenv("TMPDIR", path, 1)
        atexit { try? FileManager.default.removeItem(atPath: TestScratch.directory) }
        return path
    }()
}

/// The ground truth computed with gpxpy and GeographicLib, from ../shared/corpus/gpx_truth.json.
enum Truth {
    // Immutable after its lazy initialisation, which Swift makes thread-safe.
    nonisolated(unsafe) static let table: [String: Any] = {
        guard let data = try? Data(contentsOf: Paths.corpus.appendingPathComponent("gpx_truth.json")),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }()

    /// Corpus GPX inputs that gpxpy parsed.
    static var parsedInputs: [String] {
        table.keys.filter { key in
            guard let entry = table[key] as? [String: Any], entry["role"] as? String == "input",
                let g = entry["gpxpy"] as? [String: Any]
            else { return false }
            return g["parse_ok"] as? Bool == true
        }.sorted()
    }
}

/// Runs a program with every signal unblocked and at its default disposition, standard output
/// captured, standard input from /dev/null. Foundation's `Process` passes on the signal mask of
/// the thread that starts it, and under Swift's thread pool that blocks signals gpsfake's
/// Python relies on (it then never finishes).
func runUnblocked(_ argv: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
    let run = try UnblockedRun(argv)
    let (status, timedOut) = waitForExit(run.pid, within: hangGuardSeconds)
    if timedOut { recordHang(argv, sourceLocation) }
    return run.result(status: status)
}

/// ``runUnblocked(_:)`` without holding a thread of the test runner's pool while the program
/// runs (it is polled for every 20 ms).
func runUnblockedAsync(_ argv: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws
    -> ProcessResult
{
    try await UnblockedRun(argv).finish(sourceLocation: sourceLocation)
}

/// A program started by ``spawnUnblocked(_:output:error:)`` with its output and error in
/// temporary files, which its result reads and removes.
struct UnblockedRun {
    let pid: pid_t
    let argv: [String]
    let processGroup: Bool
    let out = temporaryPath(".out")
    let err = temporaryPath(".err")

    /// `processGroup`: the program leads a process group of its own, which ``killGroup()`` ends
    /// with everything it started.
    init(_ argv: [String], processGroup: Bool = false) throws {
        self.argv = argv
        self.processGroup = processGroup
        pid = try spawnUnblocked(argv, output: out, error: err, processGroup: processGroup)
    }

    /// Ends the process group this program leads (started with `processGroup`).
    func killGroup() { kill(-pid, SIGKILL) }

    /// The result once `wait` has waited for the program and set its raw status.
    func result(_ wait: (pid_t, inout Int32) -> Void) -> ProcessResult {
        var status: Int32 = 0
        wait(pid, &status)
        return result(status: status)
    }

    /// Waits for the program to end, without holding a thread of the test runner's pool (it is
    /// polled for every 20 ms), and gives its result. One still running after the hang guard
    /// is killed (with its group, if it leads one), and the test fails saying so.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) async -> ProcessResult {
        var status: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(hangGuardSeconds)
        var killed = false
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid || (done == -1 && errno != EINTR) { break }
            if !killed && ContinuousClock.now >= deadline {
                kill(processGroup ? -pid : pid, SIGKILL)
                killed = true
                recordHang(argv, sourceLocation)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return result(status: status)
    }

    func result(status: Int32) -> ProcessResult {
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        return ProcessResult(
            status: exitStatus(status), stdout: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(),
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Debian 12 has 2.36),
/// which Swift's Glibc module does not import: looked up once, by name.
private let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()

/// Starts a program in the background, signals unblocked, output (and error, unless given
/// apart) to `output`, standard input from `input` (a descriptor of the caller's, such as a
/// pipe's read end) or else /dev/null; returns its pid.
///
/// The program gets these three descriptors and no other. The test process has many open at
/// once, and Foundation opens pipes and files without close-on-exec: a long-lived program
/// (gpsd, serve, tmux's server) that inherited the write end of another test's pipe kept that
/// test's reader from ever seeing the end of its input, and a test's client socket from
/// closing when the test closed it.
func spawnUnblocked(
    _ argv: [String], output: String, error: String? = nil, input: Int32? = nil, processGroup: Bool = false
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let input {
        posix_spawn_file_actions_adddup2(&actions, input, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, error ?? output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    guard let addCloseFrom, addCloseFrom(&actions, 3) == 0 else {
        throw POSIXError(.ENOSYS)  // glibc before 2.34: every test's descriptors would leak
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
    if processGroup {
        posix_spawnattr_setpgroup(&attributes, 0)
        flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))
    var cArgs = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    var pid: pid_t = 0
    let rc = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArgs, environ)
    guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
    return pid
}

/// For a transition table of a state machine: every pair of a state and an event the table does
/// not list must leave the machine as it was, with nothing to do; with the table, that covers
/// every transition. `run` applies the event to a machine in the state and says whether it was
/// ignored: no action, and the state unchanged.
func expectUnlistedPairsAreIgnored<State, Event>(
    states: [String: State], events: [String: Event], listed: [(String, String)],
    sourceLocation: SourceLocation = #_sourceLocation, _ run: (State, Event) -> (noActions: Bool, unchanged: Bool)
) {
    let table = Set(listed.map { "\($0.0) \($0.1)" })
    #expect(table.count == listed.count, "a pair is listed twice", sourceLocation: sourceLocation)
    var ignored = 0
    for (name, state) in states {
        for (eventName, event) in events where !table.contains("\(name) \(eventName)") {
            let result = run(state, event)
            #expect(result.noActions, "\(name) + \(eventName)", sourceLocation: sourceLocation)
            #expect(result.unchanged, "\(name) + \(eventName)", sourceLocation: sourceLocation)
            ignored += 1
        }
    }
    #expect(ignored + listed.count == states.count * events.count, sourceLocation: sourceLocation)
}
