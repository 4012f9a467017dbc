#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The kind of movement an app expects, as `CLActivityType`; it sets how soon a stationary
/// device pauses updates (see ``AutoPause``).
public enum ActivityType: String, Sendable, Hashable, Codable, CaseIterable {
    case other, automotiveNavigation, fitness, otherNavigation, airborne
}

/// An error the manager reports, with CoreLocation's codes (`CLError.Code`).
public struct LocationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Int, Sendable, Hashable, Codable {
        /// No location right now; keep trying (`kCLErrorLocationUnknown`).
        case locationUnknown = 0
        /// The user or the system denied access (`kCLErrorDenied`).
        case denied = 1
        /// The network is unavailable (`kCLErrorNetwork`).
        case network = 2

        /// The name used in audit logs: `locationUnknown`, `denied`, `network`.
        public var name: String {
            switch self {
            case .locationUnknown: "locationUnknown"
            case .denied: "denied"
            case .network: "network"
            }
        }
    }

    public var code: Code
    /// Why, in a word: for example `authorizationDenied`, `locationServicesDisabled`, `noFix`.
    public var reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.name) (\(reason))" }
}

/// One delivery from ``LocationManager/updates``, as `CLLocationUpdate`.
public struct LocationUpdate: Sendable, Hashable {
    public var location: Location
    /// The app's state when the location was delivered.
    public var appState: AppState
    /// Why the policy delivered it (``FixReason``).
    public var reason: FixReason
}

/// Receives what a ``LocationManager`` reports, as `CLLocationManagerDelegate`.
///
/// Every method has a default that does nothing. Calls come on the simulation's loop, in
/// simulation-time order.
public protocol LocationManagerDelegate: AnyObject {
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
    func locationManager(_ manager: LocationManager, didFailWithError error: LocationError)
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
    func locationManagerDidPauseLocationUpdates(_ manager: LocationManager)
    func locationManagerDidResumeLocationUpdates(_ manager: LocationManager)
}

extension LocationManagerDelegate {
    public func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {}
    public func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {}
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
    public func locationManagerDidPauseLocationUpdates(_ manager: LocationManager) {}
    public func locationManagerDidResumeLocationUpdates(_ manager: LocationManager) {}
}

/// What a ``LocationManager`` needs from the system it runs in (the ``Simulation``).
protocol LocationManagerHost: AnyObject {
    var authorizationStatus: AuthorizationStatus { get }
    var accuracyAuthorization: AccuracyAuthorization { get }
    func managerRequestedAuthorization(always: Bool)
    func managerStartedUpdates()
    func managerStoppedUpdates()
    func managerChangedSetting(_ name: String, _ value: String)
    func managerMayAllowBackgroundUpdates() -> Bool
}

/// A CoreLocation-style location manager, owned by the simulated app.
///
/// It keeps CoreLocation's names. The system it belongs to (a ``Simulation``) decides every fix
/// by the delivery policy and delivers the survivors to the ``delegate`` and to ``updates``.
/// Like `CLLocationManager`, it is not thread-safe: use it on the simulation's loop, from the
/// delegate callbacks or scripted actions.
public final class LocationManager {
    /// `kCLDistanceFilterNone`: every movement counts.
    public static let distanceFilterNone: Double = -1

    public weak var delegate: (any LocationManagerDelegate)?
    weak var host: (any LocationManagerHost)?

    /// The app's authorization, as the user and the system set it.
    public var authorizationStatus: AuthorizationStatus { host?.authorizationStatus ?? .notDetermined }
    /// Full or reduced accuracy.
    public var accuracyAuthorization: AccuracyAuthorization { host?.accuracyAuthorization ?? .fullAccuracy }

