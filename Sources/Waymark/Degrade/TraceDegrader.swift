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

/// Makes a trace's fixes bad on purpose, by a ``DegradeProfile``'s models: a pure, seeded
/// transform. The same profile, seed and fixes give the same output, to the bit.
///
/// Feed it the track points in order; each comes back degraded, or not at all (a cold start, an
/// outage, a lower rate). What comes back keeps the truth beside it: the point as the trace had
/// it, the error added (north, east, up) and why. Times are the points' own (a point without one
/// counts as a second after the one before).
///
/// The models, in the order they act on a fix:
/// 1. the fix is dropped in the cold start, in an outage, or by a lower rate (bursts keep all);
/// 2. the horizontal error is the sum of the noise (Gauss–Markov per axis, its σ scaled by HDOP
///    over the profile's HDOP when satellites vary), the multipath episode's bias and correlated
///    part, the drift while standing still, and a jump's offset while one lasts;
/// 3. the vertical error is its own Gauss–Markov process;
/// 4. the reported accuracy is honest for the noise (the radius holding 68% of a 2D Gaussian of
///    that σ, 1.515σ), owns up to only part of a multipath error, and looks plausible during a
///    jump;
/// 5. the timestamp may repeat the one before, step back, or come late.
public struct TraceDegrader: Sendable {
    /// A degraded fix and its truth.
    public struct Fix: Sendable, Hashable {
        /// The point as a receiver would report it: moved, its time perhaps wrong, with
        /// `horizontalAccuracy` (and HDOP and satellites when they vary).
        public var point: GPXPoint
        /// The point as the trace had it.
        public var truth: GPXPoint
        /// Metres north, east and up from the truth.
        public var north: Double
        public var east: Double
        public var up: Double
        /// Metres from the truth, horizontally.
        public var horizontalError: Double { (north * north + east * east).squareRoot() }
        /// The models that acted on this fix beyond the noise (`multipath`, `jump`, `drift`,
        /// `clockRepeat`, `clockBackward`, `clockLate`).
        public var faults: [String]
    }

    public let profile: DegradeProfile
    public let seed: UInt64
    private var random: DegradeRandom
    private var start: Double?
    private var lastTime: Double?
    private var lastOutputTime: Double?
    private var lastKeptTime: Double?
    private var previousTruth: GPXPoint?
    private var lastSpeed = 0.0
    /// The end of the episode whose bias (or jump) was drawn last: a new episode draws anew, even
    /// when it begins before any fix outside the one before.
    private var multipathDrawnFor = -Double.infinity
    private var jumpDrawnFor = -Double.infinity
    private var northNoise: GaussMarkov?
    private var eastNoise: GaussMarkov?
    private var upNoise: GaussMarkov?
    private var satellites: GaussMarkov?
    private var multipathNorth: GaussMarkov?
    private var multipathEast: GaussMarkov?
    private var driftNorth: GaussMarkov?
    private var driftEast: GaussMarkov?
    /// The drawn episodes of each kind.
    private var multipathEpisodes = Episodes()
    private var multipathBias = (north: 0.0, east: 0.0)
    private var outageEpisodes = Episodes()
    private var jumpEpisodes = Episodes()
    private var jumpOffset = (north: 0.0, east: 0.0)
    private var burstEpisodes = Episodes()

    /// Episodes of one kind, drawn every `every` seconds on average (exponentially), each lasting
    /// `lasting` on average: in seconds from the first fix, when the next begins and when the
    /// current one ends.
    struct Episodes: Sendable {
        var next = Double.infinity
        var end = -Double.infinity

        mutating func start(every: Double, random: inout DegradeRandom) {
            next = random.exponential(mean: every)
        }

        /// Whether `t` lies in an episode; draws the next one once one ends.
        mutating func contains(_ t: Double, lasting: Double?, every: Double?, random: inout DegradeRandom) -> Bool {
            guard let every, every > 0, let lasting, lasting > 0 else { return false }
            if t < end { return true }
            while t >= next {
                end = next + random.exponential(mean: lasting)
                next = end + random.exponential(mean: every)
                if t < end { return true }
            }
            return false
        }
    }

