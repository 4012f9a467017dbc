import Foundation
import Testing

/// `--geojson-points`, `--only` and `--no-coordinate-properties` from the command line: on
/// render, sessions export and replay; RFC 7946-valid by ../shared/tools/check-geojson; read by
/// GDAL (`ogrinfo`, Debian gdal-bin, installed by scripts/test.sh) as one geometry type and
/// with a DateTime field.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct GeoJSONGISCLITests {
    static let segments = Paths.fixture("gpx/segments.gpx")
    static let walk = Paths.fixture("scenarios/traces/walk.gpx")
    static let checker = Paths.shared.appendingPathComponent("tools/check-geojson").path

    func waymark(_ arguments: [String]) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    /// Writes with `arguments` and `-o` a new .geojson file; returns its path.
    func output(_ arguments: [String]) throws -> String {
        let path = temporaryPath(".geojson")
        let r = try waymark(arguments + ["-o", path])
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        return path
    }

    static let variants: [[String]] = [
        ["--geojson-points"], ["--only", "tracks"], ["--only", "routes"], ["--only", "waypoints"],
        ["--no-coordinate-properties"], ["--geojson-points", "--only", "tracks"],
        // For the web (issue 29, item 1).
        ["--precision", "5"], ["--precision", "0"], ["--2d"], ["--simplify", "3"], ["--summary-properties"],
        ["--simplestyle"], ["--precision", "6", "--2d", "--simplify", "5", "--summary-properties", "--simplestyle"],
        ["--geojson-points", "--precision", "5", "--2d"],
    ]

    @Test(.enabled(if: FileManager.default.fileExists(atPath: checker), "needs ../shared/tools"), arguments: variants)
    func everyVariantIsValidRFC7946(_ options: [String]) throws {
        var files = [try output(["render", Self.segments] + options)]
        if !options.contains("routes") && !options.contains("waypoints") {
            let store = temporaryPath("-store") + "/s.sqlite"
            files.append(
                try output(
                    ["replay", Self.walk, "--store", store, "--end", "2m", "--quiet", "--format", "geojson"] + options))
            files.append(try output(["sessions", "export", "1", "--store", store] + options))
            files.append(
                try output(
                    ["replay", Self.walk, "--no-store", "--end", "2m", "--quiet", "--format", "geojson"] + options))
        }
        for file in files {
            let r = try run(Self.checker, ["--strict", file])
            #expect(r.status == 0, "\(options): \(r.stdoutText)")
            // And GDAL reads it, every feature.
            if let ogrinfo = which("ogrinfo") {
                let info = try run(ogrinfo, ["-ro", "-so", "-al", file])
                let features =
                    (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
                    as? [String: Any])?["features"] as? [Any]
                #expect(info.status == 0, "\(options): \(info.stderr)")
                #expect(
                    info.stdoutText.contains("Feature Count: \(features?.count ?? -1)\n"),
                    "\(options): \(info.stdoutText)")
            }
        }
    }

    /// A session's points from the store and from a run without one are the same bytes.
    @Test func aRunsPointsAreTheSameWithAndWithoutAStore() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let common = ["replay", Self.walk, "--end", "2m", "--quiet", "--format", "geojson", "--geojson-points"]
        let stored = try Data(contentsOf: URL(fileURLWithPath: try output(common + ["--store", store])))
        let streamed = try Data(contentsOf: URL(fileURLWithPath: try output(common + ["--no-store"])))
        let exported = try Data(
            contentsOf: URL(
                fileURLWithPath: try output(["sessions", "export", "1", "--store", store, "--geojson-points"])))
        #expect(stored == streamed)
        #expect(stored == exported)
        #expect(String(decoding: stored, as: UTF8.self).contains("\"_gpxType\":\"delivered\""))
    }

    @Test(.enabled(if: which("ogrinfo") != nil, "ogrinfo (gdal-bin) is installed by scripts/test.sh"))
    func gdalReadsOneGeometryTypeAndATimeField() throws {
        let ogrinfo = try #require(which("ogrinfo"))
        // segments.gpx has a waypoint, a route and a track of three segments: mixed without --only.
        let mixed = try run(ogrinfo, ["-ro", "-so", "-al", try output(["render", Self.segments, "-f", "geojson"])])
        #expect(mixed.stdoutText.contains("Geometry: Unknown (any)"), "\(mixed.stdoutText)")
        for (kind, geometry) in [
            ("tracks", "3D Multi Line String"), ("routes", "Multi Line String"), ("waypoints", "Point"),
        ] {
            let r = try run(ogrinfo, ["-ro", "-so", "-al", try output(["render", Self.segments, "--only", kind])])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdoutText.contains("Geometry: \(geometry)\n"), "\(kind): \(r.stdoutText)")
            #expect(r.stdoutText.contains("Feature Count: 1\n"), "\(kind): \(r.stdoutText)")
        }
        let points = try run(
            ogrinfo,
            ["-ro", "-so", "-al", try output(["render", Self.segments, "--geojson-points", "--only", "tracks"])])
        #expect(points.stdoutText.contains("Geometry: 3D Point\n"), "\(points.stdoutText)")
        #expect(points.stdoutText.contains("Feature Count: 6\n"), "\(points.stdoutText)")
        #expect(points.stdoutText.contains("time: DateTime"), "\(points.stdoutText)")
        #expect(points.stdoutText.contains("track_seg_id: Integer"), "\(points.stdoutText)")
        // For the web: the summary's figures are numbers and its times DateTime; the style's
        // colour a string; positions without elevations are 2D.
        let web = try run(
            ogrinfo,
            [
                "-ro", "-so", "-al",
                try output([
                    "render", Self.segments, "--only", "tracks", "--summary-properties", "--simplestyle", "--2d",
                ]),
            ])
        for field in [
            "length: Real", "duration: Real", "movingTime: Real", "ascent: Real", "descent: Real",
            "startTime: DateTime", "endTime: DateTime", "stroke: String", "stroke-width: Integer",
        ] {
            #expect(web.stdoutText.contains(field), "\(field): \(web.stdoutText)")
        }
        #expect(web.stdoutText.contains("Geometry: Multi Line String\n"), "\(web.stdoutText)")
        let store = temporaryPath("-store") + "/s.sqlite"
        let run1 = try output([
            "replay", Self.walk, "--store", store, "--end", "2m", "--quiet", "--format", "geojson", "--geojson-points",
        ])
        let delivered = try run(ogrinfo, ["-ro", "-so", "-al", run1])
        #expect(delivered.stdoutText.contains("time: DateTime"), "\(delivered.stdoutText)")
        #expect(delivered.stdoutText.contains("appState: String"), "\(delivered.stdoutText)")
    }

    /// Given alone, the options make the output GeoJSON (issue 29: "`--geojson-points` implies
    /// GeoJSON"), on standard output as in a file of any name; `--format` or an `-o` whose name
    /// says another format is a usage error that says what to do, checked before anything runs.
    @Test func theOptionsMakeGeoJSONUnlessTheFormatSaysOtherwise() throws {
        for command in [
            ["render", Self.segments, "--geojson-points"],
            ["replay", Self.walk, "--no-store", "--end", "1m", "--quiet", "--only", "tracks"],
        ] {
            let r = try waymark(command)
            #expect(r.status == 0, "\(command): \(r.stderr)")
            let object = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
            let features = object?["features"] as? [[String: Any]] ?? []
            #expect(object?["type"] as? String == "FeatureCollection" && !features.isEmpty, "\(command)")
            if command.contains("--geojson-points") {
                #expect(features.allSatisfy { ($0["geometry"] as? [String: Any])?["type"] as? String == "Point" })
            }
        }
        let unnamed = temporaryPath("")
        #expect(try waymark(["render", Self.segments, "--geojson-points", "-o", unnamed]).status == 0)
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: unnamed)))
        #expect((written as? [String: Any])?["type"] as? String == "FeatureCollection", "a file without an extension")

        let said = "options of GeoJSON output, which --format or -o's name says this is not"
        for command in [
            ["render", Self.segments, "--geojson-points", "-f", "gpx"],
            ["render", Self.segments, "--only", "tracks", "-o", temporaryPath(".gpx")],
            ["sessions", "export", "1", "--format", "gpx", "--no-coordinate-properties"],
            ["record", "--gpsd", "localhost:1", "--geojson-points", "-o", temporaryPath(".ndjson")],
            ["replay", Self.walk, "--no-store", "--only", "tracks", "-f", "text"],
        ] {
            let r = try waymark(command)
            #expect(r.status == 64 && r.stderr.contains(said), "\(command): \(r.stderr)")
        }
        let routes = try waymark(["replay", Self.walk, "--no-store", "--format", "geojson", "--only", "routes"])
        #expect(routes.status == 64 && routes.stderr.contains("are one track"), "\(routes.stderr)")
    }

    /// A gpsd capture's `eph` and `epv` reach its points' properties, every digit, as a
    /// delivered location's accuracies do (issue 29: "gpsd's eph/epv in point properties").
    @Test func aCapturesErrorsAreItsPointsAccuracies() throws {
        let capture = temporaryPath(".json")
        try """
        {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
        {"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.1,"lon":11.5,"altMSL":520.5,"eph":0.014,"epv":3.25,"speed":1.5,"eps":0.35,"track":90.0,"epd":12.25}
        {"class":"TPV","device":"/dev/ttyACM0","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":48.1001,"lon":11.5001,"eph":12.5}

        """.write(toFile: capture, atomically: true, encoding: .utf8)
        let r = try waymark(["render", capture, "--geojson-points"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        let properties = (object?["features"] as? [[String: Any]] ?? []).map {
            $0["properties"] as? [String: Any] ?? [:]
        }
        #expect(properties.count == 2)
        #expect(properties.first?["horizontalAccuracy"] as? Double == 0.014, "\(properties)")
        #expect(properties.first?["verticalAccuracy"] as? Double == 3.25, "\(properties)")
        #expect(properties.last?["horizontalAccuracy"] as? Double == 12.5, "\(properties)")
        #expect(properties.last?["verticalAccuracy"] == nil, "a 2D fix has no vertical accuracy")
        // The rest of the TPV's errors that a location has: eps and epd, for its speed and course.
        #expect(properties.first?["speedAccuracy"] as? Double == 0.35, "\(properties)")
        #expect(properties.first?["courseAccuracy"] as? Double == 12.25, "\(properties)")
        #expect(properties.last?["speedAccuracy"] == nil && properties.last?["courseAccuracy"] == nil)
    }

    @Test func helpNamesTheOptions() throws {
        for command in [["render"], ["replay"], ["record"], ["sessions", "export"]] {
            let help = try waymark(command + ["--help"]).stdoutText
            for option in [
                "--geojson-points", "--only <kind>", "--no-coordinate-properties", "--precision <decimals>", "--2d",
                "--simplify <metres>", "--summary-properties", "--simplestyle", "--geojson-seq",
            ] {
                #expect(help.contains(option), "\(command) --help lacks \(option)")
            }
        }
    }

    /// `-o FILE.geojsons` or `--geojson-seq` write a GeoJSON text sequence (RFC 8142) on
    /// render, replay and sessions export; GDAL reads it with its GeoJSONSeq driver, feature for
    /// feature as the collection.
    @Test func aSequenceIsWrittenAndGDALReadsIt() throws {
        let store = temporaryPath("-store") + "/s.sqlite"
        let runs: [[String]] = [
            ["render", Self.segments], ["render", Self.segments, "--geojson-points"],
            ["replay", Self.walk, "--store", store, "--end", "2m", "--quiet"],
            ["sessions", "export", "1", "--store", store],
        ]
        for command in runs {
            let sequence = temporaryPath(".geojsons")
            let r = try waymark(command + ["-o", sequence])
            #expect(r.status == 0, "\(command): \(r.stderr)")
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: sequence)))
            #expect(bytes.first == 0x1E, "\(command): a record separator first")
            let collection = try output(command + ["--format", "geojson"])
            let features =
                (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: collection)))
                as? [String: Any])?["features"] as? [Any]
            let records = bytes.split(separator: 0x1E)
            #expect(records.count == features?.count, "\(command)")
            if let ogrinfo = which("ogrinfo") {
                let info = try run(ogrinfo, ["-ro", "-so", "-al", sequence])
                #expect(info.stdoutText.contains("using driver `GeoJSONSeq'"), "\(command): \(info.stdoutText)")
                #expect(info.stdoutText.contains("Feature Count: \(records.count)\n"), "\(command): \(info.stdoutText)")
            }
        }
        let piped = try waymark(["render", Self.segments, "--geojson-seq"])
        #expect(
            piped.status == 0 && piped.stdout.first == 0x1E, "--geojson-seq alone writes a sequence: \(piped.stderr)")
    }

    /// The web options: out-of-range values and line options with points are usage errors that
    /// say what to give; `--precision` alone makes the output GeoJSON.
    @Test func theWebOptionsRefuseWhatCannotBeWritten() throws {
        for (arguments, said) in [
            (["--precision", "8"], "give 0 to 7 decimals"), (["--precision=-1"], "give 0 to 7 decimals"),
            (["--simplify=-2"], "a distance in metres"), (["--simplify", "nan"], "a distance in metres"),
            (["--geojson-points", "--simplify", "3"], "--simplify shapes lines"),
            (
                ["--geojson-points", "--summary-properties", "--simplestyle"],
                "--summary-properties, --simplestyle shape lines"
            ),
        ] {
            let r = try waymark(["render", Self.segments] + arguments)
            #expect(r.status == 64, "\(arguments)")
            #expect(r.stderr.contains(said), "\(arguments): \(r.stderr)")
        }
        let r = try waymark(["render", Self.segments, "--precision", "4"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        #expect(object?["type"] as? String == "FeatureCollection", "--precision alone writes GeoJSON")
        #expect(r.stdoutText.contains("[11.5,48.1,500]"), "\(r.stdoutText.prefix(300))")
    }
}
