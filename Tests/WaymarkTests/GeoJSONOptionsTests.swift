import Foundation
import Testing

@testable import Waymark

/// GeoJSON for GIS tools: a Point per fix (`--geojson-points`), one geometry type (`--only`),
/// no per-point arrays (`--no-coordinate-properties`); and the same bytes as before without them.
@Suite struct GeoJSONOptionsTests {
    static let segments = Paths.fixture("gpx/segments.gpx")
    static let extensions = Paths.fixture("gpx/extensions.gpx")

    static func write(_ path: String, _ options: GeoJSONOptions) throws -> Data {
        let reader = try GPXReader(contentsOf: path, options: GPXReadOptions(lenient: true))
        return try render { sink in
            let writer = GeoJSONOptionsWriter(sink: sink, options: options)
            try reader.read { try writer.write($0) }
            try writer.finish()
        }
    }

    static func features(_ data: Data) throws -> [[String: Any]] {
        try #require(try WriterTests.json(data)["features"] as? [[String: Any]])
    }

    static func geometry(_ feature: [String: Any]) -> String? {
        (feature["geometry"] as? [String: Any])?["type"] as? String
    }

    static func properties(_ feature: [String: Any]) -> [String: Any] {
        feature["properties"] as? [String: Any] ?? [:]
    }

    /// Every fixture, through the options' writer with the defaults: the bytes of GeoJSONWriter.
    @Test(arguments: WriterTests.fixtureTraces)
    func theDefaultsWriteWhatGeoJSONWriterWrites(_ path: String) throws {
        #expect(try Self.write(path, GeoJSONOptions()) == WriterTests.geojson(path))
    }

    @Test func pointsAreOneFeaturePerFixWithTimeValuesAndPlace() throws {
        let features = try Self.features(try Self.write(Self.segments, GeoJSONOptions(points: true)))
        #expect(features.allSatisfy { Self.geometry($0) == "Point" })
        let kinds = features.map { Self.properties($0)["_gpxType"] as? String ?? "" }
        #expect(kinds == ["wpt", "rtept", "rtept", "trkpt", "trkpt", "trkpt", "trkpt", "trkpt", "trkpt"])
        let track = features.filter { Self.properties($0)["_gpxType"] as? String == "trkpt" }.map(Self.properties)
        // The empty second segment still counts: segments 0, 2 and 3, as GDAL numbers them.
        #expect(track.map { $0["track_seg_id"] as? Int } == [0, 0, 0, 2, 3, 3])
        #expect(track.map { $0["track_seg_point_id"] as? Int } == [0, 1, 2, 0, 0, 1])
        #expect(track.allSatisfy { $0["track_fid"] as? Int == 0 })
        #expect(track.first?["time"] as? String == "2024-05-01T09:00:00.000Z")
        #expect(track.map { $0["ele"] as? Double } == [500, 501, 502, 500, 500, 501])
        let coordinates = (features[4]["geometry"] as? [String: Any])?["coordinates"] as? [Double]
        #expect(coordinates == [11.501, 48.101, 501])
        let route = features.filter { Self.properties($0)["_gpxType"] as? String == "rtept" }.map(Self.properties)
        #expect(route.map { $0["route_point_id"] as? Int } == [0, 1])
        #expect(Self.properties(features[0])["name"] as? String == "Start")
        // The collection's box holds every point; no feature has coordinateProperties.
        let bbox = try WriterTests.json(try Self.write(Self.segments, GeoJSONOptions(points: true)))["bbox"]
        #expect(bbox as? [Double] == [11.5, 48.1, 11.6, 48.301])
        #expect(features.allSatisfy { Self.properties($0)["coordinateProperties"] == nil })
    }

