import Foundation
import GPXLayouts
import Testing

@_spi(Testing) @testable import Waymark

/// The reader's fast path on the point layouts of the writers people use (gpxlogger, Garmin
/// Connect, Strava, OsmAnd, GPSLogger 1.0, tabs and CRLF, Apple Health, Garmin with sat and hdop):
/// it must read every point of each, from the template of the layout, and give exactly what the
/// general path gives.
@Suite struct GPXLayoutTests {
    /// A few thousand points, with segment breaks and the irregularities of each writer.
    static func document(_ layout: GPXLayout) -> [UInt8] {
        Array(layout.document(bytes: 300_000, seed: 7, segmentLength: 700).utf8)
    }

    static func reader(_ bytes: [UInt8], keepsExtensions: Bool, scanner: Bool, pieceSize: Int = .max) -> GPXReader {
        let reader = GPXReader(
            source: MemoryByteSource(bytes, pieceSize: pieceSize), name: "layout.gpx",
            options: GPXReadOptions(keepsExtensionElements: keepsExtensions))
        reader.usesTrackPointScanner = scanner
        return reader
    }

    @Test(arguments: GPXLayout.allCases)
    func theFastPathReadsEveryPointOfTheLayout(_ layout: GPXLayout) throws {
        let bytes = Self.document(layout)
        let reader = Self.reader(bytes, keepsExtensions: false, scanner: true)
        var points = 0
        var warnings = 0
        try reader.read { event in
            if case .trackPoint = event { points += 1 }
            if case .warning = event { warnings += 1 }
        }
        #expect(points > 500)
        #expect(warnings == 0)
        #expect(reader.scannedPoints == points, "\(layout)")
        // The template holds from one point to the next but where the layout changes (a 2D
        // fix, a point without DOPs, a new segment).
        #expect(reader.templatedPoints * 100 >= points * 90, "\(layout): \(reader.templatedPoints) of \(points)")
    }

    @Test(arguments: GPXLayout.allCases)
    func theFastPathGivesTheGeneralPathsEvents(_ layout: GPXLayout) {
        let bytes = Self.document(layout)
        for settings in TrackPointScannerTests.Settings.all {
            TrackPointScannerTests.expectSame(bytes, settings, layout.rawValue)
        }
        // Pieces that cut points anywhere.
        TrackPointScannerTests.expectSame(bytes, .init(pieceSize: 1531), layout.rawValue)
    }

    /// GeoJSON (as `render` writes it, reading ahead on a second thread) and GPX output are the
    /// same bytes with the fast path and without it.
    @Test(arguments: GPXLayout.allCases)
    func outputIsByteIdenticalToTheGeneralPaths(_ layout: GPXLayout) throws {
        let bytes = Self.document(layout)
        func geojson(scanner: Bool) throws -> Data {
            try render { sink in
                let writer = GeoJSONWriter(sink: sink)
                try writer.write(readingAhead: Self.reader(bytes, keepsExtensions: false, scanner: scanner))
                try writer.finish()
            }
        }
        func gpx(scanner: Bool) throws -> Data {
            try render { sink in
                let writer = GPXWriter(sink: sink)
                try Self.reader(bytes, keepsExtensions: true, scanner: scanner).read { try writer.write($0) }
                try writer.finish()
            }
        }
        let fast = try geojson(scanner: true)
        #expect(fast.count > 30_000)
        #expect(fast == (try geojson(scanner: false)), "\(layout): GeoJSON differs")
        #expect(try gpx(scanner: true) == (try gpx(scanner: false)), "\(layout): GPX differs")
    }

    /// What each layout carries reaches the point: the values of its extensions, its DOPs, its
    /// own accuracy, its zone-offset times.
    @Test func eachLayoutsValuesAreRead() throws {
        func firstPoint(_ layout: GPXLayout) throws -> GPXPoint {
            let reader = Self.reader(Self.document(layout), keepsExtensions: false, scanner: true)
            var first: GPXPoint?
            try reader.read { event in
                if case .trackPoint(let p) = event, first == nil { first = p }
            }
            return try #require(first)
        }
        let start = Date(timeIntervalSince1970: 1_714_550_400)
        let logger = try firstPoint(.gpxlogger)
        #expect(logger.fix == .threeD && logger.satellites == 9 && logger.hdop == 0.9 && logger.pdop != nil)
        #expect(logger.time == start)
        let garmin = try firstPoint(.garminConnect)
        #expect(garmin.extensions.heartRate == 120 && garmin.extensions.cadence == 82)
        #expect(garmin.extensions.airTemperature == 21.5)
        // The exact expansion of the semicircle value reads back as that double.
        #expect(garmin.coordinate.latitude == (47.3769 * 2_147_483_648 / 180).rounded() * 180 / 2_147_483_648)
        let strava = try firstPoint(.strava)
        #expect(strava.extensions.power == 180 && strava.extensions.heartRate == 120)
        let osmand = try firstPoint(.osmand)
        #expect(osmand.extensions.speed == 4.0 && osmand.hdop != nil && osmand.extensions.course != nil)
        let gpslogger = try firstPoint(.gpslogger)
        #expect(gpslogger.speed == 4.0 && gpslogger.source == "gps" && gpslogger.geoidHeight == 47.4)
        #expect(gpslogger.vdop != nil && gpslogger.course != nil && gpslogger.satellites == 9)
        let minimal = try firstPoint(.minimalTabsCRLF)
        #expect(minimal.time == start && minimal.elevation == nil)
        let health = try firstPoint(.appleHealth)
        #expect(health.time == start)  // 01:00:00-07:00
        #expect(health.horizontalAccuracy == 2.25 && health.verticalAccuracy != nil)
        #expect(health.extensions.speed == 4.0)
    }
}
