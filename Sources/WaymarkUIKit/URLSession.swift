import Foundation
import Waymark

// `URLSession` on the simulated device (issue 26). On Linux, Foundation's `URLSession` is in
// FoundationNetworking and reaches the real network. The app's sessions here reach the device's
// ``Waymark/SimulatedNetwork`` in virtual time instead, and a background session's downloads go
// on while the app is suspended or terminated, as on iOS. Declared in a module that imports
// FoundationNetworking, these types shadow its own, even in a file that imports it as well; its
// `URLRequest`, `URLResponse` and `HTTPURLResponse` are re-exported, as Foundation has them on
// Apple's platforms.
#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif

/// `URLSessionConfiguration`: `default`, `ephemeral`, or `background(withIdentifier:)`. Of its
/// settings the device reads the identifier and `sessionSendsLaunchEvents`; the others are kept
/// as the app set them.
open class URLSessionConfiguration: NSObject, @unchecked Sendable {
    // @unchecked Sendable, as Apple's: the app sets it up before it makes a session of it.

    /// The background session's identifier; nil for the other kinds.
    open private(set) var identifier: String?
    /// For a background session: whether the app is woken or launched in the background when
    /// its transfers finish (true by default; ignored for the other kinds).
    open var sessionSendsLaunchEvents = true
    open var isDiscretionary = false
    open var allowsCellularAccess = true
    open var allowsExpensiveNetworkAccess = true
    open var allowsConstrainedNetworkAccess = true
    open var waitsForConnectivity = false
    open var timeoutIntervalForRequest: TimeInterval = 60
    open var timeoutIntervalForResource: TimeInterval = 604_800
    open var httpAdditionalHeaders: [AnyHashable: Any]?
    open var httpMaximumConnectionsPerHost = 6
    open var sharedContainerIdentifier: String?

    init(identifier: String?) {
        self.identifier = identifier
        super.init()
    }

    /// A new default configuration.
    open class var `default`: URLSessionConfiguration { URLSessionConfiguration(identifier: nil) }
    /// A new configuration that stores nothing on disk.
    open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration(identifier: nil) }

    /// A configuration whose sessions' downloads go on while the app is suspended or terminated
    /// by the system.
    open class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        URLSessionConfiguration(identifier: identifier)
    }

    func copied() -> URLSessionConfiguration {
        let copy = URLSessionConfiguration(identifier: identifier)
        copy.sessionSendsLaunchEvents = sessionSendsLaunchEvents
        copy.isDiscretionary = isDiscretionary
        copy.allowsCellularAccess = allowsCellularAccess
        copy.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        copy.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        copy.waitsForConnectivity = waitsForConnectivity
        copy.timeoutIntervalForRequest = timeoutIntervalForRequest
        copy.timeoutIntervalForResource = timeoutIntervalForResource
        copy.httpAdditionalHeaders = httpAdditionalHeaders
        copy.httpMaximumConnectionsPerHost = httpMaximumConnectionsPerHost
        copy.sharedContainerIdentifier = sharedContainerIdentifier
        return copy
    }
}

/// `URLSessionTask`: one request of a session.
open class URLSessionTask: NSObject, @unchecked Sendable {
    // @unchecked Sendable, as Apple's: the device uses it on its isolation.

    /// `URLSessionTask.State`.
    public enum State: Int, @unchecked Sendable {
        case running = 0
        case suspended = 1
        case canceling = 2
        case completed = 3
    }

    public static let defaultPriority: Float = 0.5
    public static let lowPriority: Float = 0.25
    public static let highPriority: Float = 0.75

    /// Unique within its session; a background download's is its transfer's id on the device
    /// (the audit log's `task`), the same in every process of the app.
    open internal(set) var taskIdentifier: Int
    open internal(set) var originalRequest: URLRequest?
    open internal(set) var currentRequest: URLRequest?
    open internal(set) var response: URLResponse?
    open internal(set) var state: State = .suspended
    open internal(set) var error: (any Error)?
    open var taskDescription: String?
    open var earliestBeginDate: Date?
    open var countOfBytesClientExpectsToSend: Int64 = -1
    open var countOfBytesClientExpectsToReceive: Int64 = -1
    open internal(set) var countOfBytesReceived: Int64 = 0
    open internal(set) var countOfBytesExpectedToReceive: Int64 = -1
    open var priority: Float = URLSessionTask.defaultPriority

    weak var session: URLSession?
    var completion: Completion?
    /// `download(from:)`: the file is the caller's, not removed after the handler.
    var keepsFile = false
    /// A download of a background session, carried by the device: its identifier is the
    /// transfer's.
    var isBackgroundDownload = false

