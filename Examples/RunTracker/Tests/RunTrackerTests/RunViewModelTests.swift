import Foundation
import RunTracker
import Testing
import Waymark
import WaymarkTesting

/// The package's own copy of Waymark's `traces/city-walk.gpx`: a walk with a fix every 5 s, from
/// 0 to 895 s and from 1500 to 2395 s (no signal in between).
let cityWalk = Bundle.module.path(forResource: "city-walk", ofType: "gpx", inDirectory: "Resources")!

/// A device replaying the city walk to an app whose only location code is the view model.
@MainActor
func startRun(_ scenario: Scenario) throws -> (TestDevice, RunViewModel) {
    let device = TestDevice(scenario: scenario, trace: try TraceSource.gpx(contentsOf: cityWalk), app: BareApp())
    let model = RunViewModel(manager: device.manager, info: scenario.info)
    device.launch()
    model.startRun()
    return (device, model)
}

/// The user allowed While Using before; the app declares the `location` background mode or not,
/// on iOS `ios`.
func walkScenario(backgroundMode: Bool, ios: Int = 26) -> Scenario {
    var scenario = Scenario()
    scenario.info.backgroundModes = backgroundMode ? [.location] : []
    scenario.system.iosVersion = IOSVersion(major: ios)!
    return scenario
}

@MainActor @Suite struct RunViewModelTests {
    @Test func countsTheWalkInTheForeground() throws {
        let (device, model) = try startRun(walkScenario(backgroundMode: false))
        #expect(model.status == .running)
        device.advance(to: .seconds(300))
        // A fix every 5 s, from 0 s to 300 s.
        #expect(model.locationCount == 61)
        #expect(model.distance > 250)
        #expect(model.lastLocation == device.manager.location)
        device.runToEnd()
        #expect(model.locationCount == device.fixes(reason: .foreground).count)
        #expect(model.distance > 1500)
    }

    @Test func keepsCountingInTheBackgroundWithTheLocationMode() throws {
        let (device, model) = try startRun(walkScenario(backgroundMode: true))
        #expect(device.manager.allowsBackgroundLocationUpdates)
        device.advance(to: .seconds(120))
        let before = (distance: model.distance, count: model.locationCount)

        device.sendToBackground()
        device.advance(by: .seconds(300))
        #expect(device.appState == .background)
        #expect(model.locationCount == before.count + 60)
        #expect(model.distance > before.distance + 250)

        // The audit says why: a background session, with the location indicator on.
        let away = device.fixes(reason: .backgroundSession)
        #expect(away.count == 60)
        #expect(away.allSatisfy { $0.appState == .background && $0.indicator })

        device.bringToForeground()
        device.advance(by: .seconds(60))
        #expect(model.locationCount == before.count + 60 + 12)
    }

    @Test func receivesNothingWhileSuspendedWithoutTheLocationMode() throws {
        let (device, model) = try startRun(walkScenario(backgroundMode: false))
        #expect(!device.manager.allowsBackgroundLocationUpdates)
        device.advance(to: .seconds(120))
        let before = (distance: model.distance, count: model.locationCount)

        device.sendToBackground()
        device.advance(by: .seconds(300))
        // Suspended 5 s after leaving; from iOS 13 a When In Use app that is not in use gets nothing.
        #expect(device.appState == .suspended)
        #expect(model.locationCount == before.count)
        #expect(model.distance == before.distance)
        #expect(device.fixes(reason: .notInUse).count == 60)

        device.bringToForeground()
        device.advance(by: .seconds(60))
        #expect(device.appState == .active)
        #expect(model.locationCount == before.count + 12)
        // The first location after the gap adds the straight line across it.
        #expect(model.distance > before.distance)
    }

    @Test func onIOS12TheHeldLocationsArriveOnReturn() throws {
        let (device, model) = try startRun(walkScenario(backgroundMode: false, ios: 12))
        device.advance(to: .seconds(120))
        let before = model.locationCount

        device.sendToBackground()
        device.advance(by: .seconds(300))
        // Up to iOS 12 the system holds a suspended app's locations instead of dropping them.
        #expect(device.appState == .suspended)
        #expect(model.locationCount == before)
        #expect(device.fixes(reason: .suspended).count == 60)

        device.bringToForeground()
        // All of them in one `didUpdateLocations` call as the app becomes active.
        #expect(model.locationCount == before + 60)
        let batch = device.events(named: "didUpdateLocations").last
        #expect(batch.map { $0.kind == .locationsDelivered(count: 60, reason: .resumed) } == true)
    }

    @Test func theWholeWalkDiffersOnlyInWhatIOS12Holds() throws {
        var totals: [Int: (count: Int, distance: Double)] = [:]
        for ios in [12, 26] {
            let (device, model) = try startRun(walkScenario(backgroundMode: false, ios: ios))
            device.advance(to: .seconds(120))
            device.sendToBackground()
            device.advance(by: .seconds(300))
            device.bringToForeground()
            device.runToEnd()
            totals[ios] = (model.locationCount, model.distance)
        }
        let ios12 = try #require(totals[12])
        let ios26 = try #require(totals[26])
        #expect(ios12.count == ios26.count + 60)
        #expect(ios12.distance > ios26.distance)
    }

    @Test func showsDenialAndTheError() throws {
        let (device, model) = try startRun(walkScenario(backgroundMode: false))
        device.advance(to: .seconds(30))
        device.setAuthorization(.denied)
        #expect(model.status == .denied)
        device.advance(by: .seconds(5))
        #expect(model.lastError?.code == .denied)
        let count = model.locationCount
        device.advance(by: .seconds(60))
        #expect(model.locationCount == count)
        device.setAuthorization(.authorizedWhenInUse)
        #expect(model.status == .running)
    }

    @Test func trackingTheUpdateStreamSeesWhatTheDelegateSees() async throws {
        let scenario = walkScenario(backgroundMode: true)
        func walkWithABreak(_ device: TestDevice) {
            device.advance(to: .seconds(300))
            device.sendToBackground()
            device.advance(by: .seconds(300))
            device.bringToForeground()
            device.runToEnd()
        }
        let (reference, delegateModel) = try startRun(scenario)
        walkWithABreak(reference)

        let (device, model) = try startRun(scenario)
        let tracking = Task { await model.track() }
        // The task subscribes when it runs: idle() waits until its reader waits for updates.
        await device.idle()
        try #require(model.isTracking)
        walkWithABreak(device)
        await tracking.value

        #expect(!model.isTracking)
        #expect(model.locationCount == 360)
        #expect(model.locationCount == delegateModel.locationCount)
        #expect(abs(model.distance - delegateModel.distance) < 1e-6)
    }
}
