/// `requestTemporaryFullAccuracyAuthorization`: full accuracy granted for now, until the app is
/// no longer in use; the user's own choice in Settings replaces it.
public struct TemporaryAccuracyStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case none
        /// The prompt is up; the completion waits for the answer.
        case asking
        /// Full accuracy granted for now.
        case granted
    }

    public internal(set) var state: State = .none
}
