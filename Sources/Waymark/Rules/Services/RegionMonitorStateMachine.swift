#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Region monitoring (`startMonitoring(for:)` with circular regions): a pure state machine.
///
/// It holds no clock and does no I/O; times come with the events. Whether an event reaches the
/// app, wakes it or relaunches it is the owner's decision (``ServiceDelivery``). The rules:
///
/// - An app monitors at most ``limit`` (20) regions ("Core Location limits to 20 the number of
///   regions that may be simultaneously monitored by a single app"); one more fails with
///   `regionMonitoringFailure`, as does a radius above ``maximumRadius``
///   (`maximumRegionMonitoringDistance`). Monitoring an identifier again replaces its region.
/// - Regions persist while the app is suspended or terminated, until the app stops them.
/// - The first fix after monitoring begins sets the state (inside when within the radius) and
///   reports nothing: only a crossing is an event.
/// - A crossing is reported once the device has moved at least the hysteresis distance past the
///   boundary (half the radius for a smaller region) and stayed there for ``dwell`` (20 s): "the user's location must cross the region
///   boundary, move away from the boundary by a minimum distance, and remain at that minimum
///   distance for at least 20 seconds before the notifications are reported". Apple gives no
///   figure for the distance: it is ``hysteresis`` (100 m by default, an assumption; the scenario
///   key `system.regionHysteresis`). The event comes with the first fix that completes the dwell.
/// - `requestState(for:)` reports the current state (unknown before the first fix).
public struct RegionMonitorStateMachine: Sendable, Hashable {
    /// The most regions one app monitors.
    public static let limit = 20
    /// How long the device must stay past the hysteresis distance.
    public static let dwell: Duration = .seconds(20)
    /// Metres: the largest radius a region may have (`maximumRegionMonitoringDistance`). Apple
    /// documents no value; this is an assumption.
    public static let maximumRadius = 400_000.0

    public struct Monitored: Sendable, Hashable {
        public var region: CircularRegion
        public var state: RegionState
        /// A crossing under way: the state it leads to, and since when the device is past the
        /// hysteresis distance.
        var pendingState: RegionState?
        var pendingSince: Duration = .zero
        /// Degrees of latitude and of longitude from the centre beyond which a fix is surely past
        /// the outer threshold (radius plus hysteresis): the hot path's first test (infinite for a
        /// region too large for it).
        var outerLatitude = Double.infinity
        var outerLongitude = Double.infinity

        init(region: CircularRegion, state: RegionState, hysteresis: Double) {
            self.region = region
            self.state = state
            // The same bounds as Geodesic.distanceBounds: a degree of latitude is at least
            // 110 574 m, a degree of longitude at least 111 319 m times the cosine of the
            // latitude, less 0.01 %; only within a degree, and below 85° of latitude.
            let outer = region.radius + min(hysteresis, region.radius / 2)
            let latitude = outer / (110_574 * 0.9999)
            let north = abs(region.center.latitude) + latitude
            guard north < 85 else { return }
            let longitude = outer / (111_319 * cos(north * .pi / 180) * 0.9999)
            guard latitude < 1, longitude < 1 else { return }
            outerLatitude = latitude
            outerLongitude = longitude
        }
    }

    public enum Failure: String, Sendable, Hashable {
        /// 20 regions are monitored already.
        case limitReached
        /// The radius is above ``maximumRadius`` or not a positive number.
        case radiusTooLarge

        /// The failure's name in the audit log.
        public var auditReason: AuditReason { self == .limitReached ? .limitReached : .radiusTooLarge }
    }

    public enum Event: Sendable, Hashable {
        /// `startMonitoring(for:)`.
        case start(CircularRegion)
        /// `stopMonitoring(for:)` by identifier.
        case stop(identifier: String)
        /// `requestState(for:)`.
        case requestState(identifier: String)
        /// A fix of the device.
        case fix(Coordinate, at: Duration)
    }

    public enum Action: Sendable, Hashable {
        case started(CircularRegion)
        case failed(CircularRegion, Failure)
        case stopped(identifier: String)
        /// The device entered (`.inside`) or left (`.outside`) the region, and the region asks to
        /// hear of it.
        case crossed(CircularRegion, RegionState)
        /// The answer to `requestState(for:)`.
        case determined(CircularRegion, RegionState)
    }

