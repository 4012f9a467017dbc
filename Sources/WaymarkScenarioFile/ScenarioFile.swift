import Waymark
import Yams

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The names of the authorization statuses, as scenario files and `--authorization` take them.
public enum AuthorizationText {
    public static let names = "notDetermined, restricted, denied, whenInUse, always"

    public static func parse(_ text: String) -> AuthorizationStatus? {
        switch text {
        case "whenInUse", "authorizedWhenInUse": .authorizedWhenInUse
        case "always", "authorizedAlways": .authorizedAlways
        default: AuthorizationStatus(rawValue: text)
        }
    }
}

/// Replay rates, as scenario files and `--rate` take them.
public enum RateText {
    /// The slowest and fastest factors of real time: a thousandth (an hour's trace takes six
    /// weeks) to a million; `max` is faster still.
    public static let range: ClosedRange<Double> = 0.001...1_000_000
    /// What a rate may be, for error messages.
    public static let expected = "'max' or a factor of real time from 0.001 to 1000000, such as 1 or 20"

    /// 0 for `max`, else the factor; nil when `text` is neither.
    public static func parse(_ text: String) -> Double? {
        if text == "max" { return 0 }
        guard let factor = Double(text), range.contains(factor) else { return nil }
        return factor
    }
}

/// What a desired accuracy may be, for help and errors.
public enum AccuracyText {
    public static let help = "best, bestForNavigation, 10m, 100m, 1km, 3km, reduced, or metres"
}

/// A bad scenario file: where, and what is wrong.
public struct ScenarioFileError: Error, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var column: Int?
    public var message: String
    /// The file could not be opened (missing, or not readable): no input, where the rest are
    /// bad data (sysexits' 66 and 65).
    public var cannotOpen = false

    public init(path: String, line: Int? = nil, column: Int? = nil, message: String, cannotOpen: Bool = false) {
        self.cannotOpen = cannotOpen
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var place = path
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): \(message)"
    }
}

/// How a replay runs, besides the scenario: the source and the pace.
public struct ReplaySettings: Sendable {
    public var untimedSpeed: Double?
    public var interval: Duration?
    public var startOffset: Duration?
    /// nil: not set; 0 loops forever (needs an end).
    public var loops: Int?
    /// nil: not set; 0 means `max`.
    public var rate: Double?
    /// The start time of an untimed trace.
    public var start: Date?
    /// `degrade: urban-canyon:7`: the profile the trace's fixes are degraded by, and its seed.
    public var degrade: (profile: DegradeProfile, seed: UInt64)?

    public init() {}
}

/// Reads scenario files: YAML (JSON is YAML too), every key checked, errors with `file:line:column`.
///
/// The format is documented in `docs/scenarios.md`, with an example per feature.
public enum ScenarioFile {
    static let topKeys = ["info", "device", "user", "manager", "app", "system", "replay", "timeline", "end"]

    /// The largest scenario file read, in bytes: a hand-written or generated scenario is a few
    /// kilobytes; the YAML tree of a larger one takes hundreds of bytes per entry in memory.
    public static let maximumBytes = 1 << 20
    /// The most timeline entries a scenario may have (a change of state every 5 s for a day is
    /// 17 280).
    public static let maximumTimelineEntries = 20_000

    public static func load(path: String) throws -> (Scenario, ReplaySettings) {
        try parse(try readText(path: path), path: path)
    }

    /// The text of a YAML file of at most ``maximumBytes``, UTF-8.
    static func readText(path: String) throws -> String {
        let text: String
        do {
            let data = try readAtMost(maximumBytes + 1, from: path)
            guard data.count <= maximumBytes else {
                throw ScenarioFileError(
                    path: path, message: "is larger than \(maximumBytes >> 20) MiB; a scenario is at most that")
            }
            guard let decoded = String(data: data, encoding: .utf8) else {
                throw ScenarioFileError(path: path, message: "is not UTF-8 text")
            }
            text = decoded
        } catch let e as ScenarioFileError {
            throw e
        } catch {
            throw ScenarioFileError(path: path, message: "cannot be read (\(error.localizedDescription))")
        }
        return text
    }

