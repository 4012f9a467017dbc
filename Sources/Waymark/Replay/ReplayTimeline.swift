#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One recorded point on its way into a replay, or the end of the segment (track segment or
/// route) it belongs to.
enum ReplayInput {
    /// A chosen point and its index in the file (``ReplaySchedule``'s numbering). The point is
    /// read where its reader put it, and stays there until the next input is pulled.
    case point(UnsafePointer<GPXPoint>, index: Int)
    case segmentEnd
}

/// ``ReplaySchedule``'s rules applied one point at a time: a pull-based pipeline that holds a
/// few fixes of look-ahead, whatever the length of the trace.
///
/// It does no I/O. Each call of ``next(from:)`` pulls as many points from its input as the rules
/// need to lay out the next fix, in four stages:
/// 1. **Timeline:** seconds since the first point (points whose time goes backwards are dropped
///    and counted), or along the geodesic at the untimed speed; the point becomes a ``Location``.
///    Segments left empty get no number.
/// 2. **Interval:** with ``ReplaySchedule/Options/interval``, fixes at that period within each
///    segment, from a window of three points (the pair around the time, and whether the second
///    is the segment's last).
/// 3. **Motion:** missing speed and course by central differences, from a window of the fix
///    before, the fix, and the fix after it in the same segment.
/// 4. **Start offset:** fixes before ``ReplaySchedule/Options/startOffset`` are left out.
///
/// The whole-file fact it needs (whether every chosen point has a time) comes from outside.
struct ReplayTimeline {
    /// A laid-out fix: ``ReplaySchedule/Fix`` with its location's fields not yet boxed (the
    /// replay's thread boxes them; see ``Location/init(fields:)``).
    struct Fix: Sendable {
        var offset: Duration
        var fields: Location.Fields
        var segment: Int

        /// The fix, its location boxed here.
        consuming func boxed() -> ReplaySchedule.Fix {
            ReplaySchedule.Fix(offset: offset, location: Location(fields: fields), segment: segment)
        }
    }

    /// A fix and its time on the raw timeline, before the start offset.
    struct Entry {
        var location: Location.Fields
        var seconds: Double
        var segment: Int

        var timed: (location: Location.Fields, seconds: Double) { (location, seconds) }
        /// Its location and segment, the entry given up (its location moved, not copied).
        consuming func parts() -> (location: Location.Fields, segment: Int) { (location, segment) }
        /// Where and when, without copying the location.
        var place: (coordinate: Coordinate, seconds: Double) { (location.coordinate, seconds) }
    }

    enum Item {
        case entry(Entry)
        case segmentEnd
    }

    private let file: String
    /// `file`'s number, which each fix's provenance holds.
    private let fileNumber: UInt32
    private let options: ReplaySchedule.Options
    private let isTimed: Bool
    private let step: Double?
    private let startSeconds: Double

    // Stage 1: the timeline.
    private var origin: Date?
    private var lastSeconds = -Double.infinity
    private var untimedSeconds = 0.0
    private var previous: Coordinate?
    private var segment = 0
    private var segmentHasEntries = false
    /// Points dropped so far because their time went backwards.
    private(set) var droppedPoints = 0

    // Stage 2: resampling. The window holds a (the point at or before the time), b, and c when b
    // is not the segment's last; `inputEnded` says the segment has no more points.
    private enum Phase {
        case idle, running, endPending
    }
    private var phase = Phase.idle
    private var resampleWindow: [Entry] = []
    private var resampleTime = 0.0
    private var inputEnded = false

    // Stage 3: derived motion, from a window of the fix before (only its place is needed), the
    // fix, and the fix after it; before is missing at the start of a segment, after at its end.
    // The fix is moved out of the window to be changed, so its location is not copied for it.
    private var motionBefore: (coordinate: Coordinate, seconds: Double)?
    private var motionCurrent: Entry?
    private var motionAfter: Entry?
    private var motionEnded = false

    /// The most fixes the windows have held at once.
    private(set) var highWater = 0

    /// A timeline for the points of `file` (named in each fix's provenance); `isTimed` says
    /// whether every chosen point of the file has a time.
    ///
    /// The options must be valid (``ReplaySchedule/ScheduleError`` is the caller's to throw).
    init(file: String, options: ReplaySchedule.Options, isTimed: Bool) {
        self.file = file
        fileNumber = OriginNames.number(for: file)
        self.options = options
        self.isTimed = isTimed
        step = options.interval.map(ReplaySchedule.seconds)
        startSeconds = ReplaySchedule.seconds(options.startOffset)
        resampleWindow.reserveCapacity(3)
    }

    /// The next fix, pulling points from `input` until one is due; nil when `input` has ended.
    /// `skipping` is called after every 4 096 fixes left out before the start offset (which,
    /// resampled at a short interval, may be many per point).
    ///
    /// - Throws: what `input` or `skipping` throws, or ``ReplaySchedule/ScheduleError`` when a
    ///   point of a timed trace has no time (the file changed since it was counted).
    mutating func next(
        from input: () throws -> ReplayInput?, skipping: () throws -> Void = {}
    ) throws -> Fix? {
        var skipped = 0
        while let entry = try nextWithMotion(input) {
            skipped &+= 1
            if skipped & 4095 == 0 { try skipping() }
            if entry.seconds >= startSeconds {
                let offset = try ReplaySchedule.duration(
                    entry.seconds - startSeconds, file: file, index: entry.location.provenance.fileIndex)
                let (location, segment) = entry.parts()
                return Fix(offset: offset, fields: location, segment: segment)
            }
        }
        return nil
    }

