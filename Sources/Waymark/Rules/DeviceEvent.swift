/// Something that happens to the device, for its rules (``DeviceRules/handle(_:)``): the user's
/// and the system's actions, the app's calls into the system, timers, and what one rule hands
/// another (``DeviceAction/post(_:)``).
public enum DeviceEvent: Sendable, Equatable {
    // MARK: The user and the system

    /// The user opens, leaves, interrupts or swipes away the app; a service wakes it.
    case lifecycle(AppLifecycleStateMachine.Event)
    /// The user or the system changes a setting (authorization, Location Services, power…).
    case setting(Scenario.Action)
    /// A push notification arrives.
    case push(contentAvailable: Bool)
    /// A system timer came due.
    case timer(TimerKey)

    // MARK: The app's calls into the system

    /// `requestWhenInUseAuthorization()` / `requestAlwaysAuthorization()`.
    case requestAuthorization(always: Bool)
    /// `startUpdatingLocation()` on the manager numbered `manager` in its process.
    case startUpdates(manager: Int)
    /// `stopUpdatingLocation()`.
    case stopUpdates(manager: Int)
    /// The app set a manager property.
    case managerSetting(manager: Int, ManagerSetting, value: String)
    /// `startMonitoringSignificantLocationChanges()` / `stop…`.
    case significantChanges(start: Bool, manager: Int)
    /// `startMonitoring(for:)`.
    case startMonitoring(CircularRegion)
    /// `stopMonitoring(for:)`.
    case stopMonitoring(identifier: String)
    /// `requestState(for:)`.
    case requestState(identifier: String)
    /// `startMonitoringVisits()` / `stop…`.
    case visits(start: Bool)
    /// `requestLocation()` on the manager numbered `manager`.
    case requestLocation(manager: Int)
    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`.
    case requestTemporaryFullAccuracy(purposeKey: String)
    /// `beginBackgroundTask`, with the app's name for it.
    case beginBackgroundTask(name: String)
    /// `endBackgroundTask`.
    case endBackgroundTask(Int, name: String)
    /// `setMinimumBackgroundFetchInterval`.
    case setFetchInterval(Duration?)
    /// The app's fetch handler called its completion.
    case fetchCompleted(id: Int, FetchResult, note: AppNote?)
    /// The app's push handler called its completion.
    case pushCompleted(id: Int, FetchResult, note: AppNote?)
    /// `BGTaskScheduler.submit(_:)`.
    case submitTaskRequest(TaskSchedulerStateMachine.Request)
    /// `BGTaskScheduler.cancel(taskRequestWithIdentifier:)`; nil cancels all.
    case cancelTaskRequests(identifier: String?)
    /// `BGTaskScheduler.register(forTaskWithIdentifier:)` in this process.
    case registerTaskHandler(identifier: String)
    /// `BGTask.setTaskCompleted(success:)`.
    case completeScheduledTask(id: Int, success: Bool, note: AppNote?)
    /// The app starts or stops playing audio.
    case audio(playing: Bool)
    /// The app uploads `count` locations through its background URL session.
    case upload(count: Int)
    /// A finished upload was written where it goes, or not (nil: written).
    case uploadWritten(task: Int, failure: String?)
    /// The app starts a download in its background session `session` (`launchEvents`: the
    /// session's `sessionSendsLaunchEvents`).
    case download(session: String, launchEvents: Bool)
    /// The network answered download `task` (`detail`: what it answered, for the audit log).
    case downloadReceived(task: Int, detail: String?)
    /// The app cancelled download `task`.
    case cancelDownload(task: Int)
    /// The app called its URL session events' completion handler.
    case urlSessionEventsHandled(task: Int)
    /// `CLBackgroundActivitySession()`: its id is the sessions machine's next number (`SessionStateMachine.counter`).
    case startActivitySession
    /// `CLBackgroundActivitySession.invalidate()`.
    case invalidateActivitySession(id: Int)
    /// `CLServiceSession(authorization:)`: its id is the sessions machine's next number (`SessionStateMachine.counter`).
    case startServiceSession(ServiceSession.Authorization)
    /// `CLServiceSession.invalidate()`.
    case invalidateServiceSession(id: Int)
    /// `CLLocationUpdate.liveUpdates()`: a stream begins.
    case startLiveUpdates(manager: Int)
    /// The app's live-update streams opened or closed: the managers whose streams are open now.
    case liveListeners([Int])
    /// `CLMonitor(name)`.
    case createMonitor(name: String)
    /// `CLMonitor.add(_:identifier:)`.
    case addCondition(CircularRegion, identifier: String, monitor: String, assuming: RegionState = .unknown)
    /// `CLMonitor.remove(_:)`.
    case removeCondition(identifier: String, monitor: String)
    /// The app has handled a `CLMonitor` event (it asked for the next): the condition's record
    /// holds it.
    case conditionEventHandled(ConditionEvent, monitor: String)

    // MARK: What one rule hands another

    /// The app entered the foreground: budgets stop, tasks end, held fixes wait for activation.
    case appWillEnterForeground
    /// The app's state changed (a step of the lifecycle, carried out).
    case appStateChanged(from: AppState, to: AppState, cause: LifecycleCause)
    /// The app became active.
    case appBecameActive
    /// A fix manager `manager`'s updates dropped is a diagnostic for its live updates (iOS 18).
    case liveDiagnostic(LiveUpdate.Diagnostic, manager: Int)
    /// A location reached manager `manager`'s updates: a diagnostic its live updates showed is
    /// stale.
    case liveUpdateDelivered(manager: Int)
    /// The app entered the background.
    case appEnteredBackground
    /// The app was suspended.
    case appSuspended
    /// The app's process ended.
    case appTerminated(TerminationCause)
    /// A new process finished launching.
    case appLaunched(inBackground: Bool)
    /// A suspended app runs again in the background; held fixes come now or on activation.
    case appResumed(LifecycleCause)
    /// The authorization machine's actions, carried out: prompts, changes, what follows them.
    case authorization(AuthorizationStateMachine.Event)
    /// The location service's event, with the context computed when it is handled.
    case location(LocationEvent)
    /// A location service's event (significant change, region, visit, condition) to route.
    case serviceEvent(PendingServiceEvent)
    /// Hand over the service events waiting for the app, of a kind.
    case deliverPendingServiceEvents(PendingServiceEvent.Kind?)
    /// A service woke the app: it runs for a few seconds.
    case openServiceWake
    /// Run the due `BGTaskScheduler` requests that may run now.
    case runDueTasks
    /// The live-update gate (`NSLocationRequireExplicitServiceSession`) is checked again.
    case updateLiveGate
    /// The full accuracy granted for now ends.
    case endTemporaryFullAccuracy
    /// A scripted alert's answer, or the app leaving it: the alert goes.
    case alertDismissedOnLeaving
    /// A held service session asks for its authorization.
    case askForServiceSessionAuthorization
    /// The held push goes to the app now that the user launched it.
    case deliverHeldPush
    /// The app's launch code has run.
    case launchFinished
    /// The background tasks' budget stops (the app came on screen).
    case tasksEnteredForeground
    /// The background tasks' budget starts (the app left the screen).
    case tasksEnteredBackground
    /// A `BGTask`'s time is nearly over, or the user came back during a processing task.
    case scheduledTaskWarning(id: Int, reason: AuditReason?)
    /// A processing task still running when the user came back ends unsuccessfully.
    case completeScheduledTaskIfRunning(id: Int)
    /// The user swiped the app away in the app switcher (it was running or not).
    case swipedAway(wasRunning: Bool)
    /// A system alert goes up (over the app when it is on screen), its scripted answer scheduled.
    case showAlert(SystemAlert)
    /// A system alert goes away, answered or no longer asked.
    case hideAlert(SystemAlert)
    /// What the app reads changed: its delegate, then the location service, hear of it.
    case authorizationChangeReported
    /// The Always prompt went away: the event held for it follows what the user now has.
    case alwaysPromptGone
    /// The user answered the Always prompt.
    case alwaysPromptAnswered
    /// The user answered the temporary full accuracy prompt.
    case temporaryFullAccuracyAnswered(Bool)
    /// Temporary full accuracy request `request` is over: its completion runs.
    case temporaryFullAccuracyCompleted(request: Int)
    /// The app's push handler runs.
    case callPushHandler(reason: AuditReason)
    /// The timer for the next `BGTaskScheduler` request is set.
    case scheduleNextTaskCheck
    /// A due request runs: the app is woken or launched for it.
    case startScheduledTask(TaskSchedulerStateMachine.Request)
    /// Its launch handler runs.
    case launchScheduledTask(TaskSchedulerStateMachine.Request)
    /// The woken app handles its URL session's events.
    case handleURLSessionEvents(task: Int)
    /// A location service's event goes to the app's code.
    case deliverServiceEvent(PendingServiceEvent)

    /// The location service's events that need the context at the time they are handled.
    public enum LocationEvent: Sendable, Equatable {
        case appEnteredForeground
        case appResumed
        case appTerminated
        case authorizationChanged
        case alwaysAnswered(granted: Bool)
        case runEnded
    }
}

/// What the app's code said about its background work, for the event that ends it: how many
/// locations it synced, and a note (an error) in its own words.
public struct AppNote: Sendable, Hashable {
    public var synced: Int
    public var note: String?

    public init(synced: Int, note: String?) {
        self.synced = synced
        self.note = note
    }
}
