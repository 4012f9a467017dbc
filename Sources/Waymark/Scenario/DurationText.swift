/// Durations as people write them: `90s`, `2m`, `1h5m`, `1.5s`, `250ms`, `3d`, or a bare number
/// of seconds.
public enum DurationText {
    /// The duration `text` spells, or nil. Units: `ms`, `s`, `m` (minutes), `h`, `d`; parts add up
    /// (`1h5m30s`). Negative durations are not allowed, nor any beyond
    /// ``Swift/Duration/maximumSeconds`` (about 285 years).
    public static func parse(_ text: String) -> Duration? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return make(seconds) }
        var total = 0.0
        var i = 0
        while i < bytes.count {
            let start = i
            while i < bytes.count, (bytes[i] >= 0x30 && bytes[i] <= 0x39) || bytes[i] == UInt8(ascii: ".") { i += 1 }
            guard i > start, let number = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
            let unitStart = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "a"), bytes[i] <= UInt8(ascii: "z") { i += 1 }
            let scale: Double
            switch String(decoding: bytes[unitStart..<i], as: UTF8.self) {
            case "ms": scale = 0.001
            case "s": scale = 1
            case "m", "min": scale = 60
            case "h": scale = 3600
            case "d": scale = 86_400
            default: return nil
            }
            total += number * scale
        }
        return total.isFinite ? make(total) : nil
    }

    /// `d` written the way ``parse(_:)`` reads it: `1h5m`, `90s` → `1m30s`, `0.25s`.
    public static func format(_ d: Duration) -> String {
        let (seconds, atto) = d.components
        var s = seconds
        var parts = ""
        if s >= 3600 {
            parts += "\(s / 3600)h"
            s %= 3600
        }
        if s >= 60 {
            parts += "\(s / 60)m"
            s %= 60
        }
        if s > 0 || atto > 0 || parts.isEmpty {
            if atto > 0 {
                parts += ValueFormatting.fixed(Double(s) + Double(atto) / 1e18, decimals: 3) + "s"
            } else {
                parts += "\(s)s"
            }
        }
        return parts
    }

    private static func make(_ seconds: Double) -> Duration? { Duration.checked(seconds: seconds) }
}

extension Duration {
    /// The longest duration or time offset Waymark handles, in seconds: 9 × 10⁹ s, about 285
    /// years. Durations are kept to the nanosecond in 64 bits (at most about 9.22 × 10⁹ s).
    public static let maximumSeconds: Double = 9e9

    /// `seconds` to the nanosecond, or nil when it is not a number or beyond ±``maximumSeconds``.
    ///
    /// Every duration and time offset that Waymark makes from a number it read (an option, a
    /// scenario key, a trace's times, a store's rows) goes through here, so none can trap.
    public static func checked(seconds: Double) -> Duration? {
        guard seconds.isFinite, abs(seconds) <= maximumSeconds else { return nil }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// `seconds` to the nanosecond, held at ±``maximumSeconds`` beyond them (not a number counts
    /// as beyond): for values that are not the user's to correct, such as a damaged store row or
    /// a wait that long at a slow rate.
    public static func saturating(seconds: Double) -> Duration {
        checked(seconds: seconds) ?? .seconds(seconds < 0 ? -maximumSeconds : maximumSeconds)
    }
}
