import Foundation
import Testing

@testable import Waymark

/// GPX points as CoreLocation-style locations, laid out on a replay timeline.
@Suite struct ReplayScheduleTests {
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    @Test func mapsDOPsToAccuraciesWithTheUERE() throws {
        var p = GPXPoint(latitude: 1, longitude: 2, elevation: 100)
        p.hdop = 1.5
        p.vdop = 2
        p.satellites = 8
        p.fix = .dgps
        p.geoidHeight = 47
        let at = Date(timeIntervalSince1970: 1000)
        let l = GPXLocationMapping(uere: 4).location(for: p, file: "f.gpx", index: 3, timestamp: at)
        #expect(l.horizontalAccuracy == 6 && l.verticalAccuracy == 8)
        #expect(l.altitude == 100 && l.ellipsoidalAltitude == 147)
        #expect(l.provenance.fixMode == .threeD && l.provenance.differential == .dgps)
        #expect(l.provenance.satellitesUsed == 8 && l.provenance.isSimulatedBySoftware)
        #expect(l.provenance.source == .file(path: "f.gpx", index: 3))
        #expect(l.speed == -1 && l.course == -1 && l.timestamp == at)
    }

    @Test func withoutDOPsTheDefaultsApplyAndNoElevationMeansNoAltitude() {
        let flat = GPXPoint(latitude: 1, longitude: 2)
        let l = GPXLocationMapping.default.location(for: flat, file: "f", index: 0, timestamp: Date())
        #expect(l.horizontalAccuracy == 10)
        #expect(l.verticalAccuracy == -1 && !l.hasValidAltitude && l.ellipsoidalAltitude == nil)
        #expect(l.provenance.fixMode == .twoD)
        var noFix = GPXPoint(latitude: 1, longitude: 2, elevation: 5)
        noFix.fix = GPXFix.none
        let n = GPXLocationMapping.default.location(for: noFix, file: "f", index: 0, timestamp: Date())
        #expect(n.horizontalAccuracy < 0 && n.verticalAccuracy < 0)
    }