    /// Metres past the boundary before a crossing counts.
    public let hysteresis: Double
    /// Whether the first state of a region is an event too (`CLMonitor`'s conditions), rather than
    /// set silently (`CLCircularRegion`).
    public let reportsInitialState: Bool
    /// The monitored regions, in the order they were started.
    public private(set) var regions: [Monitored] = []

    public init(hysteresis: Double = 100, reportsInitialState: Bool = false) {
        self.hysteresis = hysteresis
        self.reportsInitialState = reportsInitialState
    }

    /// Whether any region is monitored.
    public var isMonitoring: Bool { !regions.isEmpty }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let region):
            guard region.radius > 0, region.radius <= Self.maximumRadius else {
                return [.failed(region, .radiusTooLarge)]
            }
            if let i = regions.firstIndex(where: { $0.region.identifier == region.identifier }) {
                regions[i] = Monitored(region: region, state: .unknown, hysteresis: hysteresis)
            } else {
                guard regions.count < Self.limit else { return [.failed(region, .limitReached)] }
                regions.append(Monitored(region: region, state: .unknown, hysteresis: hysteresis))
            }
            return [.started(region)]
        case .stop(let identifier):
            guard let i = regions.firstIndex(where: { $0.region.identifier == identifier }) else { return [] }
            regions.remove(at: i)
            return [.stopped(identifier: identifier)]
        case .requestState(let identifier):
            guard let m = regions.first(where: { $0.region.identifier == identifier }) else { return [] }
            return [.determined(m.region, m.state)]
        case .fix(let coordinate, let now):
            var actions: [Action] = []
            for i in regions.indices {
                if regions[i].state == .outside && regions[i].pendingState == nil
                    && regions[i].isSurelyOutside(coordinate)
                {
                    continue  // far away and known to be: nothing to do
                }
                if let crossed = observe(&regions[i], coordinate, now) { actions.append(crossed) }
            }
            return actions
        }
    }

    /// The hot path: every fix against every region. ``Geodesic/distanceBounds(_:_:)`` settles
    /// the clear cases (a region far away, a device deep inside); the geodesic decides near a
    /// threshold.
    private func observe(_ m: inout Monitored, _ c: Coordinate, _ now: Duration) -> Action? {
        let r = m.region.radius
        let (lower, upper) = Geodesic.distanceBounds(m.region.center, c)
        if m.state == .unknown {
            let inside = upper <= r || (lower <= r && Geodesic.distance(m.region.center, c) <= r)
            m.state = inside ? .inside : .outside
            return reportsInitialState ? .crossed(m.region, m.state) : nil
        }
        // A small region cannot hold the whole distance inside it: half its radius then.
        let h = min(hysteresis, r / 2)
        let beyond: RegionState?
        if lower >= r + h {
            beyond = .outside
        } else if upper <= r - h {
            beyond = .inside
        } else if lower > r - h && upper < r + h {
            beyond = nil
        } else {
            let d = Geodesic.distance(m.region.center, c)
            beyond = d <= r - h ? .inside : (d >= r + h ? .outside : nil)
        }
        guard let beyond, beyond != m.state else {
            // Back within the hysteresis band, or on the same side: a crossing under way starts over.
            m.pendingState = nil
            return nil
        }
        if m.pendingState != beyond {
            m.pendingState = beyond
            m.pendingSince = now
        }
        guard now - m.pendingSince >= Self.dwell else { return nil }
        m.state = beyond
        m.pendingState = nil
        let wanted = beyond == .inside ? m.region.notifyOnEntry : m.region.notifyOnExit
        return wanted ? .crossed(m.region, beyond) : nil
    }
}

extension RegionMonitorStateMachine.Monitored {
    /// Whether `c` is surely farther than the outer threshold, by degrees alone.
    @inline(__always)
    func isSurelyOutside(_ c: Coordinate) -> Bool {
        guard abs(c.latitude) < 85 else { return false }
        let dLat = abs(c.latitude - region.center.latitude)
        if dLat >= outerLatitude { return true }
        var dLon = abs(c.longitude - region.center.longitude)
        if dLon > 180 { dLon = 360 - dLon }
        return dLon >= outerLongitude && dLat < 1
    }
}
