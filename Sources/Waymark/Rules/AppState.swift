/// The life of the simulated app, as UIKit's `UIApplication.State` plus the two states UIKit
/// does not report to the app itself.
public enum AppState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not launched, or terminated (by the user, the watchdog or the system).
    case notRunning
    /// In the foreground and receiving events.
    case active
    /// In the foreground but not receiving events (a system alert, the app switcher).
    case inactive
    /// Running, but not on screen.
    case background
    /// In memory, not running: no code runs until the system resumes it.
    case suspended

    /// Active or inactive: the app is on screen, "in use".
    public var isForeground: Bool {
        switch self {
        case .active, .inactive: true
        default: false
        }
    }
}

/// The `UIBackgroundModes` an app declares in its Info.plist (the ones Waymark models).
public struct BackgroundModes: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `location`: the app may keep receiving location updates in the background.
    public static let location = BackgroundModes(rawValue: 1 << 0)
    /// `fetch`: the system may wake the app to fetch content (background fetch and
    /// `BGAppRefreshTask`).
    public static let fetch = BackgroundModes(rawValue: 1 << 1)
    /// `remote-notification`: background (`content-available`) pushes wake the app.
    public static let remoteNotification = BackgroundModes(rawValue: 1 << 2)
    /// `audio`: the app keeps running in the background while it plays audio.
    public static let audio = BackgroundModes(rawValue: 1 << 3)
    /// `processing`: the app may schedule `BGProcessingTask`s.
    public static let processing = BackgroundModes(rawValue: 1 << 4)

    private static let all: [(String, BackgroundModes)] = [
        ("location", .location), ("fetch", .fetch), ("remote-notification", .remoteNotification),
        ("audio", .audio), ("processing", .processing),
    ]

    /// Every mode's Info.plist name, in a fixed order.
    public static let allNames = all.map(\.0)

    /// The modes by their Info.plist names, in a fixed order.
    public var names: [String] { Self.all.filter { contains($0.1) }.map(\.0) }

    /// The mode called `name` in an Info.plist (`location`, `fetch`, `remote-notification`,
    /// `audio`, `processing`), or nil.
    public init?(name: String) {
        guard let mode = Self.all.first(where: { $0.0 == name })?.1 else { return nil }
        self = mode
    }
}

/// What the simulated app's Info.plist declares.
public struct AppInfo: Sendable, Hashable, Codable {
    public var backgroundModes: BackgroundModes
    public var usageDescriptions: LocationUsageDescriptions
    /// The keys of `NSLocationTemporaryUsageDescriptionDictionary`: the purposes a temporary full
    /// accuracy request may name; nil (the default) stands for an Info that has one for every
    /// purpose the app's code names.
    public var temporaryUsageDescriptionKeys: Set<String>?
    /// `NSLocationRequireExplicitServiceSession` (iOS 18): live updates need a `CLServiceSession`.
    public var requiresExplicitServiceSession = false
    /// `BGTaskSchedulerPermittedIdentifiers`: the identifiers the app may register and submit
    /// `BGTaskScheduler` tasks for; nil (the default) stands for an Info that permits every one the
    /// app's code names.
    public var taskSchedulerPermittedIdentifiers: [String]?

    public init(
        backgroundModes: BackgroundModes = [], usageDescriptions: LocationUsageDescriptions = .init(),
        temporaryUsageDescriptionKeys: Set<String>? = nil
    ) {
        self.backgroundModes = backgroundModes
        self.usageDescriptions = usageDescriptions
        self.temporaryUsageDescriptionKeys = temporaryUsageDescriptionKeys
    }
}
