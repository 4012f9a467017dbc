import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the simulated app shows and logs, as the run goes.
///
/// Foreground deliveries "update the UI": a line on standard output (or collected for `-o`).
/// Background deliveries and the app's events are log lines on standard error.
final class ConsoleReporter: SimulationObserver {
    enum UIMode {
        /// UI lines on standard output.
        case standardOutput
        /// UI lines kept for an output file (``uiText``).
        case collect
        /// No UI lines (the output is GeoJSON or NDJSON).
        case none
    }

    private let epoch: Date
    private let ui: UIMode
    private let quiet: Bool
    private let flushEachLine: Bool
    private let out = FileSink.standardOutput()
    private let err = FileSink.standardError()
    private(set) var uiText = ""
    private(set) var deliveryError: (any Error)?
    /// Called before any line is written (a status line clears itself).
    var beforeLogLine: (() -> Void)?
    /// Runs before buffered lines reach standard output or error (a store commits first).
    var beforeWrite: (() throws -> Void)? {
        didSet {
            out.beforeWrite = beforeWrite
            err.beforeWrite = beforeWrite
        }
    }

    init(epoch: Date, ui: UIMode, quiet: Bool, flushEachLine: Bool) {
        self.epoch = epoch
        self.ui = ui
        self.quiet = quiet
        self.flushEachLine = flushEachLine
    }

    /// `record` as a logger (no app option): it speaks GPS, not iOS. A fix is a line with fixed
    /// columns; the app's states, authorization and UI are never shown; a loss of fix is told
    /// once ("no fix since 08:00:12 UTC"), and so is its end ("fix regained after 20 s"); the
    /// summary gives fixes, segments, outages, distance and duration (``loggerSummary``).
    var speaksGPS = false
    /// What the logger has seen.
    private(set) var tally = LoggerTally()

