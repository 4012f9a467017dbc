// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Waymark",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Waymark", targets: ["Waymark"]),
        .executable(name: "waymark", targets: ["WaymarkCLI"]),
        .executable(name: "waymark-bench", targets: ["WaymarkBench"]),
        .executable(name: "waymark-fuzz", targets: ["WaymarkFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // The library users import: model, XML tokenizer, GPX reader and writer, geodesy,
        // GeoJSON and text rendering.
        .target(name: "Waymark"),
        // The command-line tool.
        .executableTarget(
            name: "WaymarkCLI",
            dependencies: [
                "Waymark",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // Scenario files only; kept out of the library so that it links FoundationEssentials alone.
                .product(name: "Yams", package: "Yams"),
            ],
            path: "Sources/waymark"
        ),
        // Generates synthetic GPX and measures Waymark against gpsbabel and ogr2ogr.
        .executableTarget(name: "WaymarkBench", dependencies: ["Waymark"]),
        // libFuzzer target for the XML tokenizer and GPX reader; see README "Fuzzing".
        .target(name: "CFuzzShim"),
        .executableTarget(name: "WaymarkFuzz", dependencies: ["Waymark", "CFuzzShim"]),
        .testTarget(
            name: "WaymarkTests",
            dependencies: ["Waymark"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
