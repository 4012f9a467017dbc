/// `requestLocation()`: one location, then the request ends; `locationUnknown` if none comes
/// in time (``Scenario/SystemSettings/locationRequestTimeout``). Starting updates cancels it.
public struct LocationRequestStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// A request waits for a fix until `deadline`.
        case waiting(deadline: Duration)
    }

    public internal(set) var state: State = .idle
    public var isWaiting: Bool { state != .idle }
}
