// waymark-bench replay: fixes per second through the simulated app in virtual time (source,
// policy, filters and lifecycle; without storage; then with the audit log written), on a 24-hour
// 1 Hz trace; and gpsfake pushing fixes through gpsd, measured in the same run, for comparison.

import Foundation
import GPXLayouts
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

/// Counts launches and wakes by cause, and service events.
final class WakeCounter: SimulationObserver {
    var counts: [String: Int] = [:]
    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        switch event.kind {
        case .stateChanged(let from, .background, let cause) where from == .notRunning || from == .suspended:
            counts["wakes by \(cause)", default: 0] += 1
        case .region(let action, _, _, _, _) where action == .entered || action == .exited:
            counts["region events", default: 0] += 1
        case .visit(let action, _, _, _) where action == .arrival || action == .departure:
            counts["visit events", default: 0] += 1
        case .serviceLocation(let r) where r.action == .delivered:
            counts["significant changes delivered", default: 0] += 1
        default: break
        }
    }
}

enum ReplayBench {
    static func run(arguments: [String]) async throws {
        var hours = 24
        var dir = "bench-out"
        var peerFixes = 20_000
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--hours": hours = Int(args.next() ?? "") ?? hours
            case "--dir": dir = args.next() ?? dir
            case "--peer-fixes": peerFixes = Int(args.next() ?? "") ?? peerFixes
            default:
                print("usage: waymark-bench replay [--hours 24] [--dir bench-out] [--peer-fixes 20000]")
                exit(a == "-h" || a == "--help" ? 0 : 64)
            }
        }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = "\(dir)/replay-\(hours)h-1hz.gpx"
        if !FileManager.default.fileExists(atPath: path) {
            FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
            try generateDay(path: path, seconds: hours * 3600)
        }

        print("waymark-bench replay: a \(hours)-hour 1 Hz trace through the simulated app, in virtual time")
        let clock = ContinuousClock()
        var start = clock.now
        let document = try GPXDocument(reader: GPXReader(contentsOf: path))
        let schedule = try ReplaySchedule(document: document, file: path)
        let layout = seconds(clock.now - start)
        let fixes = schedule.fixes.count
        print(
            String(
                format: "trace: %d fixes, read and laid out (speed and course derived) in %.3f s (%.0f fixes/s)",
                fixes, layout, Double(fixes) / layout))

        var rows: [(String, Double)] = []
        for (name, scenario) in [
            ("foreground, best accuracy", Scenario()), ("busy lifecycle", busyScenario(hours)),
            ("20 regions, significant changes, visits", servicesScenario(hours)),
        ] {
            var best = Double.infinity
            for _ in 0..<3 {
                let simulation = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 0))
                start = clock.now
                try await simulation.run(GPXReplaySource(schedule: schedule, name: path))
                best = min(best, seconds(clock.now - start))
            }
            rows.append(("\(name), no audit", Double(fixes) / best))
            let auditPath = "\(dir)/replay-audit.ndjson"
            let simulation = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 0))
            let audit = AuditLogWriter(sink: try FileSink(atomicPath: auditPath), epoch: simulation.epoch)
            simulation.addObserver(audit)
            start = clock.now
            try await simulation.run(GPXReplaySource(schedule: schedule, name: path))
            try audit.finish()
            let elapsed = seconds(clock.now - start)
            let size = (try? FileManager.default.attributesOfItem(atPath: auditPath)[.size] as? Int) ?? 0
            rows.append(("\(name), audit log written (\(size >> 20) MiB)", Double(fixes) / elapsed))
            try? FileManager.default.removeItem(atPath: auditPath)
            if name.hasPrefix("20 regions") {
                // What the services did, so that the row is not a run where nothing happens.
                let counter = WakeCounter()
                let check = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 0))
                check.addObserver(counter)
                try await check.run(GPXReplaySource(schedule: schedule, name: path))
                print(
                    "services run: "
                        + counter.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
                            separator: ", "))
            }
        }

        let peer = try gpsfakeRate(fixes: peerFixes, dir: dir)
        print("")
        print("\(column("run", 58))  \(column("fixes/s", 12))  vs gpsfake")
        for (name, rate) in rows {
            let ratio = peer.map { String(format: "%.0f×", rate / $0) } ?? "–"
            print("\(column(name, 58))  \(column(String(format: "%.0f", rate), 12))  \(ratio)")
        }
        if let peer {
            print(
                "\(column("gpsfake → gpsd → gpspipe (\(peerFixes) fixes, as fast as it goes)", 58))  "
                    + "\(column(String(format: "%.0f", peer), 12))")
        } else {
            print("gpsfake: not installed (apt-get install gpsd gpsd-clients); no ratio")
        }
        print("target: ≥ 1 000 000 fixes/s without storage")
    }

    /// An app that goes to the background and back every two hours, with a background session,
    /// a distance filter, auto-pause and background fetch.
    static func busyScenario(_ hours: Int) -> Scenario {
        var s = Scenario()
        s.info.backgroundModes = [.location, .fetch]
        s.manager.allowsBackgroundLocationUpdates = true
        s.manager.distanceFilter = 2
        s.manager.activityType = .fitness
        s.app.beginsBackgroundTask = true
        s.app.fetchInterval = .every(.seconds(900))
        for hour in stride(from: 1, to: hours, by: 2) {
            s.timeline.append(.init(at: .seconds(hour * 3600), .background))
            s.timeline.append(.init(at: .seconds(hour * 3600 + 3600), .foreground))
        }
        return s
    }

    /// An Always app that monitors 20 regions along and around the day's route, significant
    /// changes and visits, and is swiped away and relaunched by them all day.
    static func servicesScenario(_ hours: Int) -> Scenario {
        var s = Scenario()
        s.device.authorization = .authorizedAlways
        s.app.monitorsSignificantChanges = true
        s.app.monitorsVisits = true
        let home = Coordinate(latitude: 48.137, longitude: 11.575)
        for i in 0..<20 {
            let bearing = Double(i) * 18
            let distance = 500 + 400 * Double(i)
            let center = Geodesic.destination(from: home, bearing: bearing, distance: distance)
            let radius = 150 + 50 * Double(i % 5)
            s.app.regions.append(CircularRegion(center: center, radius: radius, identifier: "r\(i)"))
        }
        for hour in stride(from: 1, to: hours, by: 3) {
            s.timeline.append(.init(at: .seconds(hour * 3600), .terminate))
        }
        return s
    }

    /// A day's walk and ride: 1 Hz, speeds changing every few minutes, with stops.
    static func generateDay(path: String, seconds: Int) throws {
        guard let file = fopen(path, "w") else { throw POSIXError(.EIO) }
        defer { fclose(file) }
        fputs(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"waymark-bench\" "
                + "xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><trkseg>\n", file)
        var rng = SplitMix64(seed: 7)
        var lat = 48.137
        var lon = 11.575
        var heading = 0.0
        var speed = 1.4
        for t in 0..<seconds {
            if t % 240 == 0 {
                let r = rng.unit()
                speed = r < 0.2 ? 0 : (r < 0.7 ? 1.4 : 5 + 5 * rng.unit())
                heading = rng.unit() * 2 * .pi
            }
            lat += speed * cos(heading) / 111_195
            lon += speed * sin(heading) / (111_195 * cos(lat * .pi / 180))
            let line = String(
                format: "<trkpt lat=\"%.7f\" lon=\"%.7f\"><ele>%.1f</ele><time>%@</time></trkpt>\n", lat, lon,
                520 + 10 * sin(Double(t) / 600), iso(1_714_550_400 + t))
            fputs(line, file)
        }
        fputs("</trkseg></trk>\n</gpx>\n", file)
    }

    /// Fixes per second that gpsfake pushes through a private gpsd to gpspipe: the time from the
    /// first TPV to the last, as gpspipe stamps them. Nil when gpsd is not installed.
    static func gpsfakeRate(fixes: Int, dir: String) throws -> Double? {
        guard available("gpsfake"), available("gpspipe") else { return nil }
        let log = "\(dir)/replay-peer.nmea"
        var text = ""
        for i in 0..<fixes {
            let t = 8 * 3600 + i
            let hhmmss = String(format: "%02d%02d%02d.00", t / 3600 % 24, t / 60 % 60, t % 60)
            let minutes = 8.22 + Double(i % 1000) * 0.00001
            text += nmea(
                "GPGGA,\(hhmmss),4808.\(String(format: "%05.0f", minutes * 1000)),N,01134.5000,E,1,08,0.9,520.0,M,47.0,M,,"
            )
            text += nmea(
                "GPRMC,\(hhmmss),A,4808.\(String(format: "%05.0f", minutes * 1000)),N,01134.5000,E,2.7,90.0,010524,,,A")
        }
        try text.write(toFile: log, atomically: true, encoding: .utf8)
        let port = 39_000 + Int(getpid() % 1000)
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        chmod(temp, 0o777)
        chmod(log, 0o644)
        defer {
            if ProcessInfo.processInfo.environment["WAYMARK_BENCH_KEEP"] == nil {
                try? FileManager.default.removeItem(atPath: temp)
            }
        }
        let absoluteLog = URL(fileURLWithPath: log).standardizedFileURL.path
        var fake = ["env", "TMPDIR=\(temp)", "gpsfake", "-1", "-q", "-p", "-c", "0", "-P", "\(port)", absoluteLog]
        if getuid() == 0 { fake = ["runuser", "-u", "nobody", "--"] + fake }
        let gpsfake = try spawn(fake, output: "/dev/null")
        defer { kill(gpsfake, SIGKILL) }
        for _ in 0..<250 {  // until gpsd listens (0.25–0.9 s)
            if canConnect(port: port) { break }
            usleep(20_000)
        }
        let captured = "\(temp)/gpspipe.out"
        let gpspipe = try spawn(["gpspipe", "-w", "-u", "localhost:\(port)"], output: captured)
        // gpsfake -1 exits at the end of the log; give gpspipe two seconds to drain, then stop it.
        var status: Int32 = 0
        waitpid(gpsfake, &status, 0)
        usleep(2_000_000)
        kill(gpspipe, SIGTERM)
        waitpid(gpspipe, &status, 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: captured))
        var stamps: [Double] = []
        // gpspipe -u stamps each line "YYYY-MM-DD hh:mm:ss.ffffff: ".
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        where line.contains("\"TPV\"") {
            let clock = line.dropFirst(11).prefix(15).split(separator: ":")
            guard clock.count == 3, let h = Double(clock[0]), let m = Double(clock[1]), let s = Double(clock[2])
            else { continue }
            stamps.append(h * 3600 + m * 60 + s)
        }
        guard stamps.count > 1, let first = stamps.first, let last = stamps.last, last > first else { return nil }
        return Double(stamps.count - 1) / (last - first)
    }

    /// Starts `argv` with standard output to `output`, standard input and error to /dev/null, and
    /// every signal unblocked and at its default (the caller may be a thread that blocks some).
    static func spawn(_ argv: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, argv[0], &actions, &attributes, &cArgs, environ) == 0 else {
            throw POSIXError(.ENOENT)
        }
        return pid
    }

    static func nmea(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return "$\(body)*\(String(format: "%02X", sum))\r\n"
    }

    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
