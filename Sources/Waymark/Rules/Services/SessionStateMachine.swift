/// Apple's session objects (iOS 17 and 18): the `CLBackgroundActivitySession`s and
/// `CLServiceSession`s the app holds. They end with the app's process.
///
/// A pure state machine: which sessions are held, by id.
public struct SessionStateMachine: Sendable, Hashable {
    /// The background activity sessions started in use and not invalidated.
    public internal(set) var activity: Set<Int> = []
    /// The service sessions held, by id, with the authorization each asks for.
    public internal(set) var service: [Int: ServiceSession.Authorization] = [:]

    var counter = 0

    public var activitySessions: Int { activity.count }

    /// A new session's id.
    mutating func nextID() -> Int {
        counter += 1
        return counter
    }

    mutating func end() {
        activity = []
        service = [:]
    }
}
