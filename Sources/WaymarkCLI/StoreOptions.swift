import ArgumentParser
import Waymark
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
            "The session store (default: $XDG_DATA_HOME/waymark/waymark.sqlite, else ~/.local/share/waymark/waymark.sqlite).",
            valueName: "path"))
    var store: String?

    var path: String { store ?? SessionStore.defaultPath(environment: ProcessInfo.processInfo.environment) }

    /// Opens the store for reading commands: a missing store is an error, not a new file. A
    /// store this user may not write is read as it is, with a note that says so.
    func openExisting() throws -> SessionStore {
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
    }

    /// Opens the store and starts a session, or returns nil with --no-store.
    ///
    /// A file size limit (`ulimit -f`) then makes writes fail with an error, not kill the
    /// process with SIGXFSZ: the run stops cleanly like on a full disk.
    func begin(
        kind: NewSession.Kind, source: String, scenarioPath: String?, epoch: Date, mode: SessionRecorder.Mode
    ) throws -> SessionRecorder? {
        signal(SIGXFSZ, SIG_IGN)
        guard !noStore else { return nil }
        let settings = SessionSettings(
            command: kind.rawValue, arguments: Array(CommandLine.arguments.dropFirst()),
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
                label: label),
            mode: mode)
    }
}

/// What a session records of the command that made it.
struct SessionSettings: Codable {
    var command: String
    var arguments: [String]
    var directory: String
}
