#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Region monitoring (`startMonitoring(for:)` with circular regions, and the circular conditions
/// of a `CLMonitor`): a pure state machine.
///
/// It holds no clock and does no I/O; times come with the events. It answers in the device's
/// actions (``DeviceAction``), as its ``owner`` has them: the manager's regions are audit
/// `region` events and delegate calls, a monitor's conditions are audit `monitor` events. A
/// crossing is handed to the rules as a service event: whether it reaches the app, wakes it or
/// relaunches it is decided in one place for every location service (``ServiceDelivery``). The
/// rules:
///
/// - `startMonitoring(for:)` while the app is denied or restricted fails with
///   `regionMonitoringDenied` (`CLError.h`: "Location region monitoring has been denied by the
///   user").
/// - An app monitors at most ``limit`` (20) regions ("Core Location limits to 20 the number of
///   regions that may be simultaneously monitored by a single app"), its regions and its
///   monitors' conditions together; one more fails with `regionMonitoringFailure`, as does a
///   radius above ``maximumRadius`` (`maximumRegionMonitoringDistance`). Monitoring an
///   identifier again replaces its region.
/// - Regions persist while the app is suspended or terminated, until the app stops them.
/// - The first fix after monitoring begins sets the state (inside when within the radius) and
///   reports nothing: only a crossing is an event.
/// - A crossing is reported once the device has moved at least the hysteresis distance past the
///   boundary (half the radius for a smaller region) and stayed there for ``dwell`` (20 s): "the user's location must cross the region
///   boundary, move away from the boundary by a minimum distance, and remain at that minimum
///   distance for at least 20 seconds before the notifications are reported". Apple gives no
///   figure for the distance: it is ``hysteresis`` (100 m by default, an assumption; the scenario
///   key `system.regionHysteresis`). The event comes with the first fix that completes the dwell.
/// - `requestState(for:)` reports the current state (unknown before the first fix, and with
///   reduced accuracy).
/// - A monitor's conditions report their first state too (`CLMonitor` sends an event for it).
public struct RegionMonitorStateMachine: Sendable, Hashable {
    /// Whose regions the machine holds.
    public enum Owner: Sendable, Hashable {
        /// The app's `CLCircularRegion`s (`startMonitoring(for:)`), for every location manager.
        case regions
        /// The conditions of the app's `CLMonitor` of that name.
        case monitor(name: String)
    }

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
        /// The state it was added in (a condition's assumed state, else `unknown`), and when:
        /// a monitor's record until the app has handled an event of it.
        public let addedState: RegionState
        public let added: Duration
        /// A crossing under way: the state it leads to, and since when the device is past the
        /// hysteresis distance.
        var pendingState: RegionState?
        var pendingSince: Duration = .zero
        /// Degrees of latitude and of longitude from the centre beyond which a fix is surely past
        /// the outer threshold (radius plus hysteresis): the hot path's first test (infinite for a
        /// region too large for it).
        var outerLatitude = Double.infinity
        var outerLongitude = Double.infinity

        init(region: CircularRegion, state: RegionState, added: Duration, hysteresis: Double) {
            self.region = region
            self.state = state
            addedState = state
            self.added = added
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
        /// `startMonitoring(for:)`, or a monitor's `add`; the app monitors `elsewhere` regions
        /// beside this machine's (they count toward ``limit``), and has `authorization`. A
        /// monitor's condition may be added in an assumed state (`assuming`): "the initial state
        /// you specify", reported only once the device is found in the other; else it starts
        /// `unknown`. It is added at `at`.
        case start(
            CircularRegion, elsewhere: Int = 0, authorization: AuthorizationStatus = .authorizedAlways,
            assuming: RegionState = .unknown, at: Duration)
        /// `stopMonitoring(for:)` by identifier.
        case stop(identifier: String)
        /// `requestState(for:)`; with `reducedAccuracy` region monitoring is unavailable.
        case requestState(identifier: String, reducedAccuracy: Bool = false)
        /// A fix of the device.
        case fix(Coordinate, at: Duration)
    }

    /// Metres past the boundary before a crossing counts.
    public let hysteresis: Double
    /// Whose regions these are.
    public let owner: Owner
    /// Whether the first state of a region is an event too (`CLMonitor`'s conditions), rather than
    /// set silently (`CLCircularRegion`).
    public var reportsInitialState: Bool { owner != .regions }
    /// Whether regions are monitored, and which.
    public enum State: Sendable, Hashable {
        case idle
        /// The monitored regions, in the order they were started (never empty).
        case monitoring([Monitored])
    }

    public private(set) var state: State = .idle

    public init(hysteresis: Double = 100, owner: Owner = .regions) {
        self.hysteresis = hysteresis
        self.owner = owner
    }

    /// The monitored regions, in the order they were started.
    public private(set) var regions: [Monitored] {
        get { if case .monitoring(let regions) = state { regions } else { [] } }
        set { state = newValue.isEmpty ? .idle : .monitoring(newValue) }
    }

    /// Whether any region is monitored.
    public var isMonitoring: Bool { if case .monitoring = state { true } else { false } }

