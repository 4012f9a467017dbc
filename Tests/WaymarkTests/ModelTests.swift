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
