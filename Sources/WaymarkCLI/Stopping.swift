import Dispatch
import Synchronization
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

/// Set once, from any thread (a signal handler's queue, a failing store), and read by the run.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// A source that ends early once its flag is set.
struct StoppableSource<Inner: LocationSource>: LocationSource {
    var inner: Inner
    let flag: StopFlag
    var name: String { inner.name }

    mutating func next() async throws -> SourceEvent? {
        flag.isSet ? nil : try await inner.next()
    }
}

extension StoppableSource: SynchronousLocationSource where Inner: SynchronousLocationSource {
    mutating func nextEvent() throws -> SourceEvent? {
        flag.isSet ? nil : try inner.nextEvent()
    }
}

/// Turns SIGINT (Ctrl-C), SIGTERM, SIGHUP (the terminal or SSH session went away) and SIGQUIT
/// (Ctrl-\) into a call of `stop` (on a dispatch queue), instead of ending the process or
/// printing a crash report; cancel the returned sources to stop handling them.
func handleStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM, SIGHUP, SIGQUIT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: stop)
        source.resume()
        return source
    }
}

/// For commands that stop at once rather than finish cleanly (render, repair, sessions export):
/// a stop signal removes the uncommitted temporary files of `sinks`, so no `.NAME.waymark-XXXXXX`
/// is left beside the outputs, and ends the process with 128 plus the signal's number, as the
/// signal itself would have. Cancel the returned sources once the outputs are committed.
func removeUncommittedOutputsOnStopSignal(_ sinks: [FileSink]) -> [any DispatchSourceSignal] {
    let paths = sinks.compactMap(\.uncommittedPath)
    guard !paths.isEmpty else { return [] }
    return [SIGINT, SIGTERM, SIGHUP, SIGQUIT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            for path in paths { unlink(path) }
            _exit(128 + number)
        }
        source.resume()
        return source
    }
}
