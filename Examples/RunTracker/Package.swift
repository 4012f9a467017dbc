// swift-tools-version:6.2
// 6.2: the view model is the manager's delegate through an isolated conformance (SE-0470).
import PackageDescription

// A small run-tracking app's model, built on Waymark and tested with WaymarkTesting: the example
// that "Testing your app's location code" walks through.
let package = Package(
    name: "RunTracker",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "RunTracker", targets: ["RunTracker"])
    ],
    dependencies: [
        // The Waymark repository this example lives in.
        .package(name: "Waymark", path: "../..")
    ],
    targets: [
        .target(name: "RunTracker", dependencies: [.product(name: "Waymark", package: "Waymark")]),
        .testTarget(
            name: "RunTrackerTests",
            dependencies: [
                "RunTracker",
                .product(name: "Waymark", package: "Waymark"),
                .product(name: "WaymarkTesting", package: "Waymark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
