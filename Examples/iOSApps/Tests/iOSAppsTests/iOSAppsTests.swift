import AlwaysTracker
import BackgroundFetch
import CoreLocation
import FiniteTask
import Foundation
import SilentPush
import Testing
import UIKit
import Waymark
import WaymarkTesting

/// The walk every test plays: a fix every 5 s for 15 minutes (the package's own copy).
let walk = Bundle.module.path(forResource: "walk", ofType: "gpx", inDirectory: "Resources")!
let trackerInfo = Bundle.module.path(forResource: "AlwaysTracker-Info", ofType: "plist", inDirectory: "Resources")!

func scenario(_ build: (inout Scenario) -> Void = { _ in }) -> Scenario {
    var s = Scenario()
    s.device.authorization = .notDetermined
    s.app.launchAt = nil
    build(&s)
    return s
}

@MainActor @Suite(.serialized) struct AlwaysTrackerTests {
    /// iOS asks When In Use first ("Allow While Using" grants Always provisionally); updates
    /// started in use go on in the background with the location indicator, which keeps the app in
    /// use, so no second prompt is needed for them. The significant-change service delivers its
    /// first location to the same delegate method.
    @Test func itAsksWhenInUseAndTracksInTheBackground() throws {
        TrackStore.shared.erase()
        let device = try TestDevice(
            app: TrackerAppDelegate.self, scenario: scenario(), infoPlist: trackerInfo,
            trace: TraceSource.gpx(contentsOf: walk))
        device.launch()
        device.appDelegate(as: TrackerAppDelegate.self)?.tracker?.start()
        #expect(device.prompt == .authorization(.whenInUse(forAlways: true)))
        device.tap(.allowWhileUsing)
        device.advance(by: .seconds(60))
        #expect(device.fixes(reason: .foreground).count == 13)
        #expect(TrackStore.shared.points.count == 14, "13 fixes and the first significant change")
        device.sendToBackground()
        device.advance(by: .seconds(120))
        #expect(device.prompt == nil)
        let background = device.fixes(reason: .backgroundSession)
        #expect(background.count == 24, "every fix from 65 s to 180 s")
        #expect(background.allSatisfy { $0.indicator })
        #expect(TrackStore.shared.states.filter { $0 == .background }.count == background.count)
    }

    /// Ended by the system, the app is relaunched into the background by the significant-change
    /// service, resumes it, and records again.
    @Test func aLocationEventRelaunchesIt() throws {
        TrackStore.shared.erase()
        let device = try TestDevice(
            app: TrackerAppDelegate.self, scenario: scenario { $0.device.authorization = .authorizedAlways },
            infoPlist: trackerInfo, trace: TraceSource.gpx(contentsOf: walk))
        device.launch()
        device.appDelegate(as: TrackerAppDelegate.self)?.tracker?.start()
        device.advance(by: .seconds(30))
        device.sendToBackground()
        device.advance(by: .seconds(10))
        device.perform(.systemTerminate)
        let before = TrackStore.shared.points.count
        device.runToEnd()
        #expect(device.process?.number == 2)
        #expect(device.process?.cause == .significantLocationChange)
        #expect(TrackStore.shared.points.count > before, "the relaunched app records the change")
    }
}

@MainActor @Suite(.serialized) struct FiniteTaskTests {
    /// A task begun in the foreground gives the next stay in the background its time (30 s from
    /// iOS 13); the expiration handler runs shortly before it runs out and ends the task, so the
    /// app is suspended, not killed.
    @Test func theTaskExpiresAndIsEndedInTime() throws {
        TaskLog.shared.erase()
        let device = try TestDevice(
            app: FiniteTaskAppDelegate.self, scenario: scenario { $0.device.authorization = .authorizedWhenInUse },
            trace: TraceSource.gpx(contentsOf: walk))
        device.launch()
        #expect(TaskLog.shared.events == ["began"])
        device.sendToBackground()
        #expect(TaskLog.shared.events.last == "background, 30 s left")
        device.advance(by: .seconds(26))
        #expect(TaskLog.shared.events.suffix(2) == ["expiring", "ended"])
        device.advance(by: .seconds(10))
        #expect(device.appState == .suspended)
        #expect(device.events(named: "terminated").isEmpty)
    }

    /// Becoming active again begins a new task: the next stay in the background has its time
    /// again (without it, the second exit would have none).
    @Test func becomingActiveReinstatesTheTask() throws {
        TaskLog.shared.erase()
        let device = try TestDevice(
            app: FiniteTaskAppDelegate.self, scenario: scenario { $0.device.authorization = .authorizedWhenInUse },
            trace: TraceSource.gpx(contentsOf: walk))
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(40))
        device.bringToForeground()
        #expect(TaskLog.shared.events.filter { $0 == "began" }.count == 2)
        device.sendToBackground()
        #expect(TaskLog.shared.events.last == "background, 30 s left")
    }
}

