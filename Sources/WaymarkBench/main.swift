// waymark-bench: GPX → GeoJSON throughput and memory, Waymark against gpsbabel and ogr2ogr,
// measured in the same run on the same synthetic files. Run it with scripts/bench.sh. Waymark's
// time is the median of several runs (its peak RSS the largest); each peer runs once.
//
// usage: waymark-bench [--sizes 10,100,1000] [--dir bench-out] [--waymark PATH] [--keep]
//        waymark-bench replay [--hours 24]   (see ReplayBench.swift)
//        waymark-bench stream [--points 100000,500000]  (see StreamBench.swift)
//        waymark-bench record [--seconds 60]  (see RecordBench.swift)
//        waymark-bench store [--points 1000000]  (see StoreBench.swift)
//        waymark-bench postgis --store URL  (see PostGISBench.swift; scripts/bench-postgis.sh)
//        waymark-bench parts FILE.gpx  (see PartsBench.swift)
//        waymark-bench layouts [--sizes 10,100]  (see LayoutBench.swift)
//        waymark-bench nmea [--sizes 10,100]     (see NMEABench.swift)
//        waymark-bench formats [--points 200000]  (see FormatsBench.swift)
//        waymark-bench serve [--clients 100] [--seconds 30]  (see ServeBench.swift)
//   sizes are in MB (10⁶ bytes). Files are generated once and reused while their size matches.

import Foundation
import GPXLayouts
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

struct Options {
    var sizes: [Int] = [10, 100, 1000]
    var dir = "bench-out"
    var waymark = ".build/release/waymark"
    var keep = false
}

func parseOptions() -> Options {
    var o = Options()
    var args = CommandLine.arguments.dropFirst().makeIterator()
    while let a = args.next() {
        switch a {
        case "--sizes": o.sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
        case "--dir": o.dir = args.next() ?? o.dir
        case "--waymark": o.waymark = args.next() ?? o.waymark
        case "--keep": o.keep = true
        case "-h", "--help":
            print("usage: waymark-bench [--sizes 10,100,1000] [--dir bench-out] [--waymark PATH] [--keep]")
            exit(0)
        default:
            FileHandle.standardError.write(Data("waymark-bench: unknown argument \(a)\n".utf8))
            exit(64)
        }
    }
    return o
}

