import Foundation
import Testing

@testable import Waymark

/// `waymark serve` against gpsd's own clients (gpspipe, gpxlogger), Waymark's `record`, and raw
/// sockets: the trace comes out as it went in, to every client, whatever the others do.
@Suite(.enabled(if: ServeHarness.available, "needs gpspipe, gpxlogger and a built waymark"))
struct GPSDServeLiveTests {
    /// A timed GPX track of `count` points one second apart, with elevations and HDOPs.
    static func makeTrace(count: Int, name: String = "trace") throws -> (path: String, points: [GPXPoint]) {
        let directory = temporaryPath("-serve")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/\(name).gpx"
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="waymark-tests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>served</name><trkseg>

            """
        let start = 1_714_550_400  // 2024-05-01T08:00:00Z
        for i in 0..<count {
            let lat = 47.0 + Double(i) * 0.000123
            let lon = 11.0 + Double(i % 97) * 0.000071
            let time = ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(start + i)))
            text +=
                "<trkpt lat=\"\(ValueFormatting.fixed(lat, decimals: 6))\" lon=\"\(ValueFormatting.fixed(lon, decimals: 6))\">"
                + "<ele>\(500 + i % 13)</ele><time>\(time)</time><hdop>\(1 + i % 3)</hdop></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (document, _) = try readDocument(path)
        return (path, document.tracks.flatMap { $0.segments.flatMap(\.points) })
    }

    static func tpvs(_ text: String) -> [[String: Any]] {
        text.split(whereSeparator: \.isNewline).filter { $0.contains("\"class\":\"TPV\"") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// How many TPV lines `path` holds so far (a cheap count while a client writes it).
    static func tpvCount(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").components(separatedBy: "\"class\":\"TPV\"").count
            - 1
    }

    static func time(_ point: GPXPoint) -> String { ValueFormatting.iso8601(point.time!) }

    @Test(.timeLimit(.minutes(45)))
    func gpspipeSeesEveryPointOfTheTrace() async throws {
        let (trace, points) = try Self.makeTrace(count: 120)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        #expect(pipe.status == 0, "\(pipe.stderr)")
        let tpvs = Self.tpvs(pipe.stdoutText)
        #expect(tpvs.count == points.count, "\(serve.log())")
        for (tpv, point) in zip(tpvs, points) {
            #expect(tpv["lat"] as? Double == point.coordinate.latitude)
            #expect(tpv["lon"] as? Double == point.coordinate.longitude)
            #expect(tpv["time"] as? String == Self.time(point))
            #expect(tpv["altMSL"] as? Double == point.elevation)
            #expect(tpv["device"] as? String == trace)
        }
        let skies = pipe.stdoutText.split(whereSeparator: \.isNewline).filter { $0.contains("\"class\":\"SKY\"") }
        #expect(skies.count == points.count, "one SKY (with the HDOP) per fix")
        let ended = await serve.finish(within: 120)
        #expect(ended.status == 0 && !ended.timedOut, "serve exits 0 once the trace is read: \(serve.log())")
    }

    /// `serve --degrade` sends the fixes `render --degrade` writes for the same profile and seed.
    @Test(.timeLimit(.minutes(45)))
    func aDegradedServeSendsWhatADegradedRenderWrites() async throws {
        let (trace, points) = try Self.makeTrace(count: 120, name: "degraded")
        let rendered = trace + ".bad.gpx"
        let r = try run(Paths.waymark.path, ["render", trace, "--degrade", "open-sky:5", "-o", rendered])
        #expect(r.status == 0, "\(r.stderr)")
        let (document, _) = try readDocument(rendered)
        let bad = document.tracks.flatMap { $0.segments.flatMap(\.points) }
        #expect(bad.count == points.count)
        let serve = try ServeHarness(trace: trace, ["--rate", "max", "--degrade", "open-sky:5"])
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        #expect(pipe.status == 0, "\(pipe.stderr)")
        let tpvs = Self.tpvs(pipe.stdoutText).filter { ($0["mode"] as? Int ?? 0) >= 2 }
        #expect(tpvs.count == bad.count, "\(serve.log())")
        var moved = 0
        for ((tpv, point), truth) in zip(zip(tpvs, bad), points) {
            let lat = try #require(tpv["lat"] as? Double)
            let lon = try #require(tpv["lon"] as? Double)
            #expect(abs(lat - point.coordinate.latitude) < 1e-7 && abs(lon - point.coordinate.longitude) < 1e-7)
            if abs(lat - truth.coordinate.latitude) > 1e-6 { moved += 1 }
        }
        #expect(moved > 100, "the served fixes are degraded: \(moved) of \(tpvs.count) moved")
        _ = await serve.finish(within: 120)
    }

    @Test(.timeLimit(.minutes(45)))
    func gpspipeRawGetsNMEASentencesWithValidChecksums() async throws {
        let (trace, points) = try Self.makeTrace(count: 30)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-r", "127.0.0.1:\(serve.port)"])
        let sentences = pipe.stdoutText.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }
        #expect(sentences.filter { $0.hasPrefix("$GPGGA") }.count == points.count)
        #expect(sentences.filter { $0.hasPrefix("$GPRMC") }.count == points.count)
        #expect(sentences.filter { $0.hasPrefix("$GPGSA") }.count == points.count)
        for s in sentences {
            let parts = s.dropFirst().split(separator: "*")
            #expect(parts.count == 2 && String(parts[1]) == String(format: "%02X", parts[0].utf8.reduce(UInt8(0), ^)))
        }
        #expect(!pipe.stdoutText.contains("\"class\":\"TPV\""), "gpspipe -r asks for NMEA only")
    }

    /// A receiver log of the test's own: a fix a second with GSV, a tunnel of epochs without a
    /// fix, a comment, a gpsd JSON line, junk and a sentence with a wrong checksum, its lines
    /// ended by LF, CR LF and CR alike. The log ends with a fix's epoch.
    static func makeLog() -> String {
        func sentence(_ body: String) -> String {
            "$" + body + "*" + String(format: "%02X", body.utf8.reduce(UInt8(0), ^))
        }
        var lines: [String] = ["# Date: 2024-05-01", sentence("GPTXT,01,01,02,u-blox ag")]
        for i in 0..<24 {
            let t = String(format: "0800%02d.00", i)
            let lat = String(format: "4807.%03d", 38 + i * 7)
            let tunnel = (9..<15).contains(i)
            if tunnel {
                lines.append(sentence("GPRMC,\(t),V,,,,,,,010524,,,N"))
                lines.append(sentence("GPGGA,\(t),,,,,0,00,99.99,,,,,,"))
            } else {
                lines.append(sentence("GPRMC,\(t),A,\(lat),N,01131.000,E,1.0,84.4,010524,,,A"))
                lines.append(sentence("GPGGA,\(t),\(lat),N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"))
            }
            lines.append(sentence("GPGSV,2,1,05,05,45,120,40,07,30,200,35,13,10,300,,17,60,010,42"))
            lines.append(sentence("GPGSV,2,2,05,21,05,090,"))
            if i == 3 { lines.append(#"{"class":"TPV","mode":1}"#) }
            if i == 5 { lines.append("garbage without a dollar") }
            if i == 7 { lines.append(String(sentence("GPVTG,84.4,T,,M,1.0,N,1.9,K,A").dropLast(2)) + "00") }
        }
        var text = ""
        for (n, line) in lines.enumerated() { text += line + ["\n", "\r\n", "\r"][n % 3] }
        return text
    }

    /// An NMEA log's NMEA clients get its own sentences, as gpsfake passes them on: every
    /// sentence with a good checksum, in order, the tunnel's and the satellites' included, each
    /// with CR LF; not the comment, the JSON, the junk or the bad sentence. JSON clients still
    /// get a TPV per fix.
    @Test(.timeLimit(.minutes(45)))
    func anNMEALogsClientsGetItsOwnSentences() async throws {
        let directory = temporaryPath("-serve")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let trace = directory + "/receiver.nmea"
        let log = Self.makeLog()
        try log.write(toFile: trace, atomically: true, encoding: .utf8)
        let expected = log.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }).filter {
            $0.hasPrefix("$") && !$0.hasPrefix("$GPVTG")
        }.map(String.init)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let raw = try await runUnblockedAsync(["gpspipe", "-r", "127.0.0.1:\(serve.port)"])
        #expect(raw.status == 0, "\(raw.stderr)")
        let received = raw.stdoutText.components(separatedBy: "\r\n").filter { $0.hasPrefix("$") }
        #expect(received == expected, "\(serve.log())")
        #expect(!raw.stdoutText.replacingOccurrences(of: "\r\n", with: "").contains("\r"), "CR LF only")
        #expect(serve.log().contains("NMEA clients get the log's own sentences"), "\(serve.log())")
        _ = await serve.finish(within: 120)

        let again = try ServeHarness(trace: trace, ["--rate", "max"], ownsTraceDirectory: false)
        defer { again.tearDown() }
        let json = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(again.port)"])
        #expect(Self.tpvs(json.stdoutText).filter { ($0["mode"] as? Int ?? 0) >= 2 }.count == 18, "\(again.log())")
    }

    /// Each SKY line of `text` that lists satellites, as one string per SKY: every satellite's
    /// PRN, elevation, azimuth, ratio, whether used, gnssid and svid.
    static func skyviews(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).filter { $0.contains("\"class\":\"SKY\"") }.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let satellites = object["satellites"] as? [[String: Any]], !satellites.isEmpty
            else { return nil }
            return satellites.map { s in
                ["PRN", "el", "az", "ss", "used", "gnssid", "svid"].map { "\(s[$0] ?? "-")" }.joined(separator: " ")
            }.joined(separator: "; ")
        }
    }

    /// SKY's satellites from an NMEA log are gpsd's: for each of gpsd's own receiver logs, every
    /// SKY that serve sends with satellites lists exactly the satellites of a SKY that gpsd 3.22
    /// sent for the same log (its `.chk`): the same PRNs in the same order, elevations,
    /// azimuths, ratios, used flags, gnssids and svids, across GPS, SBAS, GLONASS, Galileo,
    /// BeiDou and QZSS and NMEA 4.10's signals. A log whose satellites gpsd reported before its
    /// last fix gets them from serve too.
    @Test(
        .enabled(if: Paths.sharedAvailable, "needs ../shared (gpsd's logs and their .chk)"),
        .timeLimit(.minutes(45)))
    func skySatellitesAreGpsds() async throws {
        let directory = Paths.corpus.appendingPathComponent("gpsd/release-3.22").path
        let logs = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".log") }
            .sorted()
        #expect(logs.count >= 20)
        var sent = 0
        for log in logs {
            // A log without a fix (a simulator's, garmin-geko201) is nothing to serve.
            let reader = try NMEAReader(contentsOf: directory + "/" + log)
            try reader.read { _ in }
            guard reader.fixes > 0 else { continue }
            let chk = try String(contentsOfFile: directory + "/" + log + ".chk", encoding: .utf8)
            let serve = try ServeHarness(trace: directory + "/" + log, ["--rate", "max"], ownsTraceDirectory: false)
            defer { serve.tearDown() }
            let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
            let ours = Self.skyviews(pipe.stdoutText)
            let gpsds = Set(Self.skyviews(chk))
            for view in ours where !gpsds.contains(view) {
                Issue.record("\(log): serve sent satellites gpsd never did: \(view)")
            }
            // gpsd reported satellites before its last fix: serve, which sends them with fixes, must too.
            let lines = chk.split(whereSeparator: \.isNewline)
            let firstSky = lines.firstIndex { !Self.skyviews(String($0)).isEmpty }
            let lastFix = lines.lastIndex { line in
                Self.tpvs(String(line)).contains { ($0["mode"] as? Int ?? 0) >= 2 }
            }
            if let firstSky, let lastFix, firstSky < lastFix {
                #expect(!ours.isEmpty, "\(log): gpsd reported satellites before its last fix; serve sent none")
            }
            sent += ours.count
            _ = await serve.finish(within: 120)
        }
        #expect(sent > 500, "SKYs with satellites sent in all")
    }

    @Test(.timeLimit(.minutes(45)))
    func gpxloggerWritesTheSamePoints() async throws {
        let (trace, points) = try Self.makeTrace(count: 60)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let out = serve.directory + "/logged.gpx"
        let logger = try await runUnblockedAsync(["gpxlogger", "-f", out, "127.0.0.1:\(serve.port)"])
        #expect(logger.status == 0, "\(logger.stderr)")
        let (document, _) = try readDocument(out)
        let logged = document.tracks.flatMap { $0.segments.flatMap(\.points) }
        #expect(logged.count == points.count, "\(serve.log())")
        for (l, p) in zip(logged, points) {
            #expect(l.coordinate == p.coordinate)
            #expect(l.time == p.time)
        }
    }

    /// An untimed route plays at --speed on replay's schedule: the TPVs are the schedule's fixes.
    @Test(.timeLimit(.minutes(45)))
    func anUntimedRouteServesReplaysScheduleAtTheSpeed() async throws {
        let directory = temporaryPath("-serve")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let trace = directory + "/route.gpx"
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="waymark-tests" xmlns="http://www.topografix.com/GPX/1/1">
        <rte><rtept lat="47.0" lon="11.0"/><rtept lat="47.001" lon="11.0"/><rtept lat="47.001" lon="11.002"/>
        <rtept lat="47.003" lon="11.002"/></rte></gpx>
        """.write(toFile: trace, atomically: true, encoding: .utf8)
        var schedule = try StreamingReplaySource(
            contentsOf: trace,
            options: ReplaySchedule.Options(
                untimedSpeed: 12.5, interval: .seconds(2), untimedStart: Date(timeIntervalSince1970: 946_684_800)))
        var expected: [Location] = []
        while let event = try schedule.nextEvent() {
            if case .fix(let l) = event.kind { expected.append(l) }
        }
        #expect(expected.count > 10)
        let serve = try ServeHarness(trace: trace, ["--rate", "max", "--speed", "12.5", "--interval", "2s"])
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        let tpvs = Self.tpvs(pipe.stdoutText)
        #expect(tpvs.count == expected.count, "\(serve.log())")
        for (tpv, l) in zip(tpvs, expected) {
            #expect(tpv["time"] as? String == ValueFormatting.iso8601(l.timestamp))
            #expect(abs((tpv["lat"] as? Double ?? 0) - l.coordinate.latitude) < 1e-9)
            #expect(abs((tpv["lon"] as? Double ?? 0) - l.coordinate.longitude) < 1e-9)
            #expect(abs((tpv["speed"] as? Double ?? 0) - l.speed) < 0.001)
        }
        #expect(tpvs.first?["time"] as? String == "2000-01-01T00:00:00.000Z")
    }

