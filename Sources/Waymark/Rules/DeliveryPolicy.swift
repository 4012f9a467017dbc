#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What became of a fix.
public enum FixDecision: String, Sendable, Hashable, Codable, CaseIterable {
    /// The app received it.
    case delivered
    /// Kept by the system for a suspended app; delivered on resume or discarded.
    case held
    /// Thrown away: the app may not, or need not, have it.
    case dropped
    /// The app had not asked for updates.
    case ignored
}

/// Why a fix was delivered, held, dropped or ignored: a stable camelCase word for audit logs.
public enum FixReason: String, Sendable, Hashable, Codable, CaseIterable {
    // delivered
    /// The app is active or inactive.
    case foreground
    /// A background location session keeps updates flowing.
    case backgroundSession
    /// In the background, within the grace period before suspension.
    case gracePeriod
    /// In the background, kept running by a background task.
    case backgroundTask
    /// In the background, woken for a background fetch.
    case backgroundFetch
    /// In the background, woken or launched by a service (a location event, a push, a
    /// `BGTask`, a URL session) and still within its time.
    case backgroundWake
    /// In the background, kept running by audio playback (the `audio` mode).
    case backgroundAudio
    /// Held while suspended, delivered when the app resumed.
    case resumed
    /// Held for the Always prompt, delivered when the user changed to Always.
    case alwaysGranted
    /// Delivered by the significant-change location service (not a standard update).
    case significantLocationChange
    /// The one location of `requestLocation()`.
    case requestLocation
    // held
    /// The app is suspended.
    case suspended
    /// A provisional-Always app used location while not in use: the event waits for the user's
    /// answer to the Always prompt it brought up.
    case awaitingAlways
    // dropped
    /// The app is not running; standard updates never relaunch it.
    case appNotRunning
    /// Location services are off for the whole device.
    case locationServicesDisabled
    case restricted
    case denied
    case notDetermined
    /// A When In Use app started updates in the background, where it may not.
    case whenInUseStartedInBackground
    /// Updates are paused automatically.
    case paused
    /// A When In Use app is not in use (iOS 13+): not on screen, past the grace period, and
    /// without a background location session showing the indicator.
    case notInUse
    /// The Always prompt is on screen; the event that brought it up is already held.
    case alwaysPromptShowing
    /// Within `distanceFilter` of the last delivered location.
    case distanceFilter
    /// Too soon after the last update for the accuracy level (``AccuracyModel``).
    case accuracyThrottle
    /// The receiver had no fix.
    case noFix
    // ignored
    /// The app has not started updates.
    case notUpdating
}

/// The delivery policy: what happens to a fix, given the app and its settings (DESIGN §4).
///
/// It is a pure function; the filters that follow a delivery (the positioning source,
/// `distanceFilter`), held fixes and auto-pause live in ``LocationServiceStateMachine``. The
/// rules, first match wins:
///
/// 1. The app is not running: dropped, `appNotRunning`.
/// 2. Updates not started: ignored, `notUpdating`.
/// 3. Location services off: dropped, `locationServicesDisabled` (with error `denied`).
/// 4. Restricted, denied or not determined: dropped with that reason (`denied` and `restricted`
///    also give error `denied`).
/// 5. Updates paused: dropped, `paused`.
/// 6. Active or inactive: delivered, `foreground`.
/// 7. Background with a background location session: delivered, `backgroundSession`. A session
///    needs the `location` background mode, `allowsBackgroundLocationUpdates`, and updates
///    started in use or under Always.
/// 8. From iOS 13, a When In Use app (or a provisional-Always one) in the background: delivered
///    in the grace period (`gracePeriod`), else dropped, `notInUse`: a background task or a
///    fetch does not make it in use. Suspended, the same: `notInUse`.
/// 9. Up to iOS 12, background, a When In Use app that started updates there: dropped,
///    `whenInUseStartedInBackground`.
/// 10. Background, still running: delivered, `backgroundFetch`, `backgroundTask`,
///     `backgroundWake` (woken by a service), `backgroundAudio` or `gracePeriod`.
/// 11. Suspended: held, `suspended`.
public enum DeliveryPolicy {
    /// Why a backgrounded app is still running.
    public enum Running: Sendable, Hashable {
        case gracePeriod, backgroundTask, backgroundFetch, backgroundWake, backgroundAudio
    }

    /// Everything the policy looks at.
    public struct Context: Sendable, Hashable {
        public var appState: AppState
        public var isUpdating: Bool
        public var locationServicesEnabled: Bool
        public var authorization: AuthorizationStatus
        public var isPaused: Bool
        public var hasBackgroundSession: Bool
        public var startedInBackgroundWhenInUse: Bool
        /// Why a backgrounded app runs, if it does.
        public var running: Running?
        /// iOS 13 and later: a When In Use app receives updates only while in use.
        public var restrictsWhenInUseToInUse: Bool
        /// On screen or in the grace period.
        public var appInUse: Bool
        /// Always granted provisionally: When In Use rules apply until the user confirms.
        public var isProvisionalAlways: Bool

        public init(
            appState: AppState, isUpdating: Bool, locationServicesEnabled: Bool = true,
            authorization: AuthorizationStatus, isPaused: Bool = false, hasBackgroundSession: Bool = false,
            startedInBackgroundWhenInUse: Bool = false, running: Running? = nil,
            restrictsWhenInUseToInUse: Bool = false, appInUse: Bool = false, isProvisionalAlways: Bool = false
        ) {
            self.appState = appState
            self.isUpdating = isUpdating
            self.locationServicesEnabled = locationServicesEnabled
            self.authorization = authorization
            self.isPaused = isPaused
            self.hasBackgroundSession = hasBackgroundSession
            self.startedInBackgroundWhenInUse = startedInBackgroundWhenInUse
            self.running = running
            self.restrictsWhenInUseToInUse = restrictsWhenInUseToInUse
            self.appInUse = appInUse
            self.isProvisionalAlways = isProvisionalAlways
        }

