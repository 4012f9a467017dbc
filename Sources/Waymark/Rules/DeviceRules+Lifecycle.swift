/// The app's life (``AppLifecycleStateMachine``) and what follows each of its steps: the app's
/// code it runs, and the other rules it moves.
extension DeviceRules {
    /// The lifecycle machine's transition for `event`, step by step. The driver carries each step
    /// out, and stops once a termination waits (the app's code stopped running).
    public mutating func lifecycleSteps(_ event: AppLifecycleStateMachine.Event) -> [[DeviceAction]] {
        lifecycle.handle(event, at: now)
    }

    /// The app's state changed, as the app sees it: recorded (from the state it last saw: when a
    /// termination cut a transition short, the step it never reached is not reported), and what
    /// the other rules do about it.
    mutating func appStateChanged(from: AppState, to: AppState, cause: LifecycleCause) -> [DeviceAction] {
        var actions: [DeviceAction] = [.record(.stateChanged(from: lifecycle.reported, to: to, cause: cause))]
        lifecycle.report(to, from: from, cause: cause)
        if to == .notRunning || (to == .background && (from == .notRunning || from == .suspended)) {
            // What the app's state kept from running may run now (after the current step).
            actions += scheduledTasks(.lookAgain)
        }
        if from == .suspended && to == .background {
            // A resume on the way to the foreground hands held fixes over once the app is
            // active; a service's wake hands them over at once.
            if cause == .resumed {
                actions += resumedForForeground()
            } else {
                actions.append(.post(.appResumed(cause)))
            }
            actions += authorization.handle(.resumed)
        }
        return actions
    }

    /// A new process: the background tasks' rules learn of it, the manager's creation is
    /// recorded (the app's code creates its manager at launch).
    mutating func appLaunched(inBackground: Bool) -> [DeviceAction] {
        tasks.handle(.launched(inBackground: inBackground, at: now))
            + [
                .record(
                    .managerCreated(
                        authorization: authorization.status, reported: version.reportsAuthorizationAtManagerCreation))
            ]
    }

    /// The app's launch code has run: from iOS 14 the delegate hears the authorization of the
    /// manager it created; what waited for the launch is handed over.
    mutating func launchFinished() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        if version.reportsAuthorizationAtManagerCreation && appCodeRuns {
            actions.append(.call(.delegate(.didChangeAuthorization, to: .all)))
        }
        actions.append(.post(.deliverPendingServiceEvents(nil)))
        return actions
    }

    /// The app comes on screen: the budgets of a push's handler and of an app-refresh task stop
    /// running (no watchdog on screen), running processing tasks end ("The system terminates any
    /// background processing tasks running when the user starts using the device"), the
    /// background tasks' budget stops, and updates count as started in use.
    mutating func appWillEnterForeground() -> [DeviceAction] {
        var actions = pushes.handle(.enteredForeground)
        actions += scheduledTasks(.enteredForeground)
        actions.append(.post(.tasksEnteredForeground))
        actions.append(.post(.location(.appEnteredForeground)))
        return actions
    }

    /// The app left the screen (after its `didEnterBackground` ran): fetch may wake it later,
    /// handlers and tasks still running get their budgets afresh, and due `BGTask`s may run.
    mutating func appEnteredBackground() -> [DeviceAction] {
        var actions = fetch.handle(.appEnteredBackground(at: now))
        actions += pushes.handle(.enteredBackground(at: now))
        actions += scheduledTasks(.enteredBackground)
        actions.append(.post(.runDueTasks))
        return actions
    }

    /// The app's process ended: its fixes, tasks, fetch, services and sessions end with it.
    mutating func appTerminated(_ cause: TerminationCause) -> [DeviceAction] {
        var actions: [DeviceAction] = authorization.handle(.appTerminated) + [.record(.terminated(reason: cause))]
        actions += endManagers()
        actions += tasks.handle(.appTerminated)
        actions += fetch.handle(.appTerminated(at: now))
        actions += servicesAppStopped(terminated: cause)
        return actions
    }

    /// The user swiped away an app that was not running (the system had ended it): the same
    /// effect on what may relaunch it as a swipe of a running app.
    mutating func swipedAway(wasRunning: Bool) -> [DeviceAction] {
        guard !wasRunning && lifecycle.swipedWhileNotRunning() else { return [] }
        return servicesAppStopped(terminated: .user)
    }
}
