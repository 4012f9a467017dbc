import Foundation
import Testing

@testable import Waymark

/// `waymark serve` against the gpsd clients people run by hand: gpsd's Python client library
/// (`import gps`, what most scripts around gpsd use) and `cgps`, its curses monitor, read in a
/// private tmux's pane as a user would see it.
@Suite(.enabled(if: ServeHarness.available, "needs gpsd-clients and a built waymark"))
struct GPSDServeClientsTests {
    /// An interpreter that has gpsd's Python module (Debian's python3-gps installs it for Debian's
    /// own python3, which may not be the first python3 on PATH).
    static let pythonWithGPS: String? = {
        for candidate in ["/usr/bin/python3", which("python3")].compactMap({ $0 }) {
            if let r = try? run(candidate, ["-c", "import gps"]), r.status == 0 { return candidate }
        }
        return nil
    }()

    @Test(
        .timeLimit(.minutes(45)),
        .enabled(if: pythonWithGPS != nil, "needs python3-gps (scripts/test.sh installs it)"))
    func pythonsGpsModuleReadsEveryPoint() async throws {
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 80)
        let serve = try ServeHarness(trace: trace, ["--rate", "max"])
        defer { serve.tearDown() }
        let script = serve.directory + "/client.py"
        // gps.gps's iterator ends when the server closes the stream (serve does at the trace's end).
        try """
        import gps, json, sys
        session = gps.gps(host="127.0.0.1", port=sys.argv[1], mode=gps.WATCH_ENABLE | gps.WATCH_JSON)
        for report in session:
            if report["class"] in ("TPV", "SKY"):
                print(json.dumps({k: report.get(k) for k in ("class", "device", "mode", "time", "lat", "lon", "altMSL", "hdop")}))
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let client = try await runUnblockedAsync([Self.pythonWithGPS!, script, String(serve.port)])
        #expect(client.status == 0, "\(client.stderr)")
        let reports = try ndjsonObjects(client.stdoutText)
        let tpvs = reports.filter { $0["class"] as? String == "TPV" }
        #expect(tpvs.count == points.count, "\(client.stderr)\n\(serve.log())")
        for (tpv, point) in zip(tpvs, points) {
            #expect(tpv["mode"] as? Int == 3)
            #expect(tpv["device"] as? String == trace)
            #expect(tpv["time"] as? String == GPSDServeLiveTests.time(point))
            #expect(tpv["lat"] as? Double == point.coordinate.latitude)
            #expect(tpv["lon"] as? Double == point.coordinate.longitude)
            #expect(tpv["altMSL"] as? Double == point.elevation)
        }
        let hdops = reports.filter { $0["class"] as? String == "SKY" }.compactMap { $0["hdop"] as? Double }
        #expect(hdops == points.compactMap(\.hdop), "the SKY after each fix carries its HDOP")
    }

    /// cgps draws the served fix: its Time, Latitude, Longitude and altitude rows name one point of
    /// the trace, with a 3D fix.
    ///
    /// The trace plays in real time (`--rate 1`): cgps hears an epoch every second, and the test
    /// waits on what cgps draws, not on the clock (two minutes guard against a hang). It stepped
    /// the trace from the test process before; in two full runs of the suite, cgps then heard
    /// nothing for two minutes and gave up ("cgps: GPS timeout") although every step had been
    /// sent, so the steps' socket is no longer a part of this test.
    @Test(
        .enabled(
            if: which("cgps") != nil && which("tmux") != nil, "needs cgps and tmux (scripts/test.sh installs them)"))
    func cgpsShowsTheServedFix() async throws {
        let (trace, points) = try GPSDServeLiveTests.makeTrace(count: 600)
        let serve = try ServeHarness(trace: trace, ["--rate", "1"])
        defer { serve.tearDown() }
        // A tmux server of the test's own (its socket in the test's directory), 100×30 cells.
        let socket = serve.directory + "/tmux.sock"
        let tmux = try #require(which("tmux"))
        // runUnblockedAsync: tmux's server outlives the command that starts it and keeps its
        // output open, so the output goes to files, not to pipes read to their end.
        // remain-on-exit: should cgps end, its pane keeps what it last drew; how it ended, its
        // standard error and the terminal's size go to files, for the failure's message.
        let configuration = serve.directory + "/tmux.conf"
        try "set -g remain-on-exit on\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let ending = serve.directory + "/cgps.end"
        let errors = serve.directory + "/cgps.err"
        let command = """
            cgps 127.0.0.1:\(serve.port) 2>'\(errors)'; \
            echo "cgps ended with status $? in a terminal of $(stty size) (rows columns)" >'\(ending)'
            """
        let started = try await runUnblockedAsync([
            tmux, "-S", socket, "-f", configuration, "new-session", "-d", "-x", "100", "-y", "30", command,
        ])
        #expect(started.status == 0, "\(started.stderr)")
        defer { _ = try? runUnblocked([tmux, "-S", socket, "kill-server"]) }
        var screen = ""
        var shown: CgpsScreen?
        _ = await waitUntil(within: 120) {
            screen = (try? runUnblocked([tmux, "-S", socket, "capture-pane", "-p"]))?.stdoutText ?? ""
            shown = CgpsScreen(screen)
            return shown != nil
        }
        let fix = try #require(
            shown,
            """
            cgps never showed a 3D fix:
            \(screen)
            \((try? String(contentsOfFile: ending, encoding: .utf8)) ?? "cgps has not ended")
            \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
            \(serve.log())
            """)
        let index = try #require(
            points.firstIndex { GPSDServeLiveTests.time($0) == fix.time },
            "cgps shows \(fix.time), not a time of the trace")
        let point = points[index]
        #expect(fix.latitude == String(format: "%.8f", point.coordinate.latitude), "\(screen)")
        #expect(fix.longitude == String(format: "%.8f", point.coordinate.longitude), "\(screen)")
        #expect(fix.altitudeMSL == String(format: "%.3f", try #require(point.elevation)), "\(screen)")
    }
}

/// What cgps 3.22's data window shows of a fix, as text: `Time:  2024-05-01T08:00:00.000Z (0)`,
/// `Latitude:  48.13719900 N`, `Alt (HAE, MSL):  n/a,  519.200 m`, `Status:  3D FIX (0 secs)`.
struct CgpsScreen {
    var time: String
    var latitude: String
    var longitude: String
    var altitudeMSL: String

    init?(_ screen: String) {
        func row(_ label: String) -> [Substring]? {
            guard let line = screen.split(separator: "\n").first(where: { $0.contains(label) }) else { return nil }
            return line[line.range(of: label)!.upperBound...].split(whereSeparator: { $0 == " " || $0 == "," })
        }
        guard let status = row("Status:"), status.starts(with: ["3D", "FIX"]),
            let time = row("Time:")?.first, time.hasSuffix("Z"),
            let lat = row("Latitude:"), lat.count >= 2, lat[1] == "N" || lat[1] == "S",
            let lon = row("Longitude:"), lon.count >= 2, lon[1] == "E" || lon[1] == "W",
            let alt = row("Alt (HAE, MSL):"), alt.count >= 3
        else { return nil }
        self.time = String(time)
        latitude = (lat[1] == "S" ? "-" : "") + lat[0]
        longitude = (lon[1] == "W" ? "-" : "") + lon[0]
        altitudeMSL = String(alt[1])
    }
}
