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
#elseif canImport(Darwin)
    import Darwin
#endif

extension WaymarkCommand {
    package struct Replay: AsyncParsableCommand {
        package init() {}

        package static let configuration = CommandConfiguration(
            abstract: "Replay a trace (GPX, NMEA, gpsd JSON) into a simulated iOS app and see what it receives.",
            discussion: """
                The trace plays on its own timestamps (untimed tracks, routes and Xcode-style \
                waypoint lists at --speed) into a simulated app that owns a CoreLocation-style \
                location manager. The app is authorized or not, goes to the background and back, \
                is suspended, runs background tasks and fetches; every fix is delivered, held or \
                dropped by the rules iOS applies, those of the release --ios names (default the \
                newest, 26; docs/ios-versions.md). The trace is streamed: memory stays flat at \
                any length.

                Foreground deliveries print as UI lines on standard output; background deliveries \
                and app events are logged on standard error. A summary ends the run. --audit writes \
                every event as NDJSON, the same bytes for the same inputs; --report FILE.html draws \
                the run as a page (each fix coloured by what happened to it, a timeline, the audit \
                events of any point or moment clicked).

                Every run is stored as a session (its delivered locations and its audit events) in \
                the store (--store, or $XDG_DATA_HOME/waymark/waymark.sqlite); `waymark sessions` \
                lists, shows and exports them. At --rate max the store commits in batches, else \
                every event. Ctrl-C stops the run cleanly and keeps the session. --label names it.

                On a terminal (standard error), a run at a finite rate says so in one line, with \
                how long it will take and that --rate max runs it at once, then shows its progress \
                on the last line. Not in pipes, nor with --quiet (WAYMARK_TERMINAL_UI=1 forces it).

                Times are offsets from the start: 90s, 2m, 1h5m, 250ms.

                Examples:
                  waymark replay walk.gpx
                  waymark replay walk.gpx --background-at 2m --foreground-at 10m
                  waymark replay walk.gpx --authorization notDetermined \\
                    --request always --answer allowWhileUsing \\
                    --always-answer keepWhenInUse --background-at 1m
                  waymark replay walk.gpx --background-modes location \\
                    --allows-background-updates --background-at 1m \\
                    --audit run.ndjson --format geojson -o delivered.geojson
                  waymark replay walk.gpx --scenario commute.yaml --rate 20
                  waymark replay walk.gpx --scenario commute.yaml --report run.html
                  waymark replay drive.gpx --authorization authorizedAlways \\
                    --significant-changes --background-at 1m --terminate-at 2m
                  waymark replay walk.gpx --region home:47.26,11.39,200 \\
                    --background-modes remote-notification --push-at 5m
                  waymark replay walk.gpx --quiet --format ndjson | jq .appState
                """)

        @Argument(
            help:
                "The trace to replay, told by its content: GPX, TCX, KML, GeoJSON, FIT, CSV, an NMEA log or a gpsd JSON capture; - reads standard input."
        )
        var trace: String

        @OptionGroup(title: "App, authorization and accuracy") var app: AppOptions

        @Option(
            help: ArgumentHelp(
                "max (virtual time, no waiting) or a factor of real time from 0.001 to 1000000, such as 1 or 20 (default: max when standard output is not a terminal, else 1).",
                valueName: "rate"))
        var rate: String?

        @Option(help: ArgumentHelp("Metres per second for untimed traces (default 1.4, a walk).", valueName: "m/s"))
        var speed: Double?

        @Option(
            name: .customLong("info-plist"),
            help: ArgumentHelp(
                "The app's own Info.plist: its UIBackgroundModes, location usage descriptions, NSLocationTemporaryUsageDescriptionDictionary and BGTaskSchedulerPermittedIdentifiers replace the scenario's info.",
                valueName: "path"))
        var infoPlist: String?

        @Option(
            help: ArgumentHelp("Fixes at this fixed period, interpolated along the geodesic.", valueName: "duration"))
        var interval: DurationArgument?

        @Option(help: ArgumentHelp("Skip this much of the trace.", valueName: "duration"))
        var startOffset: DurationArgument?

        @Option(help: ArgumentHelp("Play the trace this many times; 'forever' needs --end.", valueName: "n"))
        var loop: String?

        @Option(help: ArgumentHelp("Stop the run at this time.", valueName: "time"))
        var end: DurationArgument?

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp(
                "The output for delivered locations (default: what -o's extension names, else text; gpx writes GPX 1.1 as locations are delivered)."
            ))
        var format: OutputFormat?

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp("Write the delivered locations here (atomically).", valueName: "file"))
        var output: String?

        @Option(help: ArgumentHelp("Write the NDJSON audit log here.", valueName: "file"))
        var audit: String?

        @Option(
            name: .customLong("report"),
            help: ArgumentHelp(
                "Write a page of the run here (HTML, self-contained): the path coloured by what happened to each fix, a timeline of the app's state, authorization, accuracy, background work, prompts, wakes and pauses, and the summary; click a point or a moment for its audit events.",
                valueName: "file.html"))
        var reportPath: String?

        @Option(
            help: ArgumentHelp("Where background fetch syncs stored locations (NDJSON, appended).", valueName: "file"))
        var fetchSink: String?

        @Option(
            help: ArgumentHelp(
                "The directory that stands in for the server of the app's background uploads (app.uploadsInBackground): one new upload-N.csv per transfer, numbered past the files already there; nothing existing is overwritten or followed.",
                valueName: "dir"))
        var uploadDir: String?

        @Flag(
            name: .shortAndLong,
            help:
                "Print only the summary (with counts of what was left out) and the chosen output: no log lines, warnings, pace notice or progress. Errors still print."
        )
        var quiet = false

        @OptionGroup var read: ReadOptions

        @OptionGroup(title: "Bad GPS on purpose") var degradation: DegradeOption

        @OptionGroup(title: "GeoJSON for GIS") var geojson: GeoJSONOutputOptions

        @OptionGroup(title: "Session store") var storage: SessionOptions

        package func validate() throws {
            if let uploadDir {
                var info = stat()
                guard stat(uploadDir, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    throw ValidationError("--upload-dir \(uploadDir) is not a directory")
                }
            }
            try geojson.check(
                geojson: (try? OutputFormat.resolve(format, output: output, geojsonAsked: geojson.isGiven)) == .geojson)
            try geojson.checkDelivered()
            if let rate, RateText.parse(rate) == nil {
                throw ValidationError("--rate must be \(RateText.expected)")
            }
            if let speed, !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be above 0 m/s") }
            if let interval, interval.value <= .zero { throw ValidationError("--interval must be longer than 0 s") }
            if let loop, loop != "forever", (Int(loop) ?? 0) < 1 {
                throw ValidationError("--loop must be a number of plays (1 or more) or 'forever'")
            }
            let named: [(option: String, path: String?)] = [
                ("-o", output), ("--audit", audit), ("--fetch-sink", fetchSink), ("--report", reportPath),
            ]
            let outputs = named.compactMap { o in o.path.map { (option: o.option, path: $0) } }
            try OutputSafety.check(
                outputs: outputs,
                protected: OutputSafety.inputs([trace] + (app.scenario.map { [$0] } ?? []))
                    + (storage.noStore ? [] : OutputSafety.store(storage.location.path)))
        }

        package func run() async throws { try await run(makeApp: nil) }

        /// Replays into the app `makeApp` makes at every launch (nil: the tutorial app the
        /// scenario describes), on the caller's isolation (the main actor, for a UIKit app).
        package func run(
            makeApp: (() -> any SimulatedApp)?, isolation: isolated (any Actor)? = #isolation
        ) async throws {
            do {
                try await replay(makeApp: makeApp)
            } catch let error as ExitCode {
                throw error
            } catch let error as ValidationError {
                printError("waymark replay: \(error.message)")
                throw ExitCode(ExitStatus.usage)
            } catch let error as ScenarioFileError {
                printError("waymark: \(error)")
                printError("hint: docs/scenarios.md lists every key, with an example per feature")
                throw ExitCode(error.cannotOpen ? ExitStatus.noInput : ExitStatus.dataError)
            } catch let error as InfoPlistError {
                printError("waymark: \(error)")
                throw ExitCode(ExitStatus.dataError)
            } catch let error as ReplaySchedule.ScheduleError {
                printError("waymark: \(trace): \(error)")
                throw ExitCode(ExitStatus.dataError)
            } catch {
                throw sysexit(for: error)
            }
        }

        private func replay(
            makeApp: (() -> any SimulatedApp)?, isolation: isolated (any Actor)? = #isolation
        ) async throws {
            let file = try app.scenario.map { try ScenarioFile.load(path: $0) }
            var scenario = try app.checkedScenario(loading: file)
            if let infoPlist { scenario.info = try AppInfo(contentsOfPropertyList: infoPlist) }
            var settings = file?.1 ?? ReplaySettings()
            if let speed { settings.untimedSpeed = speed }
            if let interval { settings.interval = interval.value }
            if let startOffset { settings.startOffset = startOffset.value }
            if let loop { settings.loops = loop == "forever" ? 0 : Int(loop) }
            if let rate { settings.rate = RateText.parse(rate) }
            if let end { scenario.end = end.value }
            if settings.loops == 0 && scenario.end == nil {
                throw ValidationError("--loop forever needs --end (or 'end' in the scenario)")
            }
            let rateFactor = settings.rate ?? (Terminal.stdoutIsTerminal ? 1 : 0)

            let unshownWarnings = Counter()
            // The trace, streamed: a first pass counts what the rules need (which points play,
            // whether all are timed), the second plays it, so memory stays flat at any length.
            let untimedStart = settings.start ?? Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01T00:00:00Z
            let degrade = try degradation.load() ?? settings.degrade
            if degrade != nil && trace == "-" {
                throw ValidationError(
                    "--degrade reads the trace again for the truth it measures against: give a file, not standard input"
                )
            }
            var streaming = try StreamingReplaySource(
                contentsOf: trace, readOptions: read.valueOptions,
                options: ReplaySchedule.Options(
                    untimedSpeed: settings.untimedSpeed ?? 1.4, interval: settings.interval,
                    startOffset: settings.startOffset ?? .zero, untimedStart: untimedStart),
                loops: settings.loops == 0 ? nil : (settings.loops ?? 1), readers: .withGPSDCaptures,
                warnings: quiet ? { _ in unshownWarnings.increment() } : report, degrade: degrade)
            if streaming.badPointsLeftOut > 0 {
                printError(
                    "\(trace): --lenient left out \(streaming.badPointsLeftOut) bad point(s)"
                        + (quiet ? "" : "; see the warnings above"))
            }
            guard let first = try streaming.peekFix() else {
                printError(
                    "waymark: \(trace): nothing to replay (no track, route or waypoint points after the start offset)")
                throw ExitCode(ExitStatus.dataError)
            }
            if unshownWarnings.value > 0 {
                printError("\(trace): \(unshownWarnings.value) warning(s) not shown (--quiet)")
            }
            if streaming.totalDroppedPoints > 0 {
                printError("\(trace): left out \(streaming.totalDroppedPoints) point(s) whose time goes backwards")
            }
            let epoch = first.location.timestamp.addingTimeInterval(-first.offset.inSeconds)

            // The simulation and who watches it.
            let simulation =
                makeApp.map { Simulation(scenario: scenario, epoch: epoch, makeApp: $0) }
                ?? Simulation(scenario: scenario, epoch: epoch)
            let paced = rateFactor > 0
            let session = try storage.begin(
                kind: .replay, source: trace, scenarioPath: app.scenario, epoch: epoch,
                mode: paced ? .durable : .batched(8192))
            let forwarding = ForwardingRun.start(session, to: try storage.forwardTarget(), quiet: quiet)
            let format = try OutputFormat.resolve(self.format, output: output, geojsonAsked: geojson.isGiven)
            let liveGPX = try OutputFormat.liveGPX(
                format: format, output: output, gpx: nil, name: "Waymark replay of \(trace)")
            let outputs = try RunOutputs(
                simulation: simulation, format: format, output: output, audit: audit, quiet: quiet, live: paced,
                session: session, liveGPX: liveGPX, geojson: geojson.options(writingTo: output),
                report: reportPath.map {
                    (
                        $0,
                        "Waymark replay of \(trace)" + (app.scenario.map { " with \($0)" } ?? "")
                            + (storage.label.map { " — “\($0)”" } ?? "")
                    )
                })
            if let fetchSink { simulation.tutorialApp?.fetchSink = try AppendingFileSink(path: fetchSink) }
            simulation.uploadDirectory = uploadDir

            // Ctrl-C, SIGTERM or a failing store stop the run after the fix it is handling; it
            // then finishes normally (the audit log and the outputs complete).
            let stop = RunStop()
            outputs.onRecordingFailure = { _ in stop.request() }
            let signals = handleStopSignals { stop.request() }
            defer { for s in signals { s.cancel() } }

            // A person at a terminal learns the pace and how to skip it, and sees the run go.
            var status: StatusLine?
            if paced && !quiet && Terminal.showsTerminalUI {
                let span = try expectedSpan(settings: settings, end: scenario.end, untimedStart: untimedStart)
                printError(PaceNotice.text(rate: rateFactor, span: span, stored: !storage.noStore))
                let line = StatusLine()
                outputs.console.beforeLogLine = { line.clear() }
                simulation.addObserver(ReplayProgress(status: line, total: span))
                status = line
            }

            let delivered = degrade.map { _ in DeliveredPositions() }
            if let delivered { simulation.addObserver(delivered) }
            let summary: RunSummary
            if paced {
                summary = try await simulation.run(
                    streaming, clock: ContinuousClock(), rate: rateFactor, stoppingOn: stop)
            } else {
                summary = try await simulation.run(streaming, stoppingOn: stop)
            }
            status?.clear()

            try outputs.finish(
                simulation: simulation, featureName: "delivered locations",
                summary: SummaryText.render(summary, simulation: simulation, trace: trace, rate: rateFactor)
                    + (try degrade.flatMap { d in
                        try delivered?.report(against: trace, profile: d.profile, seed: d.seed, read: read)
                    } ?? ""),
                outcome: stop.isRequested ? .stopped : .completed, endedAt: Date())
            await forwarding?.finish()
        }
    }
}

