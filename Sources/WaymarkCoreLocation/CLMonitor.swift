import Foundation
import Waymark

/// A condition a `CLMonitor` watches.
public protocol CLCondition: Decodable, Encodable, Sendable {}

/// `CLMonitoringState`, as Swift sees it through `CLMonitor.Event.State`.
public enum __CLMonitoringState: UInt, @unchecked Sendable {
    case unknown = 0
    case satisfied = 1
    case unsatisfied = 2
    case unmonitored = 3
}

/// `CLMonitor` (iOS 17): conditions whose state changes come as ``events``. The system keeps a
/// monitor's conditions across launches under its name; a relaunched app creates the monitor
/// again to hear what happened.
///
/// It runs on the main actor's executor, where the app drives the simulated device.
public actor CLMonitor {
    public nonisolated var unownedExecutor: UnownedSerialExecutor { MainActor.sharedUnownedExecutor }

    public nonisolated let name: String
    /// Apple declares it `final let events: CLMonitor.Events`: isolated, so code outside the monitor
    /// reads it with `await` (`for try await event in await monitor.events`).
    public let events: Events
    private let box: MonitorBox

    /// `CLMonitor(name)`.
    public init(_ name: String) async {
        self.name = name
        let made = await MainActor.run { () -> MonitorBox in
            guard let device = Simulation.current else { Simulation.noDevice("CLMonitor(\"\(name)\"), which") }
            return MonitorBox(device.monitor(named: name))
        }
        box = made
        events = Events(stream: made.events, monitor: made.monitor)
    }

    /// The identifiers of the monitor's conditions.
    public var identifiers: [String] { box.monitor?.identifiers ?? [] }

    public func add(_ condition: any CLCondition, identifier: String) {
        add(condition, identifier: identifier, assuming: .unknown)
    }

    /// Adds a condition "with the identifier and initial state you specify": no event comes while
    /// the condition is in that state. A circular geographic condition is watched (others are not
    /// supported by the simulated device, which has no Bluetooth ranging: the audit log says so
    /// and the monitor does not keep them).
    public func add(_ condition: any CLCondition, identifier: String, assuming state: Event.State) {
        guard let circle = condition as? CircularGeographicCondition else {
            box.monitor?.unsupported("\(type(of: condition))", identifier: identifier)
            return
        }
        let assumed: RegionState =
            switch state {
            case .satisfied: .inside
            case .unsatisfied: .outside
            case .unknown, .unmonitored: .unknown
            }
        box.monitor?.add(
            CircularRegion(center: circle.center.coordinate, radius: circle.radius, identifier: identifier),
            identifier: identifier, assuming: assumed)
    }

    public func remove(_ identifier: String) {
        box.monitor?.remove(identifier)
    }

    /// The condition and its last event, as the system keeps them under the monitor's name: a
    /// monitor created again after a relaunch reads what happened before it.
    public func record(for identifier: String) -> Record? {
        guard let record = box.monitor?.record(for: identifier) else { return nil }
        return Record(
            condition: CircularGeographicCondition(
                center: CLLocationCoordinate2D(
                    latitude: record.condition.center.latitude, longitude: record.condition.center.longitude),
                radius: record.condition.radius),
            lastEvent: Event(record.lastEvent))
    }

    /// `CLMonitor.Event`.
    public struct Event: Sendable {
        public typealias State = __CLMonitoringState
        public let identifier: String
        public let date: Date
        public let state: State
        public let refinement: (any CLCondition)? = nil

        init(_ event: ConditionEvent) {
            identifier = event.identifier
            date = event.date
            state =
                switch event.state {
                case .unknown: .unknown
                case .satisfied: .satisfied
                case .unsatisfied: .unsatisfied
                case .unmonitored: .unmonitored
                }
        }

        public var authorizationDenied: Bool { false }
        public var authorizationDeniedGlobally: Bool { false }
        public var authorizationRestricted: Bool { false }
        public var authorizationRequestInProgress: Bool { false }
        public var insufficientlyInUse: Bool { false }
        public var accuracyLimited: Bool { false }
        public var conditionUnsupported: Bool { false }
        public var conditionLimitExceeded: Bool { false }
        public var persistenceUnavailable: Bool { false }
        public var serviceSessionRequired: Bool { false }
    }

    /// `CLMonitor.Record`.
    public struct Record: Sendable {
        public let condition: any CLCondition
        public let lastEvent: Event
    }

    /// `CLMonitor.CircularGeographicCondition`.
    public struct CircularGeographicCondition: CLCondition {
        public let center: CLLocationCoordinate2D
        public let radius: CLLocationDistance

        public init(center: CLLocationCoordinate2D, radius: CLLocationDistance) {
            self.center = center
            self.radius = radius
        }

        enum CodingKeys: String, CodingKey { case latitude, longitude, radius }
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            center = CLLocationCoordinate2D(
                latitude: try c.decode(Double.self, forKey: .latitude),
                longitude: try c.decode(Double.self, forKey: .longitude))
            radius = try c.decode(Double.self, forKey: .radius)
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(center.latitude, forKey: .latitude)
            try c.encode(center.longitude, forKey: .longitude)
            try c.encode(radius, forKey: .radius)
        }
    }

    /// `CLMonitor.BeaconIdentityCondition`: a beacon by its UUID, and its major and minor values
    /// (nil: any). It compiles as on iOS; the simulated device has no Bluetooth, so a monitor
    /// does not watch it (the audit log says so when one is added).
    public struct BeaconIdentityCondition: CLCondition {
        public let uuid: UUID
        public let major: UInt16?
        public let minor: UInt16?

        public init(uuid: UUID) {
            self.uuid = uuid
            major = nil
            minor = nil
        }

        public init(uuid: UUID, major: UInt16) {
            self.uuid = uuid
            self.major = major
            minor = nil
        }

        public init(uuid: UUID, major: UInt16, minor: UInt16) {
            self.uuid = uuid
            self.major = major
            self.minor = minor
        }
    }

    /// `CLMonitor.Events`: the monitor's events, until the app's process ends.
    /// When the app asks for the next event it is done with the last one: the monitor's record
    /// holds it from then on ("the record updates with the new event when the handling is
    /// complete").
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = Event
        let stream: AsyncStream<ConditionEvent>
        let monitor: MonitorReference

        init(stream: AsyncStream<ConditionEvent>, monitor: ConditionMonitor?) {
            self.stream = stream
            self.monitor = MonitorReference(monitor)
        }

        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<ConditionEvent>.Iterator
            let monitor: MonitorReference
            var last: ConditionEvent?

            public mutating func next() async throws -> Event? {
                if let last {
                    self.last = nil
                    await monitor.handled(last)
                }
                last = await base.next()
                return last.map(Event.init)
            }
        }

        public func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator(), monitor: monitor) }
    }
}

/// The device's monitor, for the events' iterator: told on the main actor's executor, where the
/// device runs. `@unchecked Sendable`: the monitor is only used there.
final class MonitorReference: @unchecked Sendable {
    let monitor: ConditionMonitor?
    init(_ monitor: ConditionMonitor?) { self.monitor = monitor }

    @MainActor func handled(_ event: ConditionEvent) { monitor?.handled(event) }
}

/// The device's monitor behind a `CLMonitor`. `@unchecked Sendable`: it is only used on the main
/// actor's executor, where the actor runs and the device is driven.
final class MonitorBox: @unchecked Sendable {
    let monitor: ConditionMonitor?
    let events: AsyncStream<ConditionEvent>

    init(_ monitor: ConditionMonitor?) {
        self.monitor = monitor
        if let monitor {
            events = monitor.events
        } else {
            let (stream, continuation) = AsyncStream<ConditionEvent>.makeStream()
            continuation.finish()
            events = stream
        }
    }
}
