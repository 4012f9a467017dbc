#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The driver's one job: carrying out what the rules return, in order.
extension Simulation {
    /// Carries out `actions`, in order.
    func perform(_ actions: [DeviceAction]) {
        for action in actions { carryOut(action) }
    }

    /// Carries out one action; `arrivals` when it decides a fix from the source, which the counts
    /// take as an arrival (the rest are held fixes delivered later).
    func carryOut(_ action: DeviceAction, arrivals: Bool = false) {
        switch action {
        case .record(let kind): record(kind)
        case .schedule(let key, let time): timers.schedule(key, at: time)
        case .cancel(let key): timers.cancel(key)
        case .post(let event): post(event)
        case .call(let call): run(call)
        case .decided(let outcome): fixDecided(outcome, arrival: arrivals, facts: rules.currentFixFacts())
        case .deliver(let count, let reason, let manager): deliver(count: count, reason: reason, manager: manager)
        case .sendUpload(let task): sendUpload(task)
        case .receiveDownload(let task): receiveDownload(task)
        }
    }

    /// Hands an event to the rules now; lifecycle events go through the lifecycle queue.
    func post(_ event: DeviceEvent) {
        if case .lifecycle(let lifecycle) = event {
            lifecycleEvent(lifecycle)
        } else {
            perform(rules.handle(event))
        }
    }

    /// Feeds the lifecycle machine. Events raised while its actions run (a prompt from the app's
    /// launch code, a termination) wait for those actions to finish; a termination drops the
    /// rest of them (the app's code stopped running).
    func lifecycleEvent(_ event: AppLifecycleStateMachine.Event) {
        lifecycleQueue.events.append(event)
        rules.terminationPending = lifecycleQueue.terminationPending
        guard !lifecycleQueue.running else { return }
        lifecycleQueue.running = true
        defer { lifecycleQueue.running = false }
        while !lifecycleQueue.events.isEmpty {
            let next = lifecycleQueue.events.removeFirst()
            rules.terminationPending = lifecycleQueue.terminationPending
            for step in rules.lifecycleSteps(next) {
                if lifecycleQueue.terminationPending { break }
                perform(step)
            }
        }
        rules.terminationPending = false
    }

    /// After every step: the rules' in-use rule and suspension, and the creation callbacks of the
    /// managers the app's code created during the step.
    func settle() {
        reportCreatedManagers()
        while let step = rules.settleStep() {
            switch step {
            case .noLongerInUse(let actions):
                perform(actions)
            case .idle:
                let before = appState
                lifecycleEvent(.idle)
                if appState == before { return }
            }
        }
    }

    /// Writes an audit event to the observers, at the current time.
    func record(_ kind: AuditEvent.Kind) {
        if case .heldDiscarded(let count, _, 1) = kind { summary.discardedHeld += count }
        guard !observers.isEmpty else { return }
        tell(AuditEvent(offset: now, kind: kind))
    }

    /// Hands `event` to the observers.
    func tell(_ event: AuditEvent) {
        // By index: observers are only ever added, and an observer added by another's call hears
        // the next event, as when the array is iterated.
        for i in observers.indices { observers[i].simulation(self, didRecord: event) }
    }

    // MARK: - Fixes and deliveries

    /// One fix decided: counted, kept for the hand-over when delivered, and recorded with
    /// `facts`, the app's state and authorization now. The outcome is given up: its parts go
    /// into the record as they are, not copied.
    func fixDecided(_ o: consuming LocationServiceStateMachine.Outcome, arrival: Bool, facts: DeviceRules.FixFacts) {
        let appState = facts.appState
        if let delivered = o.delivered, o.decision == .delivered {
            let update = LocationUpdate(
                location: delivered, appState: appState, reason: o.reason, index: o.index, segment: o.segment)
            if o.manager == 1 {
                buffers.pending.append(update)
            } else {
                buffers.others[o.manager, default: []].append(update)
            }
        }
        if o.manager == 1 {
            if arrival {
                summary.count(o.decision, o.reason, appState)
            } else if o.decision == .delivered {
                summary.resumedDeliveries += 1
            }
        }
        guard hasObservers else { return }
        // The record lent to each observer (which makes it the `fix` event, unless it reads
        // records itself): no event is made and destroyed for each fix.
        let record = AuditEvent.FixRecord(
            index: o.index, segment: o.segment, decision: o.decision, reason: o.reason, appState: appState,
            authorization: facts.authorization, accuracy: facts.accuracy,
            coordinate: o.coordinate, delivered: o.delivered.take(),
            backgroundTimeRemaining: facts.backgroundTimeRemaining, indicator: o.indicator,
            positioning: o.positioning, manager: o.manager, degradation: o.degradation.take())
        let offset = now
        // By index, as in ``tell(_:)``.
        for i in observers.indices { observers[i].simulation(self, didDecide: record, at: offset) }
    }

