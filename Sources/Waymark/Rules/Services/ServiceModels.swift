#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A circular geographic region to monitor, as `CLCircularRegion`.
public struct CircularRegion: Sendable, Hashable {
    /// The app's name for the region; monitoring a region with the same identifier replaces it.
    public var identifier: String
    /// The centre, WGS 84.
    public var center: Coordinate
    /// Metres from the centre to the boundary.
    public var radius: Double
    /// Whether entering the region is reported (`notifyOnEntry`, true by default).
    public var notifyOnEntry: Bool
    /// Whether leaving it is reported (`notifyOnExit`, true by default).
    public var notifyOnExit: Bool

    public init(
        center: Coordinate, radius: Double, identifier: String, notifyOnEntry: Bool = true, notifyOnExit: Bool = true
    ) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    /// Whether `coordinate` lies within the region (`contains(_:)`): its geodesic distance from
    /// the centre is at most the radius.
    public func contains(_ coordinate: Coordinate) -> Bool { Geodesic.distance(center, coordinate) <= radius }
}

/// Where the device is relative to a region, as `CLRegionState`.
public enum RegionState: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown, inside, outside
}

/// A place the user stayed, as `CLVisit`: an arrival (``departureDate`` is `Date.distantFuture`)
/// or a whole visit.
public struct Visit: Sendable, Hashable {
    /// Where the user stayed, WGS 84: the mean of the fixes of the stay.
    public var coordinate: Coordinate
    /// Metres: the radius of uncertainty of ``coordinate``.
    public var horizontalAccuracy: Double
    /// When the stay began (`Date.distantPast` when unknown).
    public var arrivalDate: Date
    /// When it ended; `Date.distantFuture` while the user is still there.
    public var departureDate: Date

    public init(coordinate: Coordinate, horizontalAccuracy: Double, arrivalDate: Date, departureDate: Date) {
        self.coordinate = coordinate
        self.horizontalAccuracy = horizontalAccuracy
        self.arrivalDate = arrivalDate
        self.departureDate = departureDate
    }

    /// Whether this reports only the arrival (the user is still there).
    public var isArrival: Bool { departureDate == .distantFuture }
}

/// Why the system launched or woke an app in the background: a stable camelCase word for the
/// audit log's `stateChanged` cause.
public enum WakeCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// Background fetch (`setMinimumBackgroundFetchInterval`).
    case backgroundFetch
    /// The significant-change location service.
    case significantLocationChange
    /// A monitored region was entered or left.
    case region
    /// A visit began or ended.
    case visit
    /// A background (`content-available`) push notification.
    case remoteNotification
    /// A `BGAppRefreshTaskRequest` came due.
    case backgroundAppRefresh
    /// A `BGProcessingTaskRequest` came due.
    case backgroundProcessing
    /// A background URL session's transfers finished.
    case urlSession

    /// The services of Core Location: they relaunch an Always app even after the user swiped it
    /// away, and need Always to wake or launch it.
    public var isLocationService: Bool { self == .significantLocationChange || self == .region || self == .visit }
}

/// The device's settings that gate background work, besides location's own (see
/// ``Scenario/Device``).
public struct PowerAndRefresh: Sendable, Hashable {
    /// Settings › General › Background App Refresh, for the whole device.
    public var backgroundAppRefresh = true
    /// The app's own Background App Refresh switch.
    public var appBackgroundAppRefresh = true
    /// Low Power Mode.
    public var lowPowerMode = false
    /// Whether the device is on external power.
    public var charging = false
    /// Whether the device has a network connection.
    public var network = true

    public init() {}

    /// `UIApplication.backgroundRefreshStatus`: available when both switches are on and Low
    /// Power Mode is off.
    public var backgroundRefreshAvailable: Bool { backgroundAppRefresh && appBackgroundAppRefresh && !lowPowerMode }

    /// Why background refresh is unavailable, in a word for the audit log; nil when available.
    public var backgroundRefreshOffReason: AuditReason? {
        if lowPowerMode { return .lowPowerMode }
        if !backgroundAppRefresh { return .backgroundAppRefreshOff }
        if !appBackgroundAppRefresh { return .appBackgroundAppRefreshOff }
        return nil
    }
}
