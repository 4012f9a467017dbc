#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AppInfo {
    /// The Info of an app's own `Info.plist` (XML or binary): `UIBackgroundModes`, the location
    /// usage descriptions, `NSLocationDefaultAccuracyReduced`,
    /// `NSLocationTemporaryUsageDescriptionDictionary`, `NSLocationRequireExplicitServiceSession`
    /// and `BGTaskSchedulerPermittedIdentifiers`. Other keys are left alone. `file` names the file
    /// in errors.
    public init(propertyList data: Data, file: String = "Info.plist") throws(InfoPlistError) {
        let plist: InfoPlist
        do {
            plist = try PropertyListDecoder().decode(InfoPlist.self, from: data)
        } catch {
            throw InfoPlistError(file: file, message: "not a property list this reader can read: \(error)")
        }
        var modes: BackgroundModes = []
        for name in plist.UIBackgroundModes ?? [] {
            guard let mode = BackgroundModes(name: name) else {
                throw InfoPlistError(
                    file: file,
                    message:
                        "UIBackgroundModes holds '\(name)', which Waymark does not model (it models location, fetch, remote-notification, audio and processing)"
                )
            }
            modes.insert(mode)
        }
        self.init(
            backgroundModes: modes,
            usageDescriptions: LocationUsageDescriptions(
                whenInUse: plist.NSLocationWhenInUseUsageDescription != nil,
                alwaysAndWhenInUse: plist.NSLocationAlwaysAndWhenInUseUsageDescription != nil,
                defaultsToReducedAccuracy: plist.NSLocationDefaultAccuracyReduced ?? false),
            temporaryUsageDescriptionKeys: plist.NSLocationTemporaryUsageDescriptionDictionary.map { Set($0.keys) })
        requiresExplicitServiceSession = plist.NSLocationRequireExplicitServiceSession ?? false
        taskSchedulerPermittedIdentifiers = plist.BGTaskSchedulerPermittedIdentifiers
    }

    /// Reads the `Info.plist` at `path`.
    public init(contentsOfPropertyList path: String) throws(InfoPlistError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InfoPlistError(file: path, message: "cannot read it: \(error)")
        }
        try self.init(propertyList: data, file: path)
    }

    /// The keys read, as an Info.plist spells them.
    private struct InfoPlist: Decodable {
        var UIBackgroundModes: [String]?
        var NSLocationWhenInUseUsageDescription: String?
        var NSLocationAlwaysAndWhenInUseUsageDescription: String?
        var NSLocationDefaultAccuracyReduced: Bool?
        var NSLocationTemporaryUsageDescriptionDictionary: [String: String]?
        var NSLocationRequireExplicitServiceSession: Bool?
        var BGTaskSchedulerPermittedIdentifiers: [String]?
    }
}

/// An `Info.plist` that cannot be read, or declares what Waymark cannot model.
public struct InfoPlistError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var message: String

    public var description: String { "\(file): \(message)" }
}
