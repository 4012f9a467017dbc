import Testing

@testable import Waymark

/// Each authorization rule of DESIGN §4, one scenario per test.
@Suite struct AuthorizationTests {
    typealias Machine = AuthorizationStateMachine
    static let both = LocationUsageDescriptions(whenInUse: true, alwaysAndWhenInUse: true)

    /// A prompt put up: its audit event, then the alert.
    static func shown(_ prompt: Machine.Prompt) -> [DeviceAction] {
        [
            .record(.prompt(prompt: Machine.name(prompt), phase: .shown, answer: nil)),
            .post(.showAlert(.authorization(prompt))),
        ]
    }

    /// The app's request, prompted: its audit event, then the prompt.
    static func requested(_ request: Scenario.AuthorizationRequest, _ prompt: Machine.Prompt) -> [DeviceAction] {
        [.record(.authorizationRequest(request: request, outcome: .prompted, reason: nil))] + shown(prompt)
    }

    /// A prompt taken down unanswered: its audit event, the alert taken down, and for the Always
    /// prompt the event held for it decided.
    static func dismissed(_ prompt: Machine.Prompt) -> [DeviceAction] {
        [
            .record(.prompt(prompt: Machine.name(prompt), phase: .dismissed, answer: nil)),
            .post(.hideAlert(.authorization(prompt))),
        ] + (prompt == .always ? [.post(.alwaysPromptGone)] : [])
    }

    /// What the app reads changed: recorded, then reported (its delegate, the location service).
    static func changed(_ from: AuthorizationStatus, _ to: AuthorizationStatus) -> [DeviceAction] {
        [.record(.authorizationChanged(from: from, to: to)), .post(.authorizationChangeReported)]
    }

    /// An event the machine ignores, said in a diagnostic.
    static func ignored(_ reason: Machine.IgnoredReason) -> [DeviceAction] {
        [.record(.diagnostic(message: "ignored: \(reason.rawValue)"))]
    }

    /// The app's request, ignored: "request reason" from its audit event, when nothing but
    /// diagnostics follows it (no prompt, no change); nil otherwise.
    static func refusal(_ actions: [DeviceAction]) -> String? {
        guard case .record(.authorizationRequest(let request, .ignored, let reason?))? = actions.first else {
            return nil
        }
        for action in actions.dropFirst() {
            guard case .record(.diagnostic) = action else { return nil }
        }
        return "\(request.rawValue) \(reason.rawValue)"
    }

