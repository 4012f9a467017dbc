/// How to make a trace bad on purpose: the models a degradation combines, each with its numbers.
/// Every model is optional; a profile without any leaves the trace as it is.
///
/// Profiles are small YAML files (`profiles/degrade/*.yaml`) that users copy and change; the keys
/// are the property names below. Distances are metres, times seconds, rates "every N seconds on
/// average". `docs/degrade.md` gives each model's equations and where its default numbers come
/// from.
public struct DegradeProfile: Sendable, Hashable, Codable {
    public var name: String
    public var description: String?
    public var noise: Noise?
    public var multipath: Multipath?
    public var outages: Outages?
    public var jumps: Jumps?
    public var drift: Drift?
    /// Seconds from the first fix with no fix at all (time to first fix).
    public var coldStart: Double?
    public var satellites: Satellites?
    public var altitude: Altitude?
    public var clock: ClockFaults?
    public var rate: RateChange?

    public init(name: String) { self.name = name }

    /// The receiver's everyday error: a first-order Gauss–Markov process on each horizontal axis.
    public struct Noise: Sendable, Hashable, Codable {
        /// Metres, per axis (north, east).
        public var sigma: Double
        /// Seconds.
        public var tau: Double
        public init(sigma: Double, tau: Double) {
            self.sigma = sigma
            self.tau = tau
        }
    }

    /// Reflections off buildings: episodes of a biased, correlated error, which the receiver's
    /// reported accuracy covers only in part.
    public struct Multipath: Sendable, Hashable, Codable {
        /// Metres, per axis, of the correlated part, and its correlation time in seconds.
        public var sigma: Double
        public var tau: Double
        /// Metres: the bias of an episode, in a direction drawn for it.
        public var bias: Double
        /// Seconds: an episode begins every this long on average (exponentially), and lasts this
        /// long on average.
        public var every: Double
        public var lasting: Double
        /// The share of the multipath error the reported accuracy owns up to (0 to 1).
        public var reportedFraction: Double

        public init(sigma: Double, tau: Double, bias: Double, every: Double, lasting: Double, reportedFraction: Double)
        {
            self.sigma = sigma
            self.tau = tau
            self.bias = bias
            self.every = every
            self.lasting = lasting
            self.reportedFraction = reportedFraction
        }
    }

    /// No fix for a while: intervals given (seconds from the first fix) and drawn.
    public struct Outages: Sendable, Hashable, Codable {
        /// `[from, to]` seconds from the first fix.
        public var at: [[Double]]?
        /// Seconds: an outage begins every this long on average, and lasts this long on average.
        public var every: Double?
        public var lasting: Double?

        public init(at: [[Double]]? = nil, every: Double? = nil, lasting: Double? = nil) {
            self.at = at
            self.every = every
            self.lasting = lasting
        }
    }

    /// A jump to a wrong position and back, with an accuracy that looks plausible.
    public struct Jumps: Sendable, Hashable, Codable {
        public var every: Double
        /// Metres away, and seconds there.
        public var distance: Double
        public var lasting: Double
        /// Metres: the accuracy the receiver reports while away.
        public var reportedAccuracy: Double

        public init(every: Double, distance: Double, lasting: Double, reportedAccuracy: Double) {
            self.every = every
            self.distance = distance
            self.lasting = lasting
            self.reportedAccuracy = reportedAccuracy
        }
    }

    /// The position wanders while the receiver stands still (below `belowSpeed` m/s).
    public struct Drift: Sendable, Hashable, Codable {
        public var sigma: Double
        public var tau: Double
        public var belowSpeed: Double

        public init(sigma: Double, tau: Double, belowSpeed: Double) {
            self.sigma = sigma
            self.tau = tau
            self.belowSpeed = belowSpeed
        }
    }

    /// Satellites in view come and go; HDOP rises as they fall, and the noise with it
    /// (σ scales with HDOP / `hdop`).
    public struct Satellites: Sendable, Hashable, Codable {
        /// The mean count, its spread and correlation time, and the fewest that still fix.
        public var mean: Double
        public var sigma: Double
        public var tau: Double
        public var minimum: Int
        /// The HDOP at the mean count.
        public var hdop: Double

        public init(mean: Double, sigma: Double, tau: Double, minimum: Int, hdop: Double) {
            self.mean = mean
            self.sigma = sigma
            self.tau = tau
            self.minimum = minimum
            self.hdop = hdop
        }
    }

    /// Vertical error, usually far larger than the horizontal.
    public struct Altitude: Sendable, Hashable, Codable {
        public var sigma: Double
        public var tau: Double

        public init(sigma: Double, tau: Double) {
            self.sigma = sigma
            self.tau = tau
        }
    }

    /// Timestamps that repeat, step back, or come late.
    public struct ClockFaults: Sendable, Hashable, Codable {
        /// The chance per fix of each fault.
        public var repeats: Double?
        public var backward: Double?
        public var late: Double?
        /// Seconds a backward step or a late fix is off by.
        public var by: Double?

        public init(repeats: Double? = nil, backward: Double? = nil, late: Double? = nil, by: Double? = nil) {
            self.repeats = repeats
            self.backward = backward
            self.late = late
            self.by = by
        }
    }

    /// Fewer fixes: one every `interval` seconds, with bursts of every fix.
    public struct RateChange: Sendable, Hashable, Codable {
        public var interval: Double
        public var burstEvery: Double?
        public var burstLasting: Double?

        public init(interval: Double, burstEvery: Double? = nil, burstLasting: Double? = nil) {
            self.interval = interval
            self.burstEvery = burstEvery
            self.burstLasting = burstLasting
        }
    }
}
