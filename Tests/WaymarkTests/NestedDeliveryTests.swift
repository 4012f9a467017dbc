import Testing
import WaymarkTesting

@testable import Waymark

/// A delivery that starts inside `didUpdateLocations` (the device handing on a service's location
/// at once, as a waiting significant change is when the app's code starts that service there, or
/// fixes the rules decided to deliver) ends before the outer call does: the outer call then still sees its own updates, in
/// ``Simulation/currentUpdates`` and in its manager's, as it did before the nested call.
@MainActor @Suite struct NestedDeliveryTests {
    final class NestingApp: SimulatedApp {
        var model: Model?
        func didFinishLaunching(_ system: Simulation, inBackground: Bool) { model = Model(system) }
    }

    final class Model: DeviceLocationManagerDelegate {
        unowned let system: Simulation
        let manager = DeviceLocationManager()
        var depth = 0
        var outerCalls = 0
        var nested = 0
        var mismatches: [String] = []

        init(_ system: Simulation) {
            self.system = system
            manager.delegate = self
        }

        func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
            guard depth == 0 else {
                nested += 1
                return
            }
            outerCalls += 1
            let current = system.currentUpdates
            let delivering = manager.updatesBeingDelivered
            if current.map(\.location) != locations { mismatches.append("currentUpdates before, at \(system.now)") }
            depth += 1
            if outerCalls % 2 == 1 {
                // The device's own path for a service's location, to the process's first manager.
                system.perform([
                    .call(
                        .serviceLocation(
                            LocationUpdate(
                                location: locations[0], appState: system.appState, reason: .significantLocationChange),
                            manager: 1))
                ])
            } else {
                // Its path for fixes the rules decided to deliver, as held fixes are on a resume.
                let outcome = LocationServiceStateMachine.Outcome(
                    index: 0, segment: 0, decision: .delivered, reason: .resumed, coordinate: locations[0].coordinate,
                    delivered: locations[0], positioning: nil, indicator: false)
                system.perform([.decided(outcome), .deliver(count: 1, reason: .resumed, manager: 1)])
            }
            depth -= 1
            if system.currentUpdates != current { mismatches.append("currentUpdates after, at \(system.now)") }
            if manager.updatesBeingDelivered != delivering {
                mismatches.append("updatesBeingDelivered after, at \(system.now)")
            }
        }
    }

    @Test func anOuterDeliveryKeepsItsUpdatesAfterANestedOne() throws {
        let coordinates = (0..<20).map { Coordinate(latitude: 48.1372 + Double($0) * 0.0001, longitude: 11.5755) }
        let device = TestDevice(
            trace: try TraceSource.coordinates(coordinates, every: .seconds(1)), makeApp: { NestingApp() })
        device.launch()
        let model = try #require((device.process?.app as? NestingApp)?.model)
        model.manager.requestWhenInUseAuthorization()
        model.manager.startUpdatingLocation()
        device.advance(to: .seconds(15))
        #expect(model.outerCalls > 5)
        #expect(model.nested == model.outerCalls, "each nested location is handed on inside the delivery")
        #expect(model.mismatches.isEmpty, "\(model.mismatches)")
    }
}
