/// Background work: `UIApplication`'s background tasks (``BackgroundTaskStateMachine``),
/// background fetch (``BackgroundFetchStateMachine``), background pushes (``PushStateMachine``),
/// `BGTaskScheduler` (``ScheduledTaskStateMachine``) and the background URL session
/// (``TransferStateMachine``).
extension DeviceRules {
    // MARK: - UIApplication's background tasks

    /// `beginBackgroundTask`.
    mutating func beginBackgroundTask(name: String) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        return tasks.handle(.begin(name: name, at: now))
    }

    // MARK: - Background fetch

    // MARK: - Background pushes

    /// A push notification arrives (``PushStateMachine``); where a background push goes is
    /// ``ServiceDelivery/push(_:)``'s to say.
    mutating func receivePush(contentAvailable: Bool) -> [DeviceAction] {
        pushes.handle(
            .receive(
                contentAvailable: contentAvailable, ServiceDelivery.push(serviceContext()),
                inForeground: appState.isForeground, at: now))
    }

    // MARK: - BGTaskScheduler

    /// `BGTaskScheduler` (``ScheduledTaskStateMachine``) hears `event`.
    mutating func scheduledTasks(_ event: ScheduledTaskStateMachine.Event) -> [DeviceAction] {
        scheduler.handle(
            event,
            in: .init(
                now: now, app: appState, appRuns: appCodeRuns, terminatedByUser: lifecycle.swipedAway,
                power: power.settings))
    }

    // MARK: - Background URL session

    /// The app's background URL session (``TransferStateMachine``) hears `event`.
    mutating func transfer(_ event: TransferStateMachine.Event) -> [DeviceAction] {
        transfers.handle(
            event, in: .init(now: now, app: appState, appRuns: appCodeRuns, network: power.settings.network))
    }

    // MARK: - When the app stops running

    /// What a launch or a wake leaves behind when the app stops running: events still waiting
    /// are dropped; a termination ends the services' hold on the app, its handlers, its tasks and
    /// its sessions.
    mutating func servicesAppStopped(terminated: TerminationCause?) -> [DeviceAction] {
        var actions = serviceEvent(.appStopped(terminated: terminated != nil))
        actions += audio.stop(terminated == nil ? .suspended : .terminated)
        guard let terminated else { return actions }
        actions += sessionsAppTerminated()
        actions += pushes.handle(.appTerminated)
        actions += scheduledTasks(.appTerminated)
        actions += transfer(.appTerminated(byUser: terminated == .user))
        return actions
    }
}
