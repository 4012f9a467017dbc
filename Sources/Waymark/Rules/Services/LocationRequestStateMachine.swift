/// One location manager's `requestLocation()`: a pure state machine. One location, then the request ends;
/// `locationUnknown` if none comes in time (``Scenario/SystemSettings/locationRequestTimeout``).
///
/// It holds no clock and does no I/O: times and what it needs of the app come with its events,
/// and it answers in the device's actions (``DeviceAction``). The rules:
///
/// - "Calling this method while location services are already running does nothing": a request
///   while standard updates run (not paused) is a diagnostic, and nothing waits.
/// - The first fix the app may receive answers the request, with the accuracy the manager's
///   `desiredAccuracy` and the app's accuracy authorization give; `didUpdateLocations` gets it,
///   and the request ends. A fix the app may not receive (Location Services off, no
///   authorization, the app not running, or, from iOS 13, a When In Use app out of use) is
///   recorded as dropped, and the request goes on waiting.
/// - No location before the timeout: the request fails with `locationUnknown`, which the app's
///   delegate hears if its code runs.
/// - Starting updates "cancels any pending request made using" `requestLocation()`; the app's
///   termination ends it silently.
///
/// Each of the app's managers has its own (`manager`, its number in the process): its request,
/// its `desiredAccuracy`, its delegate, and its own standard updates that cancel it.
public struct LocationRequestStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// A request waits for a fix until `deadline`.
        case waiting(deadline: Duration)
    }

    /// The app and what it may receive when a fix comes.
    public struct Situation: Sendable, Hashable {
        public var appState: AppState
        /// The app's code runs (neither suspended nor terminated, nor being terminated).
        public var appRuns: Bool
        /// The app is in use (on screen, in its grace period, or showing the location indicator).
        public var inUse: Bool
        /// What the app reads (`denied` with Location Services off).
        public var authorization: AuthorizationStatus
        public var isProvisionalAlways: Bool
        public var accuracy: AccuracyAuthorization
        public var locationServicesEnabled: Bool
        /// The manager's `desiredAccuracy`.
        public var desiredAccuracy: DesiredAccuracy

        public init(
            appState: AppState, appRuns: Bool, inUse: Bool, authorization: AuthorizationStatus,
            isProvisionalAlways: Bool, accuracy: AccuracyAuthorization, locationServicesEnabled: Bool,
            desiredAccuracy: DesiredAccuracy
        ) {
            self.appState = appState
            self.appRuns = appRuns
            self.inUse = inUse
            self.authorization = authorization
            self.isProvisionalAlways = isProvisionalAlways
            self.accuracy = accuracy
            self.locationServicesEnabled = locationServicesEnabled
            self.desiredAccuracy = desiredAccuracy
        }
    }

    public enum Event: Sendable, Hashable {
        /// The app, in state `app`, calls `requestLocation()` at `now`; `updatesRunning`: its
        /// standard updates run (and are not paused).
        case request(at: Duration, timeout: Duration, updatesRunning: Bool, app: AppState)
        /// The app, in state `app`, starts standard updates.
        case cancel(app: AppState)
        /// A fix of the device, the source's point `index` in `segment`.
        case fix(Location, index: Int, segment: Int, Situation)
        /// The timeout came; `appRuns`: the app's code runs.
        case timeout(app: AppState, appRuns: Bool)
        /// The app's process ended.
        case appTerminated
    }

    public let version: IOSVersion
    /// The manager's number in the app's process (1 is the first created).
    public let manager: Int
    public private(set) var state: State = .idle
    public var isWaiting: Bool { state != .idle }

    public init(version: IOSVersion, manager: Int = 1) {
        self.version = version
        self.manager = manager
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .request(let now, let timeout, let updatesRunning, let app):
            guard !updatesRunning else {
                return [.record(.diagnostic(message: "requestLocation() while standard updates run does nothing"))]
            }
            let deadline = now + timeout
            state = .waiting(deadline: deadline)
            return [
                record(.requested, app: app), .schedule(.locationRequestTimeout(manager: manager), at: deadline),
            ]
        case .cancel(let app):
            guard isWaiting else { return [] }
            state = .idle
            return [.cancel(.locationRequestTimeout(manager: manager)), record(.cancelled, app: app)]
        case .fix(let fix, let index, let segment, let s):
            guard isWaiting else { return [] }
            return answer(fix, index: index, segment: segment, s)
        case .timeout(let app, let appRuns):
            guard isWaiting else { return [] }
            state = .idle
            let error = LocationError(.locationUnknown, reason: "requestLocationTimeout")
            return [record(.failed, reason: .timeout, app: app), .record(.error(error))]
                + (appRuns ? [.call(.delegate(.didFailWithError(error), to: .manager(manager)))] : [])
        case .appTerminated:
            guard isWaiting else { return [] }
            state = .idle
            return [.cancel(.locationRequestTimeout(manager: manager))]
        }
    }

    /// Why the app may not receive a fix now, or nil when it may.
    private func blocked(_ s: Situation) -> AuditReason? {
        if !s.locationServicesEnabled { return .locationServicesDisabled }
        if !s.authorization.isAuthorized { return AuditReason(s.authorization) }
        if !s.appRuns { return AuditReason(s.appState) }
        if version.restrictsWhenInUseToInUse && (s.authorization == .authorizedWhenInUse || s.isProvisionalAlways)
            && !s.inUse
        {
            return .notInUse
        }
        return nil
    }

    private mutating func answer(_ fix: Location, index: Int, segment: Int, _ s: Situation) -> [DeviceAction] {
        if let reason = blocked(s) {
            return [
                .record(
                    .serviceLocation(
                        .init(
                            service: .requestLocation, action: .dropped, reason: reason, index: index,
                            segment: segment, appState: s.appState, location: fix, manager: manager)))
            ]
        }
        state = .idle
        let source = AccuracyModel.positioning(
            desiredAccuracy: s.desiredAccuracy, accuracy: s.accuracy, version: version)
        let delivered = AccuracyModel.apply(source, to: fix)
        return [
            .cancel(.locationRequestTimeout(manager: manager)),
            .record(
                .serviceLocation(
                    .init(
                        service: .requestLocation, action: .delivered, reason: .requestLocation, index: index,
                        segment: segment, appState: s.appState, location: delivered, authorization: s.authorization,
                        accuracy: s.accuracy, manager: manager))),
            .call(
                .serviceLocation(
                    LocationUpdate(
                        location: delivered, appState: s.appState, reason: .requestLocation, index: index,
                        segment: segment), manager: manager)),
        ]
    }

    private func record(_ action: ServiceLocationAction, reason: AuditReason? = nil, app: AppState) -> DeviceAction {
        .record(
            .serviceLocation(
                .init(service: .requestLocation, action: action, reason: reason, appState: app, manager: manager)))
    }
}
