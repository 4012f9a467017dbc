/// The app's background URL session: transfers that go on while the app is suspended or
/// terminated by the system, and the app woken to handle their completion. A pure state machine
/// that answers in the device's actions (``DeviceAction``). The rules (W9):
///
/// - "This configuration makes it possible for transfers to continue even when the app itself
///   is suspended or terminated": a transfer takes ``Timing/duration``, whatever the app does;
///   without a network it fails and is tried again after ``Timing/retryAfter``.
/// - "When a background transfer completes … if your app is no longer running, your app is
///   automatically relaunched in the background, and the app's UIApplicationDelegate is sent an
///   application(_:handleEventsForBackgroundURLSession:completionHandler:) message" — unless a
///   download's session has `sessionSendsLaunchEvents` false: then its events wait for the app.
/// - The woken app has ``Timing/eventsBudget`` to call that completion (*assumption*: as for a
///   push); it runs until then.
/// - "If the user terminates the app from the multitasking screen, the system cancels all of the
///   session's background transfers."
public struct TransferStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// The app handles its session's events after transfer `task`; it runs until it calls
        /// the completion.
        case handlingEvents(task: Int)
    }

    /// One transfer in flight.
    public enum Transfer: Sendable, Hashable {
        /// An upload of `count` locations (``Simulation/uploadInBackground(_:)``).
        case upload(count: Int)
        /// A download in a background session.
        case download(Download)
    }

    /// A download in a background session: the session's identifier, and whether it wakes or
    /// relaunches the app when it finishes (`sessionSendsLaunchEvents`, true by default).
    public struct Download: Sendable, Hashable {
        public var session: String
        public var launchEvents: Bool

        public init(session: String, launchEvents: Bool) {
            self.session = session
            self.launchEvents = launchEvents
        }
    }

    /// How long transfers take, and how long the app has to handle their events.
    public struct Timing: Sendable, Hashable {
        /// From the app's request to the transfer's end.
        public var duration: Duration
        /// From a failure (no network) to the next try (at least a second).
        public var retryAfter: Duration
        /// The app's time to call its session events' completion.
        public var eventsBudget: Duration

        public init(duration: Duration, retryAfter: Duration, eventsBudget: Duration) {
            self.duration = duration
            self.retryAfter = retryAfter
            self.eventsBudget = eventsBudget
        }
    }

    /// The app and the device when an event is handled.
    public struct Situation: Sendable, Hashable {
        public var now: Duration
        public var app: AppState
        /// The app's code runs (it may start, cancel and handle transfers).
        public var appRuns: Bool
        /// The device's network is on.
        public var network: Bool

        public init(now: Duration, app: AppState, appRuns: Bool, network: Bool) {
            self.now = now
            self.app = app
            self.appRuns = appRuns
            self.network = network
        }
    }

    public enum Event: Sendable, Hashable {
        /// The app uploads `count` locations: the transfer's id is the next ``counter``.
        case upload(count: Int)
        /// The app starts a download in its background session: its id is the next ``counter``.
        case download(Download)
        /// Transfer `task`'s time is up.
        case due(task: Int)
        /// Upload `task` was written where it goes, or not (`failure`).
        case uploadWritten(task: Int, failure: String?)
        /// The network answered download `task` (`detail`: what it answered).
        case downloadReceived(task: Int, detail: String?)
        /// The app cancelled download `task` (`URLSessionTask.cancel()`).
        case cancelDownload(task: Int)
        /// The woken app is to handle its session's events after transfer `task`.
        case handleEvents(task: Int)
        /// The app called its session events' completion.
        case eventsHandled(task: Int)
        /// The app's time to handle its session's events is over.
        case eventsDeadlineDue
        /// The app's process ended; `byUser`: the user swiped it away.
        case appTerminated(byUser: Bool)
    }

    public let timing: Timing
    public private(set) var state: State = .idle
    /// The transfers not yet completed, by id.
    public private(set) var inFlight: [Int: Transfer] = [:]
    /// The last transfer's id.
    public private(set) var counter = 0

    public init(timing: Timing) { self.timing = timing }

    /// The uploads not yet completed, by id: how many locations each carries.
    public var transfers: [Int: Int] {
        inFlight.compactMapValues { if case .upload(let count) = $0 { count } else { nil } }
    }

    /// The downloads not yet completed, by id.
    public var downloads: [Int: Download] {
        inFlight.compactMapValues { if case .download(let d) = $0 { d } else { nil } }
    }

    public var eventsPending: Bool { if case .handlingEvents = state { true } else { false } }

    public mutating func handle(_ event: Event, in s: Situation) -> [DeviceAction] {
        switch event {
        case .upload(let count):
            guard s.appRuns, count > 0 else { return [] }
            let task = begin(.upload(count: count))
            return [
                .record(.transfer(action: .scheduled, task: task, count: count, reason: nil)),
                .schedule(.transferDone(task), at: s.now + max(.zero, timing.duration)),
            ]
        case .download(let download):
            guard s.appRuns else { return [] }
            let task = begin(.download(download))
            return [
                .record(.transfer(action: .scheduled, task: task, count: nil, reason: nil, session: download.session)),
                .schedule(.transferDone(task), at: s.now + max(.zero, timing.duration)),
            ]
        case .due(let task):
            switch inFlight[task] {
            case .download(let download):
                guard s.network else {
                    return [
                        .record(
                            .transfer(
                                action: .failed, task: task, count: nil, reason: .noNetwork, session: download.session)),
                        retry(task, s),
                    ]
                }
                return [.receiveDownload(task: task)]
            case .upload:
                guard s.network else { return uploadWritten(task, failure: nil, reason: .noNetwork, s) }
                return [.sendUpload(task: task)]
            case nil:
                return []
            }
        case .uploadWritten(let task, let failure):
            return uploadWritten(task, failure: failure, reason: nil, s)
        case .downloadReceived(let task, let detail):
            guard case .download(let download) = inFlight[task] else { return [] }
            inFlight[task] = nil
            let record = DeviceAction.record(
                .transfer(
                    action: .completed, task: task, count: nil, reason: nil, detail: detail, session: download.session))
            return [record] + (download.launchEvents ? wake(task, s) : [])
        case .cancelDownload(let task):
            guard s.appRuns, case .download(let download) = inFlight[task] else { return [] }
            inFlight[task] = nil
            return [
                .cancel(.transferDone(task)),
                .record(.transfer(action: .cancelled, task: task, count: nil, reason: .app, session: download.session)),
            ]
        case .handleEvents(let task):
            guard s.appRuns else { return [] }
            state = .handlingEvents(task: task)
            return [
                .schedule(.transferEventsDeadline, at: s.now + timing.eventsBudget),
                .call(.backgroundURLSessionEvents(task: task)),
            ]
        case .eventsHandled(let task):
            guard eventsPending else { return [] }
            state = .idle
            return [
                .cancel(.transferEventsDeadline),
                .record(.transfer(action: .eventsHandled, task: task, count: nil, reason: nil)),
            ]
        case .eventsDeadlineDue:
            guard case .handlingEvents(let task) = state else { return [] }
            state = .idle
            return [.record(.transfer(action: .eventsTimedOut, task: task, count: nil, reason: .budget))]
        case .appTerminated(let byUser):
            state = .idle
            guard byUser else { return [] }
            var actions: [DeviceAction] = []
            for (task, transfer) in inFlight.sorted(by: { $0.key < $1.key }) {
                actions.append(.cancel(.transferDone(task)))
                let count: Int?
                let session: String?
                switch transfer {
                case .upload(let n): (count, session) = (n, nil)
                case .download(let d): (count, session) = (nil, d.session)
                }
                actions.append(
                    .record(
                        .transfer(
                            action: .cancelled, task: task, count: count, reason: .userTerminated, session: session)))
            }
            inFlight = [:]
            return actions
        }
    }

    private mutating func begin(_ transfer: Transfer) -> Int {
        counter += 1
        inFlight[counter] = transfer
        return counter
    }

    private func retry(_ task: Int, _ s: Situation) -> DeviceAction {
        .schedule(.transferDone(task), at: s.now + max(.seconds(1), timing.retryAfter))
    }

    /// A suspended or terminated app is woken, or relaunched, to handle its session's events.
    private func wake(_ task: Int, _ s: Situation) -> [DeviceAction] {
        guard s.app == .suspended || s.app == .notRunning else { return [] }
        return [.post(.lifecycle(.wake(.urlSession))), .post(.handleURLSessionEvents(task: task))]
    }

    private mutating func uploadWritten(_ task: Int, failure: String?, reason: AuditReason?, _ s: Situation)
        -> [DeviceAction]
    {
        guard case .upload(let count) = inFlight[task] else { return [] }
        if failure != nil || reason != nil {
            return [
                .record(
                    .transfer(
                        action: .failed, task: task, count: count, reason: reason ?? .cannotWrite, detail: failure)),
                retry(task, s),
            ]
        }
        inFlight[task] = nil
        return [.record(.transfer(action: .completed, task: task, count: count, reason: nil))] + wake(task, s)
    }
}
