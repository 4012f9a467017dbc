// waymark-bench stream: replay from a file as it is read (StreamingReplaySource) against the
// in-memory path (GPXDocument → ReplaySchedule → GPXReplaySource), on generated 1 Hz walks of
// 100 000 and 500 000 points, plain and with a TrackPointExtension per point. Each run is a child
// process of its own, so that its peak RSS (VmHWM) is its own; the time is the best of three,
// the peak RSS the largest, both for the whole process: reading, laying out and taking every
// event.

import Foundation
import GPXLayouts
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

enum StreamBench {
    /// One measured run: how many events, how long, the peak RSS.
    struct Run {
        var events = 0
        var seconds = Double.infinity
        var peakKiB = 0
    }

    static func run(arguments: [String]) throws {
        if arguments.first == "--child" {
            try child(Array(arguments.dropFirst()))
            return
        }
        var counts = [100_000, 500_000]
        var dir = "bench-out"
        var repeats = 3
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--points": counts = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--dir": dir = args.next() ?? dir
            case "--repeats": repeats = max(1, Int(args.next() ?? "") ?? repeats)
            default:
                print("usage: waymark-bench stream [--points 100000,500000] [--dir bench-out] [--repeats 3]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        print("waymark-bench stream: replay events read and laid out, streaming vs in memory (best of \(repeats))")
        print(
            "\(column("trace", 30))  \(column("path", 9))  \(column("events/s", 11))  \(column("peak RSS", 10))"
                + "  stream/memory")
        for count in counts {
            for extensions in [false, true] {
                let path = "\(dir)/stream-\(count)-\(extensions ? "ext" : "plain").gpx"
                if !FileManager.default.fileExists(atPath: path) {
                    FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
                    try generateWalk(path: path, points: count, extensions: extensions)
                }
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                let label = "\(count / 1000)k \(extensions ? "with extensions" : "plain") (\(size >> 20) MiB)"
                var runs: [String: Run] = [:]
                for mode in ["memory", "stream"] {
                    var best = Run()
                    for _ in 0..<repeats {
                        let r = try measure(mode: mode, path: path)
                        best.events = r.events
                        best.seconds = min(best.seconds, r.seconds)
                        best.peakKiB = max(best.peakKiB, r.peakKiB)
                    }
                    runs[mode] = best
                }
                let memory = runs["memory"]!
                let stream = runs["stream"]!
                if memory.events != stream.events {
                    print("warning: \(path): \(stream.events) events streamed, \(memory.events) in memory")
                }
                for (mode, r) in [("memory", memory), ("stream", stream)] {
                    let ratio =
                        mode == "stream"
                        ? String(
                            format: "%.2f× the rate, %.2f× the RSS", memory.seconds / r.seconds,
                            Double(r.peakKiB) / Double(memory.peakKiB))
                        : ""
                    print(
                        "\(column(mode == "memory" ? label : "", 30))  \(column(mode, 9))  "
                            + "\(column(String(format: "%.0f", Double(r.events) / r.seconds), 11))  "
                            + "\(column(String(format: "%.1f MiB", Double(r.peakKiB) / 1024), 10))  \(ratio)")
                }
            }
        }
        print("target: streaming peak RSS ≤ 64 MiB at any trace length")
    }

    /// Runs this program again as `stream --child MODE PATH` and reads what it reports.
    static func measure(mode: String, path: String) throws -> Run {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["stream", "--child", mode, path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard process.terminationStatus == 0, fields.count == 3, let events = Int(fields[0]),
            let seconds = Double(fields[1]), let peak = Int(fields[2])
        else {
            throw POSIXError(.EIO)
        }
        return Run(events: events, seconds: seconds, peakKiB: peak)
    }

    /// The child: plays `path` to the end one way and prints "events seconds peakKiB".
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 2 else { exit(64) }
        let path = arguments[1]
        let options = GPXReadOptions(keepsExtensionElements: false)
        let clock = ContinuousClock()
        let start = clock.now
        var events = 0
        var check = 0.0
        if arguments[0] == "stream" {
            var source = try StreamingReplaySource(contentsOf: path, readOptions: options)
            while let e = try source.nextEvent() {
                events += 1
                if case .fix(let l) = e.kind { check += l.speed }
            }
        } else {
            let document = try GPXDocument(reader: GPXReader(contentsOf: path, options: options))
            let schedule = try ReplaySchedule(document: document, file: path)
            var source = GPXReplaySource(schedule: schedule, name: path)
            while let e = source.nextEvent() {
                events += 1
                if case .fix(let l) = e.kind { check += l.speed }
            }
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard check.isFinite else { exit(1) }
        print("\(events) \(seconds) \(peakRSSKiB())")
    }

    /// VmHWM from /proc/self/status, in KiB (0 where there is none).
    static func peakRSSKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(whereSeparator: \.isWhitespace)[1]) ?? 0
        }
        return 0
    }

    /// A 1 Hz walk of `points` points with elevation and time, a new segment every 3 600 points;
    /// with `extensions`, each point carries a TrackPointExtension (heart rate and cadence).
    static func generateWalk(path: String, points: Int, extensions: Bool) throws {
        guard let file = fopen(path, "w") else { throw POSIXError(.EIO) }
        defer { fclose(file) }
        fputs(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"waymark-bench\" "
                + "xmlns=\"http://www.topografix.com/GPX/1/1\" "
                + "xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\">\n<trk><trkseg>\n", file)
        var rng = SplitMix64(seed: 11)
        var lat = 48.137
        var lon = 11.575
        var heading = 0.0
        for i in 0..<points {
            if i > 0 && i % 3600 == 0 { fputs("</trkseg><trkseg>\n", file) }
            if i % 120 == 0 { heading = rng.unit() * 2 * .pi }
            lat += 1.4 * cos(heading) / 111_195
            lon += 1.4 * sin(heading) / (111_195 * cos(lat * .pi / 180))
            let tail =
                extensions
                ? "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(100 + i % 60)</gpxtpx:hr>"
                    + "<gpxtpx:cad>\(80 + i % 20)</gpxtpx:cad></gpxtpx:TrackPointExtension></extensions>"
                : ""
            let line = String(
                format: "<trkpt lat=\"%.7f\" lon=\"%.7f\"><ele>%.1f</ele><time>%@</time>%@</trkpt>\n", lat, lon,
                520 + 10 * sin(Double(i) / 600), iso(1_714_550_400 + i + i / 3600 * 60), tail)
            fputs(line, file)
        }
        fputs("</trkseg></trk>\n</gpx>\n", file)
    }
}
