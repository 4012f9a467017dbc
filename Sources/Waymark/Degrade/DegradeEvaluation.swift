#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Measures positions against the truth of a degraded trace: the fixes an app received, or the
/// track its own filter made of them. The same seeded bad day, run after run, measures whether a
/// change to the filter helped.
///
/// The truth at a time is the trace's own position then, interpolated linearly (in degrees,
/// which over one second's step is exact to well under a millimetre) between the points on either
/// side; a time outside the trace, or in a gap longer than ``maxTruthGap``, has no truth and is
/// not counted.
public struct DegradeEvaluation: Sendable {
    /// What a set of positions scored.
    public struct Report: Sendable, Hashable {
        /// Positions measured (those with a truth at their time).
        public var count = 0
        /// Metres from the truth, horizontally: the root mean square, the 95th percentile (the
        /// nearest-rank one) and the worst.
        public var rms = 0.0
        public var p95 = 0.0
        public var worst = 0.0
        /// Gaps of more than `gap` seconds between positions, and the seconds after each before a
        /// position lay within `recoveredWithin` metres of the truth again (from the gap's end).
        /// A gap never recovered from counts as lasting to the last position.
        public var gaps = 0
        public var recoveryMedian: Double?
        public var recoveryWorst: Double?
    }

    /// Seconds: a longer gap between the trace's own points has no truth inside it.
    public static let maxTruthGap = 30.0

    private let times: [Double]
    private let coordinates: [Coordinate]

    /// The truth: the trace's track points with times, in any order.
    public init(truth: [GPXPoint]) {
        let timed = truth.compactMap { p in p.time.map { ($0.timeIntervalSince1970, p.coordinate) } }
            .sorted { $0.0 < $1.0 }
        times = timed.map(\.0)
        coordinates = timed.map(\.1)
    }

    /// Where the truth was at `t` (seconds since 1970), or nil.
    public func truth(at t: Double) -> Coordinate? {
        guard let last = times.last, let first = times.first, t >= first, t <= last else { return nil }
        var lo = 0
        var hi = times.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if times[mid] <= t { lo = mid } else { hi = mid }
        }
        if times[lo] == t { return coordinates[lo] }
        if times[hi] == t { return coordinates[hi] }
        let span = times[hi] - times[lo]
        guard span <= Self.maxTruthGap, span > 0 else { return nil }
        let f = (t - times[lo]) / span
        let a = coordinates[lo]
        let b = coordinates[hi]
        var dLon = b.longitude - a.longitude
        if dLon > 180 { dLon -= 360 }
        if dLon < -180 { dLon += 360 }
        var lon = a.longitude + f * dLon
        if lon > 180 { lon -= 360 }
        if lon < -180 { lon += 360 }
        return Coordinate(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: lon)
    }

    /// Scores `positions` (time in seconds since 1970, and where), in time order.
    public func evaluate(
        _ positions: [(time: Double, coordinate: Coordinate)], gap: Double = 10, recoveredWithin: Double = 15
    ) -> Report {
        var report = Report()
        var errors: [Double] = []
        var sumOfSquares = 0.0
        var recoveries: [Double] = []
        var previousTime: Double?
        var gapEnded: Double?
        for (time, coordinate) in positions {
            if let p = previousTime, time - p > gap {
                if let open = gapEnded { recoveries.append(p - open) }
                report.gaps += 1
                gapEnded = time
            }
            previousTime = time
            guard let truth = truth(at: time) else { continue }
            let error = Geodesic.distance(coordinate, truth)
            errors.append(error)
            sumOfSquares += error * error
            if let open = gapEnded, error <= recoveredWithin {
                recoveries.append(time - open)
                gapEnded = nil
            }
        }
        if let open = gapEnded, let last = previousTime { recoveries.append(last - open) }
        report.count = errors.count
        guard !errors.isEmpty else { return report }
        errors.sort()
        report.rms = (sumOfSquares / Double(errors.count)).squareRoot()
        report.p95 = errors[max(0, Int((0.95 * Double(errors.count)).rounded(.up)) - 1)]
        report.worst = errors[errors.count - 1]
        if !recoveries.isEmpty {
            recoveries.sort()
            report.recoveryMedian = recoveries[recoveries.count / 2]
            report.recoveryWorst = recoveries[recoveries.count - 1]
        }
        return report
    }
}
