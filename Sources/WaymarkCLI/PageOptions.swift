import ArgumentParser
import Waymark

/// `render`'s options for pages (and, for units, pictures).
struct PageOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "HTML: a base map of raster tiles under the track, fetched by the browser as you zoom and pan (off by default: a page fetches nothing). The template names {z}, {x} and {y} (or {-y}, and {s} for a, b, c): https://tile.openstreetmap.org/{z}/{x}/{y}.png. Mind the server's usage policy.",
            valueName: "url-template"))
    var tiles: String?

    @Option(
        help: ArgumentHelp(
            "HTML: the credit the tile server asks for, shown on the map (default: \"© OpenStreetMap contributors\" for openstreetmap.org, else the server's name).",
            valueName: "text"))
    var tilesAttribution: String?

    @Option(help: ArgumentHelp("HTML: the highest tile zoom to ask for (0-24; default 19).", valueName: "zoom"))
    var tilesMaxZoom: Int = 19

    @Option(
        help: ArgumentHelp(
            "HTML and SVG: metric (km, m, km/h, °C), imperial (mi, ft, mph, °F) or nautical (NM, m, kn, °C).",
            valueName: "units"))
    var units: DisplayUnits = .metric

    @Option(
        help: ArgumentHelp(
            "HTML: the zone of the times shown: UTC (default), a tz database name (Europe/Berlin, America/New_York, with its daylight saving) or an offset (+02:00, -0530).",
            valueName: "zone"))
    var timeZone: String?

    @Option(
        help: ArgumentHelp(
            "HTML: draw each profile (speed, heart rate, cadence, temperature, power, elevation) as a centred moving average over this many seconds, within each segment.",
            valueName: "seconds"))
    var smooth: Double?

    /// Whether any option for pages was given.
    var givenForHTML: [String] {
        var given: [String] = []
        if tiles != nil { given.append("--tiles") }
        if tilesAttribution != nil { given.append("--tiles-attribution") }
        if timeZone != nil { given.append("--time-zone") }
        if smooth != nil { given.append("--smooth") }
        return given
    }

    func validate() throws {
        if let tiles, let problem = MapTiles.problem(with: tiles) {
            throw ValidationError("--tiles \(tiles): \(problem)")
        }
        if tiles == nil && tilesAttribution != nil {
            throw ValidationError("--tiles-attribution credits the tiles of --tiles: give --tiles too")
        }
        guard (0...24).contains(tilesMaxZoom) else {
            throw ValidationError("--tiles-max-zoom \(tilesMaxZoom): give a zoom from 0 to 24")
        }
        if let timeZone, DisplayTimeZone(timeZone) == nil {
            throw ValidationError(
                "--time-zone \(timeZone): not a zone; give UTC, a tz database name (Europe/Berlin) or an offset (+02:00)"
            )
        }
        if let smooth, !(smooth.isFinite && smooth > 0 && smooth <= 86_400) {
            throw ValidationError("--smooth \(smooth): give a window of seconds above 0, at most 86400")
        }
    }

    var zone: DisplayTimeZone { timeZone.flatMap { DisplayTimeZone($0) } ?? .utc }

    var mapTiles: MapTiles? {
        tiles.map { MapTiles(template: $0, attribution: tilesAttribution, maxZoom: tilesMaxZoom) }
    }
}

extension DisplayUnits: ExpressibleByArgument {}
