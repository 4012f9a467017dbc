/// What the user allowed the app to do with location, as CoreLocation's `CLAuthorizationStatus`.
public enum AuthorizationStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case notDetermined
    /// Parental controls or a device policy forbid location; the app cannot change it.
    case restricted
    case denied
    case authorizedWhenInUse
    case authorizedAlways

    /// True for the two authorized statuses.
    public var isAuthorized: Bool { self == .authorizedWhenInUse || self == .authorizedAlways }
}

/// Whether the app gets precise or approximate positions, as `CLAccuracyAuthorization`.
public enum AccuracyAuthorization: String, Sendable, Hashable, Codable, CaseIterable {
    case fullAccuracy
    case reducedAccuracy
}

/// The Info.plist entries that govern location prompts.
public struct LocationUsageDescriptions: Sendable, Hashable, Codable {
    /// `NSLocationWhenInUseUsageDescription` is present.
    public var whenInUse: Bool
    /// `NSLocationAlwaysAndWhenInUseUsageDescription` is present.
    public var alwaysAndWhenInUse: Bool
    /// `NSLocationDefaultAccuracyReduced` is true: the prompt's Precise switch starts off.
    public var defaultsToReducedAccuracy: Bool

    public init(whenInUse: Bool = true, alwaysAndWhenInUse: Bool = false, defaultsToReducedAccuracy: Bool = false) {
        self.whenInUse = whenInUse
        self.alwaysAndWhenInUse = alwaysAndWhenInUse
        self.defaultsToReducedAccuracy = defaultsToReducedAccuracy
    }
}

/// The user's answer to the first prompt.
public enum WhenInUseAnswer: String, Sendable, Hashable, Codable, CaseIterable {
    /// Temporary When In Use, which ends when the app is no longer in use.
    case allowOnce
    case allowWhileUsing
    case dontAllow
}

/// The user's answer to the prompt that asks for Always.
public enum AlwaysAnswer: String, Sendable, Hashable, Codable, CaseIterable {
    case changeToAlways
    case keepWhenInUse
}

/// Location authorization as iOS grants it, version by version: a pure state machine.
///
/// It holds no clock and does no I/O: the owner feeds it events and carries out the actions it
/// returns, in the device's actions (``DeviceAction``): the audit events of requests, prompts and
/// changes, a prompt put up or taken down (``DeviceEvent/showAlert(_:)``,
/// ``DeviceEvent/hideAlert(_:)``), and, once what the app reads changed,
/// ``DeviceEvent/authorizationChangeReported`` for its delegate and the location service. The
/// rules:
///
/// - A prompt is shown only to an app in the foreground whose Info declares the matching usage
///   description; otherwise the request is ignored with a reason. Requests from a restricted
///   app show nothing.
/// - `requestWhenInUseAuthorization()` prompts only from `notDetermined`.
/// - From iOS 13, `requestAlwaysAuthorization()` from `notDetermined` shows the When In Use prompt
///   first; Allow While Using then gives *provisional* Always (the app sees `authorizedAlways`),
///   and the second prompt comes at the first event that needs Always. From (non-temporary) When
///   In Use it prompts at once. It works once: further calls have no effect, and it is ignored
///   after Allow Once. Up to iOS 12 it asks for Always at once (Always, While Using, Don't Allow).
/// - Allow Once (iOS 13+) is temporary When In Use: it reverts to `notDetermined` when the app is
///   no longer in use.
/// - A prompt the user leaves unanswered is dismissed when the app leaves the screen; the app
///   may ask again.
/// - `restricted` is a device setting (parental controls, management), not the user's answer;
///   while it holds, the app reads `restricted`.
/// - With Location Services off for the device the app reads `denied` (and its requests show
///   nothing); switching them on again restores what the user had chosen.
/// - Settings changes apply at once, and every change of what the app reads is reported.
///
/// Its state is one ``State``: the app's ``Grant`` (the status the user chose, with what makes
/// it Allow Once, provisional, or spends the one request for Always) and the prompt waiting over
/// it. The device's switches it reads (Location Services, the restriction, Precise Location) are
/// ``Settings`` beside it, and ``changedWhileSuspended`` is the report's memory, not the grant's.
public struct AuthorizationStateMachine: Sendable, Hashable {
    /// A system prompt.
    public enum Prompt: Sendable, Hashable {
        /// Allow Once / Allow While Using / Don't Allow; `forAlways` when the app asked for Always.
        case whenInUse(forAlways: Bool)
        /// Change to Always Allow / Keep Only While Using.
        case always
        /// Up to iOS 12, a request for Always from `notDetermined`: Always Allow / Only While Using
        /// / Don't Allow.
        case alwaysOrWhenInUse
    }

