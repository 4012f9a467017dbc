/// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)` (iOS 14+): full accuracy granted
/// for now, until the app is no longer in use; the user's own choice in Settings replaces it. A
/// pure state machine that answers in the device's actions (``DeviceAction``). The rules:
///
/// - "The request always fails with a CLError.Code.promptDeclined error in the following cases:
///   The Info.plist file doesn't have an entry for the given purposeKey value. The app is already
///   authorized for full accuracy. The app is in the background." Before iOS 14 there is no such
///   request, and a prompt already on screen declines it too.
/// - Otherwise the prompt comes up. Allowed, the app has full accuracy until it is no longer in
///   use ("Expiration is postponed while your app is actively in use"); denied, nothing changes;
///   left unanswered (the app left the screen), the request fails as declined. The completion
///   runs once the answer is carried out: each request's own (requests are numbered, so that one
///   declined while another's prompt is up does not take the other's completion).
/// - The user switching Precise Location in Settings makes the choice theirs: the end of use no
///   longer undoes it.
public struct TemporaryAccuracyStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case none
        /// The prompt for request `request` is up; its completion waits for the answer.
        case asking(request: Int)
        /// Full accuracy granted for now.
        case granted
    }

    /// Whether the request may bring up its prompt.
    public struct Request: Sendable, Hashable {
        /// The release has reduced accuracy (iOS 14+).
        public var hasReducedAccuracy: Bool
        /// The Info declares the purpose key (or declares no keys at all).
        public var purposeKeyDeclared: Bool
        public var accuracy: AccuracyAuthorization
        public var inForeground: Bool
        /// A system alert is on screen.
        public var alertShowing: Bool

        public init(
            hasReducedAccuracy: Bool, purposeKeyDeclared: Bool, accuracy: AccuracyAuthorization, inForeground: Bool,
            alertShowing: Bool
        ) {
            self.hasReducedAccuracy = hasReducedAccuracy
            self.purposeKeyDeclared = purposeKeyDeclared
            self.accuracy = accuracy
            self.inForeground = inForeground
            self.alertShowing = alertShowing
        }
    }

    public enum Event: Sendable, Hashable {
        /// The app asks.
        case request(Request)
        /// The user answered the prompt (nil: the app left the screen over it).
        case answered(allow: Bool?)
        /// The app is no longer in use.
        case noLongerInUse
        /// The user switched Precise Location in Settings.
        case userChose
    }

    public private(set) var state: State = .none
    /// How many requests the app made: the next one is number `counter + 1`.
    public private(set) var counter = 0

    public init() {}

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .request(let r):
            counter += 1
            if let declined = Self.declined(r) {
                return [
                    .record(.prompt(prompt: .temporaryFullAccuracy, phase: .declined, answer: declined)),
                    .call(
                        .temporaryFullAccuracyCompletion(
                            LocationError(.promptDeclined, reason: declined.rawValue), request: counter)),
                ]
            }
            state = .asking(request: counter)
            return [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .shown, answer: nil)),
                .post(.showAlert(.temporaryFullAccuracy)),
            ]
        case .answered(let allow):
            guard case .asking(let request) = state else { return [] }
            state = .none
            guard let allow else {
                return [
                    .record(.prompt(prompt: .temporaryFullAccuracy, phase: .dismissed, answer: nil)),
                    .call(
                        .temporaryFullAccuracyCompletion(
                            LocationError(.promptDeclined, reason: "dismissed"), request: request)),
                ]
            }
            var actions: [DeviceAction] = [
                .record(.prompt(prompt: .temporaryFullAccuracy, phase: .answered, answer: allow ? .allow : .deny))
            ]
            if allow {
                state = .granted
                actions.append(.post(.authorization(.setPreciseLocation(true))))
            }
            actions.append(.post(.temporaryFullAccuracyCompleted(request: request)))
            return actions
        case .noLongerInUse:
            guard state == .granted else { return [] }
            state = .none
            return [.post(.authorization(.setPreciseLocation(false)))]
        case .userChose:
            if state == .granted { state = .none }
            return []
        }
    }

    /// Why the request is declined at once, or nil when its prompt comes up.
    private static func declined(_ r: Request) -> PromptAnswer? {
        if !r.hasReducedAccuracy { return .notInThisVersion }
        if !r.purposeKeyDeclared { return .noSuchPurposeKey }
        if r.accuracy == .fullAccuracy { return .alreadyFullAccuracy }
        if !r.inForeground { return .notInForeground }
        if r.alertShowing { return .promptAlreadyShowing }
        return nil
    }
}