    /// The first `limit` bytes of the file at `path` (all of it when shorter): a file or a
    /// device of any size costs no more than that.
    private static func readAtMost(_ limit: Int, from path: String) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ScenarioFileError(
                path: path, message: "cannot be read (\(String(cString: strerror(errno))))", cannotOpen: true)
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw ScenarioFileError(path: path, message: "cannot be read (\(String(cString: strerror(errno))))")
            }
            if n == 0 { break }
            count += n
        }
        return Data(bytes[0..<count])
    }

    public static func parse(_ text: String, path: String) throws -> (Scenario, ReplaySettings) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let e as YamlError {
            throw syntaxError(e, path: path)
        }
        var scenario = Scenario()
        var replay = ReplaySettings()
        guard let root else { return (scenario, replay) }
        let r = NodeReader(path: path)
        for (key, value) in try r.mapping(root, in: "the scenario", keys: topKeys) {
            switch key {
            case "info": try readInfo(value, r, &scenario)
            case "device": try readDevice(value, r, &scenario)
            case "user": try readUser(value, r, &scenario)
            case "manager": try readManager(value, r, &scenario)
            case "app": try readApp(value, r, &scenario)
            case "system": try readSystem(value, r, &scenario)
            case "replay": try readReplay(value, r, &replay)
            case "timeline": try readTimeline(value, r, &scenario)
            case "end": scenario.end = try r.duration(value, key: key)
            default: break
            }
        }
        return (scenario, replay)
    }

    static func syntaxError(_ e: YamlError, path: String) -> ScenarioFileError {
        switch e {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return ScenarioFileError(
                path: path, line: mark.line, column: mark.column, message: "not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let keys, let context):
            let names = keys.map { "'\($0)'" }.joined(separator: ", ")
            return ScenarioFileError(
                path: path, line: context.mark.line, column: context.mark.column,
                message: "\(names) appears more than once in the same mapping")
        default:
            return ScenarioFileError(path: path, message: "not valid YAML: \(e)")
        }
    }

    private static func readInfo(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        for (key, value) in try r.mapping(
            node, in: "info",
            keys: [
                "backgroundModes", "usageDescriptions", "defaultAccuracyReduced", "temporaryUsageDescriptions",
                "requiresExplicitServiceSession",
            ])
        {
            switch key {
            case "backgroundModes":
                var modes: BackgroundModes = []
                for item in try r.list(value, key: key) {
                    let name = try r.string(item, key: key)
                    guard let mode = BackgroundModes(name: name) else {
                        throw r.error(
                            item,
                            "'\(name)' is not a background mode Waymark models (\(BackgroundModes.allNames.joined(separator: ", ")))"
                        )
                    }
                    modes.insert(mode)
                }
                s.info.backgroundModes = modes
            case "usageDescriptions":
                var whenInUse = false
                var always = false
                for item in try r.list(value, key: key) {
                    switch try r.string(item, key: key) {
                    case "whenInUse": whenInUse = true
                    case "always", "alwaysAndWhenInUse": always = true
                    case let other:
                        throw r.error(item, "'\(other)' is not a usage description (whenInUse, always)")
                    }
                }
                s.info.usageDescriptions.whenInUse = whenInUse
                s.info.usageDescriptions.alwaysAndWhenInUse = always
            case "defaultAccuracyReduced":
                s.info.usageDescriptions.defaultsToReducedAccuracy = try r.bool(value, key: key)
            case "requiresExplicitServiceSession":
                s.info.requiresExplicitServiceSession = try r.bool(value, key: key)
            case "temporaryUsageDescriptions":
                s.info.temporaryUsageDescriptionKeys = Set(
                    try r.list(value, key: key).map { try r.string($0, key: key) })
            default: break
            }
        }
    }

    private static func readDevice(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        for (key, value) in try r.mapping(
            node, in: "device",
            keys: [
                "locationServices", "authorization", "preciseLocation", "backgroundAppRefresh",
                "appBackgroundAppRefresh", "lowPowerMode", "charging", "network",
            ])
        {
            switch key {
            case "locationServices": s.device.locationServices = try r.bool(value, key: key)
            case "backgroundAppRefresh": s.device.power.backgroundAppRefresh = try r.bool(value, key: key)
            case "appBackgroundAppRefresh": s.device.power.appBackgroundAppRefresh = try r.bool(value, key: key)
            case "lowPowerMode": s.device.power.lowPowerMode = try r.bool(value, key: key)
            case "charging": s.device.power.charging = try r.bool(value, key: key)
            case "network": s.device.power.network = try r.bool(value, key: key)
            case "authorization": s.device.authorization = try r.authorization(value, key: key)
            case "preciseLocation": s.device.preciseLocation = try r.bool(value, key: key)
            default: break
            }
        }
    }

    private static func readUser(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        for (key, value) in try r.mapping(
            node, in: "user", keys: ["whenInUse", "always", "answerAfter", "temporaryFullAccuracy"])
        {
            switch key {
            case "temporaryFullAccuracy":
                switch value.string {
                case "allow"?: s.user.temporaryFullAccuracy = true
                case "deny"?: s.user.temporaryFullAccuracy = false
                default: throw r.error(value, "'temporaryFullAccuracy' must be allow or deny")
                }
            case "whenInUse": s.user.whenInUse = try r.choice(value, key: key, WhenInUseAnswer.self)
            case "always": s.user.always = try r.choice(value, key: key, AlwaysAnswer.self)
            case "answerAfter": s.user.answerAfter = try r.duration(value, key: key)
            default: break
            }
        }
    }

    private static func readManager(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        let keys = [
            "desiredAccuracy", "distanceFilter", "allowsBackgroundLocationUpdates",
            "pausesLocationUpdatesAutomatically", "activityType", "showsBackgroundLocationIndicator",
        ]
        for (key, value) in try r.mapping(node, in: "manager", keys: keys) {
            switch key {
            case "desiredAccuracy": s.manager.desiredAccuracy = try r.accuracy(value, key: key)
            case "distanceFilter": s.manager.distanceFilter = try r.distanceFilter(value, key: key)
            case "allowsBackgroundLocationUpdates":
                s.manager.allowsBackgroundLocationUpdates = try r.bool(value, key: key)
            case "pausesLocationUpdatesAutomatically":
                s.manager.pausesLocationUpdatesAutomatically = try r.bool(value, key: key)
            case "activityType": s.manager.activityType = try r.choice(value, key: key, ActivityType.self)
            case "showsBackgroundLocationIndicator":
                s.manager.showsBackgroundLocationIndicator = try r.bool(value, key: key)
            default: break
            }
        }
    }

    private static func readApp(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        let keys = [
            "launchAt", "request", "startsUpdates", "backgroundTask", "backgroundTaskAtLaunch",
            "reRegistersTaskWhenActive", "endsTaskOnExpiration", "restartsUpdatesAfterPause", "heldDelivery",
            "fetchInterval", "fetchDuration", "monitorsSignificantChanges", "regions", "monitorsVisits",
            "restartsUpdatesOnRelaunch", "pushHandlerDuration", "refreshTaskDuration", "processingTaskDuration",
            "resubmitsAppRefresh", "uploadsInBackground",
        ]
        for (key, value) in try r.mapping(node, in: "app", keys: keys) {
            switch key {
            case "launchAt":
                s.app.launchAt = r.isNull(value) || value.string == "never" ? nil : try r.duration(value, key: key)
            case "request":
                s.app.request =
                    r.isNull(value) ? nil : try r.choice(value, key: key, Scenario.AuthorizationRequest.self)
            case "startsUpdates": s.app.startsUpdates = try r.bool(value, key: key)
            case "backgroundTask": s.app.beginsBackgroundTask = try r.bool(value, key: key)
            case "backgroundTaskAtLaunch": s.app.beginsBackgroundTaskAtLaunch = try r.bool(value, key: key)
            case "reRegistersTaskWhenActive": s.app.reRegistersTaskWhenActive = try r.bool(value, key: key)
            case "endsTaskOnExpiration": s.app.endsTaskOnExpiration = try r.bool(value, key: key)
            case "restartsUpdatesAfterPause": s.app.restartsUpdatesAfterPause = try r.bool(value, key: key)
            case "heldDelivery": s.app.heldDelivery = try r.choice(value, key: key, Scenario.HeldDelivery.self)
            case "fetchInterval": s.app.fetchInterval = try r.fetchInterval(value, key: key)
            case "fetchDuration": s.app.fetchDuration = try r.duration(value, key: key)
            case "monitorsSignificantChanges": s.app.monitorsSignificantChanges = try r.bool(value, key: key)
            case "regions": s.app.regions = try r.list(value, key: key).map { try r.region($0) }
            case "monitorsVisits": s.app.monitorsVisits = try r.bool(value, key: key)
            case "restartsUpdatesOnRelaunch": s.app.restartsUpdatesOnRelaunch = try r.bool(value, key: key)
            case "pushHandlerDuration": s.app.pushHandlerDuration = try r.duration(value, key: key)
            case "refreshTaskDuration": s.app.refreshTaskDuration = try r.duration(value, key: key)
            case "processingTaskDuration": s.app.processingTaskDuration = try r.duration(value, key: key)
            case "resubmitsAppRefresh": s.app.resubmitsAppRefresh = try r.bool(value, key: key)
            case "uploadsInBackground": s.app.uploadsInBackground = try r.bool(value, key: key)
            default: break
            }
        }
    }

    private static func readSystem(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        let keys = [
            "iosVersion", "gracePeriod", "taskBudget", "expirationWarning", "fetchBudget", "minimumFetchInterval",
            "serviceWakeTime", "locationRelaunchAfterSwipe", "locationRequestTimeout", "pushBudget", "pushesPerHour",
            "appRefreshBudget", "processingBudget", "regionHysteresis", "visitRadius", "visitMinimumStay",
            "transferDuration", "transferRetryAfter",
        ]
        for (key, value) in try r.mapping(node, in: "system", keys: keys) {
            switch key {
            case "locationRelaunchAfterSwipe":
                s.system.locationRelaunchAfterSwipe = try r.bool(value, key: key)
                continue
            case "pushesPerHour":
                guard let n = value.int, n >= 0 else {
                    throw r.error(value, "'pushesPerHour' must be a whole number, 0 or more")
                }
                s.system.pushesPerHour = n
                continue
            case "regionHysteresis", "visitRadius":
                let metres = try r.number(value, key: key)
                guard metres > 0 else { throw r.error(value, "'\(key)' must be metres above 0") }
                if key == "regionHysteresis" {
                    s.system.regionHysteresis = metres
                } else {
                    s.system.visitRadius = metres
                }
                continue
            default: break
            }
            if key == "iosVersion" {
                let text = try r.string(value, key: key)
                guard let version = IOSVersion(parsing: text) else {
                    throw r.error(value, "'\(text)' is not an iOS release Waymark models (\(IOSVersion.names))")
                }
                s.system.iosVersion = version
                continue
            }
            let d = try r.duration(value, key: key)
            if d <= .zero
                && ["minimumFetchInterval", "transferRetryAfter", "pushBudget", "appRefreshBudget", "processingBudget"]
                    .contains(key)
            {
                // A zero wait would come due again in the same instant, for ever.
                throw r.error(value, "'\(key)' must be longer than 0 s")
            }
            switch key {
            case "gracePeriod": s.system.gracePeriod = d
            case "taskBudget": s.system.taskBudget = d
            case "expirationWarning": s.system.expirationWarning = d
            case "fetchBudget": s.system.fetchBudget = d
            case "minimumFetchInterval": s.system.minimumFetchInterval = d
            case "serviceWakeTime": s.system.serviceWakeTime = d
            case "locationRequestTimeout": s.system.locationRequestTimeout = d
            case "pushBudget": s.system.pushBudget = d
            case "appRefreshBudget": s.system.appRefreshBudget = d
            case "processingBudget": s.system.processingBudget = d
            case "visitMinimumStay": s.system.visitMinimumStay = d
            case "transferDuration": s.system.transferDuration = d
            case "transferRetryAfter": s.system.transferRetryAfter = d
            default: break
            }
        }
    }

    private static func readReplay(_ node: Node, _ r: NodeReader, _ settings: inout ReplaySettings) throws {
        let keys = ["speed", "interval", "startOffset", "loop", "rate", "start", "degrade"]
        for (key, value) in try r.mapping(node, in: "replay", keys: keys) {
            switch key {
            case "speed":
                let speed = try r.number(value, key: key)
                guard speed > 0 else { throw r.error(value, "'speed' must be above 0 m/s") }
                settings.untimedSpeed = speed
            case "interval":
                let d = try r.duration(value, key: key)
                guard d > .zero else { throw r.error(value, "'interval' must be longer than 0 s") }
                settings.interval = d
            case "startOffset": settings.startOffset = try r.duration(value, key: key)
            case "loop":
                if value.string == "forever" {
                    settings.loops = 0
                } else {
                    guard let n = value.int, n >= 1 else {
                        throw r.error(value, "'loop' must be a number of plays (1 or more) or 'forever'")
                    }
                    settings.loops = n
                }
            case "rate":
                settings.rate = try RateText.parse(value.string ?? "").orThrow(
                    r.error(value, "'rate' must be \(RateText.expected)"))
            case "start":
                guard let text = value.string, let date = try? Date(text, strategy: .iso8601) else {
                    throw r.error(value, "'start' must be an ISO 8601 time such as 2024-05-01T08:00:00Z")
                }
                settings.start = date
            case "degrade":
                let text = try r.string(value, key: key)
                guard let (name, seed) = DegradeProfileFile.parseArgument(text) else {
                    throw r.error(value, "'degrade' is a profile with an optional seed, such as urban-canyon:7")
                }
                // A profile's file is found beside the scenario when its path is relative.
                var path = name
                if DegradeProfileFile.bundled[name] == nil && !name.hasPrefix("/"),
                    let slash = r.path.lastIndex(of: "/")
                {
                    path = String(r.path[...slash]) + name
                }
                do {
                    settings.degrade = (try DegradeProfileFile.load(path), seed)
                } catch let e as ScenarioFileError where e.line == nil {
                    throw r.error(value, "'degrade': \(e.message)")
                }
            default: break
            }
        }
    }

    private static func readTimeline(_ node: Node, _ r: NodeReader, _ s: inout Scenario) throws {
        let items = try r.list(node, key: "timeline")
        if items.count > maximumTimelineEntries {
            throw r.error(
                items[maximumTimelineEntries],
                "the timeline has \(items.count) entries; a scenario has at most \(maximumTimelineEntries)")
        }
        for item in items {
            var at: Duration?
            var name: String?
            var nameNode: Node?
            var valueNode: Node?
            for (key, value) in try r.mapping(item, in: "a timeline entry", keys: ["at", "do", "value"]) {
                switch key {
                case "at": at = try r.duration(value, key: key)
                case "do":
                    name = try r.string(value, key: key)
                    nameNode = value
                case "value": valueNode = value
                default: break
                }
            }
            guard let at else { throw r.error(item, "a timeline entry needs 'at', a time such as 90s or 2m") }
            guard let name, let nameNode else {
                throw r.error(item, "a timeline entry needs 'do', the action (\(TimelineActions.names))")
            }
            let action = try TimelineActions.make(name, value: valueNode, nameNode: nameNode, at: item, r)
            s.timeline.append(Scenario.TimedAction(at: at, action))
        }
    }
}

