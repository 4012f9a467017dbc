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

/// Turns SIGINT and SIGTERM into a call of `stop` (on a dispatch queue), instead of ending the
/// process; cancel the returned sources to stop handling them.
func handleStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: stop)
        source.resume()
        return source
    }
}
