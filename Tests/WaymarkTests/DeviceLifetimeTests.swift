import Foundation
import Testing
import WaymarkScenarioFile

@testable import Waymark

/// A device that nobody holds any longer is freed, with its app, its processes, its managers and
/// everything they scheduled: a test suite or a fuzzer creates thousands of devices, and one
/// reference cycle keeps each of them, and each of their traces, for the rest of the process.
@Suite struct DeviceLifetimeTests {
    /// Runs `scenario` on five fixes and a day of virtual time, as the scenario fuzzer does, and
    /// returns weak references to what it created.
    static func runAndLetGo(_ scenario: Scenario) -> (device: () -> Simulation?, app: () -> AnyObject?) {
        weak var device: Simulation?
        weak var app: AnyObject?
        do {
            let simulation = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 1_714_550_400))
            simulation.start(source: "lifetime")
            for i in 0..<5 { simulation.receive(Self.fix(i, at: 0)) }
            simulation.advance(to: .seconds(86_400))
            _ = simulation.finish(at: .seconds(86_400))
            device = simulation
            app = simulation.app as AnyObject
        }
        return ({ device }, { app })
    }

    static let scenarios: [String] = {
        let directories = [
            Paths.fixtures.appendingPathComponent("scenarios"), Paths.root.appendingPathComponent("traces"),
        ]
        return directories.flatMap { directory in
            Paths.files(under: directory, suffix: ".yaml").map { directory.appendingPathComponent($0).path }
        }
    }()

    @Test(arguments: scenarios)
    func aFinishedDeviceIsFreedWithItsApp(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let (scenario, _) = try ScenarioFile.parse(text, path: path)
        try #require(scenario.problems.isEmpty, "\(scenario.problems)")
        let (device, app) = Self.runAndLetGo(scenario)
        #expect(device() == nil, "the device outlived its run: a reference cycle keeps it")
        #expect(app() == nil, "the app outlived its device")
    }

    /// The tutorial app listens to its manager through a tap, beside the delegate: a delegate set
    /// before or after its launch is called, and the app keeps every location all the same. The
    /// tap holds its app without retaining it: kept by the manager past the app's life, it finds
    /// no app rather than freed memory.
    @Test func theTutorialAppsTapLeavesTheDelegateAloneAndOutlivesItsApp() throws {
        final class Counting: DeviceLocationManagerDelegate {
            var updates = 0
            var pauses = 0
            func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
                updates += locations.count
            }
            func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) { pauses += 1 }
        }
        let before = Counting()
        let after = Counting()
        var manager: DeviceLocationManager?
        var stored = 0
        weak var app: AnyObject?
        do {
            let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 1_714_550_400))
            simulation.manager.delegate = before
            simulation.start(source: "kept")
            simulation.advance(to: .seconds(1))
            #expect(simulation.manager.delegate === before, "the app left the delegate alone")
            simulation.receive(Self.fix(0))
            simulation.manager.delegate = after
            for i in 1..<4 { simulation.receive(Self.fix(i)) }
            stored = simulation.tutorialApp?.storedCount ?? -1
            #expect((simulation.manager.tap as? TutorialAppTap)?.hasApp == true)
            manager = simulation.manager
            app = simulation.app as AnyObject
            _ = simulation.finish(at: .seconds(600))
        }
        #expect(before.updates == 1 && after.updates == 3)
        #expect(stored == 4, "the app kept every location, whoever the delegate was")
        #expect(app == nil, "the app outlived its device")
        let kept = try #require(manager)
        #expect((kept.tap as? TutorialAppTap)?.hasApp == false, "the tap was told its app ended")
        guard case .fix(let location) = Self.fix(9).kind else { return }
        let update = LocationUpdate(location: location, appState: .active, reason: .foreground, index: 9, segment: 0)
        kept.deliver([update], liveBlocked: false)
        kept.tell(.didPauseLocationUpdates)
        #expect(after.updates == 4 && after.pauses == 1)
    }

    /// The `i`-th fix of a walk, a minute apart, the first `at` seconds into the run.
    static func fix(_ i: Int, at start: Int = 1) -> SourceEvent {
        let location = Location(
            coordinate: Coordinate(latitude: 51.5 + Double(i) * 1e-4, longitude: -0.12), altitude: 40,
            horizontalAccuracy: 5, verticalAccuracy: 8, speed: 1.4, course: 0,
            timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i) * 60),
            provenance: Provenance(
                source: .file(path: "lifetime.gpx", index: i), isSimulatedBySoftware: false, fixMode: .threeD))
        return SourceEvent(offset: .seconds(i * 60 + start), kind: .fix(location), index: i, segment: 0)
    }
}
