#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LocationNDJSONWriter {
    /// A writer that formats and writes its lines on a thread of its own, as `render`'s writers
    /// read ahead: ``write(_:)`` and ``write(delivered:)`` only queue the location, in batches
    /// through a bounded queue (memory stays flat whatever the run's length), and ``finish()``
    /// waits for the thread, then throws the first write error, if any. The file gets the same
    /// bytes as from ``init(sink:)``.
    ///
    /// The sink belongs to the writer's thread until ``finish()`` (or ``waitForLines()``)
    /// returns: nothing else may touch it before then.
    public static func writingAhead(to sink: FileSink) throws -> LocationNDJSONWriter {
        guard let ahead = LineThread(sink: sink) else {
            throw OutputError(path: sink.path, message: "cannot start a thread to write; the system is out of threads")
        }
        return LocationNDJSONWriter(sink: sink, ahead: ahead)
    }

    /// Waits until every line queued so far is written (or writing has failed): the sink is the
    /// caller's again. A writer writing on its own thread stops taking lines; the others return
    /// at once.
    public func waitForLines() {
        ahead?.end()
    }
}

/// The thread of a ``LocationNDJSONWriter/writingAhead(to:)`` writer: the caller's side (the
/// batch it fills) and the thread, joined when the writer ends.
final class LineThread {
    /// A delivered location and what its line says of it.
    struct Line: Sendable {
        var fields: LocationNDJSONLine.Fields
        var index: Int
        var segment: Int
        var appState: AppState
        var reason: FixReason
    }

    static let batchSize = 1024
    static let depth = 4

    private let queue: LineQueue
    /// The batch being filled, by the writer's caller alone (every delivered fix appends to it):
    /// no dynamic exclusivity checks.
    @exclusivity(unchecked) private var pending: [Line] = []
    private var thread: ReaderThread?

    init?(sink: FileSink) {
        let queue = LineQueue(sink: sink)
        guard let thread = ReaderThread({ queue.run() }) else { return nil }
        self.queue = queue
        self.thread = thread
        pending.reserveCapacity(Self.batchSize)
    }

    deinit { end() }

    /// Queues a line.
    @inline(__always)
    func add(_ line: Line) {
        pending.append(line)
        if pending.count == Self.batchSize { send() }
    }

    private func send() {
        pending = queue.send(pending)
        pending.reserveCapacity(Self.batchSize)
    }

    /// Queues what is left, closes the queue and joins the thread (once).
    func end() {
        guard let thread else { return }
        self.thread = nil
        if !pending.isEmpty { send() }
        queue.close()
        thread.join()
    }

    /// The first write error; read after ``end()``.
    var failure: (any Error)? { queue.failure }
}

/// The bounded queue between a ``LineThread``'s caller and its thread, and the thread's work.
///
/// `@unchecked Sendable`: `queue`, `spare` and `closed` are guarded by `gate`; the sink, the
/// day cache and `failure` belong to the thread until it is joined, and are read only after.
final class LineQueue: @unchecked Sendable {
    private let sink: FileSink
    private let gate = ThreadGate()
    private var queue: [[LineThread.Line]] = []
    private var spare: [[LineThread.Line]] = []
    private var closed = false
    private(set) var failure: (any Error)?

    init(sink: FileSink) {
        self.sink = sink
    }

    /// Caller: queues a batch, waiting while the queue is full; returns an empty one.
    func send(_ batch: [LineThread.Line]) -> [LineThread.Line] {
        gate.locked {
            while queue.count >= LineThread.depth { gate.wait() }
            queue.append(batch)
            gate.broadcast()
            return spare.popLast() ?? []
        }
    }

    /// Caller: no more batches.
    func close() {
        gate.locked {
            closed = true
            gate.broadcast()
        }
    }

    /// The thread: formats and writes each batch, then hands it back emptied.
    func run() {
        var cache = ValueFormatting.DayCache()
        while let batch = receive() {
            if failure == nil {
                for i in batch.indices {
                    LocationNDJSONLine.append(
                        batch[i].fields, index: batch[i].index, segment: batch[i].segment,
                        appState: batch[i].appState, reason: batch[i].reason, to: sink.buffer, cache: &cache)
                    do {
                        try sink.flushIfNeeded()
                    } catch {
                        // As a writer on the caller's thread, it writes nothing after its first error.
                        failure = error
                        break
                    }
                }
            }
            var emptied = batch
            emptied.removeAll(keepingCapacity: true)
            gate.locked { if spare.count < LineThread.depth { spare.append(emptied) } }
        }
    }

    /// The thread: the next batch, or nil once the queue is closed and empty.
    private func receive() -> [LineThread.Line]? {
        gate.locked {
            while queue.isEmpty && !closed { gate.wait() }
            if queue.isEmpty { return nil }
            let batch = queue.removeFirst()
            gate.broadcast()
            return batch
        }
    }
}
