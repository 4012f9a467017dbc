/// `CLLocationUpdate.liveUpdates()` (iOS 17+): what the streams say besides locations, and the
/// gate a required service session puts on them. A pure state machine that answers in the
/// device's actions (``DeviceAction``). The rules (W12):
///
/// - `liveUpdates()` needs iOS 17; asked for before, the log says so and no stream starts.
/// - A stream starts the updates of the manager it was asked of (`CLLocationUpdate.liveUpdates()`
///   has a manager of its own); from notDetermined on screen it asks for When In Use, as the
///   implicit service session does.
/// - What a stream says besides locations comes from its own manager's updates: a diagnostic
///   (iOS 18) says why no location comes to that manager, each once until a location comes to it
///   again; a pause of that manager's updates is a stationary update (iOS 17).
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
        /// No location comes to manager `manager`, for this reason.
        case diagnostic(LiveUpdate.Diagnostic, manager: Int)
        /// A location reached manager `manager`'s updates: the diagnostic its streams showed is
        /// stale.
        case delivered(manager: Int)
        /// The managers whose live-update streams are open now (the app's code's streams; the
        /// scenario's listener counts as the first manager's).
        case listeners([Int])
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
    /// The managers whose streams are open, in order (the scenario's listener counts as the
    /// first's).
    public private(set) var listeners: [Int] = []
    /// The last diagnostic each manager's streams heard, until a location came to it.
    private var shown: [Int: LiveUpdate.Diagnostic] = [:]
    /// Whether the scenario's script listens (its `liveUpdates` action).
    public private(set) var scriptedListener = false

    public init(version: IOSVersion, requiresExplicitServiceSession: Bool) {
        self.version = version
        self.requiresExplicitServiceSession = requiresExplicitServiceSession
    }

    /// Whether the gate holds locations back.
    public var blocked: Bool { state == .blocked }
    /// Whether the app's code listens (its streams, or the scenario's listener).
    public var listening: Bool { !listeners.isEmpty }

    /// Whether manager `manager`'s streams are open.
    public func isListening(manager: Int) -> Bool { listeners.contains(manager) }

    /// The last diagnostic manager `manager`'s streams heard, until a location came to it. (Read
    /// for every fix: without streams there is nothing to hash.)
    public func lastDiagnostic(manager: Int) -> LiveUpdate.Diagnostic? { shown.isEmpty ? nil : shown[manager] }

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
            if blocked { return actions + diagnostic(.serviceSessionRequired, manager: manager) }
            if ask { actions.append(.post(.requestAuthorization(always: false))) }
            actions.append(.post(.startUpdates(manager: manager)))
            return actions
        case .diagnostic(let d, let manager):
            return diagnostic(d, manager: manager)
        case .delivered(let manager):
            shown[manager] = nil
            return []
        case .listeners(let managers):
            var open = Set(managers)
            if scriptedListener { open.insert(1) }
            listeners = open.sorted()
            // What closed streams heard is not news to a stream opened later.
            shown = shown.filter { open.contains($0.key) }
            return []
        case .scriptListens:
            scriptedListener = true
            if !listeners.contains(1) { listeners = ([1] + listeners).sorted() }
            return []
        case .appTerminated:
            listeners = []
            scriptedListener = false
            shown = [:]
            return gate(serviceSession: false, appRuns: false)
        }
    }

    private mutating func gate(serviceSession: Bool, appRuns: Bool) -> [DeviceAction] {
        let was = blocked
        state = version.major >= 18 && requiresExplicitServiceSession && !serviceSession ? .blocked : .open
        // Each listening manager's streams hear it; each one's updates start again.
        if blocked && !was {
            var said: [DeviceAction] = []
            for manager in listeners { said += diagnostic(.serviceSessionRequired, manager: manager) }
            return said
        }
        if !blocked && was && appRuns { return listeners.map { .post(.startUpdates(manager: $0)) } }
        return []
    }

    /// Says a diagnostic to manager `manager`'s streams once (until a location comes to it
    /// again).
    private mutating func diagnostic(_ d: LiveUpdate.Diagnostic, manager: Int) -> [DeviceAction] {
        guard version.major >= 18, d != shown[manager] else { return [] }
        shown[manager] = d
        return [
            .record(.liveUpdate(stationary: false, diagnostic: d, manager: manager)),
            .call(.liveDiagnostic(d, manager: manager)),
        ]
    }
}
