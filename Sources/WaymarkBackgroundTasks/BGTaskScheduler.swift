import Foundation
import Waymark

/// `BGTaskScheduler`: the app's background tasks on the simulated device (register, submit,
/// cancel, pending requests), run in virtual time by the rules of ``Waymark/TaskSchedulerStateMachine``.
///
/// - Launch handlers must be registered before the app finishes launching; registering later, or
///   twice, is a fatal error that terminates the app, as on iOS ("All launch handlers must be
///   registered before application finishes launching").
/// - With `BGTaskSchedulerPermittedIdentifiers` in the Info, an identifier not listed cannot be
///   registered (`register` returns false) nor submitted (`notPermitted`).
/// - `earliestBeginDate` is read as a delay from the moment of submission: the app's `Date()` is
///   the host's clock, not the device's virtual one.
open class BGTaskScheduler: NSObject, @unchecked Sendable {
    // @unchecked Sendable, as Apple's: it is used on the device's isolation.
    private weak var device: Simulation?

    init(device: Simulation?) { self.device = device }

    /// The running app's scheduler.
    public class var shared: BGTaskScheduler { BGTaskScheduler(device: Simulation.current) }

    /// `BGTaskScheduler.errorDomain`.
    public static let errorDomain = "BGTaskSchedulerErrorDomain"

    /// Registers the launch handler of `identifier` for this launch of the app; false when the
    /// Info does not permit the identifier or no app code runs. `queue` is accepted and unused:
    /// handlers run on the device's isolation.
    public func register(
        forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
        launchHandler: @escaping (BGTask) -> Void
    ) -> Bool {
        guard let device, let process = device.process, !process.hasEnded else { return false }
        if let permitted = device.scenario.info.taskSchedulerPermittedIdentifiers, !permitted.contains(identifier) {
            device.log(
                "BGTaskScheduler.register", detail: "\(identifier) is not in BGTaskSchedulerPermittedIdentifiers")
            return false
        }
        if process.launched {
            device.crash("'All launch handlers must be registered before application finishes launching'")
            return false
        }
        if device.hasTaskHandler(identifier) {
            device.crash("'Launch handler for task with identifier \(identifier) has already been registered'")
            return false
        }
        return device.taskScheduler.register(forTaskWithIdentifier: identifier) { task in
            launchHandler(task.kind == .appRefresh ? BGAppRefreshTask(task) : BGProcessingTask(task))
        }
    }

    /// Submits a request; throws ``Error`` `notPermitted`, `unavailable` or
    /// `tooManyPendingTaskRequests`.
    public func submit(_ taskRequest: BGTaskRequest) throws {
        guard let device else { throw Error(.unavailable) }
        if let permitted = device.scenario.info.taskSchedulerPermittedIdentifiers,
            !permitted.contains(taskRequest.identifier)
        {
            throw Error(.notPermitted)
        }
        let delay = taskRequest.earliestBeginDate.map { max(0, $0.timeIntervalSinceNow) }
        let begin = delay.map { device.now + .milliseconds(Int64(($0 * 1000).rounded())) }
        let request: TaskSchedulerStateMachine.Request
        if let processing = taskRequest as? BGProcessingTaskRequest {
            request = .init(
                identifier: taskRequest.identifier, kind: .processing, earliestBegin: begin,
                requiresExternalPower: processing.requiresExternalPower,
                requiresNetworkConnectivity: processing.requiresNetworkConnectivity)
        } else {
            request = .init(identifier: taskRequest.identifier, kind: .appRefresh, earliestBegin: begin)
        }
        do {
            try device.taskScheduler.submit(request)
        } catch {
            let code: Error.Code =
                switch error {
                case .unavailable: .unavailable
                case .tooManyPendingTaskRequests: .tooManyPendingTaskRequests
                case .notPermitted: .notPermitted
                }
            throw Error(code)
        }
    }

    public func cancel(taskRequestWithIdentifier identifier: String) {
        device?.taskScheduler.cancel(taskRequestWithIdentifier: identifier)
    }

    public func cancelAllTaskRequests() { device?.taskScheduler.cancelAllTaskRequests() }

    /// The pending requests, as copies.
    public func getPendingTaskRequests(completionHandler: @escaping ([BGTaskRequest]) -> Void) {
        completionHandler(pending())
    }

    public func pendingTaskRequests() async -> [BGTaskRequest] { pending() }

    private func pending() -> [BGTaskRequest] {
        guard let device else { return [] }
        return device.taskScheduler.pendingTaskRequests.map { r in
            let request: BGTaskRequest
            if r.kind == .processing {
                let p = BGProcessingTaskRequest(identifier: r.identifier)
                p.requiresExternalPower = r.requiresExternalPower
                p.requiresNetworkConnectivity = r.requiresNetworkConnectivity
                request = p
            } else {
                request = BGAppRefreshTaskRequest(identifier: r.identifier)
            }
            request.earliestBeginDate = r.earliestBegin.map { Date(timeIntervalSinceNow: ($0 - device.now).inSeconds) }
            return request
        }
    }

    /// `BGTaskScheduler.Error`.
    public struct Error: CustomNSError, Hashable, Swift.Error, Sendable {
        public enum Code: Int, @unchecked Sendable, Equatable {
            case unavailable = 1
            case tooManyPendingTaskRequests = 2
            case notPermitted = 3
            case immediateRunIneligible = 4
        }

        public let code: Code
        public init(_ code: Code) { self.code = code }

        public static var errorDomain: String { BGTaskScheduler.errorDomain }
        public var errorCode: Int { code.rawValue }
        public static var unavailable: Code { .unavailable }
        public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
        public static var notPermitted: Code { .notPermitted }
        public static var immediateRunIneligible: Code { .immediateRunIneligible }
    }
}

/// `BGTaskRequest`.
open class BGTaskRequest: NSObject, NSCopying, @unchecked Sendable {
    public let identifier: String
    /// When the task may begin at the earliest (nil: at once).
    public var earliestBeginDate: Date?

    init(identifier: String) { self.identifier = identifier }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = BGTaskRequest(identifier: identifier)
        copy.earliestBeginDate = earliestBeginDate
        return copy
    }
}

/// `BGAppRefreshTaskRequest`: needs the `fetch` background mode.
open class BGAppRefreshTaskRequest: BGTaskRequest, @unchecked Sendable {
    public override init(identifier: String) { super.init(identifier: identifier) }
}

/// `BGProcessingTaskRequest`: needs the `processing` background mode.
open class BGProcessingTaskRequest: BGTaskRequest, @unchecked Sendable {
    public var requiresNetworkConnectivity = false
    public var requiresExternalPower = false
    public override init(identifier: String) { super.init(identifier: identifier) }
}

/// `BGTask`: a task the system runs for the app.
open class BGTask: NSObject, @unchecked Sendable {
    let task: ScheduledTask

    init(_ task: ScheduledTask) { self.task = task }

    public var identifier: String { task.identifier }

    /// Called shortly before the task's time runs out; cleared once called or once the task is
    /// completed. Not setting one marks the task completed and unsuccessful at that moment.
    public var expirationHandler: (() -> Void)? {
        get { task.expirationHandler }
        set { task.expirationHandler = newValue }
    }

    public func setTaskCompleted(success: Bool) { task.setTaskCompleted(success: success) }
}

/// `BGAppRefreshTask`.
open class BGAppRefreshTask: BGTask, @unchecked Sendable {}

/// `BGProcessingTask`.
open class BGProcessingTask: BGTask, @unchecked Sendable {}
