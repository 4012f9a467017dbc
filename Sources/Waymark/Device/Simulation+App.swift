#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The system's side of the app's calls: `UIApplication`, `BGTaskScheduler`, the session
/// objects of iOS 17 and 18, and the location manager's calls. Each hands the rules an event.
extension Simulation {
    // MARK: - UIApplication

    /// `beginBackgroundTask(withName:expirationHandler:)`: ``BackgroundTaskIdentifier/invalid``
    /// when the app's code cannot run.
    @discardableResult
    public func beginBackgroundTask(reason: String = "app", expirationHandler: (() -> Void)? = nil)
        -> BackgroundTaskIdentifier
    {
        guard appCodeRuns, let process else { return .invalid }
        let actions = rules.handle(.beginBackgroundTask(name: reason))
        guard case .record(.backgroundTask(.began, let task?, _, _))? = actions.first else { return .invalid }
        if let expirationHandler { process.expirationHandlers[task] = expirationHandler }
        perform(actions)
        return BackgroundTaskIdentifier(rawValue: task)
    }

    /// `endBackgroundTask(_:)`.
    public func endBackgroundTask(_ task: BackgroundTaskIdentifier, reason: String = "app") {
        guard task != .invalid, appCodeRuns else { return }
        process?.expirationHandlers[task.rawValue] = nil
        perform(rules.handle(.endBackgroundTask(task.rawValue, name: reason)))
    }

    /// The app's outstanding background tasks, oldest first.
    public var backgroundTasks: [BackgroundTaskIdentifier] { rules.tasks.tasks.map(BackgroundTaskIdentifier.init) }

    /// `setMinimumBackgroundFetchInterval(_:)`.
    public func setMinimumBackgroundFetchInterval(_ interval: Scenario.FetchInterval) {
        let value: Duration? =
            switch interval {
            case .never: nil
            // A second at least: a zero interval would come due again in the same instant.
            case .minimum: max(.seconds(1), scenario.system.minimumFetchInterval)
            case .every(let d): max(.seconds(1), d)
            }
        perform(rules.handle(.setFetchInterval(value)))
    }

