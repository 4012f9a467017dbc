#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One entry of the audit log: something that happened in the simulation, at a time.
///
/// ``ndjson(epoch:)`` gives its line in the NDJSON audit log. The keys come in a fixed order and
/// numbers in a fixed format, so the same run always gives the same bytes.
public struct AuditEvent: Sendable, Hashable {
    /// The audit log's format version, written in the `started` event (`docs/audit-log.md`).
    public static let formatVersion = 5

    /// Time since the start of the run.
    public var offset: Duration
    public var kind: Kind

    public init(offset: Duration, kind: Kind) {
        self.offset = offset
        self.kind = kind
    }

    /// What happened to one fix.
    public struct FixRecord: Sendable, Hashable {
        /// The point's index in its file, or the fix's sequence number.
        public var index: Int
        public var segment: Int
        public var decision: FixDecision
        public var reason: FixReason
        public var appState: AppState
        public var authorization: AuthorizationStatus
        public var accuracy: AccuracyAuthorization
        /// The position as the source gave it.
        public var coordinate: Coordinate
        /// What the app received, when it was delivered (possibly coarsened).
        public var delivered: Location?
        /// The background task time left, when a task runs.
        public var backgroundTimeRemaining: Duration?
        /// Whether the location indicator shows (a When In Use app's background session).
        public var indicator: Bool
        /// The positioning source of what was delivered or held (``AccuracyModel``).
        public var positioning: AccuracyModel.Positioning?
        /// The location manager it was decided for: its number in the app's process (format 5;
        /// written when not 1).
        public var manager: Int
        /// The source fix's degradation (`--degrade`): written as `truthError` and `faults`.
        public var degradation: Provenance.Degradation?

        public init(
            index: Int, segment: Int, decision: FixDecision, reason: FixReason, appState: AppState,
            authorization: AuthorizationStatus, accuracy: AccuracyAuthorization, coordinate: Coordinate,
            delivered: Location?, backgroundTimeRemaining: Duration?, indicator: Bool,
            positioning: AccuracyModel.Positioning? = nil, manager: Int = 1,
            degradation: Provenance.Degradation? = nil
        ) {
            self.degradation = degradation
            self.positioning = positioning
            self.manager = manager
            self.index = index
            self.segment = segment
            self.decision = decision
            self.reason = reason
            self.appState = appState
            self.authorization = authorization
            self.accuracy = accuracy
            self.coordinate = coordinate
            self.delivered = delivered
            self.backgroundTimeRemaining = backgroundTimeRemaining
            self.indicator = indicator
        }
    }

