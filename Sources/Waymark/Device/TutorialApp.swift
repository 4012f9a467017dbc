/// Where the tutorial app's background fetch syncs the locations it stored.
public protocol FetchSink: AnyObject {
    /// Takes the locations stored since the last successful sync; throwing makes the fetch
    /// report `failed`, and the same locations are offered again next time.
    func sync(_ locations: ArraySlice<StoredLocation>) throws
}

/// A location the tutorial app received and stored, with the app's state at the time.
public struct StoredLocation: Sendable, Hashable {
    public var location: Location
    public var appState: AppState
    public var reason: FixReason
    /// The point's index in its file, or the fix's sequence number.
    public var index: Int
    public var segment: Int
    /// Time since the start of the run when it was delivered.
    public var offset: Duration

    public init(
        location: Location, appState: AppState, reason: FixReason, index: Int, segment: Int, offset: Duration
    ) {
        self.location = location
        self.appState = appState
        self.reason = reason
        self.index = index
        self.segment = segment
        self.offset = offset
    }
}

/// The app the command line runs: the seed tutorial's location app, as a scenario describes it.
///
/// - At launch it configures the manager from the scenario (`manager` keys), sets its fetch
///   interval, and (with `beginsBackgroundTaskAtLaunch`) begins a background task for its next
///   stay in the background.
/// - The first time it is active it requests the scenario's authorization and starts updates.
/// - In the foreground every delivered location "updates the UI"; in the background it is
///   logged. Every one is stored with the app's state. Back in the foreground, it reports how
///   many arrived while it was away.
/// - When it becomes active after the system paused updates, it restarts them (an `app` event).
/// - With `beginsBackgroundTask` it begins a task on entering the background and ends it on
///   return; with `reRegistersTaskWhenActive` it begins a new one whenever it becomes active
///   without one. Its expiration handlers end their task when `endsTaskOnExpiration`.
/// - Background fetch syncs the stored locations to ``fetchSink`` and reports `newData`,
///   `noData` or `failed` after `fetchDuration`.
///
/// - At every launch it registers its `BGTaskScheduler` handlers (``refreshTaskIdentifier``,
///   ``processingTaskIdentifier``); with `monitorsSignificantChanges` it starts the
///   significant-change service, as it also does after a relaunch by it (Apple: "Upon relaunch,
///   you must still configure a location manager object and call this method"); with
///   `monitorsVisits` the visits service; it monitors the scenario's `regions` unless they are
///   monitored already (they persist across launches). With `restartsUpdatesOnRelaunch`, a
///   relaunch by a location service starts standard updates again.
/// - A background push, an app-refresh task and a processing task sync the stored locations as
///   fetch does, after `pushHandlerDuration`, `refreshTaskDuration` or `processingTaskDuration`;
///   the refresh task submits the next one (`resubmitsAppRefresh`), for
///   `system.minimumFetchInterval` later. Its expiration handlers complete the task unsuccessfully
///   when `endsTaskOnExpiration`.
/// - With `uploadsInBackground` it uploads the locations it stored through a background URL
///   session each time it leaves the foreground.
///
/// It hears its manager's deliveries and pauses through a tap of its own, before the manager's
/// delegate does: the delegate stays whatever the code around it set, before or after launch.
public final class TutorialApp: SimulatedApp {
    /// The identifier of its `BGAppRefreshTaskRequest`s.
    public static let refreshTaskIdentifier = "waymark.tutorial.refresh"
    /// The identifier of its `BGProcessingTaskRequest`s.
    public static let processingTaskIdentifier = "waymark.tutorial.processing"

    public let behaviour: Scenario.AppBehaviour
    public let managerSettings: Scenario.ManagerSettings
    private let fetchEnabled: Bool

    /// The locations the app stored, in delivery order (with ``retainsStoredLocations`` off,
    /// only those background fetch has not synced yet).
    public private(set) var stored: [StoredLocation] = []
    /// How many locations the app stored in all.
    // Read or counted for every fix, on the device's isolation: no dynamic exclusivity checks.
    @exclusivity(unchecked) public private(set) var storedCount = 0
    /// Whether ``stored`` keeps every location (the default). Off, it keeps only what background
    /// fetch has yet to sync, so that a recording of days runs in bounded memory.
    @exclusivity(unchecked) public var retainsStoredLocations = true
    /// Called with each location as the app stores it (after it is in ``stored``, if kept
    /// there): a run's outputs stream them from here instead of reading ``stored`` at the end.
    @exclusivity(unchecked) public var onStored: ((StoredLocation) -> Void)?
    /// Where background fetch syncs stored locations; nil syncs nowhere (every fetch succeeds).
    public var fetchSink: (any FetchSink)?

