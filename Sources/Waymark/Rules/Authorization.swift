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

    public let descriptions: LocationUsageDescriptions
    public let version: IOSVersion
    /// What the user chose (or the initial setting), whatever the device says.
    public private(set) var userStatus: AuthorizationStatus
    public private(set) var accuracy: AccuracyAuthorization
    public private(set) var locationServicesEnabled: Bool
    /// The device restricts location.
    public private(set) var isRestricted: Bool
    /// Always granted provisionally: the second prompt is still to come.
    public private(set) var isProvisionalAlways = false
    /// When In Use granted with Allow Once.
    public private(set) var isTemporary = false
    /// The prompt on screen, waiting for an answer.
    public private(set) var pendingPrompt: Prompt?
    /// The status the app reads changed while it was suspended: its delegate hears of it when it
    /// runs again.
    public private(set) var changedWhileSuspended = false
    private var alwaysRequested = false
    private var secondPromptShown = false

    /// `status` may be `restricted`, which sets the device's restriction.
    public init(
        descriptions: LocationUsageDescriptions, status: AuthorizationStatus = .notDetermined,
        accuracy: AccuracyAuthorization? = nil, locationServicesEnabled: Bool = true,
        version: IOSVersion = .newest
    ) {
        self.descriptions = descriptions
        self.version = version
        isRestricted = status == .restricted
        userStatus = status == .restricted ? .notDetermined : status
        if version.hasReducedAccuracy {
            self.accuracy = accuracy ?? (descriptions.defaultsToReducedAccuracy ? .reducedAccuracy : .fullAccuracy)
        } else {
            self.accuracy = .fullAccuracy
        }
        self.locationServicesEnabled = locationServicesEnabled
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
        switch event {
        case .changeReported, .resumed, .appTerminated:
            return []
        case .requestWhenInUse(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: false) { return [.ignored(reason)] }
            guard userStatus == .notDetermined else { return [.ignored(.alreadyDetermined)] }
            pendingPrompt = .whenInUse(forAlways: false)
            return [.showPrompt(.whenInUse(forAlways: false))]

        case .requestAlways(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: true) { return [.ignored(reason)] }
            if alwaysRequested { return [.ignored(.alwaysAlreadyRequested)] }
            switch userStatus {
            case .notDetermined:
                alwaysRequested = true
                let prompt: Prompt =
                    version.hasAllowOnceAndProvisionalAlways ? .whenInUse(forAlways: true) : .alwaysOrWhenInUse
                pendingPrompt = prompt
                return [.showPrompt(prompt)]
            case .authorizedWhenInUse where isTemporary:
                return [.ignored(.temporaryAuthorization)]
            case .authorizedWhenInUse:
                alwaysRequested = true
                secondPromptShown = true
                pendingPrompt = .always
                return [.showPrompt(.always)]
            default:
                return [.ignored(.alreadyDetermined)]
            }

        case .answerWhenInUse(let answer):
            guard case .whenInUse(let forAlways)? = pendingPrompt else { return [.ignored(.noPromptShowing)] }
            if answer == .allowOnce && !version.hasAllowOnceAndProvisionalAlways {
                return [.ignored(.notInThisVersion)]
            }
            pendingPrompt = nil
            switch answer {
            case .allowOnce:
                isTemporary = true
                userStatus = .authorizedWhenInUse
            case .allowWhileUsing:
                if forAlways {
                    isProvisionalAlways = true
                    userStatus = .authorizedAlways
                } else {
                    userStatus = .authorizedWhenInUse
                }
            case .dontAllow:
                userStatus = .denied
            }
            return []

        case .answerAlways(let answer):
            guard pendingPrompt == .always else { return [.ignored(.noPromptShowing)] }
            pendingPrompt = nil
            isProvisionalAlways = false
            userStatus = answer == .changeToAlways ? .authorizedAlways : .authorizedWhenInUse
            return []

        case .answerAlwaysOrWhenInUse(let chosen):
            guard pendingPrompt == .alwaysOrWhenInUse else { return [.ignored(.noPromptShowing)] }
            guard chosen != .notDetermined && chosen != .restricted else { return [.ignored(.notAUserChoice)] }
            pendingPrompt = nil
            userStatus = chosen
            return []

        case .dismissPrompt:
            guard let prompt = pendingPrompt else { return [] }
            pendingPrompt = nil
            switch prompt {
            case .whenInUse(true), .alwaysOrWhenInUse: alwaysRequested = false
            case .always:
                // Unanswered, it may come again: the upgrade prompt at the next event that needs
                // Always, the app's own request when the app asks again.
                if isProvisionalAlways { secondPromptShown = false } else { alwaysRequested = false }
            case .whenInUse(false): break
            }
            return [.promptDismissed(prompt)]

        case .neededAlways:
            guard isProvisionalAlways, !secondPromptShown, pendingPrompt == nil, status.isAuthorized else { return [] }
            secondPromptShown = true
            pendingPrompt = .always
            return [.showPrompt(.always)]

        case .appNoLongerInUse:
            guard isTemporary else { return [] }
            isTemporary = false
            userStatus = .notDetermined
            return []

        case .setAuthorization(let newStatus):
            guard newStatus != .restricted else { return [.ignored(.notAUserChoice)] }
            isTemporary = false
            isProvisionalAlways = false
            var actions: [Step] = []
            if let prompt = pendingPrompt {
                pendingPrompt = nil
                actions.append(.promptDismissed(prompt))
            }
            if newStatus == .notDetermined {
                // "Ask Next Time": the app may ask again.
                alwaysRequested = false
                secondPromptShown = false
            }
            userStatus = newStatus
            return actions

        case .setRestricted(let restricted):
            isRestricted = restricted
            return []

        case .setPreciseLocation(let precise):
            guard version.hasReducedAccuracy else { return [.ignored(.notInThisVersion)] }
            let newAccuracy: AccuracyAuthorization = precise ? .fullAccuracy : .reducedAccuracy
            guard newAccuracy != accuracy else { return [] }
            let old = accuracy
            accuracy = newAccuracy
            return [.accuracyChanged(from: old, to: newAccuracy)]

        case .setLocationServices(let enabled):
            guard enabled != locationServicesEnabled else { return [] }
            locationServicesEnabled = enabled
            return [.locationServicesChanged(enabled: enabled)]
        }
    }

    private func promptBlocker(inForeground: Bool, needsAlways: Bool) -> IgnoredReason? {
        if !inForeground { return .notInForeground }
        if !locationServicesEnabled { return .locationServicesOff }
        if !descriptions.whenInUse { return .missingWhenInUseDescription }
        if needsAlways && !descriptions.alwaysAndWhenInUse { return .missingAlwaysDescription }
        if isRestricted { return .restricted }
        if pendingPrompt != nil { return .promptAlreadyShowing }
        return nil
    }
}
