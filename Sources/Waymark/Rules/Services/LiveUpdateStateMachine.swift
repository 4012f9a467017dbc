/// `CLLocationUpdate.liveUpdates()` (iOS 17+): what the streams say besides locations, and the
/// gate a required service session puts on them. A pure state machine that answers in the
/// device's actions (``DeviceAction``). The rules (W12):
///
/// - `liveUpdates()` needs iOS 17; asked for before, the log says so and no stream starts.
/// - A stream starts the first manager's updates; from notDetermined on screen it asks for When
///   In Use, as the implicit service session does.
/// - From iOS 18 a diagnostic says why no location comes, each once until a location comes again.
/// - With `NSLocationRequireExplicitServiceSession` (iOS 18), Core Location does not set up the
///   implicit session: without a `CLServiceSession` held the streams carry no location, and say
///   `serviceSessionRequired` when someone listens. A session taken again lets them flow: updates
///   start again.
/// - The streams end with the app's process.
public struct LiveUpdateStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// Locations reach the streams.
        case open
        /// The Info requires a service session and none is held: no location reaches them.
        case blocked
    }

    public enum Event: Sendable, Hashable {
        /// The gate is looked at again: whether the app holds a `CLServiceSession`, and whether
        /// its code runs.
        case gate(serviceSession: Bool, appRuns: Bool)
        /// `liveUpdates()` on manager `manager`, the app's code running or not; `askForAuthorization`:
        /// the status is notDetermined and the app on screen.
        case start(manager: Int, serviceSession: Bool, appRuns: Bool, askForAuthorization: Bool)
        /// No location comes, for this reason.
        case diagnostic(LiveUpdate.Diagnostic)
        /// A location reached the first manager's updates: the diagnostic shown is stale.
        case delivered
        /// The app's streams opened or all closed.
        case listening(Bool)
        /// The scenario's script listens (its `liveUpdates` action).
        case scriptListens
        /// The app's process ended: its streams end; with no service session the gate is looked
        /// at again.
        case appTerminated
    }

    public let version: IOSVersion
    /// The Info's `NSLocationRequireExplicitServiceSession`.
    public let requiresExplicitServiceSession: Bool
    public private(set) var state: State = .open
    /// The last diagnostic the streams heard.
    public private(set) var lastDiagnostic: LiveUpdate.Diagnostic?
    /// Whether the app's code listens (its streams, or the scenario's listener).
    public private(set) var listening = false
    /// Whether the scenario's script listens (its `liveUpdates` action).
    public private(set) var scriptedListener = false

    public init(version: IOSVersion, requiresExplicitServiceSession: Bool) {
        self.version = version
        self.requiresExplicitServiceSession = requiresExplicitServiceSession
    }

    /// Whether the gate holds locations back.
    public var blocked: Bool { state == .blocked }

    /// Whether `liveUpdates()` may start: iOS 17+ and the app's code runs. What the log says when
    /// it may not comes with the answer.
    public func mayStart(appRuns: Bool) -> (Bool, [DeviceAction]) {
        guard version.major >= 17 else {
            return (false, [.record(.diagnostic(message: "liveUpdates() needs iOS 17 (this run models \(version))"))])
        }
        return (appRuns, [])
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .gate(let serviceSession, let appRuns):
            return gate(serviceSession: serviceSession, appRuns: appRuns)
        case .start(let manager, let serviceSession, let appRuns, let ask):
            guard appRuns else { return [] }
            var actions = gate(serviceSession: serviceSession, appRuns: appRuns)
            if blocked { return actions + diagnostic(.serviceSessionRequired) }
            if ask { actions.append(.post(.requestAuthorization(always: false))) }
            actions.append(.post(.startUpdates(manager: manager)))
            return actions
        case .diagnostic(let d):
            return diagnostic(d)
        case .delivered:
            lastDiagnostic = nil
            return []
        case .listening(let on):
            listening = on
            return []
        case .scriptListens:
            scriptedListener = true
            return []
        case .appTerminated:
            listening = false
            scriptedListener = false
            lastDiagnostic = nil
            return gate(serviceSession: false, appRuns: false)
        }
    }

    private mutating func gate(serviceSession: Bool, appRuns: Bool) -> [DeviceAction] {
        let was = blocked
        state = version.major >= 18 && requiresExplicitServiceSession && !serviceSession ? .blocked : .open
        if blocked && !was && listening { return diagnostic(.serviceSessionRequired) }
        if !blocked && was && listening && appRuns { return [.post(.startUpdates(manager: 1))] }
        return []
    }

    /// Says a diagnostic once (until a location comes again).
    private mutating func diagnostic(_ d: LiveUpdate.Diagnostic) -> [DeviceAction] {
        guard version.major >= 18, d != lastDiagnostic else { return [] }
        lastDiagnostic = d
        return [.record(.liveUpdate(stationary: false, diagnostic: d)), .call(.liveDiagnostic(d))]
    }
}
