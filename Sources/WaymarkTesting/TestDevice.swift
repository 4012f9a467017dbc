import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A simulated device that a test steps through virtual time, synchronously.
///
/// It wraps a ``Waymark/Simulation`` of a ``Waymark/Scenario``, running an app (by default the
/// scenario's ``Waymark/TutorialApp``; ``BareApp`` for code that drives the manager itself),
/// fed by a replay source (``TraceSource``). Nothing happens until the test says so:
///
/// - ``launch()`` launches the app; ``advance(by:)`` and ``advance(to:)`` move time on,
///   delivering the trace's fixes and firing the system's timers on the way; ``runToEnd()``
///   plays the rest of the trace and ends the run.
/// - ``sendToBackground()``, ``bringToForeground()``, ``terminate()`` and
///   ``setAuthorization(_:)`` are the user's actions, carried out at once.
/// - ``events``, ``auditLog``, ``fixes(reason:)`` and ``events(named:)`` read the audit log.
///
/// Like the simulation, it is not thread-safe: create it and drive it on one isolation, such as
/// a `@MainActor` test, where the app's delegate callbacks then run.
///
/// ```swift
/// @MainActor @Test func keepsTrackingInTheBackground() throws {
///     let device = TestDevice(scenario: scenario, trace: try TraceSource.gpx(contentsOf: path), app: BareApp())
///     let model = RunViewModel(manager: device.manager, info: scenario.info)  // the app's own code
///     device.launch()
///     model.startRun()
///     device.advance(by: .seconds(60))
///     device.sendToBackground()
///     device.advance(by: .seconds(60))
///     #expect(device.fixes(reason: .backgroundSession).count == 12)
/// }
/// ```
public final class TestDevice {
    /// The simulated device.
    public let simulation: Simulation
    /// Whether ``runToEnd()`` or ``finish()`` has ended the run; the device does nothing more.
    public private(set) var isFinished = false

    private var source: GPXReplaySource
    /// The source's next event, not yet received.
    private var pending: SourceEvent?
    private let recorder = AuditRecorder()

    /// A device running `app` (nil: the scenario's ``Waymark/TutorialApp``) in `scenario`, fed by
    /// `trace`, with `manager` as the app's location manager (nil: a new one; pass the one your
    /// app's code created with `DeviceLocationManager()`).
    ///
    /// The audit log's times are `epoch` plus the offset; by default `epoch` is the timestamp of
    /// the trace's first fix (or ``TraceSource/defaultStart`` for an empty trace). The run has
    /// started (its `started` event is in the log) but no time has passed: the app launches at
    /// the scenario's `launchAt` (zero by default) once the test calls ``launch()`` or advances.
    public init(
        scenario: Scenario = Scenario(), trace: GPXReplaySource, app: (any SimulatedApp)? = nil,
        manager: DeviceLocationManager? = nil, epoch: Date? = nil
    ) {
        TestContext.installed
        let start = epoch ?? trace.schedule.fixes.first?.location.timestamp ?? TraceSource.defaultStart
        simulation = Simulation(scenario: scenario, epoch: start, app: app, manager: manager)
        source = trace
        pending = source.nextEvent()
        simulation.addObserver(recorder)
        simulation.start(source: trace.name)
    }

    /// A device whose app is created anew by `makeApp` at every launch (by the user, by a
    /// service relaunching it, after a crash): each launch is a new process with new objects,
    /// and the managers of an ended one are inert.
    public init(
        scenario: Scenario = Scenario(), trace: GPXReplaySource, epoch: Date? = nil,
        makeApp: @escaping () -> any SimulatedApp
    ) {
        TestContext.installed
        let start = epoch ?? trace.schedule.fixes.first?.location.timestamp ?? TraceSource.defaultStart
        simulation = Simulation(scenario: scenario, epoch: start, makeApp: makeApp)
        source = trace
        pending = source.nextEvent()
        simulation.addObserver(recorder)
        simulation.start(source: trace.name)
    }

    /// The app's current process: its launch number, why it was launched, whether it has ended.
    public var process: AppProcess? { simulation.process }

    // MARK: - What the app sees

    /// The app's location manager.
    public var manager: DeviceLocationManager { simulation.manager }
    /// The app's state: active, inactive, background, suspended or not running.
    public var appState: AppState { simulation.appState }
    /// The time since the start of the run.
    public var now: Duration { simulation.now }
    /// The counts so far: every fix's decision and reason.
    public var summary: RunSummary { simulation.summary }
    /// When the trace's next fix (or report without one) arrives; nil when the trace is over.
    public var nextEventOffset: Duration? { pending?.offset }

    /// Runs `body` as the app's code on this device: the objects it creates (a
    /// `CLLocationManager()`, live updates, a `CLMonitor`, Apple's sessions) belong to the device's
    /// running process, and so do those of the `Task`s it starts, which inherit the device. For a
    /// view model's `start()` that a test calls, as a screen would:
    ///
    /// ```swift
    /// device.launch()
    /// device.withDevice { model.start() }   // start() runs `Task { for try await … in CLLocationUpdate.liveUpdates() }`
    /// await device.idle()
    /// device.advance(by: .minutes(5))
    /// ```
    public func withDevice<T>(_ body: () throws -> T) rethrows -> T { try simulation.withDevice(body) }

