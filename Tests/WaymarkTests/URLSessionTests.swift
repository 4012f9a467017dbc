import Foundation
import Testing
import Waymark
import WaymarkTesting
import WaymarkUIKit

// `URLSession` on the simulated device, driven through an app written in Apple's spelling. The
// rules cited are Apple's: "Downloading files in the background", `URLSessionConfiguration
// .background(withIdentifier:)`, `sessionSendsLaunchEvents`, `urlSessionDidFinishEvents(
// forBackgroundURLSession:)` and `application(_:handleEventsForBackgroundURLSession:
// completionHandler:)`.

/// What the app kept: survives its processes, as a disk does.
@MainActor enum DownloadDisk {
    static var files: [String] = []
    static var statuses: [Int] = []
    static var errors: [URLError.Code] = []
    static var finishedEvents = 0
    static var handleEventsCalls: [String] = []
    static var writes: [Int64] = []
    /// The temporary files the delegate was handed, and whether each was there then.
    static var locations: [(path: String, existed: Bool)] = []

    static func reset() {
        locations = []
        files = []
        statuses = []
        errors = []
        finishedEvents = 0
        handleEventsCalls = []
        writes = []
    }
}

/// The app's background downloads, delegate on the main queue, as Apple's article shows.
final class Downloads: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    static let identifier = "com.example.downloads"
    var completion: (() -> Void)?
    var launchEvents = true

    lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.background(withIdentifier: Self.identifier)
        configuration.sessionSendsLaunchEvents = launchEvents
        return URLSession(configuration: configuration, delegate: self, delegateQueue: .main)
    }()

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let text = (try? String(contentsOf: location, encoding: .utf8)) ?? "<unreadable>"
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        let existed = FileManager.default.fileExists(atPath: location.path)
        MainActor.assumeIsolated {
            DownloadDisk.locations.append((location.path, existed))
            DownloadDisk.files.append(text)
            DownloadDisk.statuses.append(status)
        }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        MainActor.assumeIsolated { DownloadDisk.writes.append(totalBytesWritten) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error = error as? URLError else { return }
        MainActor.assumeIsolated { DownloadDisk.errors.append(error.code) }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        MainActor.assumeIsolated {
            DownloadDisk.finishedEvents += 1
            let completion = self.completion
            self.completion = nil
            completion?()
        }
    }
}

@MainActor final class DownloadAppDelegate: UIResponder, UIApplicationDelegate {
    let downloads = Downloads()

    func application(
        _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping () -> Void
    ) {
        DownloadDisk.handleEventsCalls.append(identifier)
        downloads.completion = completionHandler
        _ = downloads.session
    }
}

/// Starts its download in the `async` form of the push handler: code in a task the device's call
/// started, which must find the device as the call itself does.
@MainActor final class PushDownloadAppDelegate: UIResponder, UIApplicationDelegate {
    let downloads = Downloads()

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async
        -> UIBackgroundFetchResult
    {
        downloads.session.downloadTask(with: URL(string: URLSessionTests.feed)!).resume()
        return .newData
    }

    func application(
        _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping () -> Void
    ) {
        DownloadDisk.handleEventsCalls.append(identifier)
        downloads.completion = completionHandler
        _ = downloads.session
    }
}

@MainActor @Suite(.serialized) struct URLSessionTests {
    static let feed = "https://example.com/feed.json"

    /// A device whose app's delegate is `D`, the feed served; not launched.
    static func device<D: UIResponder & UIApplicationDelegate>(
        _ app: D.Type = DownloadAppDelegate.self, _ build: (inout Scenario) -> Void = { _ in }
    ) throws -> TestDevice {
        var scenario = Scenario()
        scenario.device.authorization = .authorizedWhenInUse
        scenario.app.launchAt = nil
        build(&scenario)
        let coordinates = (0...600).map { Coordinate(latitude: 48.1372 + Double($0) * 0.0001, longitude: 11.5755) }
        let device = try TestDevice(
            app: app, scenario: scenario, trace: TraceSource.coordinates(coordinates, every: .seconds(1)))
        device.network.serve(feed, text: "{\"items\":3}")
        return device
    }

