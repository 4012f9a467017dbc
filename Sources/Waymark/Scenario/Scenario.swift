#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One scripted run of the simulated app: its Info, settings, user, device and timeline.
///
/// Every field has a default, so `Scenario()` is a complete run: an app the user already allowed
/// While Using, launched at the start, updating at best accuracy, in the foreground throughout.
/// The command line's flags and the scenario file both fill in this type.
public struct Scenario: Sendable, Hashable {
    /// The Info.plist. By default the app declares both usage descriptions and no background mode.
    public var info = AppInfo(
        backgroundModes: [], usageDescriptions: LocationUsageDescriptions(whenInUse: true, alwaysAndWhenInUse: true))
    public var device = Device()
    public var user = User()
    public var manager = ManagerSettings()
    public var app = AppBehaviour()
    public var system = SystemSettings()
    /// Scripted actions, at offsets from the start; actions at the same time run in this order.
    public var timeline: [TimedAction] = []
    /// Where the run stops; nil runs until the source ends and the last scripted action is done.
    public var end: Duration?
    /// A logger's run (``logger(_:)``): the audit log's `started` says so, and pages of it show
    /// the source's fixes and outages without the simulated app's rows. Not part of the scenario
    /// file.
    public var isLogger = false

    public init() {}

    /// The device's settings at the start.
    public struct Device: Sendable, Hashable {
        /// Location Services for the whole device.
        public var locationServices = true
        /// The app's authorization at the start, as if set on an earlier run; `restricted` means
        /// the device restricts location (parental controls, management).
        public var authorization: AuthorizationStatus = .authorizedWhenInUse
        /// Precise Location; nil follows the Info's default (`NSLocationDefaultAccuracyReduced`).
        public var preciseLocation: Bool?
        /// Background App Refresh (global and the app's), Low Power Mode, power and network.
        public var power = PowerAndRefresh()
        public init() {}
    }

    /// The scripted user: how they answer prompts.
    public struct User: Sendable, Hashable {
        /// The answer to the When In Use prompt; nil leaves it on screen.
        public var whenInUse: WhenInUseAnswer?
        /// The answer to the prompt that asks for Always; nil leaves it on screen.
        public var always: AlwaysAnswer?
        /// How long the user takes to answer.
        public var answerAfter: Duration = .zero
        /// The answer to the temporary full accuracy prompt
        /// (`requestTemporaryFullAccuracyAuthorization`): true allows, false denies, nil leaves it
        /// on screen.
        public var temporaryFullAccuracy: Bool?
        public init() {}
    }

    /// The manager's properties, which the app sets at launch: the same ones the location
    /// service's rules read.
    public typealias ManagerSettings = LocationServiceStateMachine.Settings

    /// Which locations a suspended app receives when it resumes.
    public enum HeldDelivery: String, Sendable, Hashable, CaseIterable {
        /// Only the newest.
        case newest
        /// All, oldest first, in one `didUpdateLocations` call (as iOS does: "the system enqueues
        /// location updates and delivers them when the app runs again").
        case all
        /// None.
        case none
    }

    /// How often the app asks to be woken for background fetch (`setMinimumBackgroundFetchInterval`).
    public enum FetchInterval: Sendable, Hashable {
        /// `UIApplicationBackgroundFetchIntervalNever`, the default: no fetch.
        case never
        /// `UIApplicationBackgroundFetchIntervalMinimum`: as often as the system allows
        /// (``SystemSettings/minimumFetchInterval``).
        case minimum
        case every(Duration)
    }

