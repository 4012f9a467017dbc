#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The random numbers of a degradation: xoshiro256** seeded through SplitMix64, so that a seed
/// gives the same numbers on every machine and every run (Swift's own generator does not promise
/// that). Pure: a value, no global state.
public struct DegradeRandom: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64
    /// Box–Muller gives two normal numbers; the second waits here.
    private var spareNormal: Double?

    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// Uniform in [0, 1), 53 bits.
    public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Standard normal (mean 0, standard deviation 1), by Box–Muller.
    public mutating func normal() -> Double {
        if let spare = spareNormal {
            spareNormal = nil
            return spare
        }
        var u = uniform()
        while u <= 0 { u = uniform() }
        let v = uniform()
        let r = (-2 * log(u)).squareRoot()
        spareNormal = r * sin(2 * .pi * v)
        return r * cos(2 * .pi * v)
    }

    /// Exponential with this mean.
    public mutating func exponential(mean: Double) -> Double {
        var u = uniform()
        while u <= 0 { u = uniform() }
        return -mean * log(u)
    }

    /// Metres north and east of an offset of `length` metres in a direction drawn uniformly.
    public mutating func offset(length: Double) -> (north: Double, east: Double) {
        let angle = uniform() * 2 * .pi
        return (length * cos(angle), length * sin(angle))
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { uniform() < p }
}

/// A first-order Gauss–Markov process: the standard model of a GNSS receiver's slowly varying
/// position error (Brown & Hwang, *Introduction to Random Signals and Applied Kalman Filtering*,
/// 4th ed., §2.9; Rankin 1994 for its use in GPS error budgets).
///
/// In discrete time, over a step of `Δt` seconds,
/// `x(k+1) = φ·x(k) + σ·√(1 − φ²)·w(k)` with `φ = exp(−Δt/τ)` and `w` standard normal: its
/// variance is σ² at every step (it starts stationary) and its autocorrelation at lag `Δ` is
/// `exp(−Δ/τ)`, whatever the steps are.
public struct GaussMarkov: Sendable, Hashable {
    /// The standard deviation, in the unit of the value.
    public let sigma: Double
    /// The correlation time, in seconds.
    public let tau: Double
    public private(set) var value: Double

    /// A process started in its stationary distribution.
    public init(sigma: Double, tau: Double, random: inout DegradeRandom) {
        self.sigma = sigma
        self.tau = max(tau, 1e-9)
        value = sigma * random.normal()
    }

    /// Moves the process on by `dt` seconds and returns its value.
    public mutating func step(_ dt: Double, random: inout DegradeRandom) -> Double {
        guard dt > 0 else { return value }
        let phi = exp(-dt / tau)
        value = phi * value + sigma * (1 - phi * phi).squareRoot() * random.normal()
        return value
    }
}