        /// When In Use rules hold: When In Use, or Always still provisional.
        var usesWhenInUseRules: Bool {
            restrictsWhenInUseToInUse && (authorization == .authorizedWhenInUse || isProvisionalAlways)
        }
    }

    /// The decision for one fix.
    public static func decide(_ c: Context) -> (FixDecision, FixReason) {
        if c.appState == .notRunning { return (.dropped, .appNotRunning) }
        if !c.isUpdating { return (.ignored, .notUpdating) }
        if !c.locationServicesEnabled { return (.dropped, .locationServicesDisabled) }
        switch c.authorization {
        case .restricted: return (.dropped, .restricted)
        case .denied: return (.dropped, .denied)
        case .notDetermined: return (.dropped, .notDetermined)
        case .authorizedWhenInUse, .authorizedAlways: break
        }
        if c.isPaused { return (.dropped, .paused) }
        switch c.appState {
        case .active, .inactive:
            return (.delivered, .foreground)
        case .background:
            if c.hasBackgroundSession { return (.delivered, .backgroundSession) }
            if c.usesWhenInUseRules { return c.appInUse ? (.delivered, .gracePeriod) : (.dropped, .notInUse) }
            if c.startedInBackgroundWhenInUse && c.authorization == .authorizedWhenInUse {
                return (.dropped, .whenInUseStartedInBackground)
            }
            switch c.running {
            case .backgroundFetch?: return (.delivered, .backgroundFetch)
            case .backgroundTask?: return (.delivered, .backgroundTask)
            case .backgroundWake?: return (.delivered, .backgroundWake)
            case .backgroundAudio?: return (.delivered, .backgroundAudio)
            case .gracePeriod?, nil: return (.delivered, .gracePeriod)
            }
        case .suspended:
            return c.usesWhenInUseRules ? (.dropped, .notInUse) : (.held, .suspended)
        case .notRunning:
            return (.dropped, .appNotRunning)
        }
    }
}

/// How the system decides a device is stationary and pauses updates
/// (`pausesLocationUpdatesAutomatically`).
///
/// Updates pause when every fix for the activity's stationary time has stayed within
/// ``radius`` of the first of them. They stay paused until the app restarts them: "it is your
/// responsibility to restart location services" (`pausesLocationUpdatesAutomatically`).
///
/// | `activityType` | stationary for |
/// |---|---|
/// | automotiveNavigation, otherNavigation | 5 min |
/// | fitness, other | 10 min |
/// | airborne | 20 min |
public struct AutoPause: Sendable, Hashable {
    /// Metres a device may wander and still count as stationary.
    public static let radius = 25.0

    /// How long a device must stay within ``radius`` before updates pause.
    public static func stationaryTime(for activity: ActivityType) -> Duration {
        switch activity {
        case .automotiveNavigation, .otherNavigation: .seconds(300)
        case .fitness, .other: .seconds(600)
        case .airborne: .seconds(1200)
        }
    }

    /// Where the current stationary stretch began.
    public private(set) var anchor: Coordinate?
    public private(set) var anchorOffset: Duration = .zero

    public init() {}

    /// Feeds one fix; returns true when the device has now been stationary long enough.
    public mutating func observe(_ c: Coordinate, at offset: Duration, activity: ActivityType) -> Bool {
        if let a = anchor, Self.isNear(a, c) {
            return offset - anchorOffset >= Self.stationaryTime(for: activity)
        }
        anchor = c
        anchorOffset = offset
        return false
    }

    /// Forgets the stationary stretch (after a pause, a resume or a restart).
    public mutating func reset() { anchor = nil }

    /// Whether `c` is within ``radius`` of `a` (geodesic distance on WGS 84).
    ///
    /// Local flat-Earth bounds settle the clear cases: on WGS 84 a degree of latitude is
    /// 110 574–111 694 m, and a degree of longitude 111 319–111 694 m times the cosine of the
    /// latitude. Near the boundary, near the poles and across the antimeridian the geodesic decides.
    public static func isNear(_ a: Coordinate, _ c: Coordinate) -> Bool {
        let dLat = abs(c.latitude - a.latitude)
        let dLon = abs(c.longitude - a.longitude)
        if abs(a.latitude) < 85 && abs(c.latitude) < 85 && dLon < 1 && dLat < 1 {
            // First without cosines: the far test without its longitude term (at least 0), the
            // near test with the cosine taken as 1 (at most 1). Both are then stricter than the
            // full tests, so what they settle the full tests settle the same way, and most
            // fixes of a walk are settled without a cosine.
            let r2 = radius * radius
            let y0 = dLat * 110_574
            if y0 * y0 > r2 * 1.0001 { return false }
            let y1 = dLat * 111_694
            let x = dLon * 111_694
            if y1 * y1 + x * x < r2 * 0.9999 { return true }
            let north = max(abs(a.latitude), abs(c.latitude)) * .pi / 180
            let south = min(abs(a.latitude), abs(c.latitude)) * .pi / 180
            let x0 = dLon * 111_319 * cos(north)
            if y0 * y0 + x0 * x0 > r2 * 1.0001 { return false }
            let x1 = x * cos(south)
            if y1 * y1 + x1 * x1 < r2 * 0.9999 { return true }
        }
        return Geodesic.distance(a, c) <= radius
    }
}