/// The actions a timeline entry can name.
enum TimelineActions {
    static let names =
        "foreground, background, deactivate, activate, terminate, requestWhenInUse, requestAlways, startUpdates, "
        + "stopUpdates, beginBackgroundTask, endBackgroundTask, setAuthorization, setPreciseLocation, "
        + "setLocationServices, setRestricted, setDesiredAccuracy, setDistanceFilter, setAllowsBackgroundLocationUpdates, "
        + "setPausesLocationUpdatesAutomatically, systemTerminate, startMonitoringSignificantLocationChanges, "
        + "stopMonitoringSignificantLocationChanges, startMonitoring, stopMonitoring, requestState, "
        + "startMonitoringVisits, stopMonitoringVisits, push, submitAppRefresh, submitProcessing, playAudio, stopAudio, "
        + "requestLocation, requestTemporaryFullAccuracy, setBackgroundAppRefresh, setAppBackgroundAppRefresh, "
        + "setLowPowerMode, setCharging, setNetwork, startBackgroundActivitySession, invalidateBackgroundActivitySession, "
        + "startServiceSession, invalidateServiceSession, liveUpdates, addCondition, removeCondition"

    static func make(_ name: String, value: Node?, nameNode: Node, at item: Node, _ r: NodeReader) throws
        -> Scenario.Action
    {
        func needValue() throws -> Node {
            guard let value else { throw r.error(item, "'\(name)' needs a 'value'") }
            return value
        }
        let simple: [String: Scenario.Action] = [
            "foreground": .foreground, "background": .background, "deactivate": .deactivate,
            "activate": .activate, "terminate": .terminate, "requestWhenInUse": .requestAuthorization(.whenInUse),
            "requestAlways": .requestAuthorization(.always), "startUpdates": .startUpdates,
            "stopUpdates": .stopUpdates, "beginBackgroundTask": .beginBackgroundTask,
            "endBackgroundTask": .endBackgroundTask, "systemTerminate": .systemTerminate,
            "startMonitoringSignificantLocationChanges": .startMonitoringSignificantLocationChanges,
            "stopMonitoringSignificantLocationChanges": .stopMonitoringSignificantLocationChanges,
            "startMonitoringVisits": .startMonitoringVisits, "stopMonitoringVisits": .stopMonitoringVisits,
            "playAudio": .playAudio, "stopAudio": .stopAudio, "requestLocation": .requestLocation,
            "startBackgroundActivitySession": .startBackgroundActivitySession,
            "invalidateBackgroundActivitySession": .invalidateBackgroundActivitySession,
            "invalidateServiceSession": .invalidateServiceSession, "liveUpdates": .liveUpdates,
        ]
        if let action = simple[name] {
            if let value { throw r.error(value, "'\(name)' takes no 'value'") }
            return action
        }
        switch name {
        case "setAuthorization":
            let node = try needValue()
            let status = try r.authorization(node, key: "value")
            guard status != .restricted else {
                throw r.error(
                    node,
                    "'restricted' is a device setting (parental controls, management), not the user's choice: use 'do: setRestricted' with 'value: true'"
                )
            }
            return .setAuthorization(status)
        case "setRestricted": return .setRestricted(try r.bool(try needValue(), key: "value"))
        case "setPreciseLocation": return .setPreciseLocation(try r.bool(try needValue(), key: "value"))
        case "setLocationServices": return .setLocationServices(try r.bool(try needValue(), key: "value"))
        case "setDesiredAccuracy": return .setDesiredAccuracy(try r.accuracy(try needValue(), key: "value"))
        case "setDistanceFilter": return .setDistanceFilter(try r.distanceFilter(try needValue(), key: "value"))
        case "setAllowsBackgroundLocationUpdates":
            return .setAllowsBackgroundLocationUpdates(try r.bool(try needValue(), key: "value"))
        case "setPausesLocationUpdatesAutomatically":
            return .setPausesLocationUpdatesAutomatically(try r.bool(try needValue(), key: "value"))
        case "startMonitoring": return .startMonitoring(try r.region(try needValue()))
        case "stopMonitoring": return .stopMonitoring(identifier: try r.identifier(try needValue()))
        case "requestState": return .requestState(identifier: try r.identifier(try needValue()))
        case "push":
            // `{contentAvailable: true}` (the default when there is no value) or false for an alert.
            guard let node = value else { return .push(contentAvailable: true) }
            var contentAvailable = true
            for (key, v) in try r.mapping(node, in: "'push'", keys: ["contentAvailable"])
            where key == "contentAvailable" {
                contentAvailable = try r.bool(v, key: key)
            }
            return .push(contentAvailable: contentAvailable)
        case "submitAppRefresh":
            guard let node = value else { return .submitAppRefresh(earliestBegin: nil) }
            var begin: Duration?
            for (key, v) in try r.mapping(node, in: "'submitAppRefresh'", keys: ["earliestBegin"])
            where key == "earliestBegin" {
                begin = try r.duration(v, key: key)
            }
            return .submitAppRefresh(earliestBegin: begin)
        case "submitProcessing":
            var request = Scenario.ProcessingRequest()
            guard let node = value else { return .submitProcessing(request) }
            let keys = ["earliestBegin", "requiresExternalPower", "requiresNetworkConnectivity"]
            for (key, v) in try r.mapping(node, in: "'submitProcessing'", keys: keys) {
                switch key {
                case "earliestBegin": request.earliestBegin = try r.duration(v, key: key)
                case "requiresExternalPower": request.requiresExternalPower = try r.bool(v, key: key)
                case "requiresNetworkConnectivity": request.requiresNetworkConnectivity = try r.bool(v, key: key)
                default: break
                }
            }
            return .submitProcessing(request)
        case "requestTemporaryFullAccuracy":
            // The purpose key; without one, "default".
            return .requestTemporaryFullAccuracy(
                purposeKey: try value.map { try r.string($0, key: "value") } ?? "default")
        case "setBackgroundAppRefresh": return .setBackgroundAppRefresh(try r.bool(try needValue(), key: "value"))
        case "setAppBackgroundAppRefresh": return .setAppBackgroundAppRefresh(try r.bool(try needValue(), key: "value"))
        case "setLowPowerMode": return .setLowPowerMode(try r.bool(try needValue(), key: "value"))
        case "setCharging": return .setCharging(try r.bool(try needValue(), key: "value"))
        case "setNetwork": return .setNetwork(try r.bool(try needValue(), key: "value"))
        case "startServiceSession":
            return .startServiceSession(try r.choice(try needValue(), key: "value", ServiceSession.Authorization.self))
        case "addCondition", "removeCondition":
            // `{monitor: NAME, identifier: …, latitude: …, longitude: …, radius: …}`; removal names
            // the monitor and the identifier only.
            let node = try needValue()
            guard let mapping = node.mapping else { throw r.error(node, "'\(name)' needs a mapping with 'monitor'") }
            var monitor: String?
            var rest: [(Node, Node)] = []
            for (k, v) in mapping {
                if k.string == "monitor" {
                    monitor = try r.string(v, key: "monitor")
                } else {
                    rest.append((k, v))
                }
            }
            guard let monitor, !monitor.isEmpty else { throw r.error(node, "'\(name)' needs a 'monitor' name") }
            let remainder = Node.mapping(Node.Mapping(rest, node.mapping?.tag ?? .implicit, .block, node.mark))
            if name == "removeCondition" {
                return .removeCondition(monitor: monitor, identifier: try r.identifier(remainder))
            }
            return .addCondition(monitor: monitor, try r.region(remainder))
        default:
            throw r.error(nameNode, "unknown action '\(name)' (expected one of: \(names))")
        }
    }
}