    public init(profile: DegradeProfile, seed: UInt64) {
        self.profile = profile
        self.seed = seed
        var random = DegradeRandom(seed: seed)
        if let n = profile.noise {
            northNoise = GaussMarkov(sigma: n.sigma, tau: n.tau, random: &random)
            eastNoise = GaussMarkov(sigma: n.sigma, tau: n.tau, random: &random)
        }
        if let a = profile.altitude { upNoise = GaussMarkov(sigma: a.sigma, tau: a.tau, random: &random) }
        if let s = profile.satellites { satellites = GaussMarkov(sigma: s.sigma, tau: s.tau, random: &random) }
        if let m = profile.multipath {
            multipathNorth = GaussMarkov(sigma: m.sigma, tau: m.tau, random: &random)
            multipathEast = GaussMarkov(sigma: m.sigma, tau: m.tau, random: &random)
            multipathEpisodes.start(every: m.every, random: &random)
        }
        if let d = profile.drift {
            driftNorth = GaussMarkov(sigma: d.sigma, tau: d.tau, random: &random)
            driftEast = GaussMarkov(sigma: d.sigma, tau: d.tau, random: &random)
        }
        if let o = profile.outages, let every = o.every, every > 0 {
            outageEpisodes.start(every: every, random: &random)
        }
        if let j = profile.jumps, j.every > 0 { jumpEpisodes.start(every: j.every, random: &random) }
        if let r = profile.rate, let every = r.burstEvery, every > 0 {
            burstEpisodes.start(every: every, random: &random)
        }
        self.random = random
    }

