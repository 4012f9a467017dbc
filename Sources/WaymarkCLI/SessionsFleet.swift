import ArgumentParser
import Waymark
import WaymarkPostGIS
import WaymarkStore

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fleet's questions of `sessions list` and `sessions export`: whose, when, where.
struct FleetFilterOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("Only the sessions of this device (--device-name of record and replay).", valueName: "name"))
    var device: String?

    @Option(
        help: ArgumentHelp(
            "Only the sessions that began at or after this: 2026-11-01, 2026-11-01T08:00:00Z (UTC unless an offset is given), or an age such as 7d.",
            valueName: "time"))
    var since: String?

    @Option(help: ArgumentHelp("Only the sessions that began before this (as --since).", valueName: "time"))
    var until: String?

    @Option(
        help: ArgumentHelp(
            "Only the sessions that delivered a location within RADIUS metres of LAT,LON (on the WGS 84 ellipsoid).",
            valueName: "lat,lon,radius"))
    var near: String?

    @Option(
        help: ArgumentHelp(
            "Only the sessions that delivered a location inside this box, in degrees: west,south,east,north (west > east crosses the antimeridian).",
            valueName: "bbox"))
    var within: String?

    var isGiven: Bool { device != nil || since != nil || until != nil || near != nil || within != nil }

    /// The filter; `now` is the wall clock read at the edge, for ages.
    func filter(label: String? = nil, now: Date) throws -> SessionFilter {
        var filter = SessionFilter(label: label, device: device)
        if let since { filter.since = try TimeText.parse(since, option: "--since", now: now) }
        if let until { filter.until = try TimeText.parse(until, option: "--until", now: now) }
        if let near {
            let parts = near.split(separator: ",", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
            guard parts.count == 3, let lat = parts[0], let lon = parts[1], let radius = parts[2],
                (-90...90).contains(lat), (-180...180).contains(lon), radius.isFinite, radius >= 0
            else {
                throw ValidationError(
                    "--near '\(near)' is not LAT,LON,RADIUS: a latitude (-90 to 90), a longitude (-180 to 180) and "
                        + "metres, such as 48.2082,16.3738,500")
            }
            filter.near = SessionFilter.Near(latitude: lat, longitude: lon, radius: radius)
        }
        if let within {
            let parts = within.split(separator: ",", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
            guard parts.count == 4, let west = parts[0], let south = parts[1], let east = parts[2],
                let north = parts[3], (-180...180).contains(west), (-180...180).contains(east),
                (-90...90).contains(south), (-90...90).contains(north), south <= north
            else {
                throw ValidationError(
                    "--within '\(within)' is not WEST,SOUTH,EAST,NORTH in degrees (south ≤ north), such as "
                        + "16.2,48.1,16.5,48.3")
            }
            filter.within = SessionFilter.Box(west: west, south: south, east: east, north: north)
        }
        if let since = filter.since, let until = filter.until, until <= since {
            throw ValidationError("--until is not after --since: no session could begin between them")
        }
        return filter
    }
}

/// A time as `--since` and `--until` take it.
enum TimeText {
    static func parse(_ text: String, option: String, now: Date) throws -> Date {
        if let age = AgeText.parse(text) { return now.addingTimeInterval(-age.inSeconds) }
        if let date = iso8601(text) { return date }
        throw ValidationError(
            "\(option) '\(text)' is not a time: give a date (2026-11-01), a date and time (2026-11-01T08:00:00Z, "
                + "UTC unless an offset such as +01:00 is given) or an age (7d, 12h)")
    }

    /// `YYYY-MM-DD`, or that with `THH:MM[:SS[.fraction]]` and `Z` or `±HH:MM` (UTC without).
    static func iso8601(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var n = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                n = n * 10 + Int(b[i] - 48)
            }
            return n
        }
        guard b.count >= 10, let year = number(0, 4), b[4] == UInt8(ascii: "-"), let month = number(5, 2),
            b[7] == UInt8(ascii: "-"), let day = number(8, 2), (1...12).contains(month), day >= 1,
            day <= daysIn(month: month, year: year)
        else { return nil }
        var seconds = Double(ValueParsing.daysFromCivil(year: year, month: month, day: day)) * 86_400
        var i = 10
        if i < b.count {
            guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " "), let hour = number(i + 1, 2),
                b.count > i + 3, b[i + 3] == UInt8(ascii: ":"), let minute = number(i + 4, 2), hour < 24, minute < 60
            else { return nil }
            seconds += Double(hour * 3600 + minute * 60)
            i += 6
            if i < b.count, b[i] == UInt8(ascii: ":") {
                guard let second = number(i + 1, 2), second < 61 else { return nil }
                seconds += Double(second)
                i += 3
                if i < b.count, b[i] == UInt8(ascii: ".") {
                    var scale = 0.1
                    i += 1
                    let start = i
                    while i < b.count, b[i] >= 48, b[i] <= 57 {
                        seconds += Double(b[i] - 48) * scale
                        scale /= 10
                        i += 1
                    }
                    if i == start { return nil }
                }
            }
            if i < b.count {
                if b[i] == UInt8(ascii: "Z"), i + 1 == b.count {
                    i += 1
                } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), let oh = number(i + 1, 2),
                    b.count == i + 6, b[i + 3] == UInt8(ascii: ":"), let om = number(i + 4, 2), oh < 24, om < 60
                {
                    let offset = Double(oh * 3600 + om * 60)
                    seconds += b[i] == UInt8(ascii: "+") ? -offset : offset
                    i += 6
                } else {
                    return nil
                }
            }
        }
        return Date(timeIntervalSince1970: seconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// Reaching a PostGIS store from a command.
enum PostGISAccess {
    /// Opens the store at `address`, runs `body` with it and closes it; errors are the
    /// command's (``sysexit(for:)`` words them).
    static func with<T: Sendable>(
        _ address: PostGISAddress, _ body: @Sendable (PostGISStore) async throws -> T
    ) async throws -> T {
        // A statement that takes two minutes is a link that died without a word. The clock of
        // the command line; the store's logic takes the sleep injected.
        let clock = ContinuousClock()
        let store = try await PostGISStore.open(
            address, deadline: PostGISStore.Deadline(limit: .seconds(120), sleep: { try await clock.sleep(for: $0) }))
        do {
            let value = try await body(store)
            await store.close()
            return value
        } catch {
            await store.close()
            throw error
        }
    }

    /// A private, temporary SQLite store holding PostGIS sessions for a command that reads
    /// them with the SQLite store's code (`sessions show`, `sessions export`): the same output
    /// from either store. Removed by ``remove()``.
    final class Scratch: Sendable {
        let directory: String
        let store: SessionStore

        init() throws {
            let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            var template = Array("\(base)/waymark-postgis-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else {
                throw StoreError(
                    .io, path: base, message: "cannot make a temporary directory: \(String(cString: strerror(errno)))")
            }
            directory = String(cString: made)
            store = try SessionStore(path: directory + "/sessions.sqlite", mode: .create)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }
}

extension WaymarkCommand.Sessions {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forward sessions from the local store to a PostGIS store (store and forward).",
            discussion: """
                Sends each session's rows that the PostGIS store does not have yet, a page per \
                transaction, and notes in the local store how far each session got. It is \
                idempotent: a session is named by its UUID and each row by its sequence number, \
                so a push cut at any moment (the network, the server, Ctrl-C) and run again \
                sends every row exactly once. Sessions already complete there are skipped.

                It shows each session's backlog and progress, and ends with what it sent. With \
                --prune, each session that has ended and whose every row the server counts is \
                then deleted from the local store (docs/fleet.md).

                Examples:
                  waymark sessions push --to postgresql://fleet@db.example:5432/waymark
                  waymark sessions push 12 13 --to postgresql://fleet@db.example/waymark
                  waymark sessions push --to postgresql://fleet@db.example/waymark --dry-run
                  waymark sessions push --to postgresql://fleet@db.example/waymark --prune
                """)

        @Argument(help: "The local sessions to push (default: every one).")
        var ids: [Int64] = []

        @Option(help: ArgumentHelp("The PostGIS store: postgresql://user@host:5432/database.", valueName: "url"))
        var to: String

        @Flag(help: "Show what waits to be sent, and send nothing.")
        var dryRun = false

        @Flag(help: "Delete each ended session from the local store once the server holds all of it.")
        var prune = false

        @Flag(help: "No progress lines; only the summary and errors.")
        var quiet = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            _ = try target()
            // `$WAYMARK_STORE` may name the fleet's database; the local store is then the default file.
            if let given = store.store, PostGISAddress.isAddress(given) {
                throw ValidationError(
                    "--store names the local store to push from (a file); --to names the PostGIS store")
            }
            if dryRun && prune { throw ValidationError("--dry-run sends nothing, so --prune would delete nothing") }
        }

        func target() throws -> PostGISAddress {
            do {
                return try PostGISAddress(to)
            } catch let error as PostGISError {
                throw ValidationError("--to: \(error)")
            }
        }

        func run() async throws {
            do {
                let target = try target()
                let local = try SessionStore(path: store.path, mode: .existing)
                let chosen = ids.isEmpty ? nil : ids
                for id in ids { _ = try local.session(id) }
                let backlog = try Forwarding.backlog(in: local, target: target.description, ids: chosen)
                if dryRun {
                    printError(
                        backlog.sessions == 0
                            ? "Nothing waits: every session is complete at \(target)."
                            : "\(backlog.sessions) session(s) wait for \(target): \(backlog.rows) row(s) "
                                + "(locations and events). Nothing was sent (--dry-run).")
                    return
                }
                if !quiet {
                    printError(
                        "waymark: pushing to \(target): \(backlog.sessions) session(s), \(backlog.rows) row(s) wait")
                }
                let quiet = self.quiet
                let prune = self.prune
                let (report, pruned) = try await PostGISAccess.with(target) { server in
                    let report = try await Forwarding.push(
                        from: local, to: server, ids: chosen, now: { Date() },
                        progress: { event in
                            guard !quiet else { return }
                            switch event {
                            case .session(let id, let uuid, let backlog):
                                printError("  session \(id) (\(uuid)): \(backlog) row(s) to send")
                            case .sent(let id, let rows):
                                printError("  session \(id): \(rows) row(s) acknowledged")
                            }
                        })
                    var pruned: [Int64] = []
                    if prune {
                        let candidates = try local.transferSessions(chosen).filter {
                            $0.outcome != SessionOutcome.running.rawValue
                        }
                        for session in candidates
                        where try await Forwarding.isComplete(session.id, in: local, at: server) {
                            try local.deleteSession(session.id)
                            pruned.append(session.id)
                        }
                    }
                    return (report, pruned)
                }
                printError(
                    "Pushed to \(target): \(report.rowsSent) row(s) sent; \(report.sessions - report.skipped) "
                        + "session(s) looked at, \(report.skipped) already complete there.")
                if prune {
                    printError(
                        pruned.isEmpty
                            ? "Pruned nothing: no ended session is wholly at the server yet."
                            : "Pruned \(pruned.count) session(s) from \(store.path), each counted whole at the server: "
                                + pruned.map(String.init).joined(separator: ", ") + ".")
                }
            } catch {
                throw sysexit(for: error)
            }
        }
    }
}

