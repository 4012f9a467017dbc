import ArgumentParser
import Waymark
import WaymarkScenarioFile

/// Authorization names as users type them: the short forms and CoreLocation's own.
/// `--ios VERSION`: the iOS release whose rules apply.
struct IOSVersionArgument: ExpressibleByArgument {
    var value: IOSVersion
    init?(argument: String) {
        guard let v = IOSVersion(parsing: argument) else { return nil }
        value = v
    }
    static var defaultValueDescription: String { "\(IOSVersion.newest.major)" }
}

/// `--rate`: `max` (virtual time) or a factor of real time.
/// A duration argument: `90s`, `2m`, `1h5m`, `250ms`.
struct DurationArgument: ExpressibleByArgument {
    var value: Duration
    init?(argument: String) {
        guard let d = DurationText.parse(argument) else { return nil }
        value = d
    }
    static var defaultCompletionKind: CompletionKind { .default }
}

extension AuthorizationStatus: ExpressibleByArgument {
    public init?(argument: String) {
        guard let status = AuthorizationText.parse(argument) else { return nil }
        self = status
    }

    public static var allValueStrings: [String] { ["notDetermined", "restricted", "denied", "whenInUse", "always"] }
}

extension Scenario.AuthorizationRequest: ExpressibleByArgument {}
extension WhenInUseAnswer: ExpressibleByArgument {}
extension AlwaysAnswer: ExpressibleByArgument {}
extension ActivityType: ExpressibleByArgument {}
extension Scenario.HeldDelivery: ExpressibleByArgument {}

