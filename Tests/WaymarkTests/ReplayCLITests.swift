import Foundation
import Testing

@testable import Waymark

/// `waymark replay`, run as a user would run it.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct ReplayCLITests {
    static let walk = Paths.fixture("scenarios/traces/walk.gpx")

    func waymark(_ arguments: [String], directory: URL? = nil) throws -> ProcessResult {
        try run(Paths.waymark.path, arguments, directory: directory)
    }

    func scenario(_ text: String, suffix: String = ".yaml") throws -> String {
        let path = temporaryPath(suffix)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func foregroundLinesGoToStdoutAndBackgroundLinesToStderr() throws {
        let r = try waymark([
            "replay", Self.walk, "--background-modes", "location", "--allows-background-updates", "--background-at",
            "1m", "--foreground-at", "3m", "--end", "4m",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let out = r.stdoutText
        // 10 s apart at 1.4 m/s due east: 14 m, 0.0001887° of longitude at 48.137° N.
        #expect(out.contains("+0:00:50  UI  48.137, 11.5759433  ±10 m  1.4 m/s  90°\n"), "\(out)")
        #expect(out.contains("+0:03:00  UI  welcome back: 12 locations arrived while away"))
        #expect(!out.contains("background  48."))
        #expect(
            r.stderr.contains(
                "+0:01:10  background  48.137, 11.5763206  ±10 m  1.4 m/s  90°  (backgroundSession; location indicator shown)"
            ), "\(r.stderr)")
        #expect(r.stderr.contains("+0:01:00  app: inactive → background (userLeft)"))
        // The summary ends standard output.
        #expect(out.contains("Replay of \(Self.walk): 25 fixes over 0:04:00 (virtual time)"))
        #expect(out.contains("delivered 25, held 0, dropped 0, ignored 0"))
        #expect(out.contains("delivered by reason: foreground 13, backgroundSession 12"))
        #expect(out.contains("arrived while away: 12"))
    }

    /// Offsets do not wrap at a day: an event 25 hours into a run is `+25:00:00`, not `+1:00:00`
    /// (mutation m55 survived without this test).
    @Test func offsetsPastADayKeepTheirHours() throws {
        let trace = temporaryPath(".gpx")
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="48.1" lon="11.5"><time>2024-05-01T08:00:00Z</time></trkpt>
        <trkpt lat="48.1001" lon="11.5001"><time>2024-05-01T08:00:01Z</time></trkpt>
        <trkpt lat="48.1002" lon="11.5002"><time>2024-05-02T10:00:00Z</time></trkpt>
        </trkseg></trk></gpx>
        """.write(toFile: trace, atomically: true, encoding: .utf8)
        let r = try waymark(["replay", trace, "--rate", "max", "--no-store", "--background-at", "25h"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = r.stdoutText + r.stderr
        #expect(text.contains("+25:00:00  app: active → inactive (userLeft)"), "\(text)")
        #expect(text.contains("+25:00:05  app: background → suspended (idle)"), "\(text)")
        #expect(!text.contains("+1:00:0"), "\(text)")
        #expect(text.contains("over 26:00:00"), "\(text)")
    }

    @Test func theSameRunTwiceGivesTheSameAuditBytes() throws {
        var logs: [Data] = []
        for _ in 0..<2 {
            let audit = temporaryPath(".ndjson")
            defer { try? FileManager.default.removeItem(atPath: audit) }
            let r = try waymark([
                "replay", Self.walk, "--authorization", "notDetermined", "--request", "always", "--answer",
                "allowWhileUsing", "--always-answer", "changeToAlways", "--background-at", "90s", "--background-task",
                "--task-budget", "40s", "--foreground-at", "5m", "--audit", audit, "--quiet",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            logs.append(try Data(contentsOf: URL(fileURLWithPath: audit)))
        }
        #expect(logs[0] == logs[1])
        #expect(logs[0].count > 10_000)
    }

    @Test func geojsonCarriesEachPointsAppState() throws {
        let out = temporaryPath(".geojson")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try waymark([
            // iOS 12: a When In Use app runs on in the background with a task, for up to 180 s.
            "replay", Self.walk, "--ios", "12", "--background-task", "--background-at", "2m", "--end", "4m",
            "--format", "geojson", "-o", out, "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let object =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        let feature = try #require((object?["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        let coordinates = try #require(geometry["coordinates"] as? [[Double]])
        let properties = try #require(feature["properties"] as? [String: Any])
        let columns = try #require(properties["coordinateProperties"] as? [String: Any])
        let states = try #require(columns["appStates"] as? [String])
        let reasons = try #require(columns["reasons"] as? [String])
        #expect(coordinates.count == 25)
        #expect(states.count == coordinates.count && reasons.count == coordinates.count)
        #expect(states.filter { $0 == "active" }.count == 12)
        #expect(states.filter { $0 == "background" }.count == 13)
        #expect(Set(reasons) == ["foreground", "backgroundTask"])
        #expect((columns["times"] as? [String])?.count == 25)
        if Paths.sharedAvailable {
            let g = try run(Paths.shared.appendingPathComponent("tools/check-geojson").path, ["--strict", out])
            #expect(g.status == 0, "\(g.stdoutText)")
        }
    }

    @Test func ndjsonGivesOneLinePerDeliveredLocation() throws {
        let r = try waymark(["replay", Self.walk, "--end", "1m", "--format", "ndjson", "--quiet"])
        #expect(r.status == 0)
        let lines = r.stdoutText.split(separator: "\n")
        #expect(lines.count == 7)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["time"] as? String == "2024-05-01T08:00:00.000Z")
        #expect(first["appState"] as? String == "active")
        #expect(first["latitude"] as? Double == 48.137)
        #expect(r.stderr.contains("Replay of"))
    }

    @Test func aYAMLScenarioAndTheSameScenarioInJSONAgree() throws {
        let yaml = try scenario(
            """
            info:
              backgroundModes: [location]
            device:
              authorization: always
            manager:
              allowsBackgroundLocationUpdates: true
              distanceFilter: 30
            timeline:
              - at: 1m
                do: background
            end: 3m
            """)
        let json = try scenario(
            """
            {"info": {"backgroundModes": ["location"]}, "device": {"authorization": "always"},
             "manager": {"allowsBackgroundLocationUpdates": true, "distanceFilter": 30},
             "timeline": [{"at": "1m", "do": "background"}], "end": "3m"}
            """, suffix: ".json")
        var outputs: [String] = []
        for file in [yaml, json] {
            let r = try waymark(["replay", Self.walk, "--scenario", file, "--format", "ndjson", "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            outputs.append(r.stdoutText)
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0].contains("\"reason\":\"backgroundSession\""))
        #expect(outputs[0].split(separator: "\n").count == 7)  // every third fix: 42 m apart, 19 fixes in 3 min
    }

    @Test func badScenarioFilesNameTheFileLineAndKey() throws {
        let cases: [(String, String)] = [
            (
                "info:\n  backgroundMode: [location]\n",
                ":2:3: unknown key 'backgroundMode' in info (expected one of: backgroundModes, usageDescriptions, defaultAccuracyReduced, temporaryUsageDescriptions, requiresExplicitServiceSession)"
            ),
            ("device:\n  authorization: sometimes\n", ":2:18: 'sometimes' is not an authorization"),
            ("timeline:\n  - at: soon\n    do: background\n", ":2:9: 'at' must be a duration"),
            ("timeline:\n  - at: 1m\n    do: dance\n", ":3:9: unknown action 'dance'"),
            ("timeline:\n  - at: 1m\n    do: setAuthorization\n", ":2:5: 'setAuthorization' needs a 'value'"),
            ("manager:\n  distanceFilter: far\n", ":2:19: 'distanceFilter' must be a number"),
            (
                "app:\n  heldDelivery: some\n",
                ":2:17: 'some' is not a valid 'heldDelivery' (expected one of: newest, all, none)"
            ),
            (
                "user:\n  whenInUse: allowOnce\n  whenInUse: dontAllow\n",
                ":2:3: 'whenInUse' appears more than once in the same mapping"
            ),
            ("info: [\n", ":2:1: not valid YAML"),
            ("speed: 3\n", ":1:1: unknown key 'speed' in the scenario"),
            ("system:\n  iosVersion: 11\n", ":2:15: '11' is not an iOS release Waymark models"),
            ("system:\n  iosVersion: 19\n", ":2:15: '19' is not an iOS release Waymark models"),
            ("end: 1e10\n", ":1:6: 'end' must be a duration"),
            ("timeline:\n  - at: 9.3e9\n    do: background\n", ":2:9: 'at' must be a duration"),
            ("replay:\n  rate: 1e-300\n", ":2:9: 'rate' must be 'max' or a factor of real time from 0.001"),
        ]
        for (text, message) in cases {
            let file = try scenario(text)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let r = try waymark(["replay", Self.walk, "--scenario", file])
            #expect(r.status == 65, "\(text)")
            #expect(r.stderr.contains("waymark: \(file)\(message)"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        // Size: a timeline past 20 000 entries is refused at the first entry too many, a file
        // past 1 MiB before it is parsed (a million entries took 888 MB).
        let long = try scenario(
            "timeline:\n" + String(repeating: "  - at: 1m\n    do: background\n", count: 20_001))
        defer { try? FileManager.default.removeItem(atPath: long) }
        let tooLong = try waymark(["replay", Self.walk, "--scenario", long])
        #expect(tooLong.status == 65)
        #expect(
            tooLong.stderr.contains("\(long):40002:5: the timeline has 20001 entries; a scenario has at most 20000"),
            "\(tooLong.stderr)")
        let huge = try scenario("# " + String(repeating: "x", count: 1 << 20) + "\n")
        defer { try? FileManager.default.removeItem(atPath: huge) }
        let tooBig = try waymark(["replay", Self.walk, "--scenario", huge])
        #expect(tooBig.status == 65)
        #expect(tooBig.stderr.contains("\(huge): is larger than 1 MiB"), "\(tooBig.stderr)")
        // A file that is not there is no input (sysexits' 66, as for a missing trace), not bad data.
        let missing = try waymark(["replay", Self.walk, "--scenario", "/no/such/scenario.yaml"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/no/such/scenario.yaml: cannot be read"))
    }

    @Test func usageErrorsExit64() throws {
        for arguments in [
            ["--rate", "fast"], ["--background-at", "soon"], ["--authorization", "sometimes"], ["--accuracy", "close"],
            ["--background-modes", "voip"], ["--loop", "forever"], ["--speed", "0"], ["--fetch-interval", "often"],
            ["--ios", "11"], ["--ios", "27"], ["--held-delivery", "some"], ["--accuracy", "reduced", "--ios", "13"],
            // Every duration and time offset past 285 years, and rates that would trap the pacing.
            ["--end", "1e10"], ["--background-at", "9.3e9"], ["--foreground-at", "2922789d"],
            ["--task-budget", "1e12s"], ["--start-offset", "99999999999h"], ["--interval", "1e300"],
            ["--fetch-interval", "1e16"], ["--rate", "1e-12"], ["--rate", "1e-300"], ["--rate", "0.0009"],
            ["--rate", "inf"], ["--rate", "nan"], ["--rate", "-1"],
            // Regions: ID:LATITUDE,LONGITUDE,RADIUS, in range, with a radius above 0.
            ["--region", "home:47.26,11.39"], ["--region", ":47.26,11.39,200"], ["--region", "home:91,11.39,200"],
            ["--region", "home:47.26,181,200"], ["--region", "home:47.26,11.39,0"], ["--region", "home"],
            ["--push-at", "later"], ["--terminate-at", "-5s"], ["--upload-dir", "/nonexistent/directory"],
        ] {
            let r = try waymark(["replay", Self.walk] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
        }
    }

    /// `--held-delivery`: a suspended Always app's queue comes in one call (`all`), as its newest
    /// location alone (`newest`), or not at all (`none`).
    @Test func heldDeliveryChoosesWhatASuspendedAppReceives() throws {
        var outcomes: [String: [String]] = [:]
        for which in ["all", "newest", "none"] {
            let audit = temporaryPath(".ndjson")
            defer { try? FileManager.default.removeItem(atPath: audit) }
            let r = try waymark([
                "replay", Self.walk, "--authorization", "always", "--background-at", "1m", "--foreground-at", "3m",
                "--end", "4m", "--held-delivery", which, "--no-store", "--quiet", "--audit", audit,
            ])
            #expect(r.status == 0, "\(r.stderr)")
            let events = try ndjsonObjects(String(contentsOfFile: audit, encoding: .utf8))
            #expect(events.filter { $0["decision"] as? String == "held" }.count == 11, "\(which)")
            outcomes[which] = events.compactMap { e in
                switch e["event"] as? String {
                case "didUpdateLocations": "delivered \(e["count"] ?? "")"
                case "heldDiscarded": "discarded \(e["count"] ?? "")"
                default: nil
                }
            }
        }
        #expect(outcomes["all"] == ["delivered 11"])
        #expect(outcomes["newest"] == ["discarded 10"])
        #expect(outcomes["none"] == ["discarded 11"])
    }

    /// `--accuracy reduced` (`kCLLocationAccuracyReduced`, iOS 14+): every fix comes from the
    /// reduced source, at most one update per 15 minutes.
    @Test func reducedAccuracyIsADesiredAccuracy() throws {
        let audit = temporaryPath(".ndjson")
        defer { try? FileManager.default.removeItem(atPath: audit) }
        let r = try waymark(["replay", Self.walk, "--accuracy", "reduced", "--no-store", "--quiet", "--audit", audit])
        #expect(r.status == 0, "\(r.stderr)")
        let fixes = try ndjsonObjects(String(contentsOfFile: audit, encoding: .utf8)).filter {
            $0["event"] as? String == "fix"
        }
        #expect(fixes.count == 61)
        #expect(fixes.allSatisfy { $0["positioning"] as? String == "reduced" })
        #expect(fixes.filter { $0["decision"] as? String == "delivered" }.count == 1)
        #expect(fixes.filter { $0["reason"] as? String == "accuracyThrottle" }.count == 60)
    }

    @Test func badTracesExit65() throws {
        let r = try waymark(["replay", Paths.fixture("bad/lat-out-of-range.gpx")])
        #expect(r.status == 65)
        #expect(r.stderr.contains("lat-out-of-range.gpx:6:7:"))
        let empty = temporaryPath(".gpx")
        try #"<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"/>"#.write(
            toFile: empty, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let nothing = try waymark(["replay", empty])
        #expect(nothing.status == 65)
        #expect(nothing.stderr.contains("nothing to replay"))
        // Times 500 years apart: offsets a replay cannot hold, refused rather than trapped.
        let span = temporaryPath(".gpx")
        try """
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="41.9" lon="12.5"><time>1000-03-15T11:00:00Z</time></trkpt>
        <trkpt lat="41.9" lon="12.6"><time>1500-03-15T11:00:00Z</time></trkpt></trkseg></trk></gpx>
        """.write(toFile: span, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: span) }
        let far = try waymark(["replay", span, "--no-store", "--rate", "max"])
        #expect(far.status == 65)
        #expect(far.stderr.contains("\(span): point 1 comes 500 years after the first"), "\(far.stderr)")
    }

    @Test func fetchSyncsStoredLocationsToTheSink() throws {
        let sink = temporaryPath(".ndjson")
        defer { try? FileManager.default.removeItem(atPath: sink) }
        let long = Paths.fixture("scenarios/traces/long.gpx")
        let r = try waymark([
            "replay", long, "--authorization", "always", "--background-modes", "fetch", "--fetch-interval", "15m",
            "--background-at", "5m", "--end", "40m", "--fetch-sink", sink, "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: sink, encoding: .utf8).split(separator: "\n")
        // Five fixes in the foreground, one in the grace period; suspended, the Always app's
        // fixes queue (one a minute) and reach it at each fetch (15m, 30m) in one call, before
        // the fix that arrives during the fetch: 6 + (9 + 1) + (14 + 1).
        try #require(lines.count == 31, "\(lines)")
        #expect(lines[6].contains("\"reason\":\"resumed\"") && lines[14].contains("\"reason\":\"resumed\""))
        #expect(lines[15].contains("\"reason\":\"backgroundFetch\"") && lines[30].contains("backgroundFetch"))
        // A sink that fails to take the data (a full disk) makes the fetch report failed; the run
        // goes on, and the same locations are offered again at the next fetch.
        let audit = temporaryPath(".ndjson")
        defer { try? FileManager.default.removeItem(atPath: audit) }
        let full = try waymark([
            "replay", long, "--background-modes", "fetch", "--fetch-interval", "15m", "--background-at", "5m",
            "--end", "40m", "--fetch-sink", "/dev/full", "--audit", audit, "--quiet",
        ])
        #expect(full.status == 0, "\(full.stderr)")
        let fetches = try String(contentsOfFile: audit, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("\"event\":\"fetch\"") && $0.contains("completed") }
        #expect(fetches.count == 2)
        #expect(fetches.allSatisfy { $0.contains("\"result\":\"failed\"") && $0.contains("No space left on device") })
        // A sink that cannot be opened at all is an I/O error before the run starts.
        let directory = try waymark(["replay", long, "--fetch-sink", "/tmp", "--quiet"])
        #expect(directory.status == 74)
        #expect(directory.stderr.contains("/tmp: Is a directory"), "\(directory.stderr)")
    }

    /// A short run at 20× real time takes about as long as it should (loosely: the machine is noisy).
    @Test(.timeLimit(.minutes(45))) func aRealTimeRunKeepsPaceWithTheClock() throws {
        let start = ContinuousClock.now
        let r = try waymark(["replay", Self.walk, "--end", "1m", "--rate", "20", "--quiet"])
        let elapsed = ContinuousClock.now - start
        #expect(r.status == 0)
        #expect(r.stdoutText.contains("(20× real time)"))
        #expect(elapsed >= .milliseconds(2900), "60 s at 20× is 3 s; took \(elapsed)")
        #expect(elapsed < .seconds(20), "took \(elapsed)")
    }

    /// Every example in docs/scenarios.md is a valid scenario.
    @Test func theDocumentedExamplesRun() throws {
        let doc = try String(
            contentsOf: Paths.root.appendingPathComponent("docs/scenarios.md"), encoding: .utf8)
        var examples: [(String, String)] = []
        var current: (String, [Substring])?
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false) {
            if let block = current {
                if line == "```" {
                    examples.append((block.0, block.1.joined(separator: "\n")))
                    current = nil
                } else {
                    current?.1.append(line)
                }
            } else if line == "```yaml" || line == "```json" {
                current = (String(line.dropFirst(3)), [])
            }
        }
        #expect(examples.count >= 12)
        for (kind, text) in examples {
            let file = try scenario(text, suffix: ".\(kind)")
            defer { try? FileManager.default.removeItem(atPath: file) }
            let r = try waymark(["replay", Self.walk, "--scenario", file, "--rate", "max", "--quiet"])
            #expect(r.status == 0, "\(text)\n\(r.stderr)")
        }
    }

    @Test func recordExits69WhenGpsdCannotBeReached() throws {
        let start = ContinuousClock.now
        let r = try waymark(["record", "--gpsd", "localhost:1", "--duration", "30s"])
        #expect(r.status == 69)
        #expect(r.stderr.contains("waymark: cannot reach gpsd at localhost:1"), "\(r.stderr)")
        #expect(r.stderr.contains("hint: start gpsd"))
        #expect(ContinuousClock.now - start < .seconds(10), "it must not wait for gpsd")
        #expect(try waymark(["record", "--gpsd", "localhost:notaport"]).status == 64)
    }

    @Test func helpTeachesWithExamples() throws {
        let r = try waymark(["replay", "--help"])
        #expect(r.stdoutText.contains("Examples:"))
        #expect(r.stdoutText.contains("--background-at"))
        #expect(r.stdoutText.contains("--scenario"))
    }
}

/// The wake-up services from the command line: the flags for the common cases, and the scenario
/// file's errors for the new keys and actions.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct WakeServiceCLITests {
    static let drive = Paths.fixture("scenarios/traces/drive.gpx")

    func audit(_ arguments: [String]) throws -> (ProcessResult, [[String: Any]]) {
        let out = temporaryPath(".ndjson")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try run(
            Paths.waymark.path,
            ["replay", Self.drive, "--rate", "max", "--no-store", "--quiet", "--audit", out, "-o", "/dev/null"]
                + arguments)
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (r, try ndjsonObjects(text))
    }

    static func launches(_ events: [[String: Any]]) -> [String] {
        events.compactMap {
            guard $0["event"] as? String == "stateChanged", $0["from"] as? String == "notRunning",
                $0["to"] as? String == "background"
            else { return nil }
            return $0["cause"] as? String
        }
    }

    /// `--significant-changes` with Always relaunches the swiped-away app; with When In Use it
    /// does not.
    @Test func significantChangesRelaunchAnAlwaysAppFromTheCommandLine() throws {
        let (always, events) = try audit([
            "--authorization", "always", "--significant-changes", "--background-at", "30s", "--terminate-at", "1m",
        ])
        #expect(always.status == 0, "\(always.stderr)")
        #expect(Self.launches(events) == ["significantLocationChange"])
        let (whenInUse, wiuEvents) = try audit([
            "--authorization", "whenInUse", "--significant-changes", "--background-at", "30s", "--terminate-at", "1m",
        ])
        #expect(whenInUse.status == 0)
        #expect(Self.launches(wiuEvents).isEmpty)
    }

    /// `--region` and `--push-at`.
    @Test func regionsAndPushesFromTheCommandLine() throws {
        let (r, events) = try audit([
            "--authorization", "always", "--region", "depot:48.1937,11.575,500", "--terminate-at", "20s",
            "--background-modes", "remote-notification", "--push-at", "1m",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.launches(events) == ["region"])
        #expect(
            events.contains {
                $0["event"] as? String == "region" && $0["action"] as? String == "entered"
                    && $0["identifier"] as? String == "depot"
            })
        #expect(
            events.contains {
                $0["event"] as? String == "push" && $0["action"] as? String == "dropped"
                    && $0["reason"] as? String == "userTerminated"
            }, "the push after the swipe launches nothing")
    }

    @Test func badServiceScenariosNameTheFileLineAndColumn() throws {
        let cases: [(String, String)] = [
            (
                "timeline:\n  - at: 1m\n    do: startMonitoring\n    value: {identifier: a, latitude: 91, longitude: 0, radius: 10}\n",
                ":4:38: 'latitude' must be between -90 and 90"
            ),
            (
                "timeline:\n  - at: 1m\n    do: startMonitoring\n    value: {identifier: a, latitude: 1, longitude: 0}\n",
                ":4:12: a region needs 'identifier', 'latitude', 'longitude' and 'radius'"
            ),
            (
                "timeline:\n  - at: 1m\n    do: submitProcessing\n    value: {requiresPower: true}\n",
                ":4:13: unknown key 'requiresPower' in 'submitProcessing'"
            ),
            (
                "timeline:\n  - at: 1m\n    do: startServiceSession\n    value: sometimes\n",
                ":4:12: 'sometimes' is not a valid 'value'"
            ),
            (
                "info:\n  backgroundModes: [voip]\n",
                ":2:21: 'voip' is not a background mode Waymark models (location, fetch, remote-notification, audio, processing)"
            ),
            ("device:\n  lowPowerMode: maybe\n", ":2:17: 'lowPowerMode' must be true or false"),
            ("system:\n  pushesPerHour: -1\n", ":2:18: 'pushesPerHour' must be a whole number"),
            ("user:\n  temporaryFullAccuracy: sure\n", ":2:26: 'temporaryFullAccuracy' must be allow or deny"),
            (
                "app:\n  regions:\n    - {identifier: a, latitude: 1, longitude: 2, radius: 0}\n",
                ":3:58: 'radius' must be metres above 0"
            ),
        ]
        for (text, message) in cases {
            let path = temporaryPath(".yaml")
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let r = try run(Paths.waymark.path, ["replay", Self.drive, "--scenario", path, "--no-store"])
            #expect(r.status == 65, "\(text)")
            #expect(r.stderr.contains("waymark: \(path)\(message)"), "\(r.stderr)")
        }
    }
}