extension WaymarkCommand.Sessions.Export {
    /// Several sessions in one file: GeoJSON with a feature per session (or per segment) that
    /// carries the session's attributes, or GPX with a track per session.
    func exportMany() async throws {
        let filter = ids.isEmpty ? try fleet.filter(now: Date()) : SessionFilter(ids: ids)
        var sessions: [SessionInfo]
        var local: [Int64: Int64] = [:]
        let db: SessionStore
        var scratch: PostGISAccess.Scratch?
        defer { scratch?.remove() }
        if let address = try store.postgis() {
            let copy = try PostGISAccess.Scratch()
            scratch = copy
            db = copy.store
            let copyStore = copy.store
            (sessions, local) = try await PostGISAccess.with(address) { server -> ([SessionInfo], [Int64: Int64]) in
                let found = try await server.sessions(matching: filter)
                var ids: [Int64: Int64] = [:]
                for s in found { ids[s.id] = try await server.copySession(s.id, into: copyStore) }
                return (found, ids)
            }
        } else {
            let opened = try store.openExisting()
            db = opened
            sessions = try opened.sessions(matching: filter, badRow: { SessionExport.report($0, in: opened) })
            for s in sessions { local[s.id] = s.id }
        }
        let missing = ids.filter { id in !sessions.contains { $0.id == id } }
        if !missing.isEmpty {
            throw StoreError(
                .sessionNotFound, path: try store.postgis()?.description ?? store.path,
                message: "has no session " + missing.map(String.init).joined(separator: ", ")
                    + "; `waymark sessions list` shows them")
        }
        sessions.sort { $0.id < $1.id }
        if sessions.isEmpty { printError("waymark: no session matches; the file has none") }
        let uncommitted = UncommittedOutputs()
        defer { uncommitted.finish() }
        let sink = try openOutput(output)
        uncommitted.add(sink)
        switch format {
        case .gpx:
            let writer = GPXWriter(sink: sink)
            var headerWritten = false
            for s in sessions {
                let locations = try db.locationSequence(of: local[s.id] ?? s.id)
                try locations.forEachGPXEvent(name: "Waymark session \(s.id): \(s.source)") { event in
                    if case .header = event {
                        if headerWritten { return }
                        headerWritten = true
                    }
                    try writer.write(event)
                }
                for bad in locations.badRows { SessionExport.report(bad, in: db) }
                if let failure = locations.failure { throw failure }
            }
            if !headerWritten { try writer.write(.header(GPXHeader(version: "1.1", creator: "Waymark"))) }
            try writer.finish()
        default:
            let writer = GeoJSONWriter(sink: sink)
            for s in sessions {
                let name = "Waymark session \(s.id): \(s.source)"
                let attributes: [(key: String, text: String?, number: Int64?)] = [
                    ("session", nil, s.id), ("uuid", s.uuid, nil), ("device", s.device, nil), ("label", s.label, nil),
                    ("kind", s.kind, nil), ("source", s.source, nil),
                    ("started", ValueFormatting.iso8601(s.createdAt), nil), ("outcome", s.outcome.rawValue, nil),
                ]
                let locations = try db.locationSequence(of: local[s.id] ?? s.id)
                switch per {
                case .session:
                    writer.addNextFeatureProperties(attributes)
                    try writer.writeDelivered(locations, name: name)
                case .segment:
                    var segment: Int?
                    for location in locations {
                        if location.segment != segment {
                            if let segment { try writer.endDelivered(name: "\(name), segment \(segment)") }
                            segment = location.segment
                            writer.addNextFeatureProperties(attributes + [("segment", nil, Int64(location.segment))])
                            writer.beginDelivered()
                        }
                        try writer.addDelivered(location)
                    }
                    if let segment { try writer.endDelivered(name: "\(name), segment \(segment)") }
                }
                for bad in locations.badRows { SessionExport.report(bad, in: db) }
                if let failure = locations.failure { throw failure }
            }
            try writer.finish()
        }
        try sink.commit()
        printError("waymark: exported \(sessions.count) session(s)")
    }
}