    private weak var system: Simulation?
    /// Its tap on the manager, once made.
    private var madeTap: TutorialAppTap?
    private var tap: TutorialAppTap {
        if let madeTap { return madeTap }
        let tap = TutorialAppTap(app: self)
        madeTap = tap
        return tap
    }
    private var syncedCount = 0
    @exclusivity(unchecked) private var arrivedWhileAway = 0
    private var away = false
    private var needsForegroundSetup = true
    private var pausedBySystem = false
    private var launchTask: BackgroundTaskIdentifier?
    private var uploadedCount = 0
    private let resubmitDelay: Duration

    deinit { madeTap?.appEnded() }

    public init(scenario: Scenario) {
        behaviour = scenario.app
        managerSettings = scenario.manager
        resubmitDelay = scenario.system.minimumFetchInterval
        if case .never = scenario.app.fetchInterval {
            fetchEnabled = false
        } else {
            fetchEnabled = scenario.info.backgroundModes.contains(.fetch)
        }
    }

    public func didFinishLaunching(_ system: Simulation, inBackground: Bool) {
        self.system = system
        arrivedWhileAway = 0
        away = inBackground
        needsForegroundSetup = true
        pausedBySystem = false
        launchTask = nil
        let m = system.manager
        m.tap = tap
        let s = managerSettings
        m.desiredAccuracy = s.desiredAccuracy
        m.distanceFilter = s.distanceFilter
        m.pausesLocationUpdatesAutomatically = s.pausesLocationUpdatesAutomatically
        m.activityType = s.activityType
        m.showsBackgroundLocationIndicator = s.showsBackgroundLocationIndicator
        m.allowsBackgroundLocationUpdates = s.allowsBackgroundLocationUpdates
        system.setMinimumBackgroundFetchInterval(behaviour.fetchInterval)
        if behaviour.beginsBackgroundTaskAtLaunch { launchTask = system.beginTaskEndedOnExpiration(reason: "launch") }
        registerTasks(system)
        // "When the app relaunches, recreate the monitor with the same identifier."
        for name in system.monitorNames { _ = system.monitor(named: name) }
        let cause = system.launchCause
        if behaviour.monitorsSignificantChanges || cause == .significantLocationChange {
            m.startMonitoringSignificantLocationChanges()
        }
        if behaviour.monitorsVisits { m.startMonitoringVisits() }
        let monitored = Set(m.monitoredRegions.map(\.identifier))
        for region in behaviour.regions where !monitored.contains(region.identifier) { m.startMonitoring(for: region) }
        if behaviour.restartsUpdatesOnRelaunch, let cause,
            WakeCause(rawValue: cause.rawValue)?.isLocationService == true
        {
            system.log("startUpdatingLocation", detail: "relaunchedByLocationService")
            m.startUpdatingLocation()
        }
    }

    private func registerTasks(_ system: Simulation) {
        system.taskScheduler.register(forTaskWithIdentifier: Self.refreshTaskIdentifier) {
            [weak self, weak system] task in
            guard let self, let system else { return }
            if self.behaviour.resubmitsAppRefresh {
                try? system.taskScheduler.submit(
                    .init(
                        identifier: Self.refreshTaskIdentifier, kind: .appRefresh,
                        earliestBegin: system.now + self.resubmitDelay))
            }
            self.syncInTask(task, taking: self.behaviour.refreshTaskDuration, system)
        }
        system.taskScheduler.register(forTaskWithIdentifier: Self.processingTaskIdentifier) {
            [weak self, weak system] task in
            guard let self, let system else { return }
            self.syncInTask(task, taking: self.behaviour.processingTaskDuration, system)
        }
    }

    /// A `BGTask`'s work: sync after `duration`, then complete it. A well-behaved expiration
    /// handler completes it unsuccessfully; the other ignores the warning.
    private func syncInTask(_ task: ScheduledTask, taking duration: Duration, _ system: Simulation) {
        task.expirationHandler =
            behaviour.endsTaskOnExpiration ? { [weak task] in task?.setTaskCompleted(success: false) } : {}
        system.schedule(after: duration) { [weak self, weak system] in
            guard let self, let system else { return }
            task.setTaskCompleted(success: self.sync(system) != .failed)
        }
    }

    public func didReceiveRemoteNotification(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
        system.schedule(after: behaviour.pushHandlerDuration) { [weak self, weak system] in
            guard let self, let system else { return }
            completion(self.sync(system))
        }
    }

    public func didBecomeActive(_ system: Simulation) {
        if needsForegroundSetup {
            needsForegroundSetup = false
            if let request = behaviour.request {
                request == .always
                    ? system.manager.requestAlwaysAuthorization() : system.manager.requestWhenInUseAuthorization()
            }
            if behaviour.startsUpdates { system.manager.startUpdatingLocation() }
        } else if pausedBySystem && behaviour.restartsUpdatesAfterPause {
            pausedBySystem = false
            system.log("startUpdatingLocation", detail: "restartAfterPause")
            system.manager.startUpdatingLocation()
        }
        if behaviour.reRegistersTaskWhenActive && system.backgroundTasks.isEmpty {
            system.log("beginBackgroundTask", detail: "reRegisterWhenActive")
            launchTask = system.beginTaskEndedOnExpiration(reason: "reRegistered")
        }
        if away {
            away = false
            system.report(.arrivedWhileAway(count: arrivedWhileAway))
            arrivedWhileAway = 0
        }
    }

