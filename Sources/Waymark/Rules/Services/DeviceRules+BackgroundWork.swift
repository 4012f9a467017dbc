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

    mutating func submitTaskRequest(_ request: TaskSchedulerStateMachine.Request) -> [DeviceAction] {
        guard appCodeRuns else {
            scheduler.lastSubmitError = .unavailable
            return []
        }
        guard version.major >= 13 else {
            // BGTaskScheduler arrived with iOS 13.
            scheduler.lastSubmitError = .unavailable
            return [
                .record(
                    .scheduledTask(
                        action: .rejected, kind: request.kind, identifier: request.identifier, success: nil,
                        reason: .needsIOS13))
            ]
        }
        var request = request
        if !scheduler.running.isEmpty {
            // Submitted from a running task (the usual resubmission): it runs no sooner than a
            // second later, so that a handler that resubmits at once cannot run for ever in one
            // instant (*assumption*: the system never runs it at once).
            request.earliestBegin = max(request.earliestBegin ?? now, now + .seconds(1))
        }
        scheduler.waitingReported[request.identifier] = nil
        if let error = scheduler.requests.submit(request, at: now, modes: modes, power: power.settings) {
            scheduler.lastSubmitError = error
            return [
                .record(
                    .scheduledTask(
                        action: .rejected, kind: request.kind, identifier: request.identifier, success: nil,
                        reason: error.auditReason))
            ]
        }
        scheduler.lastSubmitError = nil
        return [
            .record(
                .scheduledTask(
                    action: .submitted, kind: request.kind, identifier: request.identifier, success: nil,
                    reason: nil, earliestBegin: request.earliestBegin))
        ] + scheduleTaskCheck()
    }

    mutating func cancelTaskRequests(_ identifier: String?) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        var actions: [DeviceAction] = []
        for r in scheduler.requests.pendingRequests where identifier == nil || r.identifier == identifier {
            scheduler.waitingReported[r.identifier] = nil
            actions.append(
                .record(
                    .scheduledTask(
                        action: .cancelled, kind: r.kind, identifier: r.identifier, success: nil, reason: nil)))
        }
        scheduler.requests.cancel(identifier: identifier)
        return actions + scheduleTaskCheck()
    }

    /// Sets the timer for the next request to come due; requests already due that wait are
    /// checked again when what they wait for changes.
    func scheduleTaskCheck() -> [DeviceAction] {
        if scheduler.requests.pendingRequests.contains(where: { ($0.earliestBegin ?? .zero) <= now }) {
            return [.schedule(.taskRequestsDue, at: now)]
        } else if let next = scheduler.requests.nextDue(after: now) {
            return [.schedule(.taskRequestsDue, at: next)]
        } else {
            return [.cancel(.taskRequestsDue)]
        }
    }

    /// The timer fired: run what may run, say why the rest waits.
    mutating func taskRequestsDue() -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for (r, why) in scheduler.requests.waiting(
            at: now, app: appState, terminatedByUser: lifecycle.swipedAway, power: power.settings)
        where scheduler.waitingReported[r.identifier] != why {
            // Said once for each request and reason.
            scheduler.waitingReported[r.identifier] = why
            actions.append(
                .record(
                    .scheduledTask(action: .waiting, kind: r.kind, identifier: r.identifier, success: nil, reason: why))
            )
        }
        actions.append(.post(.runDueTasks))
        actions.append(.post(.scheduleNextTaskCheck))
        return actions
    }

    /// Runs the due requests that may run now (after the app left the screen, a setting changed).
    mutating func runDueTasks() -> [DeviceAction] {
        let runnable = scheduler.requests.takeRunnable(
            at: now, app: appState, terminatedByUser: lifecycle.swipedAway, power: power.settings)
        return runnable.map { .post(.startScheduledTask($0)) }
    }

    /// A due request runs: the app is woken or launched for it, and its launch handler runs.
    mutating func startScheduledTask(_ request: TaskSchedulerStateMachine.Request) -> [DeviceAction] {
        scheduler.waitingReported[request.identifier] = nil
        var actions: [DeviceAction] = []
        if appState == .suspended || appState == .notRunning {
            actions.append(.post(.lifecycle(.wake(request.kind.wakeCause))))
        }
        actions.append(.post(.launchScheduledTask(request)))
        return actions
    }

    /// The launch handler runs, if the app registered one in this process.
    mutating func launchScheduledTask(_ request: TaskSchedulerStateMachine.Request) -> [DeviceAction] {
        guard appCodeRuns, scheduler.registered.contains(request.identifier) else {
            return [
                .record(
                    .scheduledTask(
                        action: .dropped, kind: request.kind, identifier: request.identifier, success: nil,
                        reason: .notRegistered))
            ]
        }
        let id = scheduler.nextID()
        scheduler.running[id] = .init(identifier: request.identifier, kind: request.kind)
        let budget = request.kind == .appRefresh ? system.appRefreshBudget : system.processingBudget
        return armTaskTimers(id, budget: budget) + [
            .record(
                .scheduledTask(
                    action: .began, kind: request.kind, identifier: request.identifier, success: nil, reason: nil)),
            .call(.scheduledTaskLaunch(id: id, identifier: request.identifier, kind: request.kind)),
        ]
    }

    mutating func completeTask(_ id: Int, success: Bool, _ note: AppNote?) -> [DeviceAction] {
        guard let task = scheduler.running.removeValue(forKey: id) else { return [] }
        return [
            .cancel(.scheduledTaskDeadline(id)), .cancel(.scheduledTaskWarning(id)),
            .record(
                .scheduledTask(
                    action: .completed, kind: task.kind, identifier: task.identifier, success: success, reason: nil,
                    detail: note?.note)),
            .call(.scheduledTaskEnded(id: id)),
        ]
    }

    /// Sets a task's two timers: the expiration handler `expirationWarning` before the end of its
    /// time ("called before the background process uses the full amount of its allocated time"),
    /// and the end.
    func armTaskTimers(_ id: Int, budget: Duration) -> [DeviceAction] {
        let warning = max(.zero, budget - system.expirationWarning)
        return [
            .schedule(.scheduledTaskWarning(id), at: now + warning),
            .schedule(.scheduledTaskDeadline(id), at: now + budget),
        ]
    }

    /// The task's time is nearly over: its expiration handler runs ("Not setting an expiration
    /// handler results in the system marking your task as complete and unsuccessful": the driver
    /// completes it when there is none).
    mutating func scheduledTaskWarningDue(_ id: Int, reason: AuditReason? = nil) -> [DeviceAction] {
        guard let task = scheduler.running[id] else { return [] }
        return [
            .record(
                .scheduledTask(
                    action: .expiring, kind: task.kind, identifier: task.identifier, success: nil, reason: reason)),
            .call(.scheduledTaskExpiration(id: id)),
        ]
    }

    /// The task's time is over: still not completed, the app is terminated ("Not calling
    /// setTaskCompleted(success:) before the time for the task expires may result in the system
    /// killing your app").
    mutating func scheduledTaskDeadlinePassed(_ id: Int) -> [DeviceAction] {
        guard let task = scheduler.running[id] else { return [] }
        return [
            .record(
                .scheduledTask(
                    action: .expired, kind: task.kind, identifier: task.identifier, success: nil, reason: .budget)),
            .post(.lifecycle(.terminate(.scheduledTaskExpired))),
        ]
    }

    // MARK: - Background URL session

    /// The app uploads through its background URL session: the transfer goes on while the app
    /// is suspended or terminated by the system. Its id is ``TransferStateMachine/counter``.
    mutating func upload(count: Int) -> [DeviceAction] {
        guard appCodeRuns, count > 0 else { return [] }
        let task = transfers.nextID()
        transfers.transfers[task] = count
        return [
            .record(.transfer(action: .scheduled, task: task, count: count, reason: nil)),
            .schedule(.transferDone(task), at: now + max(.zero, system.transferDuration)),
        ]
    }

    /// The app starts a download in its background session: "a separate process handles all
    /// data transfers", so the download goes on while the app is suspended or terminated by the
    /// system (`URLSessionConfiguration.background(withIdentifier:)`). Its id is
    /// ``TransferStateMachine/counter``.
    mutating func download(session: String, launchEvents: Bool) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        let task = transfers.nextID()
        transfers.downloads[task] = .init(session: session, launchEvents: launchEvents)
        return [
            .record(.transfer(action: .scheduled, task: task, count: nil, reason: nil, session: session)),
            .schedule(.transferDone(task), at: now + max(.zero, system.transferDuration)),
        ]
    }

    /// The network answered a download: it is complete, and the app hears of it. Running, its
    /// session's delegate is told at once (the driver); suspended or not running, "when a
    /// background transfer completes … if your app is no longer running, your app is
    /// automatically relaunched in the background, and the app's UIApplicationDelegate is sent an
    /// application(_:handleEventsForBackgroundURLSession:completionHandler:) message"
    /// (`urlSessionDidFinishEvents(forBackgroundURLSession:)`), unless the session's
    /// `sessionSendsLaunchEvents` is false: then its events wait for the app to run.
    mutating func downloadReceived(_ id: Int, detail: String?) -> [DeviceAction] {
        guard let download = transfers.downloads.removeValue(forKey: id) else { return [] }
        var actions: [DeviceAction] = [
            .record(
                .transfer(
                    action: .completed, task: id, count: nil, reason: nil, detail: detail, session: download.session))
        ]
        switch appState {
        case .suspended, .notRunning:
            guard download.launchEvents else { break }
            actions.append(.post(.lifecycle(.wake(.urlSession))))
            actions.append(.post(.handleURLSessionEvents(task: id)))
        default:
            break
        }
        return actions
    }

    /// The app cancelled a download (`URLSessionTask.cancel()`): it ends, and its timer with it.
    mutating func cancelDownload(_ id: Int) -> [DeviceAction] {
        guard appCodeRuns, let download = transfers.downloads.removeValue(forKey: id) else { return [] }
        return [
            .cancel(.transferDone(id)),
            .record(.transfer(action: .cancelled, task: id, count: nil, reason: .app, session: download.session)),
        ]
    }

    /// A transfer's time is up: without a network it fails and is retried, else it goes out (an
    /// upload) or comes in (a download).
    mutating func transferDue(_ id: Int) -> [DeviceAction] {
        if let download = transfers.downloads[id] {
            guard power.settings.network else {
                return [
                    .record(
                        .transfer(
                            action: .failed, task: id, count: nil, reason: .noNetwork, session: download.session)),
                    .schedule(.transferDone(id), at: now + max(.seconds(1), system.transferRetryAfter)),
                ]
            }
            return [.receiveDownload(task: id)]
        }
        guard transfers.transfers[id] != nil else { return [] }
        guard power.settings.network else { return uploadWritten(id, failure: nil, reason: .noNetwork) }
        return [.sendUpload(task: id)]
    }

    mutating func uploadWritten(_ id: Int, failure: String?, reason: AuditReason? = nil) -> [DeviceAction] {
        guard let count = transfers.transfers[id] else { return [] }
        if failure != nil || reason != nil {
            return [
                .record(
                    .transfer(action: .failed, task: id, count: count, reason: reason ?? .cannotWrite, detail: failure)),
                .schedule(.transferDone(id), at: now + max(.seconds(1), system.transferRetryAfter)),
            ]
        }
        transfers.transfers[id] = nil
        var actions: [DeviceAction] = [.record(.transfer(action: .completed, task: id, count: count, reason: nil))]
        // "When a background transfer completes … if your app is no longer running, your app is
        // automatically relaunched in the background."
        switch appState {
        case .suspended, .notRunning:
            actions.append(.post(.lifecycle(.wake(.urlSession))))
            actions.append(.post(.handleURLSessionEvents(task: id)))
        default:
            break
        }
        return actions
    }

    /// The woken app handles its session's events: it has about 30 s, as for a push, to call the
    /// completion (*assumption*).
    mutating func handleURLSessionEvents(task: Int) -> [DeviceAction] {
        guard appCodeRuns else { return [] }
        transfers.handleEvents(task: task)
        return [
            .schedule(.transferEventsDeadline, at: now + system.pushBudget),
            .call(.backgroundURLSessionEvents(task: task)),
        ]
    }

    mutating func urlSessionEventsHandled(_ task: Int) -> [DeviceAction] {
        guard transfers.eventsPending else { return [] }
        transfers.eventsDone()
        return [
            .cancel(.transferEventsDeadline),
            .record(.transfer(action: .eventsHandled, task: task, count: nil, reason: nil)),
        ]
    }

    /// The app did not say it handled its session's events in time: it may be suspended.
    mutating func transferEventsTimedOut() -> [DeviceAction] {
        guard case .handlingEvents = transfers.state else { return [] }
        transfers.eventsDone()
        return [.record(.transfer(action: .eventsTimedOut, task: transfers.counter, count: nil, reason: .budget))]
    }

    // MARK: - When the app stops running

    /// What a launch or a wake leaves behind when the app stops running: events still waiting
    /// are dropped; a termination ends the services' hold on the app, its handlers, its tasks and
    /// its sessions.
    mutating func servicesAppStopped(terminated: TerminationCause?) -> [DeviceAction] {
        let why: AuditReason = terminated == nil ? .suspended : .terminated
        var actions: [DeviceAction] = []
        for item in serviceEvents.waiting { actions += record(item.event, decision: .dropped, reason: why) }
        serviceEvents.waiting = []
        serviceEvents.wakeUntil = nil
        actions.append(.cancel(.serviceWakeEnd))
        actions += audio.stop(why)
        guard let terminated else { return actions }
        serviceEvents.significantChangesListening = false
        actions += sessionsAppTerminated()
        actions += pushes.handle(.appTerminated)
        for (id, task) in scheduler.running.sorted(by: { $0.key < $1.key }) {
            actions.append(.cancel(.scheduledTaskDeadline(id)))
            actions.append(.cancel(.scheduledTaskWarning(id)))
            actions.append(
                .record(
                    .scheduledTask(
                        action: .ended, kind: task.kind, identifier: task.identifier, success: nil, reason: .terminated)
                ))
        }
        scheduler.running = [:]
        scheduler.registered = []
        actions += locationRequest.handle(.appTerminated)
        transfers.eventsDone()
        if terminated == .user {
            // "If the user terminates the app from the multitasking screen, the system cancels all
            // of the session's background transfers."
            for id in Set(transfers.transfers.keys).union(transfers.downloads.keys).sorted() {
                actions.append(.cancel(.transferDone(id)))
                actions.append(
                    .record(
                        .transfer(
                            action: .cancelled, task: id, count: transfers.transfers[id], reason: .userTerminated,
                            session: transfers.downloads[id]?.session)))
            }
            transfers.transfers = [:]
            transfers.downloads = [:]
        }
        return actions
    }
}