@MainActor @Suite(.serialized) struct BackgroundFetchTests {
    /// "Call the completion handler … with newData, noData or failed": each reaches the audit log.
    @Test(arguments: [Inbox.Server.new(3), .empty, .down].enumerated().map { $0 })
    func fetchReportsWhatItFound(_ item: (offset: Int, element: Inbox.Server)) throws {
        Inbox.shared.erase()
        Inbox.shared.server = item.element
        let device = try TestDevice(
            app: FetchAppDelegate.self,
            scenario: scenario {
                $0.device.authorization = .authorizedWhenInUse
                $0.info.backgroundModes = [.fetch]
                $0.system.minimumFetchInterval = .seconds(60)
            }, trace: TraceSource.gpx(contentsOf: walk))
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(120))
        let results = device.events(named: "fetch").compactMap { e -> String? in
            if case .fetch(.completed, let result, _, _, _) = e.kind { result?.rawValue } else { nil }
        }
        #expect(results.first == ["newData", "noData", "failed"][item.offset])
        #expect(Inbox.shared.messages == (item.offset == 0 ? 3 : 0))
    }
}

@MainActor @Suite(.serialized) struct SilentPushTests {
    static let feed = "{\"headline\":\"road works on the B2\"}"

    func device() throws -> TestDevice {
        let device = try TestDevice(
            app: PushAppDelegate.self,
            scenario: scenario {
                $0.device.authorization = .authorizedWhenInUse
                $0.info.backgroundModes = [.remoteNotification]
            }, trace: TraceSource.gpx(contentsOf: walk))
        device.network.serve(FeedDownloader.feedURL.absoluteString, text: Self.feed)
        return device
    }

    /// What the audit log says of the app's background download, as `action task`.
    func transfers(_ device: TestDevice) -> [String] {
        device.events(named: "transfer").compactMap { e in
            if case .transfer(let action, let task, _, _, _, _) = e.kind { "\(action.rawValue) \(task)" } else { nil }
        }
    }

    /// A silent push wakes the suspended app; its async handler's result is the push's, and the
    /// download it starts goes on while the app is suspended again. When the download completes
    /// the app is woken for its session's events ("if your app is no longer running, your app is
    /// automatically relaunched in the background, and the app's UIApplicationDelegate is sent an
    /// application(_:handleEventsForBackgroundURLSession:completionHandler:) message"), reads the
    /// file, and calls the completion handler once its session has delivered everything.
    @Test func aPushWakesTheSuspendedAppAndItsDownloadWakesItAgain() async throws {
        PushLog.shared.erase()
        let device = try device()
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(30))
        #expect(device.appState == .suspended)
        device.perform(.push(contentAvailable: true))
        await device.idle()
        #expect(PushLog.shared.handled == [false])
        #expect(device.events(named: "push").count == 2)
        #expect(transfers(device) == ["scheduled 1"])
        device.advance(by: .seconds(10))
        #expect(device.appState == .suspended)
        #expect(PushLog.shared.feeds.isEmpty, "the download takes the scenario's 20 s")
        device.advance(by: .seconds(15))
        #expect(PushLog.shared.feeds == [Self.feed])
        #expect(PushLog.shared.eventsHandled == 1)
        #expect(transfers(device) == ["scheduled 1", "completed 1", "eventsHandled 1"])
        #expect(device.process?.number == 1)
        #expect(device.appState == .suspended)
    }

    /// Ended by the system, the app is relaunched by the push into the background, with the push
    /// in its launch options, and handles it. Ended again while its download runs, it is
    /// relaunched once more when the download completes: the new process makes its background
    /// session again with the same identifier ("The newly created session is automatically
    /// reassociated with ongoing background activity") and receives the file.
    @Test func aPushRelaunchesTheAppAndSoDoesItsDownload() async throws {
        PushLog.shared.erase()
        let device = try device()
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(30))
        device.perform(.systemTerminate)
        device.perform(.push(contentAvailable: true))
        await device.idle()
        #expect(device.process?.number == 2 && device.process?.inBackground == true)
        #expect(PushLog.shared.launchedByPush == 1)
        #expect(PushLog.shared.handled == [true])
        device.advance(by: .seconds(5))
        device.perform(.systemTerminate)
        device.advance(by: .seconds(20))
        #expect(device.process?.number == 3 && device.process?.inBackground == true)
        #expect(PushLog.shared.feeds == [Self.feed])
        #expect(PushLog.shared.eventsHandled == 1)
        #expect(transfers(device) == ["scheduled 1", "completed 1", "eventsHandled 1"])
    }

    /// Swiped away by the user, the app loses its download: "the system cancels all of the
    /// session's background transfers", and does not relaunch it.
    @Test func swipingTheAppAwayCancelsItsDownload() async throws {
        PushLog.shared.erase()
        let device = try device()
        device.launch()
        device.sendToBackground()
        device.advance(by: .seconds(30))
        device.perform(.push(contentAvailable: true))
        await device.idle()
        device.terminate()
        device.advance(by: .seconds(60))
        #expect(PushLog.shared.feeds.isEmpty)
        #expect(transfers(device) == ["scheduled 1", "cancelled 1"])
        #expect(device.process?.number == 1)
    }
}