/// Reads typed values from YAML nodes, with errors that point at the node.
struct NodeReader {
    let path: String

    func error(_ node: Node, _ message: String) -> ScenarioFileError {
        ScenarioFileError(path: path, line: node.mark?.line, column: node.mark?.column, message: message)
    }

    /// The pairs of a mapping, in order; unknown and repeated keys are errors.
    func mapping(_ node: Node, in context: String, keys: [String]) throws -> [(String, Node)] {
        guard let mapping = node.mapping else {
            throw error(node, "\(context) must be a mapping of keys to values")
        }
        var seen: Set<String> = []
        var pairs: [(String, Node)] = []
        for (k, v) in mapping {
            guard let key = k.string else { throw error(k, "keys in \(context) must be words") }
            guard keys.contains(key) else {
                throw error(k, "unknown key '\(key)' in \(context) (expected one of: \(keys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw error(k, "'\(key)' appears twice in \(context)") }
            pairs.append((key, v))
        }
        return pairs
    }

    func list(_ node: Node, key: String) throws -> [Node] {
        if let sequence = node.sequence { return Array(sequence) }
        throw error(node, "'\(key)' must be a list")
    }

    func isNull(_ node: Node) -> Bool { node.null != nil }

    func string(_ node: Node, key: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "'\(key)' must be a single value") }
        return scalar.string
    }

