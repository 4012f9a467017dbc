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
        /// The user or the system denied region monitoring (`kCLErrorRegionMonitoringDenied`).
        case regionMonitoringDenied = 4
        /// A region cannot be monitored: 20 already, or too large a radius
        /// (`kCLErrorRegionMonitoringFailure`).
        case regionMonitoringFailure = 5
        /// The temporary full accuracy request failed (`kCLErrorPromptDeclined`).
        case promptDeclined = 18

        /// The name used in audit logs: `locationUnknown`, `denied`, `network`,
        /// `regionMonitoringDenied`, `regionMonitoringFailure`, `promptDeclined`.
        public var name: String {
            switch self {
            case .locationUnknown: "locationUnknown"
            case .denied: "denied"
            case .network: "network"
            case .regionMonitoringDenied: "regionMonitoringDenied"
            case .regionMonitoringFailure: "regionMonitoringFailure"
            case .promptDeclined: "promptDeclined"
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

/// One delivery from ``LocationManager/updates()``, as `CLLocationUpdate`.
public struct LocationUpdate: Sendable, Hashable {
    public var location: Location
    /// The app's state when the location was delivered.
    public var appState: AppState
    /// Why the policy delivered it (``FixReason``).
    public var reason: FixReason
    /// The point's index in its file, or the fix's sequence number.
    public var index: Int
    /// The track segment it came from.
    public var segment: Int

    public init(location: Location, appState: AppState, reason: FixReason, index: Int = 0, segment: Int = 0) {
        self.location = location
        self.appState = appState
        self.reason = reason
        self.index = index
        self.segment = segment
    }
}

/// Receives what a ``LocationManager`` reports, as `CLLocationManagerDelegate`.
///
/// Every method has a default that does nothing. Calls come on the simulation's isolation, in
/// simulation-time order. A `@MainActor` class conforms with an isolated conformance, and its
/// methods then run on the main actor, where the simulation runs:
///
/// ```swift
/// extension RunViewModel: @MainActor LocationManagerDelegate {
///     func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) { … }
/// }
/// ```
public protocol LocationManagerDelegate: AnyObject {
    /// One call per delivery: a single location, or the queue of a suspended app when it runs
    /// again, oldest first ("the most recent location update is at the end of the array").
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
    func locationManager(_ manager: LocationManager, didFailWithError error: LocationError)
    /// The status the app reads changed; from iOS 14 also when the app creates its manager.
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
    func locationManagerDidPauseLocationUpdates(_ manager: LocationManager)
    func locationManagerDidResumeLocationUpdates(_ manager: LocationManager)
    /// The device entered a monitored region (`locationManager(_:didEnterRegion:)`).
    func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion)
    /// The device left a monitored region (`locationManager(_:didExitRegion:)`).
    func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion)
    /// A region's state, after a crossing or for `requestState(for:)`.
    func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: CircularRegion)
    func locationManager(_ manager: LocationManager, didStartMonitoringFor region: CircularRegion)
    func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: CircularRegion, withError error: LocationError)
    /// A visit began or ended (`locationManager(_:didVisit:)`).
    func locationManager(_ manager: LocationManager, didVisit visit: Visit)
}

extension LocationManagerDelegate {
    public func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {}
    public func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {}
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
    public func locationManagerDidPauseLocationUpdates(_ manager: LocationManager) {}
    public func locationManagerDidResumeLocationUpdates(_ manager: LocationManager) {}
    public func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion) {}
    public func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion) {}
    public func locationManager(
        _ manager: LocationManager, didDetermineState state: RegionState, for region: CircularRegion
    ) {}
    public func locationManager(_ manager: LocationManager, didStartMonitoringFor region: CircularRegion) {}
    public func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: CircularRegion, withError error: LocationError
    ) {}
    public func locationManager(_ manager: LocationManager, didVisit visit: Visit) {}
}

/// What a ``LocationManager`` needs from the system it runs in (the ``Simulation``).
protocol LocationManagerHost: AnyObject {
    var authorizationStatus: AuthorizationStatus { get }
    var accuracyAuthorization: AccuracyAuthorization { get }
    var isUpdating: Bool { get }
    func managerRequestedAuthorization(always: Bool)
    func managerStartedUpdates()
    func managerStoppedUpdates()
    func managerChangedSetting(_ name: ManagerSetting, _ value: String)
    func managerMayAllowBackgroundUpdates() -> Bool
    func managerStartedSignificantChanges()
    func managerStoppedSignificantChanges()
    func managerStartedMonitoring(_ region: CircularRegion)
    func managerStoppedMonitoring(identifier: String)
    func managerRequestedState(identifier: String)
    var monitoredRegions: Set<CircularRegion> { get }
    func managerStartedVisits()
    func managerStoppedVisits()
    func managerRequestedLocation()
    func managerRequestedTemporaryFullAccuracy(purposeKey: String, completion: ((LocationError?) -> Void)?)
    /// Whether live updates may start now; says why not in the audit log.
    func managerMayStartLiveUpdates() -> Bool
    func managerStartedLiveUpdates()
}