    public enum Kind: Sendable, Hashable {
        /// The run began: the source's name and the iOS release it models.
        /// `logger`: a logger's recording (`waymark record` without app options; issue 28).
        case started(source: String, iosVersion: IOSVersion, logger: Bool = false)
        /// The app created its location manager (at launch); from iOS 14 the delegate's
        /// `locationManagerDidChangeAuthorization` is called then (`reported`).
        case managerCreated(authorization: AuthorizationStatus, reported: Bool)
        /// The app's own code did something worth seeing: a call it made and why.
        case app(action: String, detail: String?)
        /// One `didUpdateLocations` call with more than one location (held fixes on resume).
        case locationsDelivered(count: Int, reason: FixReason)
        /// A scripted action is carried out.
        case action(name: String, value: String?)
        case stateChanged(from: AppState, to: AppState, cause: LifecycleCause)
        /// The app asked for authorization: `prompted` or `ignored` with a reason.
        case authorizationRequest(
            request: Scenario.AuthorizationRequest, outcome: AuthorizationRequestOutcome,
            reason: AuthorizationStateMachine.IgnoredReason?)
        /// A prompt was `shown`, `answered` with the user's answer, or `dismissed` unanswered.
        case prompt(prompt: PromptKind, phase: PromptPhase, answer: PromptAnswer?)
        case authorizationChanged(from: AuthorizationStatus, to: AuthorizationStatus)
        case accuracyChanged(from: AccuracyAuthorization, to: AccuracyAuthorization)
        case locationServicesChanged(enabled: Bool)
        /// The app changed a manager property.
        /// The app set a property of the manager numbered `manager` (format 5: `manager` written
        /// when not 1).
        case setting(name: ManagerSetting, value: String, manager: Int = 1)
        /// Updates `started` or `stopped`, or a start `refused`.
        /// The manager numbered `manager` started or stopped standard updates (format 5: `manager`
        /// written when not 1).
        case updates(action: UpdatesAction, manager: Int = 1)
        case fix(FixRecord)
        /// An error for the manager numbered `manager` (format 5: written when not 1).
        case error(LocationError, manager: Int = 1)
        /// A background task `began`, `ended` or is `expiring` (format 1 also wrote `refused` and
        /// `reinstated`).
        case backgroundTask(action: BackgroundTaskAction, task: Int?, remaining: Duration?, reason: String?)
        /// A fetch `began`, `completed` (with its result), `expired`, was `deferred` or `skipped`.
        case fetch(action: FetchAction, result: FetchResult?, synced: Int?, reason: AuditReason?, detail: String? = nil)
        case paused(reason: PauseReason, manager: Int = 1)
        case resumed(reason: ResumeReason, manager: Int = 1)
        /// Held fixes thrown away on resume or termination.
        case heldDiscarded(count: Int, reason: HeldDiscardReason, manager: Int = 1)
        /// The app, back in the foreground, reports how many locations arrived while it was away.
        case arrivedWhileAway(count: Int)
        case terminated(reason: TerminationCause)
        /// Something the system refused or ignored, in words.
        case diagnostic(message: String)
        /// (4) What the location source did, beside its fixes: a live receiver's gpsd
        /// `connected`, `unreachable`, an `outage` (the track segment ends), the receiver `stale`
        /// (silent) or `receiving` again, its clock's `timeJump`, a fix dropped for an
        /// `implausibleTime`, an `overlongLine` skipped, reports dropped in a `backlogOverflow`;
        /// `detail` says more, in words.
        case source(action: SourceAction, detail: String?)
        /// The run ended, with its counts.
        case finished(RunSummary)
        /// A location from a service other than standard updates (the significant-change
        /// service, `requestLocation()`): `delivered`, `held` for the app or `dropped`, with a
        /// reason (the service's name when delivered); or the service `started`, `stopped`,
        /// `requested` or `failed`.
        case serviceLocation(ServiceLocationRecord)
        /// A region: monitoring `started`, `failed` or `stopped`; the device `entered` or `exited`
        /// it (delivered, or dropped with a reason); its state `determined`.
        case region(
            action: RegionAction, identifier: String, state: RegionState?, decision: ServiceDecision?,
            reason: AuditReason?)
        /// A visit's `arrival` or `departure` (delivered, held or dropped with a reason), or the
        /// service `started` or `stopped`.
        case visit(action: VisitAction, visit: Visit?, decision: ServiceDecision?, reason: AuditReason?)
        /// A push notification: `received`, `delivered` to the app's handler, `completed` (with its
        /// result), `expired`, `throttled` or `dropped` with a reason.
        case push(action: PushAction, result: FetchResult?, reason: AuditReason?, detail: String? = nil)
        /// A `BGTaskScheduler` request: `submitted`, `rejected` (with the error), `waiting` (with
        /// why), `began`, `expiring`, `completed` (with success), `expired`, `dropped`, `cancelled`.
        case scheduledTask(
            action: ScheduledTaskAction, kind: TaskSchedulerStateMachine.Kind, identifier: String, success: Bool?,
            reason: AuditReason?, earliestBegin: Duration? = nil, detail: String? = nil)
        /// Audio playback `started` or `stopped`, with why.
        case audio(action: AudioAction, reason: AuditReason?)
        /// A background URL session's transfer: `scheduled`, `completed`, `failed` (retried),
        /// `cancelled`, and the app's `eventsHandled`. `session`: a download's session identifier
        /// (issue 26; an upload has none).
        case transfer(
            action: TransferAction, task: Int, count: Int?, reason: AuditReason?, detail: String? = nil,
            session: String? = nil)
        /// A `CLBackgroundActivitySession` or `CLServiceSession` (`kind` `backgroundActivity`,
        /// `service`) `started`, `invalidated` or `ignored` (with why).
        case session(kind: SessionKind, action: SessionAction, reason: AuditReason?)
        /// A `CLMonitor`'s condition `added`, `removed`, or its state `satisfied`, `unsatisfied`
        /// (delivered to the monitor's events, or dropped with a reason).
        case monitor(
            name: String, identifier: String, action: MonitorAction, decision: ServiceDecision?, reason: AuditReason?)
        /// A live update without a location (iOS 17+) for the streams of manager `manager`: the
        /// device is `stationary`, or (iOS 18) a `diagnostic` says why no location comes.
        case liveUpdate(stationary: Bool, diagnostic: LiveUpdate.Diagnostic?, manager: Int = 1)
    }

