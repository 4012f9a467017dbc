#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The edits `render` makes to a trace on its way to any output: shift its times, keep a time
/// range, discard the points a receiver was unsure of, drop repeated fixes, and split tracks
/// where the receiver went quiet. Each has gpsbabel's filter beside it in docs/commands.md.
public struct TraceEdits: Sendable, Hashable {
    // Equality and hashing are written out below: `near` is a tuple.
    /// Seconds added to every time of the trace: its track and route points and its waypoints
    /// (a camera's or a logger's clock that was off; gpsbabel's `-x track,move=`).
    public var timeShift: Double?
    /// Track points before `from` or after `to` (after the shift) are left out, and so are track
    /// points without a time (gpsbabel's `-x track,start=,stop=`).
    public var from: Date?
    public var to: Date?
    /// Track points whose HDOP is above this are left out; a point without an HDOP stays
    /// (gpsbabel's `-x discard,hdop=`).
    public var maxHDOP: Double?
    /// Track points whose own horizontal accuracy (metres) is above this are left out; a point
    /// without one stays.
    public var maxHorizontalAccuracy: Double?
    /// Track points with fewer satellites than this are left out; a point that does not say stays
    /// (gpsbabel's `-x discard,sat=`).
    public var minSatellites: Int?
    /// Track points whose fix is worse than this are left out (none < 2D < 3D < DGPS and PPS); a
    /// point that does not say stays (gpsbabel's `-x discard,fixnone` and the like).
    public var minFix: GPXFix?
    /// A track point at the same time as the one kept before it, in the same segment, is left
    /// out (a logger that wrote a fix twice).
    public var dedupe: Bool
    /// Seconds: a segment is split where two track points kept are further apart in time than
    /// this (gpsbabel's `-x track,split=`, which makes tracks where this makes segments).
    public var splitGap: Double?
    /// Track points outside this box are left out. A box whose west is east of its east
    /// (`minLongitude > maxLongitude`) crosses the antimeridian.
    public var within: Bounds?
    /// Track points farther than `radius` metres (on the WGS 84 ellipsoid) from `centre` are left
    /// out (gpsbabel's `-x radius`, which it applies to waypoints).
    public var near: (centre: Coordinate, radius: Double)?
    /// Metres along each track, from its first point (summed within its segments, over the points
    /// read): track points before `fromDistance` or after `toDistance` are left out.
    public var fromDistance: Double?
    public var toDistance: Double?
    /// A new track begins at each UTC day: every part of a track is named with its date
    /// (gpsbabel's `-x track,split`, without a gap, splits by day).
    public var splitDay: Bool
    /// A new track begins every this many points kept: the parts are named `(1)`, `(2)`…
    public var splitEvery: Int?
    /// Metres: each segment is simplified (Douglas–Peucker) so that no point left out lies
    /// farther than this from the line kept (gpsbabel's `-x simplify,error=`). Last, after the
    /// other edits, and per segment.
    public var simplify: Double?

    public init(
        timeShift: Double? = nil, from: Date? = nil, to: Date? = nil, maxHDOP: Double? = nil,
        maxHorizontalAccuracy: Double? = nil, minSatellites: Int? = nil, minFix: GPXFix? = nil, dedupe: Bool = false,
        splitGap: Double? = nil, within: Bounds? = nil, near: (centre: Coordinate, radius: Double)? = nil,
        fromDistance: Double? = nil, toDistance: Double? = nil, splitDay: Bool = false, splitEvery: Int? = nil,
        simplify: Double? = nil
    ) {
        self.within = within
        self.near = near
        self.fromDistance = fromDistance
        self.toDistance = toDistance
        self.splitDay = splitDay
        self.splitEvery = splitEvery
        self.simplify = simplify
        self.timeShift = timeShift
        self.from = from
        self.to = to
        self.maxHDOP = maxHDOP
        self.maxHorizontalAccuracy = maxHorizontalAccuracy
        self.minSatellites = minSatellites
        self.minFix = minFix
        self.dedupe = dedupe
        self.splitGap = splitGap
    }

    /// Whether there is nothing to edit.
    public var isEmpty: Bool { self == TraceEdits() }