    func bool(_ node: Node, key: String) throws -> Bool {
        guard case .scalar = node, let b = node.bool else { throw error(node, "'\(key)' must be true or false") }
        return b
    }

    func number(_ node: Node, key: String) throws -> Double {
        guard case .scalar = node, let d = node.float, d.isFinite else {
            throw error(node, "'\(key)' must be a number")
        }
        return d
    }

    func duration(_ node: Node, key: String) throws -> Duration {
        guard case .scalar(let scalar) = node, let d = DurationText.parse(scalar.string) else {
            throw error(node, "'\(key)' must be a duration such as 90s, 2m, 1h5m or 250ms")
        }
        return d
    }

    func choice<T: RawRepresentable & CaseIterable>(_ node: Node, key: String, _: T.Type) throws -> T
    where T.RawValue == String {
        let text = try string(node, key: key)
        guard let value = T(rawValue: text) else {
            let options = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(node, "'\(text)' is not a valid '\(key)' (expected one of: \(options))")
        }
        return value
    }

    func authorization(_ node: Node, key: String) throws -> AuthorizationStatus {
        let text = try string(node, key: key)
        guard let status = AuthorizationText.parse(text) else {
            throw error(node, "'\(text)' is not an authorization (expected one of: \(AuthorizationText.names))")
        }
        return status
    }

