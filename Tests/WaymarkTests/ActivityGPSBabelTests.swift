import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Waymark's readers of TCX, KML, GeoJSON, FIT and CSV beside GPSBabel's reading of the same
/// files (issue 29, item 2): files shaped as Garmin Connect, Google Takeout, GPSLogger, GPSBabel
/// and GDAL write them (Fixtures/activity), and generated activities in every layout of
/// `ActivityReaderTests`. Each point's position, elevation, instant (the whole date), heart rate
/// and cadence must agree, within what GPSBabel's GPX keeps (nine decimals of a degree, a
/// millimetre of elevation).
///
/// Where the two differ by design, the comparison says so: GPSBabel makes a `LAPnnn` waypoint of
/// each lap (a lap is no point; Waymark keeps none), and reads every row of a CSV and every
/// Point feature as a waypoint (Waymark reads rows as track points, and GDAL's `track_points`
/// as the track they say they are).
@Suite(.enabled(if: which("gpsbabel") != nil, "needs gpsbabel (scripts/test.sh installs it)"))
struct ActivityGPSBabelTests {
    typealias Point = GPSBabelDifferentialTests.Point

    /// GPSBabel's reading of `path` as `format`, in GPX with Garmin's extensions.
    static func babel(_ path: String, _ format: String) -> (points: [Point], problems: [String]) {
        guard
            let result = try? run(
                which("gpsbabel")!, ["-i", format, "-f", path, "-o", "gpx,gpxver=1.1,garminextensions", "-F", "-"]),
            result.status == 0
        else { return ([], ["gpsbabel could not read \(path) as \(format)"]) }
        let reader = GPSBabelDifferentialTests.BabelReader()
        let parser = XMLParser(data: result.stdout)
        parser.delegate = reader
        guard parser.parse() else { return ([], ["gpsbabel's GPX does not parse"]) }
        return (reader.points, reader.problems)
    }

