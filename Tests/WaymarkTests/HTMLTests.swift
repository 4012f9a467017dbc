import Foundation
import Testing

@testable import Waymark

/// Issue 17: `render --format html`, a trace as one self-contained page.
@Suite struct HTMLPageTests {
    static let walk = Paths.root.appendingPathComponent("traces/city-walk.gpx").path

    static func page(_ events: [GPXEvent], title: String = "test.gpx") throws -> String {
        let data = try render { sink in
            let writer = TraceHTMLWriter(sink: sink, options: TraceHTMLWriter.Options(title: title))
            for event in events { try writer.write(event) }
            try writer.finish()
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The page's data island, decoded.
    static func island(_ page: String) throws -> [String: Any] {
        let open = "<script type=\"application/json\" id=\"waymark-data\">"
        let start = try #require(page.range(of: open)).upperBound
        let end = try #require(page.range(of: "</script>", range: start..<page.endIndex)).lowerBound
        return try #require(
            try JSONSerialization.jsonObject(with: Data(page[start..<end].utf8)) as? [String: Any])
    }

    /// The map's own `<svg>`, as ``SVGWriter`` drew it.
    static func mapSVG(_ page: String) throws -> String {
        let start = try #require(page.range(of: "<svg id=\"map-svg\"")).lowerBound
        let end = try #require(page.range(of: "</svg>", range: start..<page.endIndex)).upperBound
        return String(page[start..<end])
    }

    @Test func aTracePageHasTheMapProfilesStatisticsAndHoverData() throws {
        let events = try SVGTests.fileEvents(Self.walk)
        let page = try Self.page(events, title: "city-walk.gpx")
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        // The map is the SVG picture, less its XML declaration.
        let alone = try SVGTests.draw(events, title: "city-walk.gpx")
        let map = try Self.mapSVG(page)
        #expect(SVGTests.polylines(map).map { $0.map(\.x) } == SVGTests.polylines(alone).map { $0.map(\.x) })
        #expect(!page.contains("<?xml"))
        // Profiles against time and distance, elevation and speed.
        for id in ["elevation-t", "speed-t", "elevation-dist", "speed-dist"] {
            #expect(page.contains("<svg id=\"\(id)\""), "\(id)")
        }
        // The statistics are info's.
        var stats = TraceStatistics()
        for e in events { stats.add(e) }
        for (label, value) in TextRenderer.summaryRows(of: stats) {
            var escaped = ""
            for c in value { escaped += c == "&" ? "&amp;" : c == "<" ? "&lt;" : c == ">" ? "&gt;" : String(c) }
            #expect(page.contains("<tr><th>\(label)</th><td>\(escaped)</td></tr>"), "\(label)")
        }
        // Hover data: every point (fewer than the limit), at its pixel on the map.
        let data = try Self.island(page)
        let points = try #require(data["points"] as? [String: [Any]])
        let trackPoints = events.compactMap { if case .trackPoint(let p) = $0 { p } else { nil } }
        #expect(points["lat"]?.count == trackPoints.count)
        for key in ["x", "y", "t", "lon", "ele", "speed", "dist"] { #expect(points[key]?.count == trackPoints.count) }
        let lats = points["lat"]!.compactMap { $0 as? Double }
        #expect(zip(lats, trackPoints).allSatisfy { abs($0 - $1.coordinate.latitude) < 1e-7 })
        let times = points["t"]!.compactMap { $0 as? Double }
        #expect(times.first == trackPoints.first?.time?.timeIntervalSince1970)
        // The first point's pixel is the map's start mark.
        let start = try #require(SVGTests.polylines(map).first?.first)
        #expect(abs((points["x"]![0] as? Double ?? 0) - start.x) < 0.06)
        #expect(abs((points["y"]![0] as? Double ?? 0) - start.y) < 0.06)
        // Distances grow along the track, to its length.
        let distances = points["dist"]!.compactMap { $0 as? Double }
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(abs((distances.last ?? 0) - stats.length2D) < 0.1)
        // The walk has elevations, times (speeds) and heart rates: a profile of each against time
        // and against distance.
        let charts = try #require(data["charts"] as? [[String: Any]])
        #expect(
            charts.compactMap { $0["id"] as? String } == [
                "elevation-t", "speed-t", "heart-rate-t", "elevation-dist", "speed-dist", "heart-rate-dist",
            ])
    }

    @Test func theSameTraceGivesTheSameBytes() throws {
        let events = try SVGTests.fileEvents(Self.walk)
        #expect(try Self.page(events) == Self.page(events))
    }

    /// Nothing is fetched: no address but the SVG namespace, no external script, style, image or
    /// font.
    @Test func aPageFetchesNothing() throws {
        let page = try Self.page(try SVGTests.fileEvents(Self.walk))
        let addresses = page.components(separatedBy: "http").dropFirst().map { String($0.prefix(30)) }
        #expect(addresses.allSatisfy { $0.hasPrefix("://www.w3.org/2000/svg\"") }, "\(addresses)")
        for fetching in ["src=", "<link", "@import", "<iframe", "fetch(", "XMLHttpRequest", "<img", "<image"] {
            #expect(!page.contains(fetching), "\(fetching)")
        }
        // The only url() is the map's clip path: a reference inside the page.
        let urls = page.components(separatedBy: "url(").dropFirst().map { String($0.prefix(10)) }
        #expect(
            !urls.isEmpty && urls.allSatisfy { $0.hasPrefix("#map-clip)") || $0.hasPrefix("#overlay-c") }, "\(urls)")
        // Without --tiles the data island names no tiles, so the script asks for none.
        #expect(try Self.island(page)["tiles"] == nil)
    }

