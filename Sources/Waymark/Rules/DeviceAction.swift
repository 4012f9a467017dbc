/// What the device's rules ask of the device: the one action type every rule machine returns.
///
/// The machines under `Rules/` hold every rule of iOS that Waymark models. None of them does
/// anything itself: each takes an event and returns actions, and the driver (``Simulation``)
/// carries them out, in order: it writes audit events, sets and cancels timers, hands events to
/// the rules, and runs the app's code. An action that hands an event on (``post(_:)``) is handled
/// before the actions after it, exactly as a call would be, so a list reads as the script of what
/// happens.
public enum DeviceAction: Sendable, Equatable {
    /// Write an event to the audit log, at the device's current time.
    case record(AuditEvent.Kind)
    /// Set a system timer; a later schedule of the same key replaces it.
    case schedule(TimerKey, at: Duration)
    /// Cancel a system timer.
    case cancel(TimerKey)
    /// Hand an event to the rules now, before the actions after this one.
    case post(DeviceEvent)
    /// Run the app's code (its delegate, its handlers), if it runs.
    case call(AppCall)
    /// One fix the location service decided: counted, and recorded with the app's state then.
    case decided(LocationServiceStateMachine.Outcome)
    /// Hand manager `manager` (its number in the process) the last `count` locations decided as
    /// delivered to it, in one `didUpdateLocations`.
    case deliver(count: Int, reason: FixReason, manager: Int)
    /// Send background transfer `task`'s upload to its server (the upload directory), then hand
    /// the rules ``DeviceEvent/uploadWritten(task:failure:)``.
    case sendUpload(task: Int)
    /// Fetch background download `task` from the device's network, keep what it answered for the
    /// app's session, then hand the rules ``DeviceEvent/downloadReceived(task:detail:)``.
    case receiveDownload(task: Int)
}

/// The app's code that the system runs: the app delegate's methods, the location manager
/// delegate's, and the handlers the app gave the system. The driver runs them in the app's
/// current process; an ended process runs nothing.
public enum AppCall: Sendable, Equatable {
    /// `application(_:didFinishLaunchingWithOptions:)`: a new process starts.
    case finishLaunching(inBackground: Bool, cause: LifecycleCause)
    /// `applicationDidBecomeActive(_:)`.
    case becomeActive
    /// `applicationWillEnterForeground(_:)`.
    case willEnterForeground
    /// `applicationWillResignActive(_:)`.
    case willResignActive
    /// `applicationWillTerminate(_:)`: the app is terminated while it runs.
    case willTerminate
    /// `applicationDidEnterBackground(_:)`.
    case didEnterBackground
    /// The process ended.
    case terminated(TerminationCause)
    /// `application(_:performFetchWithCompletionHandler:)`, for the fetch numbered `id`.
    case performFetch(id: Int)
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`, for push `id`.
    case remoteNotification(id: Int)
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)` after transfer `task`.
    case backgroundURLSessionEvents(task: Int)
    /// The expiration handlers of these `UIApplication` background tasks.
    case taskExpiration([Int])
    /// A `BGTaskScheduler` task begins: its launch handler runs.
    case scheduledTaskLaunch(id: Int, identifier: String, kind: TaskSchedulerStateMachine.Kind)
    /// A `BGTask`'s time is nearly over: its expiration handler runs (none set: the task is
    /// completed, unsuccessfully).
    case scheduledTaskExpiration(id: Int)
    /// A `BGTask` was completed: the app's object says so.
    case scheduledTaskEnded(id: Int)
    /// A `CLLocationManagerDelegate` method, for one manager or every manager of the process.
    case delegate(DelegateCall, to: Managers)
    /// A live update without a location (`CLLocationUpdate.liveUpdates`) for manager `manager`'s
    /// streams: a diagnostic (iOS 18).
    case liveDiagnostic(LiveUpdate.Diagnostic, manager: Int)
    /// The device is stationary: manager `manager`'s live updates say so, with its last location
    /// (iOS 17).
    case liveStationary(manager: Int)
    /// The process's update streams and monitors end (its sessions ended with it).
    case endStreams
    /// A `CLMonitor` event for the app's monitor of that name.
    case conditionEvent(monitor: String, identifier: String, state: MonitoringState)
    /// The completion of `requestTemporaryFullAccuracyAuthorization`.
    /// (`request`: the request's number, ``TemporaryAccuracyStateMachine/counter``.)
    case temporaryFullAccuracyCompletion(LocationError?, request: Int)
    /// A service's one location (`requestLocation()`, the significant-change service):
    /// `didUpdateLocations` of the manager numbered `manager` with it (the significant-change
    /// service's goes to the first).
    case serviceLocation(LocationUpdate, manager: Int)
}

/// Which of the process's location managers a delegate call goes to.
public enum Managers: Sendable, Hashable {
    /// The manager numbered so in the process (1 is the first created).
    case manager(Int)
    /// Every manager: authorization and the wake-up services are the app's, not one manager's.
    case all
}

/// A `CLLocationManagerDelegate` method, with what it carries.
public enum DelegateCall: Sendable, Equatable {
    case didChangeAuthorization
    case didFailWithError(LocationError)
    case didPauseLocationUpdates
    case didResumeLocationUpdates
    case didEnterRegion(CircularRegion)
    case didExitRegion(CircularRegion)
    case didDetermineState(RegionState, CircularRegion)
    case didStartMonitoring(CircularRegion)
    case monitoringDidFail(CircularRegion, LocationError)
    case didVisit(Visit)
}

/// The device's cancellable timers: at most one of each is pending.
public enum TimerKey: Hashable, Sendable {
    case gracePeriodEnd
    case taskWarning
    case taskDeadline
    case fetchWake
    case fetchDeadline
    /// The scripted user answers a system alert.
    case answer(SystemAlert)
    /// A location service's wake stops keeping the app running.
    case serviceWakeEnd
    case pushDeadline(Int)
    case scheduledTaskDeadline(Int)
    /// A `BGTask`'s expiration handler is due (the warning before its deadline).
    case scheduledTaskWarning(Int)
    /// The app has had its time to handle its URL session's events.
    case transferEventsDeadline
    /// A `BGTaskScheduler` request comes due.
    case taskRequestsDue
    /// A manager's `requestLocation()` had no location in time.
    case locationRequestTimeout(manager: Int)
    case transferDone(Int)
}

/// A system alert on screen: a permission prompt, or the alert to turn on Location Services.
public enum SystemAlert: Hashable, Sendable {
    case authorization(AuthorizationStateMachine.Prompt)
    case locationServices
    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`.
    case temporaryFullAccuracy
}
