/// Background pushes (`content-available`): which handlers run, against what budget, and the
/// one push the system holds when it throttles. A pure state machine that answers in the
/// device's actions (``DeviceAction``); ``ServiceDelivery/push(_:)`` decides where a push goes
/// (to the running app, waking or launching it, or dropped), and comes with the push. The rules:
///
/// - An alert push is for the user: the app's code does not run.
/// - Off screen, at most ``PushThrottle/perHour`` pushes wake the app in an hour: "The system may
///   throttle the delivery … it discards the older notification and only holds the newest one
///   … If the user launches the app, the system immediately delivers the held notification."
///   "If something force quits or kills the app, the system discards the held notification."
/// - The handler has ``budget`` (30 s) to call its completion while the app is off screen ("Your
///   app has 30 seconds to perform any tasks and call the specified completion handler block");
///   on screen the budget stops, and it starts afresh when the app leaves. A handler that
///   overruns it gets the app terminated.
public struct PushStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case none
        /// The system holds the newest throttled push until the user launches the app.
        case holding
    }

    public enum Event: Sendable, Hashable {
        /// A push arrives at `now`: `contentAvailable` for a background push, with where
        /// ``ServiceDelivery/push(_:)`` sends it, and whether the app is on screen.
        case receive(contentAvailable: Bool, ServiceDelivery.Outcome, inForeground: Bool, at: Duration)
        /// The app's push handler is to run (a push delivered, or the held one), for `reason`;
        /// `appRuns`: the app's code runs.
        case callHandler(reason: AuditReason, appRuns: Bool, inForeground: Bool, at: Duration)
        /// The user launched the app: the held push is delivered.
        case launched(appRuns: Bool, inForeground: Bool, at: Duration)
        /// Handler `id` called its completion with `result`, the app's note in `note`.
        case completed(id: Int, FetchResult, note: AppNote?)
        /// Handler `id`'s budget ran out.
        case deadlineDue(id: Int)
        /// The app came on screen: the handlers' budgets stop.
        case enteredForeground
        /// The app left the screen: the handlers still running get their budget afresh.
        case enteredBackground(at: Duration)
        /// The app's process ended.
        case appTerminated
    }

    /// The time a handler has off screen.
    public let budget: Duration
    public private(set) var state: State = .none
    /// The handlers that have not completed, by push id; true while the handler runs against
    /// its budget (off screen).
    public private(set) var handlers: [Int: Bool] = [:]
    private var counter = 0
    private var throttle: PushThrottle

    public init(perHour: Int, budget: Duration) {
        throttle = PushThrottle(perHour: perHour)
        self.budget = budget
    }

    public var isHolding: Bool { state == .holding }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .receive(let contentAvailable, let outcome, let inForeground, let now):
            guard contentAvailable else { return [Self.record(.received, reason: .alert)] }
            if case .drop(let reason) = outcome { return [Self.record(.dropped, reason: reason)] }
            guard inForeground || throttle.admit(at: now) else {
                var actions: [DeviceAction] = []
                if isHolding { actions.append(Self.record(.discarded, reason: .newerHeld)) }
                state = .holding
                actions.append(Self.record(.held, reason: .throttled))
                return actions
            }
            var actions: [DeviceAction] = []
            if outcome == .wake || outcome == .launch { actions.append(.post(.lifecycle(.wake(.remoteNotification)))) }
            let reason: AuditReason = outcome == .deliver ? (inForeground ? .foreground : .running) : .woken
            actions.append(.post(.callPushHandler(reason: reason)))
            return actions
        case .callHandler(let reason, let appRuns, let inForeground, let now):
            guard appRuns else { return [] }
            return callHandler(reason: reason, inForeground: inForeground, at: now)
        case .launched(let appRuns, let inForeground, let now):
            guard isHolding, appRuns else { return [] }
            state = .none
            return callHandler(reason: .held, inForeground: inForeground, at: now)
        case .completed(let id, let result, let note):
            guard handlers.removeValue(forKey: id) != nil else { return [] }
            return [
                .cancel(.pushDeadline(id)),
                .record(.push(action: .completed, result: result, reason: nil, detail: note?.note)),
            ]
        case .deadlineDue(let id):
            guard handlers[id] == true else { return [] }
            return [
                Self.record(.expired, reason: .budget),
                .post(.lifecycle(.terminate(.remoteNotificationBudgetExceeded))),
            ]
        case .enteredForeground:
            var actions: [DeviceAction] = []
            for (id, timed) in handlers.sorted(by: { $0.key < $1.key }) where timed {
                handlers[id] = false
                actions.append(.cancel(.pushDeadline(id)))
            }
            return actions
        case .enteredBackground(let now):
            var actions: [DeviceAction] = []
            for (id, timed) in handlers.sorted(by: { $0.key < $1.key }) where !timed {
                handlers[id] = true
                actions.append(.schedule(.pushDeadline(id), at: now + budget))
            }
            return actions
        case .appTerminated:
            var actions = handlers.keys.sorted().map { DeviceAction.cancel(.pushDeadline($0)) }
            handlers = [:]
            if isHolding {
                state = .none
                actions.append(Self.record(.discarded, reason: .terminated))
            }
            return actions
        }
    }

    /// The app's push handler runs, against its budget when off screen.
    private mutating func callHandler(reason: AuditReason, inForeground: Bool, at now: Duration) -> [DeviceAction] {
        counter += 1
        let id = counter
        handlers[id] = !inForeground
        return (inForeground ? [] : [.schedule(.pushDeadline(id), at: now + budget)]) + [
            Self.record(.delivered, reason: reason), .call(.remoteNotification(id: id)),
        ]
    }

    private static func record(_ action: PushAction, reason: AuditReason?) -> DeviceAction {
        .record(.push(action: action, result: nil, reason: reason))
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
