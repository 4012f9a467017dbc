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
    public var isForeground: Bool { self == .active || self == .inactive }
}

/// The `UIBackgroundModes` an app declares in its Info.plist (the ones Waymark models).
public struct BackgroundModes: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `location`: the app may keep receiving location updates in the background.
    public static let location = BackgroundModes(rawValue: 1 << 0)
    /// `fetch`: the system may wake the app to fetch content.
    public static let fetch = BackgroundModes(rawValue: 1 << 1)

    /// The modes by their Info.plist names, in a fixed order.
    public var names: [String] {
        var names: [String] = []
        if contains(.location) { names.append("location") }
        if contains(.fetch) { names.append("fetch") }
        return names
    }

    /// The mode called `name` in an Info.plist (`location`, `fetch`), or nil.
    public init?(name: String) {
        switch name {
        case "location": self = .location
        case "fetch": self = .fetch
        default: return nil
        }
    }
}

/// What the simulated app's Info.plist declares.
public struct AppInfo: Sendable, Hashable, Codable {
    public var backgroundModes: BackgroundModes
    public var usageDescriptions: LocationUsageDescriptions

    public init(backgroundModes: BackgroundModes = [], usageDescriptions: LocationUsageDescriptions = .init()) {
        self.backgroundModes = backgroundModes
        self.usageDescriptions = usageDescriptions
    }
}