    /// Why a request or an answer had no effect.
    public enum IgnoredReason: String, Sendable, Hashable, Codable {
        case notInForeground
        case missingWhenInUseDescription
        case missingAlwaysDescription
        case alreadyDetermined
        case alwaysAlreadyRequested
        case temporaryAuthorization
        case promptAlreadyShowing
        case noPromptShowing
        /// The device restricts location (parental controls, management).
        case restricted
        /// `restricted` is set on the device, not chosen by the user.
        case notAUserChoice
        /// The iOS version has no such answer (Allow Once before iOS 13).
        case notInThisVersion
        /// Location Services are off for the device: the app reads `denied`, and its request shows
        /// nothing.
        case locationServicesOff
    }

    /// Something that happened to the app or the device.
    public enum Event: Sendable, Hashable {
        case requestWhenInUse(inForeground: Bool)
        case requestAlways(inForeground: Bool)
        case answerWhenInUse(WhenInUseAnswer)
        case answerAlways(AlwaysAnswer)
        /// The iOS 12 prompt for Always: the status the user chose.
        case answerAlwaysOrWhenInUse(AuthorizationStatus)
        /// The prompt on screen went away unanswered (the app left the screen or ended).
        case dismissPrompt
        /// The app used a power that needs Always (for example, a fix while not in use).
        case neededAlways
        /// The app is no longer in use (it left the foreground and its grace period ended).
        case appNoLongerInUse
        /// The user changed the app's authorization in Settings.
        case setAuthorization(AuthorizationStatus)
        /// The device's restriction (parental controls, management) went on or off.
        case setRestricted(Bool)
        /// The user switched Precise Location in Settings.
        case setPreciseLocation(Bool)
        /// The user switched Location Services for the whole device.
        case setLocationServices(Bool)
        /// What the app reads changed: its delegate hears of it now when its code runs (`appRuns`),
        /// or when it runs again after being suspended (`suspended`); the location service follows.
        case changeReported(appRuns: Bool, suspended: Bool)
        /// A suspended app runs again: its delegate hears of a change it missed.
        case resumed
        /// The app's process ended: a change it missed is nobody's now.
        case appTerminated
    }

    /// What the owner must do.
    /// What one event did, before it is said in the device's actions.
    private enum Step: Sendable, Hashable {
        case showPrompt(Prompt)
        case promptDismissed(Prompt)
        case statusChanged(from: AuthorizationStatus, to: AuthorizationStatus)
        case accuracyChanged(from: AccuracyAuthorization, to: AccuracyAuthorization)
        case locationServicesChanged(enabled: Bool)
        case ignored(IgnoredReason)
    }

    /// What the user granted the app, as the user left it.
    public enum Grant: Sendable, Hashable {
        /// Not asked yet, "Ask Next Time", or an Allow Once that ended. `alwaysAsked`: the app's
        /// one request for Always is spent (it stays spent after Allow Once ends).
        case notDetermined(alwaysAsked: Bool)
        /// While Using; `once`: Allow Once (iOS 13+), which ends when the app is no longer in use.
        case whenInUse(once: Bool, alwaysAsked: Bool)
        /// Always granted provisionally (iOS 13+, Allow While Using on a request for Always): the
        /// app reads `authorizedAlways` and the second prompt is still to come. `upgradeShown`:
        /// it is on screen or was answered.
        case provisionalAlways(upgradeShown: Bool)
        case always(alwaysAsked: Bool)
        case denied(alwaysAsked: Bool)

        /// The status the user chose.
        public var status: AuthorizationStatus {
            switch self {
            case .notDetermined: .notDetermined
            case .whenInUse: .authorizedWhenInUse
            case .provisionalAlways, .always: .authorizedAlways
            case .denied: .denied
            }
        }

        /// Whether the app's one request for Always is spent.
        public var alwaysAsked: Bool {
            switch self {
            case .notDetermined(let asked), .whenInUse(_, let asked), .always(let asked), .denied(let asked): asked
            case .provisionalAlways: true
            }
        }

        /// The grant the user sets as `status` in Settings (not provisional, not Allow Once).
        static func settled(_ status: AuthorizationStatus, alwaysAsked: Bool) -> Grant {
            switch status {
            case .notDetermined, .restricted: .notDetermined(alwaysAsked: alwaysAsked)
            case .authorizedWhenInUse: .whenInUse(once: false, alwaysAsked: alwaysAsked)
            case .authorizedAlways: .always(alwaysAsked: alwaysAsked)
            case .denied: .denied(alwaysAsked: alwaysAsked)
            }
        }

