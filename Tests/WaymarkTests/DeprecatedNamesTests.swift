import Foundation
import Testing

/// The app-facing names of the first rounds are deprecated in favour of Apple's spelling
/// (docs/layout.md, "One app-facing API"): code that uses them compiles, with a warning that
/// names the Apple-spelled type; the device's handle under its own name compiles without one.
/// Type-checked by the toolchain's compiler against the modules this build made.
@Suite(
    .enabled(
        if: which("swiftc") != nil
            && FileManager.default.fileExists(
                atPath: Paths.builtProducts.appendingPathComponent("Modules/Waymark.swiftmodule").path),
        "needs swiftc and the built Waymark module"))
struct DeprecatedNamesTests {
    func typecheck(_ source: String) throws -> ProcessResult {
        let file = temporaryPath(".swift")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let modules = Paths.builtProducts.appendingPathComponent("Modules").path
        return try run(which("swiftc")!, ["-typecheck", "-I", modules, file])
    }

    @Test func theOldNamesCompileWithAWarningNamingApplesSpelling() throws {
        let old = try typecheck(
            """
            import Waymark
            final class Model: LocationManagerDelegate {}
            func use(_ manager: LocationManager) { _ = manager }
            """)
        #expect(old.status == 0, "\(old.stderr)")
        #expect(
            old.stderr.contains("'LocationManager' is deprecated: app code: use CLLocationManager"), "\(old.stderr)")
        #expect(
            old.stderr.contains("'LocationManagerDelegate' is deprecated: app code: use CLLocationManagerDelegate"),
            "\(old.stderr)")

        let handle = try typecheck(
            """
            import Waymark
            final class Model: DeviceLocationManagerDelegate {}
            func use(_ manager: DeviceLocationManager) { _ = manager }
            """)
        #expect(handle.status == 0, "\(handle.stderr)")
        #expect(!handle.stderr.contains("warning"), "\(handle.stderr)")
    }
}
