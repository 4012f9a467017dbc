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
    public func readAhead(
        batchSize: Int = 512, batches: Int = 4, _ handle: (consuming GPXEvent) throws -> Void
    ) throws {
        try readEventsAhead(batchSize: batchSize, batches: batches, handle)
    }

    /// ``readAhead(batchSize:batches:_:)``, lending each route and track point where it lies in
    /// its batch (`points`, with whether it is a route point) and handing the other events to
    /// `others`: a writer that only reads the points copies none of them (copies of each point
    /// were a third of GeoJSON's writing time on a layout of bare points).
    func readAhead(
        batchSize: Int = 512, batches: Int = 4,
        points: (UnsafePointer<GPXPoint>, _ isRoute: Bool) throws -> Void,
        others: (consuming GPXEvent) throws -> Void
    ) throws {
        try readEventsAhead(batchSize: batchSize, batches: batches, points: points, others: others)
    }
}

extension TraceEventReader {
    /// Reads the whole trace on a second thread while `handle` takes the events on the calling
    /// thread, in order, as ``GPXReader/readAhead(batchSize:batches:_:)`` does for GPX (which it
    /// calls for a ``GPXReader``): the same events and errors as ``readEvents(_:)``.
    public func readEventsAhead(
        batchSize: Int = 512, batches: Int = 4, _ handle: (consuming GPXEvent) throws -> Void
    ) throws {
        try readEventsAhead(
            batchSize: batchSize, batches: batches,
            points: { point, isRoute in
                try handle(isRoute ? .routePoint(point.pointee) : .trackPoint(point.pointee))
            }, others: { event in try handle(event) })
    }

    /// ``readEventsAhead(batchSize:batches:_:)``, lending each point where it lies in its batch.
    func readEventsAhead(
        batchSize: Int = 512, batches: Int = 4,
        points: (UnsafePointer<GPXPoint>, _ isRoute: Bool) throws -> Void,
        others: (consuming GPXEvent) throws -> Void
    ) throws {
        let pipe = EventPipe(depth: max(1, batches), batchSize: max(1, batchSize))
        // GPX's scanner, and NMEA's merger, put each track point straight into its batch's slot.
        let gpx = self as? GPXReader
        let nmea = self as? NMEAReader
        let started = ReaderThread { [self] in
            let sender = EventSender(pipe)
            gpx?.pointSink = sender
            nmea?.pointSink = sender
            defer {
                gpx?.pointSink = nil
                nmea?.pointSink = nil
            }
            do {
                try readEvents { try sender.send($0) }
                sender.flush()
                pipe.finish(nil)
            } catch is EventPipe.Cancelled {
                pipe.finish(nil)
            } catch {
                sender.flush()
                pipe.finish(error)
            }
        }
        guard let thread = started else {
            try readEvents { event in
                switch consume event {
                case .trackPoint(var p): try points(&p, false)
                case .routePoint(var p): try points(&p, true)
                case let other: try others(other)
                }
            }
            return
        }
        defer { thread.join() }
        do {
            while case .batch(let events) = pipe.receive() {
                try events.lend(points: points, others: others)
                pipe.recycle(events)
            }
        } catch {
            pipe.cancel()
            throw error
        }
        if let error = pipe.failure { throw error }
    }
}

/// The producer's end of an ``EventPipe``: fills a batch, and sends it when it is full.
final class EventSender {
    private let pipe: EventPipe
    // One thread uses the sender; the per-event path skips dynamic exclusivity checks.
    @exclusivity(unchecked) private var batch: EventBatch

    init(_ pipe: EventPipe) {
        self.pipe = pipe
        batch = pipe.emptyBatch()
    }

    /// Adds `event`; throws ``EventPipe/Cancelled`` once the consumer has stopped.
    @inline(__always)
    func send(_ event: consuming GPXEvent) throws {
        batch.append(event)
        if batch.isFull {
            guard pipe.send(batch) else { throw EventPipe.Cancelled() }
            batch = pipe.emptyBatch()
        }
    }

    /// The slot the next track point goes to (the batch is never full between events): the
    /// reader initialises it, then commits it or deinitialises it.
    @inline(__always)
    func pointSlot() -> UnsafeMutablePointer<GPXPoint> { batch.pointSlot() }