    /// A service's location, for the audit log.
    public struct ServiceLocationRecord: Sendable, Hashable {
        public var service: LocationServiceName
        public var action: ServiceLocationAction
        public var reason: AuditReason?
        public var index: Int?
        public var segment: Int?
        public var appState: AppState
        public var location: Location?
        /// The app's authorization and accuracy then (not written in the audit log; for outputs
        /// that keep delivered locations).
        public var authorization: AuthorizationStatus
        public var accuracy: AccuracyAuthorization
        /// The location manager whose `requestLocation()` it is: its number in the app's process
        /// (format 5; written when not 1).
        public var manager: Int

        public init(
            service: LocationServiceName, action: ServiceLocationAction, reason: AuditReason? = nil, index: Int? = nil,
            segment: Int? = nil,
            appState: AppState, location: Location? = nil, authorization: AuthorizationStatus = .authorizedAlways,
            accuracy: AccuracyAuthorization = .fullAccuracy, manager: Int = 1
        ) {
            self.service = service
            self.action = action
            self.reason = reason
            self.index = index
            self.segment = segment
            self.appState = appState
            self.location = location
            self.authorization = authorization
            self.accuracy = accuracy
            self.manager = manager
        }
    }

    /// The location the app received in this event, as a fix record: a standard update's, or a
    /// service's (the significant-change service, `requestLocation()`); nil for other events.
    public var deliveredRecord: FixRecord? {
        switch kind {
        case .fix(let f): return f.delivered == nil ? nil : f
        case .serviceLocation(let r):
            guard r.action == .delivered, let location = r.location else { return nil }
            return FixRecord(
                index: r.index ?? 0, segment: r.segment ?? 0, decision: .delivered,
                reason: r.service == .requestLocation ? .requestLocation : .significantLocationChange,
                appState: r.appState, authorization: r.authorization, accuracy: r.accuracy,
                coordinate: location.coordinate, delivered: location, backgroundTimeRemaining: nil, indicator: false,
                manager: r.manager)
        default: return nil
        }
    }

    /// The event's name in the audit log.
    public var name: String {
        switch kind {
        case .started: "started"
        case .managerCreated: "managerCreated"
        case .app: "app"
        case .locationsDelivered: "didUpdateLocations"
        case .action: "action"
        case .stateChanged: "stateChanged"
        case .authorizationRequest: "authorizationRequest"
        case .prompt: "prompt"
        case .authorizationChanged: "authorizationChanged"
        case .accuracyChanged: "accuracyChanged"
        case .locationServicesChanged: "locationServicesChanged"
        case .setting: "setting"
        case .updates: "updates"
        case .fix: "fix"
        case .error: "error"
        case .backgroundTask: "backgroundTask"
        case .fetch: "fetch"
        case .paused: "paused"
        case .resumed: "resumed"
        case .heldDiscarded: "heldDiscarded"
        case .arrivedWhileAway: "arrivedWhileAway"
        case .terminated: "terminated"
        case .diagnostic: "diagnostic"
        case .source: "source"
        case .finished: "finished"
        case .serviceLocation: "serviceLocation"
        case .region: "region"
        case .visit: "visit"
        case .push: "push"
        case .scheduledTask: "scheduledTask"
        case .audio: "audio"
        case .transfer: "transfer"
        case .session: "session"
        case .monitor: "monitor"
        case .liveUpdate: "liveUpdate"
        }
    }

    /// The event as one line of NDJSON (with its newline); `epoch` is the run's start.
    public func ndjson(epoch: Date) -> String {
        let out = ByteStore(capacity: 256)
        var cache = ValueFormatting.DayCache()
        append(to: out, epoch: epoch, cache: &cache)
        return out.string
    }