/// A CoreLocation-style location manager, owned by the simulated app.
///
/// It keeps CoreLocation's names. The device it belongs to (``Simulation/manager``) decides
/// every fix by the rules of the iOS release it models and delivers the survivors to the
/// ``delegate`` and to ``updates()``. Like `CLLocationManager`, it is not thread-safe: use it on
/// the simulation's isolation, from the app's code, the delegate callbacks or a test.
public final class LocationManager {
    /// `kCLDistanceFilterNone`: every movement counts.
    public static let distanceFilterNone: Double = -1

    public weak var delegate: (any LocationManagerDelegate)?
    weak var host: (any LocationManagerHost)?
    /// The properties the rules read.
    private(set) var settings = LocationServiceStateMachine.Settings()

    /// The app's authorization, as the user and the system set it (`denied` with Location
    /// Services off, `restricted` on a restricted device).
    public var authorizationStatus: AuthorizationStatus { host?.authorizationStatus ?? .notDetermined }
    /// Full or reduced accuracy.
    public var accuracyAuthorization: AccuracyAuthorization { host?.accuracyAuthorization ?? .fullAccuracy }

    /// The accuracy the app asks for (``AccuracyModel`` says what each level gives).
    public var desiredAccuracy: DesiredAccuracy {
        get { settings.desiredAccuracy }
        set { update(\.desiredAccuracy, to: newValue, .desiredAccuracy, "\(newValue)") }
    }
    /// Metres the device must move from the last delivered location before the next one is
    /// delivered; ``distanceFilterNone`` (−1) delivers every fix.
    public var distanceFilter: Double {
        get { settings.distanceFilter }
        set { update(\.distanceFilter, to: newValue, .distanceFilter, ValueFormatting.fixed(newValue, decimals: 1)) }
    }
    /// Whether updates continue in the background. Setting it to true without the `location`
    /// background mode is a fatal error that terminates the app, as on iOS.
    public var allowsBackgroundLocationUpdates: Bool {
        get { settings.allowsBackgroundLocationUpdates }
        set {
            guard newValue != settings.allowsBackgroundLocationUpdates else { return }
            if newValue && !(host?.managerMayAllowBackgroundUpdates() ?? true) { return }
            update(\.allowsBackgroundLocationUpdates, to: newValue, .allowsBackgroundLocationUpdates, "\(newValue)")
        }
    }
    /// Whether a stationary device pauses updates (the default, as in CoreLocation).
    public var pausesLocationUpdatesAutomatically: Bool {
        get { settings.pausesLocationUpdatesAutomatically }
        set {
            update(
                \.pausesLocationUpdatesAutomatically, to: newValue, .pausesLocationUpdatesAutomatically, "\(newValue)")
        }
    }
    /// The movement the app expects; it sets how soon updates pause.
    public var activityType: ActivityType {
        get { settings.activityType }
        set { update(\.activityType, to: newValue, .activityType, newValue.rawValue) }
    }
    /// Whether an Always app's background session shows the location indicator.
    public var showsBackgroundLocationIndicator: Bool {
        get { settings.showsBackgroundLocationIndicator }
        set {
            update(\.showsBackgroundLocationIndicator, to: newValue, .showsBackgroundLocationIndicator, "\(newValue)")
        }
    }

    /// Sets one property and, when it changed, tells the device (a `setting` audit event).
    private func update<T: Equatable>(
        _ property: WritableKeyPath<LocationServiceStateMachine.Settings, T>, to value: T, _ name: ManagerSetting,
        _ text: @autoclosure () -> String
    ) {
        guard value != settings[keyPath: property] else { return }
        settings[keyPath: property] = value
        if let host { host.managerChangedSetting(name, text()) } else { changesBeforeAdoption.append((name, text())) }
    }

    /// What the app's code set before a device adopted the manager, in order: the device records
    /// it as `setting` events when its run starts.
    private var changesBeforeAdoption: [(name: ManagerSetting, value: String)] = []

    /// Hands the manager to the device that runs it; returns what was set before, in order.
    func adopt(by host: any LocationManagerHost) -> [(name: ManagerSetting, value: String)] {
        self.host = host
        settingsAtAdoption = settings
        defer { changesBeforeAdoption = [] }
        return changesBeforeAdoption
    }

