import ArgumentParser
import Waymark

/// `render`'s edits: what gpsbabel users filter every day, on the way to any output.
struct EditOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Add this to every time (a clock that was off): 90s, 1h, -2h30m (write --time-shift=-1h for a negative one).",
            valueName: "duration"))
    var timeShift: String?

    @Option(
        help: ArgumentHelp(
            "Keep track points from this time on (ISO 8601, such as 2024-05-01T08:00:00Z; no zone is UTC), after --time-shift.",
            valueName: "time"))
    var from: String?

    @Option(help: ArgumentHelp("Keep track points up to this time (as --from).", valueName: "time"))
    var to: String?

    @Option(help: ArgumentHelp("Leave out track points whose HDOP is above this.", valueName: "hdop"))
    var maxHdop: Double?

    @Option(
        help: ArgumentHelp(
            "Leave out track points whose own horizontal accuracy is worse than this many metres.",
            valueName: "metres"))
    var maxAccuracy: Double?

    @Option(help: ArgumentHelp("Leave out track points with fewer satellites than this.", valueName: "n"))
    var minSatellites: Int?

    @Option(
        help: ArgumentHelp("Leave out track points with a worse fix than this: 2d, 3d, dgps.", valueName: "fix"))
    var minFix: String?

    @Flag(help: "Leave out a track point at the same time as the one before it (a fix written twice).")
    var dedupe = false

    @Option(
        help: ArgumentHelp(
            "Start a new segment where two track points are further apart in time than this (such as 5s or 2m).",
            valueName: "duration"))
    var splitGap: DurationArgument?

    /// `90s`, `+1h`, `-2h30m`: seconds, or nil when it is not a duration.
    static func signedSeconds(_ text: String) -> Double? {
        var body = Substring(text)
        var sign = 1.0
        if let first = body.first, first == "-" || first == "+" {
            sign = first == "-" ? -1 : 1
            body = body.dropFirst()
        }
        guard let duration = DurationText.parse(String(body)) else { return nil }
        return sign * duration.inSeconds
    }

    func validate() throws {
        if let timeShift, Self.signedSeconds(timeShift) == nil {
            throw ValidationError("--time-shift \(timeShift): give a duration such as 90s, 1h or -2h30m")
        }
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, TraceEdits.time(value) == nil {
                throw ValidationError("\(name) \(value): give a time such as 2024-05-01T08:00:00Z")
            }
        }
        if let from, let to, let start = TraceEdits.time(from), let end = TraceEdits.time(to), end < start {
            throw ValidationError("--to \(to) is before --from \(from): nothing would be left")
        }
        if let minFix, GPXFix(rawValue: minFix.lowercased()) == nil || minFix.lowercased() == "none" {
            throw ValidationError("--min-fix \(minFix): give 2d, 3d or dgps")
        }
        for (name, value) in [("--max-hdop", maxHdop), ("--max-accuracy", maxAccuracy)] {
            if let value, !(value.isFinite && value >= 0) { throw ValidationError("\(name): give a number, 0 or more") }
        }
        if let splitGap, splitGap.value <= .zero { throw ValidationError("--split-gap: give a duration above 0") }
    }

    var edits: TraceEdits {
        TraceEdits(
            timeShift: timeShift.flatMap(Self.signedSeconds), from: from.flatMap(TraceEdits.time),
            to: to.flatMap(TraceEdits.time), maxHDOP: maxHdop, maxHorizontalAccuracy: maxAccuracy,
            minSatellites: minSatellites, minFix: minFix.flatMap { GPXFix(rawValue: $0.lowercased()) }, dedupe: dedupe,
            splitGap: splitGap.map(\.value.inSeconds))
    }
}

extension EventSource {
    /// The events with `edits` made on the way (no reader's fast path then).
    func edited(by edits: TraceEdits) -> EventSource {
        guard !edits.isEmpty else { return self }
        let body = self.body
        return EventSource(title: title) { handle in
            let editor = TraceEditor(edits) { try handle($0) }
            try body { event in try editor.write(event) }
        }
    }
}
