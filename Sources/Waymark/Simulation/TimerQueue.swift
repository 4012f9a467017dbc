/// The simulation's pending actions and timers, in the order they fire.
///
/// Entries fire by time; at equal times scripted actions come before system timers, and within
/// each class they fire in the order they were scheduled. Fixes from the source come after both
/// (the ``Simulation`` handles that), so a scripted `background` at 90 s applies to a fix at 90 s.
struct TimerQueue {
    enum Class: UInt8 {
        case action = 0
        case timer = 1
    }

    struct Entry {
        var time: Duration
        var order: UInt64  // class in the top byte, then the scheduling sequence
        var timer: SimulationTimer

        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    private var heap: [Entry] = []
    private var sequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var nextTime: Duration? { heap.first?.time }

    mutating func schedule(_ timer: SimulationTimer, at time: Duration, class cls: Class = .timer) {
        sequence += 1
        var child = heap.count
        heap.append(Entry(time: time, order: UInt64(cls.rawValue) << 56 | sequence, timer: timer))
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var best = left
            if left + 1 < heap.count && heap[left + 1].precedes(heap[left]) { best = left + 1 }
            guard heap[best].precedes(heap[parent]) else { break }
            heap.swapAt(best, parent)
            parent = best
        }
        return top
    }
}

/// Something scheduled on the simulation's timeline.
///
/// Timers that can be cancelled carry the generation of their kind when they were set; a timer
/// whose generation is stale when it comes due does nothing.
enum SimulationTimer {
    case action(Scenario.Action)
    case launch
    case graceEnd(generation: Int)
    case taskWarning(generation: Int)
    case taskDeadline(generation: Int)
    case fetchWake(generation: Int)
    case fetchDone(generation: Int)
    case fetchDeadline(generation: Int)
    case answer(AuthorizationStateMachine.Prompt, generation: Int)
}
