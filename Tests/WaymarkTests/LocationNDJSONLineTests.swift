import Testing

@testable import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
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

    /// The `i`-th location of a walk, with and without altitude and speed, over several days
    /// and segments.
    static func sample(_ i: Int) -> StoredLocation {
        let x = Double(i)
        let coordinate = Coordinate(latitude: 47 + x * 1e-5, longitude: 11 - x * 3e-6)
        let provenance = Provenance(
            source: .file(path: "a.gpx", index: i), isSimulatedBySoftware: true, fixMode: .threeD)
        let vertical: Double = i % 2 == 0 ? 7.5 : -1
        let speed: Double = i % 3 == 0 ? -1 : 1.4
        let location = Location(
            coordinate: coordinate, altitude: x * 0.37, horizontalAccuracy: 4.9, verticalAccuracy: vertical,
            speed: speed, course: Double(i * 7 % 360),
            timestamp: Date(timeIntervalSince1970: 1_700_000_000 + x * 3600.25),
            provenance: provenance)
        let state: AppState = i % 2 == 0 ? .active : .background
        let reason: FixReason = i % 2 == 0 ? .foreground : .backgroundSession
        return StoredLocation(
            location: location, appState: state, reason: reason, index: i, segment: i / 10, offset: .seconds(i))
    }

    @Test func theWriterWritesTheLinesOfItsLocations() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-line-\(UUID()).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let stored = (0..<50).map(Self.sample)
        let sink = try FileSink(atomicPath: path)
        let writer = LocationNDJSONWriter(sink: sink)
        for s in stored { try writer.write(s) }
        try writer.finish()
        try sink.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == stored.map { $0.ndjson() }.joined())
    }

    /// Written on a thread of its own, the file has the same bytes, in batches and at the end.
    @Test func aWriterWritingAheadWritesTheSameLines() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-ahead-\(UUID()).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let stored = (0..<2_000).map(Self.sample)
        let sink = try FileSink(atomicPath: path)
        let writer = try LocationNDJSONWriter.writingAhead(to: sink)
        for s in stored { try writer.write(s) }
        try writer.finish()
        try sink.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == stored.map { $0.ndjson() }.joined())
    }

    /// A write error on the writer's thread is thrown by finish(), as the caller's writer
    /// throws it from the write that meets it.
    @Test func aWriteErrorOnTheWritersThreadIsThrownAtTheEnd() throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let writer = try LocationNDJSONWriter.writingAhead(to: FileSink(descriptor: descriptor, path: "/dev/full"))
        let location = StoredLocation(
            location: Location(
                coordinate: Coordinate(latitude: 47, longitude: 11), horizontalAccuracy: 5,
                timestamp: Date(timeIntervalSince1970: 1_700_000_000),
                provenance: Provenance(
                    source: .file(path: "a.gpx", index: 0), isSimulatedBySoftware: true, fixMode: .twoD)),
            appState: .active, reason: .foreground, index: 0, segment: 0, offset: .zero)
        for _ in 0..<20_000 { try writer.write(location) }
        #expect(throws: OutputError.self) { try writer.finish() }
    }
}
