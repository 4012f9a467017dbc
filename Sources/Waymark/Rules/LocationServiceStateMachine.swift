#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why held fixes were thrown away: a stable camelCase word for the audit log.
public enum HeldDiscardReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The app resumed, but the held-delivery option or the app's state kept them from it.
    case resume
    /// The app was terminated.
    case terminated
    /// The run ended.
    case runEnded
    /// The user kept When In Use at the Always prompt.
    case alwaysDeclined
    /// The user changed to Always too long after the event (``LocationServiceStateMachine/staleAfter``).
    case stale
}

/// Standard location updates for one manager: a pure state machine.
///
/// It decides every fix by ``DeliveryPolicy``, then by the positioning source and
/// `distanceFilter` (``AccuracyModel``); it queues fixes for a suspended app and hands them over
/// in one `didUpdateLocations` call when the app runs again; it pauses a stationary device
/// (``AutoPause``); and it holds the event that brings up a provisional-Always app's upgrade
/// prompt until the user answers. It holds no clock and does no I/O: every event comes with a
/// ``Context``, the state of the app and the device at that moment, and the owner carries out
/// the actions.
///
/// - Updates started while the app is in use (on screen, or in its grace period) may become a
///   background location session; a When In Use app that started them out of use gets nothing
///   until it is in use again.
/// - A fix that the filters would not have generated is not queued either: queued fixes obey
///   `distanceFilter`, the desired accuracy and the reduced-accuracy rate.
/// - After an automatic pause the app, not the system, restarts updates (`startUpdatingLocation`).
public struct LocationServiceStateMachine: Sendable {
    /// The manager's properties the rules read (and a scenario's `manager` keys).
    public struct Settings: Sendable, Hashable {
        public var desiredAccuracy: DesiredAccuracy = .best
        /// Metres; −1 is `kCLDistanceFilterNone`.
        public var distanceFilter: Double = DeviceLocationManager.distanceFilterNone
        public var allowsBackgroundLocationUpdates = false
        public var pausesLocationUpdatesAutomatically = true
        public var activityType: ActivityType = .other
        public var showsBackgroundLocationIndicator = false
        public init() {}
    }

    /// The app and the device when an event happens.
    public struct Context: Sendable, Hashable {
        public var now: Duration
        public var appState: AppState
        /// On screen, or in the grace period after leaving it.
        public var appInUse: Bool
        /// Why a backgrounded app runs, if it does.
        public var running: DeliveryPolicy.Running?
        /// What the app reads (`denied` with Location Services off).
        public var authorization: AuthorizationStatus
        public var isProvisionalAlways: Bool
        public var accuracy: AccuracyAuthorization
        public var locationServicesEnabled: Bool
        /// The Info declares the `location` background mode.
        public var hasLocationMode: Bool
        public var settings: Settings
        /// A `CLBackgroundActivitySession` (iOS 17+) started in use is held: like
        /// `allowsBackgroundLocationUpdates`, with the indicator.
        public var activitySession: Bool
        /// The manager's live updates (`CLLocationUpdate.liveUpdates`).
        public var live: Live

        public init(
            now: Duration, appState: AppState, appInUse: Bool, running: DeliveryPolicy.Running?,
            authorization: AuthorizationStatus, isProvisionalAlways: Bool, accuracy: AccuracyAuthorization,
            locationServicesEnabled: Bool, hasLocationMode: Bool, settings: Settings, activitySession: Bool = false,
            live: Live = Live()
        ) {
            self.activitySession = activitySession
            self.live = live
            self.now = now
            self.appState = appState
            self.appInUse = appInUse
            self.running = running
            self.authorization = authorization
            self.isProvisionalAlways = isProvisionalAlways
            self.accuracy = accuracy
            self.locationServicesEnabled = locationServicesEnabled
            self.hasLocationMode = hasLocationMode
            self.settings = settings
        }

        var isRunning: Bool { appState != .notRunning && appState != .suspended }
    }

