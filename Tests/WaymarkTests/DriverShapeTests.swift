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

    /// The per-fix path takes the managers out of the rules while their machines decide
    /// (`DeviceRules.receive`, which spares a copy of the rules for each manager's context): a
    /// context read then must not read a fact of the managers, which would find none and be
    /// silently wrong. Debug builds, the tests', stop the program instead.
    @Test func aFactOfTheManagersReadWhileTheyAreTakenOutStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            var rules = DeviceRules(scenario: Scenario())
            rules.managersTakenOut = true
            _ = rules.isInUse || rules.hasBackgroundSession
        }
    }

    @Test func noStoredPropertyOfTheDriverIsABool() {
        // By its dynamic type: `nil as Any` would pass `is Bool?`.
        let flags = Self.storedProperties().filter {
            let type = Swift.type(of: $0.value)
            return type == Bool.self || type == Bool?.self
        }
        #expect(flags.isEmpty, "rule state kept as flags on the driver: \(flags.map(\.name))")
    }

    /// The machines a fresh device's rules hold, found by reflection (a machine inside another, or
    /// in an array, counts): each by its type's name, with its `state`.
    static func machines() -> [String: Mirror.Child?] {
        var found: [String: Mirror.Child?] = [:]
        func walk(_ value: Any, depth: Int) {
            guard depth < 8 else { return }
            let mirror = Mirror(reflecting: value)
            let name = String(describing: Swift.type(of: value))
            if name.hasSuffix("StateMachine") { found[name] = mirror.children.first { $0.label == "state" } }
            for child in mirror.children { walk(child.value, depth: depth + 1) }
        }
        walk(DeviceRules(scenario: Scenario()), depth: 0)
        return found
    }

    /// Issue 25: "Each machine is a value with one `enum State`". Every machine the rules hold
    /// keeps its state in a stored `state` that is an enum (what it holds besides, such as a
    /// counter for ids, is not its state).
    @Test func everyMachineKeepsItsStateInOneEnum() {
        let machines = Self.machines()
        #expect(machines.count >= 20, "found \(machines.keys.sorted())")
        for (name, state) in machines.sorted(by: { $0.key < $1.key }) {
            guard let state else {
                Issue.record("\(name) has no stored `state`")
                continue
            }
            #expect(Mirror(reflecting: state.value).displayStyle == .enum, "\(name).state is not an enum")
        }
    }

    /// And no machine escapes that count: every `…StateMachine` declared under `Rules/` is one
    /// the rules hold.
    @Test func everyMachineDeclaredIsOneTheRulesHold() throws {
        let rules = Paths.root.appendingPathComponent("Sources/Waymark/Rules")
        let files = try #require(FileManager.default.enumerator(at: rules, includingPropertiesForKeys: nil))
        var declared: Set<String> = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let i = words.firstIndex(of: "struct"), i + 1 < words.count else { continue }
                let name = words[i + 1].prefix { $0.isLetter || $0.isNumber }
                if name.hasSuffix("StateMachine") { declared.insert(String(name)) }
            }
        }
        #expect(declared.count >= 20)
        let held = Set(Self.machines().keys)
        #expect(
            declared.subtracting(held).isEmpty, "declared but not found in the rules: \(declared.subtracting(held))")
    }
}
