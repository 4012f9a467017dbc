// waymark-bench replay-cli: `waymark replay` end to end (read, lay out, simulate, write NDJSON)
// against gpsbabel reading the same file (gpsbabel -i gpx … -o geojson) and `waymark render` of
// it, in the same run: fixes per second and peak RSS, on walks in every layout of GPXLayouts (the
// writers people use: gpxlogger, Garmin Connect with its TrackPointExtension, Strava, OsmAnd,
// GPSLogger, tabs and CRLF, Apple Health, and the engine's target walk: Garmin's extension with
// `<sat>` and `<hdop>`, in 4 segments) and a day with stops (one track, one segment). With
// `--peer PATH`, another waymark build (the previous commit's, main's) replays the same files in
// the same run, alternately, and the ratio says how much faster this one is. Each run is a child
// process (wait4's ru_maxrss); the time is the best of three.

import Foundation
import GPXLayouts
import Waymark

enum ReplayCLIBench {
    static func run(arguments: [String]) throws {
        var dir = "bench-out"
        var sizes = [500_000]
        var peer: String?
        var only: Set<String>?
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--dir": dir = args.next() ?? dir
            case "--points": sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--peer": peer = args.next()
            case "--only": only = Set((args.next() ?? "").split(separator: ",").map(String.init))
            default:
                print(
                    "usage: waymark-bench replay-cli [--dir bench-out] [--points 500000] [--peer OTHER-WAYMARK] "
                        + "[--only gpxlogger,garminConnect,day-with-stops]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("waymark").path
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            print("waymark-bench replay-cli: build the waymark product first (\(waymark) is missing)")
            exit(69)
        }
        if let peer, !FileManager.default.isExecutableFile(atPath: peer) {
            print("waymark-bench replay-cli: --peer \(peer) is not an executable")
            exit(64)
        }
        let hasGpsbabel = available("gpsbabel")
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        print("waymark-bench replay-cli: waymark replay --rate max --no-store --quiet --format ndjson -o FILE,")
        print("against gpsbabel -i gpx -f TRACE -o geojson -F FILE and waymark render --format geojson -o FILE")
        print("of the same trace\(peer.map { " and \($0) replay" } ?? ""), best of 3, child processes")
        if !hasGpsbabel { print("peer: gpsbabel not installed (scripts/bench.sh --install-peers)") }
        print("")
        print(
            "\(column("trace", 34))  \(column("replay fixes/s", 15))  \(column("RSS MiB", 8))  "
                + "\(column("render s", 9))  \(column("replay/render", 13))  \(column("gpsbabel s", 10))  "
                + "\(column("vs gpsbabel", 11))"
                + (peer == nil ? "" : "  \(column("peer fixes/s", 13))  \(column("× peer", 7))"))
        var worst = Double.infinity
        var worstRSS = 0
        for points in sizes {
            for layout in GPXLayout.allCases.map(\.rawValue) + ["day with stops"] {
                let name = layout.replacingOccurrences(of: " ", with: "-")
                if let only, !only.contains(name) { continue }
                let path = "\(dir)/replay-cli-\(name)-\(points).gpx"
                if !FileManager.default.fileExists(atPath: path) {
                    FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
                    if let writer = GPXLayout(rawValue: layout) {
                        try generate(writer, path: path, points: points)
                    } else {
                        try ReplayBench.generateDay(path: path, seconds: points)
                    }
                }
                let out = "\(dir)/replay-cli-out"
                let replayArguments = [
                    "replay", path, "--rate", "max", "--no-store", "--quiet", "--format", "ndjson", "-o", out,
                ]
                // This build and the peer alternately, so that a busy machine weighs on both alike.
                let (replay, peerReplay) = bestAlternately(
                    [waymark] + replayArguments, peer.map { [$0] + replayArguments })
                let render = best([waymark, "render", path, "--format", "geojson", "-o", out])
                let gpsbabel =
                    hasGpsbabel ? best(["gpsbabel", "-i", "gpx", "-f", path, "-o", "geojson", "-F", out]) : nil
                guard replay.status == 0, render.status == 0, peerReplay?.status ?? 0 == 0 else {
                    print(
                        "\(layout) \(points): waymark exited \(replay.status) / \(render.status)"
                            + (peerReplay.map { ", the peer \($0.status)" } ?? ""))
                    continue
                }
                let rate = Double(points) / replay.seconds
                worst = min(worst, rate)
                worstRSS = max(worstRSS, replay.peakRSS)
                print(
                    "\(column("\(GPXLayout(rawValue: layout)?.title ?? layout), \(points / 1000) k points", 34))  \(column(String(format: "%.0f", rate), 15))  "
                        + "\(column(String(format: "%.1f", Double(replay.peakRSS) / 1_048_576), 8))  "
                        + "\(column(String(format: "%.3f", render.seconds), 9))  "
                        + "\(column(String(format: "%.1f×", replay.seconds / render.seconds), 13))  "
                        + "\(column(gpsbabel.map { String(format: "%.2f", $0.seconds) } ?? "-", 10))  "
                        + "\(column(gpsbabel.map { String(format: "%.1f× faster", $0.seconds / replay.seconds) } ?? "-", 11))"
                        + (peerReplay.map {
                            "  \(column(String(format: "%.0f", Double(points) / $0.seconds), 13))  "
                                + "\(column(String(format: "%.2f×", $0.seconds / replay.seconds), 7))"
                        } ?? ""))
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
        // The target walk (issue 25) has 4 segments; the other layouts pause every hour. The
        // file is made to a length in bytes, so its count of points is near `points`, not
        // exactly it: the segments are 2 % longer than a quarter, and the last the shortest.
        let segmentLength = layout == .garminWithFixQuality ? points / 4 + points / 50 : 3600
        _ = try LayoutBench.generate(layout, path: path, bytes: bytes, segmentLength: segmentLength)
    }

    /// The fastest of three runs of `argv` and of `peer`, run alternately, with the largest peak
    /// RSS seen.
    static func bestAlternately(_ argv: [String], _ peer: [String]?) -> (Measurement, Measurement?) {
        guard let peer else { return (best(argv), nil) }
        var result = Measurement(seconds: .infinity, peakRSS: 0, status: 0)
        var peerResult = result
        for _ in 0..<3 {
            for (command, target) in [(argv, 0), (peer, 1)] {
                let m = measure(command)
                if m.status != 0 { return target == 0 ? (m, peerResult) : (result, m) }
                if target == 0 {
                    result.seconds = min(result.seconds, m.seconds)
                    result.peakRSS = max(result.peakRSS, m.peakRSS)
                } else {
                    peerResult.seconds = min(peerResult.seconds, m.seconds)
                    peerResult.peakRSS = max(peerResult.peakRSS, m.peakRSS)
                }
            }
        }
        return (result, peerResult)
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
