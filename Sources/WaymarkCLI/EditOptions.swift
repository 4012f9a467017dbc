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

    @Option(
        help: ArgumentHelp(
            "Keep track points in this box: south,west,north,east in degrees (west above east crosses the antimeridian).",
            valueName: "s,w,n,e"))
    var within: String?

    @Option(
        help: ArgumentHelp(
            "Keep track points within a distance of a place: latitude,longitude,distance (such as 48.137,11.575,500m or ...,2km).",
            valueName: "lat,lon,distance"))
    var near: String?

    @Option(
        help: ArgumentHelp(
            "Keep track points from this far along their track on (such as 500m, 2km, 1.5mi).", valueName: "distance"))
    var fromDistance: String?

    @Option(help: ArgumentHelp("Keep track points up to this far along their track.", valueName: "distance"))
    var toDistance: String?

    @Flag(help: "Start a new track at each UTC day; each part is named with its date.")
    var splitDay = false

    @Option(help: ArgumentHelp("Start a new track every this many points; the parts are numbered.", valueName: "n"))
    var splitEvery: Int?

    /// `500`, `500m`, `2km`, `1.5mi`: metres, or nil.
    static func metres(_ text: String) -> Double? {
        let t = text.lowercased().filter { $0 != " " }
        let units: [(String, Double)] = [("km", 1000), ("mi", 1609.344), ("m", 1)]
        for (unit, factor) in units where t.hasSuffix(unit) {
            return Double(t.dropLast(unit.count)).flatMap { $0.isFinite && $0 >= 0 ? $0 * factor : nil }
        }
        return Double(t).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
    }

    /// `south,west,north,east`, or nil.
    static func box(_ text: String) -> Bounds? {
        let v = text.split(separator: ",").compactMap { Double($0.trimmingPrefix(" ")) }
        guard v.count == 4, (-90...90).contains(v[0]), (-90...90).contains(v[2]), v[0] <= v[2],
            (-180...180).contains(v[1]), (-180...180).contains(v[3])
        else { return nil }
        return Bounds(minLatitude: v[0], minLongitude: v[1], maxLatitude: v[2], maxLongitude: v[3])
    }

    /// `latitude,longitude,distance`, or nil.
    static func place(_ text: String) -> (centre: Coordinate, radius: Double)? {
        let parts = text.split(separator: ",").map { String($0.trimmingPrefix(" ")) }
        guard parts.count == 3, let lat = Double(parts[0]), let lon = Double(parts[1]), (-90...90).contains(lat),
            (-180...180).contains(lon), let radius = metres(parts[2])
        else { return nil }
        return (Coordinate(latitude: lat, longitude: lon), radius)
    }

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
        if let within, Self.box(within) == nil {
            throw ValidationError(
                "--within \(within): give south,west,north,east in degrees, such as 48.1,11.5,48.2,11.7 (south no more than north)"
            )
        }
        if let near, Self.place(near) == nil {
            throw ValidationError("--near \(near): give latitude,longitude,distance, such as 48.137,11.575,500m")
        }
        for (name, value) in [("--from-distance", fromDistance), ("--to-distance", toDistance)] {
            if let value, Self.metres(value) == nil {
                throw ValidationError("\(name) \(value): give a distance such as 500m, 2km or 1.5mi")
            }
        }
        if let a = fromDistance.flatMap(Self.metres), let b = toDistance.flatMap(Self.metres), b < a {
            throw ValidationError("--to-distance is before --from-distance: nothing would be left")
        }
        if let splitEvery, splitEvery < 1 { throw ValidationError("--split-every: give a number of points, 1 or more") }
    }

    var edits: TraceEdits {
        TraceEdits(
            timeShift: timeShift.flatMap(Self.signedSeconds), from: from.flatMap(TraceEdits.time),
            to: to.flatMap(TraceEdits.time), maxHDOP: maxHdop, maxHorizontalAccuracy: maxAccuracy,
            minSatellites: minSatellites, minFix: minFix.flatMap { GPXFix(rawValue: $0.lowercased()) }, dedupe: dedupe,
            splitGap: splitGap.map(\.value.inSeconds), within: within.flatMap(Self.box), near: near.flatMap(Self.place),
            fromDistance: fromDistance.flatMap(Self.metres), toDistance: toDistance.flatMap(Self.metres),
            splitDay: splitDay, splitEvery: splitEvery)
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
