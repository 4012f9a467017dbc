/// The app's background URL session: uploads that go on while the app is suspended or
/// terminated by the system, and the app woken to handle their completion ("if your app is no
/// longer running, your app is automatically relaunched in the background").
///
/// A pure state machine: uploads by id with how many locations each carries, downloads by id with
/// their session, and whether the app is handling its session's events.
public struct TransferStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// The app handles its session's events after transfer `task`; it runs until it calls
        /// the completion.
        case handlingEvents(task: Int)
    }

    public private(set) var state: State = .idle
    /// The uploads not yet completed, by id: how many locations each carries.
    public internal(set) var transfers: [Int: Int] = [:]
    /// The downloads not yet completed, by id (the app's `downloadTask(with:)` in a background
    /// session, issue 26).
    public internal(set) var downloads: [Int: Download] = [:]

    /// A download in a background session: the session's identifier, and whether it wakes or
    /// relaunches the app when it finishes (`sessionSendsLaunchEvents`, true by default).
    public struct Download: Sendable, Hashable {
        public var session: String
        public var launchEvents: Bool

        public init(session: String, launchEvents: Bool) {
            self.session = session
            self.launchEvents = launchEvents
        }
    }
    var counter = 0

    public var eventsPending: Bool { if case .handlingEvents = state { true } else { false } }
    mutating func handleEvents(task: Int) { state = .handlingEvents(task: task) }
    mutating func eventsDone() { state = .idle }

    mutating func nextID() -> Int {
        counter += 1
        return counter
    }
}