    private mutating func noteHeld() {
        let motionHeld = (motionBefore == nil ? 0 : 1) + (motionCurrent == nil ? 0 : 1) + (motionAfter == nil ? 0 : 1)
        highWater = max(highWater, resampleWindow.count + motionHeld)
    }

    // MARK: - Stage 1: the timeline

    private mutating func nextOnTimeline(_ input: () throws -> ReplayInput?) throws -> Item? {
        while let raw = try input() {
            switch raw {
            case .segmentEnd:
                if segmentHasEntries { return endSegment() }
            case .point(let point, let index):
                // Read where it lies, not copied.
                let seconds: Double
                let stamp: Date
                if isTimed {
                    guard let time = point.pointee.time else {
                        throw ReplaySchedule.ScheduleError(
                            message: "\(file) changed while it was replayed: point \(index) has no time now")
                    }
                    let origin = self.origin ?? time
                    self.origin = origin
                    let t = time.timeIntervalSince(origin)
                    if t < lastSeconds {
                        droppedPoints += 1
                        continue
                    }
                    lastSeconds = t
                    seconds = t
                    stamp = time
                } else {
                    if let p = previous {
                        untimedSeconds += Geodesic.distance(p, point.pointee.coordinate) / options.untimedSpeed
                    }
                    previous = point.pointee.coordinate
                    seconds = untimedSeconds
                    stamp = options.untimedStart.addingTimeInterval(seconds)
                }
                segmentHasEntries = true
                let fields = options.mapping.fields(forPointAt: point, file: fileNumber, index: index, timestamp: stamp)
                return .entry(Entry(location: fields, seconds: seconds, segment: segment))
            }
        }
        return segmentHasEntries ? endSegment() : nil
    }

    private mutating func endSegment() -> Item {
        segmentHasEntries = false
        segment += 1
        return .segmentEnd
    }

    // MARK: - Stage 2: the interval

    private mutating func nextResampled(_ input: () throws -> ReplayInput?) throws -> Item? {
        guard let step else { return try nextOnTimeline(input) }
        while true {
            switch phase {
            case .endPending:
                phase = .idle
                return .segmentEnd
            case .idle:
                guard let item = try nextOnTimeline(input) else { return nil }
                guard case .entry(let first) = item else { return item }
                resampleWindow.append(first)
                resampleTime = first.seconds
                inputEnded = false
                try fillResampleWindow(input)
                if resampleWindow.count == 1 {
                    // A lone point plays as it is.
                    resampleWindow.removeAll(keepingCapacity: true)
                    phase = .endPending
                    return .entry(first)
                }
                phase = .running
            case .running:
                let t = resampleTime
                // Move on to the pair around t; the segment's last point never becomes `a`.
                while resampleWindow.count == 3 && resampleWindow[1].seconds <= t {
                    resampleWindow.removeFirst()
                    try fillResampleWindow(input)
                }
                let a = resampleWindow[0]
                let b = resampleWindow[1]
                // With b not the last, the last comes at or after b, which is after t.
                if resampleWindow.count == 2 && t > b.seconds + 1e-9 {
                    resampleWindow.removeAll(keepingCapacity: true)
                    phase = .idle
                    return .segmentEnd
                }
                resampleTime += step
                let location = ReplaySchedule.interpolate(from: a.timed, to: b.timed, at: t)
                return .entry(Entry(location: location, seconds: t, segment: a.segment))
            }
        }
    }

    /// Pulls points until the window holds three, or the segment has ended.
    private mutating func fillResampleWindow(_ input: () throws -> ReplayInput?) throws {
        while !inputEnded && resampleWindow.count < 3 {
            if case .entry(let e)? = try nextOnTimeline(input) {
                resampleWindow.append(e)
                noteHeld()
            } else {
                inputEnded = true
            }
        }
    }

    // MARK: - Stage 3: speed and course

    private mutating func nextWithMotion(_ input: () throws -> ReplayInput?) throws -> Entry? {
        // Entries are moved from stage to stage (`consume`), not copied with their locations.
        if motionCurrent == nil {
            while true {
                let item = try nextResampled(input)
                switch consume item {
                case nil: return nil
                case .segmentEnd?: continue
                case .entry(let e)?: motionCurrent = consume e
                }
                break
            }
            motionBefore = nil
            motionEnded = false
        }
        if !motionEnded && motionAfter == nil {
            let item = try nextResampled(input)
            if case .entry(let e)? = consume item {
                motionAfter = consume e
            } else {
                motionEnded = true
            }
        }
        noteHeld()
        guard var current = motionCurrent.take() else { return nil }
        let here = current.place
        ReplaySchedule.deriveMotion(
            of: &current.location, before: motionBefore ?? here, after: motionAfter?.place ?? here)
        if let after = motionAfter.take() {
            motionBefore = here
            motionCurrent = after
        } else {
            motionBefore = nil
        }
        return current
    }
}