    func append(to out: ByteStore, epoch: Date, cache: inout ValueFormatting.DayCache) {
        out.append("{\"time\":\"")
        ValueFormatting.appendISO8601(epoch.addingTimeInterval(offset.inSeconds), to: out, cache: &cache)
        out.append("\",\"event\":\"")
        out.append(name)
        out.append(UInt8(ascii: "\""))
        appendFields(to: out)
        out.append("}\n")
    }

    /// Appends the event's own fields as `,"key":value` pairs.
    func appendFields(to out: ByteStore) {
        let w = JSONFields(out: out)
        switch kind {
        case .started(let source, let version, let logger):
            w.string("source", source)
            w.int("format", Self.formatVersion)
            w.int("ios", version.major)
            if logger { w.bool("logger", true) }
        case .managerCreated(let authorization, let reported):
            w.string("authorization", authorization.rawValue)
            w.bool("reported", reported)
        case .app(let action, let detail):
            w.string("action", action)
            w.string("detail", detail)
        case .locationsDelivered(let count, let reason):
            w.int("count", count)
            w.string("reason", reason.rawValue)
        case .action(let name, let value):
            w.string("action", name)
            w.string("value", value)
        case .stateChanged(let from, let to, let cause):
            w.string("from", from.rawValue)
            w.string("to", to.rawValue)
            w.string("cause", cause.rawValue)
        case .authorizationRequest(let request, let outcome, let reason):
            w.string("request", request.rawValue)
            w.string("outcome", outcome.rawValue)
            w.string("reason", reason?.rawValue)
        case .prompt(let prompt, let phase, let answer):
            w.string("prompt", prompt.rawValue)
            w.string("phase", phase.rawValue)
            w.string("answer", answer?.rawValue)
        case .authorizationChanged(let from, let to):
            w.string("from", from.rawValue)
            w.string("to", to.rawValue)
        case .accuracyChanged(let from, let to):
            w.string("from", from.rawValue)
            w.string("to", to.rawValue)
        case .locationServicesChanged(let enabled):
            w.bool("enabled", enabled)
        case .setting(let name, let value, let manager):
            w.string("name", name.rawValue)
            w.string("value", value)
            if manager != 1 { w.int("manager", manager) }
        case .updates(let action, let manager):
            w.string("action", action.rawValue)
            if manager != 1 { w.int("manager", manager) }
        case .fix(let f):
            w.int("index", f.index)
            w.int("segment", f.segment)
            w.string("decision", f.decision.rawValue)
            w.string("reason", f.reason.rawValue)
            w.string("appState", f.appState.rawValue)
            w.string("authorization", f.authorization.rawValue)
            w.string("accuracy", f.accuracy == .fullAccuracy ? "full" : "reduced")
            w.number("latitude", f.coordinate.latitude, decimals: 7)
            w.number("longitude", f.coordinate.longitude, decimals: 7)
            if let d = f.delivered {
                if d.coordinate != f.coordinate {
                    w.number("deliveredLatitude", d.coordinate.latitude, decimals: 7)
                    w.number("deliveredLongitude", d.coordinate.longitude, decimals: 7)
                }
                w.accuracy("horizontalAccuracy", d.horizontalAccuracy)
            }
            if let p = f.positioning, p != .satellite { w.string("positioning", p.rawValue) }
            if let r = f.backgroundTimeRemaining { w.number("backgroundTimeRemaining", r.inSeconds, decimals: 3) }
            if f.indicator { w.bool("indicator", true) }
            if f.manager != 1 { w.int("manager", f.manager) }
            if let d = f.degradation {
                w.number("truthError", d.error, decimals: 2)
                if !d.faults.isEmpty { w.string("faults", d.faults.joined(separator: " ")) }
            }
        case .error(let e, let manager):
            w.string("code", e.code.name)
            w.string("reason", e.reason)
            if manager != 1 { w.int("manager", manager) }
        case .backgroundTask(let action, let task, let remaining, let reason):
            w.string("action", action.rawValue)
            if let task { w.int("task", task) }
            if let remaining { w.number("remaining", remaining.inSeconds, decimals: 3) }
            w.string("reason", reason)
        case .fetch(let action, let result, let synced, let reason, let detail):
            w.string("action", action.rawValue)
            w.string("result", result?.rawValue)
            if let synced { w.int("synced", synced) }
            w.string("reason", reason?.rawValue)
            w.string("detail", detail)
        case .paused(let reason, let manager):
            w.string("reason", reason.rawValue)
            if manager != 1 { w.int("manager", manager) }
        case .resumed(let reason, let manager):
            w.string("reason", reason.rawValue)
            if manager != 1 { w.int("manager", manager) }
        case .terminated(let reason):
            w.string("reason", reason.rawValue)
        case .heldDiscarded(let count, let reason, let manager):
            w.int("count", count)
            w.string("reason", reason.rawValue)
            if manager != 1 { w.int("manager", manager) }
        case .arrivedWhileAway(let count):
            w.int("count", count)
        case .diagnostic(let message):
            w.string("message", message)
        case .source(let action, let detail):
            w.string("action", action.rawValue)
            w.string("detail", detail)
        case .serviceLocation(let r):
            w.string("service", r.service.rawValue)
            w.string("action", r.action.rawValue)
            w.string("reason", r.reason?.rawValue)
            if let index = r.index { w.int("index", index) }
            if let segment = r.segment { w.int("segment", segment) }
            w.string("appState", r.appState.rawValue)
            if let l = r.location {
                w.number("latitude", l.coordinate.latitude, decimals: 7)
                w.number("longitude", l.coordinate.longitude, decimals: 7)
                w.accuracy("horizontalAccuracy", l.horizontalAccuracy)
            }
            if r.manager != 1 { w.int("manager", r.manager) }
        case .region(let action, let identifier, let state, let decision, let reason):
            w.string("action", action.rawValue)
            w.string("identifier", identifier)
            w.string("state", state?.rawValue)
            w.string("decision", decision?.rawValue)
            w.string("reason", reason?.rawValue)
        case .visit(let action, let visit, let decision, let reason):
            w.string("action", action.rawValue)
            w.string("decision", decision?.rawValue)
            w.string("reason", reason?.rawValue)
            if let v = visit {
                w.number("latitude", v.coordinate.latitude, decimals: 7)
                w.number("longitude", v.coordinate.longitude, decimals: 7)
                w.accuracy("horizontalAccuracy", v.horizontalAccuracy)
                w.date("arrival", v.arrivalDate)
                if !v.isArrival { w.date("departure", v.departureDate) }
            }
        case .push(let action, let result, let reason, let detail):
            w.string("action", action.rawValue)
            w.string("result", result?.rawValue)
            w.string("reason", reason?.rawValue)
            w.string("detail", detail)
        case .scheduledTask(let action, let kind, let identifier, let success, let reason, let begin, let detail):
            w.string("action", action.rawValue)
            w.string("kind", kind.rawValue)
            w.string("identifier", identifier)
            if let success { w.bool("success", success) }
            if let begin {
                w.string("reason", "earliestBegin at \(DurationText.format(max(.zero, begin)))")
            } else {
                w.string("reason", reason?.rawValue)
            }
            w.string("detail", detail)
        case .audio(let action, let reason):
            w.string("action", action.rawValue)
            w.string("reason", reason?.rawValue)
        case .transfer(let action, let task, let count, let reason, let detail, let session):
            w.string("action", action.rawValue)
            w.int("task", task)
            if let count { w.int("count", count) }
            w.string("reason", reason?.rawValue)
            w.string("detail", detail)
            w.string("session", session)
        case .session(let kind, let action, let reason):
            w.string("kind", kind.rawValue)
            w.string("action", action.rawValue)
            w.string("reason", reason?.rawValue)
        case .monitor(let name, let identifier, let action, let decision, let reason):
            w.string("name", name)
            w.string("identifier", identifier)
            w.string("action", action.rawValue)
            w.string("decision", decision?.rawValue)
            w.string("reason", reason?.rawValue)
        case .liveUpdate(let stationary, let diagnostic, let manager):
            if stationary { w.bool("stationary", true) }
            w.string("diagnostic", diagnostic?.rawValue)
            if manager != 1 { w.int("manager", manager) }
        case .finished(let s):
            w.int("fixes", s.fixes)
            w.int("delivered", s.count(.delivered))
            w.int("held", s.count(.held))
            w.int("dropped", s.count(.dropped))
            w.int("ignored", s.count(.ignored))
            w.int("resumed", s.resumedDeliveries)
        }
    }
}

