// swift-tools-version:6.2
import PackageDescription

#if canImport(Foundation)
    import class Foundation.ProcessInfo
#endif

// Four small iOS apps, written against Apple's documented API in Apple's spelling, that compile
// unchanged on Linux and run on Waymark's simulated device, each with tests of what Apple's
// documentation says they do:
//   AlwaysTracker    location in the background under Always
//   FiniteTask       a finite background task, its expiry, and its reinstatement on becoming active
//   BackgroundFetch  background fetch and its three results
//   SilentPush       a silent push that wakes or relaunches the app and starts a background
//                    download, which wakes or relaunches it again when it completes
// On Apple's platforms the same files build against Apple's frameworks.

/// The Waymark package: the repository this example lives in, or WAYMARK_PATH when the example
/// is copied elsewhere.
let waymark = ProcessInfo.processInfo.environment["WAYMARK_PATH"] ?? "../.."

/// Apple's frameworks: Waymark's on Linux, Apple's elsewhere.
let apple: [Target.Dependency] = [
    .product(name: "CoreLocation", package: "Waymark", condition: .when(platforms: [.linux])),
    .product(name: "UIKit", package: "Waymark", condition: .when(platforms: [.linux])),
    .product(name: "BackgroundTasks", package: "Waymark", condition: .when(platforms: [.linux])),
]

let package = Package(
    name: "iOSApps",
    platforms: [.iOS(.v17), .macOS(.v14)],
    products: [
        .library(name: "AlwaysTracker", targets: ["AlwaysTracker"]),
        .library(name: "FiniteTask", targets: ["FiniteTask"]),
        .library(name: "BackgroundFetch", targets: ["BackgroundFetch"]),
        .library(name: "SilentPush", targets: ["SilentPush"]),
    ],
    dependencies: [.package(name: "Waymark", path: waymark)],
    targets: [
        .target(name: "AlwaysTracker", dependencies: apple),
        .target(name: "FiniteTask", dependencies: apple),
        .target(name: "BackgroundFetch", dependencies: apple),
        // On Linux every file of the target imports Waymark's UIKit, so that FeedDownloader.swift,
        // which imports Foundation alone as on iOS, finds URLSession (docs/porting.md).
        .target(
            name: "SilentPush", dependencies: apple,
            swiftSettings: [
                .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "UIKit"], .when(platforms: [.linux]))
            ]),
        // `swift run always-tracker walk.gpx --info-plist Info.plist --background-at 1m --audit run.ndjson`
        .executableTarget(
            name: "AlwaysTrackerRunner",
            dependencies: [
                "AlwaysTracker",
                .product(name: "WaymarkRunner", package: "Waymark", condition: .when(platforms: [.linux])),
            ]),
        .testTarget(
            name: "iOSAppsTests",
            dependencies: [
                "AlwaysTracker", "FiniteTask", "BackgroundFetch", "SilentPush",
                .product(name: "WaymarkTesting", package: "Waymark"),
            ] + apple,
            resources: [.copy("Resources")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