    /// The app launched on a new device (`build` sets the scenario up), what it kept erased, and
    /// its background downloads.
    func launched(_ build: (inout Scenario) -> Void = { _ in }) throws -> (TestDevice, Downloads) {
        DownloadDisk.reset()
        let device = try Self.device(DownloadAppDelegate.self, build)
        device.launch()
        return (device, try #require(device.appDelegate(as: DownloadAppDelegate.self)).downloads)
    }

    /// Starts a download of the feed in `downloads`' background session.
    func downloadFeed(_ downloads: Downloads) -> URLSessionDownloadTask {
        let task = downloads.session.downloadTask(with: URL(string: Self.feed)!)
        task.resume()
        return task
    }

    /// The `transfer` events of the run, as `action task session detail reason`.
    func transfers(_ device: TestDevice) -> [String] {
        device.events(named: "transfer").compactMap { e in
            guard case .transfer(let action, let task, _, let reason, let detail, let session) = e.kind else {
                return nil
            }
            return [action.rawValue, String(task), session, detail, reason?.rawValue].compactMap { $0 }.joined(
                separator: " ")
        }
    }

    /// A default session's data task is answered by the device's network once the code that
    /// resumed it returns, through its completion handler; a URL nobody serves fails with
    /// `cannotFindHost`, and with the network off every request fails with
    /// `notConnectedToInternet`.
    @Test func aDataTaskIsAnsweredByTheDevicesNetwork() async throws {
        let (device, _) = try launched()
        var answers: [String] = []
        func ask(_ url: String) {
            URLSession.shared.dataTask(with: URL(string: url)!) { data, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode
                let text = data.map { String(decoding: $0, as: UTF8.self) }
                MainActor.assumeIsolated {
                    answers.append(
                        "\(status.map(String.init) ?? "-") \(text ?? "-") \((error as? URLError)?.code.rawValue ?? 0)")
                }
            }.resume()
        }
        ask(Self.feed)
        #expect(answers.isEmpty, "answered after the code that asked returns, not during it")
        device.advance(by: .seconds(1))
        ask("https://nowhere.example/")
        device.advance(by: .seconds(1))
        device.perform(.setNetwork(false))
        ask(Self.feed)
        device.advance(by: .seconds(1))
        #expect(
            answers == [
                "200 {\"items\":3} 0", "- - \(URLError.Code.cannotFindHost.rawValue)",
                "- - \(URLError.Code.notConnectedToInternet.rawValue)",
            ])
    }

    /// `data(from:)`, the `async` form, returns the body and the response.
    @Test(.timeLimit(.minutes(45))) func theAsyncFormReturnsTheBody() async throws {
        let (device, _) = try launched()
        device.network.serve("https://example.com/missing", status: 404, text: "no")
        let session = URLSession(configuration: .ephemeral)
        // Started on the main actor, as an app's async code would: each request is made before
        // its task first waits.
        let feed = Task.immediate { @MainActor in try await session.data(from: URL(string: Self.feed)!) }
        let missing = Task.immediate { @MainActor in
            try await session.data(from: URL(string: "https://example.com/missing")!)
        }
        device.advance(by: .seconds(1))
        let (body, response) = try await feed.value
        #expect(String(decoding: body, as: UTF8.self) == "{\"items\":3}")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let (notFound, notFoundResponse) = try await missing.value
        #expect(String(decoding: notFound, as: UTF8.self) == "no")
        #expect((notFoundResponse as? HTTPURLResponse)?.statusCode == 404, "an HTTP error is a response, not an error")
    }

