import ArgumentParser
import Waymark
import WaymarkPostGIS
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--store`: where the sessions live.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The session store: a SQLite file (default: $WAYMARK_STORE, else $XDG_DATA_HOME/waymark/waymark.sqlite, else ~/.local/share/waymark/waymark.sqlite), or a PostGIS database, postgresql://user@host:5432/database (docs/fleet.md).",
            valueName: "path|url"))
    var store: String?

    /// `--store`, else `$WAYMARK_STORE`, else the default file.
    var given: String? {
        store ?? ProcessInfo.processInfo.environment["WAYMARK_STORE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws { _ = try postgis() }

    /// The PostGIS store named, when `--store` (or `$WAYMARK_STORE`) is an address.
    func postgis() throws -> PostGISAddress? {
        guard let given, PostGISAddress.isAddress(given) else { return nil }
        do {
            return try PostGISAddress(given)
        } catch let error as PostGISError {
            throw ValidationError("--store: \(error)")
        }
    }

    /// The local SQLite store: `--store`'s file, or the default one when `--store` names a
    /// PostGIS database (where record and replay write first, and forward from).
    var path: String {
        if let given, !PostGISAddress.isAddress(given) { return given }
        return SessionStore.defaultPath(environment: ProcessInfo.processInfo.environment)
    }

    /// Opens the store for reading commands: a missing store is an error, not a new file. A
    /// store this user may not write is read as it is, with a note that says so.
    func openExisting() throws -> SessionStore {
        if let address = try postgis() {
            // Only the commands that know both stores check for an address first; the rest
            // (restore, render --session) read a local file and must not read another one.
            throw ValidationError(
                "this command reads a local store (a file), and --store (or $WAYMARK_STORE) names a PostGIS database, "
                    + "\(address); `waymark sessions export ID --store …` reads a session from it")
        }
        let store = try SessionStore(path: path, mode: .existing)
        if let aside = store.setAsideByUpgrade { printError(SetAsideText.upgrade(aside, store: path)) }
        if store.isReadOnly {
            printError(
                "waymark: note: \(path) is read-only for this user; it is read as it is (sessions can be "
                    + "listed, shown and exported, not recorded or deleted)")
            if store.unreadChanges {
                printError(
                    "waymark: note: its -wal file holds changes that only a user who may write the store can "
                        + "fold in; they are not shown")
            }
        }
        return store
    }
}

/// The store options of `replay` and `record`, which write a session unless told not to.
struct SessionOptions: ParsableArguments {
    @OptionGroup var location: StoreOptions

    @Flag(help: "Do not store this run as a session.")
    var noStore = false

    @Option(
        help: ArgumentHelp(
            "Forward the session to this PostGIS store while it runs, from the local store where it is written first (docs/fleet.md). --store postgresql://… does the same.",
            valueName: "url"))
    var forward: String?

    @Option(
        name: .customLong("device-name"),
        help: ArgumentHelp(
            "The receiver or machine the session comes from, as `sessions list --device` matches it (default: record, this host and gpsd's device, such as pi-7:/dev/ttyACM0; replay, this host).",
            valueName: "name"))
    var deviceName: String?

    /// `argument` with the password of a URL in it replaced by `***`: a session's settings keep
    /// its command line, and are shown and forwarded.
    static func withoutPassword(_ argument: String) -> String {
        guard let scheme = argument.range(of: "://"),
            let at = argument[scheme.upperBound...].firstIndex(of: "@"),
            let colon = argument[scheme.upperBound..<at].firstIndex(of: ":")
        else { return argument }
        return String(argument[..<argument.index(after: colon)]) + "***" + String(argument[at...])
    }

    /// Where the session is forwarded: `--forward`, else `--store` when it is an address.
    func forwardTarget() throws -> PostGISAddress? {
        if let forward {
            do {
                return try PostGISAddress(forward)
            } catch let error as PostGISError {
                throw ValidationError("--forward: \(error)")
            }
        }
        return try location.postgis()
    }

    @Option(
        help: ArgumentHelp(
            "A name for the session, shown by `sessions list` and `sessions show` and matched by `sessions list --label`.",
            valueName: "text"))
    var label: String?

    func validate() throws {
        if let label {
            if label.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ValidationError("--label must not be empty")
            }
            if label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError("--label must be one line of text (no control characters)")
            }
            if noStore { throw ValidationError("--label names the stored session; --no-store stores none: drop one") }
        }
        if forward != nil, let given = location.given, PostGISAddress.isAddress(given) {
            throw ValidationError(
                "--store names a PostGIS database and --forward another: give one (--store postgresql://… forwards there)"
            )
        }
        if noStore, try forwardTarget() != nil {
            throw ValidationError(
                "--no-store stores no session, so there is nothing to forward: drop --no-store or --forward/--store URL"
            )
        }
        if let deviceName,
            deviceName.isEmpty
                || deviceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            throw ValidationError("--device-name must be a name on one line (not empty, no control characters)")
        }
    }

    /// Opens the store and starts a session, or returns nil with --no-store.
    ///
    /// A file size limit (`ulimit -f`) then makes writes fail with an error, not kill the
    /// process with SIGXFSZ: the run stops cleanly like on a full disk.
    func begin(
        kind: NewSession.Kind, source: String, scenarioPath: String?, epoch: Date, mode: SessionRecorder.Mode,
        defaultDevice: String = SessionStore.hostName
    ) throws -> SessionRecorder? {
        signal(SIGXFSZ, SIG_IGN)
        guard !noStore else { return nil }
        let settings = SessionSettings(
            command: kind.rawValue, arguments: CommandLine.arguments.dropFirst().map(Self.withoutPassword),
            directory: FileManager.default.currentDirectoryPath)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(settings), as: UTF8.self)
        let scenario = try scenarioPath.map { path in
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        }
        let store = try SessionStore(path: location.path, mode: .create)
        if let aside = store.setAsideByUpgrade { printError(SetAsideText.upgrade(aside, store: location.path)) }
        return try store.beginSession(
            NewSession(
                kind: kind, source: source, settings: json, scenario: scenario, createdAt: Date(), epoch: epoch,
                label: label, device: deviceName ?? defaultDevice),
            mode: mode)
    }
}

/// What a session records of the command that made it.
struct SessionSettings: Codable {
    var command: String
    var arguments: [String]
    var directory: String
}

/// `record --forward` and `replay --forward`: the session goes to a PostGIS store while it
/// runs, and what is left when it ends is sent then, or named for `sessions push`.
final class ForwardingRun: Sendable {
    let forwarder: LiveForwarder
    let target: PostGISAddress
    let session: Int64
    let task: Task<Void, Never>
    let quiet: Bool
    let uuid: String?

    /// Starts forwarding `session` to `target`, or returns nil when there is nothing to do.
    static func start(_ session: SessionRecorder?, to target: PostGISAddress?, quiet: Bool) -> ForwardingRun? {
        guard let session, let target else { return nil }
        return ForwardingRun(session: session, target: target, quiet: quiet)
    }

    private init(session: SessionRecorder, target: PostGISAddress, quiet: Bool) {
        self.target = target
        self.session = session.id
        self.quiet = quiet
        uuid = (try? session.store.transferSessions([session.id]))?.first?.uuid
        // The clock of the command line: the forwarder's logic takes its sleep injected.
        let clock = ContinuousClock()
        forwarder = LiveForwarder(
            store: session.store, session: session.id, address: target, interval: .seconds(1),
            sleep: { try await clock.sleep(for: $0) }, now: { Date() },
            report: { line in if !quiet { printError(line) } })
        let forwarder = self.forwarder
        task = Task.detached { await forwarder.run() }
        if !quiet { printError("waymark: forwarding session \(session.id) to \(target)") }
    }

    /// After the session is finished: the last rounds, and what happened, in a line.
    func finish() async {
        forwarder.stop()
        task.cancel()  // its wait between rounds ends at once
        await task.value
        if (try? forwarder.store.transferSessions([session]))?.isEmpty == true {
            _ = await forwarder.finish(attempts: 1, uuid: uuid)
            if !quiet {
                printError("waymark: forward: session \(session) was not kept, so it is removed from \(target)")
            }
            return
        }
        if !quiet { printError("waymark: forward: sending what is left of session \(session) (up to 3 tries)") }
        let waiting = await forwarder.finish(attempts: 3, uuid: uuid)
        if waiting == 0 {
            if !quiet { printError("waymark: session \(session) forwarded to \(target): every row is there") }
        } else {
            printError(
                "waymark: \(waiting) row(s) of session \(session) are not yet at \(target); they are kept in the "
                    + "local store: `waymark sessions push --to \(target)` sends them")
        }
    }
}
