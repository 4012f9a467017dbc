import Observation
import Waymark

/// The run screen's model: the distance, the locations and the state of a run in progress.
///
/// It owns the app's use of the ``Waymark/DeviceLocationManager``: ``startRun()`` asks for When In
/// Use authorization, keeps updates going in the background when the app declares the
/// `location` background mode, and starts updates. It is the manager's delegate, through an
/// isolated conformance (see the extension below), so every callback runs on the main actor.
@MainActor @Observable
public final class RunViewModel {
    /// Where the run stands.
    public enum Status: Sendable, Hashable {
        /// No run has started.
        case idle
        /// Updates are running.
        case running
        /// The system paused updates because the device stood still.
        case paused
        /// The user denied location access, or switched Location Services off.
        case denied
        /// The user ended the run.
        case finished
    }

    /// Where the run stands.
    public private(set) var status = Status.idle
    /// Metres covered: the sum of the geodesic distances between consecutive locations (WGS 84).
    public private(set) var distance = 0.0
    /// How many locations the run has received.
    public private(set) var locationCount = 0
    /// The newest location received.
    public private(set) var lastLocation: Location?
    /// How many times the system paused updates.
    public private(set) var pauseCount = 0
    /// The last error the manager reported.
    public private(set) var lastError: LocationError?
    /// Whether ``track()`` is following the manager's update stream.
    public private(set) var isTracking = false

    /// The app's location manager.
    @ObservationIgnored public let manager: DeviceLocationManager
    /// The app's Info.plist: whether it declares the `location` background mode.
    @ObservationIgnored private let info: AppInfo

    /// A model that uses `manager` and becomes its delegate; `info` is the app's Info.plist.
    public init(manager: DeviceLocationManager, info: AppInfo) {
        self.manager = manager
        self.info = info
        manager.delegate = self
    }

    /// Starts a run: resets the figures, asks for When In Use authorization if the user has not
    /// been asked yet, keeps updates going in the background when the app may, and starts updates.
    public func startRun() {
        distance = 0
        locationCount = 0
        lastLocation = nil
        pauseCount = 0
        lastError = nil
        manager.activityType = .fitness
        manager.desiredAccuracy = .best
        if manager.authorizationStatus == .notDetermined { manager.requestWhenInUseAuthorization() }
        // Setting it without the background mode would terminate the app, as on iOS.
        if info.backgroundModes.contains(.location) { manager.allowsBackgroundLocationUpdates = true }
        // Running first: starting may report a denial at once (Location Services off, say).
        status = .running
        manager.startUpdatingLocation()
    }

    /// Ends the run and stops updates.
    public func endRun() {
        manager.stopUpdatingLocation()
        status = .finished
    }

    /// Follows the run through the manager's update stream instead of the delegate, until the
    /// stream ends (when the simulation finishes).
    ///
    /// While it runs, the delegate leaves locations to it; pauses and errors still come through
    /// the delegate.
    public func track() async {
        isTracking = true
        defer { isTracking = false }
        for await update in manager.updates() {
            add(update.location)
        }
    }

    /// Adds one location to the run.
    private func add(_ location: Location) {
        if let last = lastLocation { distance += Geodesic.distance(last.coordinate, location.coordinate) }
        lastLocation = location
        locationCount += 1
    }

    private func noteAuthorization() {
        switch manager.authorizationStatus {
        case .denied, .restricted: status = .denied
        case .authorizedWhenInUse, .authorizedAlways:
            if status == .denied { status = manager.isUpdatingLocation ? .running : .idle }
        case .notDetermined: break
        }
    }
}

extension RunViewModel: @MainActor DeviceLocationManagerDelegate {
    public func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {
        guard !isTracking else { return }
        for location in locations { add(location) }
    }

    public func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {
        lastError = error
    }

    public func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) {
        noteAuthorization()
    }

    public func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) {
        pauseCount += 1
        status = .paused
    }

    public func locationManagerDidResumeLocationUpdates(_ manager: DeviceLocationManager) {
        status = .running
    }
}
