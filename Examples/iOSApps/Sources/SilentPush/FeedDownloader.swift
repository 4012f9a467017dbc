// A file of the app that imports Foundation alone, as iOS code that uses URLSession does. On
// Linux, Foundation has no URLSession: the target imports Waymark's UIKit into every file
// (Package.swift, `-import-module UIKit`), which brings the simulated one (docs/porting.md).
import Foundation

/// Downloads the feed a push announces in a background URL session: the download goes on while
/// the app is suspended or terminated, and "when a background transfer completes … if your app is
/// no longer running, your app is automatically relaunched in the background, and the app's
/// UIApplicationDelegate is sent an application(_:handleEventsForBackgroundURLSession:
/// completionHandler:) message". Its delegate runs on the main queue.
public final class FeedDownloader: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is used on the main queue only (delegateQueue: .main).
    public static let sessionIdentifier = "com.example.silentpush.feed"
    public static let feedURL = URL(string: "https://example.com/feed.json")!

    /// The completion handler of `application(_:handleEventsForBackgroundURLSession:…)`, called
    /// once every event of the session has been delivered.
    var eventsCompletion: (() -> Void)?

    /// The background session: made again with the same identifier in a relaunched app, it is
    /// "automatically reassociated with ongoing background activity".
    lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.background(withIdentifier: Self.sessionIdentifier)
        configuration.sessionSendsLaunchEvents = true
        return URLSession(configuration: configuration, delegate: self, delegateQueue: .main)
    }()

    func downloadFeed() {
        session.downloadTask(with: Self.feedURL).resume()
    }

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        // The file is removed once this returns: read it (or move it) now.
        let feed = (try? String(contentsOf: location, encoding: .utf8)) ?? ""
        MainActor.assumeIsolated { PushLog.shared.downloaded(feed) }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        MainActor.assumeIsolated { PushLog.shared.failed(error) }
    }

    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        MainActor.assumeIsolated {
            guard let completion = eventsCompletion else { return }
            eventsCompletion = nil
            PushLog.shared.handledEvents()
            completion()
        }
    }
}
