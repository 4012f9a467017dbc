import Foundation
import Testing

@testable import Waymark

/// The app's own Info.plist, read by the keys Apple spells: every key reaches the device's Info,
/// and a background mode Waymark does not model is an error that names it.
@Suite struct InfoPlistTests {
    static func plist(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>\(body)</dict></plist>
            """.utf8)
    }

    @Test func everyKeyIsRead() throws {
        let info = try AppInfo(
            propertyList: Self.plist(
                """
                <key>UIBackgroundModes</key><array><string>location</string><string>fetch</string></array>
                <key>NSLocationWhenInUseUsageDescription</key><string>to show the walk</string>
                <key>NSLocationAlwaysAndWhenInUseUsageDescription</key><string>to record it</string>
                <key>NSLocationDefaultAccuracyReduced</key><true/>
                <key>NSLocationTemporaryUsageDescriptionDictionary</key><dict><key>Nav</key><string>x</string></dict>
                <key>NSLocationRequireExplicitServiceSession</key><true/>
                <key>BGTaskSchedulerPermittedIdentifiers</key><array><string>app.refresh</string></array>
                """))
        #expect(info.backgroundModes == [.location, .fetch])
        #expect(info.usageDescriptions.whenInUse && info.usageDescriptions.alwaysAndWhenInUse)
        #expect(info.usageDescriptions.defaultsToReducedAccuracy)
        #expect(info.temporaryUsageDescriptionKeys == ["Nav"])
        #expect(info.requiresExplicitServiceSession)
        #expect(info.taskSchedulerPermittedIdentifiers == ["app.refresh"])
        let empty = try AppInfo(propertyList: Self.plist(""))
        #expect(empty.backgroundModes.isEmpty && !empty.usageDescriptions.whenInUse)
        #expect(!empty.requiresExplicitServiceSession && empty.taskSchedulerPermittedIdentifiers == nil)
    }

    @Test func aModeWaymarkDoesNotModelIsNamed() {
        #expect(throws: InfoPlistError.self) {
            try AppInfo(
                propertyList: Self.plist("<key>UIBackgroundModes</key><array><string>voip</string></array>"),
                file: "App/Info.plist")
        }
        do {
            _ = try AppInfo(
                propertyList: Self.plist("<key>UIBackgroundModes</key><array><string>voip</string></array>"))
        } catch {
            #expect(error.description.contains("'voip'"), "\(error)")
        }
    }
}