    public func willEnterForeground(_ system: Simulation) {
        // The tasks it began for a stay in the background end with it; a launch task waits for
        // the next stay.
        for task in system.backgroundTasks where task != launchTask {
            system.endBackgroundTask(task, reason: "foreground")
        }
    }

    public func didEnterBackground(_ system: Simulation) {
        away = true
        arrivedWhileAway = 0
        if behaviour.beginsBackgroundTask { system.beginTaskEndedOnExpiration(reason: "enteredBackground") }
        if behaviour.uploadsInBackground, uploadedCount < stored.count {
            system.uploadInBackground(Array(stored[uploadedCount...]))
            uploadedCount = stored.count
            if !retainsStoredLocations && !fetchEnabled {
                // Nothing else needs them: memory stays bounded on a long run.
                stored.removeAll(keepingCapacity: true)
                uploadedCount = 0
            }
        }
    }

    public func performFetch(_ system: Simulation, completion: @escaping (FetchResult) -> Void) {
        system.schedule(after: behaviour.fetchDuration) { [weak self, weak system] in
            guard let self, let system else { return }
            completion(self.sync(system))
        }
    }

    public func didTerminate(_ system: Simulation, cause: TerminationCause) {
        launchTask = nil
    }

    private func sync(_ system: Simulation) -> FetchResult {
        let pending = stored[syncedCount...]
        guard !pending.isEmpty else {
            system.noteFetch(synced: 0, reason: nil)
            return .noData
        }
        do {
            try fetchSink?.sync(pending)
        } catch {
            system.noteFetch(synced: 0, reason: "\(error)")
            return .failed
        }
        system.noteFetch(synced: pending.count, reason: nil)
        syncedCount = stored.count
        if !retainsStoredLocations {
            stored.removeAll(keepingCapacity: true)
            syncedCount = 0
            uploadedCount = 0
        }
        return .newData
    }

    /// The app's code for `updates`, the updates of one delivery of its manager (handed to its
    /// tap, as `system.currentUpdates` would give them: the simulation, held weakly, is read
    /// only to time a location the app keeps).
    fileprivate func received(_ updates: [LocationUpdate]) {
        storedCount += updates.count
        let keeps = retainsStoredLocations || fetchEnabled || behaviour.uploadsInBackground
        let system = keeps || onStored != nil ? self.system : nil
        for i in updates.indices {
            // Fields read in place: a whole update is copied only when it is kept or handed out.
            if let system {
                let location = StoredLocation(
                    location: updates[i].location, appState: updates[i].appState, reason: updates[i].reason,
                    index: updates[i].index, segment: updates[i].segment, offset: system.now)
                if keeps { stored.append(location) }
                onStored?(location)
            }
            let reason = updates[i].reason
            if !updates[i].appState.isForeground || reason == .resumed || reason == .alwaysGranted {
                arrivedWhileAway += 1
            }
        }
    }

    fileprivate func paused() { pausedBySystem = true }
}

/// The tutorial app's tap on its manager: what the app keeps of each delivery and pause.
final class TutorialAppTap: LocationManagerTap {
    /// The app, until it is freed: the app owns its tap, which outlives it only when its
    /// manager does, and then finds no app rather than freed memory. Not `unowned`: the app is
    /// also referenced weakly (by the work it schedules), so its counts live in a side table,
    /// and a strong reference made from an unowned one on every fix would go through it.
    ///
    /// It is called without a reference of its own, which is sound because the manager calls
    /// the tap only while the device carries out a delivery or a pause for the app's process:
    /// the device then holds that process in a local (`Simulation.deliver`, its delegate
    /// calls), and the process holds its app in a constant (``AppProcess/app``), so the app
    /// lives through the call whatever its code (or `onStored`) lets go of.
    private var app: Unmanaged<TutorialApp>?

    /// Whether the app is still there (tests check that it says so once the app is freed).
    var hasApp: Bool { app != nil }

    init(app: TutorialApp) { self.app = .passUnretained(app) }

    /// The app is being freed.
    func appEnded() { app = nil }

    func managerDelivers(_ manager: DeviceLocationManager, _ updates: [LocationUpdate]) {
        app?._withUnsafeGuaranteedRef { $0.received(updates) }
    }

    func managerPaused(_ manager: DeviceLocationManager) {
        app?._withUnsafeGuaranteedRef { $0.paused() }
    }
}
