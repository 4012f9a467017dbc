/// The audit log's words, as types: every event's action, decision and reason is a case of one of
/// these enums, whose raw value is the word the log writes (docs/audit-log.md). A typo is then a
/// compile error, not a golden-file change that re-recording would accept.
///
/// Words that are not Waymark's stay strings: the app's own log (``AuditEvent/Kind/app(action:detail:)``),
/// a background task's name as the app gave it, a diagnostic's sentence, a setting's value, and a
/// source's detail.

/// Why something the system decided went the way it did: the `reason` of the service, push,
/// task, audio, transfer, session and monitor events.
public enum AuditReason: String, Sendable, Hashable, Codable, CaseIterable {
    // The app's state, when it is the reason (`suspended`, `terminated`, …).
    case notRunning, inactive, active, background, suspended, terminated
    // The app's authorization and the device's settings.
    case notDetermined, restricted, denied, authorizedWhenInUse, authorizedAlways
    case locationServicesDisabled
    case notInUse
    case needsAlways
    // Background App Refresh and power (``PowerAndRefresh``).
    case lowPowerMode, backgroundAppRefreshOff, appBackgroundAppRefreshOff
    case requiresExternalPower, requiresNetworkConnectivity
    case noNetwork
    // The user.
    case userTerminated, userActive
    case appInForeground
    case foreground
    // Budgets and timers.
    case budget, timeout
    // The Info's background modes.
    case noAudioMode, noLocationMode, noRemoteNotificationMode
    // iOS releases.
    case needsIOS13, needsIOS17, needsIOS18
    // Services: the service that delivered, or why an event waits.
    case significantLocationChange, requestLocation, region, visit
    case awaitingRestart, awaitingMonitor
    /// An event that waited for the app was dropped: the app stopped its service first.
    case serviceStopped
    // Pushes.
    case alert, running, woken, held, newerHeld, throttled
    // BGTaskScheduler (its errors keep their names: ``TaskSchedulerStateMachine/SubmitError``).
    case unavailable, tooManyPendingTaskRequests, notPermitted, notRegistered
    // Region monitoring failures (``RegionMonitorStateMachine/Failure``).
    case limitReached, radiusTooLarge
    /// Region monitoring (regions, `CLMonitor` conditions) with Precise Location off.
    case reducedAccuracy
    // A CLServiceSession's authorization (``ServiceSession/Authorization``).
    case none, whenInUse, always
    /// The app's code did it (audio stopped by the app).
    case app
    /// A background upload could not be written; the event's detail says where and why.
    case cannotWrite

    /// An app state as a reason.
    public init(_ state: AppState) {
        switch state {
        case .notRunning: self = .notRunning
        case .inactive: self = .inactive
        case .active: self = .active
        case .background: self = .background
        case .suspended: self = .suspended
        }
    }

    /// An authorization status as a reason.
    public init(_ status: AuthorizationStatus) {
        switch status {
        case .notDetermined: self = .notDetermined
        case .restricted: self = .restricted
        case .denied: self = .denied
        case .authorizedWhenInUse: self = .authorizedWhenInUse
        case .authorizedAlways: self = .authorizedAlways
        }
    }

    /// A service session's authorization as a reason.
    public init(_ wanted: ServiceSession.Authorization) {
        switch wanted {
        case .none: self = .none
        case .whenInUse: self = .whenInUse
        case .always: self = .always
        }
    }
}

/// The outcome of the app's authorization request.
public enum AuthorizationRequestOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case prompted, ignored
}

/// A system alert about location.
public enum PromptKind: String, Sendable, Hashable, Codable, CaseIterable {
    case whenInUse, whenInUseForAlways, always, alwaysOrWhenInUse, locationServices, temporaryFullAccuracy
}

/// What happened to a prompt.
public enum PromptPhase: String, Sendable, Hashable, Codable, CaseIterable {
    case shown, answered, dismissed, declined
}

/// The user's answer to a prompt, or why a temporary full accuracy request was declined.
public enum PromptAnswer: String, Sendable, Hashable, Codable, CaseIterable {
    case allowOnce, allowWhileUsing, dontAllow, changeToAlways, keepWhenInUse, allowAlways
    /// The Location Services alert's Cancel.
    case cancel
    /// The temporary full accuracy prompt's answers.
    case allow, deny
    // Why a temporary full accuracy request was declined without a prompt.
    case notInThisVersion, noSuchPurposeKey, alreadyFullAccuracy, notInForeground, promptAlreadyShowing