    /// An NMEA log serves the epochs Waymark's NMEA reader reads from it.
    @Test(.timeLimit(.minutes(45)))
    func anNMEALogServesItsEpochs() async throws {
        let log = Paths.fixture("nmea/walk.nmea")
        var points: [GPXPoint] = []
        try NMEAReader(contentsOf: log).read { event in
            if case .trackPoint(let p) = event { points.append(p) }
        }
        #expect(points.count > 20)
        let serve = try ServeHarness(trace: log, ["--rate", "max"], ownsTraceDirectory: false)
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        let fixes = Self.tpvs(pipe.stdoutText).filter { ($0["mode"] as? Int ?? 0) >= 2 }
        let timed = points.filter { $0.time != nil && $0.fix != GPXFix.none }
        #expect(fixes.count == timed.count, "\(serve.log())")
        for (tpv, p) in zip(fixes, timed) {
            #expect(tpv["time"] as? String == Self.time(p))
            #expect(abs((tpv["lat"] as? Double ?? 0) - p.coordinate.latitude) < 1e-9)
            #expect(abs((tpv["lon"] as? Double ?? 0) - p.coordinate.longitude) < 1e-9)
        }
    }

    /// Issue 28, items 1 and 3, closed loop: serving a drive through a tunnel (two segments, 90 s
    /// without a point), serve sends epochs without a fix through the tunnel, as gpsd does, and
    /// `waymark record --until-source-ends` logs two segments with the tunnel between them as
    /// a gap: the lengths of its GPX and of the trace agree.
    @Test(.timeLimit(.minutes(45)))
    func aTunnelServedIsATunnelRecorded() async throws {
        let trace = Paths.root.appendingPathComponent("traces/drive-tunnel.gpx").path
        let (document, _) = try readDocument(trace)
        let segments = try #require(document.tracks.first?.segments.map(\.points.count))
        #expect(segments.count == 2)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"], ownsTraceDirectory: false)
        defer { serve.tearDown() }
        let gpx = serve.directory + "/tunnel.gpx"
        let r = try await runUnblockedAsync([
            Paths.waymark.path, "record", "--gpsd", "127.0.0.1:\(serve.port)", "--until-source-ends", "--no-store",
            "--gpx", gpx, "--format", "ndjson",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("no fix since") && r.stderr.contains("fix regained after"), "\(r.stderr)")
        #expect(r.stderr.contains("in 2 segment(s), 1 loss(es) of fix"), "\(r.stderr)")
        let (recorded, _) = try readDocument(gpx)
        #expect(recorded.tracks.first?.segments.map(\.points.count) == segments, "\(serve.log())")
        var original = TraceStatistics()
        var logged = TraceStatistics()
        try GPXReader(contentsOf: trace).read { original.add($0) }
        try GPXReader(contentsOf: gpx).read { logged.add($0) }
        #expect(abs(original.length2D - logged.length2D) < 1, "\(original.length2D) m, logged \(logged.length2D) m")
    }

    /// Issue 28, item 3: `--now` moves the trace's times to the present, whole seconds, keeping
    /// their spacing: the first TPV is dated between the moment before serve started and the
    /// moment gpspipe had it all (whatever the machine's load), and every interval is the trace's.
    @Test(.timeLimit(.minutes(45)))
    func nowMovesTheTimesToThePresent() async throws {
        let (trace, points) = try Self.makeTrace(count: 20)
        let before = Date().addingTimeInterval(-1)
        let serve = try ServeHarness(trace: trace, ["--rate", "max", "--now"])
        defer { serve.tearDown() }
        let pipe = try await runUnblockedAsync(["gpspipe", "-w", "127.0.0.1:\(serve.port)"])
        let after = Date().addingTimeInterval(1)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = Self.tpvs(pipe.stdoutText).compactMap { ($0["time"] as? String).flatMap(f.date(from:)) }
        #expect(times.count == points.count, "\(serve.log())")
        let first = try #require(times.first)
        #expect(first >= before && first <= after, "\(first) is not between \(before) and \(after)")
        let intervals = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        let original = zip(points, points.dropFirst()).map { $1.time!.timeIntervalSince($0.time!) }
        #expect(intervals == original)
    }

    /// Closed loop: what `waymark record` stores from serve is the trace.
    @Test(.timeLimit(.minutes(45)))
    func recordStoresExactlyTheTrace() async throws {
        let (trace, points) = try Self.makeTrace(count: 40)
        let serve = try ServeHarness(trace: trace, ["--rate", "50"])
        defer { serve.tearDown() }
        let store = serve.directory + "/record.sqlite"
        let r = try await runUnblockedAsync([
            Paths.waymark.path, "record", "--gpsd", "127.0.0.1:\(serve.port)", "--count", String(points.count),
            "--format", "ndjson", "--no-auto-pause", "--store", store, "--duration", "30s",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let export = try run(Paths.waymark.path, ["sessions", "export", "1", "--format", "ndjson", "--store", store])
        #expect(export.status == 0, "\(export.stderr)")
        for output in [r.stdoutText, export.stdoutText] {
            let fixes = try ndjsonObjects(output)
            #expect(fixes.count == points.count, "\(r.stderr)\n\(serve.log())")
            for (fix, point) in zip(fixes, points) {
                #expect(fix["latitude"] as? Double == point.coordinate.latitude)
                #expect(fix["longitude"] as? Double == point.coordinate.longitude)
                #expect(fix["time"] as? String == Self.time(point))
                #expect(fix["altitude"] as? Double == point.elevation)
            }
        }
    }

    /// Waits until serve's log holds `text` `times` times, or serve has exited (at most two
    /// minutes, a guard against a hang).
    static func waitForLog(_ serve: ServeHarness, _ text: String, times: Int = 1) async -> Bool {
        func seen() -> Bool { serve.log().components(separatedBy: text).count - 1 >= times }
        return await waitUntil(within: 120) { seen() || !isRunning(serve.pid) } && seen()
    }

    /// Four clients on one server: one reads everything, one never reads, one leaves early, one
    /// comes late. The first gets every epoch in order; the late one exactly the epochs made
    /// after it watched; the one that never reads is skipped ahead, and nobody waits for it.
    ///
    /// The trace is stepped (`--rate step`): the test lets epochs out when the clients are where
    /// it wants them, so what each receives does not depend on how busy the machine is.
    @Test func lateSlowAndLeavingClientsDoNotDisturbTheOthers() async throws {
        let (trace, points) = try Self.makeTrace(count: 3000)
        let serve = try ServeHarness(
            trace: trace, ["--rate", "step", "--queue", "200", "--idle-timeout", "0"], stepped: true)
        defer { serve.tearDown() }
        // The slow client's socket takes a few epochs; it watches and never reads.
        let slow = try RawClient(port: serve.port, receiveBuffer: 2048)
        defer { slow.close() }
        try slow.send("?WATCH={\"enable\":true,\"json\":true};\n")
        let fastOut = serve.directory + "/fast.out"
        let fast = try spawnUnblocked(["stdbuf", "-oL", "gpspipe", "-w", "127.0.0.1:\(serve.port)"], output: fastOut)
        let leaving = try UnblockedRun(["gpspipe", "-w", "-n", "25", "127.0.0.1:\(serve.port)"])
        #expect(await Self.waitForLog(serve, ": watching (json)", times: 3), "\(serve.log())")

        /// Lets `count` more epochs out, 100 at a time (half the --queue), each time once the
        /// readers have every epoch so far: they never lag a whole --queue, however slowly
        /// they are scheduled.
        var released = 0
        func release(_ count: Int, readers: [(path: String, from: Int)]) async throws -> Bool {
            let end = released + count
            while released < end {
                let step = min(100, end - released)
                try serve.release(step)
                released += step
                let caughtUp = await waitUntil(within: 120) {
                    readers.allSatisfy { Self.tpvCount($0.path) >= released - $0.from }
                }
                guard caughtUp else { return false }
            }
            return true
        }

        // 1000 epochs: the fast client reads them all, the leaving one 11 (and the VERSION,
        // DEVICES and WATCH lines) and leaves, the slow one falls a whole --queue behind.
        #expect(try await release(1000, readers: [(fastOut, 0)]), "\(serve.log())")
        let leftEarly = await leaving.finish()
        #expect(leftEarly.stdoutText.split(whereSeparator: \.isNewline).count == 25)

        // The late client joins where the trace is: at epoch 1000.
        let lateOut = serve.directory + "/late.out"
        let late = try spawnUnblocked(["stdbuf", "-oL", "gpspipe", "-w", "127.0.0.1:\(serve.port)"], output: lateOut)
        #expect(await Self.waitForLog(serve, ": watching (json)", times: 4), "\(serve.log())")
        #expect(try await release(1999, readers: [(fastOut, 0), (lateOut, 1000)]), "\(serve.log())")
        // The slow client goes; the last epoch then ends the trace, and serve once it is sent.
        slow.close()
        try serve.release(1)
        let ended = await serve.finish(within: 120)
        #expect(ended.status == 0 && !ended.timedOut, "\(serve.log())")
        _ = await waitForExitAsync(fast, within: 60)
        _ = await waitForExitAsync(late, within: 60)

        let fastTimes = Self.tpvs(try String(contentsOfFile: fastOut, encoding: .utf8)).compactMap {
            $0["time"] as? String
        }
        #expect(fastTimes == points.map(Self.time), "the fast client read every epoch, in order")
        let lateTimes = Self.tpvs(try String(contentsOfFile: lateOut, encoding: .utf8)).compactMap {
            $0["time"] as? String
        }
        #expect(lateTimes == Array(points.map(Self.time).dropFirst(1000)), "the late client joined at epoch 1000")
        let log = serve.log()
        #expect(log.contains("reads too slowly"), "\(log)")
        #expect(log.contains("it skipped"), "the slow client's skipped epochs are counted: \(log)")
        #expect(log.components(separatedBy: "reads too slowly").count == 2, "said once, not per epoch: \(log)")
        #expect(log.contains("the trace has ended after \(points.count) epoch(s)"), "\(log)")
    }

    /// `--rate step` takes whole numbers of epochs from standard input; anything else is
    /// reported and ignored, and serve goes on.
    @Test func aStepThatIsNotANumberIsReportedAndIgnored() async throws {
        let (trace, points) = try Self.makeTrace(count: 10)
        let serve = try ServeHarness(trace: trace, ["--rate", "step"], stepped: true)
        defer { serve.tearDown() }
        let client = try RawClient(port: serve.port)
        defer { client.close() }
        try client.send("?WATCH={\"enable\":true,\"json\":true};\n")
        #expect(await Self.waitForLog(serve, ": watching (json)"), "\(serve.log())")
        try serve.release(3)
        var times: [String] = []
        while times.count < 3 {
            let line = try client.line()
            if line.contains("\"class\":\"TPV\"") { times += Self.tpvs(line).compactMap { $0["time"] as? String } }
        }
        #expect(times == points.prefix(3).map(Self.time))
        let bad = Array("two\n-4\n".utf8)
        #expect(serve.writeSteps(bad) == bad.count)
        #expect(await Self.waitForLog(serve, "line 3: '-4' is not a number of epochs"), "\(serve.log())")
        #expect(serve.log().contains("line 2: 'two' is not a number of epochs to let out; ignored"))
        try serve.release(7)
        while times.count < 10 {
            let line = try client.line()
            if line.contains("\"class\":\"TPV\"") { times += Self.tpvs(line).compactMap { $0["time"] as? String } }
        }
        #expect(times == points.map(Self.time))
        #expect(await serve.finish(within: 120).status == 0, "\(serve.log())")
    }

    @Test func aStepCannotComeFromTheTracesOwnInput() async throws {
        let r = try await runAsync(Paths.waymark.path, ["serve", "-", "--rate", "step"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--rate step reads its steps from standard input"), "\(r.stderr)")
    }

    @Test(.timeLimit(.minutes(45)))
    func malformedRequestsGetGpsdsErrorsOnTheWire() async throws {
        let (trace, _) = try Self.makeTrace(count: 5)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let client = try RawClient(port: serve.port)
        defer { client.close() }
        #expect(try client.line().contains("\"class\":\"VERSION\""))
        try client.send("?FOO;\n?WATCH={\"enable\":true,\"device\":\"/dev/ttyUSB0\"};\n?WATCH={nope;\n")
        let errors = try (0..<5).map { _ in try client.line() }.filter { $0.contains("\"class\":\"ERROR\"") }
        #expect(
            errors == [
                #"{"class":"ERROR","message":"Unrecognized request '?FOO;\n'"}"#,
                #"{"class":"ERROR","message":"No such device as /dev/ttyUSB0"}"#,
                #"{"class":"ERROR","message":"Invalid WATCH: non-whitespace when expecting attribute start"}"#,
            ])
    }

    @Test(.timeLimit(.minutes(45)))
    func sigtermStopsAServerThatLoops() async throws {
        let (trace, _) = try Self.makeTrace(count: 5)
        let serve = try ServeHarness(trace: trace, ["--rate", "1", "--loop"])
        defer { serve.tearDown() }
        let client = try RawClient(port: serve.port)
        defer { client.close() }
        try client.send("?WATCH={\"enable\":true,\"json\":true};\n")
        var lines: [String] = []
        while !lines.contains(where: { $0.contains("\"class\":\"TPV\"") }) { lines.append(try client.line()) }
        kill(serve.pid, SIGTERM)
        let ended = await serve.finish(within: 120)
        #expect(ended.status == 0 && !ended.timedOut, "\(serve.log())")
        #expect(serve.log().contains("waymark serve: stopped"))
    }

    @Test(.timeLimit(.minutes(45)))
    func aTakenPortIsAnIOErrorWithAHint() async throws {
        let (trace, _) = try Self.makeTrace(count: 5)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let second = try await runUnblockedAsync([Paths.waymark.path, "serve", trace, "--port", String(serve.port)])
        #expect(second.status == 74)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(serve.port)"), "\(second.stderr)")
        #expect(second.stderr.contains("hint: "))
    }
}

/// A `waymark serve` of the test's own, on a port picked free; the server that answers there is
/// checked to be it (its DEVICES names the test's trace), else it starts again on another port.
final class ServeHarness {
    static var available: Bool {
        which("gpspipe") != nil && which("gpxlogger") != nil && which("stdbuf") != nil
            && FileManager.default.isExecutableFile(atPath: Paths.waymark.path)
    }

    let trace: String
    let directory: String
    private(set) var port = 0
    private(set) var pid: pid_t = 0
    private var finished = false
    let logPath: String
    /// With `--rate step`: the write end of serve's standard input.
    private var steps: Int32 = -1

    /// Serves `trace`. The harness's directory, removed at the end, is the trace's when that is the
    /// test's own (`ownsTraceDirectory`), else a new one. `shell` runs in bash before serve
    /// (`ulimit -n 48`); `stepped` gives serve a pipe as its standard input, for `--rate step`
    /// and ``release(_:)``.
    init(
        trace: String, _ arguments: [String], ownsTraceDirectory: Bool = true, shell: String? = nil,
        stepped: Bool = false
    ) throws {
        self.trace = trace
        directory = ownsTraceDirectory ? (trace as NSString).deletingLastPathComponent : temporaryPath("-serve")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        logPath = directory + "/serve-\(UUID().uuidString).log"
        var problems: [String] = []
        for _ in 0..<3 {
            port = try freeLoopbackPorts(1)[0]
            var argv = [Paths.waymark.path, "serve", trace, "--port", String(port)] + arguments
            if let shell { argv = ["/bin/bash", "-c", shell + "; exec \"$@\"", "serve"] + argv }
            var input: Int32?
            if stepped {
                // A socket pair, not a pipe: a step sent after serve has gone fails with EPIPE
                // (MSG_NOSIGNAL) instead of killing the test process with SIGPIPE.
                var fds: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0
                else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                input = fds[0]
                steps = fds[1]
            }
            pid = try spawnUnblocked(argv, output: logPath, input: input)
            if let input { close(input) }
            do {
                try checkItIsOurs()
                return
            } catch {
                problems.append("port \(port): \(error)")
                kill(pid, SIGKILL)
                _ = waitForExit(pid, within: 5)
                closeSteps()
            }
        }
        throw ServeError("no server of this test answered: \(problems.joined(separator: "; ")); log: \(log())")
    }

    /// With `stepped`: lets `epochs` more epochs out (a line on serve's standard input).
    func release(_ epochs: Int) throws {
        let line = Array("\(epochs)\n".utf8)
        guard writeSteps(line) == line.count else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPIPE) }
    }

    /// With `stepped`: writes `bytes` to serve's standard input as they are; what write(2) gave.
    func writeSteps(_ bytes: [UInt8]) -> Int { Glibc.send(steps, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }

    private func closeSteps() {
        if steps >= 0 { close(steps) }
        steps = -1
    }

    struct ServeError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// Waits for the port while our process runs (two minutes guard against a hang), then asks
    /// ?DEVICES; and checks the path.
    private func checkItIsOurs() throws {
        for _ in 0..<4800 {
            if hasExited(pid) { throw ServeError("serve exited before it listened") }
            if let client = try? RawClient(port: port) {
                defer { client.close() }
                _ = try client.line()  // VERSION
                try client.send("?DEVICES;\n")
                let devices = try client.line()
                if hasExited(pid) { throw ServeError("serve exited; another program answered") }
                let object = try JSONSerialization.jsonObject(with: Data(devices.utf8)) as? [String: Any]
                let paths = (object?["devices"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
                guard paths == [trace] else {
                    throw ServeError("the server on port \(port) is not this test's: its DEVICES names \(paths)")
                }
                return
            }
            usleep(25_000)
        }
        throw ServeError("serve never listened on \(port)")
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits for serve to exit, without holding a thread of the pool; past `seconds` (a guard
    /// against a hang) it is killed, and `timedOut` says so.
    func finish(within seconds: Double) async -> (status: Int32, timedOut: Bool) {
        let (raw, timedOut) = await waitForExitAsync(pid, within: seconds)
        finished = true
        return (exitStatus(raw), timedOut)
    }

    func tearDown() {
        closeSteps()
        if !finished {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, within: 5)
            finished = true
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A blocking loopback TCP client, for speaking to serve directly: a read waits at most
/// `receiveTimeout` seconds (5 by default; nil waits for ever, for a client on a thread of its
/// own whose end the test waits for as progress).
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    init(port: Int, receiveBuffer: Int? = nil, receiveTimeout: Int? = 5) throws {
        // Close-on-exec: a program the test starts later must not keep this connection open.
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let receiveTimeout {
            var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard ok else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .ECONNREFUSED)
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends all of `bytes`, waiting while the socket is full.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            sent += n
        }
    }

    /// The next line, without its CR LF.
    func line() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == 13 { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { throw POSIXError(n == 0 ? .ECONNRESET : POSIXErrorCode(rawValue: errno) ?? .EIO) }
            buffer += chunk[0..<n]
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