    public static func == (a: TraceEdits, b: TraceEdits) -> Bool {
        a.timeShift == b.timeShift && a.from == b.from && a.to == b.to && a.maxHDOP == b.maxHDOP
            && a.maxHorizontalAccuracy == b.maxHorizontalAccuracy && a.minSatellites == b.minSatellites
            && a.minFix == b.minFix && a.dedupe == b.dedupe && a.splitGap == b.splitGap && a.within == b.within
            && a.near?.centre == b.near?.centre && a.near?.radius == b.near?.radius
            && a.fromDistance == b.fromDistance && a.toDistance == b.toDistance && a.splitDay == b.splitDay
            && a.splitEvery == b.splitEvery && a.simplify == b.simplify
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(timeShift)
        hasher.combine(from)
        hasher.combine(to)
        hasher.combine(splitGap)
        hasher.combine(within)
        hasher.combine(simplify)
    }

    /// How good a fix is, for ``minFix``.
    static func rank(_ fix: GPXFix) -> Int {
        switch fix {
        case .none: 0
        case .twoD: 1
        case .threeD: 2
        case .dgps, .pps: 3
        }
    }

    /// Whether a track point stays, before the range and the segment rules.
    func keeps(_ p: GPXPoint) -> Bool {
        if let maxHDOP, let hdop = p.hdop, hdop > maxHDOP { return false }
        if let maxHorizontalAccuracy, let h = p.horizontalAccuracy, h > maxHorizontalAccuracy { return false }
        if let minSatellites, let s = p.satellites, s < minSatellites { return false }
        if let minFix, let fix = p.fix, Self.rank(fix) < Self.rank(minFix) { return false }
        if from != nil || to != nil {
            guard let t = p.time else { return false }
            if let from, t < from { return false }
            if let to, t > to { return false }
        }
        if let within, !Self.contains(within, p.coordinate) { return false }
        if let near, !Geodesic.isWithin(near.radius, near.centre, p.coordinate) { return false }
        return true
    }

    /// Whether `box` holds `c`; a box whose west is east of its east crosses the antimeridian.
    static func contains(_ box: Bounds, _ c: Coordinate) -> Bool {
        guard c.latitude >= box.minLatitude && c.latitude <= box.maxLatitude else { return false }
        if box.minLongitude <= box.maxLongitude {
            return c.longitude >= box.minLongitude && c.longitude <= box.maxLongitude
        }
        return c.longitude >= box.minLongitude || c.longitude <= box.maxLongitude
    }

    /// Whether a point `distance` metres along its track is in the distance range.
    func inDistanceRange(_ distance: Double) -> Bool {
        if let fromDistance, distance < fromDistance { return false }
        if let toDistance, distance > toDistance { return false }
        return true
    }

    /// Whether the edits ever start a new track.
    var splitsTracks: Bool { splitDay || splitEvery != nil }

    /// `2024-05-01T08:00:00Z`, with any fraction and zone (none is UTC): the instant, or nil.
    public static func time(_ text: String) -> Date? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer -> Date? in
            guard let base = buffer.baseAddress else { return nil }
            if case .success(let parsed) = ValueParsing.dateTime(ByteSpan(start: base, count: buffer.count)) {
                return parsed.date
            }
            return nil
        }
    }
}

/// Carries out ``TraceEdits`` on reader events, in order and in constant memory (but for a
/// simplified segment's window): each event goes to `emit` edited, or not at all. A segment that
/// loses every point is left out whole.
///
/// The edits apply in this order: the time shift; the filters (range, HDOP, accuracy,
/// satellites, fix, box, radius, distance along the track); the dedupe; the split at gaps (new
/// segments); the split by day or every N points (new tracks); the simplification, per segment.
public final class TraceEditor {
    private let edits: TraceEdits
    private let emit: (GPXEvent) throws -> Void
    /// Whether a segment's start has been written and not its end. An input segment's start is
    /// written with its first point kept, so one that keeps none is left out.
    private var segmentOpen = false
    private var lastKeptTime: Date?
    /// The track being read, as its start said, and the part of it written now.
    private var track: GPXPathInfo?
    private var partOpen = false
    private var partNumber = 0
    private var partDay: Int?
    private var pointsInPart = 0
    /// Metres along the track read so far, and the point before (within the segment).
    private var distance = 0.0
    private var previousRead: Coordinate?
    private let simplifier: LineSimplifier<GPXPoint>?