    /// Runs `work` after `delay`, as `DispatchQueue.main.asyncAfter` would in the app, if the
    /// app's process is running then. Unlike iOS, work that comes due while the app is suspended
    /// is dropped rather than run when it resumes.
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) {
        guard appCodeRuns, let process else { return }
        let id = process.nextWorkID()
        process.work[id] = work
        timers.schedule(.app(id: id, launch: process.number), at: now + max(.zero, delay))
    }

    /// Writes a `source` event to the audit log (format 4): something the location source did
    /// beside its fixes (a live receiver's gpsd connected, went away, went silent), at the
    /// simulation's current time.
    public func noteSource(_ action: SourceAction, detail: String? = nil) {
        record(.source(action: action, detail: detail))
    }

    /// Writes an `app` event to the audit log: something the app's code did, and why.
    public func log(_ action: String, detail: String? = nil) {
        record(.app(action: action, detail: detail))
    }

    /// Writes an event the app's code reports (the tutorial app's `arrivedWhileAway`).
    package func report(_ kind: AuditEvent.Kind) { record(kind) }

    /// What the app's background work synced, for the event that ends it (``TutorialApp``).
    package func noteFetch(synced: Int, reason: String?) { process?.note = AppNote(synced: synced, note: reason) }

    /// Uploads `locations` through the app's background URL session: the transfer goes on while
    /// the app is suspended or terminated by the system, and the app is woken to handle its
    /// completion. The file lands in ``uploadDirectory``, which stands in for the server.
    public func uploadInBackground(_ locations: [StoredLocation]) {
        guard appCodeRuns, !locations.isEmpty else { return }
        let actions = rules.handle(.upload(count: locations.count))
        uploads.payloads[rules.transfers.counter] = Self.payload(locations)
        perform(actions)
    }

    private static func payload(_ locations: [StoredLocation]) -> String {
        var text = ""
        for l in locations {
            text += "\(ValueFormatting.fixed(l.location.coordinate.latitude, decimals: 7)),"
            text += "\(ValueFormatting.fixed(l.location.coordinate.longitude, decimals: 7)),"
            text += "\(ValueFormatting.fixed(l.location.timestamp.timeIntervalSince1970, decimals: 3))\n"
        }
        return text
    }

    /// Starts a download of `url` in the app's background session `session`
    /// (`URLSessionConfiguration.background(withIdentifier:)`): it goes on while the app is
    /// suspended or terminated by the system, and the app hears of its end in its session
    /// (``takeFinishedDownloads(session:)``), woken or relaunched for it when `launchEvents`.
    /// The transfer's id, or nil when no app code runs.
    @discardableResult
    public func downloadInBackground(_ url: String, session: String, launchEvents: Bool = true) -> Int? {
        guard appCodeRuns else { return nil }
        let actions = rules.handle(.download(session: session, launchEvents: launchEvents))
        let task = rules.transfers.counter
        downloads.requests[task] = url
        downloads.sessions[task] = session
        perform(actions)
        return task
    }

    /// The downloads of background session `session` the network has answered and the app has
    /// not yet been given, oldest first; they are the app's from now on.
    public func takeFinishedDownloads(session: String) -> [FinishedDownload] {
        let taken = downloads.finished.filter { $0.session == session }
        downloads.finished.removeAll { $0.session == session }
        return taken
    }

    /// The background sessions with downloads the app has not yet been given.
    public var sessionsWithFinishedDownloads: Set<String> { Set(downloads.finished.map(\.session)) }

    /// The downloads of background session `session` the device still carries, by transfer id,
    /// with their URLs (an earlier process of the app may have started them).
    public func outstandingDownloads(session: String) -> [(task: Int, url: String)] {
        rules.transfers.downloads.filter { $0.value.session == session }.keys.sorted().map {
            ($0, downloads.requests[$0] ?? "")
        }
    }

    /// The app cancels background download `task` (`URLSessionTask.cancel()`).
    public func cancelDownload(_ task: Int) {
        guard appCodeRuns, rules.transfers.downloads[task] != nil else { return }
        downloads.requests[task] = nil
        perform(rules.handle(.cancelDownload(task: task)))
    }

    /// The identifier of the background session whose transfer `task` is, if it is a download.
    public func sessionIdentifier(ofTransfer task: Int) -> String? { downloads.sessions[task] }

    /// Whether the device's network is on (a request made now reaches ``network``).
    public var networkAvailable: Bool { rules.power.settings.network }

    /// Starts or stops the app's audio.
    public func setAudioPlaying(_ playing: Bool) { perform(rules.handle(.audio(playing: playing))) }

    /// The app's code raised a fatal error (an exception iOS raises): the app is terminated, and
    /// the audit log says why.
    package func crash(_ message: String) {
        record(.diagnostic(message: "fatal error in the app: \(message); the app is terminated"))
        lifecycleEvent(.terminate(.fatalError))
    }

    /// Whether the app's process registered a `BGTaskScheduler` launch handler for `identifier`.
    package func hasTaskHandler(_ identifier: String) -> Bool { process?.taskHandlers[identifier] != nil }

    // MARK: - BGTaskScheduler

    /// `BGTaskScheduler.shared` for the app.
    public var taskScheduler: BackgroundTaskScheduler { BackgroundTaskScheduler(simulation: self) }

    func registerTaskHandler(_ identifier: String, _ handler: @escaping (ScheduledTask) -> Void) -> Bool {
        guard appCodeRuns, let process else { return false }
        process.taskHandlers[identifier] = handler
        perform(rules.handle(.registerTaskHandler(identifier: identifier)))
        return true
    }

    func submitTaskRequest(_ request: TaskSchedulerStateMachine.Request) -> TaskSchedulerStateMachine.SubmitError? {
        perform(rules.handle(.submitTaskRequest(request)))
        return rules.scheduler.lastSubmitError
    }

    func cancelTaskRequests(_ identifier: String?) {
        perform(rules.handle(.cancelTaskRequests(identifier: identifier)))
    }

    // MARK: - CLBackgroundActivitySession, CLServiceSession, CLMonitor

    /// Starts a `CLBackgroundActivitySession` (iOS 17+), as the app's code would create one. It
    /// keeps the app in use in the background only when started in use, with the `location`
    /// background mode; otherwise it does nothing (a `session` event says why).
    @discardableResult
    public func startBackgroundActivitySession() -> BackgroundActivitySession {
        perform(rules.handle(.startActivitySession))
        return BackgroundActivitySession(simulation: self, id: rules.sessions.counter)
    }

    /// Starts a `CLServiceSession` (iOS 18+) asking for `authorization`: from notDetermined, on
    /// screen, it asks for it; held, it asks again whenever the app becomes active with the status
    /// back at notDetermined (Allow Once lapsed).
    @discardableResult
    public func startServiceSession(authorization wanted: ServiceSession.Authorization) -> ServiceSession {
        perform(rules.handle(.startServiceSession(wanted)))
        return ServiceSession(id: rules.sessions.counter, authorization: wanted, simulation: self)
    }

    func invalidate(_ session: BackgroundActivitySession) {
        perform(rules.handle(.invalidateActivitySession(id: session.id)))
        settle()
    }

    func invalidate(_ session: ServiceSession) { perform(rules.handle(.invalidateServiceSession(id: session.id))) }

    /// `CLMonitor(name)` (iOS 17+): the app's monitor of that name, with the conditions it
    /// already has; events that waited for the app's launch come now.
    public func monitor(named name: String) -> ConditionMonitor {
        let monitor = ConditionMonitor(name: name, simulation: self, process: process?.reference)
        let actions = rules.handle(.createMonitor(name: name))
        guard let process, !process.hasEnded, rules.conditions.created.contains(name) else {
            monitor.continuation.finish()
            perform(actions)
            return monitor
        }
        process.monitors[name]?.continuation.finish()
        process.monitors[name] = monitor
        perform(actions)
        return monitor
    }

    /// The names of the monitors whose conditions the system keeps.
    public var monitorNames: [String] { rules.conditions.names }

    func addCondition(
        _ condition: CircularRegion, identifier: String, to name: String, assuming assumed: RegionState = .unknown
    ) {
        perform(rules.handle(.addCondition(condition, identifier: identifier, monitor: name, assuming: assumed)))
    }

    func removeCondition(_ identifier: String, from name: String) {
        perform(rules.handle(.removeCondition(identifier: identifier, monitor: name)))
    }

    func conditionIdentifiers(of name: String) -> [String] {
        rules.conditions.monitors[name]?.regions.map(\.region.identifier) ?? []
    }

    // MARK: - The location manager's calls

    /// A manager the app's code created now: it belongs to the current process, or to the next
    /// one when no process runs.
    func managerCreated(_ manager: DeviceLocationManager) {
        if let process, !process.hasEnded {
            adopt(manager, into: process)
        } else {
            manager.wait(for: self)
            waitingManagers.append(manager)
        }
    }

    /// The manager numbered `number` in the current process made a call: the rules hear it.
    func managerCall(_ event: DeviceEvent) { perform(rules.handle(event)) }

    /// A manager's property changed.
    func managerSettingChanged(
        number: Int, _ name: ManagerSetting, _ value: String, _ settings: LocationServiceStateMachine.Settings
    ) {
        rules.setSettings(settings, manager: number)
        perform(rules.handle(.managerSetting(manager: number, name, value: value)))
    }

    /// Setting `allowsBackgroundLocationUpdates` without the `location` background mode is a
    /// fatal error that terminates the app, as on iOS.
    func managerMayAllowBackgroundUpdates() -> Bool {
        if scenario.info.backgroundModes.contains(.location) { return true }
        record(
            .diagnostic(
                message:
                    "allowsBackgroundLocationUpdates without the location background mode in the Info is a fatal error that terminates the app"
            ))
        lifecycleEvent(.terminate(.fatalError))
        return false
    }

    /// `liveUpdates()` asked for by manager `number`: whether the stream may start.
    func managerMayStartLiveUpdates() -> Bool {
        let (may, actions) = rules.mayStartLiveUpdates()
        perform(actions)
        return may
    }

    /// A live-update stream opened or closed: the rules learn whose streams are open (the
    /// scenario's listener is theirs to add).
    func liveListenersChanged() {
        var open: [Int] = []
        if let process, !process.hasEnded {
            open = process.liveManagers.filter { $0.manager.hasLiveStreams }.map(\.number)
        }
        perform(rules.handle(.liveListeners(open)))
    }

    /// A `CLMonitor` of an ended process (`process`), or made while no process ran (nil: before
    /// the first launch, or while the app object was made), was used: the audit log says so.
    func inertMonitorUsed(_ call: String, monitor name: String, process number: Int?) {
        let message =
            if let number {
                "\(call) on the CLMonitor \"\(name)\" of the app's process \(number), which has ended: it does nothing; the relaunched app must create the monitor again"
            } else {
                "\(call) on the CLMonitor \"\(name)\", made while no process of the app ran (before its launch, or while the app object was made): it does nothing; create the monitor in the app's code once it is launched"
            }
        record(.diagnostic(message: message))
    }

    /// A manager of an ended process was used: the audit log says so.
    func endedManagerUsed(_ call: String, process number: Int) {
        record(
            .diagnostic(
                message:
                    "\(call) on a location manager of the app's process \(number), which has ended: it does nothing; the relaunched app must create its own manager"
            ))
    }
}

