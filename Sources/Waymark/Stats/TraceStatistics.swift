#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Summary figures for a GPX trace, accumulated event by event in constant memory.
///
/// Lengths are geodesic on WGS 84, summed between consecutive points of each track segment
/// (never across segments). The 3D length adds the elevation change by Pythagoras where both
/// points have an elevation. A pair of timed points counts as moving when its speed is above
/// ``movingThreshold``.
public struct TraceStatistics: Sendable, Hashable, Codable {
    public var trackCount = 0
    public var segmentCount = 0
    public var trackPointCount = 0
    public var waypointCount = 0
    public var routeCount = 0
    public var routePointCount = 0
    /// Metres along the tracks, on the ellipsoid.
    public var length2D = 0.0
    /// Metres along the tracks, with elevation changes.
    public var length3D = 0.0
    /// Metres along the routes, on the ellipsoid.
    public var routeLength2D = 0.0
    /// Seconds: the sum over segments of last time minus first time; nil when no track point has a
    /// time.
    public var duration: Double?
    /// Seconds spent moving.
    public var movingTime = 0.0
    /// Metres covered while moving.
    public var movingDistance = 0.0
    /// Metres per second: the highest speed over at least ``maxSpeedWindow`` within a segment,
    /// measured from a timed point to the first later one at least that long after it, as the
    /// geodesic distance between the two over the time between them; the next window starts at the
    /// later point. Points milliseconds apart (repeated or jittered fixes, which gave a real file
    /// 29 802 m/s pairwise) never make a speed on their own, and a fix that jumps out and back
    /// within the window does not count; on a 1 Hz track it is the fastest pair, as before.
    public var maxSpeed: Double?
    /// Metres per second: moving distance over moving time.
    public var averageSpeed: Double? { movingTime > 0 ? movingDistance / movingTime : nil }
    /// Metres climbed and descended (raw sums of elevation changes within segments).
    public var climb = 0.0
    public var descent = 0.0
    public var minElevation: Double?
    public var maxElevation: Double?
    public var startTime: Date?
    public var endTime: Date?
    /// Box around every point: waypoints, route points and track points.
    public var bounds: Bounds?
    /// Box around track points only.
    public var trackBounds: Bounds?

    /// Speed in m/s above which a pair of points counts as moving (1 km/h).
    public static let movingThreshold = 1.0 / 3.6
    /// Seconds: the least time a ``maxSpeed`` is measured over.
    public static let maxSpeedWindow = 1.0

    // Running state within the current segment or route.
    private var previous: GPXPoint?
    /// Where and when the window ``maxSpeed`` is measured over began.
    private var speedAnchorCoordinate: Coordinate?
    private var speedAnchorTime: Date?
    private var firstTime: Date?
    private var lastTime: Date?
    private var previousRoutePoint: Coordinate?

    public init() {}

    private enum CodingKeys: String, CodingKey {
        case trackCount, segmentCount, trackPointCount, waypointCount, routeCount, routePointCount
        case length2D, length3D, routeLength2D, duration, movingTime, movingDistance, maxSpeed
        case climb, descent, minElevation, maxElevation, startTime, endTime, bounds, trackBounds
    }

    /// Folds one reader event into the figures.
    public mutating func add(_ event: GPXEvent) {
        switch event {
        case .waypoint(let p):
            waypointCount += 1
            bounds.extend(p.coordinate)
        case .routeStart:
            routeCount += 1
            previousRoutePoint = nil
        case .routePoint(let p):
            routePointCount += 1
            bounds.extend(p.coordinate)
            if let q = previousRoutePoint { routeLength2D += Geodesic.distance(q, p.coordinate) }
            previousRoutePoint = p.coordinate
        case .trackStart:
            trackCount += 1
        case .segmentStart:
            segmentCount += 1
            previous = nil
            speedAnchorTime = nil
            firstTime = nil
            lastTime = nil
        case .trackPoint(let p):
            addTrackPoint(p)
        case .segmentEnd:
            if let firstTime, let lastTime {
                duration = (duration ?? 0) + lastTime.timeIntervalSince(firstTime)
            }
            previous = nil
            speedAnchorTime = nil
        default:
            break
        }
    }

