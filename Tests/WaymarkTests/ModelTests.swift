import Foundation
import Testing

@testable import Waymark

@Suite struct ModelTests {
    /// Extension elements are kept as nothing when there are none; that must not show.
    @Test func extensionsWithAndWithoutElementsCompareAndEncodeAsBefore() throws {
        var empty = GPXExtensions()
        var emptied = GPXExtensions(elements: ["<a xmlns=\"urn:x\"/>"])
        emptied.elements = []
        #expect(empty == emptied)
        #expect(empty.hashValue == emptied.hashValue)
        #expect(emptied.isEmpty && emptied.elements.isEmpty)

        empty.heartRate = 150
        var full = GPXExtensions(elements: ["<a xmlns=\"urn:x\"/>"])
        full.cadence = 80
        for value in [empty, full, GPXExtensions()] {
            let data = try JSONEncoder().encode(value)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect(object?["elements"] as? [String] == value.elements)
            #expect(try JSONDecoder().decode(GPXExtensions.self, from: data) == value)
        }
        #expect(!full.isEmpty && full.elements.count == 1)
    }

    /// A point keeps a logger's numbers inline and the rest in its box; neither shows: the
    /// fields read back as set, however they were set, points compare by value, and the
    /// encoding is the one of a point whose details all lived in one box (`box.details._0`).
    @Test func inlineAndBoxedDetailsReadCompareAndEncodeAsOneSetOfDetails() throws {
        var byField = GPXPoint(latitude: 47.1, longitude: 8.5, elevation: 410)
        byField.fix = .threeD
        byField.satellites = 9
        byField.hdop = 0.9
        byField.vdop = 1.3
        byField.pdop = 1.6
        byField.speed = 1.25
        byField.source = "gps"
        byField.name = "P1"
        var details = GPXPoint.Details()
        details.fix = .threeD
        details.satellites = 9
        details.hdop = 0.9
        details.vdop = 1.3
        details.pdop = 1.6
        details.speed = 1.25
        details.source = "gps"
        details.name = "P1"
        var byDetails = GPXPoint(latitude: 47.1, longitude: 8.5, elevation: 410)
        byDetails.details = details
        #expect(byField == byDetails)
        #expect(byField.hashValue == byDetails.hashValue)
        #expect(byField.details == details)
        #expect(byField.hasDetails)

        // Every fix value survives the inline code, and nil clears it.
        for fix in GPXFix.allCases {
            byField.fix = fix
            #expect(byField.fix == fix && byField.details.fix == fix)
        }
        byField.fix = .threeD
        var cleared = byField
        cleared.details = GPXPoint.Details()
        #expect(!cleared.hasDetails)
        #expect(cleared == GPXPoint(latitude: 47.1, longitude: 8.5, elevation: 410))
        cleared.satellites = 0
        #expect(cleared.hasDetails && cleared.satellites == 0)
        cleared.satellites = nil
        #expect(!cleared.hasDetails)

        let data = try JSONEncoder().encode(byField)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let box = object?["box"] as? [String: Any]
        let payload = (box?["details"] as? [String: Any])?["_0"] as? [String: Any]
        #expect(payload?["hdop"] as? Double == 0.9)
        #expect(payload?["source"] as? String == "gps")
        #expect(payload?["name"] as? String == "P1")
        #expect(try JSONDecoder().decode(GPXPoint.self, from: data) == byField)
        let bare = try JSONEncoder().encode(GPXPoint(latitude: 1, longitude: 2))
        let bareObject = try JSONSerialization.jsonObject(with: bare) as? [String: Any]
        #expect(bareObject?["box"] == nil)
        #expect(try JSONDecoder().decode(GPXPoint.self, from: bare) == GPXPoint(latitude: 1, longitude: 2))
    }
}

/// ``Location`` keeps its fields in a shared box; none of that may show.
@Suite struct LocationValueTests {
    /// The fields of a location as a plain struct: what the conformances must match.
    private struct Plain: Hashable, Codable {
        var coordinate: Coordinate
        var altitude: Double
        var ellipsoidalAltitude: Double?
        var horizontalAccuracy: Double
        var verticalAccuracy: Double
        var speed: Double
        var speedAccuracy: Double
        var course: Double
        var courseAccuracy: Double
        var timestamp: Date
        var provenance: Provenance