    public init(_ edits: TraceEdits, emit: @escaping (GPXEvent) throws -> Void) {
        self.edits = edits
        self.emit = emit
        simplifier = edits.simplify.map { LineSimplifier(tolerance: $0) { $0.coordinate } }
    }

    public func write(_ event: GPXEvent) throws {
        switch event {
        case .waypoint(let p):
            try emit(.waypoint(shifted(p)))
        case .routePoint(let p):
            try emit(.routePoint(shifted(p)))
        case .trackStart(let info):
            track = info
            partOpen = false
            partNumber = 0
            partDay = nil
            distance = 0
            previousRead = nil
            if !edits.splitsTracks { try emit(event) }
        case .segmentStart:
            lastKeptTime = nil
            previousRead = nil
        case .trackPoint(let p):
            try addTrackPoint(shifted(p))
        case .segmentEnd(let extensions):
            try closeSegment(extensions)
        case .trackEnd(let info):
            try closeSegment()
            if edits.splitsTracks {
                // A track that kept no point is still written, empty, as without the split.
                if !partOpen { try emit(.trackStart(info)) }
                try emit(.trackEnd(partOpen ? partInfo(info) : info))
            } else {
                try emit(event)
            }
            partOpen = false
            track = nil
        default:
            try emit(event)
        }
    }

    private func shifted(_ p: GPXPoint) -> GPXPoint {
        guard let shift = edits.timeShift, let t = p.time else { return p }
        var p = p
        p.time = t.addingTimeInterval(shift)
        return p
    }

    /// The name of the part being written: the track's, with its day or its number.
    private func partInfo(_ info: GPXPathInfo) -> GPXPathInfo {
        var info = info
        var suffix: [String] = []
        if edits.splitDay, let day = partDay {
            let (y, m, d) = ValueParsing.civil(fromDays: day)
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            suffix.append("\(y)-\(two(m))-\(two(d))")
        }
        if edits.splitEvery != nil { suffix.append("(\(partNumber))") }
        info.name = ([info.name].compactMap { $0 } + suffix).joined(separator: " ")
        return info
    }

    private static func day(_ t: Date?) -> Int? {
        t.map { Int((($0.timeIntervalSince1970) / 86_400).rounded(.down)) }
    }

    private func addTrackPoint(_ p: GPXPoint) throws {
        if edits.fromDistance != nil || edits.toDistance != nil {
            if let q = previousRead { distance += Geodesic.distance(q, p.coordinate) }
            previousRead = p.coordinate
            guard edits.inDistanceRange(distance) else { return }
        }
        guard edits.keeps(p) else { return }
        if edits.dedupe, let t = p.time, let last = lastKeptTime, t == last, segmentOpen { return }
        if edits.splitsTracks {
            let day = Self.day(p.time)
            let newDay = edits.splitDay && partOpen && day != nil && day != partDay
            let full = edits.splitEvery.map { partOpen && pointsInPart >= $0 } ?? false
            if newDay || full {
                try closeSegment()
                try emit(.trackEnd(partInfo(track ?? GPXPathInfo())))
                partOpen = false
            }
            if !partOpen {
                partOpen = true
                partNumber += 1
                pointsInPart = 0
                if day != nil || partDay == nil { partDay = day }
                try emit(.trackStart(partInfo(track ?? GPXPathInfo())))
            }
        }
        if let gap = edits.splitGap, segmentOpen, let t = p.time, let last = lastKeptTime,
            t.timeIntervalSince(last) > gap
        {
            try closeSegment()
        }
        if !segmentOpen {
            // A point outside any segment (a reader that gives none) opens one, as the writers do.
            try emit(.segmentStart)
            segmentOpen = true
        }
        if let t = p.time { lastKeptTime = t }
        pointsInPart += 1
        if let simplifier {
            try simplifier.add(p) { try emit(.trackPoint($0)) }
        } else {
            try emit(.trackPoint(p))
        }
    }

    /// Ends the segment written now, if one is open (its simplified points first).
    private func closeSegment(_ extensions: GPXExtensions = GPXExtensions()) throws {
        guard segmentOpen else { return }
        try simplifier?.finishLine { try emit(.trackPoint($0)) }
        try emit(.segmentEnd(extensions))
        segmentOpen = false
    }
}
