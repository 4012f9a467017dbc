import ArgumentParser
import Waymark
import WaymarkPostGIS
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension WaymarkCommand {
    struct Sessions: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, inspect, export and delete the stored sessions.",
            discussion: """
                Every `waymark replay` and `waymark record` is stored as a session: its settings \
                and scenario, every location the app received (with the app's state and the \
                delivery decision) and its audit events. The store is one SQLite file \
                ($XDG_DATA_HOME/waymark/waymark.sqlite unless --store says otherwise) that the \
                sqlite3 shell can read; docs/store.md describes its tables.

                Examples:
                  waymark sessions list
                  waymark sessions show 3
                  waymark sessions export 3 --format geojson -o walk.geojson
                  waymark sessions export 3 --format audit | jq .event
                  waymark sessions delete 3
                  waymark sessions delete --older-than 30d --dry-run
                  waymark replay walk.gpx --label "commute, iOS 17"
                  waymark sessions list --label "commute, iOS 17"
                  waymark sessions restore --all
                  waymark sessions push --to postgresql://fleet@db.example/waymark
                  waymark sessions list --store postgresql://fleet@db.example/waymark --device van-3 --since 7d
                  waymark sessions list --near 48.2082,16.3738,500 --within 16.2,48.1,16.5,48.3

                --store (or $WAYMARK_STORE) may name a PostgreSQL database with PostGIS instead of \
                a file, postgresql://user@host:5432/database: every command here works on it \
                alike (docs/fleet.md).
                """,
            subcommands: [List.self, Show.self, Export.self, Delete.self, Restore.self, Push.self])
    }
}

