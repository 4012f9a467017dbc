/// What keeps a backgrounded app running, besides its own background tasks and a fetch: the
/// one place that says so.
///
/// - A location service's event wakes the app for a few seconds (``Scenario/SystemSettings/serviceWakeTime``).
/// - A background push's handler runs against its budget while it has not completed.
/// - A `BGTask` runs until it completes or its time runs out.
/// - The app handles its background URL session's events until it calls the completion.
/// - Audio plays, with the `audio` background mode.
/// - A `CLBackgroundActivitySession` is held.
///
/// A pure value, made from the machines' states when the rules need it.
public struct KeepRunning: Sendable, Hashable {
    public var now: Duration
    /// Until when a location service's wake keeps the app running.
    public var serviceWakeUntil: Duration?
    /// The background pushes whose handlers have not completed, by id; true while the handler
    /// runs against its budget (off screen).
    public var pushHandlers: [Int: Bool]
    public var runningTasks: Bool
    public var transferEvents: Bool
    public var audioPlaying: Bool
    public var audioMode: Bool
    public var activitySessions: Int

    /// Whether any of them may keep the app running at all.
    public var anyActivity: Bool {
        serviceWakeUntil != nil || !pushHandlers.isEmpty || runningTasks || transferEvents || audioPlaying
            || activitySessions > 0
    }

    /// Woken by a service and still within its time: a location event's few seconds, a push's
    /// handler, a `BGTask`, a URL session's events.
    public var isWokenByService: Bool {
        guard anyActivity else { return false }
        if let until = serviceWakeUntil, now < until { return true }
        return pushHandlers.values.contains(true) || runningTasks || transferEvents
    }

    /// Audio plays with the `audio` mode.
    public var audioKeepsRunning: Bool { audioPlaying && audioMode }

    /// Whether something here keeps the backgrounded app from being suspended.
    public var keepsRunning: Bool {
        anyActivity && (isWokenByService || audioKeepsRunning || activitySessions > 0)
    }

    /// Why the app runs, for the delivery policy, when it is one of these.
    public var runningReason: DeliveryPolicy.Running? {
        guard anyActivity else { return nil }
        if isWokenByService { return .backgroundWake }
        if audioKeepsRunning { return .backgroundAudio }
        return nil
    }
}
