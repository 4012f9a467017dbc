// waymark-bench replay-cli: `waymark replay` end to end (read, lay out, simulate, write NDJSON)
// against `waymark render` of the same file in the same run: fixes per second and peak RSS, on
// walks in every layout of GPXLayouts (the writers people use: gpxlogger, Garmin Connect with its
// TrackPointExtension, Strava, OsmAnd, GPSLogger, tabs and CRLF, Apple Health) and a day with
// stops. Each run is a child process (wait4's ru_maxrss); the time is the best of three.

import Foundation
import GPXLayouts
import Waymark

enum ReplayCLIBench {
    static func run(arguments: [String]) throws {
        var dir = "bench-out"
        var sizes = [500_000]
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--dir": dir = args.next() ?? dir
            case "--points": sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            default:
                print("usage: waymark-bench replay-cli [--dir bench-out] [--points 500000]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("waymark").path
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            print("waymark-bench replay-cli: build the waymark product first (\(waymark) is missing)")
            exit(69)
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        print("waymark-bench replay-cli: waymark replay --rate max --no-store --quiet --format ndjson -o FILE,")
        print("against waymark render --format geojson -o FILE of the same trace, best of 3, child processes")
        print("")
        print(
            "\(column("trace", 34))  \(column("replay fixes/s", 15))  \(column("RSS MiB", 8))  "
                + "\(column("render s", 9))  \(column("RSS MiB", 8))  \(column("replay/render", 13))")
        var worst = Double.infinity
        var worstRSS = 0
        for points in sizes {
            for layout in GPXLayout.allCases.map(\.rawValue) + ["day with stops"] {
                let path = "\(dir)/replay-cli-\(layout.replacingOccurrences(of: " ", with: "-"))-\(points).gpx"
                if !FileManager.default.fileExists(atPath: path) {
                    FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
                    if let writer = GPXLayout(rawValue: layout) {
                        try generate(writer, path: path, points: points)
                    } else {
                        try ReplayBench.generateDay(path: path, seconds: points)
                    }
                }
                let out = "\(dir)/replay-cli-out"
                let replay = best([
                    waymark, "replay", path, "--rate", "max", "--no-store", "--quiet", "--format", "ndjson", "-o", out,
                ])
                let render = best([waymark, "render", path, "--format", "geojson", "-o", out])
                guard replay.status == 0, render.status == 0 else {
                    print("\(layout) \(points): waymark exited \(replay.status) / \(render.status)")
                    continue
                }
                let rate = Double(points) / replay.seconds
                worst = min(worst, rate)
                worstRSS = max(worstRSS, replay.peakRSS)
                print(
                    "\(column("\(GPXLayout(rawValue: layout)?.title ?? layout), \(points / 1000) k points", 34))  \(column(String(format: "%.0f", rate), 15))  "
                        + "\(column(String(format: "%.1f", Double(replay.peakRSS) / 1_048_576), 8))  "
                        + "\(column(String(format: "%.3f", render.seconds), 9))  "
                        + "\(column(String(format: "%.1f", Double(render.peakRSS) / 1_048_576), 8))  "
                        + "\(column(String(format: "%.1f×", replay.seconds / render.seconds), 13))")
                try? FileManager.default.removeItem(atPath: out)
            }
        }
        print("")
        print(
            String(
                format: "slowest: %.0f fixes/s (target ≥ 500 000); largest peak RSS: %.1f MiB (target ≤ 64)", worst,
                Double(worstRSS) / 1_048_576))
    }

    /// A walk of about `points` points in `layout`: the generator's size for that many, from the
    /// points a 1 MB sample holds.
    static func generate(_ layout: GPXLayout, path: String, points: Int) throws {
        let sample = layout.generate(bytes: 1_000_000) { _ in }
        let bytes = Int(Double(points) / Double(max(1, sample)) * 1_000_000)
        _ = try LayoutBench.generate(layout, path: path, bytes: bytes)
    }

    /// The fastest of three runs, with the largest peak RSS seen.
    static func best(_ argv: [String]) -> Measurement {
        var result = Measurement(seconds: .infinity, peakRSS: 0, status: 0)
        for _ in 0..<3 {
            let m = measure(argv)
            if m.status != 0 { return m }
            result.seconds = min(result.seconds, m.seconds)
            result.peakRSS = max(result.peakRSS, m.peakRSS)
        }
        return result
    }
}
