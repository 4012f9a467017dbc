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

/// Location authorization as iOS (13 and later) grants it: a pure state machine.
///
/// It holds no clock and does no I/O: the owner feeds it events and carries out the actions it
/// returns (show a prompt, tell the delegate, log a diagnostic). The rules:
///
/// - A prompt is shown only to an app in the foreground whose Info declares the matching usage
///   description; otherwise the request is ignored with a reason.
/// - `requestWhenInUseAuthorization()` prompts only from `notDetermined`.
/// - `requestAlwaysAuthorization()` from `notDetermined` shows the When In Use prompt first;
///   Allow While Using then gives *provisional* Always (the app sees `authorizedAlways`), and the
///   second prompt comes at the first event that needs Always. From (non-temporary) When In Use it
///   prompts at once. It works once: further calls have no effect, and it is ignored after Allow
///   Once.
/// - Allow Once is temporary When In Use: it reverts to `notDetermined` when the app is no longer
///   in use.
/// - Settings changes (authorization, precise location, location services) apply at once, and
///   every change is reported.
public struct AuthorizationStateMachine: Sendable, Hashable {
    /// A system prompt.
    public enum Prompt: Sendable, Hashable {
        /// Allow Once / Allow While Using / Don't Allow; `forAlways` when the app asked for Always.
        case whenInUse(forAlways: Bool)
        /// Change to Always Allow / Keep Only While Using.
        case always
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
    }

    /// Something that happened to the app or the device.
    public enum Event: Sendable, Hashable {
        case requestWhenInUse(inForeground: Bool)
        case requestAlways(inForeground: Bool)
        case answerWhenInUse(WhenInUseAnswer)
        case answerAlways(AlwaysAnswer)
        /// The app used a power that needs Always (for example, starting updates in the background).
        case neededAlways
        /// The app is no longer in use (it left the foreground and its grace period ended).
        case appNoLongerInUse
        /// The user changed the app's authorization in Settings.
        case setAuthorization(AuthorizationStatus)
        /// The user switched Precise Location in Settings.
        case setPreciseLocation(Bool)
        /// The user switched Location Services for the whole device.
        case setLocationServices(Bool)
    }

    /// What the owner must do.
    public enum Action: Sendable, Hashable {
        case showPrompt(Prompt)
        case statusChanged(from: AuthorizationStatus, to: AuthorizationStatus)
        case accuracyChanged(from: AccuracyAuthorization, to: AccuracyAuthorization)
        case locationServicesChanged(enabled: Bool)
        case ignored(IgnoredReason)
    }

    public let descriptions: LocationUsageDescriptions
    public private(set) var status: AuthorizationStatus
    public private(set) var accuracy: AccuracyAuthorization
    public private(set) var locationServicesEnabled: Bool
    /// Always granted provisionally: the second prompt is still to come.
    public private(set) var isProvisionalAlways = false
    /// When In Use granted with Allow Once.
    public private(set) var isTemporary = false
    /// The prompt on screen, waiting for an answer.
    public private(set) var pendingPrompt: Prompt?
    private var alwaysRequested = false
    private var secondPromptShown = false

    public init(
        descriptions: LocationUsageDescriptions, status: AuthorizationStatus = .notDetermined,
        accuracy: AccuracyAuthorization? = nil, locationServicesEnabled: Bool = true
    ) {
        self.descriptions = descriptions
        self.status = status
        self.accuracy = accuracy ?? (descriptions.defaultsToReducedAccuracy ? .reducedAccuracy : .fullAccuracy)
        self.locationServicesEnabled = locationServicesEnabled
    }

    /// Whether fixes may flow: services on and an authorized status.
    public var allowsLocation: Bool { locationServicesEnabled && status.isAuthorized }

    /// Applies one event and returns what the owner must do, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .requestWhenInUse(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: false) { return [.ignored(reason)] }
            guard status == .notDetermined else { return [.ignored(.alreadyDetermined)] }
            pendingPrompt = .whenInUse(forAlways: false)
            return [.showPrompt(.whenInUse(forAlways: false))]

        case .requestAlways(let inForeground):
            if let reason = promptBlocker(inForeground: inForeground, needsAlways: true) { return [.ignored(reason)] }
            if alwaysRequested { return [.ignored(.alwaysAlreadyRequested)] }
            switch status {
            case .notDetermined:
                alwaysRequested = true
                pendingPrompt = .whenInUse(forAlways: true)
                return [.showPrompt(.whenInUse(forAlways: true))]
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
            pendingPrompt = nil
            switch answer {
            case .allowOnce:
                isTemporary = true
                return change(to: .authorizedWhenInUse)
            case .allowWhileUsing:
                if forAlways {
                    isProvisionalAlways = true
                    return change(to: .authorizedAlways)
                }
                return change(to: .authorizedWhenInUse)
            case .dontAllow:
                return change(to: .denied)
            }

        case .answerAlways(let answer):
            guard pendingPrompt == .always else { return [.ignored(.noPromptShowing)] }
            pendingPrompt = nil
            isProvisionalAlways = false
            switch answer {
            case .changeToAlways: return change(to: .authorizedAlways)
            case .keepWhenInUse: return change(to: .authorizedWhenInUse)
            }

        case .neededAlways:
            guard isProvisionalAlways, !secondPromptShown, pendingPrompt == nil else { return [] }
            secondPromptShown = true
            pendingPrompt = .always
            return [.showPrompt(.always)]

        case .appNoLongerInUse:
            guard isTemporary else { return [] }
            isTemporary = false
            return change(to: .notDetermined)

        case .setAuthorization(let newStatus):
            isTemporary = false
            isProvisionalAlways = false
            pendingPrompt = nil
            if newStatus == .notDetermined {
                // "Ask Next Time": the app may ask again.
                alwaysRequested = false
                secondPromptShown = false
            }
            return change(to: newStatus)

        case .setPreciseLocation(let precise):
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
        if !descriptions.whenInUse { return .missingWhenInUseDescription }
        if needsAlways && !descriptions.alwaysAndWhenInUse { return .missingAlwaysDescription }
        if pendingPrompt != nil { return .promptAlreadyShowing }
        return nil
    }

    private mutating func change(to newStatus: AuthorizationStatus) -> [Action] {
        guard newStatus != status else { return [] }
        let old = status
        status = newStatus
        return [.statusChanged(from: old, to: newStatus)]
    }
}
