import Dispatch
import Synchronization
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

/// A count kept from any thread and read by the run.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment(by n: Int = 1) { count.add(n, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Turns SIGINT (Ctrl-C), SIGTERM, SIGHUP (the terminal or SSH session went away) and SIGQUIT
/// (Ctrl-\) into a call of `stop` (on a dispatch queue), instead of ending the process or
/// printing a crash report; cancel the returned sources to stop handling them.
///
/// A signal the process was started with ignored stays ignored: under `nohup` a dropped SSH
/// session does not stop the recording, and a background job of a script keeps running on Ctrl-C.
func handleStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    installStopSignalSources { _ in stop }.sources
}

/// Hands each stop signal the process was not started with ignored to a dispatch source running
/// `handler(signal)`, and returns once dispatch handles them all (``waitUntilDispatchHandles(_:)``).
func installStopSignalSources(_ handler: (Int32) -> @Sendable () -> Void)
    -> (signals: [Int32], sources: [any DispatchSourceSignal])
{
    let handled = stopSignals.filter { !isIgnored($0) }
    let sources = handled.map { number in
        signal(number, SIG_IGN)  // as dispatch needs; its own handler replaces this
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: handler(number))
        source.resume()
        return source
    }
    waitUntilDispatchHandles(handled)
    return (handled, sources)
}

/// The signals that stop a command.
let stopSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

/// Whether `number` is ignored now (SIG_IGN), as `nohup` or a shell's background job sets it.
func isIgnored(_ number: Int32) -> Bool {
    var current = sigaction()
    sigaction(number, nil, &current)
    return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1  // SIG_IGN
}

/// Waits, at most a second, until libdispatch has installed its handler for each of `signals`.
///
/// A signal source is registered on dispatch's own thread some time after `resume()`; until
/// then the signal is still ignored (SIG_IGN, as the source needs) and one that comes is lost.
/// Returning only once the handler is in place means a signal that comes after is seen.
func waitUntilDispatchHandles(_ signals: [Int32]) {
    for _ in 0..<1000 {
        let pending = signals.filter(isIgnored)
        if pending.isEmpty { return }
        usleep(1000)
    }
}

/// The uncommitted temporary files of a command's atomic outputs, for commands that stop at
/// once rather than finish cleanly (render, repair, sessions export).
///
/// Install it before creating the outputs, then ``add(_:)`` each: a stop signal (SIGINT,
/// SIGTERM, SIGHUP, SIGQUIT) then removes them, so no `.NAME.waymark-XXXXXX` is left beside the
/// outputs, and ends the process by that signal, as it would have without the handler.
/// Installed first (it returns once dispatch handles the signals), it never misses a signal that
/// comes while an output is being created.
final class UncommittedOutputs {
    /// The paths, shared with the signal handlers on dispatch's queue.
    private final class Paths: Sendable {
        let list = Mutex<[String]>([])
    }

    private let paths = Paths()
    private var sources: [any DispatchSourceSignal]
    private let handled: [Int32]

    /// Starts handling the stop signals (not those the process was started with ignored).
    init() {
        let paths = self.paths
        (handled, sources) = installStopSignalSources { number in
            {
                paths.list.withLock { for path in $0 { unlink(path) } }
                // Die by the signal, as without this handler, so that a shell loop or make
                // sees the interruption; SIGQUIT, whose default also dumps core, exits 131.
                if number == SIGQUIT { _exit(128 + number) }
                signal(number, SIG_DFL)
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, number)
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                raise(number)
                _exit(128 + number)  // if raise returns at all
            }
        }
    }

    /// Removes `sink`'s temporary file, if it has one, when a stop signal comes.
    func add(_ sink: FileSink) {
        guard let path = sink.uncommittedPath else { return }
        paths.list.withLock { $0.append(path) }
    }

    /// Stops handling the signals (their default action applies again): call it once the
    /// outputs are committed.
    func finish() {
        for source in sources { source.cancel() }
        for number in handled { signal(number, SIG_DFL) }
        sources = []
    }
}
