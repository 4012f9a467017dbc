#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The visits service (`startMonitoringVisits()`): a pure state machine that finds the places
/// where the device stayed.
///
/// It answers in the device's actions (``DeviceAction``): its start and stop are audit events,
/// and a visit is handed to the rules as a service event, whose delivery (to the running app,
/// waking or relaunching it, or dropped) is decided in one place for every location service.
///
/// Apple describes a visit as a place where the user spent time, reported with an arrival and
/// a departure, without publishing how it is found. Waymark's model, its numbers all
/// assumptions that scenarios can change (`system.visitRadius`, `system.visitMinimumStay`):
///
/// - A stay begins at a fix (its anchor) and goes on while the fixes stay within ``radius`` of
///   it.
/// - Once the stay has lasted ``minimumStay``, its arrival is an event (a ``Visit`` whose
///   departure date is `Date.distantFuture`): visits come late by nature, at least that long
///   after the arrival they report.
/// - The first fix farther than ``radius`` from the anchor ends the stay: the whole visit is an
///   event, departing at the last fix within the radius (reported with that fix: Apple documents
///   no delay, and Waymark adds none). That fix starts the next stay.
/// - A visit's coordinate is the mean of the stay's fixes; its accuracy is the radius (visits
///   come with the lower accuracy of the service, never that of a single fix).
public struct VisitStateMachine: Sendable, Hashable {
    public enum Event: Sendable, Hashable {
        case start
        case stop
        /// A fix of the device at `date`, at the offset `at`.
        case fix(Coordinate, date: Date, at: Duration)
    }

    /// Metres a stay may wander from its first fix.
    public let radius: Double
    /// How long a stay must last to be a visit.
    public let minimumStay: Duration

    public enum State: Sendable, Hashable {
        /// The app has not started visit monitoring, or stopped it.
        case stopped
        /// Monitoring, before the first fix.
        case monitoring
        /// Monitoring: the device stays (or has stayed) near a place.
        case staying(Stay)
    }

    public private(set) var state: State = .stopped

    public var isMonitoring: Bool { state != .stopped }

    /// A stay near a place: where it began, since when, and the mean of its fixes.
    public struct Stay: Sendable, Hashable {
        var anchor: Coordinate
        var since: Duration
        var arrival: Date
        var lastInside: Date
        var sumLatitude = 0.0
        var sumLongitude = 0.0
        var count = 0
        var arrived = false

        /// The mean of the stay's fixes; longitudes are summed as offsets from the anchor, so a
        /// stay on the antimeridian keeps its place.
        var mean: Coordinate {
            let n = Double(max(count, 1))
            var lon = anchor.longitude + sumLongitude / n
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
            return Coordinate(latitude: anchor.latitude + sumLatitude / n, longitude: lon)
        }

        mutating func add(_ c: Coordinate) {
            sumLatitude += c.latitude - anchor.latitude
            var dLon = c.longitude - anchor.longitude
            if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
            sumLongitude += dLon
            count += 1
        }
    }

    public init(radius: Double = 100, minimumStay: Duration = .seconds(600)) {
        self.radius = radius
        self.minimumStay = minimumStay
    }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .start:
            guard !isMonitoring else { return [] }
            state = .monitoring
            return [.record(.visit(action: .started, visit: nil, decision: nil, reason: nil))]
        case .stop:
            guard isMonitoring else { return [] }
            state = .stopped
            return [.record(.visit(action: .stopped, visit: nil, decision: nil, reason: nil))]
        case .fix(let c, let date, let now):
            guard isMonitoring else { return [] }
            guard case .staying(var current) = state else {
                state = .staying(Self.begin(c, date, now))
                return []
            }
            guard Geodesic.isWithin(radius, current.anchor, c) else {
                state = .staying(Self.begin(c, date, now))
                guard current.arrived else { return [] }
                return [.post(.serviceEvent(.visit(visit(current, departure: current.lastInside))))]
            }
            current.add(c)
            current.lastInside = date
            var actions: [DeviceAction] = []
            if !current.arrived && now - current.since >= minimumStay {
                current.arrived = true
                actions.append(.post(.serviceEvent(.visit(visit(current, departure: .distantFuture)))))
            }
            state = .staying(current)
            return actions
        }
    }

    private static func begin(_ c: Coordinate, _ date: Date, _ now: Duration) -> Stay {
        var s = Stay(anchor: c, since: now, arrival: date, lastInside: date)
        s.add(c)
        return s
    }

    private func visit(_ s: Stay, departure: Date) -> Visit {
        Visit(coordinate: s.mean, horizontalAccuracy: radius, arrivalDate: s.arrival, departureDate: departure)
    }
}
