#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One play of a file, read and laid out off the replay's thread: a ``ReplayPass`` (which reads
/// on a thread of its own) feeds a ``ReplayTimeline`` on a second thread, and the fixes come
/// over in batches through a bounded ``HandOff``.
///
/// The replay's thread then only takes fixes that are ready: the timeline's work (a point's
/// ``Location``, resampling, speed and course by central differences) runs beside the device
/// instead of before each fix. The fixes, their order, the points counted as dropped and the
/// error that ends a play are those of the timeline run in place; the count of dropped points
/// comes with each fix, as the timeline had it when it made that fix, and the look-ahead's
/// high-water mark with the end of the play.
///
/// At most ``depth`` batches of ``batchSize`` fixes wait, so memory stays bounded whatever the
/// trace's length. Releasing the pass stops the laying out at its next batch (or within a few
/// thousand points or fixes that send nothing: before the start offset, or going back in time)
/// and joins its thread.
final class LaidOutPass {
    static let batchSize = 1024
    static let depth = 4

    /// A fix, with the timeline's count of dropped points when it was made.
    struct Laid: Sendable {
        /// Taken out by the replay (nil after): the fix, and its location, then have one owner,
        /// and the batch goes back to the laying-out thread holding no reference to them, which
        /// that thread would count down while the replay's thread counts them up.
        var fix: ReplayTimeline.Fix?
        var dropped: Int
    }

    /// The timeline's counts at the end of the play: written by the laying-out thread before it
    /// finishes, read once it has been joined.
    ///
    /// `@unchecked Sendable`: the thread's join orders the writes before the reads.
    private final class Totals: @unchecked Sendable {
        var dropped = 0
        var highWater = 0
    }

    private let queue: HandOff<Laid>
    private let thread: ReaderThread
    private let totals: Totals
    // Read for every fix, by the replay's thread alone: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var batch: [Laid] = []
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var ended = false
    /// Points dropped because their time went backwards, as of the last fix taken (at the end:
    /// in the whole play).
    @exclusivity(unchecked) private(set) var droppedPoints = 0
    /// The most fixes the timeline's windows have held at once in the play: 0 until the play
    /// has ended.
    @exclusivity(unchecked) private(set) var highWater = 0

    /// Starts reading with `reader` the points that `plays` names (`firstIndex` is the file index
    /// of the first of them), and laying them out with `timeline`.
    ///
    /// - Throws: ``GPXError`` (``GPXError/Code/io``) when no thread can be started.
    init(reader: any TraceEventReader, plays: ReplayCensus.Plays, firstIndex: Int, timeline: ReplayTimeline) throws {
        let queue = HandOff<Laid>(depth: Self.depth)
        let totals = Totals()
        guard
            let thread = ReaderThread({
                Self.lay(
                    reader, plays: plays, firstIndex: firstIndex, timeline: timeline, into: queue, totals: totals)
            })
        else {
            throw GPXError(
                code: .io, file: reader.fileName, line: 0, column: 0,
                message: "cannot start a thread to read the file; the system is out of threads")
        }
        self.queue = queue
        self.thread = thread
        self.totals = totals
    }

    deinit {
        queue.cancel()
        thread.join()
    }

    /// The next fix; nil when the play has ended.
    ///
    /// - Throws: what the reader or the timeline threw, after the fixes made before it.
    func next() throws -> ReplaySchedule.Fix? {
        if position == batch.count {
            guard try refill() else { return nil }
        }
        position += 1
        droppedPoints = batch[position - 1].dropped
        // Boxed here, on the replay's thread, which frees the box (see `Location(fields:)`).
        return batch[position - 1].fix.take()?.boxed()
    }

    /// Takes the next batch; false when the play has ended. Out of line, so that the fix's
    /// path does not begin the accesses to the queue and the thread (the optimizer began them
    /// on every call).
    @inline(never)
    private func refill() throws -> Bool {
        while position == batch.count {
            if ended { return false }
            if !batch.isEmpty { queue.recycle(&batch) }
            position = 0
            switch queue.receive() {
            case .batch(let next):
                batch = next
            case .end(let error):
                ended = true
                thread.join()
                droppedPoints = totals.dropped
                highWater = totals.highWater
                if let error { throw error }
            }
        }
        return true
    }

