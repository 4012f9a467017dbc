import Foundation
import Testing

@testable import Waymark

/// The driver's shape, as issue 25 sets it and docs/layout.md describes it: `Simulation` holds
/// time, the timer queue, the current process and its observers in at most 20 stored properties,
/// none of them a `Bool` that encodes a rule's state (the rules live in their machines). A new
/// service adds a machine, not a stored property here. Counted by reflection, as a reviewer
/// counts them: every stored property of the class, lazy ones included.
@Suite struct DriverShapeTests {
    static func storedProperties() -> [(name: String, value: Any)] {
        let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 1_714_550_400))
        let mirror = Mirror(reflecting: simulation)
        #expect(mirror.superclassMirror == nil, "the driver has no superclass whose properties would count too")
        return mirror.children.map { ($0.label ?? "?", $0.value) }
    }

    @Test func theDriverHasAtMostTwentyStoredProperties() {
        let stored = Self.storedProperties()
        #expect(stored.count > 0)
        #expect(stored.count <= 20, "\(stored.count) stored properties: \(stored.map(\.name))")
    }

    @Test func noStoredPropertyOfTheDriverIsABool() {
        // By its dynamic type: `nil as Any` would pass `is Bool?`.
        let flags = Self.storedProperties().filter {
            let type = Swift.type(of: $0.value)
            return type == Bool.self || type == Bool?.self
        }
        #expect(flags.isEmpty, "rule state kept as flags on the driver: \(flags.map(\.name))")
    }
}
