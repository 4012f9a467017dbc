import Testing

@testable import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The delivered-location writer's hot path writes the bytes of the readable line
/// (`StoredLocation.ndjson()`), whatever the values.
@Suite struct LocationNDJSONLineTests {
    /// Values that take every branch of the number writers: ordinary, negative, zero and −0,
    /// ties, very small and very large, not finite.
    static let values: [Double] = [
        0, -0.0, 1, -1, 0.5, 2.5, 5.500000000000001, 0.014, 3.25, 47.2692124, 11.3932838, -122.4194155,
        359.95, 0.000_000_04, 1e-12, 123_456.789, 99_999.99, 100_000, 4.5e8, 1e16, -1e16, 1e300,
        .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
    ]

    static let dates: [Date] = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000.123),
        Date(timeIntervalSince1970: 1_700_000_000.9995), Date(timeIntervalSince1970: 1_700_086_399.9996),
        Date(timeIntervalSince1970: -1_000_000.5), Date(timeIntervalSince1970: -62_135_596_800 - 86_400),
        Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: 1e17),
        Date(timeIntervalSince1970: .nan),
    ]

    @Test func theHotPathWritesTheReadableLine() {
        let reference = ByteStore(capacity: 256)
        let fast = ByteStore(capacity: 256)
        var referenceCache = ValueFormatting.DayCache()
        var fastCache = ValueFormatting.DayCache()
        var lines = 0
        let states = AppState.allCases
        let reasons = FixReason.allCases
        for (i, v) in Self.values.enumerated() {
            for (j, w) in Self.values.enumerated() {
                let date = Self.dates[(i + j) % Self.dates.count]
                let location = Location(
                    coordinate: Coordinate(latitude: v, longitude: w), altitude: w, ellipsoidalAltitude: nil,
                    horizontalAccuracy: v, verticalAccuracy: (i + j) % 3 == 0 ? -1 : w, speed: w, speedAccuracy: v,
                    course: v, courseAccuracy: w, timestamp: date,
                    provenance: Provenance(
                        source: .file(path: "walk.gpx", index: i), isSimulatedBySoftware: true, fixMode: .threeD))
                let state = states[(i * 7 + j) % states.count]
                let reason = reasons[(i + j * 5) % reasons.count]
                let index = (i - 3) * 1_000_003 * (j + 1)
                let segment = j - 2
                StoredLocation.append(
                    location, index: index, segment: segment, appState: state, reason: reason, to: reference,
                    cache: &referenceCache)
                LocationNDJSONLine.append(
                    location, index: index, segment: segment, appState: state, reason: reason, to: fast,
                    cache: &fastCache)
                lines += 1
            }
        }
        #expect(lines == Self.values.count * Self.values.count)
        #expect(fast.string == reference.string)
    }

    /// The app state and the reason are written without escaping: none of their words needs it.
    @Test func appStatesAndReasonsNeedNoEscaping() {
        let words = AppState.allCases.map(\.rawValue) + FixReason.allCases.map(\.rawValue)
        for word in words {
            let out = ByteStore(capacity: 64)
            JSONEscaping.appendString(word, to: out)
            #expect(out.string == "\"\(word)\"")
        }
    }

    @Test func theWriterWritesTheLinesOfItsLocations() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-line-\(UUID()).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let stored = (0..<50).map { i in
            StoredLocation(
                location: Location(
                    coordinate: Coordinate(latitude: 47 + Double(i) * 1e-5, longitude: 11 - Double(i) * 3e-6),
                    altitude: Double(i) * 0.37, horizontalAccuracy: 4.9, verticalAccuracy: i % 2 == 0 ? 7.5 : -1,
                    speed: i % 3 == 0 ? -1 : 1.4, course: Double(i * 7 % 360),
                    timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 3600.25),
                    provenance: Provenance(
                        source: .file(path: "a.gpx", index: i), isSimulatedBySoftware: true, fixMode: .threeD)),
                appState: i % 2 == 0 ? .active : .background, reason: i % 2 == 0 ? .foreground : .backgroundSession,
                index: i, segment: i / 10, offset: .seconds(i))
        }
        let sink = try FileSink(atomicPath: path)
        let writer = LocationNDJSONWriter(sink: sink)
        for s in stored { try writer.write(s) }
        try writer.finish()
        try sink.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == stored.map { $0.ndjson() }.joined())
    }
}