extension WaymarkCommand.Sessions {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the sessions, newest first: id, source, label, start, duration, counts.",
            discussion: """
                The table has a LABEL column when a session listed has a label (replay and record \
                --label); --json always has "label" (null when there is none).
                """)

        @OptionGroup var store: StoreOptions

        @Flag(help: "Print a JSON array instead of a table.")
        var json = false

        @Option(help: ArgumentHelp("List only the sessions with exactly this label.", valueName: "text"))
        var label: String?

        @OptionGroup(title: "Fleet queries") var fleet: FleetFilterOptions

        func validate() throws { _ = try fleet.filter(now: Date()) }

        func run() async throws {
            do {
                let filter = try fleet.filter(label: label, now: Date())  // the wall clock, read at the edge
                let sessions: [SessionInfo]
                var local: SessionStore?
                if let address = try store.postgis() {
                    sessions = try await PostGISAccess.with(address) { try await $0.sessions(matching: filter) }
                } else {
                    let db = try store.openExisting()
                    local = db
                    sessions = try db.sessions(matching: filter, badRow: { SessionExport.report($0, in: db) })
                }
                let shownStore = try store.postgis()?.description ?? store.path
                let out = FileSink.standardOutput()
                if json {
                    out.write("[")
                    for (i, s) in sessions.enumerated() {
                        out.write(i == 0 ? "\n  " : ",\n  ")
                        out.write(SessionJSON.object(s))
                    }
                    out.write(sessions.isEmpty ? "]\n" : "\n]\n")
                } else if sessions.isEmpty {
                    out.write(
                        fleet.isGiven
                            ? "No sessions match in \(TerminalText.escaped(shownStore)).\n"
                            : label.map { "No sessions labelled \(SessionJSON.string($0)) in \(shownStore).\n" }
                                ?? "No sessions in \(TerminalText.escaped(shownStore)).\n")
                } else {
                    out.write(SessionTable.render(sessions))
                }
                try out.flush()
                // Sessions an upgrade set aside are not listed, but never without a word.
                if let db = local {
                    let aside = try db.setAside()
                    if !aside.isEmpty { printError(SetAsideText.note(aside, store: store.path)) }
                }
            } catch {
                throw sysexit(for: error)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one session: what ran, how it ended, its counts, settings and scenario.")

        @Argument(help: "The session's id (see `waymark sessions list`).")
        var id: Int64

        @OptionGroup var store: StoreOptions

        @Flag(help: "Print one JSON object.")
        var json = false

        func run() async throws {
            do {
                // A PostGIS session is read through a private copy, with the same code.
                let (db, s, local, scratch) = try await SessionSource.open(id, store: store)
                defer { scratch?.remove() }
                let b = try db.breakdown(of: local)
                var stats = TraceStatistics()
                try SessionExport.forEachEvent(session: local, store: db, name: "") { stats.add($0) }
                let out = FileSink.standardOutput()
                if json {
                    out.write(SessionJSON.object(s, breakdown: b, stats: stats) + "\n")
                } else {
                    out.write(
                        SessionTable.detail(
                            s, breakdown: b, stats: stats, store: try store.postgis()?.description ?? store.path))
                }
                try out.flush()
            } catch {
                throw sysexit(for: error)
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export a session's locations as GeoJSON, GPX or text, or its audit log.",
            discussion: """
                geojson  RFC 7946, one LineString or MultiLineString (a line per segment) with \
                times, app states, reasons and accuracies in coordinateProperties; \
                --geojson-points writes a Point per location instead, with them as properties.
                gpx      GPX 1.1, one track with a segment per segment.
                text     the summary and sketch of `waymark render`.
                ndjson   one delivered location per line.
                audit    the audit log, one event per line, as `replay --audit` writes it.
                html     a self-contained page of the run, as `replay --report` writes it: the \
                path coloured by what happened to each fix (delivered in the foreground or the \
                background, held and delivered later, dropped and why), a timeline of the app's \
                state, authorization, accuracy, background work, prompts, wakes, pauses and gpsd \
                outages, and the summary; click a point or a moment for its audit events.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case geojson, gpx, text, ndjson, audit, html
        }

        @Argument(help: "The session's id; several ids export those sessions together (GeoJSON or GPX).")
        var ids: [Int64] = []

        /// The one session of a single export.
        var id: Int64 { ids.first ?? 0 }

        @Flag(help: "Export every session (or every one the fleet options below select) together.")
        var all = false

        @Option(
            help: ArgumentHelp(
                "With several sessions, GeoJSON: a feature per session (default) or per segment.",
                valueName: "session|segment"
            ))
        var per: ExportUnit = .session

        enum ExportUnit: String, ExpressibleByArgument, CaseIterable {
            case session, segment
        }

        @OptionGroup(title: "Fleet queries (several sessions)") var fleet: FleetFilterOptions

        /// Whether this export writes several sessions into one file.
        var isMany: Bool { ids.count > 1 || all || fleet.isGiven }

        @Option(
            name: [.customShort("f"), .customLong("format")],
            help: ArgumentHelp(
                "Output format (default: what -o's extension names: .geojson or .json, .gpx, .txt, .ndjson, .html; else geojson).",
                valueName: "format"))
        var formatOption: Format?

        /// `--format`, else what `-o`'s extension names, else GeoJSON.
        var format: Format { formatOption ?? output.flatMap { Self.format(named: $0) } ?? .geojson }

        /// The format an output file's extension names (`.ndjson` is the locations; the audit
        /// log, NDJSON too, is asked for with --format audit).
        static func format(named path: String) -> Format? {
            switch NamedFormat.named(by: path) {
            case .geojson: .geojson
            case .gpx: .gpx
            case .text: .text
            case .ndjson: .ndjson
            case .html: .html
            case .svg, nil: nil
            }
        }

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp("Write here (atomically) instead of standard output.", valueName: "file"))
        var output: String?

        @OptionGroup(title: "GeoJSON for GIS") var geojson: GeoJSONOutputOptions

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if ids.isEmpty && !all && !fleet.isGiven {
                throw ValidationError(
                    "give a session's id, several ids, or --all (with --device, --since, --near… to choose)")
            }
            if !ids.isEmpty && (all || fleet.isGiven) {
                throw ValidationError("give ids or --all and the fleet options, not both")
            }
            if fleet.isGiven && !all && ids.isEmpty { _ = try fleet.filter(now: Date()) }
            if isMany {
                guard format == .geojson || format == .gpx else {
                    throw ValidationError(
                        "several sessions export as GeoJSON or GPX; --format \(format.rawValue) takes one session")
                }
                if geojson.isGiven {
                    throw ValidationError(
                        "the GeoJSON options for GIS go with one session; several sessions are written as features with their attributes"
                    )
                }
            } else if per != .session {
                throw ValidationError("--per segment goes with several sessions (ids, --all or the fleet options)")
            }
            // What -o is (the store) first: it says more than what its name says.
            try OutputSafety.check(
                outputs: output.map { [("-o", $0)] } ?? [], protected: OutputSafety.store(store.path))
            let writes =
                "GeoJSON (.geojson, .json, .geojsons), GPX (.gpx), text (.txt), NDJSON (.ndjson) or HTML (.html)"
            try OutputName.refuseUnknown(output, formatGiven: formatOption != nil, writes: writes)
            if let output, output != "-", let named = NamedFormat.named(by: output) {
                guard let wanted = Self.format(named: output) else {
                    throw ValidationError("-o \(output): sessions export writes \(writes), not \(named.rawValue)")
                }
                if let formatOption, formatOption != wanted, !(formatOption == .audit && wanted == .ndjson) {
                    throw ValidationError(
                        "--format \(formatOption.rawValue) and -o \(output) disagree: the file's name says \(wanted.rawValue); change one"
                    )
                }
            }
            try geojson.check(geojson: format == .geojson)
            try geojson.checkDelivered()
        }

        func run() async throws {
            if isMany {
                do {
                    try await exportMany()
                } catch {
                    throw sysexit(for: error)
                }
                return
            }
            do {
                let (db, session, local, scratch) = try await SessionSource.open(id, store: store)
                defer { scratch?.remove() }
                let uncommitted = UncommittedOutputs()
                defer { uncommitted.finish() }
                let sink = try openOutput(output)
                uncommitted.add(sink)
                try SessionExport.write(
                    session: session, localID: local, from: db, format: format,
                    geojson: geojson.options(writingTo: output), to: sink,
                    textWidth: Terminal.width,
                    color: (output == nil || output == "-") && Terminal.wantsColor)
                try sink.commit()
            } catch {
                throw sysexit(for: error)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a session, or every session older than an age, with its locations and events.",
            discussion: """
                --older-than AGE deletes the sessions that began more than AGE ago (by the wall \
                clock: the STARTED column of `sessions list`), a number and a unit: s, m (minutes), \
                h, d or w, such as 30d, 12h or 2w. A recording still running is kept. It says how \
                many sessions it deleted, and which; --dry-run lists them (as `sessions list` \
                does) and deletes nothing.

                Examples:
                  waymark sessions delete 3
                  waymark sessions delete --older-than 30d --dry-run
                  waymark sessions delete --older-than 2w
                """)

        @Argument(help: "The session's id.")
        var id: Int64?

        @Option(
            help: ArgumentHelp(
                "Delete every session that began more than this long ago: a number and s, m, h, d or w (30d).",
                valueName: "age"))
        var olderThan: String?

        @Flag(help: "With --older-than: list what would be deleted, and delete nothing.")
        var dryRun = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if (id == nil) == (olderThan == nil) {
                throw ValidationError("give a session's id or --older-than AGE (not both)")
            }
            if let olderThan, AgeText.parse(olderThan) == nil {
                throw ValidationError(
                    "--older-than '\(olderThan)' is not an age: give a number and a unit, s, m (minutes), h, d or w, such as 30d or 12h"
                )
            }
            if dryRun && olderThan == nil { throw ValidationError("--dry-run goes with --older-than") }
        }

        func run() async throws {
            if let olderThan, let age = AgeText.parse(olderThan) {
                try await deleteOlder(than: age, named: olderThan, now: Date())  // the wall clock, read at the edge
                return
            }
            guard let id else { return }
            do {
                if let address = try store.postgis() {
                    let sessions = try await PostGISAccess.with(address) {
                        try await $0.sessions(matching: SessionFilter(ids: [id]))
                    }
                    guard let session = sessions.first else {
                        throw StoreError(
                            .sessionNotFound, path: address.description,
                            message: "has no session \(id); `waymark sessions list --store \(address)` shows them")
                    }
                    if session.outcome == .running {
                        printError("waymark: session \(id) is still being forwarded as it records; stop it first")
                        throw ExitCode(ExitStatus.usage)
                    }
                    _ = try await PostGISAccess.with(address) { try await $0.deleteSession(id) }
                    printError(
                        "Deleted session \(id) from \(address) (\(session.locationCount) location(s), "
                            + "\(session.eventCount) event(s)).")
                    return
                }
                let db = try store.openExisting()
                let session = try db.session(id)
                if session.outcome == .running {
                    printError("waymark: session \(id) is still recording (process alive); stop it first")
                    throw ExitCode(ExitStatus.usage)
                }
                try db.deleteSession(id)
                printError(
                    "Deleted session \(id) (\(session.locationCount) location(s), \(session.eventCount) event(s)).")
            } catch let error as ExitCode {
                throw error
            } catch {
                throw sysexit(for: error)
            }
        }

        /// Deletes (or, with --dry-run, lists) the sessions that began before `now` less `age`.
        private func deleteOlder(than age: Duration, named text: String, now: Date) async throws {
            do {
                let cutoff = now.addingTimeInterval(-age.inSeconds)
                let sessions: [SessionInfo]
                if let address = try store.postgis() {
                    let dryRun = self.dryRun
                    sessions = try await PostGISAccess.with(address) { server in
                        try await server.deleteSessions(createdBefore: cutoff, dryRun: dryRun)
                    }
                } else {
                    let db = try store.openExisting()
                    sessions = try db.deleteSessions(createdBefore: cutoff, dryRun: dryRun)
                }
                let before = "began before \(ValueFormatting.iso8601(cutoff).prefix(19))Z"
                let ids = sessions.map { String($0.id) }.joined(separator: ", ")
                let locations = sessions.reduce(0) { $0 + $1.locationCount }
                let events = sessions.reduce(0) { $0 + $1.eventCount }
                if dryRun {
                    if !sessions.isEmpty {
                        let out = FileSink.standardOutput()
                        out.write(SessionTable.render(sessions))
                        try out.flush()
                    }
                    printError(
                        sessions.isEmpty
                            ? "No session is older than \(text) (none \(before)); nothing would be deleted."
                            : "Would delete \(sessions.count) session(s) older than \(text) (\(before)): \(ids); "
                                + "\(locations) location(s), \(events) event(s). Nothing was deleted (--dry-run).")
                } else {
                    printError(
                        sessions.isEmpty
                            ? "No session is older than \(text) (none \(before)); nothing was deleted."
                            : "Deleted \(sessions.count) session(s) older than \(text) (\(before)): \(ids) "
                                + "(\(locations) location(s), \(events) event(s)).")
                }
            } catch {
                throw sysexit(for: error)
            }
        }
    }
}

/// An age, as `sessions delete --older-than` takes it: a whole number and a unit, s, m
/// (minutes), h, d or w, such as `30d`.
enum AgeText {
    static func parse(_ text: String) -> Duration? {
        guard let unit = text.last, let n = Int64(text.dropLast()), n >= 0, !text.dropLast().hasPrefix("+") else {
            return nil
        }
        let seconds: Int64
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        case "d": seconds = 86_400
        case "w": seconds = 604_800
        default: return nil
        }
        let (total, overflow) = n.multipliedReportingOverflow(by: seconds)
        // Beyond about 300 000 years, no session is that old (and Date cannot go back so far).
        guard !overflow, total <= 10_000_000_000_000 else { return nil }
        return .seconds(total)
    }
}

/// Writes a stored session with the same writers as `waymark render`.
enum SessionExport {
    static func write(
        session shown: SessionInfo, localID: Int64? = nil, from store: SessionStore,
        format: WaymarkCommand.Sessions.Export.Format, geojson: GeoJSONOptions = GeoJSONOptions(), to sink: FileSink,
        textWidth: Int, color: Bool
    ) throws {
        // Named by its id in the store asked (`shown`), read by its id in `store` (a private copy
        // of a PostGIS session has another).
        let name = "Waymark session \(shown.id): \(shown.source)"
        var session = shown
        session.id = localID ?? shown.id
        switch format {
        case .geojson where !geojson.isDefault:
            let writer = GeoJSONOptionsWriter(sink: sink, options: geojson)
            let locations = try store.locationSequence(of: session.id)
            try writer.writeDelivered(locations, name: name)
            for bad in locations.badRows { report(bad, in: store) }
            if let failure = locations.failure { throw failure }
            try writer.finish()
        case .geojson:
            let writer = GeoJSONWriter(sink: sink)
            let locations = try store.locationSequence(of: session.id)
            try writer.writeDelivered(locations, name: name)
            for bad in locations.badRows { report(bad, in: store) }
            if let failure = locations.failure { throw failure }
            try writer.finish()
        case .gpx:
            let writer = GPXWriter(sink: sink)
            try forEachEvent(session: session.id, store: store, name: name) { try writer.write($0) }
            try writer.finish()
        case .text:
            let renderer = TextRenderer(
                sink: sink,
                options: TextRenderer.Options(
                    width: textWidth, color: color, pointTable: false, sketch: true, title: name))
            try forEachEvent(session: session.id, store: store, name: name) { try renderer.write($0) }
            try renderer.finish()
        case .ndjson:
            let writer = LocationNDJSONWriter(sink: sink)
            let badRow = { (bad: BadRow) in report(bad, in: store) }
            try store.forEachLocation(of: session.id, badRow: badRow, writer.write)
            try writer.finish()
        case .audit:
            let badRow = { (bad: BadRow) in report(bad, in: store) }
            let writeLine = { (line: String) throws in
                sink.write(line)
                try sink.flushIfNeeded()
            }
            try store.forEachEventLine(of: session.id, badRow: badRow, writeLine)
        case .html:
            let title = name + (session.label.map { " — “\($0)”" } ?? "")
            let writer = SessionReportWriter(
                sink: sink, options: SessionReportWriter.Options(title: title, sourceName: "session \(shown.id)"))
            let badRow = { (bad: BadRow) in report(bad, in: store) }
            try store.forEachEventLine(of: session.id, badRow: badRow) { try writer.add(line: $0) }
            try writer.finish()
        }
        try sink.flush()
    }

    /// The session's locations as GPX reader events.
    static func forEachEvent(session: Int64, store: SessionStore, name: String, _ body: (GPXEvent) throws -> Void)
        throws
    {
        let locations = try store.locationSequence(of: session)
        try locations.forEachGPXEvent(name: name, body)
        for bad in locations.badRows { report(bad, in: store) }
        if let failure = locations.failure { throw failure }
    }

    /// A row of the store left out because it cannot be read as Waymark writes it (from
    /// `sqlite3 .recover`, say): a warning naming the store, the session and the row.
    static func report(_ bad: BadRow, in store: SessionStore) {
        printError("waymark: warning: \(store.path): \(bad)")
    }
}

/// Sessions as text.
enum SessionTable {
    static func render(_ sessions: [SessionInfo]) -> String {
        // A LABEL column after SOURCE, when a session has a label: the counts move one right.
        let labelled = sessions.contains { $0.label != nil }
        // A DEVICE column last, when the sessions listed come from more than one device (a fleet).
        let fleet = Set(sessions.map(\.device)).count > 1
        var rows = [["ID", "KIND", "SOURCE", "STARTED (UTC)", "DURATION", "FIXES", "LOCATIONS", "EVENTS", "OUTCOME"]]
        if labelled { rows[0].insert("LABEL", at: 3) }
        if fleet { rows[0].append("DEVICE") }
        for s in sessions {
            var row = [
                String(s.id), TerminalText.escaped(s.kind), TerminalText.escaped(s.source), started(s),
                s.duration.map(duration) ?? "-", String(s.fixCount), String(s.locationCount), String(s.eventCount),
                s.outcome.rawValue,
            ]
            if labelled { row.insert(s.label.map { TerminalText.escaped($0) } ?? "-", at: 3) }
            if fleet { row.append(s.device.map { TerminalText.escaped($0) } ?? "-") }
            rows.append(row)
        }
        let counts = labelled ? 6...8 : 5...7
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        var text = ""
        for row in rows {
            var line = ""
            for (c, cell) in row.enumerated() {
                let numeric = c == 0 || counts.contains(c)
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                line += (c == 0 ? "" : "  ") + (numeric ? pad + cell : cell + (c == row.count - 1 ? "" : pad))
            }
            text += line + "\n"
        }
        return text
    }

    /// The text of `sessions show`; what came from the store, with control characters shown
    /// escaped (``TerminalText``).
    static func detail(_ s: SessionInfo, breakdown b: SessionBreakdown, stats: TraceStatistics, store: String)
        -> String
    {
        let safe = { (text: String) in TerminalText.escaped(text) }
        var text = "Session \(s.id) in \(safe(store))\n"
        text += "  kind:       \(safe(s.kind))\n"
        text += "  source:     \(safe(s.source))\n"
        if let label = s.label { text += "  label:      \(safe(label))\n" }
        if let device = s.device { text += "  device:     \(safe(device))\n" }
        if let uuid = s.uuid { text += "  uuid:       \(uuid)\n" }
        text += "  started:    \(started(s)) UTC (wall clock)\n"
        text += "  epoch:      \(ValueFormatting.iso8601(s.epoch)) (offset zero)\n"
        if let ended = s.endedAt { text += "  ended:      \(ValueFormatting.iso8601(ended))\n" }
        text += "  duration:   \(s.duration.map(duration) ?? "-")\n"
        text += "  outcome:    \(s.outcome.rawValue)\(s.outcomeDetail.map { " (\(safe($0)))" } ?? "")\n"
        text += "  fixes:      \(s.fixCount)\n"
        text += "  locations:  \(s.locationCount) in \(b.segments) segment(s)\n"
        if !b.byAppState.isEmpty {
            text += "    by app state: " + b.byAppState.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "\n"
            text += "    by reason:    " + b.byReason.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "\n"
        }
        if b.segments > 0 {
            text += "  path:       \(ValueFormatting.fixed(stats.length2D / 1000, decimals: 2)) km"
            if let start = stats.startTime, let end = stats.endTime {
                text += ", fixes from \(ValueFormatting.iso8601(start)) to \(ValueFormatting.iso8601(end))"
            }
            text += "\n"
        }
        text += "  events:     \(s.eventCount)\n"
        if !b.eventsByName.isEmpty {
            text += "    " + b.eventsByName.map { "\(safe($0.0)) \($0.1)" }.joined(separator: ", ") + "\n"
        }
        if !b.sourceEvents.isEmpty {
            text += "  source events (gpsd):\n"
            for e in b.sourceEvents.prefix(SessionBreakdown.sourceEventLimit) {
                let at = DurationText.format(Duration.saturating(seconds: (e.offset * 1000).rounded() / 1000))
                text += "    +\(at)  \(safe(e.action))" + (e.detail.map { ": \(safe($0))" } ?? "") + "\n"
            }
            if b.sourceEvents.count > SessionBreakdown.sourceEventLimit {
                text += "    … more: `waymark sessions export \(s.id) --format audit` has them all\n"
            }
        }
        text += "  settings:   \(safe(s.settings))\n"
        if let scenario = s.scenario {
            text += "  scenario:\n"
            for line in scenario.split(separator: "\n", omittingEmptySubsequences: false) {
                text += "    \(TerminalText.escaped(String(line), keepingLineBreaks: true))\n"
            }
        }
        return text
    }

    static func started(_ s: SessionInfo) -> String {
        String(ValueFormatting.iso8601(s.createdAt).prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    static func duration(_ seconds: Double) -> String {
        DurationText.format(Duration.saturating(seconds: (seconds * 1000).rounded() / 1000))
    }
}

/// Sessions as JSON objects.
enum SessionJSON {
    static func object(_ s: SessionInfo, breakdown: SessionBreakdown? = nil, stats: TraceStatistics? = nil) -> String {
        var fields: [(String, String)] = [
            ("id", String(s.id)), ("kind", string(s.kind)), ("source", string(s.source)),
            ("label", s.label.map(string) ?? "null"),
            ("device", s.device.map(string) ?? "null"), ("uuid", s.uuid.map(string) ?? "null"),
            ("started", string(ValueFormatting.iso8601(s.createdAt))),
            ("epoch", string(ValueFormatting.iso8601(s.epoch))),
            ("ended", s.endedAt.map { string(ValueFormatting.iso8601($0)) } ?? "null"),
            ("duration", s.duration.map { ValueFormatting.fixed($0, decimals: 3) } ?? "null"),
            ("outcome", string(s.outcome.rawValue)), ("outcomeDetail", s.outcomeDetail.map(string) ?? "null"),
            ("fixCount", String(s.fixCount)), ("locationCount", String(s.locationCount)),
            ("eventCount", String(s.eventCount)),
        ]
        if let b = breakdown {
            fields.append(("segmentCount", String(b.segments)))
            fields.append(("locationsByAppState", counts(b.byAppState)))
            fields.append(("locationsByReason", counts(b.byReason)))
            fields.append(("eventsByName", counts(b.eventsByName)))
            fields.append(
                (
                    "sourceEvents",
                    "["
                        + b.sourceEvents.prefix(SessionBreakdown.sourceEventLimit).map { e in
                            "{\"offset\":\(ValueFormatting.fixed(e.offset, decimals: 3)),\"action\":\(string(e.action))"
                                + (e.detail.map { ",\"detail\":\(string($0))" } ?? "") + "}"
                        }.joined(separator: ",") + "]"
                ))
            if let stats {
                fields.append(("length2D", ValueFormatting.fixed(stats.length2D, decimals: 3)))
                fields.append(("firstFixTime", stats.startTime.map { string(ValueFormatting.iso8601($0)) } ?? "null"))
                fields.append(("lastFixTime", stats.endTime.map { string(ValueFormatting.iso8601($0)) } ?? "null"))
            }
            fields.append(("settings", s.settings))
            fields.append(("scenario", s.scenario.map(string) ?? "null"))
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    private static func counts(_ pairs: [(String, Int)]) -> String {
        "{" + pairs.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func string(_ s: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = try? encoder.encode(s)
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// The session a command reads, from either store.
enum SessionSource {
    /// The store to read session `id` from, the session as the store asked shows it, its id
    /// in the store returned, and the private copy to remove afterwards (a PostGIS session).
    static func open(_ id: Int64, store: StoreOptions) async throws -> (
        SessionStore, SessionInfo, Int64, PostGISAccess.Scratch?
    ) {
        if let address = try store.postgis() {
            let scratch = try PostGISAccess.Scratch()
            do {
                let copy = scratch.store
                let (session, local) = try await PostGISAccess.with(address) { server -> (SessionInfo, Int64) in
                    guard let session = try await server.sessions(matching: SessionFilter(ids: [id])).first else {
                        throw StoreError(
                            .sessionNotFound, path: address.description,
                            message: "has no session \(id); `waymark sessions list --store \(address)` shows them")
                    }
                    return (session, try await server.copySession(id, into: copy))
                }
                return (copy, session, local, scratch)
            } catch {
                scratch.remove()
                throw error
            }
        }
        let db = try store.openExisting()
        return (db, try db.session(id), id, nil)
    }
}