    public mutating func handle(_ event: Event) -> [DeviceAction] {
        switch event {
        case .start(let region, let elsewhere, let authorization, let assumed, let now):
            if owner == .regions && (authorization == .denied || authorization == .restricted) {
                return [
                    .record(
                        .region(
                            action: .failed, identifier: region.identifier, state: nil, decision: nil, reason: .denied)),
                    .call(
                        .delegate(
                            .monitoringDidFail(
                                region, LocationError(.regionMonitoringDenied, reason: authorization.rawValue)),
                            to: .all)),
                ]
            }
            let existing = regions.firstIndex { $0.region.identifier == region.identifier }
            // A replacement is not one more.
            guard existing != nil || regions.count + elsewhere < Self.limit else {
                return failed(region, .limitReached)
            }
            guard region.radius > 0, region.radius <= Self.maximumRadius else {
                return failed(region, .radiusTooLarge)
            }
            let monitored = Monitored(region: region, state: assumed, added: now, hysteresis: hysteresis)
            if let existing { regions[existing] = monitored } else { regions.append(monitored) }
            return started(region)
        case .stop(let identifier):
            guard let i = regions.firstIndex(where: { $0.region.identifier == identifier }) else { return [] }
            regions.remove(at: i)
            return stopped(identifier)
        case .requestState(let identifier, let reducedAccuracy):
            guard let m = regions.first(where: { $0.region.identifier == identifier }) else { return [] }
            // Region monitoring is unavailable with reduced accuracy: the state is not known
            // (*assumption*: Apple does not say what requestState answers then).
            return determined(m.region, reducedAccuracy ? .unknown : m.state)
        case .fix(let coordinate, let now):
            guard case .monitoring(var regions) = state else { return [] }
            // The array is taken out of the state, so that it changes in place.
            state = .idle
            defer { state = .monitoring(regions) }
            var actions: [DeviceAction] = []
            for i in regions.indices {
                if regions[i].state == .outside && regions[i].pendingState == nil
                    && regions[i].isSurelyOutside(coordinate)
                {
                    continue  // far away and known to be: nothing to do
                }
                if let crossed = observe(&regions[i], coordinate, now) {
                    actions.append(crossing(regions[i].region, crossed))
                }
            }
            return actions
        }
    }

    /// The hot path: every fix against every region. ``Geodesic/distanceBounds(_:_:)`` settles
    /// the clear cases (a region far away, a device deep inside); the geodesic decides near a
    /// threshold.
    /// The state the region is reported in, if it is.
    private func observe(_ m: inout Monitored, _ c: Coordinate, _ now: Duration) -> RegionState? {
        let r = m.region.radius
        let (lower, upper) = Geodesic.distanceBounds(m.region.center, c)
        if m.state == .unknown {
            let inside = upper <= r || (lower <= r && Geodesic.distance(m.region.center, c) <= r)
            m.state = inside ? .inside : .outside
            return reportsInitialState ? m.state : nil
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
        return wanted ? beyond : nil
    }
}

/// The machine's answers, as its owner has them.
extension RegionMonitorStateMachine {
    private func started(_ region: CircularRegion) -> [DeviceAction] {
        switch owner {
        case .regions:
            [
                .record(
                    .region(action: .started, identifier: region.identifier, state: nil, decision: nil, reason: nil)),
                .call(.delegate(.didStartMonitoring(region), to: .all)),
            ]
        case .monitor(let name):
            [.record(.monitor(name: name, identifier: region.identifier, action: .added, decision: nil, reason: nil))]
        }
    }

    private func failed(_ region: CircularRegion, _ failure: Failure) -> [DeviceAction] {
        switch owner {
        case .regions:
            [
                .record(
                    .region(
                        action: .failed, identifier: region.identifier, state: nil, decision: nil,
                        reason: failure.auditReason)),
                .call(
                    .delegate(
                        .monitoringDidFail(region, LocationError(.regionMonitoringFailure, reason: failure.rawValue)),
                        to: .all)),
            ]
        case .monitor(let name):
            [
                .record(
                    .monitor(
                        name: name, identifier: region.identifier, action: .failed, decision: nil,
                        reason: failure.auditReason))
            ]
        }
    }

    private func stopped(_ identifier: String) -> [DeviceAction] {
        switch owner {
        case .regions:
            [.record(.region(action: .stopped, identifier: identifier, state: nil, decision: nil, reason: nil))]
        case .monitor(let name):
            [.record(.monitor(name: name, identifier: identifier, action: .removed, decision: nil, reason: nil))]
        }
    }

    /// The answer to `requestState(for:)` (a monitor's conditions have none: nothing).
    private func determined(_ region: CircularRegion, _ state: RegionState) -> [DeviceAction] {
        guard owner == .regions else { return [] }
        return [
            .record(
                .region(action: .determined, identifier: region.identifier, state: state, decision: nil, reason: nil)),
            .call(.delegate(.didDetermineState(state, region), to: .all)),
        ]
    }

    /// The device entered (`.inside`) or left (`.outside`) the region, and the region asks to hear
    /// of it: a service event for the rules to deliver.
    private func crossing(_ region: CircularRegion, _ state: RegionState) -> DeviceAction {
        switch owner {
        case .regions: .post(.serviceEvent(.region(region, state)))
        case .monitor(let name):
            .post(.serviceEvent(.condition(monitor: name, identifier: region.identifier, state: state)))
        }
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
