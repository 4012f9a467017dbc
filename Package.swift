// swift-tools-version:6.2
import PackageDescription

/// The target of a product named as Apple's framework `name`: the module of that name on Linux,
/// Waymark's own (`Waymark` + name) where Apple's framework exists.
func appleNamed(_ name: String) -> String {
    #if os(Linux)
        return name
    #else
        return "Waymark" + name
    #endif
}

let package = Package(
    name: "Waymark",
    // macOS 14 and iOS 17: AsyncStream.makeStream; Duration and Clock need macOS 13, iOS 16.
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Waymark", targets: ["Waymark"]),
        .library(name: "WaymarkTesting", targets: ["WaymarkTesting"]),
        .library(name: "WaymarkStore", targets: ["WaymarkStore"]),
        .library(name: "WaymarkGPSD", targets: ["WaymarkGPSD"]),
        // Apple's frameworks as Apple spells them, on the simulated device (docs/porting.md).
        .library(name: "WaymarkCoreLocation", targets: ["WaymarkCoreLocation"]),
        .library(name: "WaymarkUIKit", targets: ["WaymarkUIKit"]),
        .library(name: "WaymarkBackgroundTasks", targets: ["WaymarkBackgroundTasks"]),
        // The same under Apple's module names, so that `import CoreLocation` compiles unchanged: on
        // Linux only (a package depends on them with `condition: .when(platforms: [.linux])`); on
        // Apple's platforms the names are Apple's frameworks and these products are Waymark's.
        .library(name: "CoreLocation", targets: [appleNamed("CoreLocation")]),
        .library(name: "UIKit", targets: [appleNamed("UIKit")]),
        .library(name: "BackgroundTasks", targets: [appleNamed("BackgroundTasks")]),
        .executable(name: "waymark", targets: ["WaymarkTool"]),
        // `waymark replay` for a team's own app: WaymarkRunner.main(app: AppDelegate.self).
        .library(name: "WaymarkRunner", targets: ["WaymarkRunner"]),
        .executable(name: "waymark-bench", targets: ["WaymarkBench"]),
        .executable(name: "waymark-fuzz", targets: ["WaymarkFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The library users import: model, XML tokenizer, GPX reader and writer, geodesy,
        // GeoJSON and text rendering.
        .target(name: "Waymark"),
        // Test doubles for apps that use Waymark, shipped like swift-log's InMemoryLogging: a manual
        // clock, replay sources built from a trace or a list of coordinates, and a device to step.
        .target(name: "WaymarkTesting", dependencies: ["Waymark", "WaymarkUIKit"]),
        // CoreLocation as Apple spells it, on the simulated device: an iOS source file that
        // imports CoreLocation compiles unchanged (docs/porting.md).
        .target(name: "WaymarkCoreLocation", dependencies: ["Waymark"]),
        // UIApplication's lifecycle and background execution, and the app delegate, as Apple
        // spells them.
        .target(name: "WaymarkUIKit", dependencies: ["Waymark"]),
        // BGTaskScheduler as Apple spells it.
        .target(name: "WaymarkBackgroundTasks", dependencies: ["Waymark", "WaymarkUIKit"]),
        // libgps (gpsd's C client library, Debian libgps-dev) and a small shim for what Swift
        // cannot import; only WaymarkGPSD imports it.
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        // The live source: a gpsd connection on its own thread, TPV mapping, one fix per epoch.
        .target(name: "WaymarkGPSD", dependencies: ["Waymark", "CGPS"]),
        // The session store: SQLite through GRDB (Debian libsqlite3-dev), WAL, versioned migrations.
        .target(
            name: "WaymarkStore",
            dependencies: [
                "Waymark",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The C API, for binding the hot insert statements without boxing values.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // Fleets: sessions in PostgreSQL with PostGIS (docs/fleet.md), through postgres-nio; store
        // and forward from the local SQLite store, idempotent by session UUID and sequence number.
        .target(
            name: "WaymarkPostGIS",
            dependencies: [
                "Waymark", "WaymarkStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The command-line tool's commands, as a library: the `waymark` executable and
        // WaymarkRunner share them.
        .target(
            name: "WaymarkCLI",
            dependencies: [
                "Waymark",
                "WaymarkGPSD",
                "WaymarkStore",
                "WaymarkPostGIS",
                "WaymarkScenarioFile",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The `waymark` executable.
        .executableTarget(
            name: "WaymarkTool",
            dependencies: ["WaymarkCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Runs a team's own app (its UIApplicationDelegate) under `waymark replay`'s options.
        .target(name: "WaymarkRunner", dependencies: ["WaymarkCLI", "WaymarkUIKit", "Waymark"]),
        // Scenario files (YAML through Yams), for the command line and the fuzzer; kept out of the
        // library so that it links FoundationEssentials alone.
        .target(name: "WaymarkScenarioFile", dependencies: ["Waymark", .product(name: "Yams", package: "Yams")]),
        // Generates synthetic GPX and measures Waymark against gpsbabel and ogr2ogr.
        .executableTarget(
            name: "WaymarkBench",
            dependencies: ["Waymark", "WaymarkGPSD", "WaymarkStore", "WaymarkPostGIS", "GPXLayouts"]),
        // The point layouts of common GPX writers, generated at any size (benchmark and tests).
        .target(name: "GPXLayouts", dependencies: ["Waymark"]),
        // libFuzzer targets: the GPX reader, the writers, scenario files, gpsd's reports, and the
        // NMEA and gpsd capture readers; see docs/testing.md, "Fuzzing".
        .target(name: "CFuzzShim"),
        .executableTarget(
            name: "WaymarkFuzz", dependencies: ["Waymark", "WaymarkGPSD", "WaymarkScenarioFile", "CFuzzShim"]),
        .testTarget(
            name: "WaymarkTests",
            dependencies: [
                "Waymark", "WaymarkGPSD", "WaymarkStore", "WaymarkPostGIS", "WaymarkTesting", "GPXLayouts",
                "WaymarkCoreLocation",
                "WaymarkUIKit", "WaymarkBackgroundTasks", "WaymarkScenarioFile",
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

#if os(Linux)
    // Apple's module names, on Linux only (see the products).
    package.targets += [
        .target(name: "CoreLocation", dependencies: ["WaymarkCoreLocation"]),
        .target(name: "UIKit", dependencies: ["WaymarkUIKit", "_Testing_UIKit"]),
        // Swift Testing's cross-import overlay for UIKit, empty: see the file.
        .target(name: "_Testing_UIKit"),
        .target(name: "BackgroundTasks", dependencies: ["WaymarkBackgroundTasks"]),
    ]
#endif
