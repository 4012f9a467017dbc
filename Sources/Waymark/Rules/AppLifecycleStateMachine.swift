/// Why the app's state changed: a stable camelCase word for the audit log.
public enum LifecycleCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user launched the app from the home screen.
    case userLaunch
    /// The user opened the running app.
    case userOpened
    /// The user left the app (home screen, another app).
    case userLeft
    /// A suspended app runs again on its way to the foreground.
    case resumed
    /// Something covered the app (Control Center, a call).
    case interrupted
    case interruptionEnded
    /// A system alert (a permission prompt) covers the app.
    case alertShown
    /// The alert was answered or dismissed.
    case alertDismissed
    /// Nothing keeps the backgrounded app running.
    case idle
    /// The system woke or launched the app for background fetch.
    case backgroundFetch
    /// The significant-change location service woke or launched the app.
    case significantLocationChange
    /// A region event woke or launched the app.
    case region
    /// A visit woke or launched the app.
    case visit
    /// A background push notification woke or launched the app.
    case remoteNotification
    /// A `BGAppRefreshTaskRequest` woke or launched the app.
    case backgroundAppRefresh
    /// A `BGProcessingTaskRequest` woke or launched the app.
    case backgroundProcessing
    /// A background URL session's events woke or launched the app.
    case urlSession
    // Terminations (see ``TerminationCause``).
    case user
    case watchdog
    case fetchBudgetExceeded
    case fatalError
    case remoteNotificationBudgetExceeded
    case scheduledTaskExpired
    case system
}

/// Why an app stopped running.
public enum TerminationCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user swiped it away in the app switcher.
    case user
    /// A background task outlived its budget.
    case watchdog
    /// A background fetch outlived its 30 s.
    case fetchBudgetExceeded
    /// A fatal error in the app, as when `allowsBackgroundLocationUpdates` is set without the
    /// `location` background mode ("a fatal error that terminates the app").
    case fatalError
    /// A background push's handler did not call its completion within 30 s.
    case remoteNotificationBudgetExceeded
    /// A `BGTask` was still not completed when its time ran out and its expiration handler had
    /// run.
    case scheduledTaskExpired
    /// The system ended the app to reclaim memory (while it was suspended or in the background).
    /// Unlike a swipe, it leaves the app to be relaunched by every service.
    case system

    var lifecycleCause: LifecycleCause {
        switch self {
        case .user: .user
        case .watchdog: .watchdog
        case .fetchBudgetExceeded: .fetchBudgetExceeded
        case .fatalError: .fatalError
        case .remoteNotificationBudgetExceeded: .remoteNotificationBudgetExceeded
        case .scheduledTaskExpired: .scheduledTaskExpired
        case .system: .system
        }
    }
}

