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

    /// Live updates (``LiveUpdateStateMachine``) hear `event`.
    mutating func live(_ event: LiveUpdateStateMachine.Event) -> [DeviceAction] { liveUpdates.handle(event) }

    /// The live-update gate, looked at again (a service session started or ended).
    mutating func updateLiveGate() -> [DeviceAction] {
        live(.gate(serviceSession: !sessions.service.isEmpty, appRuns: appCodeRuns))
    }

    /// Whether `liveUpdates()` may start (iOS 17+ and the app's code runs), with what the log
    /// says when it may not.
    public func mayStartLiveUpdates() -> (Bool, [DeviceAction]) { liveUpdates.mayStart(appRuns: appCodeRuns) }

    /// `liveUpdates()` on manager `manager`.
    mutating func startLiveUpdates(manager: Int) -> [DeviceAction] {
        live(
            .start(
                manager: manager, serviceSession: !sessions.service.isEmpty, appRuns: appCodeRuns,
                askForAuthorization: authorization.status == .notDetermined && appState.isForeground))
    }

    /// The scenario's script listens to live updates.
    mutating func listenScripted() { _ = live(.scriptListens) }

    /// The sessions, streams and monitors of an app's process end with it.
    mutating func sessionsAppTerminated() -> [DeviceAction] {
        let ended = sessions.handle(.appTerminated) + conditions.handle(.appTerminated)
        return ended + [.call(.endStreams)] + live(.appTerminated)
    }
}