        /// This grant with the request for Always spent or not.
        func asking(always asked: Bool) -> Grant {
            switch self {
            case .notDetermined: .notDetermined(alwaysAsked: asked)
            case .whenInUse(let once, _): .whenInUse(once: once, alwaysAsked: asked)
            case .always: .always(alwaysAsked: asked)
            case .denied: .denied(alwaysAsked: asked)
            case .provisionalAlways: self
            }
        }
    }

    /// The machine's state: the app's grant, and the prompt over it while one waits for an answer.
    public enum State: Sendable, Hashable {
        case settled(Grant)
        case prompting(Prompt, over: Grant)

        /// The grant, whether or not a prompt is up.
        public var grant: Grant {
            switch self {
            case .settled(let grant), .prompting(_, let grant): grant
            }
        }

        /// The prompt waiting for an answer.
        public var prompt: Prompt? {
            if case .prompting(let prompt, _) = self { prompt } else { nil }
        }
    }

    /// The device's switches in Settings that authorization reads: not the user's grant to the
    /// app, and beside its state as power's switches are beside the lifecycle.
    public struct Settings: Sendable, Hashable {
        /// Location Services for the whole device.
        public var locationServicesEnabled: Bool
        /// The device restricts location (parental controls, management).
        public var isRestricted: Bool
        /// The app's Precise Location switch.
        public var accuracy: AccuracyAuthorization
    }

    public let descriptions: LocationUsageDescriptions
    public let version: IOSVersion
    /// The app's grant and the prompt waiting over it.
    public private(set) var state: State
    /// Location Services, the restriction and Precise Location.
    public private(set) var settings: Settings
    /// The status the app reads changed while it was suspended: its delegate hears of it when it
    /// runs again. It is the report's, not the grant's: the app's process ending forgets it.
    public private(set) var changedWhileSuspended = false

    /// What the user chose (or the initial setting), whatever the device says.
    public var userStatus: AuthorizationStatus { state.grant.status }
    public var accuracy: AccuracyAuthorization { settings.accuracy }
    public var locationServicesEnabled: Bool { settings.locationServicesEnabled }
    /// The device restricts location.
    public var isRestricted: Bool { settings.isRestricted }
    /// Always granted provisionally: the second prompt is still to come.
    public var isProvisionalAlways: Bool {
        if case .provisionalAlways = state.grant { true } else { false }
    }
    /// When In Use granted with Allow Once.
    public var isTemporary: Bool {
        if case .whenInUse(once: true, _) = state.grant { true } else { false }
    }
    /// The prompt on screen, waiting for an answer.
    public var pendingPrompt: Prompt? { state.prompt }

    /// `status` may be `restricted`, which sets the device's restriction.
    public init(
        descriptions: LocationUsageDescriptions, status: AuthorizationStatus = .notDetermined,
        accuracy: AccuracyAuthorization? = nil, locationServicesEnabled: Bool = true,
        version: IOSVersion = .newest
    ) {
        self.descriptions = descriptions
        self.version = version
        state = .settled(.settled(status, alwaysAsked: false))
        let accuracy: AccuracyAuthorization =
            version.hasReducedAccuracy
            ? accuracy ?? (descriptions.defaultsToReducedAccuracy ? .reducedAccuracy : .fullAccuracy) : .fullAccuracy
        settings = Settings(
            locationServicesEnabled: locationServicesEnabled, isRestricted: status == .restricted, accuracy: accuracy)
    }

    /// The status the app reads: `denied` with Location Services off, `restricted` while the
    /// device restricts location, else the user's choice.
    public var status: AuthorizationStatus { Self.effective(userStatus, locationServicesEnabled, isRestricted) }

    private static func effective(_ user: AuthorizationStatus, _ services: Bool, _ restricted: Bool)
        -> AuthorizationStatus
    {
        if !services { return .denied }
        if restricted { return .restricted }
        return user
    }

    /// Whether fixes may flow: services on and an authorized status.
    public var allowsLocation: Bool { status.isAuthorized }