    /// The When In Use prompt's answer.
    public init(_ answer: WhenInUseAnswer) {
        switch answer {
        case .allowOnce: self = .allowOnce
        case .allowWhileUsing: self = .allowWhileUsing
        case .dontAllow: self = .dontAllow
        }
    }

    /// The Always prompt's answer.
    public init(_ answer: AlwaysAnswer) {
        switch answer {
        case .changeToAlways: self = .changeToAlways
        case .keepWhenInUse: self = .keepWhenInUse
        }
    }
}

/// A location manager property the app set.
public enum ManagerSetting: String, Sendable, Hashable, Codable, CaseIterable {
    case desiredAccuracy, distanceFilter, allowsBackgroundLocationUpdates, pausesLocationUpdatesAutomatically
    case activityType, showsBackgroundLocationIndicator
}

/// Standard location updates.
public enum UpdatesAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, stopped
}

/// A `UIApplication` background task.
public enum BackgroundTaskAction: String, Sendable, Hashable, Codable, CaseIterable {
    case began, ended, expiring
}

/// Background fetch.
public enum FetchAction: String, Sendable, Hashable, Codable, CaseIterable {
    case began, completed, expired, deferred, skipped
}

/// Why updates paused.
public enum PauseReason: String, Sendable, Hashable, Codable, CaseIterable {
    case stationary
}

/// Why paused updates resumed.
public enum ResumeReason: String, Sendable, Hashable, Codable, CaseIterable {
    case appRestarted
}

/// What a location source did beside its fixes (a live receiver's gpsd).
public enum SourceAction: String, Sendable, Hashable, Codable, CaseIterable {
    case connected, unreachable, outage, stale, receiving, timeJump, implausibleTime, overlongLine, backlogOverflow
    /// gpsd's own notices: an `ERROR` report, a `DEVICE` activated or deactivated.
    case gpsdError, deviceActivated, deviceDeactivated
    /// Fixes gpsd marked simulated (status 8) are left out.
    case simulated
}

/// A location service other than standard updates.
public enum LocationServiceName: String, Sendable, Hashable, Codable, CaseIterable {
    case significantLocationChange, requestLocation
}

/// What a location service, or one of its locations, did.
public enum ServiceLocationAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, stopped, requested, failed, cancelled, delivered, held, dropped

    /// A service location's decision as the action.
    public init(_ decision: ServiceDecision) {
        switch decision {
        case .delivered: self = .delivered
        case .held: self = .held
        case .dropped: self = .dropped
        }
    }
}

/// What became of a service's event.
public enum ServiceDecision: String, Sendable, Hashable, Codable, CaseIterable {
    case delivered, held, dropped
}

/// Region monitoring.
public enum RegionAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, failed, stopped, entered, exited, determined
}

/// The visits service.
public enum VisitAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, stopped, arrival, departure
}

/// A push notification.
public enum PushAction: String, Sendable, Hashable, Codable, CaseIterable {
    case received, delivered, completed, expired, held, discarded, dropped
}

/// A `BGTaskScheduler` request and its task.
public enum ScheduledTaskAction: String, Sendable, Hashable, Codable, CaseIterable {
    case submitted, rejected, cancelled, waiting, began, expiring, completed, expired, ended, dropped
}

/// Audio playback.
public enum AudioAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, stopped
}

/// A background URL session's transfer.
public enum TransferAction: String, Sendable, Hashable, Codable, CaseIterable {
    case scheduled, completed, failed, cancelled, eventsHandled, eventsTimedOut
}

/// Apple's session objects: `CLBackgroundActivitySession` and `CLServiceSession`.
public enum SessionKind: String, Sendable, Hashable, Codable, CaseIterable {
    case backgroundActivity, service
}

/// What became of such a session.
public enum SessionAction: String, Sendable, Hashable, Codable, CaseIterable {
    case started, invalidated, ignored
}

/// A `CLMonitor` condition.
public enum MonitorAction: String, Sendable, Hashable, Codable, CaseIterable {
    case added, removed, failed, satisfied, unsatisfied

    /// A condition's new state as the action (`unknown` and `unmonitored` are never written).
    init(_ state: MonitoringState) { self = state == .satisfied ? .satisfied : .unsatisfied }
}
