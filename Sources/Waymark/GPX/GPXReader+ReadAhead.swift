#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension GPXReader {
    /// Reads the whole document on a second thread while `handle` takes the events on the
    /// calling thread, in document order: parsing and whatever `handle` does (writing GeoJSON,
    /// say) run side by side on two cores.
    ///
    /// It behaves as ``read(_:)`` does: the same events, then the same error, if any, after the
    /// events that precede it. If `handle` throws, reading stops and that error is thrown.
    /// At most `batches` batches of `batchSize` events are in flight, so memory stays bounded.
    /// If no thread can be started, it reads on the calling thread.
    public func readAhead(batchSize: Int = 512, batches: Int = 4, _ handle: (GPXEvent) throws -> Void) throws {
        let pipe = EventPipe(depth: max(1, batches), batchSize: max(1, batchSize))
        let started = ReaderThread { [self] in
            var batch = pipe.emptyBatch()
            do {
                try read { event in
                    batch.append(event)
                    if batch.count == pipe.batchSize {
                        guard pipe.send(batch) else { throw EventPipe.Cancelled() }
                        batch = pipe.emptyBatch()
                    }
                }
                if !batch.isEmpty { _ = pipe.send(batch) }
                pipe.finish(nil)
            } catch is EventPipe.Cancelled {
                pipe.finish(nil)
            } catch {
                if !batch.isEmpty { _ = pipe.send(batch) }
                pipe.finish(error)
            }
        }
        guard let thread = started else {
            try withoutActuallyEscaping(handle) { try read($0) }
            return
        }
        defer { thread.join() }
        do {
            while case .batch(var events) = pipe.receive() {
                // Borrowed in place: an event is not copied on its way to `handle`.
                try events.withUnsafeBufferPointer { buffer in
                    for i in buffer.indices { try handle(buffer[i]) }
                }
                events.removeAll(keepingCapacity: true)
                pipe.recycle(events)
            }
        } catch {
            pipe.cancel()
            throw error
        }
        if let error = pipe.failure { throw error }
    }
}

/// A bounded queue of event batches from one producer thread to one consumer thread.
///
/// `@unchecked Sendable`: every mutable field is guarded by `mutex`.
final class EventPipe: @unchecked Sendable {
    struct Cancelled: Error {}

    enum Item {
        case batch([GPXEvent])
        case end
    }

    let batchSize: Int
    private let depth: Int
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    private var queue: [[GPXEvent]] = []
    private var spare: [[GPXEvent]] = []
    private var finished = false
    private var cancelled = false
    private var error: (any Error)?

    init(depth: Int, batchSize: Int) {
        self.depth = depth
        self.batchSize = batchSize
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// An empty batch with room for `batchSize` events, reused when one has come back.
    func emptyBatch() -> [GPXEvent] {
        if let batch = locked({ spare.popLast() }) { return batch }
        var batch: [GPXEvent] = []
        batch.reserveCapacity(batchSize)
        return batch
    }

    /// Producer: queues a batch, waiting while the queue is full. False once cancelled.
    func send(_ batch: [GPXEvent]) -> Bool {
        locked {
            while queue.count >= depth && !cancelled { pthread_cond_wait(&changed, &mutex) }
            guard !cancelled else { return false }
            queue.append(batch)
            pthread_cond_broadcast(&changed)
            return true
        }
    }

    /// Producer: no more batches; `error` is what stopped reading, if anything.
    func finish(_ error: (any Error)?) {
        locked {
            finished = true
            self.error = error
            pthread_cond_broadcast(&changed)
        }
    }

    /// Consumer: the next batch, or `.end` once the producer has finished and all are taken.
    func receive() -> Item {
        locked {
            while queue.isEmpty && !finished { pthread_cond_wait(&changed, &mutex) }
            if queue.isEmpty { return .end }
            let batch = queue.removeFirst()
            pthread_cond_broadcast(&changed)
            return .batch(batch)
        }
    }

    /// Consumer: hands an emptied batch back for reuse.
    func recycle(_ batch: [GPXEvent]) {
        locked { if spare.count < depth { spare.append(batch) } }
    }

    /// Consumer: stop the producer at its next batch.
    func cancel() {
        locked {
            cancelled = true
            queue.removeAll()
            pthread_cond_broadcast(&changed)
        }
    }

    /// What stopped the producer, once `.end` has been received.
    var failure: (any Error)? { locked { error } }
}

/// A POSIX thread that runs one closure, joined explicitly.
///
/// `@unchecked Sendable`: `thread` is written once, before the handle is shared.
final class ReaderThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var joined = false

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread (`pthread_create`); nil if the system refuses one.
    init?(_ body: @escaping () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
    }

    /// Waits for the thread to end (`pthread_join`).
    func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}
