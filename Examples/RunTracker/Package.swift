// swift-tools-version:6.2
// 6.2: the view model is the manager's delegate through an isolated conformance (SE-0470).
import PackageDescription

#if canImport(Foundation)
    import class Foundation.ProcessInfo
#endif

/// The Waymark package: the repository this example lives in, or WAYMARK_PATH when the example
/// is copied elsewhere.
let waymark = ProcessInfo.processInfo.environment["WAYMARK_PATH"] ?? "../.."

// A small run-tracking app's model, built on Waymark and tested with WaymarkTesting: the example
// that "Testing your app's location code" walks through.
let package = Package(
    name: "RunTracker",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "RunTracker", targets: ["RunTracker"])
    ],
    dependencies: [
        .package(name: "Waymark", path: waymark)
    ],
    targets: [
        .target(name: "RunTracker", dependencies: [.product(name: "Waymark", package: "Waymark")]),
        .testTarget(
            name: "RunTrackerTests",
            dependencies: [
                "RunTracker",
                .product(name: "Waymark", package: "Waymark"),
                .product(name: "WaymarkTesting", package: "Waymark"),
            ],
            resources: [.copy("Resources")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
