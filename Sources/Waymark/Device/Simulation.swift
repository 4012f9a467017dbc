#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Watches a simulation: every audit event, in order, as it happens.
public protocol SimulationObserver: AnyObject {
    func simulation(_ simulation: Simulation, didRecord event: AuditEvent)

    /// A fix decided: the record of its `fix` event, lent, at `offset`. It comes in the event's
    /// place, in order with the others. By default it is handed on as that event
    /// (``simulation(_:didRecord:)``); an observer that reads fixes for every one of hundreds of
    /// thousands (the delivered locations' lines, say) may read the record where it lies
    /// instead, which spares making and destroying an event for each fix. An observer that
    /// implements it hears no `fix` event through ``simulation(_:didRecord:)`` (unless it makes
    /// one itself), and copies the record (`copy record`) to keep it past the call.
    func simulation(_ simulation: Simulation, didDecide record: borrowing AuditEvent.FixRecord, at offset: Duration)
}

extension SimulationObserver {
    public func simulation(
        _ simulation: Simulation, didDecide record: borrowing AuditEvent.FixRecord, at offset: Duration
    ) {
        self.simulation(simulation, didRecord: AuditEvent(offset: offset, kind: .fix(copy record)))
    }
}

/// The simulated device: the driver that runs the app's processes under the rules of iOS.
///
/// Every rule lives in a pure machine under `Rules/`, joined in ``DeviceRules``. The driver holds
/// only time, the timer queue, the app's current process (``AppProcess``) and its observers: it
/// hands the rules events (fixes from the source, scripted actions, timers, the app's calls) and
/// carries out the ``DeviceAction``s they return: it writes the audit log, sets timers, and runs
/// the app's code.
///
/// Everything happens in simulation time: fixes from the source, the scenario's scripted
/// actions, the system's timers and the app's own scheduled work. At equal times, scripted
/// actions come first, then timers, then the fix, so the same inputs always give the same
/// events. ``run(_:isolation:)-34bx6`` runs in virtual time and never waits;
/// ``run(_:clock:rate:isolation:)`` keeps pace with a clock; ``advance(to:)`` and
/// ``receive(_:)`` drive it step by step (a live recorder, a test).
///
/// The app is given as an instance (its code persists from launch to launch, as the tutorial
/// app's does) or as a factory called at every launch (a new process, new objects). Either way
/// every ``DeviceLocationManager`` created while a process runs belongs to that process and goes inert
/// when it ends.
///
/// A `Simulation` is not thread-safe. It runs on its caller's isolation (the main actor, say):
/// create it, set the delegate, and drive it from there.
public final class Simulation {
    // The properties read on every fix skip dynamic exclusivity checks: each access to them is
    // over before the call that makes it returns (the rules are pure, and the app's code never
    // runs inside an access), so no two can overlap.

    /// Every rule of the device, and the state of its machines.
    @exclusivity(unchecked) public internal(set) var rules: DeviceRules
    /// The wall-clock instant of offset zero; audit times are this plus the offset.
    public let epoch: Date
    @exclusivity(unchecked) var timers = TimerQueue()
    @exclusivity(unchecked) var observers: [any SimulationObserver] = []
    /// The app's current process (the last one, ended, until the next launch); nil before the
    /// first launch.
    @exclusivity(unchecked) public internal(set) var process: AppProcess?
    /// Where each launch's app comes from.
    let appSource: AppSource
    /// Managers the app's code created while no process ran (before the first launch, between
    /// launches): the next process adopts them, in order.
    var waitingManagers: [DeviceLocationManager] = []
    @exclusivity(unchecked) public internal(set) var summary = RunSummary()
    var lastActionTime: Duration = .zero
    /// Lifecycle events raised while a transition's actions run wait for them.
    var lifecycleQueue = LifecycleQueue()
    /// Buffers reused from fix to fix.
    @exclusivity(unchecked) var buffers = DeliveryBuffers()
    /// The background URL session's uploads in flight, and the files they became.
    var uploads = UploadOutbox()
    /// The background sessions' downloads: asked for, and answered but not yet handed to the app.
    var downloads = DownloadInbox()
    /// What the device's network answers: the servers the app's `URLSession` reaches.
    public let network = SimulatedNetwork()
    /// The streams the device gave the app, for ``idle()``.
    var streams: [WeakStream] = []
    /// The app's work the device started and is waiting on (an `async` delegate method), for
    /// ``idle()``.
    var pendingAppWork = 0
    /// The background URL session's uploads land here: one file per transfer (nil: nowhere).
    public var uploadDirectory: String?

