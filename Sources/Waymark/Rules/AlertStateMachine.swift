/// The system alert over the app, if any: a permission prompt, the alert to turn on Location
/// Services, the temporary full accuracy prompt. An alert over an app on screen makes it
/// inactive until it goes; leaving the app (or its end) dismisses it unanswered. The scenario's
/// user answers after ``Scenario/User/answerAfter``.
///
/// A pure state machine; what an answer means is the authorization's and the accuracy's rules.
public struct AlertStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case none
        case onScreen(SystemAlert)
    }

    public private(set) var state: State = .none

    /// The alert on screen over the app.
    public var onScreen: SystemAlert? { if case .onScreen(let alert) = state { alert } else { nil } }

    /// Puts `alert` up: over the app when it is on screen (the app becomes inactive), and
    /// schedules the user's answer when there is one (`answerAfter`).
    mutating func show(_ alert: SystemAlert, appInForeground: Bool, answerAt: Duration?) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        if appInForeground && onScreen == nil {
            state = .onScreen(alert)
            actions.append(.post(.lifecycle(.showAlert)))
        }
        if let answerAt { actions.append(.schedule(.answer(alert), at: answerAt)) }
        return actions
    }

    /// Takes `alert` down (answered, or no longer asked).
    mutating func hide(_ alert: SystemAlert) -> [DeviceAction] {
        var actions: [DeviceAction] = [.cancel(.answer(alert))]
        guard onScreen == alert else { return actions }
        state = .none
        actions.append(.post(.lifecycle(.dismissAlert)))
        return actions
    }

    /// The user left the app, or it ended: the alert over it goes, unanswered. Returns it.
    mutating func leave() -> SystemAlert? {
        guard let alert = onScreen else { return nil }
        state = .none
        return alert
    }
}