    /// The accuracy the app asks for (``AccuracyModel`` says what each level gives).
    public var desiredAccuracy: DesiredAccuracy = .best {
        didSet {
            if desiredAccuracy != oldValue { host?.managerChangedSetting("desiredAccuracy", "\(desiredAccuracy)") }
        }
    }
    /// Metres the device must move from the last delivered location before the next one is
    /// delivered; ``distanceFilterNone`` (−1) delivers every fix.
    public var distanceFilter: Double = LocationManager.distanceFilterNone {
        didSet {
            if distanceFilter != oldValue {
                host?.managerChangedSetting("distanceFilter", ValueFormatting.fixed(distanceFilter, decimals: 1))
            }
        }
    }
    /// Whether updates continue in the background. Setting it to true needs the `location`
    /// background mode; without it the setting is refused with a diagnostic (iOS raises an
    /// exception).
    public var allowsBackgroundLocationUpdates: Bool = false {
        didSet {
            if allowsBackgroundLocationUpdates && !(host?.managerMayAllowBackgroundUpdates() ?? true) {
                allowsBackgroundLocationUpdates = false
                return
            }
            if allowsBackgroundLocationUpdates != oldValue {
                host?.managerChangedSetting("allowsBackgroundLocationUpdates", "\(allowsBackgroundLocationUpdates)")
            }
        }
    }
    /// Whether a stationary device pauses updates (the default, as in CoreLocation).
    public var pausesLocationUpdatesAutomatically: Bool = true {
        didSet {
            if pausesLocationUpdatesAutomatically != oldValue {
                host?.managerChangedSetting(
                    "pausesLocationUpdatesAutomatically", "\(pausesLocationUpdatesAutomatically)")
            }
        }
    }
    /// The movement the app expects; it sets how soon updates pause.
    public var activityType: ActivityType = .other {
        didSet { if activityType != oldValue { host?.managerChangedSetting("activityType", activityType.rawValue) } }
    }
    /// Whether an always-authorized app shows the location indicator in the background.
    public var showsBackgroundLocationIndicator: Bool = false

    /// The most recently delivered location.
    @exclusivity(unchecked) public internal(set) var location: Location?
    /// Whether the app has asked for updates and not stopped them.
    @exclusivity(unchecked) public internal(set) var isUpdatingLocation = false

    @exclusivity(unchecked) private var continuations: [Int: AsyncStream<LocationUpdate>.Continuation] = [:]
    private var nextContinuationID = 0

    init() {}

    /// Asks for When In Use authorization (`requestWhenInUseAuthorization()`).
    public func requestWhenInUseAuthorization() { host?.managerRequestedAuthorization(always: false) }
    /// Asks for Always authorization (`requestAlwaysAuthorization()`).
    public func requestAlwaysAuthorization() { host?.managerRequestedAuthorization(always: true) }
    /// Starts standard location updates (`startUpdatingLocation()`).
    public func startUpdatingLocation() { host?.managerStartedUpdates() }
    /// Stops them (`stopUpdatingLocation()`).
    public func stopUpdatingLocation() { host?.managerStoppedUpdates() }

    /// Delivered locations as an asynchronous sequence, as `CLLocationUpdate.liveUpdates()`.
    ///
    /// Each call gives a new stream that receives every update delivered from then on; it ends
    /// when the simulation finishes. The stream buffers without limit, so a slow reader loses
    /// nothing.
    public func updates() -> AsyncStream<LocationUpdate> {
        let (stream, continuation) = AsyncStream<LocationUpdate>.makeStream(bufferingPolicy: .unbounded)
        let id = nextContinuationID
        nextContinuationID += 1
        continuations[id] = continuation
        return stream
    }

    func deliver(_ location: Location, appState: AppState, reason: FixReason) {
        self.location = location
        delegate?.locationManager(self, didUpdateLocations: [location])
        if !continuations.isEmpty {
            let update = LocationUpdate(location: location, appState: appState, reason: reason)
            for continuation in continuations.values { continuation.yield(update) }
        }
    }

    func finishUpdates() {
        for continuation in continuations.values { continuation.finish() }
        continuations.removeAll()
    }
}