    /// Whether it shows nothing of a fix (`--quiet` with no UI, not a logger): the run's
    /// outputs then leave it out of every fix's event.
    var ignoresFixes: Bool { !speaksGPS && quiet && ui == .none }

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        if speaksGPS {
            logGPS(event)
            return
        }
        // Formatted only for the events that are shown: most fixes are not, at --quiet.
        var time: String { Self.offset(event.offset) }
        if ignoresFixes, case .fix = event.kind { return }
        switch event.kind {
        case .fix(let f):
            guard let l = f.delivered else { return }
            if f.appState.isForeground {
                guard ui != .none else { return }
                let line = "\(time)  UI  \(Self.describe(l))\(f.reason == .resumed ? "  (held while suspended)" : "")\n"
                if ui == .collect {
                    uiText += line
                } else {
                    writeUI(line)
                }
            } else if !quiet {
                var notes = [f.reason.rawValue]
                if let r = f.backgroundTimeRemaining {
                    notes.append("backgroundTimeRemaining \(ValueFormatting.fixed(r.inSeconds, decimals: 1)) s")
                }
                if f.indicator { notes.append("location indicator shown") }
                log("\(time)  \(f.appState.rawValue)  \(Self.describe(l))  (\(notes.joined(separator: "; ")))")
            }
        case .arrivedWhileAway(let count):
            let line = "\(time)  UI  welcome back: \(count) location\(count == 1 ? "" : "s") arrived while away\n"
            switch ui {
            case .standardOutput:
                writeUI(line)
            case .collect: uiText += line
            case .none: if !quiet { log(line.dropLast().description) }
            }
        default:
            guard !quiet, let text = Self.describe(event.kind) else { return }
            log("\(time)  \(text)")
        }
    }

    private func logGPS(_ event: AuditEvent) {
        guard case .fix(let f) = event.kind else { return }
        let time = Self.offset(event.offset)
        if f.reason == .noFix {
            if let since = tally.noteLoss(), !quiet {
                log("\(time)  no fix since \(since)")
            }
            return
        }
        guard let l = f.delivered else { return }
        if let outage = tally.noteFix(l, segment: f.segment), !quiet {
            log("\(time)  fix regained after \(DurationText.format(outage))")
        }
        guard ui != .none else { return }
        let line = "\(time)  \(Self.columns(l))\n"
        if ui == .collect { uiText += line } else { writeUI(line) }
    }

    /// A fix in fixed columns, as cgps shows one: latitude and longitude with 7 decimals (1 cm),
    /// the accuracy, and the speed and course when the receiver gave them.
    static func columns(_ l: Location) -> String {
        func padded(_ value: Double, decimals: Int, width: Int) -> String {
            var text = ValueFormatting.fixed(value, decimals: decimals)
            if decimals > 0 {
                if !text.contains(".") { text += "." }
                let have = text.count - 1 - text.distance(from: text.startIndex, to: text.firstIndex(of: ".")!)
                text += String(repeating: "0", count: max(0, decimals - have))
            }
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        var text =
            padded(l.coordinate.latitude, decimals: 7, width: 11) + " "
            + padded(l.coordinate.longitude, decimals: 7, width: 12) + "  ±"
            + padded(l.horizontalAccuracy.rounded(), decimals: 0, width: 4) + " m"
        if l.speed >= 0 { text += "  " + padded(l.speed, decimals: 1, width: 5) + " m/s" }
        if l.course >= 0 { text += "  " + padded(l.course.rounded(), decimals: 0, width: 3) + "°" }
        return text
    }

    /// The logger's summary: fixes, segments, outages, distance within segments, duration.
    func loggerSummary(source: String) -> String {
        let t = tally
        var text = "Recording of \(source): \(t.fixes) fix\(t.fixes == 1 ? "" : "es") in \(t.segments) segment(s)"
        text += ", \(t.outages) loss(es) of fix"
        text += "\n  distance   \(ValueFormatting.fixed(t.distance / 1000, decimals: 3)) km (within segments)"
        if let first = t.firstTime, let last = t.lastTime {
            text += "\n  duration   \(DurationText.format(.seconds(last.timeIntervalSince(first).rounded())))"
            text += " (\(ValueFormatting.iso8601(first)) → \(ValueFormatting.iso8601(last)))"
        }
        return text + "\n"
    }

    // The two streams stay in order for a reader of both (2>&1): before a line goes to one,
    // what the other holds goes out. Live, every line goes out at once; otherwise in blocks.

    private func writeUI(_ line: String) {
        beforeLogLine?()
        try? err.flush()
        out.write(line)
        do {
            if flushEachLine { try out.flush() } else { try out.flushIfNeeded() }
        } catch {
            deliveryError = deliveryError ?? error
        }
    }

    private func log(_ line: String) {
        beforeLogLine?()
        do { try out.flush() } catch { deliveryError = deliveryError ?? error }
        err.write(line)
        err.write("\n")
        if flushEachLine { try? err.flush() } else { try? err.flushIfNeeded() }
    }

    /// Buffers this many bytes per stream before writing them (when not live).
    func setBlockSize(_ bytes: Int) {
        out.flushThreshold = bytes
        err.flushThreshold = bytes
    }

    /// Drops lines not yet written out (they report events the store failed to keep).
    func discardPending() {
        out.discardBuffered()
        err.discardBuffered()
    }

    func finish() throws {
        try? err.flush()
        do { try out.flush() } catch { deliveryError = deliveryError ?? error }
        if let deliveryError { throw deliveryError }
    }

    /// `+h:mm:ss`, with milliseconds when there are any.
    static func offset(_ d: Duration) -> String {
        let (s, atto) = d.components
        let millis = Int(atto / 1_000_000_000_000_000)
        var text = "+\(s / 3600):" + pad(Int(s / 60 % 60)) + ":" + pad(Int(s % 60))
        if millis > 0 { text += "." + String(String(millis + 1000).dropFirst()) }
        return text
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// An accuracy in whole metres, as a person reads it; one that would show as 0 but is not
    /// (an RTK fix's 0.014 m) with its own digits, so that it never looks perfect.
    static func metres(_ accuracy: Double) -> String {
        let whole = ValueFormatting.fixed(accuracy, decimals: 0)
        return whole == "0" && accuracy != 0 && accuracy.isFinite ? ValueFormatting.accuracy(accuracy) : whole
    }

    static func describe(_ l: Location) -> String {
        var text =
            ValueFormatting.fixed(l.coordinate.latitude, decimals: 7) + ", "
            + ValueFormatting.fixed(l.coordinate.longitude, decimals: 7)
            + "  ±\(metres(l.horizontalAccuracy)) m"
        if l.speed >= 0 { text += "  \(ValueFormatting.fixed(l.speed, decimals: 1)) m/s" }
        if l.course >= 0 { text += "  \(ValueFormatting.fixed(l.course, decimals: 0))°" }
        return text
    }

    /// An event in words; nil for the ones not worth a line.
    /// "updates", or "manager N updates" for another manager than the app's first.
    static func updates(of manager: Int) -> String { manager == 1 ? "updates" : "manager \(manager) updates" }

    static func describe(_ kind: AuditEvent.Kind) -> String? {
        switch kind {
        case .started, .finished, .action, .fix, .arrivedWhileAway, .managerCreated: return nil
        // `record` prints what gpsd did in its own lines, as it happens.
        case .source: return nil
        case .app(let action, let detail): return "app calls \(action)" + (detail.map { " (\($0))" } ?? "")
        case .locationsDelivered(let count, let reason):
            return "didUpdateLocations with \(count) locations (\(reason.rawValue))"
        case .stateChanged(let from, let to, let cause): return "app: \(from.rawValue) → \(to.rawValue) (\(cause))"
        case .authorizationRequest(let request, let outcome, let reason):
            return "app requests \(request.rawValue) authorization: \(outcome)" + (reason.map { " (\($0))" } ?? "")
        case .prompt(let prompt, let phase, let answer):
            return "prompt \(prompt) \(phase)" + (answer.map { ": \($0)" } ?? "")
        case .authorizationChanged(let from, let to): return "authorization: \(from.rawValue) → \(to.rawValue)"
        case .accuracyChanged(let from, let to): return "accuracy: \(from.rawValue) → \(to.rawValue)"
        case .locationServicesChanged(let enabled): return "location services \(enabled ? "on" : "off")"
        case .setting(let name, let value, let manager):
            return manager == 1 ? "manager.\(name) = \(value)" : "manager \(manager).\(name) = \(value)"
        case .updates(let action, let manager): return "\(Self.updates(of: manager)) \(action)"
        case .error(let e, let manager): return manager == 1 ? "error: \(e)" : "manager \(manager) error: \(e)"
        case .backgroundTask(let action, let task, let remaining, let reason):
            var text = "background task" + (task.map { " \($0)" } ?? "") + " \(action)"
            if let remaining { text += ", \(ValueFormatting.fixed(remaining.inSeconds, decimals: 1)) s left" }
            return text + (reason.map { " (\($0))" } ?? "")
        case .fetch(let action, let result, let synced, let reason, let detail):
            var text = "background fetch \(action)"
            if let result { text += ": \(result)" }
            if let synced, synced > 0 { text += ", \(synced) synced" }
            return text + ((reason?.rawValue ?? detail).map { " (\($0))" } ?? "")
        case .paused(let reason, let manager): return "\(Self.updates(of: manager)) paused (\(reason))"
        case .resumed(let reason, let manager): return "\(Self.updates(of: manager)) resumed (\(reason))"
        case .heldDiscarded(let count, let reason, let manager):
            return "\(count) held fix(es) discarded (\(reason))" + (manager == 1 ? "" : ", manager \(manager)")
        case .terminated(let reason): return "app terminated (\(reason))"
        case .diagnostic(let message): return "note: \(message)"
        case .serviceLocation(let r):
            var text = "\(r.service) \(r.action)"
            if let l = r.location, r.action == .delivered || r.action == .held || r.action == .dropped {
                text += ": \(r.appState.rawValue)  \(describe(l))"
            }
            return text + (r.reason.map { " (\($0))" } ?? "")
        case .region(let action, let identifier, let state, let decision, let reason):
            var text = "region \(identifier) \(action)"
            if action == .determined, let state { text += ": \(state.rawValue)" }
            if let decision, decision != .delivered { text += ", \(decision)" }
            return text + (reason.map { " (\($0))" } ?? "")
        case .visit(let action, let visit, let decision, let reason):
            var text = "visit \(action)"
            if let v = visit {
                text +=
                    ": " + ValueFormatting.fixed(v.coordinate.latitude, decimals: 7) + ", "
                    + ValueFormatting.fixed(v.coordinate.longitude, decimals: 7)
                    + "  ±\(ConsoleReporter.metres(v.horizontalAccuracy)) m"
            }
            if let decision, decision != .delivered { text += ", \(decision)" }
            return text + (reason.map { " (\($0))" } ?? "")
        case .push(let action, let result, let reason, let detail):
            return "push \(action)" + (result.map { ": \($0)" } ?? "")
                + ((reason?.rawValue ?? detail).map { " (\($0))" } ?? "")
        case .scheduledTask(let action, let kind, let identifier, let success, let reason, let begin, let detail):
            var text = "\(kind) task \(identifier) \(action)"
            if let success { text += success ? ": success" : ": failure" }
            let why =
                begin.map { "earliestBegin at \(DurationText.format(max(.zero, $0)))" } ?? reason?.rawValue ?? detail
            return text + (why.map { " (\($0))" } ?? "")
        case .audio(let action, let reason): return "audio \(action)" + (reason.map { " (\($0))" } ?? "")
        case .transfer(let action, let task, let count, let reason, let detail, let session):
            var text =
                session.map { "background download \(task) (session \($0)) \(action)" }
                ?? "background upload \(task) \(action)"
            if let count { text += ", \(count) location(s)" }
            return text + ((detail ?? reason?.rawValue).map { " (\($0))" } ?? "")
        case .session(let kind, let action, let reason):
            let name = kind == .service ? "service session" : "background activity session"
            return "\(name) \(action)" + (reason.map { " (\($0))" } ?? "")
        case .monitor(let name, let identifier, let action, let decision, let reason):
            var text = "monitor \(name): condition \(identifier) \(action)"
            if let decision, decision != .delivered { text += ", \(decision)" }
            return text + (reason.map { " (\($0))" } ?? "")
        case .liveUpdate(let stationary, let diagnostic, let manager):
            return (manager == 1 ? "live update: " : "manager \(manager) live update: ")
                + (stationary ? "stationary" : (diagnostic?.rawValue ?? ""))
        }
    }
}

/// The summary at the end of a replay.
enum SummaryText {
    static func render(
        _ s: RunSummary, simulation: Simulation, trace: String, rate: Double, verb: String = "Replay"
    ) -> String {
        let pace = rate == 0 ? "virtual time" : "\(ValueFormatting.fixed(rate, decimals: 2))× real time"
        var text =
            "\n\(verb) of \(TerminalText.escaped(trace)): \(s.fixes) fixes over \(ConsoleReporter.offset(simulation.now).dropFirst()) (\(pace))\n"
        text += "  delivered \(s.count(.delivered)), held \(s.count(.held)), dropped \(s.count(.dropped)), "
        text += "ignored \(s.count(.ignored))"
        if s.resumedDeliveries > 0 || s.discardedHeld > 0 {
            text += "; held, then \(s.resumedDeliveries) delivered later and \(s.discardedHeld) discarded"
        }
        text += "\n"
        for decision in FixDecision.allCases where s.count(decision) > 0 {
            let reasons = FixReason.allCases.filter { s.count($0) > 0 && Self.decision(for: $0) == decision }
            guard !reasons.isEmpty else { continue }
            text += "  \(decision.rawValue) by reason: "
            text += reasons.map { "\($0.rawValue) \(s.count($0))" }.joined(separator: ", ") + "\n"
        }
        let states = AppState.allCases.filter { s.count($0) > 0 }
        text += "  fixes by app state: " + states.map { "\($0.rawValue) \(s.count($0))" }.joined(separator: ", ") + "\n"
        text += "  arrived while away: \(s.deliveredWhileAway)\n"
        text +=
            "  stored: \(simulation.tutorialApp?.storedCount ?? 0) location(s); final state \(simulation.appState.rawValue), "
        text += "authorization \(simulation.manager.authorizationStatus.rawValue)\n"
        return text
    }

    /// The decision a reason belongs to.
    private static func decision(for reason: FixReason) -> FixDecision {
        switch reason {
        case .foreground, .backgroundSession, .gracePeriod, .backgroundTask, .backgroundFetch, .backgroundWake,
            .backgroundAudio, .resumed, .alwaysGranted, .significantLocationChange, .requestLocation:
            .delivered
        case .suspended, .awaitingAlways: .held
        case .notUpdating: .ignored
        default: .dropped
        }
    }
}

/// What a logger has seen: fixes, segments, losses of fix and the distance, as they come.
struct LoggerTally {
    private(set) var fixes = 0
    private(set) var segments = 0
    private(set) var outages = 0
    /// Metres along the track, within segments (never across a gap).
    private(set) var distance = 0.0
    private(set) var firstTime: Date?
    private(set) var lastTime: Date?
    private var last: (coordinate: Coordinate, segment: Int)?
    /// Whether the fix is lost now (a report without one came after the last fix).
    private var fixLost = false

    /// A report without a fix: the time of the last fix (UTC) when this begins an
    /// outage, else nil.
    mutating func noteLoss() -> String? {
        guard !fixLost, let lastTime else { return nil }
        fixLost = true
        outages += 1
        let iso = ValueFormatting.iso8601(lastTime)  // 2024-05-01T08:00:12.000Z
        let clock = iso.split(separator: "T").last.map { String($0.prefix(8)) } ?? iso
        return clock + " UTC"
    }

    /// A fix: how long the fix was lost (from the last fix's time) when this ends an outage,
    /// else nil.
    mutating func noteFix(_ l: Location, segment: Int) -> Duration? {
        fixes += 1
        if let last, last.segment == segment {
            distance += Geodesic.distance(last.coordinate, l.coordinate)
        } else {
            segments += 1
        }
        last = (l.coordinate, segment)
        // The outage as the receiver's clock measured it: from the last fix to this one.
        let outage =
            !fixLost ? nil : lastTime.map { Duration.seconds(l.timestamp.timeIntervalSince($0).rounded()) }
        if firstTime == nil { firstTime = l.timestamp }
        lastTime = l.timestamp
        fixLost = false
        return outage
    }
}
