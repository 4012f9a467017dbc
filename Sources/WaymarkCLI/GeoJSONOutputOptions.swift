import ArgumentParser
import Waymark

extension GeoJSONOptions.Kind: ExpressibleByArgument {}

/// `--geojson-points`, `--only` and `--no-coordinate-properties`: GeoJSON for GIS tools, on
/// every command that writes GeoJSON (render, sessions export, replay, record). Given without
/// `--format` or an `-o` whose name says the format, they make the output GeoJSON.
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

    var options: GeoJSONOptions {
        GeoJSONOptions(points: geojsonPoints, only: only, coordinateProperties: !noCoordinateProperties)
    }

    /// Whether any of the options was given.
    var isGiven: Bool { !options.isDefault }

    /// The options' names as given, for messages.
    private var given: String {
        var names: [String] = []
        if geojsonPoints { names.append("--geojson-points") }
        if only != nil { names.append("--only") }
        if noCoordinateProperties { names.append("--no-coordinate-properties") }
        return names.joined(separator: ", ")
    }

    /// A usage error when the options are given but `--format` or `-o`'s name asks for another
    /// format (without either, they make the output GeoJSON).
    func check(geojson: Bool) throws {
        guard isGiven, !geojson else { return }
        throw ValidationError(
            "\(given): options of GeoJSON output, which --format or -o's name says this is not; leave those out (these options then write GeoJSON) or use --format geojson (or -o FILE.geojson)"
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
