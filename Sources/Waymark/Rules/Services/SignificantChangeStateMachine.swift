/// The significant-change location service (`startMonitoringSignificantLocationChanges()`): a
/// pure state machine that decides which fixes of the device become events.
///
/// It holds no clock and does no I/O; times and the app's state come with the events. It answers
/// in the device's actions (``DeviceAction``): its start and stop are audit events, and a
/// significant change is handed to the rules as a service event, whose delivery (to the running
/// app, waking or relaunching it, or dropped) is decided in one place for every location service
/// (``ServiceDelivery``). The rules:
///
/// - Starting the service reports `cached` at once when the owner passes one ("The first event to
///   be delivered is usually the most recently cached location event (if any) but may be a newer
///   event"); without one (the simulation passes none), the first fix after the start is the
///   first event.
/// - After that, a fix is an event when the device is at least ``distance`` (500 m) from the last
///   event and at least ``minimumInterval`` (5 minutes) has passed since it ("Apps can expect a
///   notification as soon as the device moves 500 meters or more from its previous notification.
///   It should not expect notifications more frequently than once every five minutes").
/// - The service keeps running while the app is suspended or terminated, until the app stops it.
public struct SignificantChangeStateMachine: Sendable, Hashable {
    /// Metres from the last event to the next.
    public static let distance = 500.0
    /// The least time between two events.
    public static let minimumInterval: Duration = .seconds(300)

    /// A fix of the device, as the service sees it.
    public struct Fix: Sendable, Hashable {
        public var location: Location
        public var index: Int
        public var segment: Int
        public init(location: Location, index: Int, segment: Int) {
            self.location = location
            self.index = index
            self.segment = segment
        }
    }

    public enum Event: Sendable, Hashable {
        /// The app, in state `app`, starts the service; `cached` is the device's most recent fix,
        /// if any.
        case start(at: Duration, cached: Fix?, app: AppState)
        /// The app, in state `app`, stops the service.
        case stop(app: AppState)
        /// A fix of the device (``observe(_:at:)`` is the same without building a ``Fix``).
        case fix(Fix, at: Duration)
    }

    public enum State: Sendable, Hashable {
        /// The app has not started the service, or stopped it.
        case stopped
        /// Started: the next fix is the first event.
        case awaitingFirst
        /// Started: the last event was `location`, at `at` (the service's most recent location,
        /// which a relaunched app's new managers start with).
        case reported(Location, at: Duration)
    }

    public private(set) var state: State = .stopped

    public init() {}

    public var isMonitoring: Bool { state != .stopped }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .start(let now, let cached, let app):
            guard !isMonitoring else { return [] }
            let started = Self.record(.started, app)
            guard let cached else {
                state = .awaitingFirst
                return [started]
            }
            state = .reported(cached.location, at: now)
            return [started, Self.report(cached)]
        case .stop(let app):
            guard isMonitoring else { return [] }
            state = .stopped
            return [Self.record(.stopped, app)]
        case .fix(let fix, let now):
            return observe(fix.location, at: now) ? [Self.report(fix)] : []
        }
    }

    /// The fix is a significant change: an event for the app.
    public static func report(_ fix: Fix) -> DeviceAction {
        .post(.serviceEvent(.significantChange(fix)))
    }

    private static func record(_ action: ServiceLocationAction, _ app: AppState) -> DeviceAction {
        .record(.serviceLocation(.init(service: .significantLocationChange, action: action, appState: app)))
    }

    /// The service's most recent location, if it has reported one since it started.
    public var lastReported: Location? {
        if case .reported(let location, _) = state { location } else { nil }
    }

    /// The hot path: whether a fix at `location` is an event (it then becomes the last one).
    public mutating func observe(_ location: Location, at now: Duration) -> Bool {
        let coordinate = location.coordinate
        switch state {
        case .stopped:
            return false
        case .awaitingFirst:
            break
        case .reported(let last, let at):
            guard now - at >= Self.minimumInterval else { return false }
            let (lower, upper) = Geodesic.distanceBounds(last.coordinate, coordinate)
            guard
                lower >= Self.distance
                    || (upper >= Self.distance && Geodesic.distance(last.coordinate, coordinate) >= Self.distance)
            else { return false }
        }
        state = .reported(location, at: now)
        return true
    }
}