    /// The next track point, degraded; nil when no fix comes of it.
    public mutating func degrade(_ truth: GPXPoint) -> Fix? {
        let time = truth.time?.timeIntervalSince1970 ?? ((lastTime ?? -1) + 1)
        let dt = lastTime.map { max(0, time - $0) } ?? 0
        // A repeated time (or the first fix) says nothing of the speed: the last one holds.
        let speed = dt > 0 ? Self.speed(from: previousTruth, to: truth, dt: dt) : lastSpeed
        lastSpeed = speed
        lastTime = time
        previousTruth = truth
        let t0 = start ?? time
        start = t0
        let t = time - t0

        // Every process moves on, whether or not this fix is kept: time passes for the receiver.
        let n = northNoise?.step(dt, random: &random) ?? 0
        let e = eastNoise?.step(dt, random: &random) ?? 0
        let u = upNoise?.step(dt, random: &random) ?? 0
        let sats = satellites?.step(dt, random: &random) ?? 0
        let mpN = multipathNorth?.step(dt, random: &random) ?? 0
        let mpE = multipathEast?.step(dt, random: &random) ?? 0
        let drN = driftNorth?.step(dt, random: &random) ?? 0
        let drE = driftEast?.step(dt, random: &random) ?? 0
        let inMultipath = multipathEpisodes.contains(
            t, lasting: profile.multipath?.lasting, every: profile.multipath?.every, random: &random)
        // Each episode draws its own direction of bias, and each jump its own direction.
        if inMultipath && multipathDrawnFor != multipathEpisodes.end {
            multipathBias = random.offset(length: profile.multipath?.bias ?? 0)
            multipathDrawnFor = multipathEpisodes.end
        }
        let inDrawnOutage = outageEpisodes.contains(
            t, lasting: profile.outages?.lasting, every: profile.outages?.every, random: &random)
        let inOutage =
            inDrawnOutage || (profile.outages?.at ?? []).contains { $0.count == 2 && t >= $0[0] && t < $0[1] }
        let inJump = jumpEpisodes.contains(
            t, lasting: profile.jumps?.lasting, every: profile.jumps?.every, random: &random)
        if inJump && jumpDrawnFor != jumpEpisodes.end {
            jumpOffset = random.offset(length: profile.jumps?.distance ?? 0)
            jumpDrawnFor = jumpEpisodes.end
        }
        let inBurst = burstEpisodes.contains(
            t, lasting: profile.rate?.burstLasting, every: profile.rate?.burstEvery, random: &random)

        // Whether a fix comes of it.
        if let cold = profile.coldStart, t < cold { return nil }
        if inOutage { return nil }
        if let rate = profile.rate, !inBurst, let kept = lastKeptTime, time - kept < rate.interval - 1e-9 { return nil }
        lastKeptTime = time

        // Where it is.
        var faults: [String] = []
        var hdop: Double?
        var satelliteCount: Int?
        var noiseScale = 1.0
        if let s = profile.satellites {
            // At least one satellite (a profile's minimum of 0 is 1), at most 1000.
            let count = min(1000, max(Double(max(s.minimum, 1)), (s.mean + sats).rounded()))
            satelliteCount = Int(count)
            // HDOP grows about as the inverse of the satellites in view (a geometry that keeps
            // its shape): the profile's HDOP at the mean count.
            let nominal = max(s.hdop, 0.01)
            let h = nominal * max(s.mean, 1) / count
            hdop = (h * 10).rounded() / 10
            noiseScale = h / nominal
        }
        var north = n * noiseScale
        var east = e * noiseScale
        let noiseSigma = (profile.noise?.sigma ?? 0) * noiseScale
        var reported = 1.515 * noiseSigma
        if inMultipath, let m = profile.multipath {
            north += multipathBias.north + mpN
            east += multipathBias.east + mpE
            let extra =
                ((multipathBias.north + mpN) * (multipathBias.north + mpN)
                + (multipathBias.east + mpE) * (multipathBias.east + mpE)).squareRoot()
            reported += m.reportedFraction * extra
            faults.append("multipath")
        }
        if let d = profile.drift, speed < d.belowSpeed {
            north += drN
            east += drE
            faults.append("drift")
        }
        if inJump, let j = profile.jumps {
            north += jumpOffset.north
            east += jumpOffset.east
            reported = j.reportedAccuracy
            faults.append("jump")
        }

        var point = truth
        let moved = Self.offset(truth.coordinate, north: north, east: east)
        point.coordinate = moved
        if let elevation = truth.elevation, upNoise != nil { point.elevation = elevation + u }
        point.horizontalAccuracy = max(reported, 1).rounded(toPlaces: 1)
        if profile.altitude != nil {
            point.verticalAccuracy = (1.0 * (profile.altitude?.sigma ?? 0)).rounded(toPlaces: 1)
        }
        if let hdop { point.hdop = hdop }
        if let satelliteCount { point.satellites = satelliteCount }

        // When it says it is.
        if let c = profile.clock {
            var reportedTime = time
            if let last = lastOutputTime, let p = c.repeats, random.chance(p) {
                reportedTime = last
                faults.append("clockRepeat")
            } else if let p = c.backward, random.chance(p) {
                reportedTime = (lastOutputTime ?? time) - (c.by ?? 1)
                faults.append("clockBackward")
            } else if let p = c.late, random.chance(p) {
                reportedTime = time - (c.by ?? 1)
                faults.append("clockLate")
            }
            // An untimed point stays untimed: its "time" is only its place in the trace.
            if truth.time != nil { point.time = Date(timeIntervalSince1970: reportedTime) }
            lastOutputTime = reportedTime
        } else {
            lastOutputTime = time
        }
        return Fix(
            point: point, truth: truth, north: north, east: east,
            up: point.elevation.flatMap { e in truth.elevation.map { e - $0 } } ?? 0, faults: faults)
    }

    /// Metres per second between two points of the truth (0 without a time step).
    static func speed(from a: GPXPoint?, to b: GPXPoint, dt: Double) -> Double {
        guard let a, dt > 0 else { return 0 }
        return Geodesic.distance(a.coordinate, b.coordinate) / dt
    }

    /// The coordinate `north` and `east` metres away, on the WGS 84 ellipsoid's radii of
    /// curvature at its latitude (exact enough for the tens of metres a receiver errs by).
    static func offset(_ c: Coordinate, north: Double, east: Double) -> Coordinate {
        let phi = c.latitude * .pi / 180
        let e2 = Geodesic.f * (2 - Geodesic.f)
        let w = (1 - e2 * sin(phi) * sin(phi)).squareRoot()
        let meridian = Geodesic.a * (1 - e2) / (w * w * w)
        let primeVertical = Geodesic.a / w
        let latitude = c.latitude + north / meridian * 180 / .pi
        let east = east / (primeVertical * max(cos(phi), 1e-9)) * 180 / .pi
        let longitude = (c.longitude + east).remainder(dividingBy: 360)
        return Coordinate(latitude: min(90, max(-90, latitude)), longitude: longitude)
    }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
