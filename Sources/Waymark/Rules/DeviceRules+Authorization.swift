/// Authorization (``AuthorizationStateMachine``), the system alerts that ask for it
/// (``AlertStateMachine``), the scripted user's answers, and temporary full accuracy.
extension DeviceRules {
    // MARK: - The app's requests

    /// `requestWhenInUseAuthorization()` / `requestAlwaysAuthorization()`.
    mutating func requestAuthorization(always: Bool) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let inForeground = appState.isForeground
        return authorization.handle(
            always ? .requestAlways(inForeground: inForeground) : .requestWhenInUse(inForeground: inForeground))
    }

    // MARK: - What follows authorization's actions

    /// What the app reads changed: its delegate hears of it now, or when it runs again ("Core
    /// Location always calls locationManagerDidChangeAuthorization(_:) when the user's action
    /// results in an authorization status change"); then the location service follows.
    mutating func authorizationChangeReported() -> [DeviceAction] {
        authorization.handle(.changeReported(appRuns: appCodeRuns, suspended: appState == .suspended))
    }

    // MARK: - System alerts and the scripted user's answers

    /// Puts an alert up, and schedules the scenario user's answer if there is one.
    mutating func show(_ alert: SystemAlert) -> [DeviceAction] {
        let answerAt = userAnswer(to: alert) != nil ? now + scenario.user.answerAfter : nil
        return alerts.show(alert, appInForeground: appState.isForeground, answerAt: answerAt)
    }

    /// Leaving the app or its termination dismisses an alert over it, unanswered.
    mutating func dismissAlertOnLeaving() -> [DeviceAction] {
        guard let alert = alerts.leave() else { return [] }
        var actions: [DeviceAction] = [.cancel(.answer(alert))]
        switch alert {
        case .authorization: actions += authorization.handle(.dismissPrompt)
        case .locationServices:
            actions.append(.record(.prompt(prompt: .locationServices, phase: .dismissed, answer: nil)))
        case .temporaryFullAccuracy: actions += temporaryAccuracy.handle(.answered(allow: nil))
        }
        return actions
    }

    /// The scenario user's answer to `alert`, and the event it makes.
    func userAnswer(to alert: SystemAlert) -> (text: PromptAnswer, event: AuthorizationStateMachine.Event?)? {
        let user = scenario.user
        switch alert {
        case .locationServices:
            return (.cancel, nil)
        case .temporaryFullAccuracy:
            return user.temporaryFullAccuracy.map { ($0 ? .allow : .deny, nil) }
        case .authorization(.whenInUse):
            // An answer the release does not offer leaves the prompt unanswered.
            if user.whenInUse == .allowOnce && !version.hasAllowOnceAndProvisionalAlways { return nil }
            return user.whenInUse.map { (PromptAnswer($0), .answerWhenInUse($0)) }
        case .authorization(.always):
            return user.always.map { (PromptAnswer($0), .answerAlways($0)) }
        case .authorization(.alwaysOrWhenInUse):
            // Up to iOS 12: Don't Allow, else the Always answer, else While Using.
            if user.whenInUse == .dontAllow { return (.dontAllow, .answerAlwaysOrWhenInUse(.denied)) }
            if let always = user.always {
                return always == .changeToAlways
                    ? (.allowAlways, .answerAlwaysOrWhenInUse(.authorizedAlways))
                    : (.allowWhileUsing, .answerAlwaysOrWhenInUse(.authorizedWhenInUse))
            }
            if user.whenInUse != nil { return (.allowWhileUsing, .answerAlwaysOrWhenInUse(.authorizedWhenInUse)) }
            return nil
        }
    }

    /// The scripted user answers `alert`.
    mutating func answer(_ alert: SystemAlert) -> [DeviceAction] {
        if alert == .temporaryFullAccuracy {
            guard let allow = scenario.user.temporaryFullAccuracy else { return [] }
            return alerts.hide(alert) + [.post(.temporaryFullAccuracyAnswered(allow))]
        }
        guard let (text, event) = userAnswer(to: alert) else { return [] }
        return answer(alert, text, event)
    }

    /// The system alert waiting for the user: the one on screen, else an authorization prompt
    /// that waits for the app to come back on screen.
    public var promptWaiting: SystemAlert? {
        alerts.onScreen ?? authorization.pendingPrompt.map(SystemAlert.authorization)
    }

    /// The user taps `button` on the alert waiting for them (``promptWaiting``); nil when there is
    /// none, or it has no such button.
    public mutating func tap(_ button: PromptAnswer) -> [DeviceAction]? {
        guard let alert = promptWaiting else { return nil }
        switch (alert, button) {
        case (.temporaryFullAccuracy, .allow), (.temporaryFullAccuracy, .deny):
            return [.cancel(.answer(alert))] + alerts.hide(alert)
                + [.post(.temporaryFullAccuracyAnswered(button == .allow))]
        case (.locationServices, .cancel):
            return [.cancel(.answer(alert))] + answer(alert, .cancel, nil)
        case (.authorization(.whenInUse), .allowOnce) where version.hasAllowOnceAndProvisionalAlways:
            return answer(alert, button, .answerWhenInUse(.allowOnce))
        case (.authorization(.whenInUse), .allowWhileUsing):
            return answer(alert, button, .answerWhenInUse(.allowWhileUsing))
        case (.authorization(.whenInUse), .dontAllow): return answer(alert, button, .answerWhenInUse(.dontAllow))
        case (.authorization(.always), .changeToAlways): return answer(alert, button, .answerAlways(.changeToAlways))
        case (.authorization(.always), .keepWhenInUse): return answer(alert, button, .answerAlways(.keepWhenInUse))
        case (.authorization(.alwaysOrWhenInUse), .allowAlways):
            return answer(alert, button, .answerAlwaysOrWhenInUse(.authorizedAlways))
        case (.authorization(.alwaysOrWhenInUse), .allowWhileUsing):
            return answer(alert, button, .answerAlwaysOrWhenInUse(.authorizedWhenInUse))
        case (.authorization(.alwaysOrWhenInUse), .dontAllow):
            return answer(alert, button, .answerAlwaysOrWhenInUse(.denied))
        default:
            return nil
        }
    }

    /// The user answers `alert` with `text`, which makes `event` (nil: the Location Services
    /// alert, which changes nothing).
    private mutating func answer(
        _ alert: SystemAlert, _ text: PromptAnswer, _ event: AuthorizationStateMachine.Event?
    ) -> [DeviceAction] {
        guard let event else {
            return [.record(.prompt(prompt: .locationServices, phase: .answered, answer: text))] + alerts.hide(alert)
        }
        guard case .authorization(let prompt) = alert, authorization.pendingPrompt == prompt else { return [] }
        var actions: [DeviceAction] = [
            .record(.prompt(prompt: AuthorizationStateMachine.name(prompt), phase: .answered, answer: text))
        ]
        actions += authorization.handle(event)
        actions += alerts.hide(alert)
        if prompt == .always { actions.append(.post(.alwaysPromptAnswered)) }
        return actions
    }

    // MARK: - Temporary full accuracy

    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`: declined at once in the
    /// cases Apple lists, else the prompt (``TemporaryAccuracyStateMachine``). A request made
    /// while the app's code does not run (a task of a suspended app, or of one being terminated)
    /// is one made in the background: "The request always fails with a
    /// CLError.Code.promptDeclined error in the following cases: … The app is in the background."
    mutating func requestTemporaryFullAccuracy(purposeKey: String) -> [DeviceAction] {
        temporaryAccuracy.handle(
            .request(
                .init(
                    hasReducedAccuracy: version.hasReducedAccuracy,
                    purposeKeyDeclared: scenario.info.temporaryUsageDescriptionKeys?.contains(purposeKey) ?? true,
                    accuracy: authorization.accuracy, inForeground: appCodeRuns && appState.isForeground,
                    alertShowing: alerts.onScreen != nil)))
    }
}
