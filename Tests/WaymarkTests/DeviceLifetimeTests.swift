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
            for i in 0..<5 {
                let location = Location(
                    coordinate: Coordinate(latitude: 51.5 + Double(i) * 1e-4, longitude: -0.12), altitude: 40,
                    horizontalAccuracy: 5, verticalAccuracy: 8, speed: 1.4, course: 0,
                    timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i) * 60),
                    provenance: Provenance(
                        source: .file(path: "lifetime.gpx", index: i), isSimulatedBySoftware: false, fixMode: .threeD))
                simulation.receive(SourceEvent(offset: .seconds(i * 60), kind: .fix(location), index: i, segment: 0))
            }
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

    /// The tutorial app's delegate relay is public as its manager's delegate, and holds its app
    /// without retaining it: kept past the app's life, it still forwards calls, and finds no app
    /// rather than freed memory.
    @Test func theTutorialAppsRelayKeptPastItsAppFindsNoApp() throws {
        final class Counting: DeviceLocationManagerDelegate {
            var updates = 0
            var pauses = 0
            func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
                updates += 1
            }
            func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) { pauses += 1 }
        }
        let counting = Counting()
        var kept: (any DeviceLocationManagerDelegate)?
        var manager: DeviceLocationManager?
        weak var app: AnyObject?
        do {
            let simulation = Simulation(scenario: Scenario(), epoch: Date(timeIntervalSince1970: 1_714_550_400))
            simulation.manager.delegate = counting
            simulation.start(source: "kept")
            simulation.advance(to: .seconds(1))
            kept = simulation.manager.delegate
            manager = simulation.manager
            app = simulation.app as AnyObject
            _ = simulation.finish(at: .seconds(60))
        }
        let relay = try #require(kept)
        #expect(relay !== counting, "the app's relay is the manager's delegate")
        #expect(app == nil, "the app outlived its device")
        relay.locationManager(try #require(manager), didUpdateLocations: [])
        relay.locationManagerDidPauseLocationUpdates(try #require(manager))
        #expect(counting.updates == 1 && counting.pauses == 1)
    }
}
