@testable import Waymark

/// The device's rules alone: no app, no process, no source. It carries out what
/// ``DeviceRules`` returns as the driver does (posts handled at once, lifecycle events queued
/// while a transition's actions run, timers fired in order, settling after each step) and keeps
/// what the rules asked of the app, so that a test plays the app's side itself.
///
/// It is deliberately written apart from ``Simulation``: when the two disagree on a scenario, one
/// of them carries out the rules wrongly.
struct RulesHarness {
    private(set) var rules: DeviceRules
    /// The audit events, with their times.
    private(set) var records: [(time: Duration, kind: AuditEvent.Kind)] = []
    /// The app's code the rules ran, in order.
    private(set) var calls: [AppCall] = []
    /// Timers set and not yet fired or cancelled, with the order they were set in (ties fire in it).
    private var timers: [TimerKey: (time: Duration, order: Int)] = [:]
    private var timerOrder = 0
    private var lifecycleEvents: [AppLifecycleStateMachine.Event] = []
    private var lifecycleRunning = false

    init(_ scenario: Scenario) { rules = DeviceRules(scenario: scenario) }

    var now: Duration { rules.now }
    var appState: AppState { rules.appState }

    // MARK: Driving

    /// Hands an event to the rules as the system or the app's code would, then settles.
    mutating func send(_ event: DeviceEvent) {
        post(event)
        settle()
    }

    /// Moves time to `time`, firing every timer due by then in order (each a step).
    mutating func advance(to time: Duration) {
        while let (key, entry) = timers.min(by: { ($0.value.time, $0.value.order) < ($1.value.time, $1.value.order) }),
            entry.time <= time
        {
            timers[key] = nil
            rules.now = max(rules.now, entry.time)
            perform(rules.fire(key))
            settle()
        }
        rules.now = max(rules.now, time)
    }

    /// Moves time on by `duration`.
    mutating func wait(_ duration: Duration) { advance(to: now + duration) }

    /// When `key` is set to fire, if it is.
    func timer(_ key: TimerKey) -> Duration? { timers[key]?.time }

    /// Every timer set, for invariants.
    var timerTimes: [Duration] { timers.values.map(\.time) }

    /// The calls since `mark` (an index into ``calls``).
    func calls(since mark: Int) -> ArraySlice<AppCall> { calls[mark...] }

    /// The audit events' kinds, in order.
    var kinds: [AuditEvent.Kind] { records.map(\.kind) }

    // MARK: Carrying out

    private mutating func perform(_ actions: [DeviceAction]) {
        for action in actions {
            switch action {
            case .record(let kind): records.append((rules.now, kind))
            case .schedule(let key, let time):
                timerOrder += 1
                timers[key] = (time, timerOrder)
            case .cancel(let key): timers[key] = nil
            case .post(let event): post(event)
            case .call(let call): calls.append(call)
            case .decided, .deliver: break  // no source here
            case .sendUpload(let task): perform(rules.handle(.uploadWritten(task: task, failure: nil)))
            case .receiveDownload(let task): perform(rules.handle(.downloadReceived(task: task, detail: nil)))
            }
        }
    }

    private mutating func post(_ event: DeviceEvent) {
        guard case .lifecycle(let lifecycle) = event else {
            perform(rules.handle(event))
            return
        }
        lifecycleEvents.append(lifecycle)
        rules.terminationPending = terminationQueued
        guard !lifecycleRunning else { return }
        lifecycleRunning = true
        while !lifecycleEvents.isEmpty {
            let next = lifecycleEvents.removeFirst()
            rules.terminationPending = terminationQueued
            for step in rules.lifecycleSteps(next) {
                if terminationQueued { break }
                perform(step)
            }
        }
        lifecycleRunning = false
        rules.terminationPending = false
    }

    private var terminationQueued: Bool {
        lifecycleEvents.contains { if case .terminate = $0 { true } else { false } }
    }

    private mutating func settle() {
        while let step = rules.settleStep() {
            switch step {
            case .noLongerInUse(let actions): perform(actions)
            case .idle:
                let before = rules.appState
                post(.lifecycle(.idle))
                if rules.appState == before { return }
            }
        }
    }
}
