import ArgumentParser
import Waymark

extension GeoJSONOptions.Kind: ExpressibleByArgument {}

/// `--geojson-points`, `--only`, `--no-coordinate-properties`, and for web maps `--precision`,
/// `--2d`, `--simplify`, `--summary-properties` and `--simplestyle`: GeoJSON for GIS tools and
/// the web, on every command that writes GeoJSON (render, sessions export, replay, record).
/// Given without `--format` or an `-o` whose name says the format, they make the output GeoJSON.
struct GeoJSONOutputOptions: ParsableArguments {
    @Flag(
        help:
            "GeoJSON: one Point feature per fix, with its time (ISO 8601), elevation, speed, course, accuracies or DOPs and its track, segment and index as properties (QGIS's temporal controller, Kepler.gl)."
    )
    var geojsonPoints = false

    @Option(
        help: ArgumentHelp(
            "GeoJSON: write only tracks, routes or waypoints, so that the file has one geometry type (a shapefile or a GeoPackage layer needs that); tracks and routes are then all MultiLineString.",
            valueName: "kind"))
    var only: GeoJSONOptions.Kind?

    @Flag(help: "GeoJSON: leave the per-point arrays (properties.coordinateProperties) out of line features.")
    var noCoordinateProperties = false

    @Option(
        help: ArgumentHelp(
            "GeoJSON: decimals of longitudes and latitudes, 0 to 7 (default 7, about 1 cm; 6 is about 10 cm, 5 about 1 m); elevations get at most 3.",
            valueName: "decimals"))
    var precision: Int?

    @Flag(name: .customLong("2d"), help: "GeoJSON: positions without elevations ([longitude, latitude]).")
    var twoD = false

    @Option(
        help: ArgumentHelp(
            "Simplify lines (Douglas-Peucker) so that no point left out lies more than this many metres from the line kept (any format; GeoJSON's summaries and bounds keep every point).",
            valueName: "metres"))
    var simplify: Double?

    @Flag(
        help:
            "GeoJSON: give each track and route its length, duration, movingTime, ascent, descent, startTime and endTime as properties (for a web map's popups); its bbox is its bounds."
    )
    var summaryProperties = false

    @Flag(
        help:
            "GeoJSON: simplestyle properties (as GitHub, Mapbox and geojson.io draw them): a colour per track or route, a small marker per waypoint."
    )
    var simplestyle = false

    @Flag(
        help:
            "GeoJSON: a text sequence (RFC 8142, GDAL's GeoJSONSeq): each feature a record of its own, for tools that read one feature at a time; -o FILE.geojsons says it too."
    )
    var geojsonSeq = false

    /// The options for output to `output` (its name `.geojsons` asks for a sequence).
    func options(writingTo output: String?) -> GeoJSONOptions {
        var options = self.options
        if geojsonSeq || output.map(Self.namesASequence) == true { options.sequence = true }
        return options
    }

    /// Whether `path`'s name is a GeoJSON text sequence's (`.geojsons`).
    static func namesASequence(_ path: String) -> Bool { path.lowercased().hasSuffix(".geojsons") }

    var options: GeoJSONOptions {
        GeoJSONOptions(
            points: geojsonPoints, only: only, coordinateProperties: !noCoordinateProperties,
            positions: GeoJSONPositionFormat(decimals: min(max(precision ?? 7, 0), 7), elevations: !twoD),
            simplify: simplify, summary: summaryProperties, style: simplestyle)
    }

    func validate() throws {
        if let precision, !(0...7).contains(precision) {
            throw ValidationError(
                "--precision \(precision): give 0 to 7 decimals (7 is about a centimetre, more says nothing a receiver measured)"
            )
        }
        if let simplify, !(simplify.isFinite && simplify >= 0) {
            throw ValidationError("--simplify: give a distance in metres, 0 or more, such as 5")
        }
        if geojsonPoints {
            let lineOnly = [
                ("--simplify", simplify != nil), ("--summary-properties", summaryProperties),
                ("--simplestyle", simplestyle),
            ].filter(\.1).map(\.0)
            if !lineOnly.isEmpty {
                throw ValidationError(
                    "\(lineOnly.joined(separator: ", ")) shape\(lineOnly.count == 1 ? "s" : "") lines, and --geojson-points writes a point per fix; leave one out"
                )
            }
        }
    }

    /// Whether any of the options was given.
    var isGiven: Bool { !options.isDefault || precision != nil || geojsonSeq }

    /// The options' names as given, for messages.
    private var given: String {
        var names: [String] = []
        if geojsonPoints { names.append("--geojson-points") }
        if only != nil { names.append("--only") }
        if noCoordinateProperties { names.append("--no-coordinate-properties") }
        if precision != nil { names.append("--precision") }
        if twoD { names.append("--2d") }
        if simplify != nil { names.append("--simplify") }
        if summaryProperties { names.append("--summary-properties") }
        if simplestyle { names.append("--simplestyle") }
        if geojsonSeq { names.append("--geojson-seq") }
        return names.joined(separator: ", ")
    }

    /// A usage error when the options are given but `--format` or `-o`'s name asks for another
    /// format (without either, they make the output GeoJSON).
    func check(geojson: Bool) throws {
        // --simplify applies to every format (render's edits simplify the others' segments).
        let names = given.split(separator: ",").map { $0.trimmingPrefix(" ") }.filter { $0 != "--simplify" }
        guard !names.isEmpty, !geojson else { return }
        throw ValidationError(
            "\(names.joined(separator: ", ")): options of GeoJSON output, which --format or -o's name says this is not; leave those out (these options then write GeoJSON) or use --format geojson (or -o FILE.geojson)"
        )
    }

    /// A usage error for `--only routes|waypoints` where the output is the locations an app
    /// received: they are one track.
    func checkDelivered() throws {
        if let only, only != .tracks {
            throw ValidationError(
                "--only \(only.rawValue): the locations written here are one track, so nothing would be left; use --only tracks or leave it out"
            )
        }
    }
}
