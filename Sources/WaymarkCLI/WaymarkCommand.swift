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
        version: "0.1.0",
        subcommands: [Replay.self, Record.self, Serve.self, Render.self, Info.self, Sessions.self, Repair.self]
    )
}
