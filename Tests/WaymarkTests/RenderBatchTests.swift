import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `render` of many traces (issue 29, items 3 and 5): `--output-dir` converts each to a file of
/// its own, on every core, with a summary, and `--merge` makes one output of them, their track
/// points in time order (compared with gpsbabel's `-x track,merge`).
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct RenderBatchTests {
    func waymark(_ arguments: [String]) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    /// A directory of every activity fixture, a subdirectory, a hidden file, two inputs whose
    /// names would clash, and a file that is no trace: each trace is written as `render -o`
    /// writes it alone, the bad one is named in the summary and written nowhere, and the exit
    /// status says so.
    @Test func eachTraceIsWrittenAsAloneAndABadOneIsNamed() throws {
        let directory = temporaryPath("-batch")
        let inputs = directory + "/in"
        try FileManager.default.createDirectory(atPath: inputs + "/deeper", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixtures = Paths.fixture("activity")
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures).sorted()
        for name in names {
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: inputs + "/" + name)
        }
        let walk = Paths.root.appendingPathComponent("traces/city-walk.gpx").path
        try FileManager.default.copyItem(atPath: walk, toPath: inputs + "/deeper/garmin-connect.gpx")
        try "lat;lon\n1;2\n".write(toFile: inputs + "/.hidden.csv", atomically: true, encoding: .utf8)
        try "not,a,trace\n".write(toFile: inputs + "/notes.txt", atomically: true, encoding: .utf8)

        let out = directory + "/out"
        let r = try waymark(["render", inputs, "--output-dir", out, "--format", "gpx"])
        #expect(r.status == 65, "a trace failed: \(r.stderr)")
        #expect(
            r.stderr.contains("render: \(names.count + 1) of \(names.count + 2) trace(s) written to \(out) (gpx)"),
            "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "  not written: \(inputs)/notes.txt: \(inputs)/notes.txt:1:1: text before the root element"),
            "\(r.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        var expected = names.map { ($0 as NSString).deletingPathExtension + ".gpx" }
        // garmin-connect.tcx and deeper/garmin-connect.gpx would both be garmin-connect.gpx.
        expected.removeAll { $0 == "garmin-connect.gpx" }
        expected += ["garmin-connect.tcx.gpx", "garmin-connect.gpx.gpx"]
        #expect(written == expected.sorted(), "\(written)")
        #expect(!written.contains { $0.hasPrefix(".") || $0.hasPrefix("notes") }, "nothing of the hidden or bad file")
        // Each is what render writes of it alone.
        for name in names {
            let alone = try waymark(["render", inputs + "/" + name, "-f", "gpx"])
            #expect(alone.status == 0, "\(alone.stderr)")
            let file =
                name == "garmin-connect.tcx"
                ? "garmin-connect.tcx.gpx" : ((name as NSString).deletingPathExtension + ".gpx")
            let batch = try Data(contentsOf: URL(fileURLWithPath: out + "/" + file))
            #expect(batch == alone.stdout, "\(name): the batch's file differs from render alone")
        }
        // Usage: several inputs need one of the two; -o goes with neither.
        let neither = try waymark(["render", walk, walk])
        #expect(neither.status == 64 && neither.stderr.contains("--output-dir DIR (a file each) or --merge"))
        let noFormat = try waymark(["render", walk, "--output-dir", out])
        #expect(noFormat.status == 64 && noFormat.stderr.contains("give --format"))
        let into = try waymark(["render", inputs, "--output-dir", inputs, "-f", "gpx"])
        #expect(into.status != 0, "an input is never overwritten: \(into.stderr)")
    }

    /// Two recordings of one outing, their fixes interleaved in time, and a third file: one
    /// track, every point once, in time order; with `--dedupe`, one point a second, as gpsbabel's
    /// `-x track,merge` merges them (it keeps one of the points at a second, not always the first
    /// file's: the second is compared, and the point is one of that second's).
    @Test(.enabled(if: which("gpsbabel") != nil, "needs gpsbabel (scripts/test.sh installs it)"))
    func mergedTracksAreInTimeOrderAsGpsbabelMergesThem() throws {
        let directory = temporaryPath("-merge")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Property<[[Int]]>(
            name: "merge against gpsbabel", count: 20,
            generate: { r in
                // Each file: increasing times (seconds), some shared with another file.
                r.array(2...3) { r in
                    var t = 1_700_000_000 + r.int(0...600)
                    return r.array(1...15) { r in
                        defer { t += r.int(1...120) }
                        return t
                    }
                }
            },
            describe: { "\($0)" }
        ).check { files in
            var paths: [String] = []
            for (k, times) in files.enumerated() {
                let path = directory + "/\(k).gpx"
                var text =
                    "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><name>f\(k)</name><trkseg>\n"
                for (i, t) in times.enumerated() {
                    let date = ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(t)))
                    text += "<trkpt lat=\"\(k).\(1000 + i)\" lon=\"\(i).5\"><time>\(date)</time></trkpt>\n"
                }
                text += "</trkseg></trk></gpx>\n"
                guard (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil else {
                    return ["write"]
                }
                paths.append(path)
            }
            guard let all = try? run(Paths.waymark.path, ["render"] + paths + ["--merge", "-f", "gpx"]),
                let ours = try? run(Paths.waymark.path, ["render"] + paths + ["--merge", "--dedupe", "-f", "gpx"]),
                let theirs = try? run(
                    which("gpsbabel")!,
                    ["-i", "gpx"] + paths.flatMap { ["-f", $0] } + ["-x", "track,merge", "-o", "gpx", "-F", "-"])
            else { return ["could not run"] }
            guard ours.status == 0, theirs.status == 0 else {
                return ["waymark: \(ours.stderr) gpsbabel: \(theirs.stderr)"]
            }
            guard let every = TraceEditTests.Groups.read(all.stdout), let a = TraceEditTests.Groups.read(ours.stdout),
                let b = TraceEditTests.Groups.read(theirs.stdout)
            else { return ["unreadable GPX"] }
            var problems = Problems()
            problems.expect(every.count == 1 && a.count == 1, "one segment: \(every.count), \(a.count)")
            func second(_ point: String) -> Double { Double(point.split(separator: "@").last ?? "") ?? .nan }
            let points = every.flatMap { $0 }
            problems.expect(points.count == files.joined().count, "without --dedupe, every point once")
            problems.expect(points.map(second) == points.map(second).sorted(), "in time order: \(points)")
            let bySecond = Dictionary(grouping: points, by: second)
            let ourPoints = a.flatMap { $0 }
            let theirPoints = b.flatMap { $0 }
            problems.expect(
                ourPoints.map(second) == theirPoints.map(second), "the seconds: Waymark \(a)\ngpsbabel \(b)")
            for p in ourPoints + theirPoints {
                problems.expect(bySecond[second(p)]?.contains(p) == true, "\(p) is no point of its second")
            }
            return problems.list
        }
    }
}
