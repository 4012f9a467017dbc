#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A recorded trace laid out on a timeline: which fixes a replay delivers, and when.
///
/// It is pure data, computed once; a replay source walks it on whatever clock it is given.
///
/// - **Which points.** The tracks' points, segment by segment; a file without track points
///   plays its routes; a file with neither plays its waypoints in order (Xcode's simulator
///   format).
/// - **Timing.** When every chosen point has a time, fixes come at those times, measured from the
///   first one (points whose time goes backwards are dropped, and counted in ``droppedPoints``).
///   Otherwise the trace plays at ``Options/untimedSpeed`` along the geodesic.
/// - **Gaps.** A new segment, and the time between the last fix of one and the first of the next,
///   is signal loss: no fixes come then.
/// - **Interval.** With ``Options/interval``, fixes come at that fixed period within each
///   segment, interpolated along the geodesic (elevation and time linearly).
/// - **Start offset.** ``Options/startOffset`` skips that much of the timeline; offsets then
///   count from there.
/// - **Speed and course** missing from the file are derived from the neighbouring fixes of the
///   same segment (central differences) and marked as derived in the provenance.
public struct ReplaySchedule: Sendable, Hashable {
    /// One fix on the timeline.
    public struct Fix: Sendable, Hashable {
        /// Time since the replay started.
        public var offset: Duration
        public var location: Location
        /// 0-based; a change of segment is a gap in the signal.
        public var segment: Int
    }

    /// How to lay the trace out.
    public struct Options: Sendable, Hashable {
        /// Metres per second, for traces without times (default 1.4, a walk).
        public var untimedSpeed: Double
        /// A fixed period between fixes, interpolated along the geodesic; nil keeps the points.
        public var interval: Duration?
        /// How much of the timeline to skip.
        public var startOffset: Duration
        /// The time of the first fix of an untimed trace.
        public var untimedStart: Date
        public var mapping: GPXLocationMapping

        public init(
            untimedSpeed: Double = 1.4, interval: Duration? = nil, startOffset: Duration = .zero,
            untimedStart: Date = Date(timeIntervalSince1970: 0), mapping: GPXLocationMapping = .default
        ) {
            self.untimedSpeed = untimedSpeed
            self.interval = interval
            self.startOffset = startOffset
            self.untimedStart = untimedStart
            self.mapping = mapping
        }
    }

    /// An error in the options or the trace.
    public struct ScheduleError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The fixes in time order.
    public private(set) var fixes: [Fix]
    /// Time from the first fix to the last, before the start offset is applied.
    public private(set) var duration: Duration
    /// Whether the fixes follow the file's own times.
    public private(set) var isTimed: Bool
    /// Points dropped because their time went backwards.
    public private(set) var droppedPoints: Int

    /// Lays out `document`, read from `file` (named in each fix's provenance).
    public init(document: GPXDocument, file: String, options: Options = Options()) throws {
        guard options.untimedSpeed > 0, options.untimedSpeed.isFinite else {
            throw ScheduleError(message: "the speed for untimed traces must be above 0 m/s")
        }
        if let interval = options.interval, interval <= .zero {
            throw ScheduleError(message: "the interval must be longer than 0 s")
        }
        // Points in document order, with their index in the file and their segment.
        var segments: [[(point: GPXPoint, index: Int)]] = []
        var index = 0
        let pointsBefore = document.waypoints.count + document.routes.reduce(0) { $0 + $1.points.count }
        if document.tracks.contains(where: { $0.segments.contains { !$0.points.isEmpty } }) {
            index = pointsBefore
            for track in document.tracks {
                for segment in track.segments {
                    var list: [(GPXPoint, Int)] = []
                    for point in segment.points {
                        list.append((point, index))
                        index += 1
                    }
                    if !list.isEmpty { segments.append(list) }
                }
            }
        } else if document.routes.contains(where: { !$0.points.isEmpty }) {
            index = document.waypoints.count
            for route in document.routes {
                var list: [(GPXPoint, Int)] = []
                for point in route.points {
                    list.append((point, index))
                    index += 1
                }
                if !list.isEmpty { segments.append(list) }
            }
        } else if !document.waypoints.isEmpty {
            segments = [document.waypoints.enumerated().map { ($0.element, $0.offset) }]
        }
        let timed = !segments.isEmpty && segments.allSatisfy { $0.allSatisfy { $0.point.time != nil } }
        isTimed = timed
        droppedPoints = 0

        // Raw timeline: seconds since the first point, per segment.
        var raw: [[(point: GPXPoint, index: Int, seconds: Double)]] = []
        if timed {
            let first = segments[0][0].point.time!
            var last = -Double.infinity
            for segment in segments {
                var list: [(GPXPoint, Int, Double)] = []
                for (point, i) in segment {
                    let t = point.time!.timeIntervalSince(first)
                    if t < last {
                        droppedPoints += 1
                        continue
                    }
                    last = t
                    list.append((point, i, t))
                }
                if !list.isEmpty { raw.append(list) }
            }
        } else {
            var t = 0.0
            var previous: Coordinate?
            for segment in segments {
                var list: [(GPXPoint, Int, Double)] = []
                for (point, i) in segment {
                    if let p = previous { t += Geodesic.distance(p, point.coordinate) / options.untimedSpeed }
                    previous = point.coordinate
                    list.append((point, i, t))
                }
                raw.append(list)
            }
        }

        let startSeconds = Self.seconds(options.startOffset)
        // Named once: each fix's provenance holds the file's number.
        let fileNumber = OriginNames.number(for: file)
        var fixes: [Fix] = []
        for (segmentNumber, segment) in raw.enumerated() {
            var located: [(location: Location, seconds: Double)] = segment.map { entry in
                let stamp = timed ? entry.point.time! : options.untimedStart.addingTimeInterval(entry.seconds)
                let location = withUnsafePointer(to: entry.point) {
                    options.mapping.location(forPointAt: $0, file: fileNumber, index: entry.index, timestamp: stamp)
                }
                return (location, entry.seconds)
            }
            if let interval = options.interval {
                located = Self.resample(located, every: Self.seconds(interval))
            }
            Self.deriveMotion(&located)
            for entry in located where entry.seconds >= startSeconds {
                fixes.append(
                    Fix(
                        offset: try Self.duration(
                            entry.seconds - startSeconds, file: file, index: entry.location.provenance.fileIndex),
                        location: entry.location,
                        segment: segmentNumber))
            }
        }
        self.fixes = fixes
        let total = raw.last?.last?.seconds ?? 0
        duration = try Self.duration(total, file: file, index: raw.last?.last?.index ?? 0)
    }