    /// What the manager's live updates need to hear of a decision.
    public struct Live: Sendable, Hashable {
        /// The manager's live-update streams are open: a dropped fix is a diagnostic for them, a
        /// pause a stationary update.
        public var listening = false
        /// A diagnostic was the last thing live updates said: the next delivery makes it stale.
        public var diagnosticShown = false
        /// An authorization prompt is up (the diagnostic for a request in progress needs one).
        public var promptPending = false

        public init(listening: Bool = false, diagnosticShown: Bool = false, promptPending: Bool = false) {
            self.listening = listening
            self.diagnosticShown = diagnosticShown
            self.promptPending = promptPending
        }
    }

    public enum State: Sendable, Hashable {
        case stopped
        /// Updates run; `startedInUse` when the app was in use at the start (or has been since).
        case updating(startedInUse: Bool)
        /// Paused by the system for a stationary device, until the app restarts them.
        case paused(startedInUse: Bool)
    }

    public enum Event: Sendable, Hashable {
        /// The app calls `startUpdatingLocation()`.
        case start(Context)
        /// The app calls `stopUpdatingLocation()`.
        case stop
        /// An event from the source.
        case source(SourceEvent, Context)
        /// The app came on screen.
        case appEnteredForeground(Context)
        /// A suspended app runs again (in the background or on its way to the foreground).
        case appResumed(Context)
        /// A suspended app resumed on its way to the foreground: its held fixes come once it is
        /// active.
        case resumedForForeground
        /// The app became active: fixes held while it was suspended come now, if it resumed on
        /// its way to the foreground.
        case appBecameActive(Context)
        case appTerminated
        /// What the app reads changed (authorization, accuracy, Location Services).
        case authorizationChanged(Context)
        /// The user answered the Always prompt.
        case alwaysAnswered(granted: Bool, Context)
        case runEnded
    }

    /// What became of one fix, for the audit log and the counts.
    public struct Outcome: Sendable, Hashable {
        public var index: Int
        public var segment: Int
        public var decision: FixDecision
        public var reason: FixReason
        /// The position as the source gave it (NaN for a moment without a fix).
        public var coordinate: Coordinate
        /// What the app received or will receive.
        public var delivered: Location?
        /// The source that produced `delivered`.
        public var positioning: AccuracyModel.Positioning?
        /// The location indicator shows (a background session of a When In Use app, or of an
        /// Always app that asked for it).
        public var indicator: Bool
        /// The manager it is for: its number in the app's process (1 for the first).
        public var manager = 1
        /// The source fix's degradation, when it was made bad on purpose.
        public var degradation: Provenance.Degradation? = nil

        /// This outcome, moved out, leaving one that holds nothing. Appended as an action, an
        /// outcome built in a variable is copied (its location counted once more and once
        /// less, for every fix); taken, it is moved.
        @inline(__always)
        mutating func take() -> Outcome {
            var taken = Outcome(
                index: 0, segment: 0, decision: .dropped, reason: .noFix,
                coordinate: Coordinate(latitude: 0, longitude: 0),
                delivered: nil, positioning: nil, indicator: false)
            swap(&taken, &self)
            return taken
        }
    }

    /// A held event that waited longer than this for the Always answer is dropped.
    public static let staleAfter: Duration = .seconds(60)

    public let version: IOSVersion
    public let heldDelivery: Scenario.HeldDelivery
    public private(set) var state: State = .stopped
    /// A suspended app resumed on its way to the foreground: its held fixes come when it is
    /// active.
    public private(set) var resumePending = false

    private struct Held: Sendable, Hashable {
        var location: Location
        var index: Int
        var segment: Int
        var at: Duration
        var positioning: AccuracyModel.Positioning
    }

    /// Queued for a suspended app.
    private var held: [Held] = []
    /// Queued fixes that the held-delivery option will not hand over, already let go.
    private var heldNotKept = 0
    /// The event that brought up the Always prompt.
    private var awaitingAlways: Held?
    /// The last location generated (delivered or queued) and its source: the filters measure
    /// from it.
    private var lastGenerated: (coordinate: Coordinate, at: Duration, positioning: AccuracyModel.Positioning)?
    private var detector = AutoPause()
    private var lastSegment = 0
    private var deniedReported = false