/// Writes a GPX 1.1 track like a sports watch records: 1 Hz points with 7-decimal coordinates,
/// elevation, time and a heart-rate extension, a new segment every 3 600 points (a pause).
func generate(path: String, bytes target: Int) throws {
    guard let file = fopen(path, "w") else { throw POSIXError(.EIO) }
    defer { fclose(file) }
    var rng = SplitMix64(seed: 1)
    var written = 0
    func put(_ s: String) {
        fputs(s, file)
        written += s.utf8.count
    }
    put(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="waymark-bench" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
          <trk><name>Synthetic ride</name>
            <trkseg>

        """)
    var lat = 47.3769
    var lon = 8.5417
    var ele = 408.0
    var heading = 0.0
    var t = 1_714_550_400  // 2024-05-01T08:00:00Z
    var i = 0
    let closing = "    </trkseg>\n  </trk>\n</gpx>\n"
    while written + closing.utf8.count < target {
        heading += (rng.unit() - 0.5) * 0.3
        lat += cos(heading) * 0.00005
        lon += sin(heading) * 0.00007
        ele += (rng.unit() - 0.5) * 0.8
        let hr = 110 + Int(rng.unit() * 50)
        put(
            "      <trkpt lat=\"\(ValueFormatting.fixed(lat, decimals: 7))\" lon=\"\(ValueFormatting.fixed(lon, decimals: 7))\">"
                + "<ele>\(ValueFormatting.fixed(ele, decimals: 1))</ele><time>\(iso(t))</time>"
                + "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(hr)</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions></trkpt>\n"
        )
        t += 1
        i += 1
        if i % 3600 == 0 {
            t += 300
            put("    </trkseg>\n    <trkseg>\n")
        }
    }
    put(closing)
}

func iso(_ t: Int) -> String {
    let s = ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(t)))
    return String(s.prefix(19)) + "Z"
}

struct Measurement {
    var seconds: Double
    var peakRSS: Int  // bytes
    var status: Int32
}

/// Runs a command, returns wall time and the child's peak resident set size (wait4's ru_maxrss).
func measure(_ argv: [String]) -> Measurement {
    var pid: pid_t = 0
    var fileActions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&fileActions)
    posix_spawn_file_actions_addopen(&fileActions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&fileActions, 2, "/dev/null", O_WRONLY, 0)
    defer { posix_spawn_file_actions_destroy(&fileActions) }
    var cArgs = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    let clock = ContinuousClock()
    let start = clock.now
    guard posix_spawnp(&pid, argv[0], &fileActions, nil, &cArgs, environ) == 0 else {
        return Measurement(seconds: 0, peakRSS: 0, status: 127)
    }
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return Measurement(seconds: seconds, peakRSS: Int(usage.ru_maxrss) * 1024, status: exitStatus)
}

func available(_ tool: String) -> Bool {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        if FileManager.default.isExecutableFile(atPath: "\(dir)/\(tool)") { return true }
    }
    return false
}

func column(_ s: String, _ w: Int) -> String {
    s.count >= w ? s : String(repeating: " ", count: w - s.count) + s
}

if CommandLine.arguments.dropFirst().first == "parts" {
    try PartsBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "nmea" {
    try NMEABench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "serve" {
    try ServeBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "formats" {
    try FormatsBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "layouts" {
    try LayoutBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "record" {
    try await RecordBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "postgis" {
    try await PostGISBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "store" {
    try await StoreBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "replay-cli" {
    try ReplayCLIBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "stream" {
    try StreamBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "replay" {
    try await ReplayBench.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

let options = parseOptions()
guard FileManager.default.isExecutableFile(atPath: options.waymark) else {
    FileHandle.standardError.write(
        Data("waymark-bench: \(options.waymark) not found; run `swift build -c release` first\n".utf8))
    exit(69)
}
try? FileManager.default.createDirectory(atPath: options.dir, withIntermediateDirectories: true)
let hasGpsbabel = available("gpsbabel")
let hasOgr = available("ogr2ogr")
print("waymark-bench: GPX → GeoJSON, synthetic 1 Hz track with elevation, time and heart rate")
print(
    "peers: gpsbabel \(hasGpsbabel ? "yes" : "not installed (apt-get install gpsbabel)"), "
        + "ogr2ogr \(hasOgr ? "yes" : "not installed (apt-get install gdal-bin)")")
print("")
print(
    "\(column("size", 8))  \(column("tool", 9))  \(column("wall s", 8))  \(column("MB/s", 8))  \(column("peak RSS", 10))  waymark speed-up"
)

for size in options.sizes {
    let input = "\(options.dir)/synthetic-\(size)MB.gpx"
    let bytes = size * 1_000_000
    let existing = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
    if existing == nil || abs(existing! - bytes) > 4096 {
        FileHandle.standardError.write(Data("generating \(input)…\n".utf8))
        try generate(path: input, bytes: bytes)
    }
    let actual = Double((try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? bytes)
    var runs: [(String, [String])] = [
        (
            "waymark",
            [options.waymark, "render", input, "--format", "geojson", "-o", "\(options.dir)/out-waymark.geojson"]
        )
    ]
    if hasGpsbabel {
        runs.append(
            (
                "gpsbabel",
                ["gpsbabel", "-i", "gpx", "-f", input, "-o", "geojson", "-F", "\(options.dir)/out-gpsbabel.geojson"]
            ))
    }
    if hasOgr {
        try? FileManager.default.removeItem(atPath: "\(options.dir)/out-ogr.geojson")
        runs.append(("ogr2ogr", ["ogr2ogr", "-f", "GeoJSON", "\(options.dir)/out-ogr.geojson", input, "tracks"]))
    }
    var waymarkSeconds = 0.0
    for (name, argv) in runs {
        if name == "ogr2ogr" { try? FileManager.default.removeItem(atPath: "\(options.dir)/out-ogr.geojson") }
        // Waymark is quick enough to time several runs: the median of 5 (of 3 at 1 GB) damps
        // the noise of a shared machine. The peers run once.
        var m = measure(argv)
        if name == "waymark" {
            var runs = [m]
            for _ in 1..<(size >= 1000 ? 3 : 5) { runs.append(measure(argv)) }
            runs.sort { $0.seconds < $1.seconds }
            m = runs[runs.count / 2]
            m.peakRSS = runs.map(\.peakRSS).max() ?? m.peakRSS
            waymarkSeconds = m.seconds
        }
        let mbps = actual / 1e6 / m.seconds
        let speedup = name == "waymark" ? "" : String(format: "%.1f×", m.seconds / waymarkSeconds)
        let failed = m.status != 0 ? "  (exit \(m.status))" : ""
        print(
            "\(column("\(size) MB", 8))  \(column(name, 9))  \(column(String(format: "%.3f", m.seconds), 8))  "
                + "\(column(String(format: "%.1f", mbps), 8))  \(column(String(format: "%.1f MiB", Double(m.peakRSS) / 1_048_576), 10))  \(speedup)\(failed)"
        )
    }
    for out in ["out-waymark.geojson", "out-gpsbabel.geojson", "out-ogr.geojson"] {
        try? FileManager.default.removeItem(atPath: "\(options.dir)/\(out)")
    }
    if !options.keep && size >= 1000 { try? FileManager.default.removeItem(atPath: input) }
}

// A small file end to end, process start included: the median of 21 runs.
let small = "\(options.dir)/synthetic-1MB.gpx"
try generate(path: small, bytes: 1_000_000)
var times: [Double] = []
for _ in 0..<21 {
    times.append(
        measure([options.waymark, "render", small, "--format", "geojson", "-o", "\(options.dir)/out-1MB.geojson"])
            .seconds)
}
times.sort()
var peerLine = ""
if hasGpsbabel {
    var peer: [Double] = []
    for _ in 0..<5 {
        peer.append(
            measure(["gpsbabel", "-i", "gpx", "-f", small, "-o", "geojson", "-F", "\(options.dir)/out-1MB.geojson"])
                .seconds)
    }
    peer.sort()
    peerLine = String(format: "; gpsbabel %.1f ms (%.1f× slower)", peer[2] * 1000, peer[2] / times[10])
}
print("")
print(
    String(format: "1 MB end to end (process start included), median of 21: waymark %.1f ms", times[10] * 1000)
        + peerLine)
try? FileManager.default.removeItem(atPath: "\(options.dir)/out-1MB.geojson")