    /// Adds the track point the reader put in ``pointSlot()``.
    @inline(__always)
    func commitPoint() throws {
        batch.commitPoint()
        if batch.isFull {
            guard pipe.send(batch) else { throw EventPipe.Cancelled() }
            batch = pipe.emptyBatch()
        }
    }

    /// Sends what is left.
    func flush() {
        if !batch.isEmpty { _ = pipe.send(batch) }
    }
}

/// A fixed-capacity run of events, with the route and track points kept apart from the others
/// so that a consumer can read them where they lie.
///
/// The consumer reads each point in place and gets a copy of each other event; the batch keeps
/// the originals, which the producer destroys when it reuses the batch: what the reader
/// allocated for a point (the box of its less common fields) is then freed on the reader's
/// thread, where the allocator takes it back without a lock. Freed on the consumer's thread,
/// each would go back to the reader's arena under its lock, which the reader takes for every
/// allocation: the two threads then wait for each other, and reading ahead gains nothing
/// (measured on gpxlogger's layout).
///
/// `@unchecked Sendable`: a batch belongs to one thread at a time; ``EventPipe`` hands it over
/// under its gate.
final class EventBatch: @unchecked Sendable {
    /// For each event in order: 0 for one in `events`, 1 for a track point, 2 for a route point
    /// (both in `points`).
    private let kinds: UnsafeMutablePointer<UInt8>
    private let events: UnsafeMutablePointer<GPXEvent>
    private let points: UnsafeMutablePointer<GPXPoint>
    private let capacity: Int
    // Read for every event, by one thread at a time (the pipe's lock orders the hand-overs):
    // no dynamic exclusivity checks.
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var eventCount = 0
    @exclusivity(unchecked) private var pointCount = 0

    init(capacity: Int) {
        self.capacity = capacity
        kinds = .allocate(capacity: capacity)
        events = .allocate(capacity: capacity)
        points = .allocate(capacity: capacity)
    }

    deinit {
        reset()
        kinds.deallocate()
        events.deallocate()
        points.deallocate()
    }

    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count == capacity }

    /// Moves `event` in; the batch must not be full.
    @inline(__always)
    func append(_ event: consuming GPXEvent) {
        precondition(count < capacity, "EventBatch overflow")
        switch consume event {
        case .trackPoint(let p):
            (points + pointCount).initialize(to: p)
            pointCount += 1
            kinds[count] = 1
        case .routePoint(let p):
            (points + pointCount).initialize(to: p)
            pointCount += 1
            kinds[count] = 2
        case let other:
            (events + eventCount).initialize(to: other)
            eventCount += 1
            kinds[count] = 0
        }
        count += 1
    }

    /// Where the next point goes; the batch must not be full.
    @inline(__always)
    func pointSlot() -> UnsafeMutablePointer<GPXPoint> {
        precondition(count < capacity, "EventBatch overflow")
        return points + pointCount
    }

    /// Takes the track point initialised in ``pointSlot()`` as the next event.
    @inline(__always)
    func commitPoint() {
        kinds[count] = 1
        pointCount += 1
        count += 1
    }

    /// Lends each point in place to `points` and hands a copy of each other event to `others`,
    /// in order, keeping the originals until ``reset()``.
    @inline(__always)
    func lend(
        points handlePoint: (UnsafePointer<GPXPoint>, _ isRoute: Bool) throws -> Void,
        others: (consuming GPXEvent) throws -> Void
    ) rethrows {
        var e = 0
        var p = 0
        for i in 0..<count {
            let kind = kinds[i]
            if kind == 0 {
                try others(events[e])
                e += 1
            } else {
                try handlePoint(points + p, kind == 2)
                p += 1
            }
        }
    }

    /// Where event `i` lies, for a consumer that reads the events in order where they are:
    /// ``kind(_:)`` says which array holds it (0 the events, 1 and 2 the points, track or route),
    /// and the events and points are each counted from 0 in order.
    @inline(__always)
    func kind(_ i: Int) -> UInt8 { kinds[i] }

    /// The `n`-th point of the batch, in place (valid until ``reset()``).
    @inline(__always)
    func point(_ n: Int) -> UnsafePointer<GPXPoint> { UnsafePointer(points + n) }

    /// The `n`-th event that is not a point, in place (valid until ``reset()``).
    @inline(__always)
    func event(_ n: Int) -> UnsafePointer<GPXEvent> { UnsafePointer(events + n) }

    /// Hands a copy of each event to `handle`, in order, keeping the originals until ``reset()``.
    @inline(__always)
    func lend(_ handle: (consuming GPXEvent) throws -> Void) rethrows {
        try lend(
            points: { point, isRoute in try handle(isRoute ? .routePoint(point.pointee) : .trackPoint(point.pointee)) },
            others: handle)
    }

    /// Destroys the events, leaving the batch empty.
    func reset() {
        events.deinitialize(count: eventCount)
        points.deinitialize(count: pointCount)
        count = 0
        eventCount = 0
        pointCount = 0
    }
}

