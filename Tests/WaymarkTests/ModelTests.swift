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
}
