import Foundation
import Waymark

/// `CLLocationManager`: the app's access to the simulated device's location services.
///
/// It belongs to the app's process that was running when it was created, or to the next one the
/// device launches (see ``Waymark/AppProcess``). Its delegate is called on the device's isolation
/// (the main actor, for an app), in simulation-time order. Several managers may exist, each with
/// its own properties and delegate, sharing the app's authorization. When the process ends, the
/// manager is inert.
open class CLLocationManager: NSObject {
    /// The device's manager this one speaks through.
    let engine: DeviceLocationManager
    private let relay = Relay()
    /// The last location handed to the delegate (for the deprecated `didUpdateTo:from:`).
    var lastDelivered: CLLocation?

    public override init() {
        engine = DeviceLocationManager()
        super.init()
        relay.owner = self
        engine.delegate = relay
    }

    public weak var delegate: (any CLLocationManagerDelegate)?

    // MARK: - Class members

    /// Whether Location Services are on for the device.
    open class func locationServicesEnabled() -> Bool {
        Simulation.current?.authorizationState.locationServicesEnabled ?? true
    }

    /// The simulated device has no magnetometer.
    open class func headingAvailable() -> Bool { false }

    /// The significant-change service is available.
    open class func significantLocationChangeMonitoringAvailable() -> Bool { true }

    /// Circular regions can be monitored; beacon regions cannot (no Bluetooth ranging).
    open class func isMonitoringAvailable(for regionClass: AnyClass) -> Bool {
        regionClass is CLCircularRegion.Type
    }

    /// No beacon ranging on the simulated device.
    open class func isRangingAvailable() -> Bool { false }

    @available(iOS, introduced: 4.2, deprecated: 14.0, message: "Use -authorizationStatus")
    open class func authorizationStatus() -> CLAuthorizationStatus {
        CLAuthorizationStatus(Simulation.current?.authorizationState.status ?? .notDetermined)
    }

    @available(iOS, introduced: 4.0, deprecated: 7.0, message: "Use +isMonitoringAvailableForClass:")
    open class func regionMonitoringAvailable() -> Bool { true }

    @available(iOS, introduced: 6.0, deprecated: 13.0, message: "You can remove calls to this method")
    open class func deferredLocationUpdatesAvailable() -> Bool { false }

    // MARK: - Authorization

    open var authorizationStatus: CLAuthorizationStatus { CLAuthorizationStatus(engine.authorizationStatus) }
    open var accuracyAuthorization: CLAccuracyAuthorization { CLAccuracyAuthorization(engine.accuracyAuthorization) }
    /// Widgets have no location on the simulated device.
    open var isAuthorizedForWidgetUpdates: Bool { false }

    open func requestWhenInUseAuthorization() { engine.requestWhenInUseAuthorization() }
    open func requestAlwaysAuthorization() { engine.requestAlwaysAuthorization() }

    /// Asks for full accuracy until the app is no longer in use; `completion` hears `nil` once
    /// the prompt was shown and answered, or a `CLError` `promptDeclined`. Declared as Apple
    /// declares it: the completion is `@Sendable`, and may be left out.
    open func requestTemporaryFullAccuracyAuthorization(
        withPurposeKey purposeKey: String, completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        engine.requestTemporaryFullAccuracyAuthorization(withPurposeKey: purposeKey) { error in
            completion?(error.map(CLError.init))
        }
    }

