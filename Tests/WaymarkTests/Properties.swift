import Foundation
import Testing

/// Property checks: a property runs over generated inputs and, when one fails, its input is made
/// as small as the check still fails on, and reported with the seed that replays it.
///
/// Why not x-sheep/swift-property-based: its `Gen+Color.swift` compiles UIColor code under
/// `#if canImport(UIKit)`, and in this package's build that is true, because Waymark's own
/// `UIKit` product (the Apple-spelled module an iOS source file imports) is beside it; it then
/// fails to build. docs/porting.md says what that means for an app's own dependencies.
///
/// Runs are reproducible: the seed is fixed per property unless `WAYMARK_PROPERTY_SEED` gives
/// one, and `WAYMARK_PROPERTY_COUNT` multiplies the number of cases (explore with 100).
struct Property<Input>: Sendable {
    var name: String
    var count = 100
    var generate: @Sendable (inout PropertyRandom) -> Input
    var shrink: @Sendable (Input) -> [Input] = { _ in [] }
    var describe: @Sendable (Input) -> String = { "\($0)" }

    /// Checks `check` on every generated input; `check` returns what is wrong (empty: nothing).
    func check(sourceLocation: SourceLocation = #_sourceLocation, _ check: (Input) -> [String]) {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["WAYMARK_PROPERTY_SEED"].flatMap { UInt64($0) }
            ?? name.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        let scale = environment["WAYMARK_PROPERTY_COUNT"].flatMap { Int($0) } ?? 1
        for i in 0..<(count * max(1, scale)) {
            let seed = base &+ UInt64(i) &* 0x9e37_79b9_7f4a_7c15
            var random = PropertyRandom(seed: seed)
            let input = generate(&random)
            var problems = check(input)
            guard !problems.isEmpty else { continue }
            // Shrink: take the first smaller input that still fails, until none does.
            var smallest = input
            var steps = 0
            shrinking: while steps < 500 {
                for candidate in shrink(smallest) {
                    steps += 1
                    let found = check(candidate)
                    if !found.isEmpty {
                        smallest = candidate
                        problems = found
                        continue shrinking
                    }
                }
                break
            }
            Issue.record(
                """
                \(name): case \(i) (WAYMARK_PROPERTY_SEED=\(base) replays it) fails; shrunk in \(steps) step(s) to
                \(describe(smallest))
                \(problems.prefix(5).joined(separator: "\n"))
                """, sourceLocation: sourceLocation)
            return
        }
    }
}

/// SplitMix64: small, fast and the same everywhere.
struct PropertyRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func bool(_ chance: Double = 0.5) -> Bool { Double.random(in: 0..<1, using: &self) < chance }
    mutating func pick<T>(_ choices: [T]) -> T { choices[int(0...choices.count - 1)] }
    mutating func array<T>(_ count: ClosedRange<Int>, _ element: (inout PropertyRandom) -> T) -> [T] {
        (0..<int(count)).map { _ in element(&self) }
    }
}

/// Smaller arrays: halves, then each element left out (first elements kept, so a failure that
/// needs a prefix keeps it).
func shrinkArray<T>(_ array: [T], minimum: Int = 1) -> [[T]] {
    guard array.count > minimum else { return [] }
    var candidates: [[T]] = []
    if array.count / 2 >= minimum {
        candidates.append(Array(array.prefix(array.count / 2)))
        candidates.append(Array(array.suffix(array.count - array.count / 2)))
    }
    for i in array.indices.reversed() {
        var smaller = array
        smaller.remove(at: i)
        candidates.append(smaller)
    }
    return candidates
}

/// What a property's check found wrong, line by line.
struct Problems {
    var list: [String] = []
    mutating func expect(_ ok: Bool, _ what: @autoclosure () -> String = "", line: Int = #line) {
        if !ok { list.append("line \(line): \(what())") }
    }
}
