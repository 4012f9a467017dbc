// waymark-bench layouts [--sizes 10,100] [--dir bench-out] [--waymark PATH] [--only NAME,…]
//
// GPX → GeoJSON on the point layouts of the writers people use (GPXLayouts): gpxlogger,
// Garmin Connect, Strava, OsmAnd, GPSLogger 1.0, a tab-and-CRLF minimal file and Apple Health,
// each generated at every size. Per layout and size: Waymark's wall time (the median of 3), MB/s,
// points/s and peak RSS, then gpsbabel and ogr2ogr on the same file in the same run, and how many
// times slower they are. The targets (issue 14): at 100 MB, 15× gpsbabel; 1 M points/s; 32 MiB.

import Foundation
import GPXLayouts

#if canImport(Glibc)
    import Glibc
#endif

enum LayoutBench {
    static func run(arguments: [String]) throws {
        var sizes = [10, 100]
        var dir = "bench-out"
        var waymark = ".build/release/waymark"
        var layouts = GPXLayout.allCases
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--sizes": sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--dir": dir = args.next() ?? dir
            case "--waymark": waymark = args.next() ?? waymark
            case "--only":
                let names = (args.next() ?? "").split(separator: ",").map(String.init)
                layouts = layouts.filter { names.contains($0.rawValue) }
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: waymark-bench layouts [--sizes 10,100] [--dir DIR] [--waymark PATH] [--only \(GPXLayout.allCases.map(\.rawValue).joined(separator: ","))]\n"
                            .utf8))
                exit(64)
            }
        }
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            FileHandle.standardError.write(Data("waymark-bench: \(waymark) not found; run scripts/bench.sh\n".utf8))
            exit(69)
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let hasGpsbabel = available("gpsbabel")
        let hasOgr = available("ogr2ogr")
        print("waymark-bench layouts: GPX → GeoJSON on the point layouts of common writers")
        print(
            "peers: gpsbabel \(hasGpsbabel ? "yes" : "not installed"), ogr2ogr \(hasOgr ? "yes" : "not installed")"
                + " (scripts/bench.sh --install-peers)")
        print("targets at 100 MB: ≥ 15× gpsbabel, ≥ 1 M points/s, ≤ 32 MiB peak RSS at any size")
        print("")
        print(
            [
                column("layout", 15), column("size", 7), column("points", 9), column("wall s", 7),
                column("MB/s", 7), column("Mpt/s", 6), column("RSS MiB", 8), column("gpsbabel", 9),
                column("×", 6), column("ogr2ogr", 8), column("×", 6),
            ].joined(separator: " "))
        for layout in layouts {
            for size in sizes {
                let input = "\(dir)/layout-\(layout.rawValue)-\(size)MB.gpx"
                let points = try generate(layout, path: input, bytes: size * 1_000_000)
                let bytes = Double((try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0)
                let out = "\(dir)/layout-out.geojson"
                var runs: [Measurement] = []
                for _ in 0..<3 {
                    runs.append(measure([waymark, "render", input, "--format", "geojson", "-o", out]))
                }
                let peak = runs.map(\.peakRSS).max() ?? 0
                runs.sort { $0.seconds < $1.seconds }
                let w = runs[1]
                var line = [
                    column(layout.title, 15), column("\(size) MB", 7), column("\(points)", 9),
                    column(String(format: "%.3f", w.seconds), 7),
                    column(String(format: "%.0f", bytes / 1e6 / w.seconds), 7),
                    column(String(format: "%.2f", Double(points) / w.seconds / 1e6), 6),
                    column(String(format: "%.1f", Double(peak) / 1_048_576), 8),
                ]
                if w.status != 0 { line.append("(waymark exit \(w.status))") }
                func peer(_ name: String, _ argv: [String], _ has: Bool) {
                    guard has else {
                        line += [column("-", name == "gpsbabel" ? 9 : 8), column("-", 6)]
                        return
                    }
                    try? FileManager.default.removeItem(atPath: out)
                    let m = measure(argv)
                    line += [
                        column(String(format: "%.2f s", m.seconds), name == "gpsbabel" ? 9 : 8),
                        column(m.status == 0 ? String(format: "%.1f", m.seconds / w.seconds) : "exit \(m.status)", 6),
                    ]
                }
                peer("gpsbabel", ["gpsbabel", "-i", "gpx", "-f", input, "-o", "geojson", "-F", out], hasGpsbabel)
                peer("ogr2ogr", ["ogr2ogr", "-f", "GeoJSON", out, input, "tracks"], hasOgr)
                try? FileManager.default.removeItem(atPath: out)
                print(line.joined(separator: " "))
                fflush(nil)
            }
        }
    }

    /// Generates the file (the same bytes every run); the number of points it has.
    static func generate(_ layout: GPXLayout, path: String, bytes: Int, segmentLength: Int = 3600) throws -> Int {
        guard let file = fopen(path + ".tmp", "w") else { throw POSIXError(.EIO) }
        let points = layout.generate(bytes: bytes, segmentLength: segmentLength) { fputs($0, file) }
        fclose(file)
        guard rename(path + ".tmp", path) == 0 else { throw POSIXError(.EIO) }
        return points
    }
}
