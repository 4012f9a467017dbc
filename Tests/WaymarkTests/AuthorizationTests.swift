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
    }

    @Test func reducedAccuracyByDefaultFollowsTheInfoKey() {
        let reduced = Machine(descriptions: LocationUsageDescriptions(defaultsToReducedAccuracy: true))
        #expect(reduced.accuracy == .reducedAccuracy)
        #expect(Machine(descriptions: Self.both).accuracy == .fullAccuracy)
    }
}