extension WaymarkCommand.Replay {
    /// The trace time the run will take: `end` when the trace is longer (or loops for ever),
    /// else the last event's offset, read in a pass of its own (a paced run reads the trace
    /// twice more, which is quick beside the run itself); nil for standard input, which cannot
    /// be read again.
    func expectedSpan(settings: ReplaySettings, end: Duration?, untimedStart: Date) throws -> Duration? {
        if settings.loops == 0 { return end }
        guard trace != "-" else { return end }
        var probe = try StreamingReplaySource(
            contentsOf: trace, readOptions: read.valueOptions,
            options: ReplaySchedule.Options(
                untimedSpeed: settings.untimedSpeed ?? 1.4, interval: settings.interval,
                startOffset: settings.startOffset ?? .zero, untimedStart: untimedStart),
            loops: settings.loops ?? 1, readers: .withGPSDCaptures, degrade: try degradation.load() ?? settings.degrade)
        var last = Duration.zero
        while let event = try probe.nextEvent() {
            last = event.offset
            if let end, last >= end { return end }
        }
        return last
    }
}

/// The line a paced replay on a terminal starts with.
enum PaceNotice {
    /// `waymark: replaying in real time: about 10m (10m of trace time); --rate max replays it at
    /// once`, or at a factor, `… at 20× real time: about 30s …`.
    static func text(rate: Double, span: Duration?, stored: Bool = true) -> String {
        let pace = rate == 1 ? "in real time" : "at \(ValueFormatting.fixed(rate, decimals: 3))× real time"
        var text = "waymark: replaying \(pace): "
        if let span {
            let wall = Duration.saturating(seconds: (span.inSeconds / rate).rounded(.up))
            text += "this takes about \(DurationText.format(wall))"
            if rate != 1 { text += " (\(DurationText.format(span)) of trace time)" }
        } else {
            text += "this takes as long as the trace lasts"
        }
        return text + "; --rate max replays it at once (Ctrl-C stops it\(stored ? " and keeps the session" : ""))"
    }
}

/// Appends what background fetch syncs to a file, one NDJSON line per location.
final class AppendingFileSink: FetchSink {
    let path: String

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
        close(fd)
    }

    func sync(_ locations: ArraySlice<StoredLocation>) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
        defer { close(fd) }
        var text = ""
        for l in locations { text += l.ndjson() }
        try text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw OutputError(path: path, message: String(cString: strerror(errno)))
                }
                offset += n
            }
        }
        guard fsync(fd) == 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
    }
}