    open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String) {
        engine.requestTemporaryFullAccuracyAuthorization(withPurposeKey: purposeKey)
    }

    /// The `async` form: returns once the user answered; throws the `CLError` otherwise (at once
    /// when the request is declined, as one made in the background is).
    nonisolated(nonsending) open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String)
        async throws
    {
        do {
            try await engine.requestTemporaryFullAccuracyAuthorization(withPurposeKey: purposeKey)
        } catch {
            throw CLError(error)
        }
    }

    // MARK: - Configuration

    open var activityType: CLActivityType {
        get { CLActivityType(engine.activityType) }
        set { engine.activityType = newValue.activityType }
    }
    open var distanceFilter: CLLocationDistance {
        get { engine.distanceFilter }
        set { engine.distanceFilter = newValue }
    }
    open var desiredAccuracy: CLLocationAccuracy {
        get { engine.desiredAccuracy.rawValue }
        set { engine.desiredAccuracy = DesiredAccuracy(rawValue: newValue) }
    }
    open var pausesLocationUpdatesAutomatically: Bool {
        get { engine.pausesLocationUpdatesAutomatically }
        set { engine.pausesLocationUpdatesAutomatically = newValue }
    }
    open var allowsBackgroundLocationUpdates: Bool {
        get { engine.allowsBackgroundLocationUpdates }
        set { engine.allowsBackgroundLocationUpdates = newValue }
    }
    open var showsBackgroundLocationIndicator: Bool {
        get { engine.showsBackgroundLocationIndicator }
        set { engine.showsBackgroundLocationIndicator = newValue }
    }
    /// The most recently delivered location; nil until one is.
    open var location: CLLocation? { engine.location.map(CLLocation.init) }
    open var headingFilter: CLLocationDegrees = 1
    open var headingOrientation: CLDeviceOrientation = .portrait
    /// Never set: the simulated device has no magnetometer.
    open var heading: CLHeading? { nil }
    /// In metres (an assumption: Apple documents no value).
    open var maximumRegionMonitoringDistance: CLLocationDistance { engine.maximumRegionMonitoringDistance }
    /// The app's regions, shared by all its managers, across launches.
    open var monitoredRegions: Set<CLRegion> { Set(engine.monitoredRegions.map(CLRegion.make)) }

    // MARK: - Standard updates

    open func startUpdatingLocation() { engine.startUpdatingLocation() }
    open func stopUpdatingLocation() { engine.stopUpdatingLocation() }
    open func requestLocation() { engine.requestLocation() }

    // MARK: - Heading (no magnetometer: "calling this method has no effect")

    open func startUpdatingHeading() {}
    open func stopUpdatingHeading() {}
    open func dismissHeadingCalibrationDisplay() {}

    // MARK: - Significant changes, visits, regions

    open func startMonitoringSignificantLocationChanges() { engine.startMonitoringSignificantLocationChanges() }
    open func stopMonitoringSignificantLocationChanges() { engine.stopMonitoringSignificantLocationChanges() }
    open func startMonitoringVisits() { engine.startMonitoringVisits() }
    open func stopMonitoringVisits() { engine.stopMonitoringVisits() }

    /// Monitors a circular region (a beacon region fails with `regionMonitoringFailure`).
    open func startMonitoring(for region: CLRegion) {
        guard !(region is CLBeaconRegion) else {
            delegate?.locationManager(
                self, monitoringDidFailFor: region, withError: CLError(.regionMonitoringFailure))
            return
        }
        engine.startMonitoring(for: region.circularRegion)
    }

    open func stopMonitoring(for region: CLRegion) { engine.stopMonitoring(for: region.circularRegion) }
    open func requestState(for region: CLRegion) { engine.requestState(for: region.circularRegion) }

    @available(iOS, introduced: 4.0, deprecated: 6.0, message: "Use -startMonitoringForRegion:")
    open func startMonitoring(for region: CLRegion, desiredAccuracy accuracy: CLLocationAccuracy) {
        startMonitoring(for: region)
    }

    // MARK: - Deferred updates (removed from iOS 13: "You can remove calls to this method")

    @available(iOS, introduced: 6.0, deprecated: 13.0, message: "You can remove calls to this method")
    open func allowDeferredLocationUpdates(untilTraveled distance: CLLocationDistance, timeout: TimeInterval) {}
    @available(iOS, introduced: 6.0, deprecated: 13.0, message: "You can remove calls to this method")
    open func disallowDeferredLocationUpdates() {}

    // MARK: - The device's calls, in Core Location's spelling

    /// Relays the device's calls to the app's delegate, converting what they carry.
    private final class Relay: DeviceLocationManagerDelegate {
        weak var owner: CLLocationManager?

        func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
            guard let owner, let delegate = owner.delegate else { return }
            let converted = locations.map(CLLocation.init)
            delegate.locationManager(owner, didUpdateLocations: converted)
            owner.lastDelivered = converted.last
        }
        func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didFailWithError: CLError(error))
        }
        func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) {
            guard let owner else { return }
            owner.delegate?.locationManagerDidChangeAuthorization(owner)
        }
        func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) {
            guard let owner else { return }
            owner.delegate?.locationManagerDidPauseLocationUpdates(owner)
        }
        func locationManagerDidResumeLocationUpdates(_ manager: DeviceLocationManager) {
            guard let owner else { return }
            owner.delegate?.locationManagerDidResumeLocationUpdates(owner)
        }
        func locationManager(_ manager: DeviceLocationManager, didEnterRegion region: CircularRegion) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didEnterRegion: CLRegion.make(region))
        }
        func locationManager(_ manager: DeviceLocationManager, didExitRegion region: CircularRegion) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didExitRegion: CLRegion.make(region))
        }
        func locationManager(
            _ manager: DeviceLocationManager, didDetermineState state: RegionState, for region: CircularRegion
        ) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didDetermineState: CLRegionState(state), for: CLRegion.make(region))
        }
        func locationManager(_ manager: DeviceLocationManager, didStartMonitoringFor region: CircularRegion) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didStartMonitoringFor: CLRegion.make(region))
        }
        func locationManager(
            _ manager: DeviceLocationManager, monitoringDidFailFor region: CircularRegion,
            withError error: LocationError
        ) {
            guard let owner else { return }
            owner.delegate?.locationManager(
                owner, monitoringDidFailFor: CLRegion.make(region), withError: CLError(error))
        }
        func locationManager(_ manager: DeviceLocationManager, didVisit visit: Visit) {
            guard let owner else { return }
            owner.delegate?.locationManager(owner, didVisit: CLVisit(visit))
        }
    }
}