    enum Completion {
        case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
        case download(@Sendable (URL?, URLResponse?, (any Error)?) -> Void)
    }

    init(session: URLSession, identifier: Int, request: URLRequest?) {
        self.session = session
        taskIdentifier = identifier
        originalRequest = request
        currentRequest = request
        super.init()
    }

    /// Starts the task (a new task is suspended).
    open func resume() {
        guard state == .suspended else { return }
        state = .running
        session?.started(self)
    }

    /// Pauses it; a task already handed to the network goes on.
    open func suspend() {}

    /// Cancels it: it completes with `URLError.cancelled`.
    open func cancel() {
        guard state == .running || state == .suspended else { return }
        state = .canceling
        session?.cancelled(self)
    }
}

/// `URLSessionDataTask`: its answer comes back in memory.
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}

/// `URLSessionUploadTask`.
open class URLSessionUploadTask: URLSessionDataTask, @unchecked Sendable {}

/// `URLSessionDownloadTask`: its answer comes back in a temporary file, which is removed once
/// the delegate's `urlSession(_:downloadTask:didFinishDownloadingTo:)` returns, as on iOS.
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {
    /// Cancels it; the simulated network keeps no partial download, so the resume data is nil.
    open func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        cancel()
        completionHandler(nil)
    }
}

/// `URLSessionDelegate`. Every method has a default that does nothing, as Apple's are optional.
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)
    /// "All messages enqueued for a session have been delivered": the moment to call the
    /// completion handler `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// gave.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession)
}

extension URLSessionDelegate {
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {}
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {}
}

/// `URLSessionTaskDelegate`.
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
}

extension URLSessionTaskDelegate {
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {}
}

/// `URLSessionDataDelegate`.
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
}

extension URLSessionDataDelegate {
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}
}

/// `URLSessionDownloadDelegate`: `urlSession(_:downloadTask:didFinishDownloadingTo:)` is
/// required, as on iOS.
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
}

extension URLSessionDownloadDelegate {
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}
}

/// `URLSession` on the simulated device.
///
/// - Requests reach the device's ``Waymark/SimulatedNetwork`` (`device.network.serve(…)`): a URL
///   nobody serves fails with `URLError.cannotFindHost`; with the network off, with
///   `URLError.notConnectedToInternet`. A default or ephemeral session's task is answered just
///   after the app's code that resumed it returns, while the app runs (in virtual time, no
///   latency); one that comes due while the app is suspended is never answered.
/// - A background session's download task is a transfer of the device (the audit log's
///   `transfer` events): it takes the scenario's transfer time, goes on while the app is
///   suspended or terminated by the system, is cancelled when the user swipes the app away, and
///   its end wakes or relaunches the app in the background
///   (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`). The app creates
///   the session again with the same identifier and its delegate hears of the download, then
///   `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
/// - Completion handlers are not supported in background sessions: a task made with one is a
///   fatal error that terminates the app, as iOS raises.
/// - The delegate and the completion handlers are called on the device's isolation (the main
///   actor for a UIKit app, where `OperationQueue.main` runs them); `delegateQueue` is kept and
///   not used.
open class URLSession: NSObject, @unchecked Sendable {
    // @unchecked Sendable, as Apple's: it is used on the device's isolation.

    private let settings: URLSessionConfiguration
    /// The session's delegate; the session keeps it until it is invalidated, as on iOS.
    open private(set) var delegate: (any URLSessionDelegate)?
    open private(set) var delegateQueue: OperationQueue
    open var sessionDescription: String?
    /// A copy of the configuration it was made with.
    open var configuration: URLSessionConfiguration { settings.copied() }

    weak var device: Simulation?
    /// Its tasks not yet completed, by object: a background download's identifier is its
    /// transfer's, which another task of the session may share.
    private var tasks: [ObjectIdentifier: URLSessionTask] = [:]
    private var taskCounter = 0
    private var invalidated = false

    /// The shared session (a default configuration, no delegate): one per process of the app.
    open class var shared: URLSession {
        guard let host = Simulation.current?.process?.app as? UIKitAppHost else {
            return URLSession(configuration: .default)
        }
        return host.sharedSession
    }

    public convenience init(configuration: URLSessionConfiguration) {
        self.init(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    public init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
        delegateQueue queue: OperationQueue?
    ) {
        settings = configuration.copied()
        self.delegate = delegate
        delegateQueue = queue ?? OperationQueue()
        device = Simulation.current
        super.init()
        if let identifier = settings.identifier, let host = device?.process?.app as? UIKitAppHost {
            host.register(self, identifier: identifier)
        }
    }

    var backgroundIdentifier: String? { settings.identifier }

    // MARK: - Making tasks

    open func dataTask(with url: URL) -> URLSessionDataTask { dataTask(with: URLRequest(url: url)) }

    open func dataTask(with request: URLRequest) -> URLSessionDataTask {
        make(URLSessionDataTask.init, request, completion: nil)
    }

    open func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func dataTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        make(URLSessionDataTask.init, request, completion: .data(completionHandler))
    }