    /// The manager whose updates these are: its number in the app's process (1 for the first).
    /// Its audit events carry the number (written when not 1); another manager's ignored fixes
    /// are left out of the log (it has not started).
    public let manager: Int

    public init(version: IOSVersion, heldDelivery: Scenario.HeldDelivery, manager: Int = 1) {
        self.version = version
        self.heldDelivery = heldDelivery
        self.manager = manager
    }

    /// Whether the app asked for updates and has not stopped them (paused counts).
    public var isUpdating: Bool { state != .stopped }
    public var isPaused: Bool { if case .paused = state { true } else { false } }
    /// How many fixes wait for a suspended app.
    public var heldCount: Int { held.count + heldNotKept }
    /// Where the last location the app received or will receive was.
    public var lastCoordinate: Coordinate? { lastGenerated?.coordinate }

    /// Whether updates keep flowing in the background: the `location` mode,
    /// `allowsBackgroundLocationUpdates`, and updates started in use or under (confirmed) Always.
    public func hasBackgroundSession(_ c: Context) -> Bool {
        guard case .updating(let startedInUse) = state else { return false }
        return c.hasLocationMode && (c.settings.allowsBackgroundLocationUpdates || c.activitySession)
            && c.authorization.isAuthorized
            && (startedInUse || (c.authorization == .authorizedAlways && !c.isProvisionalAlways))
    }

    /// Whether a background session shows the location indicator: always for a When In Use app
    /// (and a provisional-Always one), on request for an Always app.
    public func showsIndicator(_ c: Context) -> Bool {
        hasBackgroundSession(c)
            && (c.authorization == .authorizedWhenInUse || c.isProvisionalAlways
                || c.settings.showsBackgroundLocationIndicator || c.activitySession)
    }

