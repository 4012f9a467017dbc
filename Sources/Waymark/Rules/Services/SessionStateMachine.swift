/// Apple's session objects (iOS 17 and 18): the `CLBackgroundActivitySession`s and
/// `CLServiceSession`s the app holds. They end with the app's process.
///
/// A pure state machine: which sessions are held, by id. It answers in the device's actions
/// (``DeviceAction``): each session's audit events, and what it hands on (the live-update gate
/// checked again, a request for the authorization a service session asks for). The rules:
///
/// - A `CLBackgroundActivitySession` (iOS 17+) keeps the app in use in the background only when
///   it is started in use, with the `location` background mode: "Use CLBackgroundActivitySession
///   to start a background activity session that allows a when-in-use authorized app to receive
///   location updates or monitoring events". Otherwise it does nothing, and its event says why.
/// - A `CLServiceSession` (iOS 18+) held by the app asks for its authorization whenever the app
///   is on screen with the status at notDetermined and no alert up ("including automatically
///   re-asking as needed after temporary authorization lapses"); Always wins over When In Use.
public struct SessionStateMachine: Sendable, Hashable {
    /// The app when it starts a background activity session.
    public struct ActivityStart: Sendable, Hashable {
        public var version: IOSVersion
        public var appState: AppState
        /// The app's code runs.
        public var appRuns: Bool
        /// The Info declares the `location` background mode.
        public var locationMode: Bool
        public var inUse: Bool

        public init(version: IOSVersion, appState: AppState, appRuns: Bool, locationMode: Bool, inUse: Bool) {
            self.version = version
            self.appState = appState
            self.appRuns = appRuns
            self.locationMode = locationMode
            self.inUse = inUse
        }
    }

    public enum Event: Sendable, Hashable {
        /// `CLBackgroundActivitySession()`: its id is the next ``counter``.
        case startActivity(ActivityStart)
        /// `CLBackgroundActivitySession.invalidate()`.
        case invalidateActivity(id: Int)
        /// `CLServiceSession(authorization:)` on `version`, the app in state `app` (its code runs
        /// or not): its id is the next ``counter``.
        case startService(ServiceSession.Authorization, version: IOSVersion, app: AppState, appRuns: Bool)
        /// `CLServiceSession.invalidate()`.
        case invalidateService(id: Int)
        /// The held service sessions may ask for their authorization now: the app runs and is on
        /// screen (`canPrompt`), with the status `status` and no alert up.
        case askForAuthorization(canPrompt: Bool, status: AuthorizationStatus)
        /// The app's process ended.
        case appTerminated
    }

    /// The sessions the app holds.
    public enum State: Sendable, Hashable {
        /// None: no background activity session keeps the app in use, no service session asks.
        case none
        /// The background activity sessions started in use and not invalidated, and the service
        /// sessions, by id, with the authorization each asks for (not both empty).
        case holding(activity: Set<Int>, service: [Int: ServiceSession.Authorization])
    }

    public private(set) var state: State = .none
    /// The last session's id.
    public private(set) var counter = 0

    public init() {}

    /// The background activity sessions started in use and not invalidated.
    public var activity: Set<Int> {
        if case .holding(let activity, _) = state { activity } else { [] }
    }
    /// The service sessions held, by id, with the authorization each asks for.
    public var service: [Int: ServiceSession.Authorization] {
        if case .holding(_, let service) = state { service } else { [:] }
    }

    public var activitySessions: Int { activity.count }

    private mutating func hold(activity: Set<Int>, service: [Int: ServiceSession.Authorization]) {
        state = activity.isEmpty && service.isEmpty ? .none : .holding(activity: activity, service: service)
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .startActivity(let start):
            counter += 1
            let why = Self.inactive(start)
            if why == nil { hold(activity: activity.union([counter]), service: service) }
            return [.record(.session(kind: .backgroundActivity, action: why == nil ? .started : .ignored, reason: why))]
        case .invalidateActivity(let id):
            guard activity.contains(id) else { return [] }
            hold(activity: activity.subtracting([id]), service: service)
            return [.record(.session(kind: .backgroundActivity, action: .invalidated, reason: nil))]
        case .startService(let wanted, let version, let app, let appRuns):
            counter += 1
            guard version.major >= 18, appRuns else {
                let why: AuditReason = version.major < 18 ? .needsIOS18 : AuditReason(app)
                return [.record(.session(kind: .service, action: .ignored, reason: why))]
            }
            hold(activity: activity, service: service.merging([counter: wanted]) { $1 })
            return [
                .record(.session(kind: .service, action: .started, reason: AuditReason(wanted))),
                .post(.updateLiveGate), .post(.askForServiceSessionAuthorization),
            ]
        case .invalidateService(let id):
            guard let wanted = service[id] else { return [] }
            hold(activity: activity, service: service.filter { $0.key != id })
            return [
                .record(.session(kind: .service, action: .invalidated, reason: AuditReason(wanted))),
                .post(.updateLiveGate),
            ]
        case .askForAuthorization(let canPrompt, let status):
            guard !service.isEmpty, canPrompt, status == .notDetermined else { return [] }
            if service.values.contains(.always) { return [.post(.requestAuthorization(always: true))] }
            if service.values.contains(.whenInUse) { return [.post(.requestAuthorization(always: false))] }
            return []
        case .appTerminated:
            state = .none
            return []
        }
    }

    /// Why a background activity session does nothing, or nil when it keeps the app in use.
    private static func inactive(_ s: ActivityStart) -> AuditReason? {
        if s.version.major < 17 { return .needsIOS17 }
        if !s.appRuns { return AuditReason(s.appState) }
        if !s.locationMode { return .noLocationMode }
        if !s.inUse { return .notInUse }
        return nil
    }
}
