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

/// The units a page or a picture shows its quantities in. Values are kept in SI units (metres,
/// metres per second, degrees Celsius) and converted only for display.
///
/// | units | distance | short distance, elevation | speed | temperature |
/// |---|---|---|---|---|
/// | metric | km | m | km/h | °C |
/// | imperial | mi (1609.344 m) | ft (0.3048 m) | mph | °F |
/// | nautical | NM (1852 m) | m | kn (1852 m/h) | °C |
public enum DisplayUnits: String, Sendable, Hashable, CaseIterable, Codable {
    case metric, imperial, nautical

    /// Metres in one long distance unit, and its symbol.
    public var longDistance: (metres: Double, symbol: String) {
        switch self {
        case .metric: (1000, "km")
        case .imperial: (1609.344, "mi")
        case .nautical: (1852, "NM")
        }
    }

    /// Metres in one short distance unit (elevations, and short distances), and its symbol.
    public var shortDistance: (metres: Double, symbol: String) {
        switch self {
        case .metric, .nautical: (1, "m")
        case .imperial: (0.3048, "ft")
        }
    }

    /// Metres per second in one speed unit, and its symbol.
    public var speed: (metresPerSecond: Double, symbol: String) {
        switch self {
        case .metric: (1 / 3.6, "km/h")
        case .imperial: (1609.344 / 3600, "mph")
        case .nautical: (1852.0 / 3600, "kn")
        }
    }

    /// The temperature symbol.
    public var temperatureSymbol: String { self == .imperial ? "°F" : "°C" }

    /// A temperature in degrees Celsius, in these units.
    public func temperature(_ celsius: Double) -> Double {
        self == .imperial ? celsius * 9 / 5 + 32 : celsius
    }

    /// A distance for people: the long unit from one long unit on (or from a tenth of a nautical
    /// mile, which sailors read in tenths), else the short unit.
    public func distance(_ metres: Double) -> String {
        let long = longDistance
        let threshold = self == .nautical ? long.metres / 10 : (self == .imperial ? long.metres / 4 : long.metres)
        if abs(metres) >= threshold {
            return "\(ValueFormatting.fixed(metres / long.metres, decimals: 2)) \(long.symbol)"
        }
        let short = shortDistance
        return "\(ValueFormatting.fixed(metres / short.metres, decimals: self == .imperial ? 0 : 1)) \(short.symbol)"
    }

    /// A speed for people, with one decimal.
    public func speedText(_ metresPerSecond: Double) -> String {
        "\(ValueFormatting.fixed(metresPerSecond / speed.metresPerSecond, decimals: 1)) \(speed.symbol)"
    }

    /// The largest round distance (1, 2 or 5 times a power of ten of the long or the short unit)
    /// of at most `limit` metres, for a scale bar: its length in metres and its label.
    public func roundDistance(atMost limit: Double) -> (metres: Double, label: String) {
        guard limit.isFinite, limit > 0 else { return (shortDistance.metres, "1 \(shortDistance.symbol)") }
        func round(_ unit: Double) -> Double? {
            let units = limit / unit
            guard units >= 1e-9 else { return nil }
            var power = pow(10, (log10(units)).rounded(.down))
            if power * 10 <= units { power *= 10 }
            return [5.0, 2.0, 1.0].map { $0 * power }.first { $0 <= units * (1 + 1e-12) } ?? power
        }
        let long = longDistance
        let short = shortDistance
        // The long unit once a whole one fits (a tenth of a nautical mile), else the short unit.
        let longFrom = self == .nautical ? 0.1 : 1
        if let n = round(long.metres), n >= longFrom {
            return (n * long.metres, "\(Self.number(n)) \(long.symbol)")
        }
        let n = max(1, round(short.metres) ?? 1)
        return (n * short.metres, "\(Self.number(n)) \(short.symbol)")
    }

    /// A round number without needless decimals: 5, 0.2, 2000.
    static func number(_ v: Double) -> String {
        for decimals in 0...3 {
            let text = ValueFormatting.fixed(v, decimals: decimals)
            if abs((Double(text) ?? v) - v) < 1e-9 * max(1, abs(v)) { return text }
        }
        return ValueFormatting.fixed(v, decimals: 3)
    }
}

