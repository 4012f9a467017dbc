import Dispatch
import Foundation
import Testing

@testable import Waymark

/// The registry of devices alive, under devices made and ended on several threads at once: a
/// device whose last reference another thread drops while the registry reads it must not end
/// under the registry's lock (its deinit takes the lock again; a test run once hung there).
@Suite struct DeviceRegistryTests {
    @Test(.timeLimit(.minutes(2)))
    func devicesMadeAndEndedOnManyThreadsNeverDeadlock() {
        let rounds = 3_000
        let done = Counter()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<rounds {
                // Two alive at once on this thread, ended in turn, while the other threads' adds,
                // removes and lookups read them.
                let first = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: Double(i)))
                var second: Simulation? = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 0))
                _ = Simulation.current
                second = nil
                _ = first.withDevice { Simulation.current }
                _ = second
                if worker == 0 && i % 500 == 0 { _ = Simulation.current }
            }
            done.add()
        }
        #expect(done.value == 4)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}