    /// Applies one event and returns what the owner must do, in order.
    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .changeReported(let appRuns, let suspended):
            // "Core Location always calls locationManagerDidChangeAuthorization(_:) when the
            // user's action results in an authorization status change."
            var actions: [DeviceAction] = []
            if appRuns {
                actions.append(.call(.delegate(.didChangeAuthorization, to: .all)))
            } else if suspended {
                changedWhileSuspended = true
            }
            actions.append(.post(.location(.authorizationChanged)))
            return actions
        case .resumed:
            guard changedWhileSuspended else { return [] }
            changedWhileSuspended = false
            return [.call(.delegate(.didChangeAuthorization, to: .all))]
        case .appTerminated:
            changedWhileSuspended = false
            return []
        default:
            break
        }
        let before = status
        var steps = apply(event)
        if status != before { steps.append(.statusChanged(from: before, to: status)) }
        switch event {
        case .requestWhenInUse: return Self.request(.whenInUse, steps)
        case .requestAlways: return Self.request(.always, steps)
        default: return Self.actions(steps)
        }
    }

    /// The audit log's name of a prompt.
    public static func name(_ prompt: Prompt) -> PromptKind {
        switch prompt {
        case .whenInUse(let forAlways): forAlways ? .whenInUseForAlways : .whenInUse
        case .always: .always
        case .alwaysOrWhenInUse: .alwaysOrWhenInUse
        }
    }

    /// The app's request: recorded as prompted or ignored (with a diagnostic that says why, where
    /// the app's author can do something about it), then its prompt.
    private static func request(_ request: Scenario.AuthorizationRequest, _ steps: [Step]) -> [DeviceAction] {
        guard case .ignored(let reason)? = steps.first else {
            return [.record(.authorizationRequest(request: request, outcome: .prompted, reason: nil))] + actions(steps)
        }
        var actions: [DeviceAction] = [
            .record(.authorizationRequest(request: request, outcome: .ignored, reason: reason))
        ]
        let message: String? =
            switch reason {
            case .missingWhenInUseDescription, .missingAlwaysDescription:
                "the Info has no usage description for this request; no prompt is shown"
            case .notInForeground:
                "a location authorization prompt needs the app in the foreground; the request is ignored"
            case .locationServicesOff:
                "Location Services are off: the app reads denied and its request shows no prompt"
            default: nil
            }
        if let message { actions.append(.record(.diagnostic(message: message))) }
        return actions
    }

    /// The steps in the device's actions: each recorded, prompts put up and taken down, and the
    /// change of what the app reads reported once, after them.
    private static func actions(_ steps: [Step]) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        var changed = false
        var alwaysPromptGone = false
        for step in steps {
            switch step {
            case .showPrompt(let prompt):
                actions.append(.record(.prompt(prompt: name(prompt), phase: .shown, answer: nil)))
                actions.append(.post(.showAlert(.authorization(prompt))))
            case .promptDismissed(let prompt):
                actions.append(.record(.prompt(prompt: name(prompt), phase: .dismissed, answer: nil)))
                actions.append(.post(.hideAlert(.authorization(prompt))))
                if prompt == .always { alwaysPromptGone = true }
            case .statusChanged(let from, let to):
                actions.append(.record(.authorizationChanged(from: from, to: to)))
                changed = true
            case .accuracyChanged(let from, let to):
                actions.append(.record(.accuracyChanged(from: from, to: to)))
                changed = true
            case .locationServicesChanged(let enabled):
                actions.append(.record(.locationServicesChanged(enabled: enabled)))
                changed = true
            case .ignored(let reason):
                actions.append(.record(.diagnostic(message: "ignored: \(reason.rawValue)")))
            }
        }
        if alwaysPromptGone { actions.append(.post(.alwaysPromptGone)) }
        if changed { actions.append(.post(.authorizationChangeReported)) }
        return actions
    }

    private mutating func apply(_ event: Event) -> [Step] {
        let grant = state.grant
        switch event {
        case .changeReported, .resumed, .appTerminated:
            return []
        case .requestWhenInUse(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: false) { return [.ignored(reason)] }
            guard case .notDetermined = grant else { return [.ignored(.alreadyDetermined)] }
            return prompt(.whenInUse(forAlways: false), over: grant)

        case .requestAlways(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: true) { return [.ignored(reason)] }
            if grant.alwaysAsked { return [.ignored(.alwaysAlreadyRequested)] }
            switch grant {
            case .notDetermined:
                let prompt: Prompt =
                    version.hasAllowOnceAndProvisionalAlways ? .whenInUse(forAlways: true) : .alwaysOrWhenInUse
                return self.prompt(prompt, over: .notDetermined(alwaysAsked: true))
            case .whenInUse(once: true, _):
                return [.ignored(.temporaryAuthorization)]
            case .whenInUse(once: false, _):
                return prompt(.always, over: .whenInUse(once: false, alwaysAsked: true))
            case .provisionalAlways, .always, .denied:
                return [.ignored(.alreadyDetermined)]
            }

        case .answerWhenInUse(let answer):
            guard case .prompting(.whenInUse(let forAlways), let over) = state else {
                return [.ignored(.noPromptShowing)]
            }
            if answer == .allowOnce && !version.hasAllowOnceAndProvisionalAlways {
                return [.ignored(.notInThisVersion)]
            }
            switch answer {
            case .allowOnce: state = .settled(.whenInUse(once: true, alwaysAsked: over.alwaysAsked))
            case .allowWhileUsing where forAlways: state = .settled(.provisionalAlways(upgradeShown: false))
            case .allowWhileUsing: state = .settled(.whenInUse(once: false, alwaysAsked: over.alwaysAsked))
            case .dontAllow: state = .settled(.denied(alwaysAsked: over.alwaysAsked))
            }
            return []

        case .answerAlways(let answer):
            guard case .prompting(.always, let over) = state else { return [.ignored(.noPromptShowing)] }
            state = .settled(
                answer == .changeToAlways
                    ? .always(alwaysAsked: over.alwaysAsked) : .whenInUse(once: false, alwaysAsked: over.alwaysAsked))
            return []

        case .answerAlwaysOrWhenInUse(let chosen):
            guard case .prompting(.alwaysOrWhenInUse, let over) = state else { return [.ignored(.noPromptShowing)] }
            guard chosen != .notDetermined && chosen != .restricted else { return [.ignored(.notAUserChoice)] }
            state = .settled(.settled(chosen, alwaysAsked: over.alwaysAsked))
            return []

        case .dismissPrompt:
            guard case .prompting(let prompt, let over) = state else { return [] }
            switch prompt {
            case .whenInUse(forAlways: true), .alwaysOrWhenInUse: state = .settled(over.asking(always: false))
            case .always:
                // Unanswered, it may come again: the upgrade prompt at the next event that needs
                // Always, the app's own request when the app asks again.
                if case .provisionalAlways = over {
                    state = .settled(.provisionalAlways(upgradeShown: false))
                } else {
                    state = .settled(over.asking(always: false))
                }
            case .whenInUse(forAlways: false): state = .settled(over)
            }
            return [.promptDismissed(prompt)]

        case .neededAlways:
            guard case .settled(.provisionalAlways(upgradeShown: false)) = state, status.isAuthorized else { return [] }
            return prompt(.always, over: .provisionalAlways(upgradeShown: true))

        case .appNoLongerInUse:
            guard case .whenInUse(once: true, let asked) = grant else { return [] }
            state = .settled(.notDetermined(alwaysAsked: asked))
            return []

        case .setAuthorization(let newStatus):
            guard newStatus != .restricted else { return [.ignored(.notAUserChoice)] }
            var steps: [Step] = []
            if let prompt = state.prompt { steps.append(.promptDismissed(prompt)) }
            // "Ask Next Time": the app may ask again.
            state = .settled(.settled(newStatus, alwaysAsked: newStatus != .notDetermined && grant.alwaysAsked))
            return steps

        case .setRestricted(let restricted):
            settings.isRestricted = restricted
            return []

        case .setPreciseLocation(let precise):
            guard version.hasReducedAccuracy else { return [.ignored(.notInThisVersion)] }
            let newAccuracy: AccuracyAuthorization = precise ? .fullAccuracy : .reducedAccuracy
            guard newAccuracy != settings.accuracy else { return [] }
            let old = settings.accuracy
            settings.accuracy = newAccuracy
            return [.accuracyChanged(from: old, to: newAccuracy)]

        case .setLocationServices(let enabled):
            guard enabled != settings.locationServicesEnabled else { return [] }
            settings.locationServicesEnabled = enabled
            return [.locationServicesChanged(enabled: enabled)]
        }
    }

    /// Puts `prompt` up over `grant`.
    private mutating func prompt(_ prompt: Prompt, over grant: Grant) -> [Step] {
        state = .prompting(prompt, over: grant)
        return [.showPrompt(prompt)]
    }

    private func promptBlocker(inForeground: Bool, needsAlways: Bool) -> IgnoredReason? {
        if !inForeground { return .notInForeground }
        if !locationServicesEnabled { return .locationServicesOff }
        if !descriptions.whenInUse { return .missingWhenInUseDescription }
        if needsAlways && !descriptions.alwaysAndWhenInUse { return .missingAlwaysDescription }
        if settings.isRestricted { return .restricted }
        if state.prompt != nil { return .promptAlreadyShowing }
        return nil
    }
}
