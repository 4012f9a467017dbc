import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Lines for standard error that never block whoever posts them: a thread of its own writes
/// them, and what it cannot write yet waits in memory, up to ``capacity`` bytes.
///
/// Past that (standard error is a pipe nobody reads, a terminal scrolled back and stopped),
/// lines are dropped and counted; once writing goes on, a line says how many were dropped. A
/// long-running server logs through it, so that its clients and its stop signals never wait on
/// its log.
final class BackgroundLog: Sendable {
    /// The lines waiting to be written, and those dropped: guarded by the mutex.
    private struct State {
        var lines: [String] = []
        var bytes = 0
        var dropped = 0
        /// The writer has taken lines and not yet written them all.
        var writing = false
    }

    /// The most bytes of lines that wait to be written.
    let capacity: Int
    private let fd: Int32
    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)

    /// A log writing to `fd` (standard error by default) on a thread of its own.
    init(fd: Int32 = 2, capacity: Int = 64 * 1024) {
        self.fd = fd
        self.capacity = capacity
        DetachedThread.start { [self] in writeForever() }
    }

    /// Queues `line` (a newline is added) and returns at once; when ``capacity`` bytes already
    /// wait, the line is dropped and counted.
    func post(_ line: String) {
        let queued = state.withLock { state -> Bool in
            guard state.bytes + line.utf8.count + 1 <= capacity else {
                state.dropped += 1
                return false
            }
            state.lines.append(line)
            state.bytes += line.utf8.count + 1
            return true
        }
        if queued { ready.signal() }
    }

    /// Waits until every line posted has been written, at most `timeout`; whether they were.
    /// A process ends after this: a log that cannot be written does not keep it alive.
    @discardableResult
    func flush(within timeout: Duration) -> Bool {
        let deadline =
            DispatchTime.now() + .nanoseconds(Int(timeout.components.seconds) * 1_000_000_000)
            + .nanoseconds(Int(timeout.components.attoseconds / 1_000_000_000))
        while true {
            let done = state.withLock { $0.lines.isEmpty && !$0.writing && $0.dropped == 0 }
            if done { return true }
            ready.signal()  // the writer says what it dropped even when no line follows
            if drained.wait(timeout: deadline) == .timedOut { return false }
        }
    }

    private func writeForever() {
        while true {
            ready.wait()
            let (lines, dropped) = state.withLock { state -> ([String], Int) in
                defer {
                    state.lines = []
                    state.bytes = 0
                    state.dropped = 0
                    state.writing = true
                }
                return (state.lines, state.dropped)
            }
            var text = lines.joined(separator: "\n")
            if !lines.isEmpty { text += "\n" }
            if dropped > 0 {
                text += "waymark: \(dropped) log line(s) dropped: standard error was not being read\n"
            }
            writeAll(text)
            state.withLock { $0.writing = false }
            drained.signal()
        }
    }

    private func writeAll(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// A detached thread of its own (pthread), for work that may block for ever.
enum DetachedThread {
    static func start(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            // Set once before the thread starts and read once by it.
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body))
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box.toOpaque())
        if rc == 0 {
            pthread_detach(thread)
        } else {
            box.release()
            DispatchQueue.global().async(execute: body)  // no thread of its own: one of Dispatch's
        }
    }
}
