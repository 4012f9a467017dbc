#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Running the device: in virtual time, at a clock's pace, or step by step.
extension Simulation {
    /// Runs the whole simulation in virtual time, as fast as it goes, and returns its counts.
    @discardableResult
    public func run<S: LocationSource>(_ source: S, isolation: isolated (any Actor)? = #isolation) async throws
        -> RunSummary
    {
        var source = source
        return try await run(&source, waitUntil: nil)
    }

    /// Runs the whole simulation in virtual time from a source that never waits (a replayed
    /// trace): it takes each event without suspending.
    @discardableResult
    public func run<S: SynchronousLocationSource>(_ source: S, isolation: isolated (any Actor)? = #isolation)
        async throws -> RunSummary
    {
        try play(source, stop: nil)
    }

    /// Runs the whole simulation in virtual time from a source that never waits, until the
    /// source ends or `stop` is requested (from any thread): then the run ends at the time of the
    /// step it was handling, with nothing later (see ``RunStop``).
    @discardableResult
    public func run<S: SynchronousLocationSource>(
        _ source: S, stoppingOn stop: RunStop, isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary {
        try play(source, stop: stop)
    }

    /// The loop of a run in virtual time. A streaming replay, the command line's source, takes
    /// a loop of its own type, so that each event comes without a call through the protocol.
    private func play<S: SynchronousLocationSource>(_ source: S, stop: RunStop?) throws -> RunSummary {
        if var streaming = source as? StreamingReplaySource { return try play(&streaming, stop: stop) }
        var source = source
        return try play(&source, stop: stop)
    }

    private func play<S: SynchronousLocationSource>(_ source: inout S, stop: RunStop?) throws -> RunSummary {
        start(source: source.name)
        var pending = try source.nextEvent()
        var end = scenario.end
        var stopped = false
        while true {
            // Stopped: the run ends now, with nothing due later (checked until it has stopped).
            if !stopped, let stop, stop.isRequested { (stopped, pending, end) = (true, nil, now) }
            switch nextStep(pending: pending?.offset, end: &end) {
            case .fix:
                receive(pending!)
                pending = stop?.isRequested == true ? nil : try source.nextEvent()
            case .timer: fireNextTimer()
            case .stop: return finish(at: end)
            }
        }
    }

    /// Runs the simulation at `rate` times the pace of `clock` (1 is real time).
    @discardableResult
    public func run<S: LocationSource, C: Clock>(
        _ source: S, clock: C, rate: Double, isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary where C.Duration == Duration {
        try await run(source, clock: clock, rate: rate, stop: nil)
    }

    /// Runs the simulation at `rate` times the pace of `clock` (1 is real time), until the
    /// source ends or `stop` is requested (from any thread): then the run ends at the time of the
    /// step it was handling, or stops waiting on the clock for the next one, with nothing later
    /// (see ``RunStop``).
    @discardableResult
    public func run<S: LocationSource, C: Clock>(
        _ source: S, clock: C, rate: Double, stoppingOn stop: RunStop,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary where C.Duration == Duration {
        try await run(source, clock: clock, rate: rate, stop: stop)
    }

    private func run<S: LocationSource, C: Clock>(
        _ source: S, clock: C, rate: Double, stop: RunStop?, isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary where C.Duration == Duration {
        precondition(rate > 0 && rate.isFinite, "the rate must be a positive number")
        var source = source
        let start = clock.now
        return try await run(&source, stop: stop) { offset in
            // An offset so far ahead at so slow a rate that it passes Waymark's longest duration
            // waits that long: for ever, in practice, and never a trap.
            let scaled = rate == 1 ? offset : Duration.saturating(seconds: offset.inSeconds / rate)
            let deadline = start.advanced(by: scaled)
            if let stop {
                try await Self.sleep(on: clock, until: deadline, unlessStopped: stop)
            } else {
                try await clock.sleep(until: deadline, tolerance: nil)
            }
        }
    }

    /// Sleeps until `deadline` on `clock`, or until `stop` is requested, whichever comes first
    /// (a trace's gap of an hour does not keep a stopped run waiting); cancelling the task still
    /// throws, stop or not.
    private static func sleep<C: Clock>(on clock: C, until deadline: C.Instant, unlessStopped stop: RunStop)
        async throws
    {
        let sleeper = Task { try await clock.sleep(until: deadline, tolerance: nil) }
        let waker = stop.whenRequested { sleeper.cancel() }
        defer { stop.forget(waker) }
        do {
            try await withTaskCancellationHandler {
                try await sleeper.value
            } onCancel: {
                sleeper.cancel()
            }
        } catch is CancellationError where stop.isRequested && !Task.isCancelled {
            return  // woken by the stop: the loop ends the run
        }
    }

    private func run<S: LocationSource>(
        _ source: inout S, stop: RunStop? = nil, waitUntil: ((Duration) async throws -> Void)?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> RunSummary {
        start(source: source.name)
        var pending = try await source.next()
        var end = scenario.end
        var stopped = false
        while true {
            // Stopped: the run ends now, with nothing due later (checked until it has stopped).
            if !stopped, let stop, stop.isRequested { (stopped, pending, end) = (true, nil, now) }
            switch nextStep(pending: pending?.offset, end: &end) {
            case .fix(let offset):
                if let waitUntil { try await waitUntil(offset) }
                // Stopped while waiting (or as it ended): the fix is not handled; the loop's top
                // ends the run.
                if !stopped && stop?.isRequested == true { continue }
                receive(pending!)
                // A live source would wait for its next fix: a stop comes first.
                pending = stop?.isRequested == true ? nil : try await source.next()
            case .timer(let time):
                if let waitUntil { try await waitUntil(time) }
                if !stopped && stop?.isRequested == true { continue }
                fireNextTimer()
            case .stop: return finish(at: end)
            }
        }
    }

    private enum Step {
        /// The pending fix, at its offset.
        case fix(Duration)
        case timer(Duration)
        case stop
    }

    /// What comes next: the pending fix (at `pending`, its offset), or the next timer (actions
    /// and timers before a fix at the same time), or the end. Once the source has ended, the run
    /// ends with the last action (or the scenario's end).
    private func nextStep(pending: Duration?, end: inout Duration?) -> Step {
        if pending == nil && end == nil { end = max(now, lastActionTime) }
        let timerTime = timers.nextTime
        if let offset = pending, timerTime.map({ offset < $0 }) ?? true {
            if let end, offset > end { return .stop }
            return .fix(offset)
        }
        guard let time = timerTime else { return .stop }
        if let end, time > end { return .stop }
        return .timer(time)
    }

    // MARK: - Driving the loop step by step

    /// Begins a run driven step by step (``run(_:isolation:)-34bx6`` does all of this itself):
    /// records the `started` event. A live recorder or a test calls this, then
    /// ``advance(to:)`` as its clock moves and ``receive(_:)`` as fixes arrive, and
    /// ``finish(at:)`` at the end.
    public func start(source name: String) {
        record(.started(source: name, iosVersion: version, logger: scenario.isLogger))
        guard let manager = waitingManagers.first else { return }
        for (setting, value) in manager.takeChangesBeforeAdoption() {
            record(.setting(name: setting, value: value))
        }
        if manager.allowsBackgroundLocationUpdates && !scenario.info.backgroundModes.contains(.location) {
            // The app set it before the device ran it; the exception iOS raises comes at once,
            // before any app code runs, so the setting is undone rather than the app terminated.
            record(
                .diagnostic(
                    message:
                        "allowsBackgroundLocationUpdates was set without the location background mode in the Info; the setting is undone"
                ))
            manager.refuseBackgroundUpdates()
        }
    }

    /// Fires every action and timer due at or before `offset`, in order, and moves the
    /// simulation's time to `offset`.
    public func advance(to offset: Duration) {
        while let time = timers.nextTime, time <= offset { fireNextTimer() }
        rules.now = max(now, offset)
    }

    /// Handles one event from the source at its offset, after everything due at or before it.
    public func receive(_ event: SourceEvent) {
        advance(to: event.offset)
        settle()  // the app's own calls between steps (stopping updates, ending a task) count first
        decide(event)  // the rules decide, the driver carries it out (the hot path: Simulation+FixPath.swift)
        perform(rules.servicesObserve(event))
        settle()
    }

    /// Ends the run at `offset` (or now): discards what is still held, records `finished`, and
    /// ends the app's update streams. Returns the counts.
    @discardableResult
    public func finish(at offset: Duration? = nil) -> RunSummary {
        if let offset, offset > now { rules.now = offset }
        perform(rules.location(.runEnded))
        record(.finished(summary))
        for manager in waitingManagers { manager.finishUpdates() }
        if let process { for (_, manager) in process.liveManagers { manager.finishUpdates() } }
        return summary
    }

    /// Carries out a scripted action now, as the timeline would (for tests and tools).
    public func perform(_ action: Scenario.Action) {
        record(.action(name: action.name, value: action.value))
        carryOut(action)
        settle()
    }

    func fireNextTimer() {
        guard let entry = timers.pop() else { return }
        rules.now = max(now, entry.time)
        switch entry.timer {
        case .action(let action):
            record(.action(name: action.name, value: action.value))
            carryOut(action)
        case .launch:
            if appState == .notRunning { lifecycleEvent(.launch(inBackground: false, cause: .userLaunch)) }
        case .system(let key):
            perform(rules.fire(key))
        case .app(let id, let launch):
            guard let process, process.number == launch, !process.hasEnded else { break }
            if let work = process.work.removeValue(forKey: id), appCodeRuns { inProcess(process) { work() } }
        }
        settle()
    }
}
