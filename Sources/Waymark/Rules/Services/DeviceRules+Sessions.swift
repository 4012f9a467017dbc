/// The iOS 17 and 18 session objects (``SessionStateMachine``) and live updates
/// (``LiveUpdateStateMachine``).
extension DeviceRules {
    // MARK: - CLBackgroundActivitySession

    /// `CLBackgroundActivitySession()` (iOS 17+): it keeps the app in use in the background only
    /// when started in use, with the `location` background mode; otherwise it does nothing (a
    /// `session` event says why). Its id is ``SessionStateMachine/counter``.
    mutating func startActivitySession() -> [DeviceAction] {
        let id = sessions.nextID()
        let why: AuditReason? =
            if version.major < 17 {
                .needsIOS17
            } else if !appCodeRuns {
                AuditReason(appState)
            } else if !modes.contains(.location) {
                .noLocationMode
            } else if !isInUse {
                .notInUse
            } else {
                nil
            }
        if why == nil { sessions.activity.insert(id) }
        return [.record(.session(kind: .backgroundActivity, action: why == nil ? .started : .ignored, reason: why))]
    }

    mutating func invalidateActivitySession(_ id: Int) -> [DeviceAction] {
        guard sessions.activity.remove(id) != nil else { return [] }
        return [.record(.session(kind: .backgroundActivity, action: .invalidated, reason: nil))]
    }

    // MARK: - CLServiceSession

    /// `CLServiceSession(authorization:)` (iOS 18+): from notDetermined, on screen, it asks for
    /// what it wants; held, it asks again whenever the app becomes active with the status back at
    /// notDetermined (Allow Once lapsed). Its id is ``SessionStateMachine/counter``.
    mutating func startServiceSession(_ wanted: ServiceSession.Authorization) -> [DeviceAction] {
        let id = sessions.nextID()
        guard version.major >= 18, appCodeRuns else {
            return [
                .record(
                    .session(
                        kind: .service, action: .ignored,
                        reason: version.major < 18 ? .needsIOS18 : AuditReason(appState)))
            ]
        }
        sessions.service[id] = wanted
        return [.record(.session(kind: .service, action: .started, reason: AuditReason(wanted)))]
            + updateLiveGate() + [.post(.askForServiceSessionAuthorization)]
    }

    mutating func invalidateServiceSession(_ id: Int) -> [DeviceAction] {
        guard let wanted = sessions.service.removeValue(forKey: id) else { return [] }
        return [.record(.session(kind: .service, action: .invalidated, reason: AuditReason(wanted)))] + updateLiveGate()
    }

    /// A held session asks for what it wants when the status is notDetermined and the app can
    /// show a prompt.
    mutating func askForServiceSessionAuthorization() -> [DeviceAction] {
        guard !sessions.service.isEmpty, appCodeRuns else { return [] }
        guard appState.isForeground, authorization.status == .notDetermined, alerts.onScreen == nil else { return [] }
        let wanted = sessions.service.values
        if wanted.contains(.always) { return requestAuthorization(always: true) }
        if wanted.contains(.whenInUse) { return requestAuthorization(always: false) }
        return []
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
        sessions.end()
        conditions.created = []
        liveListeners = false
        liveUpdates.scriptedListener = false
        liveUpdates.lastDiagnostic = nil
        return [.call(.endStreams)] + updateLiveGate()
    }
}
