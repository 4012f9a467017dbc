#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The edits `render` makes to a trace on its way to any output: shift its times, keep a time
/// range, discard the points a receiver was unsure of, drop repeated fixes, and split tracks
/// where the receiver went quiet. Each has gpsbabel's filter beside it in docs/commands.md.
public struct TraceEdits: Sendable, Hashable {
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

    public init(
        timeShift: Double? = nil, from: Date? = nil, to: Date? = nil, maxHDOP: Double? = nil,
        maxHorizontalAccuracy: Double? = nil, minSatellites: Int? = nil, minFix: GPXFix? = nil, dedupe: Bool = false,
        splitGap: Double? = nil
    ) {
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
        return true
    }

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

/// Carries out ``TraceEdits`` on reader events, in order and in constant memory: each event goes
/// to `emit` edited, or not at all. A segment that loses every point is left out whole.
public final class TraceEditor {
    private let edits: TraceEdits
    private let emit: (GPXEvent) throws -> Void
    /// Whether a segment's start has been written and not its end. An input segment's start is
    /// written with its first point kept, so one that keeps none is left out.
    private var segmentOpen = false
    private var lastKeptTime: Date?

    public init(_ edits: TraceEdits, emit: @escaping (GPXEvent) throws -> Void) {
        self.edits = edits
        self.emit = emit
    }

    public func write(_ event: GPXEvent) throws {
        switch event {
        case .waypoint(let p):
            try emit(.waypoint(shifted(p)))
        case .routePoint(let p):
            try emit(.routePoint(shifted(p)))
        case .segmentStart:
            lastKeptTime = nil
        case .trackPoint(let p):
            try addTrackPoint(shifted(p))
        case .segmentEnd:
            if segmentOpen { try emit(event) }
            segmentOpen = false
        case .trackEnd:
            if segmentOpen { try emit(.segmentEnd(GPXExtensions())) }
            segmentOpen = false
            try emit(event)
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

    private func addTrackPoint(_ p: GPXPoint) throws {
        guard edits.keeps(p) else { return }
        if edits.dedupe, let t = p.time, let last = lastKeptTime, t == last, segmentOpen { return }
        if let gap = edits.splitGap, segmentOpen, let t = p.time, let last = lastKeptTime,
            t.timeIntervalSince(last) > gap
        {
            try emit(.segmentEnd(GPXExtensions()))
            try emit(.segmentStart)
        }
        if !segmentOpen {
            // A point outside any segment (a reader that gives none) opens one, as the writers do.
            try emit(.segmentStart)
            segmentOpen = true
        }
        if let t = p.time { lastKeptTime = t }
        try emit(.trackPoint(p))
    }
}