/// The app's life, as UIKit runs it: a pure state machine.
///
/// It holds no clock and does no I/O. The owner feeds it events and carries out the actions it
/// returns, in order: record a state change, run the app's launch or background code, set or
/// cancel the grace-period timer. The rules:
///
/// - A launch from the home screen goes notRunning → inactive (the app finishes launching) →
///   active. A background launch (a service woke it) goes straight to background.
/// - Something covering the app (an interruption, a system alert) makes it inactive until the
///   last of them goes away.
/// - Leaving the app goes to background and starts the grace period, a few seconds in which the
///   app still runs and still counts as in use.
/// - A backgrounded app that nothing keeps running (the owner says so with ``Event/idle``) is
///   suspended once the grace period is over.
/// - A suspended app is woken into the background by a service, or resumed on its way to the
///   foreground. Termination ends everything, with a cause.
public struct AppLifecycleStateMachine: Sendable, Hashable {
    /// What covers an app that is on screen but inactive.
    public struct Obscured: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let interruption = Obscured(rawValue: 1)
        public static let alert = Obscured(rawValue: 2)
    }

    public enum State: Sendable, Hashable {
        /// Never launched, or terminated (with the cause).
        case notRunning(terminated: TerminationCause?)
        /// On screen: active when nothing covers it.
        case foreground(obscured: Obscured)
        /// Running off screen; in the grace period for a few seconds after the user left.
        case background(inGracePeriod: Bool)
        case suspended
    }

    public enum Event: Sendable, Hashable {
        /// The system launches the app: from the home screen, or into the background.
        case launch(inBackground: Bool, cause: LifecycleCause)
        /// The user opens the app (launching it if it is not running).
        case open
        /// The user leaves the app.
        case leave
        case interrupt
        case endInterruption
        /// A system alert covers the app.
        case showAlert
        /// The alert went away.
        case dismissAlert
        case gracePeriodEnded
        /// Nothing else keeps the app running: a backgrounded app past its grace period suspends.
        case idle
        /// A service wakes a suspended app into the background.
        case wake(WakeCause)
        case terminate(TerminationCause)
    }

    /// What one step of a transition does, before it is said in the device's actions.
    private enum Step: Sendable, Hashable {
        case stateChanged(from: AppState, to: AppState, cause: LifecycleCause)
        case finishLaunching(inBackground: Bool, cause: LifecycleCause)
        case becameActive
        case willEnterForeground
        case enteredBackground
        case startGracePeriod
        case cancelGracePeriod
        case suspended
        case terminated(TerminationCause)
    }

    /// How long a backgrounded app runs before it may be suspended.
    public let gracePeriod: Duration
    public private(set) var state: State = .notRunning(terminated: nil)
    /// The state the app last saw (the audit log's): a termination that cuts a transition short
    /// leaves the step it never reached unreported.
    public private(set) var reported = AppState.notRunning
    /// Why the app was launched this time (nil before the first launch).
    public private(set) var launchCause: LifecycleCause?
    /// The user swiped the app away and has not launched it since (a launch by a service does
    /// not count: "the user must relaunch your app").
    public private(set) var swipedAway = false

    public init(gracePeriod: Duration) { self.gracePeriod = gracePeriod }

    /// A machine in `state`, which the app saw (for tests of every transition).
    init(gracePeriod: Duration, state: State) {
        self.gracePeriod = gracePeriod
        self.state = state
        self.reported = appState
    }

    /// The state as UIKit names it.
    public var appState: AppState {
        switch state {
        case .notRunning: .notRunning
        case .foreground(let obscured): obscured.isEmpty ? .active : .inactive
        case .background: .background
        case .suspended: .suspended
        }
    }

    /// On screen, or in the grace period after leaving it: the app is in use by itself (a
    /// background location session showing the indicator also counts, which the owner adds).
    public var isInUse: Bool {
        switch state {
        case .foreground, .background(inGracePeriod: true): true
        default: false
        }
    }

    /// Whether the app's code can run (neither suspended nor terminated).
    public var isRunning: Bool {
        switch state {
        case .foreground, .background: true
        case .notRunning, .suspended: false
        }
    }

    /// Whether the user swiped the app away (and it has not been launched since).
    public var wasTerminatedByUser: Bool { state == .notRunning(terminated: .user) }

    /// Applies one event at `now` and returns its transition, step by step, in the device's
    /// actions. The owner carries the steps out in order and drops those left when a termination
    /// comes (the app's code stopped running), so a step the app never reached goes unreported.
    /// A state change is handed on (``DeviceEvent/appStateChanged(from:to:cause:)``): it is
    /// recorded, and what other rules do about it decided, when it is carried out.
    public mutating func handle(_ event: Event, at now: Duration) -> [[DeviceAction]] {
        let wasRunning = [.active, .inactive, .background].contains(reported)
        return steps(event).map { actions(for: $0, at: now, wasRunning: wasRunning) }
    }

    /// One step in the device's actions.
    private func actions(for step: Step, at now: Duration, wasRunning: Bool) -> [DeviceAction] {
        switch step {
        case .stateChanged(let from, let to, let cause):
            return (from == .active && to == .inactive ? [.call(.willResignActive)] : [])
                + [.post(.appStateChanged(from: from, to: to, cause: cause))]
        case .finishLaunching(let inBackground, let cause):
            return [
                .post(.appLaunched(inBackground: inBackground)),
                .call(.finishLaunching(inBackground: inBackground, cause: cause)),
                .post(.launchFinished),
            ]
        case .becameActive:
            // "If the user launches the app, the system immediately delivers the held
            // notification."
            return [
                .post(.appBecameActive), .call(.becomeActive), .post(.askForServiceSessionAuthorization),
                .post(.deliverHeldPush),
            ]
        case .willEnterForeground:
            return [.post(.appWillEnterForeground), .call(.willEnterForeground)]
        case .enteredBackground:
            return [
                .post(.alertDismissedOnLeaving), .post(.tasksEnteredBackground), .call(.didEnterBackground),
                .post(.appEnteredBackground),
            ]
        case .startGracePeriod:
            return [.schedule(.gracePeriodEnd, at: now + gracePeriod)]
        case .cancelGracePeriod:
            return [.cancel(.gracePeriodEnd)]
        case .suspended:
            return [.post(.appSuspended)]
        case .terminated(let cause):
            // A running app hears it is terminated; a suspended one gets no notice.
            return (wasRunning ? [.call(.willTerminate)] : [])
                + [.post(.alertDismissedOnLeaving), .post(.appTerminated(cause)), .call(.terminated(cause))]
        }
    }

    private mutating func steps(_ event: Event) -> [Step] {
        var actions: [Step] = []
        switch (event, state) {
        case (.launch(let inBackground, let cause), .notRunning):
            if inBackground {
                move(to: .background(inGracePeriod: false), cause, &actions)
                actions.append(.finishLaunching(inBackground: true, cause: cause))
            } else {
                move(to: .foreground(obscured: .interruption), cause, &actions)
                actions.append(.finishLaunching(inBackground: false, cause: cause))
                move(to: .foreground(obscured: []), cause, &actions)
                actions.append(.becameActive)
            }
        case (.launch, _):
            break

        case (.open, .notRunning):
            return steps(.launch(inBackground: false, cause: .userLaunch))
        case (.open, .suspended):
            move(to: .background(inGracePeriod: false), .resumed, &actions)
            fallthrough
        case (.open, .background):
            if case .background(true) = state { actions.append(.cancelGracePeriod) }
            actions.append(.willEnterForeground)
            move(to: .foreground(obscured: .interruption), .userOpened, &actions)
            move(to: .foreground(obscured: []), .userOpened, &actions)
            actions.append(.becameActive)
        case (.open, .foreground(let obscured)):
            // Opening an app on screen ends an interruption, not an alert.
            let rest = obscured.subtracting(.interruption)
            if rest != obscured {
                move(to: .foreground(obscured: rest), .userOpened, &actions)
                if rest.isEmpty { actions.append(.becameActive) }
            }

        case (.leave, .foreground(let obscured)):
            if obscured.isEmpty { move(to: .foreground(obscured: .interruption), .userLeft, &actions) }
            move(to: .background(inGracePeriod: true), .userLeft, &actions)
            actions.append(.startGracePeriod)
            actions.append(.enteredBackground)
        case (.leave, _):
            break

        case (.interrupt, .foreground(let obscured)):
            obscure(obscured.union(.interruption), from: obscured, .interrupted, &actions)
        case (.endInterruption, .foreground(let obscured)):
            obscure(obscured.subtracting(.interruption), from: obscured, .interruptionEnded, &actions)
        case (.showAlert, .foreground(let obscured)):
            obscure(obscured.union(.alert), from: obscured, .alertShown, &actions)
        case (.dismissAlert, .foreground(let obscured)):
            obscure(obscured.subtracting(.alert), from: obscured, .alertDismissed, &actions)
        case (.interrupt, _), (.endInterruption, _), (.showAlert, _), (.dismissAlert, _):
            break

        case (.gracePeriodEnded, .background(inGracePeriod: true)):
            state = .background(inGracePeriod: false)
        case (.gracePeriodEnded, _):
            break

        case (.idle, .background(inGracePeriod: false)):
            move(to: .suspended, .idle, &actions)
            actions.append(.suspended)
        case (.idle, _):
            break

        case (.wake(let cause), .suspended):
            move(to: .background(inGracePeriod: false), Self.cause(cause), &actions)
        case (.wake(let cause), .notRunning):
            return steps(.launch(inBackground: true, cause: Self.cause(cause)))
        case (.wake, _):
            break

        case (.terminate(.user), .notRunning(let earlier)) where earlier != nil && earlier != .user:
            // The system ended it, but it stays in the app switcher: the user can still swipe it
            // away, with the same effect on what may relaunch it.
            state = .notRunning(terminated: .user)
        case (.terminate, .notRunning):
            break
        case (.terminate(let cause), _):
            if case .background(true) = state { actions.append(.cancelGracePeriod) }
            move(to: .notRunning(terminated: cause), cause.lifecycleCause, &actions)
            actions.append(.terminated(cause))
        }
        return actions
    }

    /// The owner carried out a state change: it is what the app last saw.
    mutating func report(_ to: AppState, from: AppState, cause: LifecycleCause) {
        reported = to
        if from == .notRunning {
            launchCause = cause
            if cause == .userLaunch { swipedAway = false }
        }
        if to == .notRunning && cause == .user { swipedAway = true }
    }

    /// The user swiped away, in the app switcher, an app the system had ended (no state change
    /// to report): from now it counts as swiped away, as after the swipe of a running app. True
    /// when that is new.
    mutating func swipedWhileNotRunning() -> Bool {
        guard wasTerminatedByUser && !swipedAway else { return false }
        swipedAway = true
        return true
    }

    /// Every wake cause is a lifecycle cause of the same name (a test checks the two lists agree).
    static func cause(_ wake: WakeCause) -> LifecycleCause { LifecycleCause(rawValue: wake.rawValue)! }

    private mutating func obscure(
        _ new: Obscured, from old: Obscured, _ cause: LifecycleCause, _ actions: inout [Step]
    ) {
        guard new != old else { return }
        move(to: .foreground(obscured: new), cause, &actions)
        if new.isEmpty { actions.append(.becameActive) }
    }

    private mutating func move(to new: State, _ cause: LifecycleCause, _ actions: inout [Step]) {
        let before = appState
        state = new
        if appState != before { actions.append(.stateChanged(from: before, to: appState, cause: cause)) }
    }
}