/// A bounded queue of event batches from one producer thread to one consumer thread.
///
/// `@unchecked Sendable`: every mutable field is read and written inside `gate.locked`.
final class EventPipe: @unchecked Sendable {
    struct Cancelled: Error {}

    enum Item {
        case batch(EventBatch)
        case end
    }

    let batchSize: Int
    private let depth: Int
    private let gate = ThreadGate()
    private var queue: [EventBatch] = []
    private var spare: [EventBatch] = []
    private var finished = false
    private var cancelled = false
    private var error: (any Error)?

    init(depth: Int, batchSize: Int) {
        self.depth = depth
        self.batchSize = batchSize
    }

    /// Producer: an empty batch with room for `batchSize` events, reused when one has come
    /// back (its old events are destroyed here, on the producer's thread).
    func emptyBatch() -> EventBatch {
        guard let reused = gate.locked({ spare.popLast() }) else { return EventBatch(capacity: batchSize) }
        reused.reset()
        return reused
    }

    /// Producer: queues a batch, waiting while the queue is full. False once cancelled.
    func send(_ batch: EventBatch) -> Bool {
        gate.locked {
            while queue.count >= depth && !cancelled { gate.wait() }
            guard !cancelled else { return false }
            queue.append(batch)
            gate.broadcast()
            return true
        }
    }

    /// Producer: no more batches; `error` is what stopped reading, if anything.
    func finish(_ error: (any Error)?) {
        gate.locked {
            finished = true
            self.error = error
            gate.broadcast()
        }
    }

    /// Consumer: the next batch, or `.end` once the producer has finished and all are taken.
    func receive() -> Item {
        gate.locked {
            while queue.isEmpty && !finished { gate.wait() }
            if queue.isEmpty { return .end }
            let batch = queue.removeFirst()
            gate.broadcast()
            return .batch(batch)
        }
    }

    /// Consumer: hands a batch it has finished with back for reuse.
    func recycle(_ batch: EventBatch) {
        gate.locked { if spare.count < depth { spare.append(batch) } }
    }

    /// Consumer: stop the producer at its next batch.
    func cancel() {
        gate.locked {
            cancelled = true
            queue.removeAll()
            gate.broadcast()
        }
    }

    /// Whether the consumer has stopped: a producer that sends seldom (it skips most events)
    /// checks it now and then, so that it does not read on to the end of the input for nothing.
    var isCancelled: Bool { gate.locked { cancelled } }

    /// What stopped the producer, once `.end` has been received.
    var failure: (any Error)? { gate.locked { error } }
}

/// A POSIX thread that runs one closure, joined explicitly.
///
/// `@unchecked Sendable`: `thread` is written once, before the handle is shared.
final class ReaderThread: @unchecked Sendable {
    #if canImport(Darwin)
        private var thread: pthread_t?  // Darwin's pthread_t is a pointer
    #else
        private var thread = pthread_t()
    #endif
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
                let context: UnsafeMutableRawPointer? = raw  // optional on Linux, not on Darwin
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
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
        #if canImport(Darwin)
            if let thread { pthread_join(thread, nil) }
        #else
            pthread_join(thread, nil)
        #endif
    }
}

/// A mutex and one condition variable: what each hand-off between two threads (the reader's
/// pipe, the laid-out fixes, the output lines) locks its state with and waits on.
///
/// `@unchecked Sendable`: it is the lock; its two fields are only handed to pthreads.
final class ThreadGate: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    /// `body`, with the mutex held.
    func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// Inside ``locked(_:)``: lets go of the mutex until ``broadcast()`` (or a spurious wake-up:
    /// wait in a loop on the condition), and holds it again.
    func wait() {
        pthread_cond_wait(&changed, &mutex)
    }

    /// Inside ``locked(_:)``: wakes every waiter.
    func broadcast() {
        pthread_cond_broadcast(&changed)
    }
}
