/// `BGTaskScheduler`'s requests: a pure state machine that accepts or refuses submissions and
/// says which pending requests may run now.
///
/// It holds no clock and does no I/O; times come with the calls. The rules:
///
/// - A `BGAppRefreshTaskRequest` needs the `fetch` background mode, a `BGProcessingTaskRequest`
///   the `processing` mode; without it the submission fails with `notPermitted`. With Background
///   App Refresh off (or Low Power Mode) it fails with `unavailable`.
/// - At most ``maximumAppRefresh`` app-refresh and ``maximumProcessing`` processing requests are
///   pending ("There can be a total of 1 refresh task and 10 processing tasks scheduled at any
///   time"); one more fails with `tooManyPendingTaskRequests`. Submitting an identifier again
///   replaces its pending request.
/// - A request may run from its earliest begin date (or its submission). Waymark runs it at the
///   first moment it may: the app is not on screen, was not swiped away by the user since it last
///   ran, Background App Refresh is available, and a processing request's power and network
///   requirements hold. It runs once; the app resubmits for more.
public struct TaskSchedulerStateMachine: Sendable, Hashable {
    public static let maximumAppRefresh = 1
    public static let maximumProcessing = 10

    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case appRefresh, processing

        public var wakeCause: WakeCause { self == .appRefresh ? .backgroundAppRefresh : .backgroundProcessing }
    }

    public struct Request: Sendable, Hashable {
        public var identifier: String
        public var kind: Kind
        /// The earliest offset it may begin at (nil: at once).
        public var earliestBegin: Duration?
        public var requiresExternalPower: Bool
        public var requiresNetworkConnectivity: Bool

        public init(
            identifier: String, kind: Kind, earliestBegin: Duration? = nil, requiresExternalPower: Bool = false,
            requiresNetworkConnectivity: Bool = false
        ) {
            self.identifier = identifier
            self.kind = kind
            self.earliestBegin = earliestBegin
            self.requiresExternalPower = requiresExternalPower
            self.requiresNetworkConnectivity = requiresNetworkConnectivity
        }
    }

    /// Why a submission failed, as `BGTaskScheduler.Error.Code`.
    public enum SubmitError: String, Error, Sendable, Hashable, CaseIterable {
        case unavailable, tooManyPendingTaskRequests, notPermitted

        /// The error's name in the audit log.
        public var auditReason: AuditReason {
            switch self {
            case .unavailable: .unavailable
            case .tooManyPendingTaskRequests: .tooManyPendingTaskRequests
            case .notPermitted: .notPermitted
            }
        }
    }

    /// A request waiting to run, and when it was submitted.
    public struct Pending: Sendable, Hashable {
        public var request: Request
        public var submittedAt: Duration
        /// When it may run: its earliest begin date, or its submission.
        public var due: Duration { max(submittedAt, request.earliestBegin ?? submittedAt) }
    }

    /// The requests the app has submitted that have not run.
    public enum State: Sendable, Hashable {
        case empty
        /// The pending requests, oldest first (never empty).
        case pending([Pending])
    }

    public private(set) var state: State = .empty

    public init() {}

    /// The pending requests, oldest first.
    private var pending: [Pending] {
        get { if case .pending(let pending) = state { pending } else { [] } }
        set { state = newValue.isEmpty ? .empty : .pending(newValue) }
    }

    public var pendingRequests: [Request] { pending.map(\.request) }

    /// The app submits `request` at `now`.
    public mutating func submit(_ request: Request, at now: Duration, modes: BackgroundModes, power: PowerAndRefresh)
        -> SubmitError?
    {
        let mode: BackgroundModes = request.kind == .appRefresh ? .fetch : .processing
        guard modes.contains(mode) else { return .notPermitted }
        guard power.backgroundRefreshAvailable else { return .unavailable }
        // The same identifier replaces its request; the limit counts the others (a refused
        // submission leaves the pending one in place).
        let limit = request.kind == .appRefresh ? Self.maximumAppRefresh : Self.maximumProcessing
        let others = pending.count { $0.request.kind == request.kind && $0.request.identifier != request.identifier }
        guard others < limit else { return .tooManyPendingTaskRequests }
        pending.removeAll { $0.request.identifier == request.identifier }
        pending.append(Pending(request: request, submittedAt: now))
        return nil
    }

    /// `cancel(taskRequestWithIdentifier:)`; nil cancels all.
    public mutating func cancel(identifier: String?) {
        pending.removeAll { identifier == nil || $0.request.identifier == identifier }
    }

    /// When the next pending request comes due after `now`, if any.
    public func nextDue(after now: Duration) -> Duration? { pending.map(\.due).filter { $0 > now }.min() }

    /// Why a due request waits, or nil when it may run now.
    public static func waitReason(
        _ request: Request, app: AppState, terminatedByUser: Bool, power: PowerAndRefresh
    ) -> AuditReason? {
        if app.isForeground { return .appInForeground }
        if terminatedByUser { return .userTerminated }
        if let off = power.backgroundRefreshOffReason { return off }
        if request.requiresExternalPower && !power.charging { return .requiresExternalPower }
        if request.requiresNetworkConnectivity && !power.network { return .requiresNetworkConnectivity }
        return nil
    }

    /// Takes the requests due at `now` that may run, oldest first; the others stay pending.
    public mutating func takeRunnable(
        at now: Duration, app: AppState, terminatedByUser: Bool, power: PowerAndRefresh
    ) -> [Request] {
        var run: [Request] = []
        pending.removeAll { p in
            guard p.due <= now,
                Self.waitReason(p.request, app: app, terminatedByUser: terminatedByUser, power: power) == nil
            else { return false }
            run.append(p.request)
            return true
        }
        return run
    }

    /// The requests due at `now` that wait, with why (for the audit log).
    public func waiting(at now: Duration, app: AppState, terminatedByUser: Bool, power: PowerAndRefresh)
        -> [(Request, AuditReason)]
    {
        pending.compactMap { p in
            guard p.due <= now,
                let why = Self.waitReason(p.request, app: app, terminatedByUser: terminatedByUser, power: power)
            else { return nil }
            return (p.request, why)
        }
    }
}
