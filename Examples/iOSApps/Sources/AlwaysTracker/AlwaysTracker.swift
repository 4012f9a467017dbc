import CoreLocation
import UIKit

/// Where the app keeps its track: its disk, which outlives its processes.
@MainActor public final class TrackStore {
    public static let shared = TrackStore()
    public private(set) var points: [CLLocation] = []
    /// The app state each point arrived in.
    public private(set) var states: [UIApplication.State] = []

    public func append(_ locations: [CLLocation], state: UIApplication.State) {
        points += locations
        states += Array(repeating: state, count: locations.count)
    }

    public func erase() {
        points = []
        states = []
    }
}

/// Tracks a run in the foreground and the background under Always: "If your app needs location
/// updates in the background … set allowsBackgroundLocationUpdates to true" with the `location`
/// background mode, and request Always for the significant-change service that relaunches the app.
@MainActor public final class LocationTracker: NSObject, CLLocationManagerDelegate {
    public let manager = CLLocationManager()
    private let store: TrackStore

    public init(store: TrackStore = .shared) {
        self.store = store
        super.init()
        manager.delegate = self
        manager.desiredAccuracy = kCLLocationAccuracyBest
        manager.activityType = .fitness
        manager.pausesLocationUpdatesAutomatically = false
        manager.allowsBackgroundLocationUpdates = true
        manager.showsBackgroundLocationIndicator = true
    }

    /// Starts tracking: asks for Always (iOS asks When In Use first, then Always when it is
    /// needed), starts standard updates and the significant-change service.
    public func start() {
        if manager.authorizationStatus == .notDetermined { manager.requestAlwaysAuthorization() }
        manager.startUpdatingLocation()
        manager.startMonitoringSignificantLocationChanges()
    }

    /// Relaunched by a location event: "you must still configure a location manager object and
    /// call this method to continue receiving events".
    public func resumeAfterRelaunch() { manager.startMonitoringSignificantLocationChanges() }

    nonisolated public func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
        MainActor.assumeIsolated { store.append(locations, state: UIApplication.shared.applicationState) }
    }

    nonisolated public func locationManager(_ manager: CLLocationManager, didFailWithError error: Error) {}
}

/// The app delegate: a tracker per process, resumed when a location event relaunches the app.
@MainActor public final class TrackerAppDelegate: UIResponder, UIApplicationDelegate {
    public var window: UIWindow?
    public private(set) var tracker: LocationTracker?

    public func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        let tracker = LocationTracker()
        self.tracker = tracker
        if launchOptions?[.location] != nil { tracker.resumeAfterRelaunch() }
        return true
    }
}