    /// What the simulated app's code does.
    public struct AppBehaviour: Sendable, Hashable {
        /// When the user launches the app; nil leaves it not running until an action launches it.
        public var launchAt: Duration? = .zero
        /// The authorization the app requests when it launches in the foreground, if any.
        public var request: AuthorizationRequest?
        /// Whether the app starts updates when it launches in the foreground.
        public var startsUpdates = true
        /// Whether the app begins a background task when it enters the background (and ends it
        /// when it returns).
        public var beginsBackgroundTask = false
        /// Whether the app begins a background task when it launches, for its next stay in the
        /// background (the seeds' pattern).
        public var beginsBackgroundTaskAtLaunch = false
        /// Whether the app begins a new task each time it becomes active when it has none (the
        /// seeds' "re-register when active" fix). Without it, an app whose launch task expired
        /// gets no background time the next time it leaves.
        public var reRegistersTaskWhenActive = false
        /// Whether the task's expiration handler ends the task (a well-behaved app) or not (the
        /// watchdog then terminates the app).
        public var endsTaskOnExpiration = true
        /// Whether the app restarts updates that the system paused, when it next becomes active
        /// (Apple: "it is your responsibility to restart location services").
        public var restartsUpdatesAfterPause = true
        public var heldDelivery: HeldDelivery = .all
        public var fetchInterval: FetchInterval = .never
        /// How long the app's fetch handler takes.
        public var fetchDuration: Duration = .seconds(2)
        /// Whether the app starts the significant-change service at every launch (and so after a
        /// relaunch by it, as Apple asks: "Upon relaunch, you must still configure a location
        /// manager object and call this method to continue receiving location events").
        public var monitorsSignificantChanges = false
        /// The regions the app starts monitoring at its first launch (they persist across launches).
        public var regions: [CircularRegion] = []
        /// Whether the app starts the visits service at every launch.
        public var monitorsVisits = false
        /// Whether the app starts standard updates when a location service relaunches it (the
        /// seeds' way to resume tracking after the system or the user ended the app).
        public var restartsUpdatesOnRelaunch = false
        /// How long the app's handler of a background push takes before it calls its completion.
        public var pushHandlerDuration: Duration = .seconds(2)
        /// How long the app's `BGAppRefreshTask` and `BGProcessingTask` work takes before it
        /// calls `setTaskCompleted`; longer than the task's time, the expiration handler runs.
        public var refreshTaskDuration: Duration = .seconds(5)
        public var processingTaskDuration: Duration = .seconds(60)
        /// Whether the app submits a new app-refresh request when one runs, for the same delay
        /// after it (the usual pattern: "resubmit … in the task's launch handler").
        public var resubmitsAppRefresh = true
        /// Whether the app uploads the locations it stored through a background URL session when
        /// it leaves the foreground (seed 002); the transfer goes on while it is suspended.
        public var uploadsInBackground = false
        public init() {}
    }

    /// The simulated system: its iOS release and timings.
    public struct SystemSettings: Sendable, Hashable {
        /// The iOS release whose rules apply (`docs/ios-versions.md`).
        public var iosVersion: IOSVersion = .newest
        /// Time in the background before an app with nothing to keep it running is suspended.
        public var gracePeriod: Duration = .seconds(5)
        /// A background task's budget; nil takes the release's (about 180 s up to iOS 12, about
        /// 30 s from iOS 13).
        public var taskBudget: Duration?
        /// How long before the budget runs out the expiration handler is called.
        public var expirationWarning: Duration = .seconds(5)
        /// The time a fetch handler has.
        public var fetchBudget: Duration = .seconds(30)
        /// The interval ``FetchInterval/minimum`` stands for.
        public var minimumFetchInterval: Duration = .seconds(900)
        /// How long a location service's event (significant change, region, visit) keeps a woken
        /// app running in the background (*assumption*: about 10 s).
        public var serviceWakeTime: Duration = .seconds(10)
        /// Whether the location services (significant changes, regions, visits) relaunch an app the
        /// user swiped away, as from iOS 7.1 (a developer reports they no longer do on iOS 26.4;
        /// Apple documents neither way).
        public var locationRelaunchAfterSwipe = true
        /// How long `requestLocation()` waits for a fix before it fails (*assumption*).
        public var locationRequestTimeout: Duration = .seconds(10)
        /// The time a background push's handler has ("up to 30 seconds").
        public var pushBudget: Duration = .seconds(30)
        /// How many background pushes an hour wake the app; more are throttled ("don't try to send
        /// more than two or three per hour").
        public var pushesPerHour = 3
        /// The time a `BGAppRefreshTask` has (about 30 s).
        public var appRefreshBudget: Duration = .seconds(30)
        /// The time a `BGProcessingTask` has ("several minutes"; *assumption*: 5 minutes).
        public var processingBudget: Duration = .seconds(300)
        /// Metres past a region's boundary before a crossing counts (*assumption*).
        public var regionHysteresis = 100.0
        /// The visits model: the radius of a stay and its least length (*assumptions*).
        public var visitRadius = 100.0
        public var visitMinimumStay: Duration = .seconds(600)
        /// How long a background URL session's transfer takes, and how long after a failure it is
        /// retried.
        public var transferDuration: Duration = .seconds(20)
        public var transferRetryAfter: Duration = .seconds(60)
        public init() {}