    @Test func whenInUsePromptAndItsThreeAnswers() {
        for (answer, status) in [
            (WhenInUseAnswer.allowOnce, AuthorizationStatus.authorizedWhenInUse),
            (.allowWhileUsing, .authorizedWhenInUse), (.dontAllow, .denied),
        ] {
            var m = Machine(descriptions: Self.both)
            #expect(
                m.handle(.requestWhenInUse(inForeground: true))
                    == Self.requested(.whenInUse, .whenInUse(forAlways: false)))
            #expect(m.handle(.answerWhenInUse(answer)) == Self.changed(.notDetermined, status))
            #expect(m.status == status && m.pendingPrompt == nil)
            #expect(m.isTemporary == (answer == .allowOnce))
        }
    }

    @Test func requestsFromTheBackgroundAreIgnored() {
        var m = Machine(descriptions: Self.both)
        #expect(Self.refusal(m.handle(.requestWhenInUse(inForeground: false))) == "whenInUse notInForeground")
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: false))) == "always notInForeground")
        #expect(m.status == .notDetermined && m.pendingPrompt == nil)
    }

    @Test func missingUsageDescriptionsIgnoreTheRequest() {
        var none = Machine(descriptions: LocationUsageDescriptions(whenInUse: false))
        #expect(
            Self.refusal(none.handle(.requestWhenInUse(inForeground: true))) == "whenInUse missingWhenInUseDescription")
        var whenInUseOnly = Machine(descriptions: LocationUsageDescriptions(whenInUse: true, alwaysAndWhenInUse: false))
        #expect(
            Self.refusal(whenInUseOnly.handle(.requestAlways(inForeground: true))) == "always missingAlwaysDescription")
        #expect(whenInUseOnly.status == .notDetermined)
    }

    @Test func allowOnceRevertsWhenTheAppIsNoLongerInUse() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowOnce))
        #expect(m.allowsLocation)
        #expect(m.handle(.appNoLongerInUse) == Self.changed(.authorizedWhenInUse, .notDetermined))
        #expect(!m.isTemporary)
        // A permanent grant does not revert.
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowWhileUsing))
        #expect(m.handle(.appNoLongerInUse) == [])
        #expect(m.status == .authorizedWhenInUse)
    }

    @Test func alwaysFromNotDeterminedIsProvisionalUntilTheSecondPrompt() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .whenInUse(forAlways: true)))
        #expect(
            m.handle(.answerWhenInUse(.allowWhileUsing)) == Self.changed(.notDetermined, .authorizedAlways))
        #expect(m.isProvisionalAlways)
        // The second prompt comes at the first event that needs Always, once.
        #expect(m.handle(.neededAlways) == Self.shown(.always))
        #expect(m.handle(.neededAlways) == [])
        // Keep When In Use ends the provisional grant.
        #expect(
            m.handle(.answerAlways(.keepWhenInUse)) == Self.changed(.authorizedAlways, .authorizedWhenInUse))
        #expect(!m.isProvisionalAlways)
        #expect(m.handle(.neededAlways) == [])
    }

    @Test func changeToAlwaysFromProvisionalIsSilent() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestAlways(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowWhileUsing))
        _ = m.handle(.neededAlways)
        // The app already sees Always: CoreLocation does not call the delegate again.
        #expect(m.handle(.answerAlways(.changeToAlways)) == [])
        #expect(m.status == .authorizedAlways && !m.isProvisionalAlways)
    }

    @Test func alwaysFromWhenInUsePromptsAtOnceAndOnlyOnce() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowWhileUsing))
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .always))
        #expect(
            m.handle(.answerAlways(.changeToAlways)) == Self.changed(.authorizedWhenInUse, .authorizedAlways))
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: true))) == "always alwaysAlreadyRequested")
    }

    @Test func keepWhenInUseFromWhenInUseChangesNothing() {
        var m = Machine(descriptions: Self.both, status: .authorizedWhenInUse)
        _ = m.handle(.requestAlways(inForeground: true))
        #expect(m.handle(.answerAlways(.keepWhenInUse)) == [])
        #expect(m.status == .authorizedWhenInUse)
    }

    @Test func alwaysAfterAllowOnceIsIgnored() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowOnce))
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: true))) == "always temporaryAuthorization")
    }

    /// "Core Location limits calls to requestAlwaysAuthorization(). After your app calls this
    /// method, further calls have no effect." (CLLocationManager.requestAlwaysAuthorization()):
    /// the one request stays spent when an Allow Once given to it ends, while When In Use may be
    /// asked for again; "Ask Next Time" in Settings gives the app its request back.
    @Test func theOneRequestForAlwaysStaysSpentAfterAllowOnceEnds() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestAlways(inForeground: true))
        #expect(m.state == .prompting(.whenInUse(forAlways: true), over: .notDetermined(alwaysAsked: true)))
        _ = m.handle(.answerWhenInUse(.allowOnce))
        #expect(m.state == .settled(.whenInUse(once: true, alwaysAsked: true)))
        _ = m.handle(.appNoLongerInUse)
        #expect(m.state == .settled(.notDetermined(alwaysAsked: true)))
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: true))) == "always alwaysAlreadyRequested")
        #expect(
            m.handle(.requestWhenInUse(inForeground: true)) == Self.requested(.whenInUse, .whenInUse(forAlways: false)))
        _ = m.handle(.setAuthorization(.notDetermined))
        #expect(m.state == .settled(.notDetermined(alwaysAsked: false)))
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .whenInUse(forAlways: true)))
    }

    /// The provisional grant's states: the upgrade prompt up over it, dismissed (it may come
    /// again), and the answer that ends it.
    @Test func theProvisionalGrantAndItsUpgradePromptAreOneState() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestAlways(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowWhileUsing))
        #expect(m.state == .settled(.provisionalAlways(upgradeShown: false)))
        _ = m.handle(.neededAlways)
        #expect(m.state == .prompting(.always, over: .provisionalAlways(upgradeShown: true)))
        #expect(m.handle(.dismissPrompt) == Self.dismissed(.always))
        #expect(m.state == .settled(.provisionalAlways(upgradeShown: false)))
        #expect(m.handle(.neededAlways) == Self.shown(.always))
        _ = m.handle(.answerAlways(.keepWhenInUse))
        #expect(m.state == .settled(.whenInUse(once: false, alwaysAsked: true)))
    }

    @Test func furtherRequestsHaveNoEffect() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        #expect(Self.refusal(m.handle(.requestWhenInUse(inForeground: true))) == "whenInUse promptAlreadyShowing")
        _ = m.handle(.answerWhenInUse(.dontAllow))
        #expect(Self.refusal(m.handle(.requestWhenInUse(inForeground: true))) == "whenInUse alreadyDetermined")
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: true))) == "always alreadyDetermined")
        // `restricted` is set on the device (parental controls): no request prompts.
        var restricted = Machine(descriptions: Self.both, status: .restricted)
        #expect(Self.refusal(restricted.handle(.requestWhenInUse(inForeground: true))) == "whenInUse restricted")
        #expect(!restricted.allowsLocation)
    }

    @Test func answersWithoutAPromptAreIgnored() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.answerWhenInUse(.allowWhileUsing)) == Self.ignored(.noPromptShowing))
        #expect(m.handle(.answerAlways(.changeToAlways)) == Self.ignored(.noPromptShowing))
        #expect(m.status == .notDetermined)
    }

    @Test func settingsChangesApplyAtOnceAndAreReported() {
        var m = Machine(descriptions: Self.both, status: .authorizedAlways)
        #expect(m.handle(.setAuthorization(.denied)) == Self.changed(.authorizedAlways, .denied))
        #expect(
            m.handle(.setPreciseLocation(false)) == [
                .record(.accuracyChanged(from: .fullAccuracy, to: .reducedAccuracy)),
                .post(.authorizationChangeReported),
            ])
        #expect(m.handle(.setPreciseLocation(false)) == [])
        #expect(
            m.handle(.setLocationServices(false)) == [
                .record(.locationServicesChanged(enabled: false)), .post(.authorizationChangeReported),
            ])
        _ = m.handle(.setAuthorization(.authorizedWhenInUse))
        #expect(!m.allowsLocation, "location services are off")
        _ = m.handle(.setLocationServices(true))
        #expect(m.allowsLocation)
        // "Ask Next Time" lets the app ask again, Always included.
        _ = m.handle(.setAuthorization(.notDetermined))
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .whenInUse(forAlways: true)))
        // The same for the Always prompt a When In Use app asked for.
        var upgrade = Machine(descriptions: Self.both, status: .authorizedWhenInUse)
        #expect(upgrade.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .always))
        #expect(upgrade.handle(.dismissPrompt) == Self.dismissed(.always))
        #expect(upgrade.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .always))
    }

    /// "Core Location always calls locationManagerDidChangeAuthorization(_:) when the user's
    /// action results in an authorization status change" (CLLocationManagerDelegate): a running
    /// app hears of it at once; a suspended one when it runs again, once; an ended process not
    /// at all. The location service follows either way.
    @Test func aChangeReachesTheDelegateNowOrWhenTheAppRunsAgain() {
        let told: DeviceAction = .call(.delegate(.didChangeAuthorization, to: .all))
        let follow: DeviceAction = .post(.location(.authorizationChanged))
        var m = Machine(descriptions: Self.both, status: .authorizedAlways)
        #expect(m.handle(.changeReported(appRuns: true, suspended: false)) == [told, follow])
        #expect(m.handle(.resumed).isEmpty, "nothing missed")
        #expect(m.handle(.changeReported(appRuns: false, suspended: true)) == [follow])
        #expect(m.changedWhileSuspended)
        #expect(m.handle(.resumed) == [told])
        #expect(m.handle(.resumed).isEmpty, "told once")
        #expect(m.handle(.changeReported(appRuns: false, suspended: false)) == [follow], "not running: nobody")
        #expect(m.handle(.resumed).isEmpty)
        _ = m.handle(.changeReported(appRuns: false, suspended: true))
        #expect(m.handle(.appTerminated).isEmpty)
        #expect(m.handle(.resumed).isEmpty, "the ended process missed it; a new one reads the status")
        #expect(m.status == .authorizedAlways, "none of these changes the status")
    }

    @Test func reducedAccuracyByDefaultFollowsTheInfoKey() {
        let reduced = Machine(descriptions: LocationUsageDescriptions(defaultsToReducedAccuracy: true))
        #expect(reduced.accuracy == .reducedAccuracy)
        #expect(Machine(descriptions: Self.both).accuracy == .fullAccuracy)
    }

    /// Rule 3: with Location Services off the app reads denied ("The user denied the use of
    /// location services for the app or they are disabled globally in Settings",
    /// CLAuthorizationStatus.denied); switching them on restores what the user had chosen.
    @Test func locationServicesOffReadsDeniedAndOnRestoresTheChoice() {
        var m = Machine(descriptions: Self.both, status: .authorizedAlways)
        #expect(
            m.handle(.setLocationServices(false)) == [
                .record(.locationServicesChanged(enabled: false)),
                .record(.authorizationChanged(from: .authorizedAlways, to: .denied)),
                .post(.authorizationChangeReported),
            ])
        #expect(m.status == .denied && m.userStatus == .authorizedAlways && !m.allowsLocation)
        #expect(
            m.handle(.setLocationServices(true)) == [
                .record(.locationServicesChanged(enabled: true)),
                .record(.authorizationChanged(from: .denied, to: .authorizedAlways)),
                .post(.authorizationChangeReported),
            ])
        #expect(m.handle(.setLocationServices(true)).isEmpty)
        // Off, the app reads denied: its own request shows nothing.
        var fresh = Machine(descriptions: Self.both, locationServicesEnabled: false)
        #expect(Self.refusal(fresh.handle(.requestWhenInUse(inForeground: true))) == "whenInUse locationServicesOff")
        #expect(fresh.pendingPrompt == nil && fresh.status == .denied && fresh.userStatus == .notDetermined)
    }

    /// Rule 9: restricted is a device setting ("The user cannot change this app's status,
    /// possibly due to active restrictions such as parental controls being in place",
    /// CLAuthorizationStatus.restricted), not an answer the user gives.
    @Test func restrictedIsADeviceSettingNotAUserChoice() {
        var m = Machine(descriptions: Self.both, status: .authorizedWhenInUse)
        #expect(m.handle(.setAuthorization(.restricted)) == Self.ignored(.notAUserChoice))
        #expect(
            m.handle(.setRestricted(true)) == Self.changed(.authorizedWhenInUse, .restricted))
        #expect(Self.refusal(m.handle(.requestAlways(inForeground: true))) == "always restricted")
        #expect(
            m.handle(.setRestricted(false)) == Self.changed(.restricted, .authorizedWhenInUse))
    }

    /// Rule 4: a prompt left unanswered when the app leaves is dismissed; the app may ask again.
    @Test func aDismissedPromptLetsTheAppAskAgain() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .whenInUse(forAlways: true)))
        #expect(m.handle(.dismissPrompt) == Self.dismissed(.whenInUse(forAlways: true)))
        #expect(m.pendingPrompt == nil && m.status == .notDetermined)
        #expect(m.handle(.dismissPrompt).isEmpty)
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .whenInUse(forAlways: true)))
    }

    /// Up to iOS 12 there is no Allow Once and no provisional Always: a request for Always from
    /// notDetermined asks for Always at once (Apple: "Apps … running in iOS 12 or earlier will
    /// exhibit behavior consistent with iOS 12", Choosing the Location Services Authorization to
    /// Request). Reduced accuracy arrived in iOS 14.
    @Test func iOS12AsksForAlwaysAtOnceAndHasNoAllowOnce() {
        let ios12 = IOSVersion(major: 12)!
        var m = Machine(descriptions: Self.both, version: ios12)
        #expect(m.handle(.requestAlways(inForeground: true)) == Self.requested(.always, .alwaysOrWhenInUse))
        #expect(
            m.handle(.answerAlwaysOrWhenInUse(.authorizedAlways))
                == Self.changed(.notDetermined, .authorizedAlways))
        #expect(!m.isProvisionalAlways)
        var once = Machine(descriptions: Self.both, version: ios12)
        _ = once.handle(.requestWhenInUse(inForeground: true))
        #expect(once.handle(.answerWhenInUse(.allowOnce)) == Self.ignored(.notInThisVersion))
        #expect(once.handle(.setPreciseLocation(false)) == Self.ignored(.notInThisVersion))
        let reduced = Machine(
            descriptions: LocationUsageDescriptions(defaultsToReducedAccuracy: true), version: IOSVersion(major: 13)!)
        #expect(reduced.accuracy == .fullAccuracy)
    }
}
