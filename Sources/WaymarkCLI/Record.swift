import ArgumentParser
import Dispatch
import Waymark
import WaymarkGPSD
import WaymarkScenarioFile
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

extension WaymarkCommand {
    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record from a live GPS receiver through gpsd: a logger, or the simulated app's run.",
            discussion: """
                Waymark connects to gpsd with libgps. Without app options it is a logger, as \
                gpxlogger is: every fix the receiver reports is kept (no auto-pause, no simulated \
                policy), but for --fix-min and --min-move. Any app option (--scenario, \
                --authorization, --background-at, …) or --app runs the fixes through the same \
                simulated app and location manager as replay, in wall-clock time, and then \
                auto-pause follows the app's settings (on by default, as in iOS).

                Foreground deliveries print as UI lines on standard output; background deliveries \
                and events are logged on standard error. When gpsd goes away Waymark logs the \
                outage, ends the track segment and reconnects (after 250 ms, doubling up to 10 s); \
                a receiver that goes silent is reported. These go into the audit log and the store \
                as `source` events too; `waymark sessions show` lists them. Ctrl-C (SIGINT), \
                SIGTERM, SIGHUP (a dropped SSH session) or SIGQUIT stops cleanly, with a summary.

                Altitude: GPX's <ele> and the stored altitude are metres above mean sea level \
                (gpsd's altMSL), as GPX means; gpxlogger writes the height above the WGS 84 \
                ellipsoid (altHAE). --altitude hae records that instead.

                Every fix the app receives is committed to the session store (--store, or \
                $XDG_DATA_HOME/waymark/waymark.sqlite) before it is shown: a crash, a kill -9 or a \
                power loss loses nothing that was printed. --format gpx (or -o FILE.gpx) writes \
                GPX 1.1 as fixes arrive: a reader opening the file at any moment finds it complete, \
                and one that keeps it open keeps the version it opened (--gpx FILE does the same \
                beside another --format); `waymark repair` mends a GPX another logger cut short. A recording \
                that got no fix (the receiver never had one, or none passed --fix-min) leaves no \
                session, and its summary says so; --keep-empty keeps it. --label names the session.

                If another program holds the store's write lock, the recording waits for it (with a \
                notice) instead of ending; meanwhile up to 1000 reports from gpsd wait in memory, \
                and any beyond them are dropped before they are shown, and counted. A line from \
                gpsd longer than 64 KiB is skipped with a warning.

                If gpsd cannot be reached at the start, Waymark says so and exits with 69. If the \
                store cannot be written (a full disk, a read-only file), the recording stops, keeps \
                everything stored so far, and exits with 74.

                Examples:
                  waymark record
                  waymark record --gpsd localhost:2947 --duration 10m
                  waymark record --count 100 --format ndjson > fixes.ndjson
                  waymark record --background-at 1m --foreground-at 5m --audit run.ndjson
                  waymark record -o walk.gpx --fix-min 3d --min-move 5
                  waymark record --gpx walk.gpx --store ~/walks.sqlite
                  waymark record --app --no-store     # the simulated app's defaults, auto-pause on
                """)

        @Option(help: ArgumentHelp("Where gpsd listens (default localhost:2947).", valueName: "host[:port]"))
        var gpsd: String = "localhost:2947"

        @Option(help: ArgumentHelp("Watch only this receiver (a device path gpsd knows).", valueName: "path"))
        var device: String?

        @Option(help: ArgumentHelp("Stop after this long (90s, 10m, 1h).", valueName: "duration"))
        var duration: DurationArgument?

        @Option(help: ArgumentHelp("Stop after this many fixes.", valueName: "n"))
        var count: Int?

        @Option(
            help: ArgumentHelp("Report the receiver as silent after this long (default 3s).", valueName: "duration"))
        var staleAfter: DurationArgument?

        @Option(
            name: .customLong("fix-min"),
            help: ArgumentHelp("Keep only fixes of this mode or better: 2d or 3d.", valueName: "mode"))
        var fixMin: FixMinimum?

        @Option(
            name: .customLong("min-move"),
            help: ArgumentHelp(
                "Keep a fix only when it is at least this many metres from the last fix kept (gpxlogger's -m).",
                valueName: "metres"))
        var minMove: Double?

        @Option(
            name: .customLong("segment-gap"),
            help: ArgumentHelp(
                "Start a new track segment when two fixes are further apart than this in the receiver's time (default 10s; 0 splits only where the fix, gpsd or the receiver's clock is lost). A loss of fix always ends the segment, so no line is drawn through a tunnel.",
                valueName: "duration"))
        var segmentGap: DurationArgument?

        @Flag(
            help: ArgumentHelp(
                "Stop when gpsd's connection ends, instead of reconnecting: a recording of a feed that ends (waymark serve, gpsfake) ends with it."
            ))
        var untilSourceEnds = false

        @Option(
            help: ArgumentHelp(
                "The altitude recorded and written as <ele>: msl (above mean sea level, GPX's meaning) or hae (above the WGS 84 ellipsoid, as gpxlogger writes).",
                valueName: "reference"))
        var altitude: GPSDMapping.AltitudeReference = .msl

        @Flag(
            name: .customLong("app"),
            help: "Run the fixes through the simulated app even without other app options (auto-pause on, as in iOS).")
        var simulatedApp = false

        @OptionGroup(title: "App, authorization and accuracy") var app: AppOptions

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp(
                "The output for delivered locations (default: what -o's extension names, else text; gpx writes GPX 1.1 as fixes arrive)."
            ))
        var format: OutputFormat?

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp("Write the delivered locations here (atomically, at the end).", valueName: "file"))
        var output: String?

        @Option(help: ArgumentHelp("Write the NDJSON audit log here.", valueName: "file"))
        var audit: String?

        @Option(help: ArgumentHelp("Also write the track to this GPX file as fixes arrive.", valueName: "file"))
        var gpx: String?

        @Flag(
            name: .shortAndLong,
            help:
                "Print only the summary (with counts of what was left out) and the chosen output: no log lines, gpsd notices, warnings or status line. Errors still print."
        )
        var quiet = false

        @Flag(
            help:
                "Keep the session even when gpsd gave no fix (by default a recording without a fix leaves no session, and says so)."
        )
        var keepEmpty = false

        @OptionGroup(title: "GeoJSON for GIS") var geojson: GeoJSONOutputOptions

        @OptionGroup(title: "Session store") var storage: SessionOptions

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
            if keepEmpty && storage.noStore {
                throw ValidationError("--keep-empty keeps a session; --no-store stores none")
            }
            if let duration, duration.value <= .zero { throw ValidationError("--duration must be longer than 0 s") }
            if let minMove, !(minMove >= 0 && minMove.isFinite) {
                throw ValidationError("--min-move must be 0 metres or more")
            }
            _ = try Self.endpoint(gpsd)
            // What an output is (an input, the store) first: it says more than what its name says.
            let outputs: [(option: String, path: String)] =
                (output.map { [("-o", $0)] } ?? []) + (audit.map { [("--audit", $0)] } ?? [])
                + (gpx.map { [("--gpx", $0)] } ?? [])
            try OutputSafety.check(
                outputs: outputs,
                protected: OutputSafety.inputs(app.scenario.map { [$0] } ?? [])
                    + (storage.noStore ? [] : OutputSafety.store(storage.location.path)))
            let resolved = try OutputFormat.resolve(format, output: output, geojsonAsked: geojson.isGiven)
            try geojson.check(geojson: resolved == .geojson)
            try geojson.checkDelivered()
        }

        static func endpoint(_ text: String) throws -> (host: String, port: String) {
            var host = text
            var port = "2947"
            if let colon = text.lastIndex(of: ":"), !text.hasSuffix("]") {
                host = String(text[..<colon])
                port = String(text[text.index(after: colon)...])
            }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let n = Int(port), (1...65535).contains(n) else {
                throw ValidationError("--gpsd must be HOST or HOST:PORT, such as localhost:2947")
            }
            return (host, port)
        }

        func run() async throws {
            do {
                try await record()
            } catch let error as ExitCode {
                throw error
            } catch let error as ScenarioFileError {
                printError("waymark: \(error)")
                throw ExitCode(error.cannotOpen ? ExitStatus.noInput : ExitStatus.dataError)
            } catch let error as ValidationError {
                printError("waymark record: \(error.message)")
                throw ExitCode(ExitStatus.usage)
            } catch {
                throw sysexit(for: error)
            }
        }

        private func record() async throws {
            let file = try app.scenario.map { try ScenarioFile.load(path: $0) }
            var scenario = try app.checkedScenario(loading: file)
            let logger = !app.isAnyGiven && !simulatedApp
            if logger { scenario = Scenario.logger(scenario) }
            let format = try OutputFormat.resolve(self.format, output: output, geojsonAsked: geojson.isGiven)
            let (host, port) = try Self.endpoint(gpsd)
            let epoch = Date()  // the wall-clock instant of offset zero, read once at the edge
            let simulation = Simulation(scenario: scenario, epoch: epoch)
            let session = try storage.begin(
                kind: .record, source: "gpsd at \(host):\(port)", scenarioPath: app.scenario, epoch: epoch,
                mode: .durable, defaultDevice: SessionStore.hostName + ":" + (device ?? "gpsd \(host):\(port)"))
            let liveGPX = try OutputFormat.liveGPX(
                format: format, output: output, gpx: gpx, name: "Waymark recording \(ValueFormatting.iso8601(epoch))")
            let outputs = try RunOutputs(
                simulation: simulation, format: format, output: output, audit: audit, quiet: quiet, live: true,
                session: session, liveGPX: liveGPX, geojson: geojson.options(writingTo: output))
            outputs.console.speaksGPS = logger
            if let session, !quiet {
                printError("waymark: recording session \(session.id) into \(session.store.path)")
            }
            let forwarding = ForwardingRun.start(session, to: try storage.forwardTarget(), quiet: quiet)
            if !quiet {
                printError(
                    logger
                        ? "waymark: logging every fix (no simulated app: add --app or any app option to run one)"
                        : "waymark: fixes go through the simulated app (auto-pause \(scenario.manager.pausesLocationUpdatesAutomatically ? "on" : "off"))"
                )
            }

            var configuration = GPSDClient.Configuration(host: host, port: port, device: device)
            if let staleAfter { configuration.staleAfter = staleAfter.value }
            let client = GPSDClient(configuration: configuration)
            let recording = LiveRecording(
                simulation: simulation, mapping: GPSDMapping(altitude: altitude), clock: ContinuousClock())
            recording.filter = LoggerFilter(minimumMode: fixMin?.mode, minimumMove: minMove)
            if let segmentGap { recording.segmentGap = segmentGap.value > .zero ? segmentGap.value : nil }
            recording.endsWithSource = untilSourceEnds
            let status = Terminal.showsTerminalUI && !quiet ? StatusLine() : nil
            outputs.console.beforeLogLine = { status?.clear() }
            recording.onFixHandled = { report, _ in
                status?.update(
                    report: report, stored: session?.committedLocations ?? (simulation.tutorialApp?.storedCount ?? 0))
            }
            let implausible = Counter()
            let overflowed = Counter()
            let overlong = Counter()
            let gpsdErrors = Counter()
            let activations = Counter()
            let deactivations = Counter()
            recording.onNotice = { notice in
                switch notice {
                case .implausibleTime: implausible.increment()
                case .backlogOverflow(let dropped, _, _): overflowed.increment(by: dropped)
                case .overlongLine: overlong.increment()
                case .gpsd(.error): gpsdErrors.increment()
                case .gpsd(.deviceActivated): activations.increment()
                case .gpsd(.deviceDeactivated): deactivations.increment()
                default: break
                }
                guard !quiet else { return }
                status?.clear()
                let time = ConsoleReporter.offset(simulation.now)
                switch notice {
                case .connected(let host, let port): printError("\(time)  gpsd: connected to \(host):\(port)")
                case .unreachable(let reason, let retry):
                    printError("\(time)  gpsd: unreachable (\(reason)); trying again in \(DurationText.format(retry))")
                case .outage(let reason):
                    printError("\(time)  gpsd: outage (\(reason)); the track segment ends; reconnecting")
                case .stale(let silent):
                    printError("\(time)  gpsd: the receiver has been silent for \(DurationText.format(silent))")
                case .receiving: printError("\(time)  gpsd: the receiver is sending again")
                case .implausibleTime(let fixTime, let expected):
                    printError(
                        "\(time)  gpsd: a fix timed \(ValueFormatting.iso8601(fixTime)) is dropped: the receiver's "
                            + "clock said about \(ValueFormatting.iso8601(expected)) (the fixes after it are kept)")
                case .receiverTimeJumped(let seconds):
                    printError("\(time)  gpsd: " + Self.describeJump(seconds))
                case .overlongLine(let bytes, let limit):
                    printError(
                        "\(time)  gpsd: warning: a line of \(bytes) bytes (more than \(limit)) was skipped; "
                            + "the lines after it are read")
                case .backlogOverflow(let dropped, let from, let to):
                    printError(
                        "\(time)  gpsd: \(dropped) report(s) received from \(ConsoleReporter.offset(from)) to "
                            + "\(ConsoleReporter.offset(to)) were dropped: \(recording.backlogLimit) were already "
                            + "waiting to be recorded (is the store slow or locked?); none of them was shown")
                case .gpsd(.error(let message)):
                    printError("\(time)  gpsd: error: \(message)")
                case .gpsd(.deviceActivated(let path, let driver)):
                    printError("\(time)  gpsd: receiver \(path) activated" + (driver.map { " (driver \($0))" } ?? ""))
                case .gpsd(.deviceDeactivated(let path)):
                    printError("\(time)  gpsd: receiver \(path) deactivated")
                case .simulatedFixes:
                    printError(
                        "\(time)  gpsd: warning: the receiver is in simulation mode (gpsd marks its fixes status 8); "
                            + "its fixes are a simulator's and are left out")
                }
            }
            // Another process writing the store (for seconds, or until it is told to stop) must not end
            // the recording: its commits wait, and gpsd's reports wait in memory meanwhile.
            // This runs on the recording's thread, inside the commit that waits.
            let backlogLimit = recording.backlogLimit
            let lineToClear = status == nil ? "" : "\r\u{1B}[K"
            let store = session?.store
            store?.lockWaiting.waitPatiently { waited in
                guard !quiet else { return }
                writeStandardError(lineToClear)
                printError(
                    "store: locked by another process for \(DurationText.format(waited)); waiting "
                        + "(up to \(backlogLimit) reports from gpsd wait in memory)")
            }
            session?.onLockReleased = { waited in
                guard !quiet else { return }
                status?.clear()
                printError(
                    "\(ConsoleReporter.offset(simulation.now))  store: the lock was released after "
                        + "\(DurationText.format(waited)); recording goes on")
            }
            let stopper = recording.stopper
            let signalled = RunStop()
            let sources = handleStopSignals {
                signalled.request()
                store?.lockWaiting.abandon()
                stopper.stop()
            }
            defer { for s in sources { s.cancel() } }
            outputs.onRecordingFailure = { _ in stopper.stop() }

            let ending = await recording.run(client: client, duration: duration?.value, count: count)
            await client.join()
            status?.clear()
            if case .unreachable(let reason) = ending {
                try? session?.finish(
                    outcome: .failed, detail: "cannot reach gpsd at \(host):\(port): \(reason)", duration: .zero,
                    endedAt: Date())
                try? liveGPX?.close()
                printError("waymark: cannot reach gpsd at \(host):\(port): \(reason)")
                if let session, !keepEmpty {
                    _ = try? session.store.deleteSession(session.id)
                    printError(
                        "waymark: no session was kept: no fix arrived (--keep-empty keeps a session without fixes)")
                }
                await forwarding?.finish()
                printError(
                    "hint: start gpsd for your receiver, e.g. `sudo gpsd -N /dev/ttyUSB0` (or `sudo systemctl start gpsd`), "
                        + "or point --gpsd at where it runs")
                throw ExitCode(69)
            }
            try outputs.finish(
                simulation: simulation, featureName: "recorded locations",
                summary: logger
                    ? outputs.console.loggerSummary(source: "gpsd at \(host):\(port)")
                    : SummaryText.render(
                        simulation.summary, simulation: simulation, trace: "gpsd at \(host):\(port)", rate: 1,
                        verb: "Recording"),
                outcome: signalled.isRequested ? .stopped : .completed, endedAt: Date(),
                discardingWithoutFix: keepEmpty
                    ? nil
                    : "no fix from gpsd at \(host):\(port) was recorded in \(ConsoleReporter.offset(simulation.now).dropFirst())"
            )
            await forwarding?.finish()
            // What was left out, counted: part of the summary, so printed with --quiet too.
            if implausible.value > 0 {
                printError(
                    "waymark: \(implausible.value) fix(es) dropped because their time did not fit the receiver's clock")
            }
            if overflowed.value > 0 {
                printError(
                    "waymark: \(overflowed.value) report(s) from gpsd dropped because the recording could not keep up")
            }
            if overlong.value > 0 {
                printError("waymark: \(overlong.value) overlong line(s) from gpsd skipped")
            }
            if recording.simulatedFixes > 0 {
                printError(
                    "waymark: \(recording.simulatedFixes) fix(es) gpsd marked simulated (status 8) left out")
            }
            if gpsdErrors.value > 0 {
                printError("waymark: gpsd reported \(gpsdErrors.value) error(s) (source events in the audit log)")
            }
            if activations.value + deactivations.value > 0 {
                printError(
                    "waymark: gpsd's receivers: \(activations.value) activated, \(deactivations.value) deactivated")
            }
            let lines = client.lineCounts
            if lines.notJSON > 0 {
                printError("waymark: \(lines.notJSON) line(s) from gpsd that are not JSON skipped")
            }
            // Every report but TPV carries no fix: counted by class (VERSION, DEVICES and WATCH
            // answer the connection; SKY's values go with the next TPV).
            let others = lines.byClass.filter { $0.key != "TPV" }.sorted { $0.key < $1.key }
            if !others.isEmpty {
                printError(
                    "waymark: gpsd's reports without a fix: "
                        + others.map { "\($0.key.isEmpty ? "(no class)" : $0.key) \($0.value)" }.joined(separator: ", ")
                )
            }
            let f = recording.filter
            if f.belowMode > 0 { printError("waymark: \(f.belowMode) fix(es) below --fix-min left out") }
            if f.belowMove > 0 {
                printError("waymark: \(f.belowMove) fix(es) closer than --min-move to the last kept left out")
            }
        }

        /// `--fix-min`: the lowest fix mode kept.
        enum FixMinimum: String, ExpressibleByArgument, CaseIterable {
            case twoD = "2d"
            case threeD = "3d"
            var mode: Int { self == .twoD ? 2 : 3 }
        }

        /// What a jump of the receiver's clock by `seconds` is, in words.
        static func describeJump(_ seconds: Double) -> String {
            let weeks1024 = 1024.0 * 7 * 86_400
            let size = DurationText.format(.seconds(abs(seconds).rounded()))
            let direction = seconds < 0 ? "back" : "forward"
            if abs(abs(seconds) - weeks1024) < 86_400 {
                return "the receiver's clock jumped \(direction) by 1024 weeks (a GPS week-number rollover); "
                    + "fixes are recorded with the receiver's times from here on"
            }
            return "the receiver's clock jumped \(direction) by \(size) and stayed there; "
                + "fixes are recorded with the receiver's times from here on"
        }
    }
}

extension GPSDMapping.AltitudeReference: ExpressibleByArgument {}