    /// A running app's download in a background session takes the transfer time; its delegate
    /// hears of it directly, with no `handleEventsForBackgroundURLSession` ("If application is in
    /// foreground NSURLsession delegate will be called directly"), and the temporary file is gone
    /// once the delegate returns.
    @Test func aRunningAppHearsOfItsDownloadDirectly() async throws {
        let (device, downloads) = try launched()
        let task = downloadFeed(downloads)
        device.advance(by: .seconds(19))
        #expect(DownloadDisk.files.isEmpty, "the transfer takes the scenario's 20 s")
        device.advance(by: .seconds(2))
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.statuses == [200])
        #expect(DownloadDisk.writes == [11])
        #expect(DownloadDisk.handleEventsCalls.isEmpty)
        #expect(task.state == .completed && task.error == nil)
        #expect(
            transfers(device) == [
                "scheduled 1 \(Downloads.identifier)", "completed 1 \(Downloads.identifier) HTTP 200, 11 bytes",
            ])
        let file = try #require(DownloadDisk.locations.first)
        #expect(file.existed)
        #expect(
            !FileManager.default.fileExists(atPath: file.path),
            "the download's file is removed once the delegate returns")
    }

    /// Suspended, the app is woken when its download completes: `handleEventsForBackgroundURLSession`
    /// with the session's identifier, then the delegate's download, then
    /// `urlSessionDidFinishEvents`, whose completion handler tells the system the app is done.
    @Test func aSuspendedAppIsWokenForItsDownload() async throws {
        let (device, downloads) = try launched()
        _ = downloadFeed(downloads)
        device.sendToBackground()
        device.advance(by: .seconds(10))
        #expect(device.appState == .suspended)
        device.advance(by: .seconds(15))
        #expect(DownloadDisk.handleEventsCalls == [Downloads.identifier])
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.finishedEvents == 1)
        #expect(device.process?.number == 1, "woken, not relaunched")
        #expect(transfers(device).last == "eventsHandled 1")
        #expect(device.appState == .suspended, "suspended again once it called the completion handler")
    }

    /// Ended by the system, the app is relaunched in the background when its download completes;
    /// the new process makes the session again with the identifier it is given, and its delegate
    /// hears of the download the first process started.
    @Test func aTerminatedAppIsRelaunchedForItsDownload() async throws {
        let (device, downloads) = try launched()
        _ = downloadFeed(downloads)
        device.sendToBackground()
        device.advance(by: .seconds(10))
        device.perform(.systemTerminate)
        device.advance(by: .seconds(15))
        #expect(device.process?.number == 2)
        #expect(device.process?.inBackground == true)
        #expect(DownloadDisk.handleEventsCalls == [Downloads.identifier])
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.finishedEvents == 1)
        #expect(transfers(device).last == "eventsHandled 1")
    }

    /// "If the user force-quits the app from the app switcher, the system cancels all of the
    /// session's background transfers": no download, no relaunch.
    @Test func swipingTheAppAwayCancelsItsDownloads() async throws {
        let (device, downloads) = try launched()
        _ = downloadFeed(downloads)
        device.terminate()
        device.advance(by: .seconds(60))
        #expect(device.process?.number == 1)
        #expect(DownloadDisk.files.isEmpty)
        #expect(
            transfers(device) == [
                "scheduled 1 \(Downloads.identifier)", "cancelled 1 \(Downloads.identifier) userTerminated",
            ])
    }

    /// With `sessionSendsLaunchEvents` false the finished download does not wake the suspended
    /// app ("the system automatically wakes up or launches the iOS app in the background when the
    /// session's tasks finish" only when true): the delegate hears of it when the user opens the app.
    @Test func withoutLaunchEventsTheDownloadWaitsForTheApp() async throws {
        let (device, downloads) = try launched()
        downloads.launchEvents = false
        _ = downloadFeed(downloads)
        device.sendToBackground()
        device.advance(by: .seconds(60))
        #expect(DownloadDisk.files.isEmpty)
        #expect(DownloadDisk.handleEventsCalls.isEmpty)
        #expect(device.appState == .suspended)
        device.bringToForeground()
        device.advance(by: .seconds(1))
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.finishedEvents == 0, "no events were handed to handleEventsForBackgroundURLSession")
    }

    /// Without a network the download fails and is retried after the scenario's retry time; a URL
    /// nobody serves completes with `cannotFindHost` in `didCompleteWithError`.
    @Test func withoutANetworkTheDownloadWaits() async throws {
        let (device, downloads) = try launched()
        device.perform(.setNetwork(false))
        _ = downloadFeed(downloads)
        downloads.session.downloadTask(with: URL(string: "https://nowhere.example/")!).resume()
        device.advance(by: .seconds(30))
        device.perform(.setNetwork(true))
        device.advance(by: .seconds(60))
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.errors == [.cannotFindHost])
        #expect(
            transfers(device).filter { $0.hasPrefix("failed") } == [
                "failed 1 \(Downloads.identifier) noNetwork", "failed 2 \(Downloads.identifier) noNetwork",
            ])
    }

    /// "Completion handler blocks are not supported in background sessions": iOS raises, and the
    /// app is terminated.
    @Test func aCompletionHandlerInABackgroundSessionIsAFatalError() async throws {
        let (device, downloads) = try launched()
        _ = downloads.session.downloadTask(with: URL(string: Self.feed)!) { _, _, _ in }
        #expect(device.process?.hasEnded == true)
        #expect(device.process?.endCause == .fatalError)
    }

    /// A relaunched app that asks its session for its tasks gets the downloads an earlier process
    /// started, with the same identifiers, and cancelling one ends its transfer.
    @Test func aRelaunchedAppFindsItsDownloadsAndCanCancelThem() async throws {
        let (device, first) = try launched { $0.system.transferDuration = .seconds(600) }
        _ = downloadFeed(first)
        device.sendToBackground()
        device.advance(by: .seconds(10))
        device.perform(.systemTerminate)
        device.relaunch()
        let second = try #require(device.appDelegate(as: DownloadAppDelegate.self)).downloads
        var found: [(Int, String?)] = []
        second.session.getAllTasks { tasks in
            MainActor.assumeIsolated {
                for task in tasks {
                    found.append((task.taskIdentifier, task.originalRequest?.url?.absoluteString))
                    task.cancel()
                }
            }
        }
        device.advance(by: .seconds(1))
        #expect(found.map(\.0) == [1])
        #expect(found.map(\.1) == [Self.feed])
        #expect(transfers(device).last == "cancelled 1 \(Downloads.identifier) app")
        #expect(DownloadDisk.errors == [.cancelled])
    }

    /// The `async` push handler's code runs in a task of its own: the session it makes belongs to
    /// the device all the same, and its download wakes the suspended app when it completes.
    @Test func aDownloadStartedInAnAsyncHandlerBelongsToTheDevice() async throws {
        DownloadDisk.reset()
        let device = try Self.device(PushDownloadAppDelegate.self) { $0.info.backgroundModes = [.remoteNotification] }
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(30))
        // The handler's code runs in a task of its own, not the test's, which created the device.
        device.perform(.push(contentAvailable: true))
        await device.idle()
        device.advance(by: .seconds(25))
        #expect(transfers(device).first == "scheduled 1 \(Downloads.identifier)")
        #expect(DownloadDisk.files == ["{\"items\":3}"])
        #expect(DownloadDisk.finishedEvents == 1)
    }

    /// A background session's data task and its download keep their own completions, though the
    /// download's identifier (its transfer's) may be one the session already gave the data task.
    @Test func aBackgroundSessionsTasksDoNotMixUp() async throws {
        let (device, downloads) = try launched()
        let data = downloads.session.dataTask(with: URL(string: Self.feed)!)
        data.resume()
        let download = downloadFeed(downloads)
        #expect(data.taskIdentifier == download.taskIdentifier, "the case this test is about")
        device.advance(by: .seconds(1))
        #expect(data.state == .completed)
        #expect(download.state == .running)
        device.advance(by: .seconds(20))
        #expect(download.state == .completed, "the download's own task completes")
        #expect(DownloadDisk.files == ["{\"items\":3}"])
    }
}