extension DesiredAccuracy: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// The simulated app, its authorization and accuracy: options `replay` and `record` share.
///
/// Each flag overrides what a `--scenario` file says.
struct AppOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A scenario file (YAML or JSON) that scripts the whole run; flags override it.", valueName: "file"))
    var scenario: String?

    @Option(
        name: .customLong("ios"),
        help: ArgumentHelp(
            "The iOS release whose rules apply: \(IOSVersion.names) (default \(IOSVersion.newest.major), the newest Apple documents; docs/ios-versions.md).",
            valueName: "version"))
    var iosVersion: IOSVersionArgument?

    @Option(
        help: ArgumentHelp(
            "The app's authorization at the start (default whenInUse, as if granted on an earlier run).",
            valueName: "status"))
    var authorization: AuthorizationStatus?

    @Option(
        help: ArgumentHelp(
            "The authorization the app requests at launch; without --authorization, the app starts notDetermined (a first run).",
            valueName: "kind"))
    var request: Scenario.AuthorizationRequest?

    @Option(
        help: ArgumentHelp(
            "The user's answer to the When In Use prompt.", valueName: "answer"
        ))
    var answer: WhenInUseAnswer?

    @Option(
        help: ArgumentHelp(
            "The user's answer to the Always prompt.", valueName: "answer"))
    var alwaysAnswer: AlwaysAnswer?

    @Flag(help: "Precise Location is off: positions are coarsened to 5 km and come at most 4 times an hour.")
    var reducedAccuracy = false

    @Option(help: ArgumentHelp("desiredAccuracy: \(AccuracyText.help).", valueName: "accuracy"))
    var accuracy: DesiredAccuracy?

    @Option(help: ArgumentHelp("distanceFilter in metres, from the last delivered location.", valueName: "metres"))
    var distanceFilter: Double?

    @Option(
        help: ArgumentHelp(
            "The app's UIBackgroundModes, comma-separated: location, fetch, remote-notification, audio, processing.",
            valueName: "modes"))
    var backgroundModes: String?

    @Flag(help: "Set allowsBackgroundLocationUpdates (needs the location background mode).")
    var allowsBackgroundUpdates = false

    @Flag(help: "Do not pause updates when the device is stationary (pausesLocationUpdatesAutomatically = false).")
    var noAutoPause = false

    @Option(
        help: ArgumentHelp(
            "activityType: how soon a stationary device pauses updates.", valueName: "type"))
    var activityType: ActivityType?

    @Option(
        help: ArgumentHelp(
            "Send the app to the background at this time (90s, 2m, 1h5m); repeatable.", valueName: "time"))
    var backgroundAt: [DurationArgument] = []

    @Option(help: ArgumentHelp("Bring the app back to the foreground at this time; repeatable.", valueName: "time"))
    var foregroundAt: [DurationArgument] = []

    @Option(
        help: ArgumentHelp(
            "The user swipes the app away in the app switcher at this time; repeatable.", valueName: "time"))
    var terminateAt: [DurationArgument] = []

    @Flag(
        help:
            "The app starts the significant-change location service at launch: a location every 500 m, at most every 5 minutes; it relaunches an Always app."
    )
    var significantChanges = false

    @Option(
        help: ArgumentHelp(
            "A circular region the app monitors from launch, as ID:LATITUDE,LONGITUDE,RADIUS (metres); repeatable, at most 20.",
            valueName: "region"))
    var region: [String] = []

    @Option(
        help: ArgumentHelp(
            "A background (content-available) push arrives at this time; repeatable (needs the remote-notification mode to wake the app).",
            valueName: "time"))
    var pushAt: [DurationArgument] = []

    @Flag(help: "The app begins a background task whenever it enters the background.")
    var backgroundTask = false

    @Option(
        help: ArgumentHelp(
            "The background task budget (default: the release's, 30s from iOS 13, 180s before).",
            valueName: "duration"))
    var taskBudget: DurationArgument?

    @Option(
        help: ArgumentHelp(
            "The background fetch interval: never, minimum or a duration (needs the fetch mode).", valueName: "interval"
        ))
    var fetchInterval: String?

    @Option(
        help: ArgumentHelp(
            "What a suspended app receives on resume (default all, in one didUpdateLocations call).", valueName: "which"
        ))
    var heldDelivery: Scenario.HeldDelivery?

    func validate() throws {
        if let modes = backgroundModes {
            for name in modes.split(separator: ",") where BackgroundModes(name: String(name)) == nil {
                throw ValidationError(
                    "'\(name)' is not a background mode Waymark models (\(BackgroundModes.allNames.joined(separator: ", ")))"
                )
            }
        }
        if let d = distanceFilter, d < 0 && d != -1 {
            throw ValidationError("--distance-filter must be 0 metres or more")
        }
        if let f = fetchInterval, f != "never", f != "minimum", DurationText.parse(f) == nil {
            throw ValidationError("--fetch-interval must be never, minimum or a duration such as 15m")
        }
        for text in region where Self.parseRegion(text) == nil {
            throw ValidationError(
                "--region '\(text)' must be ID:LATITUDE,LONGITUDE,RADIUS, such as home:47.26,11.39,200 (radius in metres above 0)"
            )
        }
    }

    /// `ID:LATITUDE,LONGITUDE,RADIUS`.
    static func parseRegion(_ text: String) -> CircularRegion? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let id = String(text[..<colon])
        let numbers = text[text.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        guard !id.isEmpty, numbers.count == 3, let lat = Double(numbers[0]), let lon = Double(numbers[1]),
            let radius = Double(numbers[2]), (-90...90).contains(lat), (-180...180).contains(lon), radius > 0,
            radius.isFinite
        else { return nil }
        return CircularRegion(center: Coordinate(latitude: lat, longitude: lon), radius: radius, identifier: id)
    }

    /// Whether any option of the app was given (a scenario, or any flag of this group): `record`
    /// then runs its fixes through the simulated app, which it otherwise leaves out.
    var isAnyGiven: Bool {
        scenario != nil || iosVersion != nil || authorization != nil || request != nil || answer != nil
            || alwaysAnswer != nil || reducedAccuracy || accuracy != nil || distanceFilter != nil
            || backgroundModes != nil || allowsBackgroundUpdates || noAutoPause || activityType != nil
            || !backgroundAt.isEmpty || !foregroundAt.isEmpty || !terminateAt.isEmpty || significantChanges
            || !region.isEmpty || !pushAt.isEmpty || backgroundTask || taskBudget != nil || fetchInterval != nil
            || heldDelivery != nil
    }

    /// The scenario, checked against its iOS release: a problem is a scenario error (65) when a
    /// file is given, else a usage error (64).
    func checkedScenario(loading file: (Scenario, ReplaySettings)?) throws -> Scenario {
        let s = scenario(loading: file)
        guard let problem = s.problems.first else { return s }
        if let path = self.scenario { throw ScenarioFileError(path: path, message: problem) }
        throw ValidationError(problem)
    }

    /// The scenario: the file's, if any, with the flags applied on top.
    func scenario(loading file: (Scenario, ReplaySettings)?) -> Scenario {
        var s = file?.0 ?? Scenario()
        if let iosVersion { s.system.iosVersion = iosVersion.value }
        if let authorization { s.device.authorization = authorization }
        if let request {
            s.app.request = request
            if authorization == nil && file == nil { s.device.authorization = .notDetermined }
        }
        if let answer { s.user.whenInUse = answer }
        if let alwaysAnswer { s.user.always = alwaysAnswer }
        if reducedAccuracy { s.device.preciseLocation = false }
        if let accuracy { s.manager.desiredAccuracy = accuracy }
        if let distanceFilter { s.manager.distanceFilter = distanceFilter }
        if let modes = backgroundModes {
            s.info.backgroundModes = BackgroundModes(
                modes.split(separator: ",").compactMap { BackgroundModes(name: String($0)) })
        }
        if allowsBackgroundUpdates { s.manager.allowsBackgroundLocationUpdates = true }
        if noAutoPause { s.manager.pausesLocationUpdatesAutomatically = false }
        if let activityType { s.manager.activityType = activityType }
        if backgroundTask { s.app.beginsBackgroundTask = true }
        if let taskBudget { s.system.taskBudget = taskBudget.value }
        if let heldDelivery { s.app.heldDelivery = heldDelivery }
        if let f = fetchInterval {
            switch f {
            case "never": s.app.fetchInterval = .never
            case "minimum": s.app.fetchInterval = .minimum
            default: s.app.fetchInterval = .every(DurationText.parse(f)!)
            }
        }
        // The simulation runs actions by time, and at equal times in the order given: the file's
        // first, then --background-at, then --foreground-at.
        s.timeline += backgroundAt.map { Scenario.TimedAction(at: $0.value, .background) }
        s.timeline += foregroundAt.map { Scenario.TimedAction(at: $0.value, .foreground) }
        s.timeline += terminateAt.map { Scenario.TimedAction(at: $0.value, .terminate) }
        s.timeline += pushAt.map { Scenario.TimedAction(at: $0.value, .push(contentAvailable: true)) }
        if significantChanges { s.app.monitorsSignificantChanges = true }
        s.app.regions += region.compactMap(Self.parseRegion)
        return s
    }
}
