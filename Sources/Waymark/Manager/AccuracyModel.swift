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

/// The accuracy an app asks for, in metres, as CoreLocation's `CLLocationAccuracy` constants.
///
/// The presets carry CoreLocation's values: ``bestForNavigation`` is −2, ``best`` −1, and the
/// others their distance. Any other non-negative number of metres is allowed.
public struct DesiredAccuracy: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Metres, or −1 (best) and −2 (best for navigation).
    public var rawValue: Double
    public init(rawValue: Double) { self.rawValue = rawValue }

    public static let bestForNavigation = DesiredAccuracy(rawValue: -2)
    public static let best = DesiredAccuracy(rawValue: -1)
    public static let nearestTenMeters = DesiredAccuracy(rawValue: 10)
    public static let hundredMeters = DesiredAccuracy(rawValue: 100)
    public static let kilometer = DesiredAccuracy(rawValue: 1000)
    public static let threeKilometers = DesiredAccuracy(rawValue: 3000)

    /// The preset names, as the command line and scenario files spell them.
    public static let presets: [(name: String, value: DesiredAccuracy)] = [
        ("bestForNavigation", .bestForNavigation), ("best", .best), ("nearestTenMeters", .nearestTenMeters),
        ("hundredMeters", .hundredMeters), ("kilometer", .kilometer), ("threeKilometers", .threeKilometers),
    ]

    /// Parses a preset name, a short form (`10m`, `100m`, `1km`, `3km`) or a number of metres.
    public init?(parsing text: String) {
        if let preset = Self.presets.first(where: { $0.name == text }) {
            self = preset.value
            return
        }
        switch text {
        case "10m": self = .nearestTenMeters
        case "100m": self = .hundredMeters
        case "1km": self = .kilometer
        case "3km": self = .threeKilometers
        default:
            var digits = Substring(text)
            if digits.hasSuffix("m") { digits = digits.dropLast() }
            guard let metres = Double(digits), metres.isFinite, metres >= 0 else { return nil }
            self.init(rawValue: metres)
        }
    }

    public var description: String {
        if let preset = Self.presets.first(where: { $0.value == self }) { return preset.name }
        return ValueFormatting.fixed(rawValue, decimals: 1) + " m"
    }
}

/// How the system turns fixes into what an app receives at a given accuracy.
///
/// Fine levels pass fixes through. Coarse levels model low-power positioning (Wi-Fi and cell
/// towers instead of GNSS): the position is snapped to the centre of a grid cell, the reported
/// accuracy is at least the level's radius, the altitude, speed and course are invalid, and
/// updates come at most once per interval. Reduced accuracy authorization always uses the last
/// row, whatever `desiredAccuracy` says.
///
/// | tier | `desiredAccuracy` | position | `horizontalAccuracy` | altitude, speed, course | at most one update per |
/// |---|---|---|---|---|---|
/// | ``Tier/precise`` | bestForNavigation, best, nearestTenMeters, ≤ 10 m | as received | as received | as received | fix |
/// | ``Tier/hundredMeters`` | hundredMeters, 10–100 m | 100 m cell | ≥ 100 m | invalid | 10 s |
/// | ``Tier/kilometer`` | kilometer, 100–1000 m | 1 km cell | ≥ 1000 m | invalid | 60 s |
/// | ``Tier/threeKilometers`` | threeKilometers, > 1000 m | 3 km cell | ≥ 3000 m | invalid | 180 s |
/// | ``Tier/reduced`` | any, with reduced accuracy | 5 km cell | ≥ 5000 m | invalid | 900 s (4 an hour) |
///
/// A cell of radius *r* is a grid square about 1.4 *r* on a side, so that the coarsened position
/// lies within *r* of the fix (on the WGS 84 ellipsoid, up to 85° of latitude). The grid is fixed
/// to the Earth, so the same place always gives the same coarsened position, and a fix that
/// stays in one cell gives the same coordinate again.
public struct AccuracyModel: Sendable, Hashable {
    /// One row of the table.
    public enum Tier: String, Sendable, Hashable, CaseIterable {
        case precise, hundredMeters, kilometer, threeKilometers, reduced

        /// Metres: the radius within which a coarsened position lies; nil for ``precise``.
        public var radius: Double? {
            switch self {
            case .precise: nil
            case .hundredMeters: 100
            case .kilometer: 1000
            case .threeKilometers: 3000
            case .reduced: 5000
            }
        }

        /// The shortest time between two delivered updates; nil for every fix.
        public var minimumInterval: Duration? {
            switch self {
            case .precise: nil
            case .hundredMeters: .seconds(10)
            case .kilometer: .seconds(60)
            case .threeKilometers: .seconds(180)
            case .reduced: .seconds(900)
            }
        }
    }

    /// The tier for an app's settings.
    public static func tier(desiredAccuracy: DesiredAccuracy, accuracy: AccuracyAuthorization) -> Tier {
        if accuracy == .reducedAccuracy { return .reduced }
        let metres = desiredAccuracy.rawValue
        if metres <= 10 { return .precise }
        if metres <= 100 { return .hundredMeters }
        if metres <= 1000 { return .kilometer }
        return .threeKilometers
    }

    /// The location an app at `tier` receives for `location`.
    public static func apply(_ tier: Tier, to location: Location) -> Location {
        guard let radius = tier.radius else { return location }
        var out = location
        out.coordinate = coarsen(location.coordinate, radius: radius)
        out.horizontalAccuracy = max(location.horizontalAccuracy, radius)
        out.altitude = 0
        out.ellipsoidalAltitude = nil
        out.verticalAccuracy = -1
        out.speed = -1
        out.speedAccuracy = -1
        out.course = -1
        out.courseAccuracy = -1
        return out
    }

    /// Metres per degree of latitude on a sphere of the Earth's mean radius (6 371 008.8 m).
    static let metresPerDegree = 6_371_008.8 * Double.pi / 180

    /// The centre of the grid cell of radius `radius` metres that holds `c`.
    public static func coarsen(_ c: Coordinate, radius: Double) -> Coordinate {
        let side = 1.4 * radius
        let latStep = side / metresPerDegree
        let row = ((c.latitude + 90) / latStep).rounded(.down)
        let south = -90 + row * latStep
        let north = min(90, south + latStep)
        let centreLatitude = (south + north) / 2
        // The row is widest at its edge nearer the equator; cells are sized there, so that they
        // are never wider than `side` anywhere in the row.
        let widest = south <= 0 && north >= 0 ? 0 : min(abs(south), abs(north))
        let metresPerLonDegree = metresPerDegree * cos(widest * .pi / 180)
        let cells = max(1, (360 * metresPerLonDegree / side).rounded(.up))
        let lonStep = 360 / cells
        let column = min(cells - 1, ((c.longitude + 180) / lonStep).rounded(.down))
        let centreLongitude = -180 + (column + 0.5) * lonStep
        return Coordinate(latitude: centreLatitude, longitude: centreLongitude)
    }
}