/// Renders the fields of ``AuditEvent``s as JSON objects (the audit log's line without its
/// `time` and `event` keys), reusing one buffer: for stores that keep the name and time apart.
public final class AuditFieldEncoder {
    private let out = ByteStore(capacity: 512)

    public init() {}

    /// Calls `body` with the UTF-8 bytes of `{...}`, valid only during the call.
    public func withFields<R>(of event: AuditEvent, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        out.count = 0
        out.append(UInt8(ascii: "{"))
        event.appendFields(to: out)
        if out.count > 1 {  // drop the first pair's comma
            (out.base + 1).update(from: out.base + 2, count: out.count - 2)
            out.count -= 1
        }
        out.append(UInt8(ascii: "}"))
        return try body(UnsafeRawBufferPointer(start: out.base, count: out.count))
    }

    /// The fields as a string.
    public func fields(of event: AuditEvent) -> String {
        withFields(of: event) { String(decoding: $0, as: UTF8.self) }
    }
}

/// Appends `,"key":value` pairs.
struct JSONFields {
    let out: ByteStore

    func string(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        appendKey(key)
        JSONEscaping.appendString(value, to: out)
    }

    func int(_ key: StaticString, _ value: Int) {
        appendKey(key)
        ValueFormatting.appendInteger(Int64(value), to: out)
    }

