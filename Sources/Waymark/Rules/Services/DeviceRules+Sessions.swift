/// The iOS 17 and 18 session objects (``SessionStateMachine``) and live updates
/// (``LiveUpdateStateMachine``).
extension DeviceRules {
    // MARK: - Apple's sessions (``SessionStateMachine``)

    /// `CLBackgroundActivitySession()` (iOS 17+). Its id is ``SessionStateMachine/counter``.
    mutating func startActivitySession() -> [DeviceAction] {
        sessions.handle(
            .startActivity(
                .init(
                    version: version, appState: appState, appRuns: appCodeRuns, locationMode: modes.contains(.location),
                    inUse: isInUse)))
    }

    /// `CLServiceSession(authorization:)` (iOS 18+). Its id is ``SessionStateMachine/counter``.
    mutating func startServiceSession(_ wanted: ServiceSession.Authorization) -> [DeviceAction] {
        sessions.handle(.startService(wanted, version: version, app: appState, appRuns: appCodeRuns))
    }

    /// The held service sessions ask for what they want, if the app can show a prompt.
    mutating func askForServiceSessionAuthorization() -> [DeviceAction] {
        sessions.handle(
            .askForAuthorization(
                canPrompt: appCodeRuns && appState.isForeground && alerts.onScreen == nil,
                status: authorization.status))
    }

    // MARK: - Live updates

    /// With `NSLocationRequireExplicitServiceSession`, live updates carry no location without a
    /// session (iOS 18).
    mutating func updateLiveGate() -> [DeviceAction] {
        let blocked = version.major >= 18 && scenario.info.requiresExplicitServiceSession && sessions.service.isEmpty
        let was = liveUpdates.blocked
        liveUpdates.blocked = blocked
        if blocked && !was && liveListeners { return sendLiveDiagnostic(.serviceSessionRequired) }
        if !blocked && was && liveListeners && appCodeRuns { return startUpdates(manager: 1) }
        return []
    }

    /// Whether `liveUpdates()` may start (iOS 17+ and the app's code runs), with what the log
    /// says when it may not.
    public mutating func mayStartLiveUpdates() -> (Bool, [DeviceAction]) {
        guard version.major >= 17 else {
            return (false, [.record(.diagnostic(message: "liveUpdates() needs iOS 17 (this run models \(version))"))])
        }
        return (appCodeRuns, [])
    }

    /// `liveUpdates()` starts updates; from notDetermined it asks for When In Use, as the
    /// implicit service session does.
    mutating func startLiveUpdates(manager: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        var actions = updateLiveGate()
        if liveUpdates.blocked { return actions + sendLiveDiagnostic(.serviceSessionRequired) }
        if authorization.status == .notDetermined && appState.isForeground {
            actions.append(.post(.requestAuthorization(always: false)))
        }
        actions.append(.post(.startUpdates(manager: manager)))
        return actions
    }

    /// The scenario's script listens to live updates.
    mutating func listenScripted() { liveUpdates.scriptedListener = true }

    /// Sends a diagnostic once (until a location comes again).
    mutating func sendLiveDiagnostic(_ diagnostic: LiveUpdate.Diagnostic) -> [DeviceAction] {
        guard version.major >= 18, diagnostic != liveUpdates.lastDiagnostic else { return [] }
        liveUpdates.lastDiagnostic = diagnostic
        return [.record(.liveUpdate(stationary: false, diagnostic: diagnostic)), .call(.liveDiagnostic(diagnostic))]
    }

    /// The sessions, streams and monitors of an app's process end with it.
    mutating func sessionsAppTerminated() -> [DeviceAction] {
        let ended = sessions.handle(.appTerminated)
        conditions.created = []
        liveListeners = false
        liveUpdates.scriptedListener = false
        liveUpdates.lastDiagnostic = nil
        return ended + [.call(.endStreams)] + updateLiveGate()
    }
}