    /// The laying-out thread: the pass and the timeline, to the end of the play, an error, or
    /// until the replay lets go.
    private static func lay(
        _ reader: any TraceEventReader, plays: ReplayCensus.Plays, firstIndex: Int, timeline: ReplayTimeline,
        into queue: HandOff<Laid>, totals: Totals
    ) {
        var timeline = timeline
        var batch = queue.emptyBatch(capacity: batchSize)
        // The play's counts, then its end: the consumer reads them once it has joined the thread.
        func end(_ error: (any Error)?) {
            totals.dropped = timeline.droppedPoints
            totals.highWater = timeline.highWater
            queue.finish(error)
        }
        do {
            let pass = try ReplayPass(reader: reader, plays: plays, firstIndex: firstIndex)
            // Points that make no fix (before the start offset, or going back in time) and fixes
            // left out before the start offset send nothing: look up now and then.
            let stopIfReleased = { () throws -> Void in
                if queue.isCancelled { throw HandOff<Laid>.Cancelled() }
            }
            var pulled = 0
            let input = { () throws -> ReplayInput? in
                pulled &+= 1
                if pulled & 4095 == 0 { try stopIfReleased() }
                return try pass.next()
            }
            while let fix = try timeline.next(from: input, skipping: stopIfReleased) {
                batch.append(Laid(fix: consume fix, dropped: timeline.droppedPoints))
                if batch.count == batchSize {
                    guard queue.send(&batch) else { return }
                }
            }
            if !batch.isEmpty { guard queue.send(&batch) else { return } }
            end(nil)
        } catch is HandOff<Laid>.Cancelled {
            return
        } catch {
            if !batch.isEmpty { guard queue.send(&batch) else { return } }
            end(error)
        }
    }
}

/// A bounded queue of batches from one producing thread to one consuming thread. Batches go
/// back to the producer once read, and are emptied there, so their elements are destroyed on
/// the producer's thread.
///
/// `@unchecked Sendable`: every stored property but `depth` and `gate` (constants) is read and
/// written inside `gate.locked`.
final class HandOff<Element: Sendable>: @unchecked Sendable {
    struct Cancelled: Error {}

    enum Item {
        case batch([Element])
        /// The producer is done: why, if it failed.
        case end(error: (any Error)?)
    }

    private let depth: Int
    private let gate = ThreadGate()
    private var queue: [[Element]] = []
    private var spare: [[Element]] = []
    private var end: Item?
    private var cancelled = false

    init(depth: Int) {
        self.depth = depth
    }

    /// Producer: an empty batch, one handed back if there is one (emptied here).
    func emptyBatch(capacity: Int) -> [Element] {
        guard var reused = gate.locked({ spare.popLast() }) else {
            var fresh: [Element] = []
            fresh.reserveCapacity(capacity)
            return fresh
        }
        reused.removeAll(keepingCapacity: true)
        return reused
    }

    /// Producer: queues `batch`, waiting while the queue is full, and leaves an empty batch in
    /// its place. False once the consumer has let go.
    func send(_ batch: inout [Element]) -> Bool {
        let capacity = batch.capacity
        let sent = gate.locked {
            while queue.count >= depth && !cancelled { gate.wait() }
            guard !cancelled else { return false }
            queue.append(batch)
            // Let go of it before the consumer can take it: a batch it holds alone it changes in
            // place (taking its fixes out), one still held here it would copy whole.
            batch = []
            gate.broadcast()
            return true
        }
        guard sent else { return false }
        batch = emptyBatch(capacity: capacity)
        return true
    }

    /// Producer: no more batches.
    func finish(_ error: (any Error)?) {
        gate.locked {
            end = .end(error: error)
            gate.broadcast()
        }
    }

    /// Consumer: the next batch, or the end once the producer has finished and all are taken.
    func receive() -> Item {
        gate.locked {
            while queue.isEmpty && end == nil { gate.wait() }
            if queue.isEmpty { return end! }
            let batch = queue.removeFirst()
            gate.broadcast()
            return .batch(batch)
        }
    }

    /// Consumer: hands a batch it has read back to the producer, leaving `batch` empty.
    func recycle(_ batch: inout [Element]) {
        gate.locked {
            guard spare.count < depth else { return }
            spare.append(batch)
            batch = []  // before the producer can take it: the spare's buffer is its alone
        }
        // A batch not kept is destroyed here (rare: only when more are out than the queue holds).
        batch = []
    }

    /// Consumer: stop the producer at its next batch.
    func cancel() {
        gate.locked {
            cancelled = true
            queue.removeAll()
            gate.broadcast()
        }
    }

    /// Whether the consumer has let go.
    var isCancelled: Bool { gate.locked { cancelled } }
}
