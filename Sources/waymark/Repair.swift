import ArgumentParser
import Waymark

extension WaymarkCommand {
    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recover a GPX file cut short (a crashed logger, a full disk) up to its last complete point.",
            discussion: """
                Reads the file as far as it is well-formed, keeps every complete point (and drops \
                any bad one with a warning), closes what was left open, and writes GPX 1.1 that \
                validates against the schema. It says where the file was cut and how many points \
                it kept. A file that needs no repair is written out unchanged in content (as \
                `render --format gpx` would).

                Exit status: 0 when the output was written (repaired or not), 65 when not even \
                one point could be recovered.

                Examples:
                  waymark repair walk.gpx -o walk-fixed.gpx
                  waymark repair walk.gpx > walk-fixed.gpx
                """)

        @Argument(help: "The damaged GPX file.")
        var file: String

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp(
                "Write the repaired GPX here (atomically) instead of standard output.", valueName: "file"))
        var output: String?

        func run() throws {
            do {
                var warnings: [GPXWarning] = []
                var points = (track: 0, route: 0, waypoint: 0)
                let sink = try output.map { try FileSink(atomicPath: $0) } ?? FileSink.standardOutput()
                let reader = GPXReader(
                    source: try ProgressSource(path: file), name: file, options: GPXReadOptions(lenient: true))
                let writer = GPXWriter(sink: sink)
                try reader.read { event in
                    switch event {
                    case .warning(let w): warnings.append(w)
                    case .trackPoint: points.track += 1
                    case .routePoint: points.route += 1
                    case .waypoint: points.waypoint += 1
                    default: break
                    }
                    try writer.write(event)
                }
                try writer.finish()
                try sink.commit()
                let kept = points.track + points.route + points.waypoint
                let counts =
                    "\(kept) point(s): \(points.track) track point(s), \(points.route) route point(s), \(points.waypoint) waypoint(s)"
                if warnings.isEmpty {
                    printError("\(file): nothing to repair; the file is complete (\(counts))")
                } else {
                    for w in warnings { printError(w.description) }
                    printError("\(file): repaired: kept \(counts)\(output.map { "; written to \($0)" } ?? "")")
                }
            } catch let error as GPXError where error.code != .fileNotFound && error.code != .io {
                printError("waymark: \(error)")
                printError("waymark: \(file): not one complete point could be recovered; nothing written")
                throw ExitCode(ExitStatus.dataError)
            } catch {
                throw sysexit(for: error)
            }
        }
    }
}