    /// Whether a device has adopted the manager.
    var isAdopted: Bool { host != nil }

    /// Undoes `allowsBackgroundLocationUpdates` set before adoption on a device whose app lacks
    /// the `location` background mode.
    func refuseBackgroundUpdates() {
        settings.allowsBackgroundLocationUpdates = false
        settingsAtAdoption.allowsBackgroundLocationUpdates = false
    }

    /// The most recently delivered location.
    public internal(set) var location: Location?
    /// Whether the app has asked for updates and not stopped them (paused updates count).
    public var isUpdatingLocation: Bool { host?.isUpdating ?? false }

    private var continuations: [Int: AsyncStream<LocationUpdate>.Continuation] = [:]
    private var liveContinuations: [Int: AsyncStream<LiveUpdate>.Continuation] = [:]
    /// Whether anything listens to live updates (``liveUpdates()``, or the simulation's own
    /// listener for a scripted `liveUpdates`).
    var hasLiveListeners: Bool { !liveContinuations.isEmpty || scriptedLiveListener }
    var scriptedLiveListener = false
    /// With `NSLocationRequireExplicitServiceSession` and no `CLServiceSession` (iOS 18), live
    /// updates carry no location.
    var liveLocationsBlocked = false
    /// The array handed to the delegate, reused from call to call.
    private var spareLocations: [Location] = []
    private var nextContinuationID = 0

    /// A manager the app's own code creates, as it would create `CLLocationManager()`; a device
    /// runs it once it adopts it (``Simulation/init(scenario:epoch:app:manager:)``, or
    /// `TestDevice`'s `manager:`).
    ///
    /// Until then its properties can be set (the device records them as `setting` events when
    /// its run starts), it reads `notDetermined` and full accuracy, and it delivers nothing:
    /// requests and `startUpdatingLocation()` do nothing, as no device hears them. A manager
    /// belongs to one device.
    public init() {}

    /// Asks for When In Use authorization (`requestWhenInUseAuthorization()`).
    public func requestWhenInUseAuthorization() { host?.managerRequestedAuthorization(always: false) }
    /// Asks for Always authorization (`requestAlwaysAuthorization()`).
    public func requestAlwaysAuthorization() { host?.managerRequestedAuthorization(always: true) }
    /// Starts standard location updates (`startUpdatingLocation()`); after an automatic pause,
    /// restarts them.
    public func startUpdatingLocation() { host?.managerStartedUpdates() }
    /// Stops them (`stopUpdatingLocation()`).
    public func stopUpdatingLocation() { host?.managerStoppedUpdates() }

    // MARK: Services that wake or relaunch the app

    /// Starts the significant-change location service
    /// (`startMonitoringSignificantLocationChanges()`): a location when the device has moved
    /// 500 m and at least 5 minutes after the last. It relaunches an Always app; after a relaunch,
    /// call it again to receive the events ("Upon relaunch, you must still configure a location
    /// manager object and call this method").
    public func startMonitoringSignificantLocationChanges() { host?.managerStartedSignificantChanges() }
    /// `stopMonitoringSignificantLocationChanges()`.
    public func stopMonitoringSignificantLocationChanges() { host?.managerStoppedSignificantChanges() }

    /// `startMonitoring(for:)`: entry and exit events for a circular region, at most 20 per app
    /// (one more fails with `regionMonitoringFailure`). Regions persist across launches.
    public func startMonitoring(for region: CircularRegion) { host?.managerStartedMonitoring(region) }
    /// `stopMonitoring(for:)`.
    public func stopMonitoring(for region: CircularRegion) {
        host?.managerStoppedMonitoring(identifier: region.identifier)
    }
    /// `requestState(for:)`: the delegate's `didDetermineState` answers.
    public func requestState(for region: CircularRegion) { host?.managerRequestedState(identifier: region.identifier) }
    /// The regions the app monitors (`monitoredRegions`), across launches.
    public var monitoredRegions: Set<CircularRegion> { host?.monitoredRegions ?? [] }
    /// `maximumRegionMonitoringDistance`, in metres (an assumption: Apple documents no value).
    public var maximumRegionMonitoringDistance: Double { RegionMonitorStateMachine.maximumRadius }

    /// `startMonitoringVisits()`: arrivals and departures (``VisitStateMachine`` has the model).
    public func startMonitoringVisits() { host?.managerStartedVisits() }
    /// `stopMonitoringVisits()`.
    public func stopMonitoringVisits() { host?.managerStoppedVisits() }