        init(_ l: Location) {
            coordinate = l.coordinate
            altitude = l.altitude
            ellipsoidalAltitude = l.ellipsoidalAltitude
            horizontalAccuracy = l.horizontalAccuracy
            verticalAccuracy = l.verticalAccuracy
            speed = l.speed
            speedAccuracy = l.speedAccuracy
            course = l.course
            courseAccuracy = l.courseAccuracy
            timestamp = l.timestamp
            provenance = l.provenance
        }

        var location: Location {
            Location(
                coordinate: coordinate, altitude: altitude, ellipsoidalAltitude: ellipsoidalAltitude,
                horizontalAccuracy: horizontalAccuracy, verticalAccuracy: verticalAccuracy, speed: speed,
                speedAccuracy: speedAccuracy, course: course, courseAccuracy: courseAccuracy, timestamp: timestamp,
                provenance: provenance)
        }
    }

    private static func random(_ rng: inout PropertyRandom) -> Location {
        func value(_ rng: inout PropertyRandom) -> Double { Double(Int.random(in: -3...3, using: &rng)) }
        return Location(
            coordinate: Coordinate(latitude: value(&rng), longitude: value(&rng)), altitude: value(&rng),
            ellipsoidalAltitude: Bool.random(using: &rng) ? nil : value(&rng), horizontalAccuracy: value(&rng),
            verticalAccuracy: value(&rng), speed: value(&rng), speedAccuracy: value(&rng), course: value(&rng),
            courseAccuracy: value(&rng), timestamp: Date(timeIntervalSince1970: value(&rng)),
            provenance: Provenance(
                source: Bool.random(using: &rng) ? .file(path: "a.gpx", index: 3) : .gpsd(device: "/dev/x"),
                isSimulatedBySoftware: Bool.random(using: &rng), fixMode: .threeD,
                hdop: Bool.random(using: &rng) ? nil : value(&rng),
                degradation: Bool.random(using: &rng) ? nil : .init(error: 2, faults: ["jump"])))
    }

    /// Every field set on a copy changes that copy alone, and reads back as set.
    @Test func aChangedCopyLeavesTheOriginalAlone() {
        var rng = PropertyRandom(seed: 41)
        let changes: [(inout Location) -> Void] = [
            { $0.coordinate.latitude += 1 }, { $0.altitude += 1 }, { $0.ellipsoidalAltitude = 99 },
            { $0.horizontalAccuracy += 1 }, { $0.verticalAccuracy += 1 }, { $0.speed += 1 },
            { $0.speedAccuracy += 1 }, { $0.course += 1 }, { $0.courseAccuracy += 1 },
            { $0.timestamp += 1 }, { $0.provenance.speedIsDerived.toggle() },
        ]
        for _ in 0..<200 {
            let original = Self.random(&rng)
            let before = Plain(original)
            for change in changes {
                var copy = original
                change(&copy)
                var fresh = before.location  // a box of its own
                change(&fresh)
                #expect(Plain(original) == before)
                #expect(Plain(copy) == Plain(fresh))
                #expect(copy != original)
            }
        }
    }

    /// Equal, hashed and coded as the plain struct of its fields: a NaN field makes a location
    /// unequal even to itself, and the JSON is the same bytes.
    @Test func equalityHashingAndCodingAreThoseOfItsFields() throws {
        var rng = PropertyRandom(seed: 42)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for _ in 0..<300 {
            let a = Self.random(&rng)
            let b = Self.random(&rng)
            #expect((a == b) == (Plain(a) == Plain(b)))
            if a == b { #expect(a.hashValue == b.hashValue) }
            let json = try encoder.encode(a)
            #expect(json == (try encoder.encode(Plain(a))))
            #expect(try JSONDecoder().decode(Location.self, from: json) == a)
            // Printed as the struct of its fields, not as its box.
            let printed = String(describing: a)
            #expect(printed.hasPrefix("Location(coordinate: "))
            #expect(printed.dropFirst("Location".count) == String(describing: Plain(a)).drop { $0 != "(" })
        }
        var nan = Self.random(&rng)
        nan.speed = .nan
        let same = nan
        #expect(nan != same)
    }
}