    /// A name cannot end the data island or the markup early.
    @Test func namesCannotEndTheScriptOrTheMarkup() throws {
        var events = SVGTests.track([[(48, 11), (48.001, 11.001)]], name: "</script><script>alert(1)</script>")
        var m = GPXMetadata()
        m.name = "<b>bold</b> & </script>"
        events.insert(.metadata(m), at: 1)
        let page = try Self.page(events, title: "a</script>.gpx")
        #expect(page.components(separatedBy: "<script").count == 3, "the data island and the script only")
        #expect(page.contains("a&lt;/script&gt;.gpx"))
        _ = try Self.island(page)
    }

    /// 1 M points: a page under 5 MB, with hover details for at most 5,000 of them.
    @Test(.timeLimit(.minutes(45))) func aMillionPointsGiveAPageUnderFiveMegabytes() throws {
        let count = 1_000_000
        let data = try render { sink in
            let writer = TraceHTMLWriter(sink: sink)
            try writer.write(.trackStart(GPXPathInfo()))
            try writer.write(.segmentStart)
            for i in 0..<count {
                let t = Double(i) / Double(count)
                var p = GPXPoint(
                    latitude: 51.5 + 0.01 * t * sin(t * 40 * .pi), longitude: -0.1 + 0.016 * t * cos(t * 40 * .pi))
                p.time = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
                p.elevation = 100 + 50 * sin(t * 7)
                try writer.write(.trackPoint(p))
            }
            try writer.write(.segmentEnd(GPXExtensions()))
            try writer.write(.trackEnd(GPXPathInfo()))
            try writer.finish()
        }
        #expect(data.count < 5_000_000, "\(data.count) bytes")
        let page = String(decoding: data, as: UTF8.self)
        let points = try #require(try Self.island(page)["points"] as? [String: [Any]])
        #expect(points["x"]?.count == TraceHTMLWriter.maxHoverPoints)
        #expect(page.contains("5000 of its 1000000 points, evenly spread"))
        #expect(page.contains("the profiles are drawn from 1 in 16 points"))
        // The last point is among those kept.
        #expect((points["t"]?.last as? Double) == 1_700_000_000 + Double(count - 1))
    }

    /// The last point is drawn however the sampling falls, here on the very point that fills it.
    @Test(arguments: [8, 9, 15, 16, 17, 40])
    func theLastPointIsAlwaysKept(_ count: Int) {
        var samples = PointSamples()
        samples.capacity = 8
        for i in 0..<count {
            samples.append(
                latitude: Double(i), longitude: 0, time: .nan, elevation: .nan, speed: .nan, distance: 0, segment: 0)
        }
        samples.keepLast()
        #expect(samples.latitudes.last == Double(count - 1), "\(samples.latitudes)")
        #expect(samples.latitudes.first == 0)
    }

    @Test func keptSamplesAreEvenlySpreadAfterHalving() {
        var samples = PointSamples()
        samples.capacity = 8
        for i in 0..<40 {
            samples.append(
                latitude: Double(i), longitude: 0, time: .nan, elevation: .nan, speed: .nan, distance: 0, segment: 0)
        }
        #expect(samples.stride == 8)
        let kept = samples.latitudes.map { Int($0) }
        #expect(zip(kept, kept.dropFirst()).allSatisfy { $1 - $0 == samples.stride || $1 - $0 == samples.stride / 2 })
        #expect(kept.first == 0)
    }
}