    /// Where each launch's app comes from.
    enum AppSource {
        /// One instance for every launch (its code keeps what it stored, like a disk).
        case instance(any SimulatedApp)
        /// A new app at every launch.
        case factory(() -> any SimulatedApp)
    }

    /// A simulation of `scenario`, whose offset zero is the instant `epoch`, running `app`
    /// (by default the ``TutorialApp`` the scenario describes) with `manager` as the app's first
    /// location manager (by default one the device creates; pass the manager your app's code
    /// created with ``DeviceLocationManager/init()`` before the run, which must not belong to another
    /// simulation). The same `app` instance receives every launch's callbacks.
    public convenience init(
        scenario: Scenario, epoch: Date, app: (any SimulatedApp)? = nil, manager: DeviceLocationManager? = nil
    ) {
        self.init(
            scenario: scenario, epoch: epoch, source: .instance(app ?? TutorialApp(scenario: scenario)),
            manager: manager)
    }

    /// A simulation whose app is created anew at every launch by `makeApp`: each launch is a new
    /// process with new objects, as on iOS.
    public convenience init(scenario: Scenario, epoch: Date, makeApp: @escaping () -> any SimulatedApp) {
        self.init(scenario: scenario, epoch: epoch, source: .factory(makeApp), manager: nil)
    }

    init(scenario: Scenario, epoch: Date, source: AppSource, manager: DeviceLocationManager?) {
        rules = DeviceRules(scenario: scenario)
        self.epoch = epoch
        appSource = source
        if let manager {
            // Handed over explicitly, a manager no process has adopted yet comes here even when it
            // was created beside another device.
            precondition(
                !manager.isInProcess, "this DeviceLocationManager already belongs to another simulated device's app")
            manager.leaveWaitingDevice()
            manager.wait(for: self)
            waitingManagers.append(manager)
        }
        if let launch = scenario.app.launchAt {
            timers.schedule(.launch, at: launch, class: .action)
            lastActionTime = launch
        }
        for item in scenario.timeline {
            timers.schedule(.action(item.action), at: item.at, class: .action)
            lastActionTime = max(lastActionTime, item.at)
        }
        Self.registry.add(self)
    }

    deinit { Self.registry.remove(self) }

    /// Adds an observer; it sees every event from then on.
    public func addObserver(_ observer: any SimulationObserver) { observers.append(observer) }

    // MARK: - What the app and the user see

    public var scenario: Scenario { rules.scenario }
    /// The iOS release whose rules apply.
    public var version: IOSVersion { rules.version }
    /// The time since the start of the run.
    public var now: Duration { rules.now }
    public var appState: AppState { rules.appState }
    /// The authorization state, for inspection.
    public var authorizationState: AuthorizationStateMachine { rules.authorization }
    /// Background App Refresh, Low Power Mode, power and network, as the scenario and the user
    /// set them.
    public var power: PowerAndRefresh { rules.power.settings }
    /// Why the app was launched this time (nil before the first launch).
    public var launchCause: LifecycleCause? { rules.lifecycle.launchCause }

    /// The app's first location manager: the current process's, or (before a launch) the one the
    /// next process will adopt. The device creates one when the app's code has not.
    public var manager: DeviceLocationManager {
        if let process, !process.hasEnded {
            if let first = process.firstManager { return first }
            return adoptNewManager(into: process)
        }
        if let waiting = waitingManagers.first { return waiting }
        let manager = DeviceLocationManager(unowned: ())
        manager.wait(for: self)
        waitingManagers.append(manager)
        return manager
    }