        /// The budget in force: ``taskBudget``, or the release's.
        public var effectiveTaskBudget: Duration { taskBudget ?? iosVersion.backgroundTaskBudget }
    }

    /// A `BGProcessingTaskRequest`, as a scenario submits it.
    public struct ProcessingRequest: Sendable, Hashable, CustomStringConvertible {
        /// How long from the submission the task may begin at the earliest (nil: none).
        public var earliestBegin: Duration?
        public var requiresExternalPower = false
        public var requiresNetworkConnectivity = false
        public init(
            earliestBegin: Duration? = nil, requiresExternalPower: Bool = false,
            requiresNetworkConnectivity: Bool = false
        ) {
            self.earliestBegin = earliestBegin
            self.requiresExternalPower = requiresExternalPower
            self.requiresNetworkConnectivity = requiresNetworkConnectivity
        }

        public var description: String {
            var parts: [String] = []
            if let earliestBegin { parts.append("earliestBegin \(DurationText.format(earliestBegin))") }
            if requiresExternalPower { parts.append("requiresExternalPower") }
            if requiresNetworkConnectivity { parts.append("requiresNetworkConnectivity") }
            return parts.joined(separator: " ")
        }
    }

    /// Which authorization an app asks for.
    public enum AuthorizationRequest: String, Sendable, Hashable, CaseIterable {
        case whenInUse, always
    }

    /// One scripted action at a time.
    public struct TimedAction: Sendable, Hashable {
        public var at: Duration
        public var action: Action
        public init(at: Duration, _ action: Action) {
            self.at = at
            self.action = action
        }
    }