/// `SessionReportWriter`: what happened to each fix, and when.
@Suite struct SessionReportTests {
    static func report(_ lines: [String], title: String = "run") throws -> String {
        let data = try render { sink in
            let writer = SessionReportWriter(sink: sink, options: SessionReportWriter.Options(title: title))
            for line in lines { try writer.add(line: line) }
            try writer.finish()
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func fix(
        _ second: Int, index: Int, _ decision: String, _ reason: String, state: String = "active", lat: Double = 48
    ) -> String {
        """
        {"time":"2024-05-01T08:00:\(second < 10 ? "0" : "")\(second).000Z","event":"fix","index":\(index),"segment":0,\
        "decision":"\(decision)","reason":"\(reason)","appState":"\(state)","authorization":"authorizedAlways",\
        "accuracy":"full","latitude":\(lat),"longitude":11.0}
        """
    }

    static func event(_ second: Int, _ name: String, _ fields: String = "") -> String {
        "{\"time\":\"2024-05-01T08:00:\(second < 10 ? "0" : "")\(second).000Z\",\"event\":\"\(name)\"\(fields.isEmpty ? "" : ",")\(fields)}"
    }

    static let run: [String] = [
        event(0, "started", #""source":"walk.gpx","format":4,"ios":26"#),
        event(0, "stateChanged", #""from":"notRunning","to":"active","cause":"userLaunch""#),
        event(0, "managerCreated", #""authorization":"authorizedAlways","reported":true"#),
        event(0, "updates", #""action":"started""#),
        fix(1, index: 0, "delivered", "foreground", lat: 48.000),
        fix(2, index: 1, "dropped", "distanceFilter", lat: 48.001),
        event(3, "stateChanged", #""from":"active","to":"background","cause":"user""#),
        event(3, "backgroundTask", #""action":"began","task":1,"reason":"enteredBackground""#),
        fix(4, index: 2, "delivered", "backgroundTask", state: "background", lat: 48.002),
        event(5, "backgroundTask", #""action":"ended","task":1"#),
        event(5, "stateChanged", #""from":"background","to":"suspended","cause":"taskEnded""#),
        fix(6, index: 3, "held", "suspended", state: "suspended", lat: 48.003),
        fix(7, index: 4, "held", "suspended", state: "suspended", lat: 48.004),
        event(8, "stateChanged", #""from":"suspended","to":"background","cause":"resumed""#),
        fix(8, index: 3, "delivered", "resumed", state: "background", lat: 48.003),
        event(8, "heldDiscarded", #""count":1,"reason":"stale""#),
        event(9, "paused", #""reason":"stationary""#),
        fix(10, index: 5, "dropped", "paused", state: "background", lat: 48.005),
        event(11, "updates", #""action":"stopped""#),
        fix(12, index: 6, "ignored", "notUpdating", state: "background", lat: 48.006),
        event(13, "finished", #""fixes":7,"delivered":2,"held":2,"dropped":2,"ignored":1,"resumed":1"#),
    ]

    @Test func fixesAreColouredByWhatHappenedToThem() throws {
        let page = try Self.report(Self.run)
        let data = try HTMLPageTests.island(page)
        let categories = try #require(data["categories"] as? [String])
        let points = try #require(data["points"] as? [String: [Any]])
        let names = (points["cat"] ?? []).compactMap { ($0 as? Int).map { categories[$0] } }
        #expect(
            names == [
                "delivered in the foreground", "dropped", "delivered in the background", "held, delivered later",
                "held, never delivered", "dropped", "ignored (not updating)",
            ])
        let reasons = try #require(data["reasons"] as? [String])
        let why = (points["why"] ?? []).compactMap { ($0 as? Int).map { reasons[$0] } }
        #expect(
            why == [
                "foreground", "distanceFilter", "backgroundTask", "suspended", "suspended", "paused", "notUpdating",
            ])
        // The legend counts every fix once; the held fix delivered later is not counted twice.
        #expect(page.contains("delivered in the foreground (1)"))
        #expect(page.contains("held, delivered later (1)"))
        #expect(page.contains("held, never delivered (1)"))
        #expect(page.contains("dropped (2)"))
        #expect(page.contains("<tr><th>dropped</th><td>2: distanceFilter 1, paused 1</td></tr>"))
        #expect(page.contains("fixes 7, delivered 2, held 2, dropped 2, ignored 1, resumed 1"))
        // Each run of a category has its colour on the map.
        for c in SessionReportWriter.Category.allCases {
            #expect(page.contains("stroke=\"\(c.colour)\"") || page.contains("fill=\"\(c.colour)\""), "\(c)")
        }
    }

    /// Every line is listed for clicks, in time order, the held fix's two records among them.
    @Test func theEventsOfEveryMomentAreListed() throws {
        let data = try HTMLPageTests.island(try Self.report(Self.run))
        let events = try #require(data["events"] as? [[Any]])
        #expect(events.compactMap { $0[1] as? String }.sorted() == Self.run.sorted())
        let times = events.compactMap { $0[0] as? Double }
        #expect(times == times.sorted())
    }

    @Test func theTimelineShowsStatesWorkAndPauses() throws {
        let page = try Self.report(Self.run)
        for label in ["app state", "authorization", "updates", "background work"] {
            #expect(page.contains(">\(label)</text>"), "\(label)")
        }
        #expect(page.contains("<title>active: 2024-05-01T08:00:00.000Z → 2024-05-01T08:00:03.000Z</title>"))
        #expect(page.contains("<title>suspended: 2024-05-01T08:00:05.000Z → 2024-05-01T08:00:08.000Z</title>"))
        #expect(page.contains("<title>backgroundTask: 2024-05-01T08:00:03.000Z → 2024-05-01T08:00:05.000Z</title>"))
        #expect(page.contains("<title>paused: 2024-05-01T08:00:09.000Z → 2024-05-01T08:00:11.000Z</title>"))
        #expect(!page.contains(">prompts</text>"), "a row without anything is left out")
    }

    /// A held fix delivered when Always is granted (reason `alwaysGranted`, not `resumed`) is
    /// the same fix: held, delivered later, counted once.
    @Test func aFixHeldForAlwaysIsCountedOnceWhenGranted() throws {
        let page = try Self.report([
            Self.event(0, "started", #""source":"walk.gpx","format":4,"ios":26"#),
            Self.fix(1, index: 0, "held", "awaitingAlways", state: "background"),
            Self.fix(2, index: 0, "delivered", "alwaysGranted", state: "background"),
            Self.fix(3, index: 1, "delivered", "backgroundSession", state: "background"),
        ])
        #expect(page.contains("held, delivered later (1)"))
        #expect(!page.contains("held, never delivered ("))
        #expect(page.contains("delivered in the background (1)"))
        #expect(page.contains(">2 fix(es)") || page.contains("\"subtitle\">2 fix(es)"), "two fixes, not three")
    }

    /// What the app had under way ends when it is terminated: its background task, its updates.
    @Test func workAndUpdatesEndWhenTheAppIsTerminated() throws {
        let page = try Self.report([
            Self.event(0, "stateChanged", #""from":"notRunning","to":"active","cause":"userLaunch""#),
            Self.event(0, "updates", #""action":"started""#),
            Self.event(2, "backgroundTask", #""action":"began","task":1,"reason":"enteredBackground""#),
            Self.event(4, "terminated", #""reason":"watchdog""#),
            Self.event(9, "finished", #""fixes":0"#),
        ])
        #expect(page.contains("<title>backgroundTask: 2024-05-01T08:00:02.000Z → 2024-05-01T08:00:04.000Z</title>"))
        #expect(page.contains("<title>updating: 2024-05-01T08:00:00.000Z → 2024-05-01T08:00:04.000Z</title>"))
        #expect(page.contains("<title>notRunning: 2024-05-01T08:00:04.000Z → 2024-05-01T08:00:09.000Z</title>"))
    }

    /// The accuracy row starts from what the fixes say, not from full accuracy.
    @Test func theAccuracyRowStartsReducedWhenTheFixesAre() throws {
        let reduced = Self.fix(1, index: 0, "delivered", "foreground").replacingOccurrences(
            of: #""accuracy":"full""#, with: #""accuracy":"reduced""#)
        let page = try Self.report([
            Self.event(0, "managerCreated", #""authorization":"authorizedWhenInUse","reported":true"#), reduced,
            Self.event(5, "finished", #""fixes":1"#),
        ])
        #expect(page.contains("<title>reducedAccuracy: 2024-05-01T08:00:00.000Z → 2024-05-01T08:00:05.000Z</title>"))
        #expect(!page.contains("fullAccuracy"))
    }

    /// Overlapping work (audio and a background task begun together) gives the same bytes on
    /// every run, each span in a lane of its own.
    @Test func overlappingWorkGivesTheSameBytesInLanes() throws {
        let lines = [
            Self.event(0, "stateChanged", #""from":"notRunning","to":"active","cause":"userLaunch""#),
            Self.event(1, "backgroundTask", #""action":"began","task":1"#),
            Self.event(1, "audio", #""action":"started""#),
            Self.event(1, "fetch", #""action":"began""#),
            Self.event(6, "finished", #""fixes":0"#),
        ]
        let page = try Self.report(lines)
        for _ in 0..<5 { #expect(try Self.report(lines) == page) }
        let lanes = page.components(separatedBy: "<rect y=\"").dropFirst().compactMap { rest -> Double? in
            guard
                rest.contains("<title>audio:") || rest.contains("<title>backgroundTask:")
                    || rest.contains("<title>fetch:")
            else { return nil }
            return Double(rest.prefix { $0 != "\"" })
        }
        #expect(Set(lanes).count == 3, "three lanes: \(lanes)")
    }

    /// Numbers no Int holds (a damaged store) do not stop the page.
    @Test func hugeNumbersInALineDoNotCrash() throws {
        let page = try Self.report([
            Self.fix(1, index: 0, "delivered", "foreground").replacingOccurrences(
                of: #""index":0,"segment":0"#, with: #""index":1e300,"segment":-1e300"#),
            Self.event(2, "finished", #""fixes":1e300,"delivered":1"#),
        ])
        #expect(page.contains("delivered in the foreground (1)"))
    }

    /// A recording's gpsd outages and staleness are spans of the source's row.
    @Test func gpsdOutagesAreSpansOfTheSourceRow() throws {
        let page = try Self.report([
            Self.event(0, "started", #""source":"gpsd at localhost:2947","format":4,"ios":26"#),
            Self.event(0, "source", #""action":"connected","detail":"gpsd at localhost:2947""#),
            Self.fix(1, index: 0, "delivered", "foreground"),
            Self.event(2, "source", #""action":"outage","detail":"the connection went away""#),
            Self.event(6, "source", #""action":"connected","detail":"gpsd at localhost:2947""#),
            Self.fix(7, index: 1, "delivered", "foreground"),
            Self.event(8, "source", #""action":"stale","detail":"silent for 5 s""#),
            Self.event(9, "source", #""action":"receiving""#),
            Self.event(10, "source", #""action":"timeJump","detail":"+1 h""#),
        ])
        #expect(page.contains(">source</text>"))
        #expect(page.contains("<title>outage: 2024-05-01T08:00:02.000Z → 2024-05-01T08:00:06.000Z</title>"))
        #expect(page.contains("<title>stale: 2024-05-01T08:00:08.000Z → 2024-05-01T08:00:09.000Z</title>"))
        #expect(page.contains("<title>timeJump at 2024-05-01T08:00:10.000Z</title>"))
        #expect(page.contains("no `finished` event"), "a recording cut short says so")
    }

    /// A logger's recording (`started`'s `logger`, what `record` writes without app options) gets
    /// a page of the receiver's fixes and outages: no app-state, authorization or accuracy rows,
    /// no app events listed, and no "rules of iOS" (issue 28). The same log without the flag keeps
    /// them.
    @Test func aLoggersPageHasNoRowsOfTheSimulatedApp() throws {
        func log(logger: Bool) -> [String] {
            [
                Self.event(
                    0, "started",
                    #""source":"gpsd at localhost:2947","format":5,"ios":26"# + (logger ? #","logger":true"# : "")),
                Self.event(0, "stateChanged", #""from":"notRunning","to":"active","cause":"userLaunch""#),
                Self.event(0, "managerCreated", #""authorization":"authorizedWhenInUse","reported":true"#),
                Self.event(0, "updates", #""action":"started""#),
                Self.event(0, "source", #""action":"connected","detail":"gpsd at localhost:2947""#),
                Self.fix(1, index: 0, "delivered", "foreground"),
                Self.event(2, "source", #""action":"outage","detail":"the connection went away""#),
                Self.event(6, "source", #""action":"connected","detail":"gpsd at localhost:2947""#),
                Self.fix(7, index: 1, "delivered", "foreground"),
                Self.event(8, "finished", #""fixes":2,"delivered":2,"held":0,"dropped":0,"ignored":0,"resumed":0"#),
            ]
        }
        let logger = try Self.report(log(logger: true))
        let app = try Self.report(log(logger: false))
        #expect(logger.contains("a logger's recording"))
        #expect(!logger.contains("the rules of iOS"))
        #expect(app.contains("the rules of iOS 26"))
        for row in ["app state", "authorization", "updates"] {
            #expect(!logger.contains(">\(row)</text>"), "a logger's page has no \(row) row")
            #expect(app.contains(">\(row)</text>"), "an app's page has its \(row) row")
        }
        #expect(logger.contains(">source</text>"))
        #expect(logger.contains("<title>outage: 2024-05-01T08:00:02.000Z → 2024-05-01T08:00:06.000Z</title>"))
        #expect(!logger.contains("stateChanged") && app.contains("stateChanged"), "the app's events are not listed")
        #expect(!logger.contains("<th>iOS</th>") && app.contains("<th>iOS</th>"))
    }

    @Test func aLineThatIsNotAnAuditEventIsAnErrorNamingItsLine() throws {
        for (bad, message) in [
            ("{\"time\":\"nope\",\"event\":\"fix\"}", "UTC \"time\""), ("[1,2]", "not a JSON object"),
            ("{\"time\":\"2024-05-01T08:00:00Z\"}", "\"event\""),
        ] {
            #expect {
                _ = try Self.report([Self.run[0], "", bad])
            } throws: { error in
                "\(error)".hasPrefix("audit log:3: ") && "\(error)".contains(message)
            }
        }
    }
}

/// The pages from the command line: `render -o x.html`, `replay --report`, `sessions export
/// --format html`.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct HTMLCLITests {
    static let walk = Paths.root.appendingPathComponent("traces/city-walk.gpx").path
    static let commute = Paths.root.appendingPathComponent("traces/commute.yaml").path

    func waymark(_ arguments: String...) throws -> ProcessResult { try run(Paths.waymark.path, arguments) }

    @Test func renderWritesHTMLByTheExtensionOrTheFormat() throws {
        let stdout = try waymark("render", Self.walk, "--format", "html")
        #expect(stdout.status == 0, "\(stdout.stderr)")
        #expect(stdout.stdoutText.hasPrefix("<!DOCTYPE html>"))
        let out = temporaryPath(".html")
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try waymark("render", Self.walk, "-o", out).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == stdout.stdout)
        let clash = try waymark("render", Self.walk, "--format", "svg", "-o", temporaryPath(".html"))
        #expect(clash.status == 64 && clash.stderr.contains("disagree"), "\(clash.stderr)")
        let replay = try waymark("replay", Self.walk, "--rate", "max", "--no-store", "-o", temporaryPath(".html"))
        #expect(replay.status == 64 && replay.stderr.contains("--report"), "\(replay.stderr)")
        let dash = try waymark("replay", Self.walk, "--rate", "max", "--no-store", "--report", "-")
        #expect(dash.status == 64 && dash.stderr.contains("give its name"), "\(dash.stderr)")
        let audit = try waymark("replay", Self.walk, "--rate", "max", "--no-store", "--audit", "-")
        #expect(audit.status == 64 && audit.stderr.contains("--audit writes a file of its own"), "\(audit.stderr)")
    }

    /// The report of a replay and the export of the session it stored are the same page but for
    /// the title: both are drawn from the same audit lines.
    /// A trace's path is in the report's audit lines (its JSON island); a path that holds
    /// `</script>` (a directory `x<` with a subdirectory `script>`) must not end the island
    /// (mutation m11: strings written without the script escaping).
    @Test func aTracePathCannotEndTheReportsScript() throws {
        let directory = temporaryPath("-report")
        let nested = directory + "/x</script><b>"
        try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let trace = nested + "/walk.gpx"
        try FileManager.default.copyItem(atPath: Self.walk, toPath: trace)
        let report = directory + "/run.html"
        let r = try waymark(
            "replay", trace, "--scenario", Self.commute, "--rate", "max", "--quiet", "--no-store", "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: report, encoding: .utf8)
        #expect(page.components(separatedBy: "</script>").count == 3, "the data island and the script only")
        let island = try HTMLPageTests.island(page)
        let lines = (island["events"] as? [[Any]] ?? []).compactMap { $0[1] as? String }
        #expect(lines.contains { $0.contains("x</script><b>") }, "the path is in the audit lines, whole")
    }

    @Test func aReplaysReportIsItsStoredSessionsPage() throws {
        let directory = temporaryPath("-report")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/s.sqlite"
        let report = directory + "/run.html"
        let audit = directory + "/run.ndjson"
        let r = try waymark(
            "replay", Self.walk, "--scenario", Self.commute, "--rate", "max", "--quiet", "--store", store,
            "--report", report, "--audit", audit, "--format", "ndjson")
        #expect(r.status == 0, "\(r.stderr)")
        let exported = try waymark("sessions", "export", "1", "--format", "html", "--store", store)
        #expect(exported.status == 0, "\(exported.stderr)")
        let fromReplay = try HTMLPageTests.island(try String(contentsOfFile: report, encoding: .utf8))
        let fromStore = try HTMLPageTests.island(exported.stdoutText)
        #expect(NSDictionary(dictionary: fromReplay).isEqual(to: fromStore))
        // Every line of the audit log is listed (there are fewer fixes than the hover limit).
        let lines = try String(contentsOfFile: audit, encoding: .utf8).split(separator: "\n").map(String.init)
        let listed = (fromReplay["events"] as? [[Any]] ?? []).compactMap { $0[1] as? String }
        #expect(listed.sorted() == lines.sorted())
        // The legend's counts are the run's.
        let finished = try #require(
            lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let page = exported.stdoutText
        #expect(page.contains("dropped (\(finished["dropped"] as? Int ?? -1))"))
        let delivered = finished["delivered"] as? Int ?? -1
        let shown = ["foreground", "background"].compactMap { place -> Int? in
            guard let r = page.range(of: "delivered in the \(place) (") else { return nil }
            return Int(page[r.upperBound...].prefix { $0 != ")" })
        }
        #expect(shown.reduce(0, +) == delivered, "\(shown)")
    }
}

/// The pages as a browser draws them: Debian's headless `chromium` screenshots a trace's page and
/// a run's report; the PNG is probed as ``SVGBrowserTests`` does, and the DOM after the page's
/// script ran is read for what a click (a `#point=` or `#time=` link) shows.
@Suite(
    .enabled(
        if: which("chromium") != nil && which("python3") != nil
            && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "chromium is not installed (scripts/test.sh installs it: apt-get install chromium)"),
    .timeLimit(.minutes(45)))
struct HTMLBrowserTests {
    static func chromium(_ directory: String, _ extra: [String], _ url: String) async throws -> ProcessResult {
        let chromium = try #require(which("chromium"))
        return try await runAsync(
            chromium,
            [
                "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=\(directory)/profile", "--enable-logging=stderr", "--v=0",
                "--virtual-time-budget=5000",
            ] + extra + [url])
    }

    static func probe(_ png: String, _ query: [String: Any]) async throws -> [String: Any] {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: query), as: UTF8.self)
        let probe = try await runAsync(try #require(which("python3")), ["-c", SVGBrowserTests.pngProbe, png, text])
        #expect(probe.status == 0, "\(probe.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any])
    }

    static func noScriptErrors(_ r: ProcessResult) {
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("Uncaught") && !r.stderr.contains(":CONSOLE("), "\(r.stderr)")
    }

    @Test func chromiumDrawsATracesPageAndItsHoverDetails() async throws {
        let directory = temporaryPath("-browser")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pagePath = directory + "/walk.html"
        let made = try run(Paths.waymark.path, ["render", HTMLPageTests.walk, "-o", pagePath])
        #expect(made.status == 0, "\(made.stderr)")
        let page = try String(contentsOfFile: pagePath, encoding: .utf8)
        let png = directory + "/walk.png"
        let shot = try await Self.chromium(
            directory, ["--window-size=1060,1400", "--screenshot=\(png)"], "file://\(pagePath)")
        Self.noScriptErrors(shot)

        // The map's panel (#f6f8fa at 20,50 in the picture) anchors the probes: the track's colour
        // in the middle of each line, the start and end marks, the legend; under the map, the
        // profiles' colours.
        let lines = SVGTests.polylines(try HTMLPageTests.mapSVG(page))
        var points: [[Any]] = lines.map { line in
            let p = line[line.count / 2]
            return [Int(p.x.rounded()), Int(p.y.rounded()), SVGWriter.Colour.track]
        }
        points.append([Int(lines[0][0].x.rounded()), Int(lines[0][0].y.rounded()), SVGWriter.Colour.start])
        let regions: [[Any]] = [[290, 700, 700, 730, NSNull()], [940, 50, 985, 115, NSNull()]]
        let result = try await Self.probe(
            png,
            [
                "anchor": ["#f6f8fa", 20, 50], "points": points, "regions": regions,
                "count": ["#1a7f37", "#1f6feb"],
            ])
        let hits = result["probes"] as? [Int] ?? []
        #expect(hits.count == points.count && hits.allSatisfy { $0 > 0 }, "colour missing at \(points): \(hits)")
        #expect((result["regions"] as? [Int] ?? []).allSatisfy { $0 > 10 }, "\(result)")
        let counts = result["colourCounts"] as? [String: Int] ?? [:]
        #expect((counts["#1a7f37"] ?? 0) > 400, "the elevation profile: \(counts)")
        #expect((counts["#1f6feb"] ?? 0) > 1500, "the track and the speed profile: \(counts)")

        // Hovering point 40 (a #point= link takes the same path as the mouse): the tooltip names
        // its time and position, and the marker moves onto it.
        let dom = try await Self.chromium(directory, ["--dump-dom"], "file://\(pagePath)#point=40")
        Self.noScriptErrors(dom)
        let points40 = try #require(try HTMLPageTests.island(page)["points"] as? [String: [Any]])
        let lat = try #require(points40["lat"]?[40] as? Double)
        let tooltip = try #require(dom.stdoutText.components(separatedBy: "<div id=\"tooltip\"").dropFirst().first)
        #expect(tooltip.contains("2024-05-01 08:03:20 UTC"), "\(tooltip.prefix(300))")
        #expect(tooltip.contains(String(format: "%.6f", lat)), "\(tooltip.prefix(300))")
        let cx = dom.stdoutText.components(separatedBy: "id=\"marker\" cx=\"").dropFirst().first?.prefix { $0 != "\"" }
        let x = try #require(points40["x"]?[40] as? Double)
        #expect(abs((cx.flatMap { Double($0) } ?? -1) - x) < 1e-6, "the marker is on the point: \(cx ?? "none")")
    }

    @Test func chromiumDrawsARunsReportAndListsTheEventsOfAMoment() async throws {
        let directory = temporaryPath("-browser")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pagePath = directory + "/run.html"
        let made = try run(
            Paths.waymark.path,
            [
                "replay", HTMLCLITests.walk, "--scenario", HTMLCLITests.commute, "--rate", "max", "--quiet",
                "--no-store", "--report", pagePath, "--format", "ndjson",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let png = directory + "/run.png"
        let shot = try await Self.chromium(
            directory, ["--window-size=1060,1700", "--screenshot=\(png)"], "file://\(pagePath)")
        Self.noScriptErrors(shot)
        let colours = SessionReportWriter.Category.allCases.map(\.colour)
        let result = try await Self.probe(
            png,
            [
                "anchor": ["#f6f8fa", 20, 50], "points": [], "regions": [[20, 50, 980, 686, NSNull()]],
                "count": colours,
            ])
        let counts = result["colourCounts"] as? [String: Int] ?? [:]
        // This run delivers in the foreground and the background, and drops (distanceFilter, …).
        for category in [SessionReportWriter.Category.deliveredForeground, .deliveredBackground, .dropped] {
            #expect((counts[category.colour] ?? 0) > 300, "\(category): \(counts)")
        }
        #expect((result["regions"] as? [Int] ?? []).allSatisfy { $0 > 1000 }, "the map is drawn: \(result)")

        // A moment of the timeline (a #time= link takes the click's path): the background task
        // that began at 08:05 is listed.
        let dom = try await Self.chromium(directory, ["--dump-dom"], "file://\(pagePath)#time=2024-05-01T08:05:00Z")
        Self.noScriptErrors(dom)
        let details = try #require(dom.stdoutText.components(separatedBy: "<div id=\"details\">").dropFirst().first)
        let listed = String(details.prefix(4000))
        #expect(listed.contains("Audit events within 1 s of 2024-05-01 08:05:00 UTC"), "\(listed.prefix(400))")
        #expect(listed.contains(#""event":"backgroundTask","action":"began""#), "\(listed.prefix(1500))")
    }

    /// The page's script under real events: a harness page (a file beside it, read with
    /// --allow-file-access-from-files) loads the page in a frame, dispatches mouse moves and
    /// clicks on the map, a profile and the timeline, switches the axis, and writes what the page
    /// then shows into its own DOM, which chromium dumps.
    static let harness = #"""
        <!DOCTYPE html><html><body><iframe id="f" width="1060" height="1500"></iframe><pre id="out">waiting</pre>
        <script>
        const f = document.getElementById("f");
        f.addEventListener("load", () => {
          const d = f.contentDocument, w = f.contentWindow, out = [];
          const at = (el, x, y, type) => el.dispatchEvent(new w.MouseEvent(type, { clientX: x, clientY: y, bubbles: true }));
          try {
            const data = JSON.parse(d.getElementById("waymark-data").textContent);
            const P = data.points, i = Math.floor(P.x.length / 2);
            const ov = d.getElementById("map-overlay"), r = ov.getBoundingClientRect();
            at(ov, r.left + P.x[i] / 1000 * r.width, r.top + P.y[i] / 760 * r.height, "mousemove");
            out.push("hover=" + i + "|" + d.getElementById("tooltip").textContent.replace(/\n/g, "|"));
            out.push("marker=" + d.getElementById("marker").getAttribute("cx") + "|" + P.x[i]);
            at(ov, r.left + P.x[i] / 1000 * r.width, r.top + P.y[i] / 760 * r.height, "click");
            const details = d.getElementById("details");
            if (details) {
              out.push("details=" + details.querySelectorAll("div").length + "|" + details.querySelectorAll(".now").length
                + "|" + (details.querySelector(".now") || { textContent: "" }).textContent);
            }
            for (const c of data.charts || []) {
              const svg = d.getElementById(c.id);
              if (svg.closest("[hidden]")) continue;
              const b = svg.getBoundingClientRect();
              at(svg, b.left + b.width / 2, b.top + b.height / 2, "mousemove");
              const cursor = d.getElementById(c.id + "-cursor");
              out.push("chart=" + c.id + "|" + cursor.getAttribute("visibility") + "|" + d.getElementById("tooltip").textContent.split("\n")[0]);
            }
            const dist = d.querySelector("input[name=axis][value=dist]");
            if (dist) {
              dist.click();
              out.push("axis=" + [...d.querySelectorAll("[data-axis]")].map((e) => e.dataset.axis + ":" + (e.hidden ? "hidden" : "shown")).join(","));
            }
            const tl = d.getElementById("timeline");
            if (tl) {
              const b = tl.getBoundingClientRect();
              at(tl, b.left + b.width * 0.5, b.top + 20, "click");
              out.push("timeline=" + d.getElementById("details").firstChild.textContent + "|" + d.getElementById("details").querySelectorAll("div").length);
            }
          } catch (e) {
            out.push("error=" + e);
          }
          document.getElementById("out").textContent = out.join("\n");
        });
        f.src = location.hash.slice(1);
        </script></body></html>
        """#

    static func interact(with page: String, in directory: String) async throws -> [String: String] {
        let harness = directory + "/harness.html"
        try Self.harness.write(toFile: harness, atomically: true, encoding: .utf8)
        let dom = try await Self.chromium(
            directory, ["--allow-file-access-from-files", "--window-size=1100,1600", "--dump-dom"],
            "file://\(harness)#\((page as NSString).lastPathComponent)")
        Self.noScriptErrors(dom)
        let text = try #require(dom.stdoutText.components(separatedBy: "<pre id=\"out\">").dropFirst().first)
        var found: [String: String] = [:]
        for line in text.prefix(while: { $0 != "<" }).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 {
                found[String(parts[0]), default: ""] += (found[String(parts[0])] == nil ? "" : "\n") + parts[1]
            }
        }
        #expect(found["error"] == nil, "\(found)")
        return found
    }

    @Test func theTracePageAnswersTheMouseAndTheAxisSwitch() async throws {
        let directory = temporaryPath("-browser")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let page = directory + "/walk.html"
        #expect(try run(Paths.waymark.path, ["render", HTMLPageTests.walk, "-o", page]).status == 0)
        let found = try await Self.interact(with: page, in: directory)
        let hover = try #require(found["hover"]?.split(separator: "|").map(String.init))
        let points = try #require(
            try HTMLPageTests.island(String(contentsOfFile: page, encoding: .utf8))["points"] as? [String: [Any]])
        let i = try #require(Int(hover[0]))
        let t = try #require(points["t"]?[i] as? Double)
        let clock = ValueFormatting.iso8601(Date(timeIntervalSince1970: t)).prefix(19).replacingOccurrences(
            of: "T", with: " ")
        #expect(hover[1] == "time       \(clock) UTC", "\(hover)")
        let marker = try #require(found["marker"]?.split(separator: "|").compactMap { Double($0) })
        #expect(marker.count == 2 && marker[0] == marker[1], "the marker moved onto the point: \(marker)")
        let charts = try #require(
            found["chart"]?.split(separator: "\n").map { $0.split(separator: "|").map(String.init) })
        #expect(charts.map { $0[0] } == ["elevation-t", "speed-t", "heart-rate-t"])
        #expect(charts.allSatisfy { $0[1] == "visible" && $0[2].hasPrefix("time       2024-05-01 08:") }, "\(charts)")
        #expect(found["axis"] == "t:hidden,t:hidden,t:hidden,dist:shown,dist:shown,dist:shown", "\(found)")
    }

    @Test func theReportAnswersClicksOnThePathAndTheTimeline() async throws {
        let directory = temporaryPath("-browser")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let page = directory + "/run.html"
        let made = try run(
            Paths.waymark.path,
            [
                "replay", HTMLCLITests.walk, "--scenario", HTMLCLITests.commute, "--rate", "max", "--quiet",
                "--no-store", "--report", page, "--format", "ndjson",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let found = try await Self.interact(with: page, in: directory)
        // A click on a fix lists the events of its second, its own line marked.
        let details = try #require(found["details"]?.split(separator: "|", maxSplits: 2).map(String.init))
        #expect((Int(details[0]) ?? 0) >= 2, "a heading and at least the fix: \(details)")
        #expect(details[1] == "1", "one line marked: \(details)")
        #expect(details[2].contains(#""event":"fix""#), "\(details)")
        let hover = try #require(found["hover"])
        #expect(hover.contains("fix        "), "\(hover)")
        // A click in the middle of the timeline lists the events of that moment.
        let timeline = try #require(found["timeline"])
        #expect(
            timeline.hasPrefix("Audit events within ") || timeline.hasPrefix("No audit event within "), "\(timeline)")
        #expect(found["axis"] == nil, "a report has no profiles")
    }
}