    @Test func pointsCarryTheSensorValuesOfTheExtensions() throws {
        let features = try Self.features(try Self.write(Self.extensions, GeoJSONOptions(points: true)))
        let lines = try Self.features(try WriterTests.geojson(Self.extensions))
        let arrays = try #require(
            lines.compactMap { Self.properties($0)["coordinateProperties"] as? [String: Any] }.first)
        // What the line keeps in its arrays, each point keeps as its own values.
        let points = features.filter { Self.properties($0)["_gpxType"] as? String == "trkpt" }.map(Self.properties)
        #expect(points.map { $0["heart"] as? Double } == (arrays["heart"] as? [Any] ?? []).map { $0 as? Double })
        #expect(points.map { $0["time"] as? String } == (arrays["times"] as? [Any] ?? []).map { $0 as? String })
        #expect(points.contains { $0["heart"] != nil })
    }

    @Test(arguments: GeoJSONOptions.Kind.allCases)
    func onlyKeepsOneKindAndOneGeometryType(_ kind: GeoJSONOptions.Kind) throws {
        let features = try Self.features(try Self.write(Self.segments, GeoJSONOptions(only: kind)))
        let expected: (String, String) =
            switch kind {
            case .tracks: ("trk", "MultiLineString")
            case .routes: ("rte", "MultiLineString")
            case .waypoints: ("wpt", "Point")
            }
        #expect(features.count == 1)
        #expect(features.map { Self.properties($0)["_gpxType"] as? String } == [expected.0])
        #expect(features.map(Self.geometry) == [expected.1])
        let points = try Self.features(try Self.write(Self.segments, GeoJSONOptions(points: true, only: kind)))
        let pointKind = ["trk": "trkpt", "rte": "rtept", "wpt": "wpt"][expected.0]
        #expect(!points.isEmpty && points.allSatisfy { Self.properties($0)["_gpxType"] as? String == pointKind })
    }

    /// A track of one segment is a MultiLineString too, with its arrays nested alike.
    @Test func onlyTracksMakesASingleSegmentAMultiLineString() throws {
        let features = try Self.features(try Self.write(Self.extensions, GeoJSONOptions(only: .tracks)))
        let geometry = try #require(features.first?["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "MultiLineString")
        let lines = try #require(geometry["coordinates"] as? [[[Double]]])
        #expect(lines.count == 1 && lines[0].count == 3)
        let arrays = try #require(Self.properties(features[0])["coordinateProperties"] as? [String: Any])
        #expect((arrays["times"] as? [[String]])?.map(\.count) == [3])
    }

    @Test func noCoordinatePropertiesLeavesOnlyTheArraysOut() throws {
        for path in [Self.segments, Self.extensions] {
            let without = try Self.features(try Self.write(path, GeoJSONOptions(coordinateProperties: false)))
            var with = try Self.features(try WriterTests.geojson(path))
            #expect(with.contains { Self.properties($0)["coordinateProperties"] != nil }, "\(path)")
            for i in with.indices {
                var p = Self.properties(with[i])
                p["coordinateProperties"] = nil
                with[i]["properties"] = p
            }
            #expect(NSArray(array: without).isEqual(to: with), "\(path)")
        }
    }

    @Test func deliveredLocationsArePointsWithTheAppsValues() throws {
        let epoch = Date(timeIntervalSince1970: 1_714_550_400)
        let locations = (0..<3).map { i in
            StoredLocation(
                location: Location(
                    coordinate: Coordinate(latitude: 48.1 + Double(i) * 1e-4, longitude: 11.5), altitude: 500,
                    horizontalAccuracy: 5, verticalAccuracy: i == 2 ? -1 : 8, speed: 1.5, course: 90,
                    timestamp: epoch.addingTimeInterval(Double(i) * 10),
                    provenance: Provenance(
                        source: .file(path: "walk.gpx", index: i), isSimulatedBySoftware: true, fixMode: .threeD,
                        satellitesUsed: 9, hdop: 1.2)),
                appState: i == 0 ? .active : .background, reason: i == 0 ? .foreground : .backgroundSession,
                index: i, segment: i < 2 ? 0 : 1, offset: .seconds(i * 10))
        }
        let data = try render { sink in
            let writer = GeoJSONOptionsWriter(sink: sink, options: GeoJSONOptions(points: true))
            try writer.writeDelivered(locations, name: "delivered locations")
            try writer.finish()
        }
        let properties = try Self.features(data).map(Self.properties)
        #expect(properties.map { $0["appState"] as? String } == ["active", "background", "background"])
        #expect(properties.map { $0["reason"] as? String } == ["foreground", "backgroundSession", "backgroundSession"])
        #expect(properties.map { $0["segment"] as? Int } == [0, 0, 1])
        #expect(properties.map { $0["time"] as? String }.last == "2024-05-01T08:00:20.000Z")
        #expect(properties.map { $0["horizontalAccuracy"] as? Double } == [5, 5, 5])
        #expect(
            properties.map { $0["verticalAccuracy"] as? Double } == [8, 8, nil], "no altitude: no vertical accuracy")
        #expect(properties.map { $0["ele"] as? Double } == [500, 500, nil])
        #expect(properties.allSatisfy { $0["speed"] as? Double == 1.5 && $0["course"] as? Double == 90 })
        #expect(properties.allSatisfy { $0["hdop"] as? Double == 1.2 && $0["sat"] as? Int == 9 })
    }
}
