import ArgumentParser
import Dispatch
import Waymark
import WaymarkGPSD
import WaymarkScenarioFile

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

extension WaymarkCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a trace as a live receiver behind gpsd: any gpsd client can use it.",
            discussion: """
                Waymark speaks gpsd's JSON protocol (as gpsd 3.22 does, protocol 3.14) on a TCP \
                port, with the trace as its one device: gpspipe, cgps, gpxlogger, a libgps or \
                gpsd-py program, or `waymark record --gpsd`, take its fixes as if a receiver sent \
                them. A GPX file plays on its own times; an untimed track or a route plays at \
                --speed, as replay lays it out; an NMEA log plays epoch by epoch.

                Each fix goes out as a TPV report, with the trace's own times (--now moves them \
                to the present), and a SKY report when the trace has DOPs or satellites (an \
                NMEA log's GSV, listed as gpsd lists them), to clients that ask for JSON \
                (?WATCH={"enable":true,"json":true}). While the trace \
                has no fix (an NMEA epoch without one, a break between segments, a gap in \
                time), TPVs with mode 1 go out at the receiver's rate, so that a client's "no \
                fix" path can be tested. Clients that ask for NMEA or raw data (gpspipe -r) get \
                an NMEA log's own sentences, as gpsfake sends them, and for other traces (or \
                with --now) GGA, GSA and RMC sentences made from the fix. VERSION, DEVICES, DEVICE, WATCH and \
                POLL are answered, malformed requests get gpsd's ERROR replies.

                The trace starts when the first client enables watching; clients that come later \
                join it where it is. --rate 1 plays in real time, --rate N N times faster, \
                --rate max as fast as the fastest client reads, and --rate step only as far as \
                standard input says: each line is a number of epochs to let out (for tests of \
                gpsd clients that must not depend on time). A slow client never holds the \
                others back: it falls behind on its own, and one that falls more than --queue \
                epochs behind skips ahead (the log says how many it missed when it leaves). \
                Without --loop the server closes every connection once the trace has ended and \
                been read, and exits 0. Ctrl-C (SIGINT) or SIGTERM stops it at once.

                It listens on 127.0.0.1 only, unless --listen names another address (0.0.0.0 \
                or :: for every interface). It serves at most --max-clients clients (64, as \
                gpsd), fewer if the descriptor limit (ulimit -n) leaves room for fewer, and turns \
                more away; a client that sends no request for --idle-timeout without watching, \
                or reads nothing for that long while watching, is closed. Its log never holds it \
                up: lines that standard error cannot take are dropped and counted, and past 20 \
                client events a second the rest are counted in one line a second. A gpsd \
                already on port 2947 (Debian starts one through gpsd.socket) keeps the port: \
                choose another --port, or stop it.

                Examples:
                  waymark serve walk.gpx --port 2947 & gpspipe -w localhost:2947
                  waymark serve walk.gpx --port 2948 --rate 10 & cgps localhost:2948
                  waymark serve route.gpx --speed 13.9 --loop --port 2948
                  waymark serve drive.nmea --rate max --port 2948 & \\
                    gpxlogger -f copy.gpx localhost:2948
                  waymark serve walk.gpx --port 2948 & waymark record --gpsd localhost:2948
                  (sleep 2; echo 100) | waymark serve walk.gpx --port 2948 --rate step
                """)

        @Argument(
            help:
                "The trace to serve, told by its content: GPX, TCX, KML, GeoJSON, FIT, CSV, an NMEA log or a gpsd capture; - reads standard input."
        )
        var trace: String

        @Option(help: ArgumentHelp("The TCP port to listen on (gpsd's is 2947).", valueName: "port"))
        var port: Int = 2947

        @Option(
            help: ArgumentHelp(
                "The numeric address to listen on, such as ::1, or 0.0.0.0 or :: for every interface.",
                valueName: "address"))
        var listen: String = "127.0.0.1"

        @Option(
            help: ArgumentHelp(
                "1 (real time), a factor of real time such as 10, max (as fast as the fastest client reads), or step (as many epochs as each line of standard input says).",
                valueName: "rate"))
        var rate: String = "1"

        @Flag(help: "Play the trace again and again (times move on by one trace each time).")
        var loop = false

        @Flag(
            help: ArgumentHelp(
                "Move the trace's times to the present (its first fix now, the spacing kept), so that clients that check the time (cgps, chrony) see a live receiver."
            ))
        var now = false

        @Option(help: ArgumentHelp("Metres per second for untimed traces (default 1.4, a walk).", valueName: "m/s"))
        var speed: Double?

        @Option(
            help: ArgumentHelp("Fixes at this fixed period, interpolated along the geodesic.", valueName: "duration"))
        var interval: DurationArgument?

        @Option(
            help: ArgumentHelp(
                "How many epochs a slow client may fall behind before it skips ahead.",
                valueName: "epochs"))
        var queue: Int = 4096

        @Option(help: ArgumentHelp("The most clients served at once (gpsd's default, 64).", valueName: "n"))
        var maxClients: Int = 64

        @Option(
            help: ArgumentHelp(
                "Close a client that sends no request for this long without watching, or reads nothing for this long while watching (default 60s; 0 never).",
                valueName: "duration"))
        var idleTimeout: DurationArgument?

        @OptionGroup var read: ReadOptions

        @OptionGroup(title: "Bad GPS on purpose") var degradation: DegradeOption

        /// `--rate`: how the epochs go out.
        var pacing: GPSDServer.Pacing? {
            if rate == "step" { return .stepped }
            return RateText.parse(rate).map { $0 == 0 ? .fastestReader : .rate($0) }
        }

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
            guard pacing != nil else { throw ValidationError("--rate must be step or \(RateText.expected)") }
            if pacing == .stepped && trace == "-" {
                throw ValidationError(
                    "--rate step reads its steps from standard input: the trace must come from a file, not -")
            }
            guard (1...100_000).contains(maxClients) else {
                throw ValidationError("--max-clients must be from 1 to 100000")
            }
            guard (1...1_000_000).contains(queue) else { throw ValidationError("--queue must be from 1 to 1000000") }
            if let speed, !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be above 0 m/s") }
            if let interval, interval.value <= .zero { throw ValidationError("--interval must be longer than 0 s") }
        }

        func run() async throws {
            // Everything serve says goes through a log that never blocks it (a pipe nobody
            // reads must not stall its clients, nor keep SIGTERM from ending it).
            let log = BackgroundLog()
            defer { log.flush(within: .seconds(2)) }
            do {
                try await serve(log: log)
            } catch let error as ExitCode {
                throw error
            } catch let error as GPSDServer.ServerError {
                log.post("waymark serve: \(error)")
                log.post(
                    error.inUse
                        ? "hint: another gpsd (or serve) has the port; choose another --port, or stop it (sudo systemctl stop gpsd.socket gpsd)"
                        : "hint: --listen takes a numeric address of this machine, such as 127.0.0.1 or ::1")
                throw ExitCode(ExitStatus.ioError)
            } catch let error as ReplaySchedule.ScheduleError {
                log.post("waymark: \(trace): \(error)")
                throw ExitCode(ExitStatus.dataError)
            } catch {
                log.flush(within: .seconds(2))
                throw sysexit(for: error)
            }
        }

        private func serve(log: BackgroundLog) async throws {
            let pacing = pacing ?? .rate(1)
            let idle = idleTimeout?.value ?? .seconds(60)
            let server = try GPSDServer(
                configuration: GPSDServer.Configuration(
                    address: listen, port: port, pacing: pacing, window: queue, maxClients: maxClients,
                    idleTimeout: idle > .zero ? idle : nil))
            let stopSources = handleStopSignals { server.stop() }
            defer { for s in stopSources { s.cancel() } }
            if pacing == .stepped { Self.readSteps(into: server, log: log) }

            let trace = trace
            let listen = listen
            let readOptions = read.valueOptions
            let options = ReplaySchedule.Options(
                untimedSpeed: speed ?? 1.4, interval: interval?.value,
                untimedStart: Date(timeIntervalSince1970: 946_684_800))  // 2000-01-01T00:00:00Z
            let loops: Int? = loop ? nil : 1
            let moveToNow = now
            let rateText = rate
            let maxClients = maxClients
            let degrade = try degradation.load()
            // The server's loop blocks its thread: it runs on one of Dispatch's, not Swift's pool.
            let summary: GPSDServer.Summary = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    do {
                        var source = try StreamingReplaySource(
                            contentsOf: trace, readOptions: readOptions, options: options, loops: loops,
                            readers: .withGPSDCaptures, warnings: { log.post($0.description) }, degrade: degrade)
                        if source.badPointsLeftOut > 0 {
                            log.post(
                                "\(trace): --lenient left out \(source.badPointsLeftOut) bad point(s); see the warnings above"
                            )
                        }
                        guard let first = try source.peekFix() else {
                            log.post("waymark: \(trace): nothing to serve (no track, route or waypoint points)")
                            throw ExitCode(ExitStatus.dataError)
                        }
                        // --now: the first fix's time becomes the present (whole seconds, so each
                        // time keeps its fraction); read once, at the edge.
                        let shift = moveToNow ? Date().timeIntervalSince(first.location.timestamp).rounded() : 0
                        let activated = first.location.timestamp.addingTimeInterval(shift).addingTimeInterval(
                            -Double(first.offset.components.seconds)
                                - Double(first.offset.components.attoseconds) * 1e-18)
                        let device = GPSDServedDevice(path: trace, activated: activated)
                        var feed = GPSDTraceFeed(source: source, device: device)
                        feed.timeShift = shift
                        // An NMEA log's clients get its own sentences, as from gpsfake, and its
                        // satellites in SKY; with --now, sentences made from the moved fixes (the
                        // log's carry its times).
                        if let raw = try GPSDRawNMEA(path: trace) {
                            feed.rawNMEA = raw
                            feed.passesSentences = !moveToNow
                            if !moveToNow {
                                log.post(
                                    "waymark serve: NMEA clients get the log's own sentences, as gpsfake sends them")
                            }
                        }
                        let host = listen.contains(":") ? "[\(listen)]" : listen
                        log.post(
                            "waymark serve: \(trace) (\(source.pointCount) point(s), \(source.isTimed ? "timed" : "untimed"))"
                                + " as gpsd on \(host):\(server.port), --rate \(rateText)\(loops == nil ? ", looping" : "");"
                                + " it starts when a client watches; Ctrl-C stops")
                        let summary = try server.run(feed: &feed, device: device) {
                            Self.log($0, maxClients: maxClients, into: log)
                        }
                        continuation.resume(returning: summary)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            log.post(
                "waymark serve: \(summary.stopped ? "stopped" : "the trace has ended"); \(summary.epochs) epoch(s) to "
                    + "\(summary.clients) client(s)"
                    + (summary.skipped > 0 ? ", \(summary.skipped) skipped by slow clients" : "")
                    + (summary.rejected > 0 ? "; \(summary.rejected) connection(s) turned away" : ""))
        }

        /// `--rate step`: each line of standard input lets that many epochs out; a line that is
        /// not a number of epochs is reported and ignored. Read on a thread of its own.
        static func readSteps(into server: GPSDServer, log: BackgroundLog) {
            DetachedThread.start {
                var number = 0
                while let line = readLine() {
                    number += 1
                    let text = String(
                        line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
                    if text.isEmpty { continue }
                    guard let epochs = Int(text), epochs > 0 else {
                        log.post(
                            "waymark serve: standard input, line \(number): '\(text)' is not a number of epochs to let out; ignored"
                        )
                        continue
                    }
                    server.release(epochs)
                }
            }
        }

        /// One line per event, but for client events past the server's limit of a second, which
        /// come as one line of counts.
        static func log(_ event: GPSDServer.Event, maxClients: Int, into log: BackgroundLog) {
            switch event {
            case .connected(let client, let peer): log.post("client \(client) (\(peer)): connected")
            case .watching(let client, let policy):
                var what: [String] = []
                if policy.json { what.append("json") }
                if policy.nmea { what.append("nmea") }
                if policy.raw > 0 { what.append("raw") }
                log.post("client \(client): watching (\(what.isEmpty ? "nothing" : what.joined(separator: ", ")))")
            case .started: log.post("the trace starts")
            case .lagging(let client):
                log.post("client \(client): reads too slowly; it falls a whole --queue behind and skips epochs")
            case .closed(let client, let reason, let skipped):
                log.post(
                    "client \(client): closed (\(reason))" + (skipped > 0 ? "; it skipped \(skipped) epoch(s)" : ""))
            case .traceEnded(let epochs): log.post("the trace has ended after \(epochs) epoch(s)")
            case .rejected(let peer, let clients):
                log.post("a client (\(peer)) was turned away: \(clients) client(s) are served, the most there may be")
            case .clientLimit(let clients, let descriptors):
                log.post(
                    "waymark serve: the descriptor limit (ulimit -n \(descriptors)) leaves room for \(clients) client(s), "
                        + "fewer than --max-clients \(maxClients); more are turned away")
            case .descriptorsExhausted(let clients):
                log.post(
                    "waymark serve: out of file descriptors with \(clients) client(s) (ulimit -n); new connections "
                        + "wait until a client leaves")
            case .clientEventsSummarised(let counts, let over):
                var parts: [String] = []
                if counts.connected > 0 { parts.append("\(counts.connected) connected") }
                if counts.watching > 0 { parts.append("\(counts.watching) started watching") }
                if counts.lagging > 0 { parts.append("\(counts.lagging) fell behind") }
                if counts.closed > 0 { parts.append("\(counts.closed) closed") }
                if counts.rejected > 0 { parts.append("\(counts.rejected) turned away") }
                log.post(
                    "clients: \(counts.total) more event(s) in \(DurationText.format(over)), counted, not shown one by one: "
                        + parts.joined(separator: ", "))
            }
        }
    }
}
