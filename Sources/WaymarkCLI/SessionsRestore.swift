import ArgumentParser
import Waymark
import WaymarkStore

extension WaymarkCommand.Sessions {
    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring back sessions and rows an upgrade of the store set aside.",
            discussion: """
                Bringing a store of an older Waymark up to date checks every row (schema v4); a row \
                that fails (a time that is text, a NULL where a value must be, an unknown outcome) \
                is not lost but set aside in the store's tables rejected_session, rejected_location \
                and rejected_event, out of reach. `sessions list` says what is set aside. This \
                brings a session's row back, each value that fails mended (a time read from its \
                text, or taken from the session's epoch or first location; one that may be empty \
                left empty; an unknown outcome `interrupted`), and says what it changed, which \
                `sessions show` also shows; then the session's location and event rows whose \
                required values pass. Rows that cannot be mended (a location without a latitude) \
                stay set aside.

                Examples:
                  waymark sessions restore 2 3
                  waymark sessions restore --all
                """)

        @Argument(help: "The sessions to bring back (see `waymark sessions list`).")
        var ids: [Int64] = []

        @Flag(help: "Bring back everything that is set aside.")
        var all = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if ids.isEmpty == !all { throw ValidationError("give the sessions' ids or --all (not both)") }
        }

        func run() throws {
            do {
                let db = try store.openExisting()
                if all, try db.setAside().isEmpty {
                    printError("Nothing is set aside in \(store.path).")
                    return
                }
                for r in try db.restoreSetAside(all ? nil : ids) {
                    var text = "Session \(r.id): "
                    text += r.rowRestored ? "brought back" : "its rows brought back"
                    if !r.changes.isEmpty { text += " (" + r.changes.joined(separator: "; ") + ")" }
                    text += "; \(r.locations) location(s) and \(r.events) event(s) in reach"
                    if r.restoredLocations + r.restoredEvents > 0 {
                        text +=
                            ", \(r.restoredLocations) location row(s) and \(r.restoredEvents) event row(s) of them mended"
                    }
                    if r.remainingLocations + r.remainingEvents > 0 {
                        text +=
                            "; \(r.remainingLocations) location row(s) and \(r.remainingEvents) event row(s) cannot be "
                            + "mended and stay set aside"
                        if let problem = r.firstRemainingProblem { text += " (the first: \(problem))" }
                    }
                    printError(text)
                }
            } catch {
                throw sysexit(for: error)
            }
        }
    }
}

/// What an upgrade set aside, in words.
enum SetAsideText {
    /// The sessions, as `session 2 (walk.gpx: created_at is 'yesterday')`.
    static func sessions(_ rows: SetAsideRows) -> String {
        rows.sessions.map { s in
            let what = [s.source].compactMap { $0 } + [s.problems.joined(separator: ", ")].filter { !$0.isEmpty }
            return "session \(s.id)" + (what.isEmpty ? "" : " (" + what.joined(separator: ": ") + ")")
        }.joined(separator: ", ")
    }

    /// The rows of `rejected_location` and `rejected_event`, as `1 location row(s) and 1 event
    /// row(s) (of session 1) in rejected_location and rejected_event`; nil when there are none.
    static func rows(_ rows: SetAsideRows) -> String? {
        let locations = rows.rejectedLocations.values.reduce(0, +)
        let events = rows.rejectedEvents.values.reduce(0, +)
        guard locations + events > 0 else { return nil }
        let owners = Set(rows.rejectedLocations.keys).union(rows.rejectedEvents.keys).sorted().map(String.init)
        return "\(locations) location row(s) and \(events) event row(s) (of session \(owners.joined(separator: ", "))) "
            + "in rejected_location and rejected_event"
    }

    /// The warning when opening the store brought it up to date and set rows aside.
    static func upgrade(_ rows: SetAsideRows, store path: String) -> String {
        var parts: [String] = []
        if !rows.sessions.isEmpty {
            let locations = rows.sessions.reduce(0) { $0 + $1.locations }
            let events = rows.sessions.reduce(0) { $0 + $1.events }
            parts.append(
                "\(rows.sessions.count) session(s) in table rejected_session: \(sessions(rows)); their "
                    + "\(locations) location(s) and \(events) event(s) are in the store but out of reach")
        }
        if let more = Self.rows(rows) { parts.append(more) }
        return "waymark: warning: \(path): bringing the store up to date (schema v4) set aside what does not pass "
            + "its checks: " + parts.joined(separator: "; and ")
            + ". `waymark sessions restore --all --store \(path)` brings back what it can mend"
    }

    /// The note of `sessions list` while anything is set aside.
    static func note(_ rows: SetAsideRows, store path: String) -> String {
        var parts: [String] = []
        if !rows.sessions.isEmpty {
            parts.append("\(rows.sessions.count) session(s) in table rejected_session: \(sessions(rows))")
        }
        if let more = Self.rows(rows) { parts.append(more) }
        return "waymark: note: \(path): set aside when the store was brought up to date (schema v4's checks), "
            + "not listed: " + parts.joined(separator: "; and ")
            + ". `waymark sessions restore --all` brings back what it can mend"
    }
}