/// The time zone a page shows its times in: UTC, a fixed offset, or a zone of the tz database
/// with its daylight-saving rules.
public struct DisplayTimeZone: Sendable, Hashable {
    /// What the user named: `UTC`, `+02:00`, `Europe/Berlin`.
    public let name: String
    private let zone: TimeZone?

    /// UTC.
    public static let utc = DisplayTimeZone(name: "UTC", zone: nil)

    private init(name: String, zone: TimeZone?) {
        self.name = name
        self.zone = zone
    }

    /// A zone by its tz database name (`Europe/Berlin`), `UTC`/`Z`, or a fixed offset (`+02:00`,
    /// `-0530`, `UTC+2`); nil when it is none of these.
    public init?(_ text: String) {
        let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        if ["utc", "z", "gmt", "etc/utc"].contains(trimmed.lowercased()) {
            self = .utc
            return
        }
        var rest = Substring(trimmed)
        for prefix in ["UTC", "GMT", "utc", "gmt"] where rest.hasPrefix(prefix) {
            rest = rest.dropFirst(prefix.count)
        }
        if let sign = rest.first, sign == "+" || sign == "-" || sign == "−" {
            let digits = rest.dropFirst().filter { $0 != ":" }
            guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber })
            else { return nil }
            let hours: Int
            let minutes: Int
            if digits.count <= 2 {
                hours = Int(digits) ?? 0
                minutes = 0
            } else {
                hours = Int(digits.prefix(digits.count - 2)) ?? 0
                minutes = Int(digits.suffix(2)) ?? 0
            }
            guard hours <= 14, minutes < 60 else { return nil }
            let seconds = (hours * 3600 + minutes * 60) * (sign == "+" ? 1 : -1)
            guard let zone = TimeZone(secondsFromGMT: seconds) else { return nil }
            self.init(name: trimmed, zone: zone)
            return
        }
        // A tz database name: letters, digits, '/', '_', '-', '+'.
        guard !trimmed.isEmpty, trimmed.contains("/") || trimmed.allSatisfy({ $0.isLetter }),
            let zone = TimeZone(identifier: trimmed)
        else { return nil }
        self.init(name: trimmed, zone: zone)
    }

    /// Seconds east of UTC at `t` (seconds since 1970).
    public func offset(at t: Double) -> Int {
        guard let zone, t.isFinite, abs(t) < 1e12 else { return 0 }
        return zone.secondsFromGMT(for: Date(timeIntervalSince1970: t))
    }

    /// Whether this is UTC itself (times are then written with "UTC").
    public var isUTC: Bool { zone == nil }

    /// The offsets in force from `t0` to `t1` (seconds since 1970): the offset at `t0`, then each
    /// change up to `t1`, as (from, seconds east of UTC). At most 1000 changes.
    public func offsets(from t0: Double, to t1: Double) -> [(from: Double, offset: Int)] {
        guard t0.isFinite, t1.isFinite else { return [(0, 0)] }
        var out = [(from: t0, offset: offset(at: t0))]
        guard let zone, t1 > t0 else { return out }
        var date = Date(timeIntervalSince1970: t0)
        while out.count < 1000, let next = zone.nextDaylightSavingTimeTransition(after: date),
            next.timeIntervalSince1970 <= t1
        {
            let t = next.timeIntervalSince1970
            let o = offset(at: t)
            if o != out[out.count - 1].offset { out.append((t, o)) }
            date = next
        }
        return out
    }

    /// `+02:00`, `−05:30`, or `UTC`.
    public static func offsetText(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let m = abs(seconds) / 60
        let h = m / 60
        return "\(sign)\(h < 10 ? "0" : "")\(h):\(m % 60 < 10 ? "0" : "")\(m % 60)"
    }

    /// `2024-05-01 10:03:20 +02:00` (or `… UTC`): `t` in this zone, to the second.
    public func text(_ t: Double) -> String {
        let o = offset(at: t)
        let iso = ValueFormatting.iso8601(Date(timeIntervalSince1970: t + Double(o)))
        let clock = String(iso.prefix(19).map { $0 == "T" ? " " : $0 })
        return clock + (isUTC ? " UTC" : " " + Self.offsetText(o))
    }
}
