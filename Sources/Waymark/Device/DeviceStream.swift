#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream the device hands the app (its location updates, live updates, a monitor's events),
/// built so that the device can tell when the app has taken and handled everything it was given:
/// its reader is *parked* when it waits in `next()` with nothing left to read. That is what
/// ``Simulation/idle()`` waits for, instead of yielding and hoping.
///
/// The app sees a plain `AsyncStream`; the device keeps this buffer, which the stream's
/// `next()` reads. It buffers without limit, as the streams always did, so a slow reader loses
/// nothing; a reader that goes away lets it go.
final class DeviceStreamBuffer<Element: Sendable>: @unchecked Sendable, ParkableStream {
    // @unchecked Sendable: `mutex` guards every stored property below it.
    private var mutex = pthread_mutex_t()
    private var queue: [Element] = []
    private var head = 0
    private var waiter: CheckedContinuation<Element?, Never>?
    private var finished = false
    private var abandoned = false
    private var asked = false

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// A stream reading this buffer.
    func makeStream() -> AsyncStream<Element> {
        let token = ReaderToken(self)
        return AsyncStream(unfolding: { await token.buffer.next() }, onCancel: { token.buffer.abandon() })
    }

    /// Hands the reader `element`; false once the reader has gone (or the stream has finished).
    @discardableResult
    func yield(_ element: Element) -> Bool {
        let resume: CheckedContinuation<Element?, Never>? = locked {
            guard !finished && !abandoned else { return nil }
            if let w = waiter {
                waiter = nil
                return w
            }
            queue.append(element)
            return nil
        }
        resume?.resume(returning: element)
        return locked { !abandoned && !finished }
    }

    /// No more elements: the reader ends once it has read the rest.
    func finish() {
        let resume: CheckedContinuation<Element?, Never>? = locked {
            finished = true
            defer { waiter = nil }
            return head == queue.count ? waiter : nil
        }
        resume?.resume(returning: nil)
    }

    /// The reader went away (its task was cancelled, or it let go of the stream).
    func abandon() {
        let resume: CheckedContinuation<Element?, Never>? = locked {
            abandoned = true
            queue = []
            head = 0
            defer { waiter = nil }
            return waiter
        }
        resume?.resume(returning: nil)
    }

    /// The reader's `next()`.
    func next() async -> Element? {
        let taken: (Element?, Bool) = locked {
            asked = true
            if head < queue.count {
                let e = queue[head]
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                return (e, true)
            }
            return (nil, finished || abandoned)
        }
        if taken.1 { return taken.0 }
        return await withCheckedContinuation { continuation in
            let now: Element?? = locked {
                if head < queue.count {
                    let e = queue[head]
                    head += 1
                    return .some(e)
                }
                if finished || abandoned { return .some(nil) }
                waiter = continuation
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Whether the reader has handled everything: nothing left to read, and it waits for more
    /// (or will read no more). A stream nobody has read yet counts as handled.
    var isParked: Bool {
        locked { abandoned || (head == queue.count && (waiter != nil || finished || !asked)) }
    }

    /// Whether the stream can still deliver.
    var isOpen: Bool { locked { !finished && !abandoned } }
}

/// What ``Simulation/idle()`` asks of a stream.
protocol ParkableStream: AnyObject, Sendable {
    var isParked: Bool { get }
    var isOpen: Bool { get }
}

/// Lets the buffer know when the reader lets go of the stream: the stream's closure holds the
/// only reference to it.
private final class ReaderToken<Element: Sendable>: Sendable {
    let buffer: DeviceStreamBuffer<Element>
    init(_ buffer: DeviceStreamBuffer<Element>) { self.buffer = buffer }
    deinit { buffer.abandon() }
}