    /// Waymark's reading, told by content, in the same terms.
    static func waymark(_ path: String) throws -> [Point] {
        let reader = try TraceFormat.reader(for: FileByteSource(path: path), name: path)
        var points: [Point] = []
        func point(_ kind: String, _ p: GPXPoint) -> Point {
            Point(
                kind: kind, latitude: p.coordinate.latitude, longitude: p.coordinate.longitude, elevation: p.elevation,
                milliseconds: p.time.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) }, name: p.name,
                heartRate: p.extensions.heartRate.map { Int($0.rounded()) },
                cadence: p.extensions.cadence.map { Int($0.rounded()) })
        }
        try reader.readEvents { event in
            switch event {
            case .waypoint(let p): points.append(point("wpt", p))
            case .routePoint(let p): points.append(point("rtept", p))
            case .trackPoint(let p): points.append(point("trkpt", p))
            default: break
            }
        }
        return points
    }

    /// How the two readings are put side by side for a format.
    struct Rules {
        /// GPSBabel's waypoints made of laps are left out.
        var dropLapWaypoints = false
        /// GPSBabel reads every point as a waypoint: kinds are not compared.
        var ignoreKinds = false
        /// Names are compared (GPSBabel invents some: `WPT003`).
        var compareNames = true
        /// GPSBabel's KML reader gives each point's elevation as 0 when the file has none; its
        /// TCX reader has no elevation for a sensor point.
        var ignoreMissingElevation = false
        /// GPSBabel leaves out (or misreads) the elevation: only positions and times are compared.
        var ignoreElevation = false
        /// GPSBabel leaves out the times.
        var ignoreTimes = false
        /// Heart rate and cadence are compared (GPSBabel writes them for track points only).
        var compareSensors = true
        /// Only track points are compared: GPSBabel does not read the file's waypoints (a FIT
        /// course's course points).
        var tracksOnly = false
        /// The points are compared in the order of their positions: GPSBabel's GeoJSON reader
        /// makes routes of LineStrings and tracks of MultiLineStrings, and writes routes first.
        var ignoreOrder = false
    }

    /// The differences between GPSBabel's reading and Waymark's, each group (waypoints, route
    /// points, track points) in order.
    static func compare(_ babel: [Point], _ waymark: [Point], _ rules: Rules) -> [String] {
        func prepared(_ list: [Point], isBabel: Bool) -> [Point] {
            var list = list
            if isBabel && rules.dropLapWaypoints {
                list.removeAll { $0.kind == "wpt" && ($0.name ?? "").hasPrefix("LAP") }
            }
            if rules.tracksOnly { list.removeAll { $0.kind != "trkpt" } }
            let order = ["wpt": 0, "rtept": 1, "trkpt": 2]
            if !rules.ignoreKinds {
                // GPSBabel writes waypoints, then routes, then tracks; Waymark gives them as the
                // file does. Within a kind, the order is the file's for both.
                list = list.enumerated().sorted {
                    (order[$0.element.kind]!, $0.offset) < (order[$1.element.kind]!, $1.offset)
                }
                .map(\.element)
            }
            if rules.ignoreOrder {
                list.sort { ($0.latitude, $0.longitude) < ($1.latitude, $1.longitude) }
            }
            return list.map { p in
                var p = p
                if rules.ignoreKinds { p.kind = "point" }
                if !rules.compareNames { p.name = nil }
                if rules.ignoreElevation { p.elevation = nil }
                if rules.ignoreTimes { p.milliseconds = nil }
                if !rules.compareSensors { (p.heartRate, p.cadence) = (nil, nil) }
                return p
            }
        }
        let b = prepared(babel, isBabel: true)
        let w = prepared(waymark, isBabel: false)
        var problems = Problems()
        problems.expect(b.count == w.count, "gpsbabel read \(b.count) points, Waymark \(w.count)")
        for (k, (x, y)) in zip(b, w).enumerated() {
            let close =
                x.kind == y.kind && abs(x.latitude - y.latitude) <= 1e-9 && abs(x.longitude - y.longitude) <= 1e-9
                && x.milliseconds == y.milliseconds && x.name == y.name && x.heartRate == y.heartRate
                && x.cadence == y.cadence
            let elevation: Bool =
                switch (x.elevation, y.elevation) {
                case (let a?, let b?): abs(a - b) <= 0.0005
                case (nil, nil): true
                case (0?, nil), (nil, _): rules.ignoreMissingElevation
                default: false
                }
            problems.expect(close && elevation, "point \(k): gpsbabel \(x)\n  waymark \(y)")
        }
        return problems.list
    }

    /// The fixtures, and where GPSBabel's reading falls short of the file:
    /// - its GeoJSON reader keeps no elevation (every point at 0), reads LineStrings as routes
    ///   with invented names (`RPT001`) and MultiLineStrings as a track a line, and reads no times
    ///   or values;
    /// - its unicsv reader reads GPSLogger's `geoidheight` as the altitude and `profile_name` as
    ///   each point's name, and writes no heart rate for waypoints;
    /// - its FIT reader reads no course points;
    /// - its KML reader reads no `gx:SimpleArrayData` (heart rate, cadence) of a `gx:Track`.
    static let fixtures: [(file: String, format: String, rules: Rules)] = [
        ("garmin-connect.tcx", "gtrnctr", Rules(dropLapWaypoints: true)),
        ("gpsbabel-history.tcx", "gtrnctr", Rules(dropLapWaypoints: true)),
        ("google-takeout.kml", "kml", Rules()),
        ("gpsbabel-track.kml", "kml", Rules(ignoreMissingElevation: true, compareSensors: false)),
        ("gpsbabel.geojson", "geojson", Rules(ignoreKinds: true, compareNames: false, ignoreElevation: true)),
        (
            "ogr-track-points.geojson", "geojson",
            Rules(ignoreKinds: true, compareNames: false, ignoreElevation: true, ignoreTimes: true)
        ),
        ("gpsbabel-course.fit", "garmin_fit", Rules(dropLapWaypoints: true, tracksOnly: true)),
        ("gpsbabel-unicsv.csv", "unicsv", Rules(ignoreKinds: true, compareNames: false, compareSensors: false)),
        ("gpslogger.csv", "unicsv", Rules(ignoreKinds: true, compareNames: false, ignoreElevation: true)),
    ]

    @Test(arguments: fixtures.map(\.file))
    func eachFixtureReadsAsGPSBabelReadsIt(_ file: String) throws {
        let entry = Self.fixtures.first { $0.file == file }!
        let path = Paths.fixture("activity/\(file)")
        let babel = Self.babel(path, entry.format)
        #expect(babel.problems.isEmpty, "\(babel.problems)")
        let waymark = try Self.waymark(path)
        #expect(!waymark.isEmpty)
        let problems = Self.compare(babel.points, waymark, entry.rules)
        #expect(problems.isEmpty, "\(file):\n\(problems.prefix(6).joined(separator: "\n"))")
    }

    /// Generated activities in every layout GPSBabel reads: both readers agree on each.
    @Test(arguments: [
        ActivityReaderTests.Layout.tcx, .kmlTracks, .geoJSON, .geoJSONShuffled, .csvComma, .fit,
    ])
    func generatedActivitiesReadAsGPSBabelReadsThem(_ layout: ActivityReaderTests.Layout) {
        let format: String =
            switch layout {
            case .tcx: "gtrnctr"
            case .kmlTracks, .kmlLines: "kml"
            case .geoJSON, .geoJSONShuffled, .geoJSONSequence: "geojson"
            case .fit: "garmin_fit"
            default: "unicsv"
            }
        let property = Property<ActivityReaderTests.Activity>(
            name: "gpsbabel \(layout.rawValue)", count: 6, generate: { ActivityReaderTests.generate(&$0) },
            describe: { "\($0)" })
        property.check { activity in
            var activity = activity
            if layout.format == .geoJSON {
                // Where Waymark's GeoJSON writer adds positions for RFC 7946 and its reader takes
                // them out again, GPSBabel reads them as points: a one-point segment is written
                // as a two-position line, a line across the antimeridian is cut there. Those are
                // ActivityReaderTests' round trip; here the lines are left without them.
                activity.tracks = activity.tracks.compactMap { t in
                    var t = t
                    t.segments = t.segments.filter { $0.count > 1 }
                    return t.segments.isEmpty ? nil : t
                }
                let crosses = activity.tracks.contains { t in
                    t.segments.contains { seg in
                        zip(seg, seg.dropFirst()).contains { abs($0.lon7 - $1.lon7) > 1_800_000_000 }
                    }
                }
                if crosses || activity.tracks.isEmpty { return [] }
            }
            let path = temporaryPath(".dat")
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                // GPSBabel's unicsv takes the first line for the header: no comment before it.
                let bytes =
                    layout == .csvComma
                    ? Array(ActivityReaderTests.csv(activity, layout, comment: false).utf8)
                    : try ActivityReaderTests.bytes(activity, layout)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let babel = Self.babel(path, format)
                let rules: Rules =
                    switch layout {
                    case .tcx, .fit: Rules(dropLapWaypoints: true)
                    // Waymark gives the waypoint rows among a track's rows after the track.
                    case .csvComma:
                        Rules(ignoreKinds: true, compareNames: false, compareSensors: false, ignoreOrder: true)
                    case .kmlTracks: Rules(compareSensors: false)
                    default:
                        Rules(
                            ignoreKinds: true, compareNames: false, ignoreElevation: true, ignoreTimes: true,
                            compareSensors: false, ignoreOrder: true)
                    }
                return babel.problems + Self.compare(babel.points, try Self.waymark(path), rules)
            } catch {
                return ["\(error)"]
            }
        }
    }
}