    func accuracy(_ node: Node, key: String) throws -> DesiredAccuracy {
        let text = try string(node, key: key)
        guard let accuracy = DesiredAccuracy(parsing: text) else {
            throw error(node, "'\(text)' is not an accuracy (\(AccuracyText.help))")
        }
        return accuracy
    }

    func distanceFilter(_ node: Node, key: String) throws -> Double {
        if node.string == "none" { return DeviceLocationManager.distanceFilterNone }
        let d = try number(node, key: key)
        guard d >= 0 || d == -1 else { throw error(node, "'\(key)' must be metres (0 or more) or 'none'") }
        return d
    }

    /// A circular region: `{identifier: home, latitude: 47.26, longitude: 11.39, radius: 200}`, with
    /// optional `notifyOnEntry` and `notifyOnExit`.
    func region(_ node: Node) throws -> CircularRegion {
        let keys = ["identifier", "latitude", "longitude", "radius", "notifyOnEntry", "notifyOnExit"]
        var identifier: String?
        var latitude: Double?
        var longitude: Double?
        var radius: Double?
        var entry = true
        var exit = true
        for (key, value) in try mapping(node, in: "a region", keys: keys) {
            switch key {
            case "identifier": identifier = try self.identifier(value)
            case "latitude":
                let d = try number(value, key: key)
                guard (-90...90).contains(d) else { throw error(value, "'latitude' must be between -90 and 90") }
                latitude = d
            case "longitude":
                let d = try number(value, key: key)
                guard (-180...180).contains(d) else { throw error(value, "'longitude' must be between -180 and 180") }
                longitude = d
            case "radius":
                let d = try number(value, key: key)
                guard d > 0 else { throw error(value, "'radius' must be metres above 0") }
                radius = d
            case "notifyOnEntry": entry = try bool(value, key: key)
            case "notifyOnExit": exit = try bool(value, key: key)
            default: break
            }
        }
        guard let identifier, let latitude, let longitude, let radius else {
            throw error(node, "a region needs 'identifier', 'latitude', 'longitude' and 'radius' (metres)")
        }
        return CircularRegion(
            center: Coordinate(latitude: latitude, longitude: longitude), radius: radius, identifier: identifier,
            notifyOnEntry: entry, notifyOnExit: exit)
    }

    /// A region's identifier: a non-empty word, or `{identifier: …}`.
    func identifier(_ node: Node) throws -> String {
        if node.mapping != nil {
            for (key, value) in try mapping(node, in: "the region", keys: ["identifier"]) where key == "identifier" {
                return try identifier(value)
            }
            throw error(node, "the region needs an 'identifier'")
        }
        let text = try string(node, key: "identifier")
        guard !text.isEmpty else { throw error(node, "a region's identifier must not be empty") }
        return text
    }

    func fetchInterval(_ node: Node, key: String) throws -> Scenario.FetchInterval {
        switch node.string {
        case "never"?: return .never
        case "minimum"?: return .minimum
        default:
            let d = try duration(node, key: key)
            guard d > .zero else { throw error(node, "'\(key)' must be never, minimum or a duration above 0") }
            return .every(d)
        }
    }
}

extension Optional {
    func orThrow(_ error: @autoclosure () -> some Error) throws -> Wrapped {
        guard let self else { throw error() }
        return self
    }
}