    /// The app's code in the current process: the instance given, or the factory's.
    public var app: any SimulatedApp {
        if let process { return process.app }
        switch appSource {
        case .instance(let app): return app
        case .factory(let make):
            // Before the first launch there is no process: a fresh app that has not launched.
            return make()
        }
    }

    /// The default app, when the simulation runs it.
    public var tutorialApp: TutorialApp? {
        if case .instance(let app) = appSource { return app as? TutorialApp }
        return process?.app as? TutorialApp
    }

    /// The locations of the `didUpdateLocations` call in progress, with why and where they come
    /// from (empty outside such a call).
    public var currentUpdates: [LocationUpdate] { process?.currentUpdates ?? [] }

    /// Time left to the app's background tasks in this stay in the background; nil when no
    /// task uses up time (in the foreground, see ``backgroundTimeRemainingSeconds``).
    public var backgroundTimeRemaining: Duration? { rules.backgroundTimeRemaining }

    /// `UIApplication.backgroundTimeRemaining`, in seconds: `.greatestFiniteMagnitude` in the
    /// foreground ("remains suitably large"), else the time left to the app's tasks.
    public var backgroundTimeRemainingSeconds: Double {
        if appState.isForeground { return .greatestFiniteMagnitude }
        return backgroundTimeRemaining?.inSeconds ?? .greatestFiniteMagnitude
    }

    /// Whether a background location session keeps updates flowing in the background.
    public var hasBackgroundSession: Bool { rules.hasBackgroundSession }

    /// Whether the app is in use: on screen, in the grace period after leaving it, or showing
    /// the location indicator with a background session.
    public var isInUse: Bool { rules.isInUse }

    /// Whether the app's code runs now.
    public var appCodeRuns: Bool { rules.appCodeRuns }

    /// When the scenario's last scripted action (or the launch) is due: without an `end`, a run
    /// goes on to this time after its source has ended.
    public var lastScriptedOffset: Duration { lastActionTime }

    /// When the next scripted action, system timer or app work is due, if any: a driver that
    /// waits for a live source should wake up then and call ``advance(to:)``.
    public var nextScheduledOffset: Duration? { timers.nextTime }

    var hasObservers: Bool { !observers.isEmpty }
}

/// A stream the device gave the app, held weakly.
struct WeakStream {
    weak var stream: (any ParkableStream)?
}

/// Lifecycle events raised while a transition's actions run, waiting for them.
/// The background URL session's uploads: what each transfer in flight carries, by its id, and
/// the number the next file in the upload directory tries first (`upload-N.csv`, numbered
/// around the files already there).
struct UploadOutbox {
    var payloads: [Int: String] = [:]
    var nextNumber = 1
}

/// The background sessions' downloads: each task's URL until the network answers it, each task's
/// session, and the answers the system holds until the app's session takes them (the app may be
/// suspended, or a new process may not have created its session again yet).
struct DownloadInbox {
    var requests: [Int: String] = [:]
    var sessions: [Int: String] = [:]
    var finished: [FinishedDownload] = []
}

struct LifecycleQueue {
    var events: [AppLifecycleStateMachine.Event] = []
    /// Whether a transition's actions are running now.
    var running = false

    var terminationPending: Bool { events.contains { if case .terminate = $0 { true } else { false } } }
}

/// Buffers reused from fix to fix: the rules' actions, the locations decided as delivered and
/// not yet handed over, and a spare for the next hand-over.
struct DeliveryBuffers {
    var actions: [DeviceAction] = []
    var pending: [LocationUpdate] = []
    var spare: [LocationUpdate] = []
    /// The other managers' locations decided as delivered, by manager number.
    var others: [Int: [LocationUpdate]] = [:]
}