    /// Calls the manager's delegate once with the last `count` locations decided as delivered
    /// to it. The buffers are reused from fix to fix (and taken out while the app's code runs,
    /// which may start another delivery).
    func deliver(count: Int, reason: FixReason, manager number: Int) {
        var updates: [LocationUpdate] = []
        swap(&updates, &buffers.spare)
        updates.empty()
        if number == 1 {
            if count == buffers.pending.count {
                swap(&updates, &buffers.pending)
            } else {
                updates.append(contentsOf: buffers.pending.suffix(count))
                buffers.pending.empty()
            }
        } else {
            updates.append(contentsOf: (buffers.others[number] ?? []).suffix(count))
            buffers.others[number] = nil
        }
        guard !updates.isEmpty else {
            swap(&updates, &buffers.spare)
            return
        }
        if number == 1 && (!appState.isForeground || reason == .resumed || reason == .alwaysGranted) {
            summary.deliveredWhileAway += updates.count
        }
        if updates.count > 1 { record(.locationsDelivered(count: updates.count, reason: reason)) }
        if let process, !process.hasEnded, let manager = process.manager(number) {
            process.delivering(updates) { manager.deliver(updates, liveBlocked: rules.liveUpdates.blocked) }
        }
        swap(&updates, &buffers.spare)
    }

    /// Sends a background upload to its server: a new file in ``uploadDirectory``, the first
    /// free `upload-N.csv` (``NewFile``: never a file or a link that is there already).
    func sendUpload(_ task: Int) {
        var failure: String?
        if let directory = uploadDirectory, let payload = uploads.payloads[task] {
            let outcome = NewFile.create(
                in: directory, numberedFrom: uploads.nextNumber, name: { "upload-\($0).csv" },
                bytes: Array(payload.utf8))
            switch outcome {
            case .written(_, let number): uploads.nextNumber = number + 1
            case .failed(let problem): failure = problem
            }
        }
        if failure == nil { uploads.payloads[task] = nil }
        perform(rules.handle(.uploadWritten(task: task, failure: failure)))
    }

    /// The network answers a background download: the answer waits for the app's session; the
    /// rules say who hears of it. A running app's code is told at once.
    func receiveDownload(_ task: Int) {
        guard let url = downloads.requests.removeValue(forKey: task), let session = downloads.sessions[task] else {
            return
        }
        let answer = network.answer(for: url)
        downloads.finished.append(FinishedDownload(task: task, session: session, url: url, answer: answer))
        let wasRunning = appCodeRuns
        perform(rules.handle(.downloadReceived(task: task, detail: answer.summary)))
        if wasRunning, appCodeRuns, let process, !process.hasEnded {
            inProcess(process) { process.app.backgroundTransfersFinished(self) }
        }
    }

    // MARK: - The app's code

    /// Runs the app's code for `call` in the current process, if it is alive.
    func run(_ call: AppCall) {
        if case .finishLaunching(let inBackground, let cause) = call {
            let process = startProcess(inBackground: inBackground, cause: cause)
            inProcess(process) { process.app.didFinishLaunching(self, inBackground: inBackground) }
            process.launched = true
            return
        }
        guard let process, !process.hasEnded else { return }
        switch call {
        case .finishLaunching: break
        case .becomeActive: inProcess(process) { process.app.didBecomeActive(self) }
        case .willEnterForeground: inProcess(process) { process.app.willEnterForeground(self) }
        case .willResignActive: inProcess(process) { process.app.willResignActive(self) }
        case .willTerminate: inProcess(process) { process.app.willTerminate(self) }
        case .didEnterBackground: inProcess(process) { process.app.didEnterBackground(self) }
        case .terminated(let cause):
            process.end(cause)
            process.app.didTerminate(self, cause: cause)
        case .performFetch(let id):
            process.note = nil
            inProcess(process) {
                process.app.performFetch(self) { [weak self, weak process] result in
                    guard let self, let process, !process.hasEnded else { return }
                    self.perform(self.rules.handle(.fetchCompleted(id: id, result, note: process.takeNote())))
                    self.settle()
                }
            }
        case .remoteNotification(let id):
            inProcess(process) {
                process.app.didReceiveRemoteNotification(self) { [weak self, weak process] result in
                    guard let self, let process, !process.hasEnded else { return }
                    self.perform(self.rules.handle(.pushCompleted(id: id, result, note: process.takeNote())))
                    self.settle()
                }
            }
        case .backgroundURLSessionEvents(let task):
            inProcess(process) {
                let identifier = downloads.sessions[task]
                process.app.handleEventsForBackgroundURLSession(self, identifier: identifier) {
                    [weak self, weak process] in
                    guard let self, let process, !process.hasEnded else { return }
                    self.perform(self.rules.handle(.urlSessionEventsHandled(task: task)))
                    self.settle()
                }
            }
        case .taskExpiration(let ids):
            for id in ids {
                if let handler = process.expirationHandlers.removeValue(forKey: id) { inProcess(process) { handler() } }
            }
        case .scheduledTaskLaunch(let id, let identifier, let kind):
            let task = ScheduledTask(id: id, identifier: identifier, kind: kind, simulation: self)
            process.scheduledTasks[id] = task
            if let handler = process.taskHandlers[identifier] { inProcess(process) { handler(task) } }
        case .scheduledTaskExpiration(let id):
            guard let task = process.scheduledTasks[id] else { return }
            if let handler = task.expirationHandler {
                inProcess(process) { handler() }
            } else {
                // "Not setting an expiration handler results in the system marking your task as
                // complete and unsuccessful."
                completeTask(task, success: false)
            }
        case .scheduledTaskEnded(let id):
            process.scheduledTasks.removeValue(forKey: id)?.isCompleted = true
        case .delegate(let delegateCall, let managers):
            for (number, manager) in process.liveManagers {
                if case .manager(let only) = managers, only != number { continue }
                inProcess(process) { manager.tell(delegateCall) }
            }
        case .liveDiagnostic(let diagnostic, let number):
            process.manager(number)?.yieldLive(LiveUpdate(location: nil, diagnostic: diagnostic))
        case .liveStationary(let number):
            if let manager = process.manager(number) {
                manager.yieldLive(LiveUpdate(location: manager.location, isStationary: true))
            }
        case .conditionEvent(let name, let identifier, let state):
            process.monitors[name]?.continuation.yield(
                ConditionEvent(identifier: identifier, state: state, date: epoch.addingTimeInterval(now.inSeconds)))
        case .temporaryFullAccuracyCompletion(let error, let request):
            if let completion = process.temporaryFullAccuracyCompletions.removeValue(forKey: request) {
                inProcess(process) { completion.body(error) }
            }
        case .serviceLocation(let update, let number):
            if number == 1 && !appState.isForeground { summary.deliveredWhileAway += 1 }
            guard let manager = process.manager(number) else { return }
            let updates = [update]
            process.delivering(updates) {
                inProcess(process) { manager.deliver(updates, liveBlocked: rules.liveUpdates.blocked) }
            }
        case .endStreams:
            process.endStreams()
        }
    }

