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

        func validate() throws {
            // repair writes GPX: a name that says another format would lie about the file.
            if let output, let ext = OutputName.fileExtension(output), ext != "gpx", ext != "xml" {
                throw ValidationError("-o \(output): repair writes GPX; name the file .gpx")
            }
            try OutputSafety.check(
                outputs: output.map { [("-o", $0)] } ?? [], protected: OutputSafety.inputs([file]))
        }

        func run() throws {
            do {
                let uncommitted = UncommittedOutputs()
                defer { uncommitted.finish() }
                let sink = try openOutput(output)
                uncommitted.add(sink)
                let report = try GPXRepair.repair(source: try ProgressSource(path: file), name: file, to: sink)
                try sink.commit()
                let counts =
                    "\(report.points) point(s): \(report.trackPoints) track point(s), \(report.routePoints) route point(s), \(report.waypoints) waypoint(s)"
                if report.wasDamaged {
                    for w in report.warnings { printError(w.description) }
                    printError("\(file): repaired: kept \(counts)\(output.map { "; written to \($0)" } ?? "")")
                } else {
                    printError("\(file): nothing to repair; the file is complete (\(counts))")
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
