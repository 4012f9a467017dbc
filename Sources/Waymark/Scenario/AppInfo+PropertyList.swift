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
        for name in plist.backgroundModes ?? [] {
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
                whenInUse: plist.whenInUseUsageDescription != nil,
                alwaysAndWhenInUse: plist.alwaysAndWhenInUseUsageDescription != nil,
                defaultsToReducedAccuracy: plist.defaultAccuracyReduced ?? false),
            temporaryUsageDescriptionKeys: plist.temporaryUsageDescriptionDictionary.map { Set($0.keys) })
        requiresExplicitServiceSession = plist.requireExplicitServiceSession ?? false
        taskSchedulerPermittedIdentifiers = plist.taskSchedulerPermittedIdentifiers
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

    /// The keys read; their coding keys are as an Info.plist spells them.
    private struct InfoPlist: Decodable {
        var backgroundModes: [String]?
        var whenInUseUsageDescription: String?
        var alwaysAndWhenInUseUsageDescription: String?
        var defaultAccuracyReduced: Bool?
        var temporaryUsageDescriptionDictionary: [String: String]?
        var requireExplicitServiceSession: Bool?
        var taskSchedulerPermittedIdentifiers: [String]?

        enum CodingKeys: String, CodingKey {
            case backgroundModes = "UIBackgroundModes"
            case whenInUseUsageDescription = "NSLocationWhenInUseUsageDescription"
            case alwaysAndWhenInUseUsageDescription = "NSLocationAlwaysAndWhenInUseUsageDescription"
            case defaultAccuracyReduced = "NSLocationDefaultAccuracyReduced"
            case temporaryUsageDescriptionDictionary = "NSLocationTemporaryUsageDescriptionDictionary"
            case requireExplicitServiceSession = "NSLocationRequireExplicitServiceSession"
            case taskSchedulerPermittedIdentifiers = "BGTaskSchedulerPermittedIdentifiers"
        }
    }
}

/// An `Info.plist` that cannot be read, or declares what Waymark cannot model.
public struct InfoPlistError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var message: String

    public var description: String { "\(file): \(message)" }
}