    func number(_ key: StaticString, _ value: Double, decimals: Int) {
        appendKey(key)
        if value.isFinite {
            ValueFormatting.appendFixed(value, decimals: decimals, to: out)
        } else {
            out.append("null")
        }
    }

    func date(_ key: StaticString, _ value: Date) {
        appendKey(key)
        out.append(UInt8(ascii: "\""))
        var cache = ValueFormatting.DayCache()
        ValueFormatting.appendISO8601(value, to: out, cache: &cache)
        out.append(UInt8(ascii: "\""))
    }

    func bool(_ key: StaticString, _ value: Bool) {
        appendKey(key)
        out.append(value ? "true" : "false")
    }

    private func appendKey(_ key: StaticString) {
        out.append(",\"")
        out.append(key)
        out.append("\":")
    }
}

extension Duration {
    /// The duration in seconds, as a `Double` (for arithmetic with `Date` and rates).
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The counts of a run: every fix's decision and reason, by app state, for the app's first
/// location manager (each source fix once). Another manager's fixes are in the audit log's `fix`
/// events, with its number; the counts here leave them out, all of them alike.
public struct RunSummary: Sendable, Hashable {
    /// Fix events at arrival (one per source event).
    public private(set) var fixes = 0
    private var decisions = [Int](repeating: 0, count: FixDecision.allCases.count)
    private var reasons = [Int](repeating: 0, count: FixReason.allCases.count)
    private var states = [Int](repeating: 0, count: AppState.allCases.count)
    /// Held fixes delivered on resume.
    public internal(set) var resumedDeliveries = 0
    /// Held fixes thrown away.
    public internal(set) var discardedHeld = 0
    /// Locations delivered while the app was not in the foreground, plus those delivered on
    /// resume (a significant change counts when the first manager hears it).
    public internal(set) var deliveredWhileAway = 0

    public init() {}

    mutating func count(_ decision: FixDecision, _ reason: FixReason, _ state: AppState) {
        fixes += 1
        decisions[Self.decisionCases.firstIndex(of: decision)!] += 1
        reasons[Self.reasonCases.firstIndex(of: reason)!] += 1
        states[Self.stateCases.firstIndex(of: state)!] += 1
    }

    /// Fixes with `decision` at arrival.
    public func count(_ decision: FixDecision) -> Int { decisions[Self.decisionCases.firstIndex(of: decision)!] }
    /// Fixes decided for `reason` at arrival.
    public func count(_ reason: FixReason) -> Int { reasons[Self.reasonCases.firstIndex(of: reason)!] }
    /// Fixes that arrived while the app was in `state`.
    public func count(_ state: AppState) -> Int { states[Self.stateCases.firstIndex(of: state)!] }

    private static let decisionCases = FixDecision.allCases
    private static let reasonCases = FixReason.allCases
    private static let stateCases = AppState.allCases
}
