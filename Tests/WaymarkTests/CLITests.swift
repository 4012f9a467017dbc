import Foundation
import Testing

@testable import Waymark

/// The `waymark` tool, run as a user would run it (built by `swift build`, as the README's test
/// command does first).
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct CLITests {
    func waymark(_ arguments: String..., input: Data? = nil) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "60"
        return try run(Paths.waymark.path, arguments, input: input, environment: environment)
    }

    /// Issue 14, item 7: a file that is no trace Waymark reads is named for what it is, with what
    /// to do instead, and `--lenient` is never suggested for it, nor when it is on already. (KML,
    /// TCX and GeoJSON are read since issue 29: an empty one is an empty trace.)
    @Test func aFileThatIsNotGPXSaysWhatItIs() throws {
        let cases: [(String, [UInt8], String)] = [
            (".gpx.gz", [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 3], "gzip-compressed"),
            (".kmz", [0x50, 0x4B, 3, 4, 20, 0, 0, 0, 8, 0], "ZIP archive (a KMZ?)"),
            (".json", Array("{\"name\":\"not a trace\"}".utf8), "neither GeoJSON"),
            (".osm", Array("<?xml version=\"1.0\"?><osm version=\"0.6\"/>".utf8), "OpenStreetMap XML"),
        ]
        for (suffix, text) in [
            (".kml", "<?xml version=\"1.0\"?><kml xmlns=\"http://www.opengis.net/kml/2.2\"/>"),
            (".json", "{\"type\":\"FeatureCollection\",\"features\":[]}"), (".tcx", "<TrainingCenterDatabase/>"),
        ] {
            let path = temporaryPath(suffix)
            defer { try? FileManager.default.removeItem(atPath: path) }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try waymark("info", path)
            #expect(r.status == 0 && r.stdoutText.contains("points    0 in 0 track(s)"), "\(r.stdoutText)\(r.stderr)")
        }
        for (suffix, bytes, what) in cases {
            let path = temporaryPath(suffix)
            defer { try? FileManager.default.removeItem(atPath: path) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            for lenient in [false, true] {
                let r = lenient ? try waymark("info", "--lenient", path) : try waymark("info", path)
                #expect(r.status == 65)
                #expect(r.stderr.contains(what), "\(r.stderr)")
                #expect(!r.stderr.contains("--lenient"), "\(r.stderr)")
            }
        }
        // A bad point suggests --lenient, unless it is on (there it is skipped with a warning).
        let bad = Paths.fixture("bad/billion-laughs.gpx")
        let r = try waymark("info", "--lenient", bad)
        #expect(r.status == 65 && !r.stderr.contains("hint: --lenient"), "\(r.stderr)")
    }

    @Test func badInputExits65WithFileLineColumn() throws {
        let path = Paths.fixture("bad/lat-out-of-range.gpx")
        for format in ["text", "geojson", "gpx"] {
            let r = try waymark("render", path, "--format", format)
            #expect(r.status == 65)
            #expect(r.stderr.contains("waymark: \(path):6:7: <trkpt> latitude 91.5 is outside -90...90"), "\(r.stderr)")
            #expect(r.stderr.contains("hint: --lenient"))
        }
        let info = try waymark("info", Paths.fixture("bad/billion-laughs.gpx"))
        #expect(info.status == 65)
        #expect(info.stderr.contains("billion-laughs.gpx:2:1: DOCTYPE declarations are refused"))
    }

    /// A year the reader refuses (nine digits) is bad input with its place in every command
    /// that reads it, never a trap in the time formatter.
    @Test func aYearBeyond9999IsBadInputNotATrap() throws {
        let path = Paths.fixture("bad/year-nine-digits.gpx")
        let place = "waymark: \(path):5:34: "
        for format in ["text", "geojson", "gpx"] {
            let r = try waymark("render", path, "--format", format)
            #expect(r.status == 65, "\(format): \(r.stderr)")
            #expect(r.stderr.contains(place), "\(r.stderr)")
            #expect(r.stderr.contains("the year (Waymark reads -9999 to 9999) is out of range"), "\(r.stderr)")
        }
        let info = try waymark("info", path, "--json")
        #expect(info.status == 65 && info.stderr.contains(place), "\(info.stderr)")
        // repair keeps both points and leaves out the bad time only (issue 14, item 7), with a
        // warning naming its place.
        let out = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let repair = try waymark("repair", path, "-o", out)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stderr.contains("\(path):5:34"), "\(repair.stderr)")
        let repaired = try String(contentsOfFile: out, encoding: .utf8)
        #expect(repaired.components(separatedBy: "<trkpt ").count == 3, "\(repaired)")
        #expect(repaired.components(separatedBy: "<time>").count == 2, "one time left: \(repaired)")
        // A negative year is written so that it reads back.
        let ancient = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: ancient) }
        try """
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="41.9" lon="12.5"><time>-0044-03-15T11:00:00Z</time></trkpt></trkseg></trk></gpx>
        """.write(toFile: ancient, atomically: false, encoding: .utf8)
        let gpx = try waymark("render", ancient, "--format", "gpx")
        #expect(gpx.status == 0, "\(gpx.stderr)")
        #expect(gpx.stdoutText.contains("<time>-0044-03-15T11:00:00.000Z</time>"), "\(gpx.stdoutText)")
        let again = try waymark("info", "-", "--json", input: gpx.stdout)
        #expect(
            again.status == 0 && again.stdoutText.contains("\"startTime\":\"-0044-03-15T11:00:00.000Z\""),
            "\(again.stdoutText) \(again.stderr)")
    }

    /// One extension element of more than 16 MiB is refused with its place when kept whole
    /// (GPX output), instead of being held three times over in memory; outputs that do not keep
    /// it read the file (issue 15, item 12).
    @Test func aHugeExtensionElementIsALimitErrorWhereItIsKept() throws {
        let path = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = "<x:c>" + String(repeating: "v", count: 1000) + "</x:c>"
        let text =
            #"<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" xmlns:x="urn:x"><trk><trkseg>"#
            + "\n" + #"<trkpt lat="1" lon="2"><extensions><x:big>"# + String(repeating: child, count: 17_500)
            + "</x:big></extensions></trkpt></trkseg></trk></gpx>"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        for command in [["render", path, "--format", "gpx"], ["repair", path]] {
            let r = try run(Paths.waymark.path, command)
            #expect(r.status == 65, "\(command): \(r.stderr)")
            #expect(
                r.stderr.contains("\(path):2:36: the extension element <x:big> holds more than 16 MiB"),
                "\(command): \(r.stderr)")
        }
        let geojson = try waymark("render", path, "--format", "geojson")
        #expect(geojson.status == 0, "\(geojson.stderr)")
    }

    /// `-o -` is standard output, as `-` is standard input: it must not write a file named `-`
    /// in the working directory (it did, with exit 0 and nothing on standard output).
    @Test func outputDashIsStandardOutput() throws {
        let directory = URL(fileURLWithPath: temporaryPath("-dash"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = Paths.fixture("gpx/segments.gpx")
        for format in ["text", "geojson", "gpx"] {
            let r = try run(
                Paths.waymark.path, ["render", trace, "--format", format, "-o", "-"], directory: directory)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!r.stdout.isEmpty, "\(format): nothing on standard output")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("-").path))
        }
    }

    /// Issue 16, part 1: render, info and replay read NMEA logs and gpsd JSON captures, told by
    /// their content whatever their name.
    @Test func nmeaLogsAndGpsdCapturesAreReadByEveryCommand() throws {
        let nmea = temporaryPath(".txt")  // no .nmea: the content tells
        try FileManager.default.copyItem(atPath: Paths.fixture("nmea/walk.nmea"), toPath: nmea)
        let capture = temporaryPath(".log")
        try Data(
            """
            {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
            {"class":"TPV","device":"/dev/ttyS0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5}
            {"class":"TPV","device":"/dev/ttyS0","mode":3,"time":"2024-05-01T08:00:01.000Z","lat":48.1001,"lon":11.5,"altMSL":520.7}

            """.utf8
        ).write(to: URL(fileURLWithPath: capture))
        defer {
            try? FileManager.default.removeItem(atPath: nmea)
            try? FileManager.default.removeItem(atPath: capture)
        }
        let info = try waymark("info", "--json", nmea)
        #expect(info.status == 0, "\(info.stderr)")
        let stats = try JSONSerialization.jsonObject(with: info.stdout) as? [String: Any]
        #expect(stats?["trackPointCount"] as? Int == 50, "\(info.stdoutText)")
        let geojson = try waymark("render", capture, "--format", "geojson")
        #expect(geojson.status == 0, "\(geojson.stderr)")
        let object = try JSONSerialization.jsonObject(with: geojson.stdout) as? [String: Any]
        let features = object?["features"] as? [[String: Any]] ?? []
        let geometry = features.first?["geometry"] as? [String: Any]
        let coordinates = geometry?["coordinates"] as? [[Double]] ?? []
        #expect(coordinates == [[11.5, 48.1, 520.5], [11.5, 48.1001, 520.7]], "\(geojson.stdoutText)")
        let replay = try waymark("replay", nmea, "--rate", "max", "--no-store", "--format", "ndjson")
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try ndjsonObjects(replay.stdoutText).count > 10)
    }

    /// `--format gpx` writes the delivered locations as GPX 1.1 as they come (to a pipe as a
    /// stream, to -o as a file complete after every point); `-o`'s extension names the format,
    /// and a --format that contradicts it is a usage error.
    @Test func replayAndRecordWriteGPXAsTheyGo() throws {
        let trace = Paths.fixture("nmea/walk.nmea")
        let ndjson = try waymark("replay", trace, "--rate", "max", "--no-store", "--format", "ndjson")
        let delivered = try ndjsonObjects(ndjson.stdoutText).count
        #expect(delivered >= 40)
        let piped = try waymark("replay", trace, "--rate", "max", "--no-store", "--format", "gpx")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdoutText.components(separatedBy: "<trkpt ").count - 1 == delivered)
        #expect(piped.stdoutText.hasSuffix("</gpx>\n"))
        let file = temporaryPath(".gpx")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let named = try waymark("replay", trace, "--rate", "max", "--no-store", "-o", file)
        #expect(named.status == 0, "\(named.stderr)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text == piped.stdoutText)
        if let xmllint = which("xmllint"), Paths.sharedAvailable {
            let schema = Paths.shared.appendingPathComponent("schema/gpx-1.1.xsd").path
            let check = try run(xmllint, ["--nonet", "--noout", "--schema", schema, file])
            #expect(check.status == 0, "\(check.stderr)")
        }
        let contradiction = try waymark("replay", trace, "--rate", "max", "--no-store", "-f", "geojson", "-o", file)
        #expect(contradiction.status == 64, "\(contradiction.stderr)")
        #expect(contradiction.stderr.contains("--format geojson and -o \(file) disagree"), "\(contradiction.stderr)")
        let record = try waymark("record", "--gpsd", "localhost:1", "-f", "ndjson", "-o", file)
        #expect(record.status == 64, "\(record.stderr)")
    }

    /// The delivered lines are the same bytes whichever outputs read the fixes: to a file with
    /// nothing else (the lines read each fix's record where it lies, and are written on a thread
    /// of their own), with the audit log beside them (each fix becomes an event for all), to
    /// standard output with the console quiet or not. The run holds fixes while the app is
    /// suspended and hands them over on its return, so that fixes have two records.
    @Test func theDeliveredLinesAreTheSameWhateverElseReadsTheFixes() throws {
        let trace = Paths.root.appendingPathComponent("traces/city-walk.gpx").path
        let directory = temporaryPath("")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scenario = directory + "/suspended.yaml"
        try """
        device:
          authorization: always
        timeline:
          - at: 1m
            do: background
          - at: 3m
            do: foreground
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let base = ["replay", trace, "--scenario", scenario, "--rate", "max", "--no-store", "--format", "ndjson"]
        func replay(_ extra: [String]) throws -> ProcessResult {
            var environment = ProcessInfo.processInfo.environment
            environment["COLUMNS"] = "60"
            let r = try run(Paths.waymark.path, base + extra, environment: environment)
            #expect(r.status == 0, "\(extra): \(r.stderr)")
            return r
        }
        _ = try replay(["--quiet", "-o", directory + "/alone.ndjson"])
        _ = try replay(["--quiet", "--audit", directory + "/audit.ndjson", "-o", directory + "/beside.ndjson"])
        let quietOut = try replay(["--quiet"]).stdoutText
        let loudOut = try replay([]).stdoutText
        let alone = try String(contentsOfFile: directory + "/alone.ndjson", encoding: .utf8)
        let audit = try String(contentsOfFile: directory + "/audit.ndjson", encoding: .utf8)
        #expect(audit.contains("\"reason\":\"resumed\""), "the run hands held fixes over on the app's return")
        let deliveredInLog = audit.split(separator: "\n").filter {
            $0.contains("\"event\":\"fix\"") && $0.contains("\"decision\":\"delivered\"")
        }.count
        #expect(alone.split(separator: "\n").count == deliveredInLog, "a line for each delivered fix")
        #expect(try String(contentsOfFile: directory + "/beside.ndjson", encoding: .utf8) == alone)
        #expect(quietOut == alone)
        #expect(loudOut == alone)
    }

    /// Issue 17: `render x.gpx -o x.geojson` writes GeoJSON (it wrote the text view into the
    /// file and exited 0); a --format that contradicts the extension is a usage error.
    @Test func renderTakesTheFormatFromTheOutputsExtension() throws {
        let trace = Paths.fixture("gpx/segments.gpx")
        for (suffix, start) in [
            (".geojson", "{\"type\":\"FeatureCollection\""), (".json", "{\"type\":\"FeatureCollection\""),
            (".gpx", "<?xml"),
        ] {
            let out = temporaryPath(suffix)
            defer { try? FileManager.default.removeItem(atPath: out) }
            let r = try waymark("render", trace, "-o", out)
            #expect(r.status == 0, "\(r.stderr)")
            let text = try String(contentsOfFile: out, encoding: .utf8)
            #expect(text.hasPrefix(start), "\(suffix): \(text.prefix(80))")
        }
        let out = temporaryPath(".geojson")
        let clash = try waymark("render", trace, "--format", "gpx", "-o", out)
        #expect(clash.status == 64, "\(clash.stderr)")
        #expect(clash.stderr.contains("disagree"), "\(clash.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let text = try waymark("render", trace, "--format", "text", "-o", temporaryPath(".txt"))
        #expect(text.status == 0, "\(text.stderr)")
    }

    /// Issue 28, item 4: `-o` never lies. Every command that writes a file takes its format from
    /// an extension it knows, refuses one of another tool's formats, and refuses an extension it
    /// does not know unless --format says what to write; sessions export writes GPX to `x.gpx`.
    @Test func theOutputsNameNeverLies() throws {
        let trace = Paths.fixture("gpx/segments.gpx")
        let directory = temporaryPath("-names")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/s.sqlite"
        let replay = try waymark(
            "replay", trace, "--rate", "max", "--quiet", "--store", store, "-o", directory + "/r.ndjson")
        #expect(replay.status == 0, "\(replay.stderr)")
        for arguments in [
            ["render", trace, "-o", directory + "/x.kml"], ["render", trace, "-o", directory + "/x.out"],
            ["replay", trace, "--rate", "max", "--no-store", "-o", directory + "/x.csv"],
            ["sessions", "export", "1", "--store", store, "-o", directory + "/x.tcx"],
            ["sessions", "export", "1", "--store", store, "--format", "geojson", "-o", directory + "/x.gpx"],
            ["sessions", "export", "1", "--store", store, "-o", directory + "/x.svg"],
            ["repair", trace, "-o", directory + "/x.geojson"],
        ] {
            let r = try run(Paths.waymark.path, arguments)
            #expect(r.status == 64, "\(arguments): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("-o "), "\(arguments): \(r.stderr)")
            let written = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("x.") }
            #expect(written.isEmpty, "\(arguments) wrote \(written)")
        }
        // The extension picks the format of sessions export; --format names one for any other name.
        let gpx = try run(
            Paths.waymark.path, ["sessions", "export", "1", "--store", store, "-o", directory + "/s.gpx"])
        #expect(gpx.status == 0, "\(gpx.stderr)")
        #expect(try String(contentsOfFile: directory + "/s.gpx", encoding: .utf8).hasPrefix("<?xml"))
        let audit = try run(
            Paths.waymark.path,
            ["sessions", "export", "1", "--store", store, "--format", "audit", "-o", directory + "/a.ndjson"])
        #expect(audit.status == 0, "\(audit.stderr)")
        let log = try waymark("render", trace, "--format", "text", "-o", directory + "/view.log")
        #expect(log.status == 0, "\(log.stderr)")
    }

    /// Issue 28, item 5: a slip of a command's name gets the command it is closest to, and a
    /// scenario file that is not there is no input (66), not bad data (65).
    @Test func aMistypedCommandGetsADidYouMeanAndAMissingScenarioIsNoInput() throws {
        for (typed, meant) in [("rendr", "render"), ("sesions", "sessions"), ("replya", "replay"), ("serv", "serve")] {
            let r = try waymark(typed, "--help")
            #expect(r.status == 64, "\(typed): \(r.stderr)")
            #expect(r.stderr.contains("Did you mean '\(meant)'?"), "\(typed): \(r.stderr)")
        }
        let nothing = try waymark("xyzzy")
        #expect(nothing.status == 64 && nothing.stderr.contains("the commands are replay, record"), "\(nothing.stderr)")
        let missing = try waymark(
            "replay", Paths.fixture("gpx/segments.gpx"), "--scenario", temporaryPath("-missing.yaml"), "--no-store")
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("cannot be read"), "\(missing.stderr)")
    }

    /// Issue 17: the shell completions the README documents are there for every shell it names,
    /// and know the subcommands and the values of --format.
    @Test func shellCompletionsCoverTheCommands() throws {
        for shell in ["bash", "zsh", "fish"] {
            let r = try waymark("--generate-completion-script", shell)
            #expect(r.status == 0, "\(shell): \(r.stderr)")
            for word in ["serve", "record", "render", "sessions", "geojson", "svg"] {
                #expect(r.stdoutText.contains(word), "\(shell) completions lack \(word)")
            }
        }
    }

    @Test func missingFileExits66AndUsageErrorsExit64() throws {
        let missing = try waymark("info", "/no/such/walk.gpx")
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/no/such/walk.gpx: cannot open: No such file or directory"))
        #expect(try waymark("render").status == 64)
        #expect(try waymark("render", Paths.fixture("gpx/segments.gpx"), "--format", "kml").status == 64)
        #expect(try waymark("render", Paths.fixture("gpx/segments.gpx"), "--width", "5").status == 64)
        #expect(try waymark("render", Paths.fixture("gpx/segments.gpx"), "--format", "gpx", "--points").status == 64)
    }

    @Test func failedRenderLeavesNoOutputFile() throws {
        let out = temporaryPath(".geojson")
        let r = try waymark("render", Paths.fixture("bad/truncated-in-trkpt.gpx"), "--format", "geojson", "-o", out)
        #expect(r.status == 65)
        #expect(!FileManager.default.fileExists(atPath: out))
        let dir = (out as NSString).deletingLastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter {
            $0.hasPrefix("." + (out as NSString).lastPathComponent)
        }
        #expect(leftovers.isEmpty)
    }

    @Test func lenientRecoversWithAWarning() throws {
        let r = try waymark("info", "--json", "--lenient", Paths.fixture("bad/truncated-in-trkpt.gpx"))
        #expect(r.status == 0)
        #expect(r.stderr.contains("truncated-in-trkpt.gpx:7:42: warning: unexpected end of file"))
        let object = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(object["trackPointCount"] as? Int == 3)
    }

    @Test func lenientSaysHowManyBadPointsItLeftOut() throws {
        let path = Paths.fixture("bad/lat-out-of-range.gpx")
        let r = try waymark("render", path, "--lenient", "--format", "geojson")
        #expect(r.status == 0)
        #expect(r.stderr.contains("\(path): --lenient left out 1 bad point(s)"))
        let clean = try waymark("info", Paths.fixture("gpx/segments.gpx"), "--lenient")
        #expect(!clean.stderr.contains("left out"))
    }

    @Test func infoJSONHasTheDocumentedFields() throws {
        let r = try waymark("info", "--json", Paths.fixture("gpx/segments.gpx"))
        #expect(r.status == 0)
        let o = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(o["trackCount"] as? Int == 1)
        #expect(o["segmentCount"] as? Int == 4)
        #expect(o["trackPointCount"] as? Int == 6)
        #expect(o["waypointCount"] as? Int == 1)
        #expect(o["routeCount"] as? Int == 1)
        #expect(o["routePointCount"] as? Int == 2)
        // Segments of 3 points 10 s apart, 1 point, and 2 points: 20 s + 0 + 10 s.
        #expect(o["duration"] as? Double == 30)
        let bounds = try #require(o["bounds"] as? [String: Double])
        #expect(bounds["minLatitude"] == 48.1 && bounds["maxLongitude"] == 11.6)
        #expect((o["length2D"] as? Double ?? 0) > 0)
        #expect((o["length3D"] as? Double ?? 0) >= (o["length2D"] as? Double ?? 0))
        let untimed = try waymark("info", "--json", Paths.fixture("gpx/entities.gpx"))
        let u = try #require(try JSONSerialization.jsonObject(with: untimed.stdout) as? [String: Any])
        #expect(u["duration"] is NSNull)
    }

    @Test func textViewHasSummaryAndSketchWithoutColourWhenPiped() throws {
        let r = try waymark("render", Paths.fixture("gpx/segments.gpx"), "--points")
        #expect(r.status == 0)
        let text = r.stdoutText
        #expect(text.contains("\"Walk\""))
        #expect(text.contains("points    6 in 1 track(s), 4 segment(s); 1 waypoint(s); 1 route(s) with 2 point(s)"))
        #expect(text.contains("2024-05-01T09:00:00.000Z → 2024-05-01T09:03:30.000Z"))
        #expect(text.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) }, "no braille sketch")
        #expect(!text.contains("\u{1B}["), "colour codes in piped output")
        // The table: a row per point (1 waypoint + 2 route points + 6 track points).
        let rows = text.split(separator: "\n").filter {
            $0.contains("  trk  ") || $0.contains("  rte  ") || $0.contains("  wpt  ")
        }
        #expect(rows.count == 9)
        for line in text.split(separator: "\n") { #expect(line.count <= 100, "line too wide: \(line)") }
    }

    @Test func readsStandardInput() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Paths.fixture("gpx/antimeridian.gpx")))
        let r = try waymark("render", "-", "--format", "geojson", input: data)
        #expect(r.status == 0)
        let o = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(o["type"] as? String == "FeatureCollection")
    }

    @Test func helpTeachesWithExamples() throws {
        let r = try waymark("render", "--help")
        #expect(r.status == 0)
        #expect(r.stdoutText.contains("Examples:"))
        #expect(r.stdoutText.contains("waymark render walk.gpx --format geojson -o walk.geojson"))
        #expect(try waymark("info", "--help").stdoutText.contains("--json"))
    }

    @Test(.enabled(if: Paths.sharedAvailable, "needs ../shared/tools"))
    func outputFilesPassTheSharedCheckers() throws {
        let geojson = temporaryPath(".geojson")
        let gpx = temporaryPath(".gpx")
        defer {
            try? FileManager.default.removeItem(atPath: geojson)
            try? FileManager.default.removeItem(atPath: gpx)
        }
        #expect(try waymark("render", Paths.fixture("gpx/extensions.gpx"), "-f", "geojson", "-o", geojson).status == 0)
        #expect(try waymark("render", Paths.fixture("gpx/gpx10.gpx"), "-f", "gpx", "-o", gpx).status == 0)
        let g = try run(Paths.shared.appendingPathComponent("tools/check-geojson").path, ["--strict", geojson])
        #expect(g.status == 0, "\(g.stdoutText)")
        if which("xmllint") != nil {
            let x = try run(Paths.shared.appendingPathComponent("tools/check-gpx").path, [gpx])
            #expect(x.status == 0, "\(x.stdoutText)\(x.stderr)")
        }
    }

    @Test func aFullDiskIsAnIOErrorNamingTheOutput() throws {
        let process = Process()
        process.executableURL = Paths.waymark
        process.arguments = ["render", Paths.fixture("gpx/segments.gpx"), "--format", "geojson"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 74)
        #expect(message.contains("waymark: <stdout>: write failed: No space left on device"))
    }

    /// `-o` onto something that is not a regular file writes into it rather than replacing it.
    @Test func outputIntoAFIFOWritesThroughIt() throws {
        let dir = temporaryPath("-fifo")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/out.geojson"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let captured = Pipe()
        reader.standardOutput = captured
        try reader.run()
        let r = try waymark("render", Paths.fixture("gpx/segments.gpx"), "-f", "geojson", "-o", fifo)
        var info = stat()
        let stillFIFO = stat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
        #expect(stillFIFO, "the FIFO was replaced")
        if !stillFIFO { kill(reader.processIdentifier, SIGKILL) }  // nobody will write to it: do not wait forever
        let data = captured.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["type"] as? String == "FeatureCollection"
        )
    }

    @Test func aDirectoryAsOutputIsRefused() throws {
        let r = try waymark("render", Paths.fixture("gpx/segments.gpx"), "-f", "geojson", "-o", TestScratch.directory)
        #expect(r.status == 74)
        #expect(r.stderr.contains("is a directory; name a file to write"))
    }
}
