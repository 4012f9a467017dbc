#if !canImport(Darwin)
    import Synchronization
#endif

/// A request to end a run early, made from any thread or task: a signal handler (Ctrl-C), an
/// output that failed, a deadline.
///
/// Give it to ``Simulation/run(_:stoppingOn:isolation:)`` (a source that never waits, such as a
/// replayed trace) or ``Simulation/run(_:clock:rate:stoppingOn:isolation:)`` (at a clock's pace),
/// and call ``request()`` from anywhere; several runs may share one. The run ends at the time of
/// the step it is handling (a fix, or an action or timer): that step is carried out whole,
/// nothing due later happens (the scenario's actions, the rules' timers, the source's next
/// event), the fixes still held are discarded and `finished` is recorded, so the audit log, the
/// summary and the outputs are complete. A paced run waiting on its clock for the next step stops
/// waiting, and that step does not happen (the clock's `sleep` must end when its task is
/// cancelled, as `ContinuousClock`'s, `SuspendingClock`'s and `ManualClock`'s do); one waiting
/// for a live source's next fix sees the stop when the fix comes.
///
/// ```swift
/// let stop = RunStop()
/// signal(SIGINT, SIG_IGN)  // Ctrl-C goes to the dispatch source instead
/// let ctrlC = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
/// ctrlC.setEventHandler { stop.request() }
/// ctrlC.resume()
/// let summary = try await simulation.run(source, stoppingOn: stop)
/// if stop.isRequested { print("stopped early after \(summary.fixes) fixes") }
/// ```
///
/// `@unchecked Sendable`: `wakers` and `nextWaker` (and the flag, on Apple's systems) are read
/// and written inside `gate.locked`; on Linux the flag is an atomic, read without the lock at
/// each step of a run (twice for a fix: before it, and before the source's next event).
public final class RunStop: @unchecked Sendable {
    private let gate = ThreadGate()
    /// What wakes each paced run waiting on its clock, by the number `whenRequested` gave it.
    private var wakers: [Int: @Sendable () -> Void] = [:]
    private var nextWaker = 0
    #if canImport(Darwin)
        // Synchronization's `Atomic` needs macOS 15 and iOS 18; the package supports 14 and 17.
        private var flag = false
    #else
        private let flag = Atomic<Bool>(false)
    #endif

    public init() {}

    /// Asks the runs given this stop to end after the step they are handling; later calls change
    /// nothing.
    public func request() {
        let wake = gate.locked { () -> [@Sendable () -> Void] in
            setFlag()
            defer { wakers = [:] }
            return Array(wakers.values)
        }
        for w in wake { w() }
    }

    /// Whether ``request()`` has been called.
    public var isRequested: Bool {
        #if canImport(Darwin)
            gate.locked { flag }
        #else
            flag.load(ordering: .relaxed)
        #endif
    }

    /// Runs `wake` when the stop is requested, or at once if it has been (then nil), until
    /// ``forget(_:)`` is given the number returned.
    func whenRequested(_ wake: @escaping @Sendable () -> Void) -> Int? {
        let number = gate.locked { () -> Int? in
            if flagInLock { return nil }
            nextWaker += 1
            wakers[nextWaker] = wake
            return nextWaker
        }
        if number == nil { wake() }
        return number
    }

    /// Lets go of the waker numbered `number`.
    func forget(_ number: Int?) {
        guard let number else { return }
        gate.locked { _ = wakers.removeValue(forKey: number) }
    }

    /// Inside `gate.locked`.
    private var flagInLock: Bool {
        #if canImport(Darwin)
            flag
        #else
            flag.load(ordering: .relaxed)
        #endif
    }

    /// Inside `gate.locked`.
    private func setFlag() {
        #if canImport(Darwin)
            flag = true
        #else
            flag.store(true, ordering: .relaxed)
        #endif
    }
}
