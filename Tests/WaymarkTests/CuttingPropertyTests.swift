import Foundation
import Testing

@testable import Waymark

/// Cutting a trace into pieces (issue 33's metamorphic relations): a track cut into consecutive
/// segments keeps its points, its times, its elevations and its bounds, and its length is the sum
/// of the pieces' lengths, that is the whole's less the edges the cuts removed.
@Suite struct CuttingPropertyTests {
    struct Cut: Sendable {
        var points: [GPXPoint]
        var cuts: [Int]
    }

    static let cuts = Property<Cut>(
        name: "cutting a track",
        generate: { r in
            var lat = Double(r.int(-80...80)) + Double(r.int(0...999)) / 1000
            var lon = Double(r.int(-179...179)) + Double(r.int(0...999)) / 1000
            var ele = Double(r.int(0...3000))
            var t = Double(r.int(0...2_000_000_000))
            let points = (0..<r.int(2...60)).map { _ -> GPXPoint in
                lat = max(-85, min(85, lat + Double(r.int(-50...50)) / 10_000))
                lon += Double(r.int(-50...50)) / 10_000
                ele += Double(r.int(-20...20))
                t += Double(r.int(1...30))
                return GPXPoint(latitude: lat, longitude: lon, elevation: ele, time: Date(timeIntervalSince1970: t))
            }
            let cuts = Array(Set(r.array(1...4) { $0.int(1...max(1, points.count - 1)) })).sorted()
            return Cut(points: points, cuts: cuts.filter { $0 < points.count })
        },
        describe: { "\($0.points.count) points cut at \($0.cuts)" })

    static func statistics(_ segments: [[GPXPoint]]) -> TraceStatistics {
        var stats = TraceStatistics()
        var events: [GPXEvent] = [.header(GPXHeader()), .trackStart(GPXPathInfo())]
        for segment in segments {
            events.append(.segmentStart)
            for p in segment { events.append(.trackPoint(p)) }
            events.append(.segmentEnd(GPXExtensions()))
        }
        events.append(.trackEnd(GPXPathInfo()))
        for e in events { stats.add(e) }
        return stats
    }

    @Test func aTrackCutIntoSegmentsKeepsItsPointsTimesAndLength() {
        Self.cuts.check { cut in
            let whole = Self.statistics([cut.points])
            let bounds = [0] + cut.cuts + [cut.points.count]
            let pieces = zip(bounds, bounds.dropFirst()).map { Array(cut.points[$0..<$1]) }
            let cutUp = Self.statistics(pieces)
            var problems = Problems()
            problems.expect(cutUp.segmentCount == pieces.count, "a segment per piece")
            problems.expect(cutUp.trackPointCount == whole.trackPointCount, "every point")
            problems.expect(cutUp.startTime == whole.startTime && cutUp.endTime == whole.endTime, "the same times")
            problems.expect(
                cutUp.minElevation == whole.minElevation && cutUp.maxElevation == whole.maxElevation,
                "the same elevations")
            let sumOfPieces = pieces.map { Self.statistics([$0]).length2D }.reduce(0, +)
            let edges = cut.cuts.map {
                Geodesic.distance(cut.points[$0 - 1].coordinate, cut.points[$0].coordinate)
            }.reduce(0, +)
            problems.expect(
                abs(cutUp.length2D - sumOfPieces) <= 1e-6 * max(1, sumOfPieces),
                "the length is the pieces' (\(cutUp.length2D) vs \(sumOfPieces))")
            problems.expect(
                abs(whole.length2D - (cutUp.length2D + edges)) <= 1e-6 * max(1, whole.length2D),
                "the whole less the cut edges (\(whole.length2D) vs \(cutUp.length2D) + \(edges))")
            return problems.list
        }
    }
}