    open func downloadTask(with url: URL) -> URLSessionDownloadTask { downloadTask(with: URLRequest(url: url)) }

    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        make(URLSessionDownloadTask.init, request, completion: nil)
    }

    open func downloadTask(
        with url: URL, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func downloadTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        make(URLSessionDownloadTask.init, request, completion: .download(completionHandler))
    }

    private func make<Task: URLSessionTask>(
        _ build: (URLSession, Int, URLRequest?) -> Task, _ request: URLRequest, completion: URLSessionTask.Completion?
    ) -> Task {
        if completion != nil, backgroundIdentifier != nil {
            device?.crash(
                "'Completion handler blocks are not supported in background sessions. Use a delegate instead.'")
        }
        taskCounter += 1
        let task = build(self, taskCounter, request)
        task.completion = completion
        return task
    }

    // MARK: - async

    // The `async` forms run on the main actor, the device's isolation for a UIKit app: a caller
    // on the main actor starts its task before it first waits, as on iOS; one elsewhere hops
    // there. Their callers' code is the same as for Apple's nonisolated forms. The task-specific
    // `delegate` is accepted and not called: the answer comes back as the result.

    @MainActor
    open func data(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    @MainActor
    open func data(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (
        Data, URLResponse
    ) {
        try await withCheckedThrowingContinuation { continuation in
            let task = make(URLSessionDataTask.init, request, completion: nil)
            task.completion = .data { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                continuation.resume(returning: (data ?? Data(), response ?? Self.noResponse(request)))
            }
            task.resume()
        }
    }

    @MainActor
    open func download(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse)
    {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    @MainActor
    open func download(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (
        URL, URLResponse
    ) {
        try await withCheckedThrowingContinuation { continuation in
            let task = make(URLSessionDownloadTask.init, request, completion: nil)
            // The file outlives the handler here: `download(from:)` hands it over, and the
            // caller moves it.
            task.completion = .download { file, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let file else { return continuation.resume(throwing: URLError(.cannotCreateFile)) }
                continuation.resume(returning: (file, response ?? Self.noResponse(request)))
            }
            task.keepsFile = true
            task.resume()
        }
    }

    private static func noResponse(_ request: URLRequest) -> URLResponse {
        URLResponse(
            url: request.url ?? URL(fileURLWithPath: "/"), mimeType: nil, expectedContentLength: 0,
            textEncodingName: nil)
    }

    // MARK: - The session's tasks

    /// Its tasks not yet completed, with, for a background session, the downloads an earlier
    /// process of the app started in it and the device still carries.
    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        completionHandler(outstandingTasks())
    }

    @MainActor open var allTasks: [URLSessionTask] { get async { outstandingTasks() } }

    open func getTasksWithCompletionHandler(
        _ completionHandler:
            @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask])
            -> Void
    ) {
        let all = outstandingTasks()
        completionHandler(
            all.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) },
            all.compactMap { $0 as? URLSessionUploadTask }, all.compactMap { $0 as? URLSessionDownloadTask })
    }

    private func outstandingTasks() -> [URLSessionTask] {
        if let identifier = backgroundIdentifier, let device {
            for (id, url) in device.outstandingDownloads(session: identifier) { _ = download(id, url: url) }
        }
        return tasks.values.filter { $0.state != .completed }.sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    /// The session's download task of device transfer `id`: the one this process made, or a new
    /// one standing for a download an earlier process started.
    private func download(_ id: Int, url: String) -> URLSessionDownloadTask {
        if let task = tasks.values.lazy.compactMap({ $0 as? URLSessionDownloadTask }).first(where: {
            $0.taskIdentifier == id && $0.isBackgroundDownload
        }) {
            return task
        }
        let task = URLSessionDownloadTask(
            session: self, identifier: id, request: URL(string: url).map { URLRequest(url: $0) })
        task.state = .running
        task.isBackgroundDownload = true
        tasks[ObjectIdentifier(task)] = task
        return task
    }

    /// Lets its tasks finish, then ends it: the delegate hears `didBecomeInvalidWithError` (nil).
    open func finishTasksAndInvalidate() {
        guard !invalidated else { return }
        invalidated = true
        endIfFinished()
    }

    /// Cancels its tasks and ends it.
    open func invalidateAndCancel() {
        guard !invalidated else { return }
        invalidated = true
        for task in outstandingTasks() { task.cancel() }
        endIfFinished()
    }

    private func endIfFinished() {
        guard invalidated, tasks.isEmpty else { return }
        if let identifier = backgroundIdentifier, let host = device?.process?.app as? UIKitAppHost {
            host.unregister(self, identifier: identifier)
        }
        let delegate = delegate
        self.delegate = nil
        later { delegate?.urlSession(self, didBecomeInvalidWithError: nil) }
    }

    // MARK: - Running tasks on the device

    /// Runs `work` just after the app's code that is running now returns, if the app still runs.
    private func later(_ work: @escaping () -> Void) {
        device?.schedule(after: .zero, work)
    }

    func started(_ task: URLSessionTask) {
        if invalidated {
            return finish(task, with: .failure(.cancelled))
        }
        tasks[ObjectIdentifier(task)] = task
        let url = task.originalRequest?.url?.absoluteString ?? ""
        guard let device else { return finish(task, with: .failure(.notConnectedToInternet)) }
        if let identifier = backgroundIdentifier, task is URLSessionDownloadTask, task.completion == nil {
            guard
                let id = device.downloadInBackground(
                    url, session: identifier, launchEvents: settings.sessionSendsLaunchEvents)
            else { return }
            task.taskIdentifier = id
            task.isBackgroundDownload = true
            return
        }
        // The task keeps its session until it is answered, as the system does.
        later {
            guard task.state == .running else { return }
            self.finish(
                task,
                with: device.networkAvailable ? device.network.answer(for: url) : .failure(.notConnectedToInternet))
        }
    }

    func cancelled(_ task: URLSessionTask) {
        if task.isBackgroundDownload { device?.cancelDownload(task.taskIdentifier) }
        later { self.finish(task, with: .failure(.cancelled)) }
    }

    /// A background download the device finished, in this process: its task, new if an earlier
    /// process started it.
    func deliver(_ finished: FinishedDownload) {
        finish(download(finished.task, url: finished.url), with: finished.answer)
    }

    /// Completes `task` with `answer`: its completion handler, or else its delegate's methods.
    func finish(_ task: URLSessionTask, with answer: NetworkAnswer) {
        guard task.state != .completed else { return }
        let url = task.originalRequest?.url ?? URL(fileURLWithPath: "/")
        var body: Data?
        if case .response(let status, let bytes) = answer {
            body = Data(bytes)
            task.response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)
            task.countOfBytesReceived = Int64(bytes.count)
            task.countOfBytesExpectedToReceive = Int64(bytes.count)
        }
        if case .failure(let failure) = answer { task.error = URLError(failure.code) }
        task.state = .completed
        defer {
            tasks[ObjectIdentifier(task)] = nil
            endIfFinished()
        }
        switch task.completion {
        case .data(let handler)?:
            handler(body, task.response, task.error)
            return
        case .download(let handler)?:
            let file = body.flatMap(Self.temporaryFile)
            handler(file, task.response, task.error)
            if let file, !task.keepsFile { try? FileManager.default.removeItem(at: file) }
            return
        case nil:
            break
        }
        if let body, let dataTask = task as? URLSessionDataTask, let delegate = delegate as? any URLSessionDataDelegate
        {
            delegate.urlSession(self, dataTask: dataTask, didReceive: body)
        }
        if let body, let download = task as? URLSessionDownloadTask,
            let delegate = delegate as? any URLSessionDownloadDelegate, let file = Self.temporaryFile(body)
        {
            let count = Int64(body.count)
            delegate.urlSession(
                self, downloadTask: download, didWriteData: count, totalBytesWritten: count,
                totalBytesExpectedToWrite: count)
            delegate.urlSession(self, downloadTask: download, didFinishDownloadingTo: file)
            try? FileManager.default.removeItem(at: file)
        }
        (delegate as? any URLSessionTaskDelegate)?.urlSession(self, task: task, didCompleteWithError: task.error)
    }

    /// A new temporary file holding `body`, as the system's download files are.
    private static func temporaryFile(_ body: Data) -> URL? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "CFNetworkDownload_\(UUID().uuidString).tmp")
        return (try? body.write(to: file, options: .withoutOverwriting)) == nil ? nil : file
    }
}

extension NetworkAnswer.Failure {
    /// `URLError`'s code of the same name.
    var code: URLError.Code {
        switch self {
        case .cannotFindHost: .cannotFindHost
        case .notConnectedToInternet: .notConnectedToInternet
        case .timedOut: .timedOut
        case .cannotConnectToHost: .cannotConnectToHost
        case .cancelled: .cancelled
        }
    }
}