    @Test func timedTracksPlayOnTheirOwnTimesWithGapsBetweenSegments() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/segments.gpx"))
        let s = try ReplaySchedule(document: doc, file: "segments.gpx")
        #expect(s.isTimed)
        #expect(s.fixes.map { Self.seconds($0.offset) } == [0, 10, 20, 100, 200, 210])
        #expect(s.fixes.map(\.segment) == [0, 0, 0, 1, 2, 2])
        #expect(Self.seconds(s.duration) == 210)
        // File indices count the waypoint and the two route points first.
        #expect(s.fixes.first?.location.provenance.source == .file(path: "segments.gpx", index: 3))
    }

    @Test func speedAndCourseAreDerivedWithinASegment() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/segments.gpx"))
        let s = try ReplaySchedule(document: doc, file: "s")
        let middle = s.fixes[1].location
        let expected =
            Geodesic.distance(s.fixes[0].location.coordinate, s.fixes[2].location.coordinate) / 20
        #expect(abs(middle.speed - expected) < 1e-9)
        #expect(middle.provenance.speedIsDerived && middle.provenance.courseIsDerived)
        #expect(middle.course > 0 && middle.course < 90)  // north-east
        // A lone point in its own segment has no neighbours to derive from.
        #expect(s.fixes[3].location.speed == -1)
    }

    @Test func givenSpeedIsKeptAndNotMarkedDerived() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/gpx10.gpx"))
        let s = try ReplaySchedule(document: doc, file: "s")
        #expect(s.fixes[0].location.speed == 1.25 && !s.fixes[0].location.provenance.speedIsDerived)
        #expect(s.fixes[0].location.course == 90.5)
    }

    @Test func untimedXcodeWaypointsPlayAtTheGivenSpeed() throws {
        let text = """
            <gpx version="1.1" creator="Xcode"><wpt lat="0" lon="0"/><wpt lat="0" lon="0.001"/><wpt lat="0" lon="0.003"/></gpx>
            """
        let doc = try parseDocument(text)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let s = try ReplaySchedule(document: doc, file: "x", options: .init(untimedSpeed: 10, untimedStart: start))
        #expect(!s.isTimed)
        let metre = Geodesic.distance(Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 0.001))
        let offsets = s.fixes.map { Self.seconds($0.offset) }
        #expect(abs(offsets[1] - metre / 10) < 1e-6 && abs(offsets[2] - 3 * metre / 10) < 1e-6)
        #expect(s.fixes[2].location.timestamp == start.addingTimeInterval(offsets[2]))
        #expect(abs(s.fixes[1].location.speed - 10) < 1e-6)
    }

    @Test func timedXcodeWaypointsPlayAtTheirTimes() throws {
        let (doc, _) = try readDocument(Paths.root.appendingPathComponent("traces/xcode-route.gpx").path)
        let s = try ReplaySchedule(document: doc, file: "x")
        #expect(s.isTimed)
        #expect(s.fixes.map { Self.seconds($0.offset) } == [0, 60, 120, 180, 240, 300])
    }

    @Test func intervalResamplesAlongTheGeodesic() throws {
        let text = """
            <gpx><trk><trkseg><trkpt lat="0" lon="0"><ele>0</ele><time>2024-01-01T00:00:00Z</time></trkpt>\
            <trkpt lat="0" lon="0.01"><ele>10</ele><time>2024-01-01T00:00:10Z</time></trkpt></trkseg>\
            <trkseg><trkpt lat="1" lon="1"><time>2024-01-01T00:01:00Z</time></trkpt>\
            <trkpt lat="1" lon="1.01"><time>2024-01-01T00:01:05Z</time></trkpt></trkseg></trk></gpx>
            """
        let s = try ReplaySchedule(document: try parseDocument(text), file: "t", options: .init(interval: .seconds(2)))
        #expect(s.fixes.map { Self.seconds($0.offset) } == [0, 2, 4, 6, 8, 10, 60, 62, 64])
        let third = s.fixes[2].location
        #expect(abs(third.coordinate.longitude - 0.004) < 1e-9 && abs(third.coordinate.latitude) < 1e-9)
        #expect(abs(third.altitude - 4) < 1e-9)
        #expect(third.timestamp == Date(timeIntervalSince1970: 1_704_067_204))
        // Nothing is interpolated across the gap between segments.
        #expect(!s.fixes.contains { Self.seconds($0.offset) > 10 && Self.seconds($0.offset) < 60 })
    }

    @Test func startOffsetSkipsTheBeginning() throws {
        let (doc, _) = try readDocument(Paths.fixture("gpx/segments.gpx"))
        let s = try ReplaySchedule(document: doc, file: "s", options: .init(startOffset: .seconds(15)))
        #expect(s.fixes.map { Self.seconds($0.offset) } == [5, 85, 185, 195])
    }

    @Test func pointsGoingBackInTimeAreDroppedAndCounted() throws {
        let text = """
            <gpx><trk><trkseg><trkpt lat="0" lon="0"><time>2024-01-01T00:00:10Z</time></trkpt>\
            <trkpt lat="0" lon="0.1"><time>2024-01-01T00:00:05Z</time></trkpt>\
            <trkpt lat="0" lon="0.2"><time>2024-01-01T00:00:20Z</time></trkpt></trkseg></trk></gpx>
            """
        let s = try ReplaySchedule(document: try parseDocument(text), file: "t")
        #expect(s.droppedPoints == 1)
        #expect(s.fixes.map { Self.seconds($0.offset) } == [0, 10])
    }

    @Test func badOptionsAreRefused() throws {
        let doc = try parseDocument("<gpx><wpt lat=\"0\" lon=\"0\"/></gpx>")
        #expect(throws: ReplaySchedule.ScheduleError.self) {
            _ = try ReplaySchedule(document: doc, file: "t", options: .init(untimedSpeed: 0))
        }
        #expect(throws: ReplaySchedule.ScheduleError.self) {
            _ = try ReplaySchedule(document: doc, file: "t", options: .init(interval: .zero))
        }
    }

    @Test(.enabled(if: GeodesyTests.hasGeographicLib, "python3 with geographiclib is needed"))
    func destinationMatchesGeographicLibDirect() throws {
        var rng = SplitMix64(seed: 99)
        var cases: [(Coordinate, Double, Double)] = []
        for _ in 0..<200 {
            let lat = Double(rng.next() % 17_800) / 100 - 89
            let lon = Double(rng.next() % 36_000) / 100 - 180
            let bearing = Double(rng.next() % 36_000) / 100
            let distance = [10.0, 1_000, 100_000, 5_000_000][Int(rng.next() % 4)]
            cases.append((Coordinate(latitude: lat, longitude: lon), bearing, distance))
        }
        let input = cases.map { "\($0.0.latitude) \($0.0.longitude) \($0.1) \($0.2)" }.joined(separator: "\n")
        let script = """
            import sys
            from geographiclib.geodesic import Geodesic
            for line in sys.stdin:
                a, b, c, d = map(float, line.split())
                r = Geodesic.WGS84.Direct(a, b, c, d)
                print(repr(r["lat2"]), repr(r["lon2"]))
            """
        let result = try run(GeodesyTests.python!, ["-c", script], input: Data(input.utf8))
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == cases.count)
        for (c, line) in zip(cases, lines) {
            let v = line.split(separator: " ").compactMap { Double($0) }
            let ours = Geodesic.destination(from: c.0, bearing: c.1, distance: c.2)
            let miss = Geodesic.distance(ours, Coordinate(latitude: v[0], longitude: v[1]))
            #expect(miss < 1e-3, "\(c): \(ours) vs \(v), \(miss) m apart")
        }
    }
}