    /// Something the user, the app or the device does.
    public enum Action: Sendable, Hashable {
        /// The user opens the app (launching it if it is not running).
        case foreground
        /// The user leaves the app (home screen, another app).
        case background
        /// Something covers the app (Control Center, a call): active → inactive.
        case deactivate
        /// It goes away again: inactive → active.
        case activate
        /// The user swipes the app away in the app switcher.
        case terminate
        case requestAuthorization(AuthorizationRequest)
        case startUpdates
        case stopUpdates
        case beginBackgroundTask
        case endBackgroundTask
        /// The user changes the app's authorization in Settings.
        case setAuthorization(AuthorizationStatus)
        /// The user switches Precise Location for the app.
        case setPreciseLocation(Bool)
        /// The user switches Location Services for the device.
        case setLocationServices(Bool)
        /// The device's restriction (parental controls, management) goes on or off.
        case setRestricted(Bool)
        case setDesiredAccuracy(DesiredAccuracy)
        case setDistanceFilter(Double)
        case setAllowsBackgroundLocationUpdates(Bool)
        case setPausesLocationUpdatesAutomatically(Bool)
        /// The system ends the app to reclaim memory (unlike a swipe, every service may relaunch it).
        case systemTerminate
        case startMonitoringSignificantLocationChanges
        case stopMonitoringSignificantLocationChanges
        /// `startMonitoring(for:)` with a circular region.
        case startMonitoring(CircularRegion)
        /// `stopMonitoring(for:)` the region with this identifier.
        case stopMonitoring(identifier: String)
        /// `requestState(for:)` the region with this identifier.
        case requestState(identifier: String)
        case startMonitoringVisits
        case stopMonitoringVisits
        /// A push notification arrives; `contentAvailable` makes it a background push.
        case push(contentAvailable: Bool)
        /// The app submits a `BGAppRefreshTaskRequest` whose earliest begin date is this long from
        /// now (nil: none).
        case submitAppRefresh(earliestBegin: Duration?)
        /// The app submits a `BGProcessingTaskRequest`.
        case submitProcessing(ProcessingRequest)
        /// The app starts or stops playing audio.
        case playAudio
        case stopAudio
        /// `requestLocation()`: one location, then the request ends.
        case requestLocation
        /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`.
        case requestTemporaryFullAccuracy(purposeKey: String)
        /// The user switches Background App Refresh for the device, or for the app.
        case setBackgroundAppRefresh(Bool)
        case setAppBackgroundAppRefresh(Bool)
        case setLowPowerMode(Bool)
        /// The device is plugged in, or not.
        case setCharging(Bool)
        case setNetwork(Bool)
        /// The app starts a `CLBackgroundActivitySession` (iOS 17+), or invalidates its oldest.
        case startBackgroundActivitySession
        case invalidateBackgroundActivitySession
        /// The app starts a `CLServiceSession` (iOS 18+) asking for this authorization, or
        /// invalidates its oldest.
        case startServiceSession(ServiceSession.Authorization)
        case invalidateServiceSession
        /// The app asks for `CLLocationUpdate.liveUpdates()` (iOS 17+).
        case liveUpdates
        /// The app adds a circular condition to its `CLMonitor` of this name (iOS 17+), or removes
        /// one.
        case addCondition(monitor: String, CircularRegion)
        case removeCondition(monitor: String, identifier: String)

        /// The action's name in scenario files and audit logs.
        public var name: String {
            switch self {
            case .foreground: "foreground"
            case .background: "background"
            case .deactivate: "deactivate"
            case .activate: "activate"
            case .terminate: "terminate"
            case .requestAuthorization(let r): r == .always ? "requestAlways" : "requestWhenInUse"
            case .startUpdates: "startUpdates"
            case .stopUpdates: "stopUpdates"
            case .beginBackgroundTask: "beginBackgroundTask"
            case .endBackgroundTask: "endBackgroundTask"
            case .setAuthorization: "setAuthorization"
            case .setPreciseLocation: "setPreciseLocation"
            case .setLocationServices: "setLocationServices"
            case .setRestricted: "setRestricted"
            case .setDesiredAccuracy: "setDesiredAccuracy"
            case .setDistanceFilter: "setDistanceFilter"
            case .setAllowsBackgroundLocationUpdates: "setAllowsBackgroundLocationUpdates"
            case .setPausesLocationUpdatesAutomatically: "setPausesLocationUpdatesAutomatically"
            case .systemTerminate: "systemTerminate"
            case .startMonitoringSignificantLocationChanges: "startMonitoringSignificantLocationChanges"
            case .stopMonitoringSignificantLocationChanges: "stopMonitoringSignificantLocationChanges"
            case .startMonitoring: "startMonitoring"
            case .stopMonitoring: "stopMonitoring"
            case .requestState: "requestState"
            case .startMonitoringVisits: "startMonitoringVisits"
            case .stopMonitoringVisits: "stopMonitoringVisits"
            case .push: "push"
            case .submitAppRefresh: "submitAppRefresh"
            case .submitProcessing: "submitProcessing"
            case .playAudio: "playAudio"
            case .stopAudio: "stopAudio"
            case .requestLocation: "requestLocation"
            case .requestTemporaryFullAccuracy: "requestTemporaryFullAccuracy"
            case .setBackgroundAppRefresh: "setBackgroundAppRefresh"
            case .setAppBackgroundAppRefresh: "setAppBackgroundAppRefresh"
            case .setLowPowerMode: "setLowPowerMode"
            case .setCharging: "setCharging"
            case .setNetwork: "setNetwork"
            case .startBackgroundActivitySession: "startBackgroundActivitySession"
            case .invalidateBackgroundActivitySession: "invalidateBackgroundActivitySession"
            case .startServiceSession: "startServiceSession"
            case .invalidateServiceSession: "invalidateServiceSession"
            case .liveUpdates: "liveUpdates"
            case .addCondition: "addCondition"
            case .removeCondition: "removeCondition"
            }
        }

        /// The action's value as text, for audit logs; nil when it takes none.
        public var value: String? {
            switch self {
            case .setAuthorization(let s): s.rawValue
            case .setPreciseLocation(let b), .setLocationServices(let b), .setRestricted(let b),
                .setAllowsBackgroundLocationUpdates(let b),
                .setPausesLocationUpdatesAutomatically(let b), .setBackgroundAppRefresh(let b),
                .setAppBackgroundAppRefresh(let b), .setLowPowerMode(let b), .setCharging(let b), .setNetwork(let b):
                "\(b)"
            case .setDesiredAccuracy(let a): "\(a)"
            case .setDistanceFilter(let d): ValueFormatting.fixed(d, decimals: 1)
            case .startMonitoring(let r):
                "\(r.identifier) \(ValueFormatting.fixed(r.center.latitude, decimals: 7)),"
                    + "\(ValueFormatting.fixed(r.center.longitude, decimals: 7)) radius "
                    + ValueFormatting.fixed(r.radius, decimals: 1)
            case .stopMonitoring(let id), .requestState(let id): id
            case .push(let contentAvailable): contentAvailable ? "contentAvailable" : "alert"
            case .submitAppRefresh(let begin): begin.map(DurationText.format)
            case .submitProcessing(let r): r.description
            case .requestTemporaryFullAccuracy(let key): key
            case .startServiceSession(let a): a.rawValue
            case .addCondition(let name, let r):
                "\(name) \(r.identifier) \(ValueFormatting.fixed(r.center.latitude, decimals: 7)),"
                    + "\(ValueFormatting.fixed(r.center.longitude, decimals: 7)) radius "
                    + ValueFormatting.fixed(r.radius, decimals: 1)
            case .removeCondition(let name, let id): "\(name) \(id)"
            default: nil
            }
        }
    }

    /// What is wrong with the scenario for its iOS release, if anything: answers and settings
    /// the release does not have.
    public var problems: [String] {
        let v = system.iosVersion
        var problems: [String] = []
        if !v.hasAllowOnceAndProvisionalAlways && user.whenInUse == .allowOnce {
            problems.append("Allow Once needs iOS 13 or later (this run models \(v))")
        }
        if !v.hasReducedAccuracy {
            if device.preciseLocation == false || info.usageDescriptions.defaultsToReducedAccuracy {
                problems.append("reduced accuracy (Precise Location off) needs iOS 14 or later (this run models \(v))")
            }
            if manager.desiredAccuracy == .reduced {
                problems.append("desiredAccuracy 'reduced' needs iOS 14 or later (this run models \(v))")
            }
        }
        for item in timeline {
            if case .setAuthorization(.restricted) = item.action {
                problems.append(
                    "'restricted' is a device setting (parental controls, management), not the user's choice: use setRestricted"
                )
            }
        }
        return problems
    }
}

extension Scenario {
    /// A logger's run (`waymark record` without app options): `base` (the default scenario
    /// unless given) with updates that never pause, so that every fix of a foreground app with
    /// When In Use authorization, best accuracy and no distance filter is delivered, as gpxlogger
    /// keeps every fix.
    public static func logger(_ base: Scenario = Scenario()) -> Scenario {
        var s = base
        s.manager.pausesLocationUpdatesAutomatically = false
        s.isLogger = true
        return s
    }
}
