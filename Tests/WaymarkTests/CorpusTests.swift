import Foundation
import Testing

@testable import Waymark

/// Every third-party GPX file that gpxpy parses must read with the same counts and bounds, and
/// track lengths within 0.01 % of GeographicLib's (../shared/corpus/gpx_truth.json).
@Suite(.enabled(if: Paths.sharedAvailable, "../shared/corpus is absent: the third-party corpus tests are skipped"))
struct CorpusTests {
    private func close(_ a: Double, _ b: Double, relative: Double = 1e-4, absolute: Double = 0.002) -> Bool {
        abs(a - b) <= max(absolute, relative * abs(b))
    }

    @Test(arguments: Truth.parsedInputs)
    func readsLikeGpxpyAndGeographicLib(file: String) throws {
        let entry = try #require(Truth.table[file] as? [String: Any])
        let g = try #require(entry["gpxpy"] as? [String: Any])
        let raw = entry["raw_xml"] as? [String: Any] ?? [:]
        let path = Paths.corpus.appendingPathComponent(file).path
        let outOfRange = raw["out_of_range_coords"] as? Int ?? 0
        if outOfRange > 0 {
            // gpxpy accepts impossible coordinates; Waymark refuses them, naming the place…
            #expect {
                _ = try readDocument(path)
            } throws: { error in
                guard let e = error as? GPXError else { return false }
                return e.code == .invalidCoordinate && e.line > 0 && e.column > 0
            }
            // …and in lenient mode drops exactly those points.
            let (doc, warnings) = try readDocument(path, lenient: true)
            let points =
                doc.waypoints.count + doc.routes.reduce(0) { $0 + $1.points.count }
                + doc.tracks.reduce(0) { $0 + $1.segments.reduce(0) { $0 + $1.points.count } }
            let total = (g["track_points"] as! Int) + (g["waypoints"] as! Int) + (g["route_points"] as! Int)
            #expect(points == total - outOfRange)
            #expect(warnings.filter { $0.message.contains("dropped") }.count == outOfRange)
            return
        }
        let reader = try GPXReader(contentsOf: path)
        var stats = TraceStatistics()
        try reader.read { stats.add($0) }
        #expect(stats.trackCount == g["tracks"] as? Int)
        #expect(stats.segmentCount == g["segments"] as? Int)
        #expect(stats.trackPointCount == g["track_points"] as? Int)
        #expect(stats.waypointCount == g["waypoints"] as? Int)
        #expect(stats.routeCount == g["routes"] as? Int)
        #expect(stats.routePointCount == g["route_points"] as? Int)
        // Foundation's JSONSerialization does not always round 17-digit numbers correctly, so
        // bounds are compared to 1e-12 degrees (0.1 µm), not bit for bit.
        func same(_ ours: Bounds?, _ truth: [String: Double]?) -> Bool {
            guard let ours, let truth, let a = truth["min_lat"], let b = truth["max_lat"], let c = truth["min_lon"],
                let d = truth["max_lon"]
            else { return ours == nil && truth == nil }
            return abs(ours.minLatitude - a) < 1e-12 && abs(ours.maxLatitude - b) < 1e-12
                && abs(ours.minLongitude - c) < 1e-12 && abs(ours.maxLongitude - d) < 1e-12
        }
        #expect(
            same(stats.trackBounds, g["bounds"] as? [String: Double]),
            "track bounds \(String(describing: stats.trackBounds))")
        if let all = raw["bounds_all_points"] as? [String: Double] {
            #expect(same(stats.bounds, all), "bounds \(String(describing: stats.bounds))")
        }
        let geodesic = try #require(entry["geodesic"] as? [String: Any])
        let length2D = try #require(geodesic["track_length_2d_m"] as? Double)
        let length3D = try #require(geodesic["track_length_3d_m"] as? Double)
        let route2D = try #require(geodesic["route_length_2d_m"] as? Double)
        #expect(close(stats.length2D, length2D), "2D length \(stats.length2D) vs GeographicLib \(length2D)")
        #expect(close(stats.length3D, length3D), "3D length \(stats.length3D) vs \(length3D)")
        #expect(close(stats.routeLength2D, route2D), "route length \(stats.routeLength2D) vs \(route2D)")
        if let up = geodesic["raw_uphill_m"] as? Double, let down = geodesic["raw_downhill_m"] as? Double {
            #expect(close(stats.climb, up) && close(stats.descent, down))
        }
    }

    /// Every corpus GPX, whatever gpxpy thought of it, either reads or fails with a located error:
    /// never a crash, never a silent success on a broken file.
    @Test(arguments: Paths.files(under: Paths.corpus, suffix: ".gpx"))
    func everyCorpusFileReadsOrFailsWithAPlace(file: String) throws {
        let path = Paths.corpus.appendingPathComponent(file).path
        do {
            _ = try readDocument(path)
        } catch let e as GPXError {
            #expect(e.line > 0 && e.column > 0, "\(e)")
            #expect(e.description.hasPrefix(path + ":"))
        }
    }
}