    /// The `async` form of ``withDevice(_:)``: `body` runs on the caller's isolation.
    public func withDevice<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await simulation.withDevice(isolation: isolation, body)
    }

    // MARK: - Moving time

    /// Fires the scripted actions and system timers due now and, if the app is still not
    /// running, opens it (the user taps its icon). By default the scenario launches the app at
    /// zero, so this launches it.
    ///
    /// A fix due now is left for the next advance: the test can start updates first, as the
    /// app's launch code would.
    public func launch() {
        precondition(!isFinished, "the run has finished")
        simulation.advance(to: now)
        if appState == .notRunning { perform(.foreground) }
    }

    /// Moves time on by `duration`: see ``advance(to:)``.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "time never goes backwards")
        advance(to: now + duration)
    }

    /// Moves time on to `offset`: every fix of the trace and every scripted action and system
    /// timer due at or before it happens, in time order.
    public func advance(to offset: Duration) {
        precondition(!isFinished, "the run has finished")
        precondition(offset >= now, "time never goes backwards: \(offset) is before \(now)")
        while let event = pending, event.offset <= offset {
            simulation.receive(event)
            pending = source.nextEvent()
        }
        simulation.advance(to: offset)
    }

    /// Moves time on by `duration` as a phone lives it: at each moment something happens (a fix
    /// of the trace, a scripted action, a system timer) the device does what is due, then the
    /// app's work queued on the main actor runs (``idle(isolation:)``) before time moves on, as
    /// the main run loop runs it between two events on iOS. A `Task` the delegate starts for
    /// one fix has run before the next fix comes; with ``advance(by:)`` it runs only after the
    /// whole advance.
    public func run(for duration: Duration, isolation: isolated (any Actor)? = #isolation) async {
        precondition(duration >= .zero, "time never goes backwards")
        let end = now + duration
        // Each moment something is due, in turn: a fix (the one ``launch()`` left for the next
        // advance first), a timer, a scripted action, work the app's tasks scheduled for now. App
        // code that keeps scheduling work for the same moment is let run a bounded number of
        // times; the rest of the span is then advanced at once.
        var visitsToNow = 0
        while !isFinished {
            guard let due = [pending?.offset, simulation.nextScheduledOffset].compactMap({ $0 }).min(), due <= end
            else { break }
            let moment = max(due, now)
            visitsToNow = moment == now ? visitsToNow + 1 : 0
            if visitsToNow > 1000 { break }
            advance(to: moment)
            await simulation.idle()
        }
        if !isFinished && now < end {
            advance(to: end)
            await simulation.idle()
        }
    }

    /// Plays the rest of the trace and ends the run, as `waymark replay` would: at the
    /// scenario's `end`, or after the last fix and the last scripted action. Returns the counts.
    @discardableResult
    public func runToEnd() -> RunSummary {
        precondition(!isFinished, "the run has finished")
        let scenario = simulation.scenario
        while let event = pending, scenario.end.map({ event.offset <= $0 }) ?? true {
            simulation.receive(event)
            pending = source.nextEvent()
        }
        let end = max(now, scenario.end ?? simulation.lastScriptedOffset)
        simulation.advance(to: end)
        return finish()
    }

    /// Ends the run now, leaving the rest of the trace unplayed: held fixes are discarded, the
    /// `finished` event is recorded and the manager's ``Waymark/DeviceLocationManager/updates()``
    /// streams end. Returns the counts.
    @discardableResult
    public func finish() -> RunSummary {
        precondition(!isFinished, "the run has finished")
        isFinished = true
        return simulation.finish(at: now)
    }

    // MARK: - What the user does

    /// The user leaves the app (home screen, another app).
    public func sendToBackground() { perform(.background) }
    /// The user opens the app, launching it if it is not running.
    public func bringToForeground() { perform(.foreground) }
    /// The user swipes the app away in the app switcher.
    public func terminate() { perform(.terminate) }
    /// The user changes the app's authorization in Settings.
    public func setAuthorization(_ status: AuthorizationStatus) { perform(.setAuthorization(status)) }
    /// The user switches Precise Location for the app.
    public func setPreciseLocation(_ precise: Bool) { perform(.setPreciseLocation(precise)) }
    /// The user switches Location Services for the whole device.
    public func setLocationServices(_ enabled: Bool) { perform(.setLocationServices(enabled)) }

    /// Carries out `action` now, as a scenario's timeline would (it is logged as an `action`).
    public func perform(_ action: Scenario.Action) {
        precondition(!isFinished, "the run has finished")
        simulation.perform(action)
    }

    // MARK: - The audit log

    /// Every audit event so far, in order.
    public var events: [AuditEvent] { recorder.events }

    /// The audit log so far as NDJSON, one event per line, as `waymark replay --audit` writes it.
    public var auditLog: String { recorder.ndjson(epoch: simulation.epoch) }

    /// The events with the audit log name `name` (`fix`, `stateChanged`, `paused`, …).
    public func events(named name: String) -> [AuditEvent] { events.filter { $0.name == name } }

    /// What became of each fix so far, optionally only those decided for `reason`.
    public func fixes(reason: FixReason? = nil) -> [AuditEvent.FixRecord] {
        events.compactMap { event in
            guard case .fix(let record) = event.kind, reason.map({ record.reason == $0 }) ?? true else { return nil }
            return record
        }
    }

    /// What became of each fix with `decision` so far.
    public func fixes(decision: FixDecision) -> [AuditEvent.FixRecord] {
        fixes().filter { $0.decision == decision }
    }
}
