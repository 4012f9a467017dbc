import ArgumentParser
import Waymark
import WaymarkScenarioFile
import WaymarkStore

extension WaymarkCommand {
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Render traces (GPX, TCX, KML, GeoJSON, FIT, CSV, NMEA, gpsd JSON) as text, GeoJSON, GPX 1.1, an SVG picture or an HTML page.",
            discussion: """
                text     a summary (counts, time span, geodesic length, moving time, speeds, climb, \
                bounds) and a sketch of the path in braille characters, fitted to the terminal. \
                --points adds a row per point.
                geojson  RFC 7946: tracks as LineString or MultiLineString (a line per segment), \
                routes as LineString, waypoints as Point; per-point times and sensor values in \
                properties.coordinateProperties (togeojson's convention); lines split at the \
                antimeridian; a bbox. Streams: a 1 GB file converts in bounded memory. For GIS \
                tools: --geojson-points writes a Point per fix with its time and values as \
                properties, --only tracks|routes|waypoints one geometry type, \
                --no-coordinate-properties no per-point arrays (docs/commands.md).
                gpx      GPX 1.1 that validates against the official schema; GPX 1.0 is upgraded and \
                extensions are kept.
                svg      a standalone picture, 1000x760: each track segment a line of its own (gaps \
                stay gaps), routes dashed, waypoints with their names, start (green dot) and end \
                (red square), a scale bar, a north arrow and a legend. Small areas (up to 5 degrees \
                each way) are drawn in a local equirectangular projection, larger ones in Web \
                Mercator; the caption says which. Paths across the antimeridian stay continuous. \
                Lines are simplified to the pixel (Douglas-Peucker), so a million points give a \
                small file. The same input gives the same bytes.
                html     one self-contained page (nothing fetched, opens offline in any browser): \
                the svg map, which zooms (wheel, double-click, buttons) and pans (drag), each track \
                in a colour of its own with a legend entry; profiles of elevation, speed, heart \
                rate, cadence, temperature and power (those the trace has) against time and against \
                distance; the statistics of `waymark info`; and a point's details on hover. \
                --tiles URL-TEMPLATE puts a base map of tiles under it (fetched as you zoom); \
                --units, --time-zone and --smooth SECONDS choose how values are shown. Large traces are simplified for drawing (Douglas-Peucker to half \
                a pixel; profiles from at most 65,536 evenly spread points, hover details for at \
                most 5,000): a million points give a page of a few hundred kilobytes.

                With --session, the locations of a stored session are rendered instead of a file \
                (one track, a segment per segment), from the default store or --store.

                Several traces, or a directory of them: --output-dir DIR writes each to a file of \
                its own (its name with the format's extension), on every core, and sums up; a \
                trace that cannot be read is named and the others are written (exit 65 then). \
                --merge makes one output of them, their track points in one track in time order \
                (with --dedupe, one point a second: gpsbabel's -x track,merge).

                Examples:
                  waymark render walk.gpx
                  waymark render walk.gpx --format geojson -o walk.geojson
                  waymark render old-1.0.gpx --format gpx > upgraded.gpx
                  cat walk.gpx | waymark render - --format text --points
                  waymark render --session 3 --format geojson -o session3.geojson
                  waymark render walk.gpx -o walk.svg
                  waymark render walk.gpx -o walk.html
                  waymark render ride.fit -o ride.html --units imperial --time-zone America/Denver --smooth 15 \
                    --tiles 'https://tile.openstreetmap.org/{z}/{x}/{y}.png'
                  waymark render walk.gpx -o points.geojson --geojson-points --only tracks
                  waymark render ~/activities --output-dir maps --format geojson --simplify 5
                  waymark render watch.fit phone.gpx --merge --dedupe -o outing.gpx
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, geojson, gpx, svg, html
        }

        enum ColorMode: String, ExpressibleByArgument, CaseIterable {
            case auto, always, never
        }

        @Argument(
            help: ArgumentHelp(
                "The traces to read, told by their content: GPX, TCX, KML, GeoJSON, FIT, CSV, an NMEA log or a gpsd JSON capture; - reads standard input.",
                discussion:
                    "Several traces, or a directory (its trace files, at any depth), go with --output-dir (each converted to a file of its own, on all cores) or --merge (one output)."
            ))
        var traces: [String] = []

        @Option(
            help: ArgumentHelp(
                "Convert each trace to a file of its own in this directory (made if missing), named as the trace with the format's extension, in parallel; a summary follows.",
                valueName: "directory"))
        var outputDir: String?

        @Flag(help: "Merge the traces into one output: their track points in one track, in time order.")
        var merge = false

        /// The one trace, when there is one.
        var trace: String? { traces.count == 1 ? traces[0] : nil }

        @Option(help: ArgumentHelp("Render this stored session instead of a file.", valueName: "id"))
        var session: Int64?

        @OptionGroup(title: "Session store") var store: StoreOptions

        @Option(
            name: [.customShort("f"), .customLong("format")],
            help:
                "Output format (default: what -o's extension names: .gpx, .geojson or .json, .txt, .svg, .html; else text)."
        )
        var formatOption: Format?

        /// `--format`, else what `-o`'s extension names, else text.
        var format: Format {
            formatOption ?? output.flatMap { Self.format(named: $0) } ?? (geojson.isGiven ? .geojson : .text)
        }

        /// The format an output file's extension names, if it is one render writes.
        static func format(named path: String) -> Format? {
            switch NamedFormat.named(by: path) {
            case .gpx: .gpx
            case .geojson: .geojson
            case .text: .text
            case .svg: .svg
            case .html: .html
            case .ndjson, nil: nil
            }
        }

        @Option(
            name: .shortAndLong,
            help: "Write to this file instead of standard output (atomically: it appears only when complete).")
        var output: String?

        @Flag(help: "With --format text: add a row for every point.")
        var points = false

        @Flag(help: "With --format text: leave out the sketch.")
        var noSketch = false

        @Option(help: "With --format text: columns to fit (default: the terminal's, or 80).")
        var width: Int?

        @Option(help: "With --format text: colour the sketch (auto: only on a terminal, and not with NO_COLOR).")
        var color: ColorMode = .auto

        @OptionGroup(title: "GeoJSON for GIS") var geojson: GeoJSONOutputOptions

        @OptionGroup(title: "Pages and pictures") var page: PageOptions

        @OptionGroup(title: "Bad GPS on purpose") var degradation: DegradeOption

        @OptionGroup(title: "Edits (on the way to any format)") var edit: EditOptions

        @OptionGroup var read: ReadOptions

        func validate() throws {
            if traces.isEmpty == (session == nil) {
                throw ValidationError("give a trace file or --session ID (not both)")
            }
            if outputDir != nil && merge {
                throw ValidationError("--output-dir writes a file a trace and --merge one for all: give one of them")
            }
            if outputDir != nil || merge {
                if session != nil { throw ValidationError("--output-dir and --merge read trace files, not --session") }
                if traces.contains("-") {
                    throw ValidationError("standard input (-) is one trace: give files with --output-dir and --merge")
                }
            }
            if let outputDir {
                if output != nil { throw ValidationError("--output-dir names the files itself: leave -o out") }
                if formatOption == nil {
                    throw ValidationError(
                        "--output-dir: give --format (geojson, gpx, svg, html or text) for the files it writes")
                }
                try OutputSafety.check(
                    outputs: [("--output-dir", outputDir)], protected: OutputSafety.inputs(traces))
            } else if !merge && (traces.count > 1 || traces.contains(where: Batch.isDirectory)) {
                throw ValidationError(
                    "\(traces.count > 1 ? "several traces" : "a directory"): give --output-dir DIR (a file each) or --merge (one output)"
                )
            }
            if store.store != nil && session == nil { throw ValidationError("--store goes with --session") }
            if let width, width < 20 { throw ValidationError("--width must be at least 20") }
            // What -o is (an input, the store) first: it says more than what its name says.
            try OutputSafety.check(
                outputs: output.map { [("-o", $0)] } ?? [],
                protected: OutputSafety.inputs(traces)
                    + (session != nil ? OutputSafety.store(store.path) : []))
            try OutputName.refuseUnknown(
                output, formatGiven: formatOption != nil,
                writes: "text (.txt), GeoJSON (.geojson, .json, .geojsons), GPX (.gpx), SVG (.svg) or HTML (.html)")
            if let output, output != "-", let named = NamedFormat.named(by: output) {
                guard let wanted = Self.format(named: output) else {
                    throw ValidationError(
                        "-o \(output): render writes text, GeoJSON, GPX, SVG or HTML, not \(named.rawValue)")
                }
                if let formatOption, formatOption != wanted {
                    throw ValidationError(
                        "--format \(formatOption.rawValue) and -o \(output) disagree: the file's name says \(wanted.rawValue); change one"
                    )
                }
            }
            try geojson.check(geojson: format == .geojson)
            if degradation.degrade != nil {
                if merge || session != nil {
                    throw ValidationError("--degrade reads trace files one by one: leave out --merge and --session")
                }
            }
            if format != .html, let first = page.givenForHTML.first {
                throw ValidationError("\(first) applies to --format html only (a page)")
            }
            if format != .html && format != .svg && page.units != .metric {
                throw ValidationError("--units applies to --format html and svg")
            }
            if format != .text && (points || noSketch || width != nil) {
                throw ValidationError("--points, --no-sketch and --width apply to --format text only")
            }
        }

        func run() throws {
            if let outputDir {
                try Batch(render: self, directory: outputDir).run()
                return
            }
            do {
                let uncommitted = UncommittedOutputs()
                defer { uncommitted.finish() }
                let sink = try openOutput(output)
                uncommitted.add(sink)
                let events: EventSource
                if merge {
                    events = try MergedTraces(paths: Batch.expand(traces), options: read).events
                } else if let session {
                    let db = try store.openExisting()
                    let info = try db.session(session)
                    let name = "Waymark session \(session): \(info.source)"
                    events = EventSource(title: name) { handle in
                        try SessionExport.forEachEvent(session: session, store: db, name: name, handle)
                    }
                } else {
                    let trace = trace ?? "-"
                    let reader = try degraded(try makeReader(trace, options: read, keepingExtensions: format == .gpx))
                    events = EventSource(title: trace == "-" ? "" : trace, reader: reader) { handle in
                        try reader.readEventsAhead(handle)
                    }
                }
                try write(events, isSession: session != nil, to: sink)
                try sink.commit()
                if let fileReader = events.reader { reportDropped(fileReader) }
            } catch {
                throw sysexit(for: error)
            }
        }

        /// `reader`, degraded by `--degrade` when it is given.
        func degraded(_ reader: any TraceEventReader) throws -> any TraceEventReader {
            guard let (profile, seed) = try degradation.load() else { return reader }
            return DegradingReader(reader, profile: profile, seed: seed)
        }

        /// Writes `events`, edited, in the format asked, to `sink` (which the caller commits).
        func write(_ events: EventSource, isSession: Bool, to sink: FileSink, output: String? = nil) throws {
            let output = output ?? self.output
            var edits = edit.edits
            // GeoJSON simplifies as it writes (its summaries keep every point); every other
            // format gets the simplified segments.
            if format != .geojson { edits.simplify = geojson.simplify }
            let reader = events.edited(by: edits)
            let session: Int64? = isSession ? 0 : nil
            do {
                switch format {
                case .geojson where !geojson.options(writingTo: output).isDefault:
                    let writer = GeoJSONOptionsWriter(sink: sink, options: geojson.options(writingTo: output))
                    try reader.read { event in
                        if event.isWarning, case .warning(let w) = event { report(w) }
                        try writer.write(event)
                    }
                    try writer.finish()
                case .geojson:
                    let writer = GeoJSONWriter(sink: sink)
                    if let fileReader = reader.reader {
                        try writer.write(readingAhead: fileReader, warning: report)
                    } else {
                        try reader.read { event in
                            if event.isWarning, case .warning(let w) = event { report(w) }
                            try writer.write(event)
                        }
                    }
                    try writer.finish()
                case .gpx:
                    let writer = GPXWriter(sink: sink)
                    try reader.read { event in
                        if event.isWarning, case .warning(let w) = event { report(w) }
                        try writer.write(event)
                    }
                    try writer.finish()
                case .svg:
                    // A file's name without its folder (the picture is the same wherever the file
                    // is); a session's events name it in their metadata.
                    let svgTitle = session != nil ? "" : String(events.title.split(separator: "/").last ?? "")
                    let writer = SVGWriter(sink: sink, options: SVGWriter.Options(title: svgTitle, units: page.units))
                    try reader.read { event in
                        if event.isWarning, case .warning(let w) = event { report(w) }
                        try writer.write(event)
                    }
                    try writer.finish()
                case .html:
                    let title = session != nil ? "" : String(events.title.split(separator: "/").last ?? "")
                    let writer = TraceHTMLWriter(
                        sink: sink,
                        options: TraceHTMLWriter.Options(
                            title: title, units: page.units, timeZone: page.zone, smoothing: page.smooth,
                            tiles: page.mapTiles))
                    try reader.read { event in
                        if event.isWarning, case .warning(let w) = event { report(w) }
                        try writer.write(event)
                    }
                    try writer.finish()
                case .text:
                    let useColor: Bool
                    switch color {
                    case .auto: useColor = (output == nil || output == "-") && Terminal.wantsColor
                    case .always: useColor = true
                    case .never: useColor = false
                    }
                    let renderer = TextRenderer(
                        sink: sink,
                        options: TextRenderer.Options(
                            width: width ?? Terminal.width, color: useColor, pointTable: points,
                            sketch: !noSketch, title: events.title))
                    try reader.read { event in
                        if event.isWarning, case .warning(let w) = event { report(w) }
                        try renderer.write(event)
                    }
                    try renderer.finish()
                }
            }
        }
    }
}

/// Where `render` takes its GPX events from: a file's reader or a stored session.
struct EventSource {
    var title: String
    var reader: (any TraceEventReader)?
    let body: (@escaping (consuming GPXEvent) throws -> Void) throws -> Void

    init(
        title: String, reader: (any TraceEventReader)? = nil,
        _ body: @escaping (@escaping (consuming GPXEvent) throws -> Void) throws -> Void
    ) {
        self.title = title
        self.reader = reader
        self.body = body
    }

    func read(_ handle: @escaping (consuming GPXEvent) throws -> Void) throws { try body(handle) }
}