// MARK: - Waiting for the app's asynchronous code

extension Simulation {
    /// Keeps `stream` in view for ``idle()``.
    func watch(_ stream: any ParkableStream) {
        streams.removeAll { $0.stream?.isOpen != true }
        streams.append(WeakStream(stream: stream))
    }

    /// The app's asynchronous work the device started (an `async` form of a delegate method):
    /// ``idle()`` waits for it.
    package func beginAppWork() { pendingAppWork += 1 }
    package func endAppWork() { pendingAppWork = max(0, pendingAppWork - 1) }

    /// Whether the app has handled everything the device gave it: every stream's reader has read
    /// all of it and waits for more, and no asynchronous delegate method is still running.
    public var isIdle: Bool {
        pendingAppWork == 0 && streams.allSatisfy { $0.stream?.isParked ?? true }
    }

    /// Waits until the app's asynchronous code has handled everything delivered so far: each
    /// stream's reader has taken every element and come back for more, and every `async` delegate
    /// method has returned. The app's code runs on the main actor, as on iOS: this lets the jobs
    /// queued there run, in order, until that holds, and at least ``idleTurns`` times, so that a
    /// task just started (a view model's, creating a `CLMonitor` and adding its conditions, or
    /// opening live updates) gets through its chain of `await`s to the device before time moves
    /// on. It waits on progress, never on a clock.
    public func idle(isolation: isolated (any Actor)? = #isolation) async {
        var turns = 0
        repeat {
            await Self.mainQueueTurn()
            turns += 1
        } while turns < Self.idleTurns || !isIdle
    }

    /// The fewest turns of the main queue ``idle(isolation:)`` lets run: each `await` that hops back to the
    /// main actor takes one.
    public static let idleTurns = 32

    /// Lets every job queued on the main actor before now run.
    private static func mainQueueTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Task { @MainActor in continuation.resume() }
        }
    }
}

extension Simulation {
    /// The user taps `button` on the alert waiting for them (``DeviceRules/promptWaiting``).
    /// Stops the program with a message when there is none, or it has no such button.
    public func tap(_ button: PromptAnswer) {
        let waiting = rules.promptWaiting
        guard let actions = rules.tap(button) else {
            preconditionFailure(
                waiting.map { "the \($0) alert has no \(button.rawValue) button" }
                    ?? "no alert waits for the user: nothing to tap \(button.rawValue) on")
        }
        perform(actions)
        settle()
    }
}
