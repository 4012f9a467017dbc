#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `CLBackgroundActivitySession` (iOS 17+): "An object that manages a visual indicator that keeps
/// your app in use in the background, allowing it to receive updates or events."
///
/// Start one with ``Simulation/startBackgroundActivitySession()`` while the app is in use; until
/// ``invalidate()`` (or the end of the app's process) its standard updates go on in the
/// background as with `allowsBackgroundLocationUpdates`, with the location indicator, so a When
/// In Use app stays in use. Like that property, it needs the `location` background mode.
public final class BackgroundActivitySession {
    weak var simulation: Simulation?
    let id: Int

    init(simulation: Simulation, id: Int) {
        self.simulation = simulation
        self.id = id
    }

    /// Whether the session keeps the app in use now: started in use, not invalidated, and its
    /// process not ended since (a session ends with its app).
    public var isActive: Bool { simulation?.rules.sessions.activity.contains(id) ?? false }

    /// `invalidate()`.
    public func invalidate() { simulation?.invalidate(self) }
}

/// `CLServiceSession` (iOS 18+): the app declares the authorization a feature needs; while a
/// session is held, Core Location asks for it when the app can show a prompt, and asks again
/// when a temporary authorization lapsed ("including automatically re-asking as needed after
/// temporary authorization lapses"). With `NSLocationRequireExplicitServiceSession` in the Info,
/// live updates deliver nothing without one (``LiveUpdate/Diagnostic/serviceSessionRequired``).
public final class ServiceSession {
    public enum Authorization: String, Sendable, Hashable, CaseIterable {
        case none, whenInUse, always
    }

    public let authorization: Authorization
    weak var simulation: Simulation?
    let id: Int

    init(id: Int, authorization: Authorization, simulation: Simulation) {
        self.id = id
        self.authorization = authorization
        self.simulation = simulation
    }

    /// `invalidate()`.
    public func invalidate() { simulation?.invalidate(self) }
}

/// One element of ``DeviceLocationManager/liveUpdates()``, as `CLLocationUpdate`: a location, or
/// (iOS 18) why there is none.
public struct LiveUpdate: Sendable, Hashable {
    /// Why no location comes (iOS 18's diagnostic properties of `CLLocationUpdate`).
    public enum Diagnostic: String, Sendable, Hashable, CaseIterable {
        case authorizationDenied, authorizationDeniedGlobally, authorizationRestricted
        case authorizationRequestInProgress, insufficientlyInUse, locationUnavailable, accuracyLimited
        case serviceSessionRequired

        /// The diagnostic a dropped fix's reason stands for, if any.
        init?(_ reason: FixReason) {
            switch reason {
            case .denied: self = .authorizationDenied
            case .locationServicesDisabled: self = .authorizationDeniedGlobally
            case .restricted: self = .authorizationRestricted
            case .notDetermined: self = .authorizationRequestInProgress  // while a prompt shows
            case .notInUse, .whenInUseStartedInBackground: self = .insufficientlyInUse
            case .noFix: self = .locationUnavailable
            case .accuracyThrottle: self = .accuracyLimited
            default: return nil
            }
        }
    }

    public var location: Location?
    /// The device is stationary: updates pause until it moves ("If Core Location stops
    /// delivering updates because the device is stationary, then it sets isStationary to true").
    public var isStationary: Bool
    public var diagnostic: Diagnostic?

    public init(location: Location?, isStationary: Bool = false, diagnostic: Diagnostic? = nil) {
        self.location = location
        self.isStationary = isStationary
        self.diagnostic = diagnostic
    }

    public var authorizationDenied: Bool { diagnostic == .authorizationDenied }
    public var authorizationDeniedGlobally: Bool { diagnostic == .authorizationDeniedGlobally }
    public var authorizationRestricted: Bool { diagnostic == .authorizationRestricted }
    public var authorizationRequestInProgress: Bool { diagnostic == .authorizationRequestInProgress }
    public var insufficientlyInUse: Bool { diagnostic == .insufficientlyInUse }
    public var locationUnavailable: Bool { diagnostic == .locationUnavailable }
    public var accuracyLimited: Bool { diagnostic == .accuracyLimited }
    public var serviceSessionRequired: Bool { diagnostic == .serviceSessionRequired }
}

/// The state of a `CLMonitor` condition, as `CLMonitor.Event.state`.
public enum MonitoringState: String, Sendable, Hashable, CaseIterable {
    case unknown, satisfied, unsatisfied, unmonitored
}

extension MonitoringState {
    /// A condition's state for a known region state: satisfied inside, unsatisfied outside.
    init(_ state: RegionState) { self = state == .inside ? .satisfied : .unsatisfied }
}

/// One event of a ``ConditionMonitor``, as `CLMonitor.Event`.
public struct ConditionEvent: Sendable, Hashable {
    public var identifier: String
    public var state: MonitoringState
    /// When it happened (the simulation's clock).
    public var date: Date
}