    private mutating func addTrackPoint(_ p: GPXPoint) {
        trackPointCount += 1
        bounds.extend(p.coordinate)
        trackBounds.extend(p.coordinate)
        if let e = p.elevation {
            minElevation = min(minElevation ?? e, e)
            maxElevation = max(maxElevation ?? e, e)
        }
        if let t = p.time {
            if firstTime == nil { firstTime = t }
            lastTime = t
            startTime = min(startTime ?? t, t)
            endTime = max(endTime ?? t, t)
        }
        defer { previous = p }
        if let t = p.time {
            if let anchorTime = speedAnchorTime, let anchor = speedAnchorCoordinate {
                let elapsed = t.timeIntervalSince(anchorTime)
                if elapsed < 0 {
                    (speedAnchorCoordinate, speedAnchorTime) = (p.coordinate, t)  // time went back: start again
                } else if elapsed >= Self.maxSpeedWindow {
                    let speed = Geodesic.distance(anchor, p.coordinate) / elapsed
                    maxSpeed = max(maxSpeed ?? speed, speed)
                    (speedAnchorCoordinate, speedAnchorTime) = (p.coordinate, t)
                }
            } else {
                (speedAnchorCoordinate, speedAnchorTime) = (p.coordinate, t)
            }
        }
        guard let q = previous else { return }
        let d = Geodesic.distance(q.coordinate, p.coordinate)
        length2D += d
        if let e0 = q.elevation, let e1 = p.elevation {
            let de = e1 - e0
            length3D += (d * d + de * de).squareRoot()
            if de > 0 { climb += de } else { descent -= de }
        } else {
            length3D += d
        }
        if let t0 = q.time, let t1 = p.time {
            let dt = t1.timeIntervalSince(t0)
            if dt > 0 && d / dt > Self.movingThreshold {
                movingTime += dt
                movingDistance += d
            }
        }
    }
}

extension TraceStatistics {
    /// One JSON object with every figure; absent values are `null`, never left out.
    ///
    /// Lengths are metres, durations seconds, speeds metres per second, times ISO 8601 UTC.
    public func jsonString() -> String {
        func number(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "null" }
            return ValueFormatting.fixed(v, decimals: 3)
        }
        func time(_ t: Date?) -> String { t.map { "\"\(ValueFormatting.iso8601($0))\"" } ?? "null" }
        func box(_ b: Bounds?) -> String {
            guard let b else { return "null" }
            return "{\"minLatitude\":\(ValueFormatting.fixed(b.minLatitude, decimals: 9)),"
                + "\"minLongitude\":\(ValueFormatting.fixed(b.minLongitude, decimals: 9)),"
                + "\"maxLatitude\":\(ValueFormatting.fixed(b.maxLatitude, decimals: 9)),"
                + "\"maxLongitude\":\(ValueFormatting.fixed(b.maxLongitude, decimals: 9))}"
        }
        let fields: [(String, String)] = [
            ("trackCount", String(trackCount)),
            ("segmentCount", String(segmentCount)),
            ("trackPointCount", String(trackPointCount)),
            ("waypointCount", String(waypointCount)),
            ("routeCount", String(routeCount)),
            ("routePointCount", String(routePointCount)),
            ("length2D", number(length2D)),
            ("length3D", number(length3D)),
            ("routeLength2D", number(routeLength2D)),
            ("duration", number(duration)),
            ("movingTime", number(movingTime)),
            ("movingDistance", number(movingDistance)),
            ("maxSpeed", number(maxSpeed)),
            ("averageSpeed", number(averageSpeed)),
            ("climb", number(climb)),
            ("descent", number(descent)),
            ("minElevation", number(minElevation)),
            ("maxElevation", number(maxElevation)),
            ("startTime", time(startTime)),
            ("endTime", time(endTime)),
            ("bounds", box(bounds)),
            ("trackBounds", box(trackBounds)),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
