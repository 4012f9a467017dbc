import Testing

@testable import Waymark

/// Each authorization rule of DESIGN §4, one scenario per test.
@Suite struct AuthorizationTests {
    typealias Machine = AuthorizationStateMachine
    static let both = LocationUsageDescriptions(whenInUse: true, alwaysAndWhenInUse: true)

    @Test func whenInUsePromptAndItsThreeAnswers() {
        for (answer, status) in [
            (WhenInUseAnswer.allowOnce, AuthorizationStatus.authorizedWhenInUse),
            (.allowWhileUsing, .authorizedWhenInUse), (.dontAllow, .denied),
        ] {
            var m = Machine(descriptions: Self.both)
            #expect(m.handle(.requestWhenInUse(inForeground: true)) == [.showPrompt(.whenInUse(forAlways: false))])
            #expect(m.handle(.answerWhenInUse(answer)) == [.statusChanged(from: .notDetermined, to: status)])
            #expect(m.status == status && m.pendingPrompt == nil)
            #expect(m.isTemporary == (answer == .allowOnce))
        }
    }

    @Test func requestsFromTheBackgroundAreIgnored() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.requestWhenInUse(inForeground: false)) == [.ignored(.notInForeground)])
        #expect(m.handle(.requestAlways(inForeground: false)) == [.ignored(.notInForeground)])
        #expect(m.status == .notDetermined && m.pendingPrompt == nil)
    }

    @Test func missingUsageDescriptionsIgnoreTheRequest() {
        var none = Machine(descriptions: LocationUsageDescriptions(whenInUse: false))
        #expect(none.handle(.requestWhenInUse(inForeground: true)) == [.ignored(.missingWhenInUseDescription)])
        var whenInUseOnly = Machine(descriptions: LocationUsageDescriptions(whenInUse: true, alwaysAndWhenInUse: false))
        #expect(whenInUseOnly.handle(.requestAlways(inForeground: true)) == [.ignored(.missingAlwaysDescription)])
        #expect(whenInUseOnly.status == .notDetermined)
    }

    @Test func allowOnceRevertsWhenTheAppIsNoLongerInUse() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowOnce))
        #expect(m.allowsLocation)
        #expect(m.handle(.appNoLongerInUse) == [.statusChanged(from: .authorizedWhenInUse, to: .notDetermined)])
        #expect(!m.isTemporary)
        // A permanent grant does not revert.
        _ = m.handle(.requestWhenInUse(inForeground: true))
        _ = m.handle(.answerWhenInUse(.allowWhileUsing))
        #expect(m.handle(.appNoLongerInUse) == [])
        #expect(m.status == .authorizedWhenInUse)
    }

    @Test func alwaysFromNotDeterminedIsProvisionalUntilTheSecondPrompt() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.whenInUse(forAlways: true))])
        #expect(
            m.handle(.answerWhenInUse(.allowWhileUsing)) == [
                .statusChanged(from: .notDetermined, to: .authorizedAlways)
            ])
        #expect(m.isProvisionalAlways)
        // The second prompt comes at the first event that needs Always, once.
        #expect(m.handle(.neededAlways) == [.showPrompt(.always)])
        #expect(m.handle(.neededAlways) == [])
        // Keep When In Use ends the provisional grant.
        #expect(
            m.handle(.answerAlways(.keepWhenInUse)) == [
                .statusChanged(from: .authorizedAlways, to: .authorizedWhenInUse)
            ])
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
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.always)])
        #expect(
            m.handle(.answerAlways(.changeToAlways)) == [
                .statusChanged(from: .authorizedWhenInUse, to: .authorizedAlways)
            ])
        #expect(m.handle(.requestAlways(inForeground: true)) == [.ignored(.alwaysAlreadyRequested)])
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
        #expect(m.handle(.requestAlways(inForeground: true)) == [.ignored(.temporaryAuthorization)])
    }

    @Test func furtherRequestsHaveNoEffect() {
        var m = Machine(descriptions: Self.both)
        _ = m.handle(.requestWhenInUse(inForeground: true))
        #expect(m.handle(.requestWhenInUse(inForeground: true)) == [.ignored(.promptAlreadyShowing)])
        _ = m.handle(.answerWhenInUse(.dontAllow))
        #expect(m.handle(.requestWhenInUse(inForeground: true)) == [.ignored(.alreadyDetermined)])
        #expect(m.handle(.requestAlways(inForeground: true)) == [.ignored(.alreadyDetermined)])
        // `restricted` is set on the device (parental controls): no request prompts.
        var restricted = Machine(descriptions: Self.both, status: .restricted)
        #expect(restricted.handle(.requestWhenInUse(inForeground: true)) == [.ignored(.restricted)])
        #expect(!restricted.allowsLocation)
    }

    @Test func answersWithoutAPromptAreIgnored() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.answerWhenInUse(.allowWhileUsing)) == [.ignored(.noPromptShowing)])
        #expect(m.handle(.answerAlways(.changeToAlways)) == [.ignored(.noPromptShowing)])
        #expect(m.status == .notDetermined)
    }

    @Test func settingsChangesApplyAtOnceAndAreReported() {
        var m = Machine(descriptions: Self.both, status: .authorizedAlways)
        #expect(m.handle(.setAuthorization(.denied)) == [.statusChanged(from: .authorizedAlways, to: .denied)])
        #expect(m.handle(.setPreciseLocation(false)) == [.accuracyChanged(from: .fullAccuracy, to: .reducedAccuracy)])
        #expect(m.handle(.setPreciseLocation(false)) == [])
        #expect(m.handle(.setLocationServices(false)) == [.locationServicesChanged(enabled: false)])
        _ = m.handle(.setAuthorization(.authorizedWhenInUse))
        #expect(!m.allowsLocation, "location services are off")
        _ = m.handle(.setLocationServices(true))
        #expect(m.allowsLocation)
        // "Ask Next Time" lets the app ask again, Always included.
        _ = m.handle(.setAuthorization(.notDetermined))
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.whenInUse(forAlways: true))])
        // The same for the Always prompt a When In Use app asked for.
        var upgrade = Machine(descriptions: Self.both, status: .authorizedWhenInUse)
        #expect(upgrade.handle(.requestAlways(inForeground: true)) == [.showPrompt(.always)])
        #expect(upgrade.handle(.dismissPrompt) == [.promptDismissed(.always)])
        #expect(upgrade.handle(.requestAlways(inForeground: true)) == [.showPrompt(.always)])
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
                .locationServicesChanged(enabled: false), .statusChanged(from: .authorizedAlways, to: .denied),
            ])
        #expect(m.status == .denied && m.userStatus == .authorizedAlways && !m.allowsLocation)
        #expect(
            m.handle(.setLocationServices(true)) == [
                .locationServicesChanged(enabled: true), .statusChanged(from: .denied, to: .authorizedAlways),
            ])
        #expect(m.handle(.setLocationServices(true)).isEmpty)
        // Off, the app reads denied: its own request shows nothing.
        var fresh = Machine(descriptions: Self.both, locationServicesEnabled: false)
        #expect(fresh.handle(.requestWhenInUse(inForeground: true)) == [.ignored(.locationServicesOff)])
        #expect(fresh.pendingPrompt == nil && fresh.status == .denied && fresh.userStatus == .notDetermined)
    }

    /// Rule 9: restricted is a device setting ("The user cannot change this app's status,
    /// possibly due to active restrictions such as parental controls being in place",
    /// CLAuthorizationStatus.restricted), not an answer the user gives.
    @Test func restrictedIsADeviceSettingNotAUserChoice() {
        var m = Machine(descriptions: Self.both, status: .authorizedWhenInUse)
        #expect(m.handle(.setAuthorization(.restricted)) == [.ignored(.notAUserChoice)])
        #expect(
            m.handle(.setRestricted(true)) == [.statusChanged(from: .authorizedWhenInUse, to: .restricted)])
        #expect(m.handle(.requestAlways(inForeground: true)) == [.ignored(.restricted)])
        #expect(
            m.handle(.setRestricted(false)) == [.statusChanged(from: .restricted, to: .authorizedWhenInUse)])
    }

    /// Rule 4: a prompt left unanswered when the app leaves is dismissed; the app may ask again.
    @Test func aDismissedPromptLetsTheAppAskAgain() {
        var m = Machine(descriptions: Self.both)
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.whenInUse(forAlways: true))])
        #expect(m.handle(.dismissPrompt) == [.promptDismissed(.whenInUse(forAlways: true))])
        #expect(m.pendingPrompt == nil && m.status == .notDetermined)
        #expect(m.handle(.dismissPrompt).isEmpty)
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.whenInUse(forAlways: true))])
    }

    /// Up to iOS 12 there is no Allow Once and no provisional Always: a request for Always from
    /// notDetermined asks for Always at once (Apple: "Apps … running in iOS 12 or earlier will
    /// exhibit behavior consistent with iOS 12", Choosing the Location Services Authorization to
    /// Request). Reduced accuracy arrived in iOS 14.
    @Test func iOS12AsksForAlwaysAtOnceAndHasNoAllowOnce() {
        let ios12 = IOSVersion(major: 12)!
        var m = Machine(descriptions: Self.both, version: ios12)
        #expect(m.handle(.requestAlways(inForeground: true)) == [.showPrompt(.alwaysOrWhenInUse)])
        #expect(
            m.handle(.answerAlwaysOrWhenInUse(.authorizedAlways))
                == [.statusChanged(from: .notDetermined, to: .authorizedAlways)])
        #expect(!m.isProvisionalAlways)
        var once = Machine(descriptions: Self.both, version: ios12)
        _ = once.handle(.requestWhenInUse(inForeground: true))
        #expect(once.handle(.answerWhenInUse(.allowOnce)) == [.ignored(.notInThisVersion)])
        #expect(once.handle(.setPreciseLocation(false)) == [.ignored(.notInThisVersion)])
        let reduced = Machine(
            descriptions: LocationUsageDescriptions(defaultsToReducedAccuracy: true), version: IOSVersion(major: 13)!)
        #expect(reduced.accuracy == .fullAccuracy)
    }
}