    /// `requestLocation()`: one location, then the request ends; `didFailWithError` with
    /// `locationUnknown` if none comes in time. Starting updates cancels it; while updates run it
    /// does nothing.
    public func requestLocation() { host?.managerRequestedLocation() }

    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:completion:)`: asks the user for
    /// full accuracy until the app is no longer in use. Fails with `promptDeclined` when the
    /// Info has no such purpose key, the app already has full accuracy, or it is in the
    /// background.
    public func requestTemporaryFullAccuracyAuthorization(
        withPurposeKey purposeKey: String, completion: ((LocationError?) -> Void)? = nil
    ) {
        host?.managerRequestedTemporaryFullAccuracy(purposeKey: purposeKey, completion: completion)
    }

    /// Delivered locations as an asynchronous sequence, as `CLLocationUpdate.liveUpdates()`.
    ///
    /// Each call gives a new stream that receives every update delivered from then on; it ends
    /// when the simulation finishes. The stream buffers without limit, so a slow reader loses
    /// nothing. `for await` works from any isolation, the main actor included.
    public func updates() -> AsyncStream<LocationUpdate> {
        let (stream, continuation) = AsyncStream<LocationUpdate>.makeStream(bufferingPolicy: .unbounded)
        let id = nextContinuationID
        nextContinuationID += 1
        continuations[id] = continuation
        return stream
    }

    /// Live updates, as `CLLocationUpdate.liveUpdates()` (iOS 17+): the locations the app
    /// receives, and the updates that say why none comes: ``LiveUpdate/isStationary`` when the
    /// device stops (iOS 17), ``LiveUpdate/diagnostic`` (iOS 18) when one is dropped, each
    /// diagnostic once until a location comes again.
    ///
    /// Asking for them starts the manager's updates ("Tells Core Location to start delivering
    /// the location updates"), and from notDetermined asks for When In Use, as an implicit service
    /// session does. Before iOS 17 the stream ends at once (the API does not exist).
    public func liveUpdates() -> AsyncStream<LiveUpdate> {
        let (stream, continuation) = AsyncStream<LiveUpdate>.makeStream(bufferingPolicy: .unbounded)
        guard host?.managerMayStartLiveUpdates() ?? false else {
            continuation.finish()
            return stream
        }
        let id = nextContinuationID
        nextContinuationID += 1
        liveContinuations[id] = continuation
        host?.managerStartedLiveUpdates()
        return stream
    }

    func yieldLive(_ update: LiveUpdate) {
        var ended: [Int] = []
        for (id, continuation) in liveContinuations {
            if case .terminated = continuation.yield(update) { ended.append(id) }
        }
        for id in ended { liveContinuations[id] = nil }
    }

    /// A new app instance's manager: the properties it had when the device adopted it (the
    /// defaults, unless the app's code set them up before), no location (the delegate and the
    /// streams stay, as the app's own code owns them).
    func reset() {
        settings = settingsAtAdoption
        location = nil
    }

    /// The properties as the app's code created the manager: each new instance of the app sets
    /// them up the same way.
    private var settingsAtAdoption = LocationServiceStateMachine.Settings()

    func deliver(_ updates: [LocationUpdate]) {
        guard !updates.isEmpty else { return }
        location = updates[updates.count - 1].location
        if !liveContinuations.isEmpty && !liveLocationsBlocked {
            for update in updates { yieldLive(LiveUpdate(location: update.location)) }
        }
        if let delegate {
            var locations = spareLocations
            spareLocations = []
            locations.removeAll(keepingCapacity: true)
            for i in updates.indices { locations.append(updates[i].location) }
            delegate.locationManager(self, didUpdateLocations: locations)
            spareLocations = locations
        }
        guard !continuations.isEmpty else { return }
        var ended: [Int] = []
        for (id, continuation) in continuations {
            for update in updates {
                // A stream whose reader has gone (the loop ended, the task was cancelled) is let go.
                if case .terminated = continuation.yield(update) {
                    ended.append(id)
                    break
                }
            }
        }
        for id in ended { continuations[id] = nil }
    }

    /// How many update streams are open (for tests).
    var openStreamCount: Int { continuations.count }

    func finishUpdates() {
        for continuation in continuations.values { continuation.finish() }
        continuations.removeAll()
        for continuation in liveContinuations.values { continuation.finish() }
        liveContinuations.removeAll()
    }

    /// The app ended: its live-update streams end with it.
    func endLiveUpdates() {
        for continuation in liveContinuations.values { continuation.finish() }
        liveContinuations.removeAll()
        scriptedLiveListener = false
    }
}