    /// A new process for a launch: the app (the instance, or a new one from the factory) and the
    /// managers created while no process ran.
    private func startProcess(inBackground: Bool, cause: LifecycleCause) -> AppProcess {
        let app: any SimulatedApp =
            switch appSource {
            case .instance(let app): app
            case .factory(let make): make()
            }
        let process = AppProcess(
            number: (self.process?.number ?? 0) + 1, cause: cause, inBackground: inBackground, app: app)
        self.process = process
        let waiting = waitingManagers
        waitingManagers = []
        for manager in waiting { adopt(manager, into: process) }
        return process
    }

    /// Takes `manager` into `process`: its number, its properties in the rules.
    @discardableResult
    func adopt(_ manager: DeviceLocationManager, into process: AppProcess) -> Int {
        let number = process.adopt(manager)
        rules.addManager(number)
        manager.adopt(by: self, process: process, number: number)
        if manager.location == nil { manager.location = rules.locationForNewManager }
        rules.setSettings(manager.settings, manager: number)
        if process.launched { process.awaitingCreationCallback.append(number) }
        return number
    }

    /// A manager the device creates for the app's code that has none.
    func adoptNewManager(into process: AppProcess) -> DeviceLocationManager {
        let manager = DeviceLocationManager(unowned: ())
        adopt(manager, into: process)
        return manager
    }

    /// From iOS 14 a manager's delegate hears the authorization when the app creates the manager
    /// (after the code that created it returns).
    func reportCreatedManagers() {
        guard let process, !process.awaitingCreationCallback.isEmpty else { return }
        let numbers = process.awaitingCreationCallback
        process.awaitingCreationCallback = []
        guard !process.hasEnded else { return }
        for number in numbers {
            record(
                .managerCreated(
                    authorization: rules.authorization.status, reported: version.reportsAuthorizationAtManagerCreation))
            if version.reportsAuthorizationAtManagerCreation && appCodeRuns {
                run(.delegate(.didChangeAuthorization, to: .manager(number)))
            }
        }
    }

    /// Runs `body`, the app's code, with this device as the one its new managers belong to: bound
    /// to the task-local, so that a task the app's code starts (an `async` delegate method's)
    /// finds the device too, which the registry, by the task that created the device, would not.
    func inProcess<T>(_ process: AppProcess, _ body: () throws -> T) rethrows -> T {
        if CurrentDevice.reference?.device === self { return try body() }
        return try CurrentDevice.$reference.withValue(DeviceReference(self)) { try body() }
    }

    /// The system completes a `BGTask` for the app, or the app does
    /// (`setTaskCompleted(success:)`).
    func completeTask(_ task: ScheduledTask, success: Bool) {
        guard !task.isCompleted else { return }
        perform(rules.handle(.completeScheduledTask(id: task.id, success: success, note: process?.takeNote())))
        settle()
    }
}