/// `CLMonitor` (iOS 17+): circular geographic conditions whose state changes come as an
/// asynchronous sequence, ``events``. Unlike region monitoring, the first state of a condition
/// is an event too ("The initial state is unknown", then satisfied or unsatisfied).
///
/// Create one with ``Simulation/monitor(named:)``. Conditions persist across launches with the
/// monitor's name; a condition's change relaunches an Always app, which receives the event once
/// it creates the monitor again ("When the app relaunches, recreate the monitor with the same
/// identifier"). Conditions count toward the 20 regions an app may monitor (Apple gives no
/// number for `CLMonitor`: an assumption).
public final class ConditionMonitor {
    public let name: String
    /// The condition events, from the monitor's creation until the simulation finishes or the
    /// app ends.
    public let events: AsyncStream<ConditionEvent>
    let continuation: DeviceStreamBuffer<ConditionEvent>
    weak var simulation: Simulation?
    /// The process whose code created the monitor (nil: none ran, and the monitor is inert).
    /// When it ends the monitor is inert, as a manager is: the relaunched app creates the monitor
    /// again. Its reference, not the process: the process keeps its monitors.
    let process: ProcessReference?

    init(name: String, simulation: Simulation, process: ProcessReference?) {
        self.name = name
        self.simulation = simulation
        self.process = process
        continuation = DeviceStreamBuffer()
        events = continuation.makeStream()
        simulation.watch(continuation)
    }

    /// `add(_:identifier:)` with a `CircularGeographicCondition` (the region's centre and radius);
    /// `assuming` is `add(_:identifier:assuming:)`'s initial state (`inside`: satisfied,
    /// `outside`: unsatisfied): the first event comes when the device is found in the other.
    public func add(_ condition: CircularRegion, identifier: String, assuming: RegionState = .unknown) {
        guard let simulation = live("add(_:identifier:)") else { return }
        simulation.addCondition(condition, identifier: identifier, to: name, assuming: assuming)
    }

    /// `remove(_:)`.
    public func remove(_ identifier: String) {
        guard let simulation = live("remove(_:)") else { return }
        simulation.removeCondition(identifier, from: name)
    }

    /// The identifiers of the monitor's conditions.
    public var identifiers: [String] {
        simulation?.conditionIdentifiers(of: name) ?? []
    }

    /// `record(for:)`: the condition the system keeps under `identifier` for this monitor's
    /// name, with its last event: the last one the app handled ("When your app handles a new
    /// event, the record contains the prior event … the record updates with the new event when
    /// the handling is complete"), or, before any, the state it was added in (`unknown`, or the
    /// state assumed) at the time it was added; nil if there is none. Conditions outlive the
    /// process, so a monitor created again after a relaunch reads the records its predecessor
    /// left.
    public func record(for identifier: String) -> ConditionRecord? {
        guard let simulation, let (m, handled) = simulation.rules.conditions.record(for: identifier, monitor: name)
        else { return nil }
        if let handled { return ConditionRecord(condition: m.region, lastEvent: handled) }
        let state: MonitoringState = m.addedState == .unknown ? .unknown : MonitoringState(m.addedState)
        return ConditionRecord(
            condition: m.region,
            lastEvent: ConditionEvent(
                identifier: identifier, state: state, date: simulation.epoch.addingTimeInterval(m.added.inSeconds)))
    }

    /// The app has handled `event`, one of ``events``: ``record(for:)`` holds it from now on.
    /// `CLMonitor`'s events say so when the app asks for the next one; code that reads
    /// ``events`` itself calls this when it is done with an event.
    public func handled(_ event: ConditionEvent) {
        guard let simulation else { return }
        simulation.perform(simulation.rules.handle(.conditionEventHandled(event, monitor: name)))
    }

    /// `add(_:identifier:)` with a condition the simulated device cannot watch (a beacon's: it
    /// has no Bluetooth): nothing is kept, and the audit log says so.
    public func unsupported(_ condition: String, identifier: String) {
        guard let simulation = live("add(_:identifier:)") else { return }
        simulation.record(
            .diagnostic(
                message:
                    "the CLMonitor \"\(name)\" cannot watch \"\(identifier)\", a \(condition): the simulated device has no Bluetooth, only circular geographic conditions are monitored"
            ))
    }

    /// The device, if this monitor may still change it: its process has not ended. A call on the
    /// monitor of an ended process does nothing, and the audit log says so.
    private func live(_ call: String) -> Simulation? {
        guard let simulation else { return nil }
        // Made before any launch, it belongs to no process: no later one may hear it.
        guard let process else {
            simulation.inertMonitorUsed(call, monitor: name, process: nil)
            return nil
        }
        if process.hasEnded {
            simulation.inertMonitorUsed(call, monitor: name, process: process.number)
            return nil
        }
        return simulation
    }
}

/// `CLMonitor.Record`: a condition and its last event.
public struct ConditionRecord: Sendable, Hashable {
    public var condition: CircularRegion
    public var lastEvent: ConditionEvent
}
