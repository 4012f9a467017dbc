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
    /// The sequence number of the pending entry of each key; an entry whose number is not here
    /// was cancelled or replaced.
    private var current: [TimerKey: UInt64] = [:]

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

    /// Schedules the system timer `key`, replacing a pending one.
    mutating func schedule(_ key: TimerKey, at time: Duration) {
        schedule(.system(key), at: time)
        current[key] = sequence
    }

    mutating func cancel(_ key: TimerKey) { current[key] = nil }

    /// The next entry that is still due to fire (cancelled ones are skipped).
    mutating func pop() -> Entry? {
        while let entry = popAny() {
            if case .system(let key) = entry.timer {
                guard current[key] == entry.order & 0x00FF_FFFF_FFFF_FFFF else { continue }
                current[key] = nil
            }
            return entry
        }
        return nil
    }

    /// When the next live entry fires.
    var nextTime: Duration? {
        mutating get {
            while let top = heap.first, case .system(let key) = top.timer,
                current[key] != top.order & 0x00FF_FFFF_FFFF_FFFF
            {
                _ = popAny()
            }
            return heap.first?.time
        }
    }

    private mutating func popAny() -> Entry? {
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
enum SimulationTimer {
    case action(Scenario.Action)
    case launch
    /// A system timer of the device; a later schedule or a cancel of the same key replaces it.
    case system(TimerKey)
    /// A closure the app scheduled (``Simulation/schedule(after:_:)``), for the launch it was
    /// scheduled in.
    case app(id: Int, launch: Int)
}
