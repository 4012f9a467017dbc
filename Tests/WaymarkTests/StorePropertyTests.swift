import Foundation
import Testing

@testable import Waymark
@testable import WaymarkStore

/// The session store over generated runs: sessions are isolated. Each session's locations and
/// audit lines, read back, are what its run recorded, whatever the other sessions hold (fixes with
/// and without speed, course, altitude and accuracy; runs of different lengths; batched and
/// durable writes), and deleting any of them leaves every other exactly as it was.
@Suite struct StorePropertyTests {
    struct Plan: Sendable, CustomStringConvertible {
        /// Per session: its generated run, whether it is written durably, and its fixes'
        /// optional fields, as a mask per fix.
        var sessions: [(run: DevicePropertyTests.Run, durable: Bool, masks: [Int])]
        /// Which sessions are deleted, in order.
        var deletions: [Int]
        var description: String {
            sessions.enumerated().map { "session \($0): \($1.run.fixes) fixes, durable \($1.durable)" }
                .joined(separator: "; ") + "; delete \(deletions)"
        }
    }

    static let plans = Property<Plan>(
        name: "store", count: 12,
        generate: { r in
            let sessions = r.array(2...4) { r in
                var run = DevicePropertyTests.generate(&r)
                run.fixes = r.int(1...60)
                return (run, r.bool(), r.array(60...60) { $0.int(0...15) })
            }
            return Plan(sessions: sessions, deletions: r.array(1...2) { $0.int(0...sessions.count - 1) })
        },
        shrink: { plan in
            shrinkArray(plan.sessions, minimum: 2).map { Plan(sessions: $0, deletions: plan.deletions.map { $0 % 2 }) }
        })

    /// Plays `run` into a new session of `store` and returns its id.
    static func record(_ run: DevicePropertyTests.Run, masks: [Int], durable: Bool, into store: SessionStore) throws
        -> Int64
    {
        let epoch = Date(timeIntervalSince1970: 1_714_550_400)
        let recorder = try store.beginSession(
            NewSession(
                kind: .replay, source: "generated.gpx", settings: "{}", scenario: nil, createdAt: epoch, epoch: epoch),
            mode: durable ? .durable : .batched(16))
        let simulation = Simulation(scenario: run.scenario, epoch: epoch)
        simulation.addObserver(recorder)
        simulation.start(source: "generated.gpx")
        for i in 0..<run.fixes {
            let mask = masks[i % masks.count]
            let d = Double(i) * run.step / 111_320
            let location = Location(
                coordinate: Coordinate(latitude: 51.5 + d, longitude: 0.12 + d),
                altitude: mask & 1 != 0 ? 40 + Double(i) : 0, horizontalAccuracy: 5 + Double(i % 7),
                verticalAccuracy: mask & 2 != 0 ? 8 : -1, speed: mask & 4 != 0 ? 1.4 : -1,
                course: mask & 8 != 0 ? Double(i * 7 % 360) : -1, timestamp: epoch.addingTimeInterval(Double(i) * 5),
                provenance: Provenance(
                    source: .file(path: "generated.gpx", index: i), isSimulatedBySoftware: false, fixMode: .threeD))
            simulation.receive(SourceEvent(offset: .seconds(i * 5), kind: .fix(location), index: i, segment: 0))
        }
        simulation.advance(to: .seconds(660))
        _ = simulation.finish(at: .seconds(660))
        try recorder.finish(outcome: .completed, duration: .seconds(660), endedAt: epoch.addingTimeInterval(660))
        return recorder.id
    }

    /// A session as it reads back: its locations and its audit lines.
    static func contents(_ id: Int64, in store: SessionStore) throws -> (locations: [StoredLocation], lines: [String]) {
        var lines: [String] = []
        try store.forEachEventLine(of: id) { lines.append($0) }
        return (try store.locations(of: id), lines)
    }

    @Test func sessionsAreIsolatedAndDeletingOneLeavesTheOthers() {
        Self.plans.check { plan in
            var problems = Problems()
            do {
                // Each session alone in a store of its own: what it must read back as.
                var alone: [(locations: [StoredLocation], lines: [String])] = []
                for session in plan.sessions {
                    let store = try SessionStore(path: StoreTests.newStorePath())
                    let id = try Self.record(session.run, masks: session.masks, durable: session.durable, into: store)
                    alone.append(try Self.contents(id, in: store))
                }
                // All of them in one store.
                let store = try SessionStore(path: StoreTests.newStorePath())
                var ids: [Int64] = []
                for session in plan.sessions {
                    ids.append(
                        try Self.record(session.run, masks: session.masks, durable: session.durable, into: store))
                }
                var deleted = Set<Int>()
                for step in [nil] + plan.deletions.map(Optional.some) {
                    if let index = step {
                        let removed = try store.deleteSession(ids[index])
                        problems.expect(removed == !deleted.contains(index), "deleting session \(index) again")
                        deleted.insert(index)
                    }
                    for (index, id) in ids.enumerated() where !deleted.contains(index) {
                        let shared = try Self.contents(id, in: store)
                        problems.expect(
                            shared.locations == alone[index].locations,
                            "session \(index)'s locations differ beside the others (after deleting \(deleted.sorted()))"
                        )
                        problems.expect(
                            shared.lines == alone[index].lines,
                            "session \(index)'s audit lines differ beside the others (after deleting \(deleted.sorted()))"
                        )
                    }
                    problems.expect(
                        try Set(store.sessions().map(\.id))
                            == Set(ids.enumerated().filter { !deleted.contains($0.offset) }.map(\.element)),
                        "the sessions listed")
                }
                problems.expect(try store.integrityCheck() == ["ok"], "the store's integrity check")
            } catch {
                problems.expect(false, "\(error)")
            }
            return problems.list
        }
    }
}