    /// Fixes at a fixed period from the first point of a segment to its last, interpolated.
    private static func resample(_ points: [(location: Location, seconds: Double)], every step: Double)
        -> [(location: Location, seconds: Double)]
    {
        guard let first = points.first, let last = points.last, points.count > 1 else { return points }
        var out: [(Location, Double)] = []
        var j = 0
        var t = first.seconds
        while t <= last.seconds + 1e-9 {
            while j + 1 < points.count - 1 && points[j + 1].seconds <= t { j += 1 }
            let a = points[j]
            let b = points[min(j + 1, points.count - 1)]
            out.append((interpolate(from: a, to: b, at: t), t))
            t += step
        }
        return out
    }

    /// Fills in missing speed and course from neighbours: central differences inside a segment.
    private static func deriveMotion(_ points: inout [(location: Location, seconds: Double)]) {
        guard points.count > 1 else { return }
        for i in points.indices {
            let before = points[max(0, i - 1)]
            let after = points[min(points.count - 1, i + 1)]
            deriveMotion(of: &points[i].location, before: before, after: after)
        }
    }
}

extension ReplaySchedule {
    /// The fix `t` seconds into the timeline, on the geodesic from `a` to `b` (`a.seconds` ≤ `t`
    /// ≤ `b.seconds`, clamped): what ``Options/interval`` resampling delivers between two points.
    ///
    /// Elevation, ellipsoidal altitude and time are linear; the rest is `a`'s, except that speed
    /// and course are left invalid (they belong to the recorded points, not to the ones between).
    static func interpolate(
        from a: (location: Location, seconds: Double), to b: (location: Location, seconds: Double), at t: Double
    ) -> Location {
        Location(fields: interpolate(from: (a.location.fields, a.seconds), to: (b.location.fields, b.seconds), at: t))
    }

    /// ``interpolate(from:to:at:)`` of the fields the replay's timeline lays out.
    static func interpolate(
        from a: (location: Location.Fields, seconds: Double), to b: (location: Location.Fields, seconds: Double),
        at t: Double
    ) -> Location.Fields {
        let span = b.seconds - a.seconds
        let fraction = span > 0 ? min(1, max(0, (t - a.seconds) / span)) : 0
        var location = a.location
        location.coordinate = Geodesic.interpolate(a.location.coordinate, b.location.coordinate, fraction: fraction)
        location.altitude = a.location.altitude + fraction * (b.location.altitude - a.location.altitude)
        if let ea = a.location.ellipsoidalAltitude, let eb = b.location.ellipsoidalAltitude {
            location.ellipsoidalAltitude = ea + fraction * (eb - ea)
        }
        if !(a.location.hasValidAltitude && b.location.hasValidAltitude) { location.verticalAccuracy = -1 }
        location.timestamp = a.location.timestamp.addingTimeInterval(t - a.seconds)
        location.speed = -1
        location.course = -1
        return location
    }

    /// Fills in a missing speed and course of `location` by central differences: from the fix
    /// `before` it to the one `after` it in the same segment (either may be the fix itself, at the
    /// ends of a segment). Nothing is derived when no time passes between them.
    static func deriveMotion(
        of location: inout Location, before: (location: Location, seconds: Double),
        after: (location: Location, seconds: Double)
    ) {
        guard location.speed < 0 || location.course < 0 else { return }
        deriveMotion(
            of: &location.fields, before: (before.location.coordinate, before.seconds),
            after: (after.location.coordinate, after.seconds))
    }

    /// The same, from the neighbours' positions and times alone.
    static func deriveMotion(
        of location: inout Location.Fields, before: (coordinate: Coordinate, seconds: Double),
        after: (coordinate: Coordinate, seconds: Double)
    ) {
        guard location.speed < 0 || location.course < 0 else { return }
        let dt = after.seconds - before.seconds
        guard dt > 0 else { return }
        let line = Geodesic.inverse(before.coordinate, after.coordinate)
        if location.speed < 0 {
            location.speed = line.distance / dt
            location.provenance.speedIsDerived = true
        }
        if location.course < 0 && line.distance > 0 {
            location.course = line.initialBearing
            location.provenance.courseIsDerived = true
        }
    }

    /// `d` in seconds.
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// `seconds` as a duration, to the nanosecond.
    ///
    /// - Throws: ``ScheduleError`` when the trace spans more than ``Swift/Duration/maximumSeconds``
    ///   (about 285 years) from its first point: offsets that far cannot be replayed.
    static func duration(_ seconds: Double, file: String, index: Int) throws -> Duration {
        guard let d = Duration.checked(seconds: seconds) else {
            let years = ValueFormatting.fixed(seconds / 31_556_952, decimals: 0)
            throw ScheduleError(
                message:
                    "point \(index) comes \(years) years after the first; a replay spans at most 285 years")
        }
        return d
    }
}