    /// Applies one event and returns what the owner must do, in order, in the device's actions.
    public mutating func handle(_ event: Event) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        handle(event, into: &actions)
        return actions
    }

    /// Applies one event and appends what the owner must do to `actions` (the owner's buffer,
    /// reused from fix to fix).
    public mutating func handle(_ event: Event, into actions: inout [DeviceAction]) {
        if case .source(let e, let c) = event {
            decide(e, c, into: &actions)
        } else {
            actions += apply(event)
        }
    }

    /// The same as `handle(.source(event, context), into: &actions)`, for the hot path: one fix
    /// without wrapping it in an ``Event``.
    public mutating func receive(
        _ event: borrowing SourceEvent, _ context: Context, into actions: inout [DeviceAction]
    ) {
        decide(event, context, into: &actions)
    }

    private mutating func apply(_ event: Event) -> [DeviceAction] {
        switch event {
        case .start(let c): return start(c)
        case .stop:
            guard state != .stopped else { return [] }
            state = .stopped
            return [.record(.updates(action: .stopped, manager: manager))]
        case .source: return []
        case .appEnteredForeground:
            if case .updating = state { state = .updating(startedInUse: true) }
            if case .paused = state { state = .paused(startedInUse: true) }
            return []
        case .appResumed(let c): return deliverHeld(c)
        case .resumedForForeground:
            resumePending = true
            return []
        case .appBecameActive(let c):
            guard resumePending else { return [] }
            resumePending = false
            return deliverHeld(c)
        case .appTerminated:
            resumePending = false
            let actions = discardAll(.terminated)
            state = .stopped
            lastGenerated = nil
            detector.reset()
            deniedReported = false
            return actions
        case .authorizationChanged(let c):
            if c.authorization.isAuthorized {
                deniedReported = false
                return []
            }
            guard isUpdating, c.authorization != .notDetermined || !c.locationServicesEnabled else { return [] }
            return reportDenied(c)
        case .alwaysAnswered(let granted, let c): return answered(granted, c)
        case .runEnded: return discardAll(.runEnded)
        }
    }

    // MARK: - Starting

    private mutating func start(_ c: Context) -> [DeviceAction] {
        let inUse = version.restrictsWhenInUseToInUse ? c.appInUse : c.appState.isForeground
        switch state {
        case .updating:
            return []
        case .paused(let startedInUse):
            // "For apps that have in-use authorization, a pause … ends access to location changes
            // until the app … is able to restart those updates": under When In Use rules only a
            // restart in use counts as one (pausesLocationUpdatesAutomatically).
            let whenInUseRules =
                version.restrictsWhenInUseToInUse
                && (c.authorization == .authorizedWhenInUse || c.isProvisionalAlways)
            state = .updating(startedInUse: whenInUseRules ? inUse : startedInUse || inUse)
            detector.reset()
            return [
                .record(.resumed(reason: .appRestarted, manager: manager)),
                .call(.delegate(.didResumeLocationUpdates, to: .manager(manager))),
            ]
        case .stopped:
            state = .updating(startedInUse: inUse)
            detector.reset()
            var actions: [DeviceAction] = [.record(.updates(action: .started, manager: manager))]
            if c.isProvisionalAlways && !inUse { actions.append(Self.needsAlways) }
            if !c.authorization.isAuthorized && (c.authorization != .notDetermined || !c.locationServicesEnabled) {
                actions += reportDenied(c)
            }
            return actions
        }
    }

    // MARK: - Fixes

    /// One event from the source, borrowed: a fix's location is copied out of it once, for
    /// the outcome (copying the event counted a reference to the location once more and once
    /// less).
    private mutating func decide(_ event: borrowing SourceEvent, _ c: Context, into actions: inout [DeviceAction]) {
        guard case .fix(let location) = event.kind else {
            if isUpdating && c.authorization.isAuthorized && c.isRunning {
                report(LocationError(.locationUnknown, reason: "noFix"), into: &actions)
            }
            decided(
                Outcome(
                    index: event.index, segment: event.segment, decision: .dropped, reason: .noFix,
                    coordinate: Coordinate(latitude: .nan, longitude: .nan), delivered: nil, positioning: nil,
                    indicator: false), c, into: &actions)
            return
        }
        decide(location, index: event.index, segment: event.segment, c, into: &actions)
    }

    /// One fix's decision: `location` is the fix, given to the accuracy model, whose candidate
    /// is moved into the outcome when it is delivered.
    private mutating func decide(
        _ location: consuming Location, index: Int, segment: Int, _ c: Context, into actions: inout [DeviceAction]
    ) {
        if segment != lastSegment {
            // After a loss of signal, stillness is measured afresh.
            lastSegment = segment
            detector.reset()
        }
        if case .updating(let startedInUse) = state, c.isRunning, c.authorization.isAuthorized,
            c.settings.pausesLocationUpdatesAutomatically,
            detector.observe(location.coordinate, at: c.now, activity: c.settings.activityType)
        {
            state = .paused(startedInUse: startedInUse)
            detector.reset()
            actions.append(.record(.paused(reason: .stationary, manager: manager)))
            actions.append(.call(.delegate(.didPauseLocationUpdates, to: .manager(manager))))
            if c.live.listening && version.major >= 17 {
                // The manager's live updates say the device is stationary (iOS 17).
                actions.append(.record(.liveUpdate(stationary: true, diagnostic: nil, manager: manager)))
                actions.append(.call(.liveStationary(manager: manager)))
            }
        }
        let session = c.appState == .background && hasBackgroundSession(c)
        let policy = DeliveryPolicy.Context(
            appState: c.appState, isUpdating: isUpdating, locationServicesEnabled: c.locationServicesEnabled,
            authorization: c.authorization, isPaused: isPaused, hasBackgroundSession: session,
            startedInBackgroundWhenInUse: state == .updating(startedInUse: false), running: c.running,
            restrictsWhenInUseToInUse: version.restrictsWhenInUseToInUse, appInUse: c.appInUse,
            isProvisionalAlways: c.isProvisionalAlways)
        var (decision, reason) = DeliveryPolicy.decide(policy)
        var outcome = Outcome(
            index: index, segment: segment, decision: decision, reason: reason,
            coordinate: location.coordinate, delivered: nil, positioning: nil, indicator: false,
            degradation: location.provenance.degradation)

        if reason == .notInUse && c.isProvisionalAlways {
            // Using location out of use needs Always: the event waits for the user's answer.
            if awaitingAlways == nil {
                let source = positioning(c)
                let candidate = AccuracyModel.apply(source, to: consume location)
                awaitingAlways = Held(
                    location: candidate, index: index, segment: segment, at: c.now, positioning: source)
                (decision, reason) = (.held, .awaitingAlways)
                outcome.positioning = source
                actions.append(Self.needsAlways)
            } else {
                (decision, reason) = (.dropped, .alwaysPromptShowing)
            }
            outcome.decision = decision
            outcome.reason = reason
            decided(outcome.take(), c, into: &actions)
            return
        }

        switch decision {
        case .delivered, .held:
            let source = positioning(c)
            let candidate = AccuracyModel.apply(source, to: consume location)
            outcome.positioning = source
            if let filtered = filter(candidate, source, c) {
                outcome.decision = .dropped
                outcome.reason = filtered
                decided(outcome.take(), c, into: &actions)
                return
            }
            lastGenerated = (candidate.coordinate, c.now, source)
            if decision == .held {
                enqueue(
                    Held(
                        location: candidate, index: index, segment: segment, at: c.now,
                        positioning: source))
                decided(outcome.take(), c, into: &actions)
            } else {
                outcome.delivered = consume candidate
                outcome.indicator = reason == .backgroundSession && showsIndicator(c)
                decided(outcome.take(), c, into: &actions)
                deliver(count: 1, reason: reason, c, into: &actions)
            }
        case .dropped:
            decided(outcome.take(), c, into: &actions)
            if reason == .denied || reason == .restricted || reason == .locationServicesDisabled {
                actions += reportDenied(c)
            }
        case .ignored:
            decided(outcome.take(), c, into: &actions)
        }
    }

    // MARK: - The decisions, in the device's actions

    /// One fix decided. A fix dropped for a reason live updates report is a diagnostic for the
    /// manager's live updates first (when they listen; the one for a request in progress only
    /// while its prompt is up). Another manager's outcome carries its number, and its ignored
    /// fixes are left out.
    @inline(__always)
    private func decided(_ outcome: consuming Outcome, _ c: Context, into actions: inout [DeviceAction]) {
        if outcome.decision == .dropped, c.live.listening, let d = LiveUpdate.Diagnostic(outcome.reason),
            d != .authorizationRequestInProgress || c.live.promptPending
        {
            actions.append(.post(.liveDiagnostic(d, manager: manager)))
        }
        guard manager == 1 else {
            guard outcome.decision != .ignored else { return }
            var other = outcome
            other.manager = manager
            actions.append(.decided(other))
            return
        }
        actions.append(.decided(outcome))
    }

    /// Hand the manager the last `count` locations decided as delivered, in one
    /// `didUpdateLocations`. A diagnostic live updates showed is stale from then: it is cleared
    /// before the app's delegate runs, so that a diagnostic the app's code brings about there
    /// (invalidating its last service session, say) is news.
    @inline(__always)
    private func deliver(count: Int, reason: FixReason, _ c: Context, into actions: inout [DeviceAction]) {
        if c.live.diagnosticShown { actions.append(.post(.liveUpdateDelivered(manager: manager))) }
        actions.append(.deliver(count: count, reason: reason, manager: manager))
    }

    /// An error for the manager's delegate.
    private func report(_ error: LocationError, into actions: inout [DeviceAction]) {
        actions.append(.record(.error(error, manager: manager)))
        actions.append(.call(.delegate(.didFailWithError(error), to: .manager(manager))))
    }

    /// The app used location in a way that needs Always (the provisional upgrade prompt).
    private static let needsAlways = DeviceAction.post(.authorization(.neededAlways))

    private func positioning(_ c: Context) -> AccuracyModel.Positioning {
        AccuracyModel.positioning(desiredAccuracy: c.settings.desiredAccuracy, accuracy: c.accuracy, version: version)
    }

    /// Why the filters drop `candidate`, or nil when it passes.
    private func filter(_ candidate: Location, _ source: AccuracyModel.Positioning, _ c: Context) -> FixReason? {
        guard let last = lastGenerated else { return nil }
        if let interval = source.minimumInterval, last.positioning == source, c.now - last.at < interval {
            return .accuracyThrottle
        }
        if c.settings.distanceFilter > 0,
            Geodesic.distance(last.coordinate, candidate.coordinate) < c.settings.distanceFilter
        {
            return .distanceFilter
        }
        return nil
    }

    private mutating func reportDenied(_ c: Context) -> [DeviceAction] {
        guard !deniedReported, c.isRunning else { return [] }
        deniedReported = true
        let why: String
        if !c.locationServicesEnabled {
            why = "locationServicesDisabled"
        } else {
            why = c.authorization.rawValue
        }
        var actions: [DeviceAction] = []
        report(LocationError(.denied, reason: why), into: &actions)
        return actions
    }

    // MARK: - Held fixes

    /// Queues a fix for a suspended app. Only what the app will receive is kept; the rest is
    /// counted, so memory stays flat however long the app is suspended with `newest` or `none`.
    private mutating func enqueue(_ item: Held) {
        switch heldDelivery {
        case .all: held.append(item)
        case .newest:
            heldNotKept += held.count
            held = [item]
        case .none: heldNotKept += 1
        }
    }

    private mutating func deliverHeld(_ c: Context) -> [DeviceAction] {
        guard !held.isEmpty || heldNotKept > 0 else { return [] }
        let total = held.count + heldNotKept
        var keep = held[...]
        held.removeAll()
        heldNotKept = 0
        if !(isUpdating && c.authorization.isAuthorized) { keep = [] }
        var actions: [DeviceAction] = []
        if total > keep.count { actions.append(discarded(total - keep.count, .resume)) }
        guard !keep.isEmpty else { return actions }
        for item in keep {
            decided(
                Outcome(
                    index: item.index, segment: item.segment, decision: .delivered, reason: .resumed,
                    coordinate: item.location.coordinate, delivered: item.location, positioning: item.positioning,
                    indicator: false, degradation: item.location.provenance.degradation), c, into: &actions)
        }
        deliver(count: keep.count, reason: .resumed, c, into: &actions)
        return actions
    }

    private mutating func answered(_ granted: Bool, _ c: Context) -> [DeviceAction] {
        guard let item = awaitingAlways else { return [] }
        awaitingAlways = nil
        guard granted else { return [discarded(1, .alwaysDeclined)] }
        guard c.now - item.at <= Self.staleAfter else { return [discarded(1, .stale)] }
        guard isUpdating else { return [discarded(1, .resume)] }
        lastGenerated = (item.location.coordinate, item.at, item.positioning)
        if !c.isRunning {
            enqueue(item)
            return []
        }
        var actions: [DeviceAction] = []
        decided(
            Outcome(
                index: item.index, segment: item.segment, decision: .delivered, reason: .alwaysGranted,
                coordinate: item.location.coordinate, delivered: item.location, positioning: item.positioning,
                indicator: false, degradation: item.location.provenance.degradation), c, into: &actions)
        deliver(count: 1, reason: .alwaysGranted, c, into: &actions)
        return actions
    }

    private mutating func discardAll(_ reason: HeldDiscardReason) -> [DeviceAction] {
        let count = held.count + heldNotKept + (awaitingAlways == nil ? 0 : 1)
        held.removeAll()
        heldNotKept = 0
        awaitingAlways = nil
        return count > 0 ? [discarded(count, reason)] : []
    }

    private func discarded(_ count: Int, _ reason: HeldDiscardReason) -> DeviceAction {
        .record(.heldDiscarded(count: count, reason: reason, manager: manager))
    }
}
