/// Background pushes (`content-available`): which handlers run, against what budget, and the
/// one push the system holds when it throttles ("only holds the newest one").
///
/// A pure state machine; ``ServiceDelivery/push(_:)`` decides where a push goes and
/// ``PushThrottle`` how many may wake the app in an hour.
public struct PushStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case none
        /// The system holds the newest throttled push until the user launches the app.
        case holding
    }

    public private(set) var state: State = .none
    /// The handlers that have not completed, by push id; true while the handler runs against
    /// its budget (off screen).
    public internal(set) var handlers: [Int: Bool] = [:]
    var counter = 0
    var throttle: PushThrottle

    public init(perHour: Int) { throttle = PushThrottle(perHour: perHour) }

    public var isHolding: Bool { state == .holding }
    mutating func hold() { state = .holding }
    mutating func release() { state = .none }

    /// A new handler's id.
    mutating func nextID() -> Int {
        counter += 1
        return counter
    }
}

/// The system's budget of background pushes: at most ``perHour`` wake the app in any hour
/// (Apple: "don't try to send more than two or three per hour"; the system "may throttle the
/// delivery"). A pure value: times come with the calls.
public struct PushThrottle: Sendable, Hashable {
    public let perHour: Int
    private var recent: [Duration] = []

    public init(perHour: Int) { self.perHour = perHour }

    /// Whether a push at `now` may wake the app; if so, it is counted.
    public mutating func admit(at now: Duration) -> Bool {
        recent.removeAll { now - $0 >= .seconds(3600) }
        guard recent.count < perHour else { return false }
        recent.append(now)
        return true
    }
}
