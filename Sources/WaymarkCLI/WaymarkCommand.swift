import ArgumentParser
import Waymark

/// The `waymark` command (the executable is WaymarkTool; WaymarkRunner runs its replay for a
/// team's own app).
package struct WaymarkCommand: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "waymark",
        abstract: "Record, replay and render location traces.",
        discussion: """
            Waymark reads GPX 1.0 and 1.1 with its own streaming XML parser, NMEA 0183 logs and \
            gpsd JSON captures (gpspipe -r, gpspipe -w), told by their content; it writes GeoJSON \
            (RFC 7946), GPX 1.1, an SVG picture or a text view with a sketch of the path, and \
            serves any trace to gpsd's clients.

            Machine-readable output goes to standard output; warnings, errors and progress go to \
            standard error. Exit codes follow sysexits: 64 usage, 65 bad input data, 66 missing \
            input, 69 gpsd unavailable, 74 I/O error.
            """,
        version: WaymarkVersion.description,
        subcommands: [Replay.self, Record.self, Serve.self, Render.self, Info.self, Sessions.self, Repair.self]
    )
}

extension WaymarkCommand {
    /// What to say when the first argument names no subcommand but is a slip of one (`rendr`,
    /// `sesions`): the subcommand it is closest to. Nil when the arguments start otherwise.
    package static func didYouMean(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let ranked = names.map { ($0, editDistance(first.lowercased(), $0)) }.sorted { $0.1 < $1.1 }
        guard let best = ranked.first, best.1 <= max(1, first.count / 3) else {
            return "waymark: '\(first)' is not a command; the commands are \(names.dropLast().joined(separator: ", "))"
        }
        return "waymark: '\(first)' is not a command. Did you mean '\(best.0)'?"
    }

    /// Says so on standard error when the first argument is not a command; true when it did.
    package static func refuseUnknownCommand(_ arguments: [String]) -> Bool {
        guard let message = didYouMean(arguments) else { return false }
        printError(message + "\nUsage: waymark <subcommand>; see 'waymark --help'.")
        return true
    }

    /// Levenshtein distance, with a transposition counted as one edit.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
