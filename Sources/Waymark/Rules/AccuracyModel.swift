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
/// others their distance; ``reduced`` (`kCLLocationAccuracyReduced`, iOS 14+) is −3 in Waymark.
/// Any other non-negative number of metres is allowed.
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
    /// `kCLLocationAccuracyReduced`: approximate locations, as with Precise Location off (iOS 14+).
    public static let reduced = DesiredAccuracy(rawValue: -3)

    /// The preset names, as the command line and scenario files spell them.
    public static let presets: [(name: String, value: DesiredAccuracy)] = [
        ("bestForNavigation", .bestForNavigation), ("best", .best), ("nearestTenMeters", .nearestTenMeters),
        ("hundredMeters", .hundredMeters), ("kilometer", .kilometer), ("threeKilometers", .threeKilometers),
        ("reduced", .reduced),
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
            guard digits.first != "+", let metres = Double(digits), metres.isFinite, metres >= 0 else { return nil }
            self.init(rawValue: metres)
        }
    }

    public var description: String {
        if let preset = Self.presets.first(where: { $0.value == self }) { return preset.name }
        return ValueFormatting.fixed(rawValue, decimals: 1) + " m"
    }
}

/// How the system turns fixes into what an app receives: the positioning source that
/// `desiredAccuracy` calls for, and reduced accuracy.
///
/// Core Location "turns on the hardware it needs to deliver that data in the most power-efficient
/// way" and "does its best to achieve the requested accuracy" (Apple, *Configuring your app to use
/// location services*; `desiredAccuracy`). Waymark models that with three sources. The trace's
/// positions are the truth each source measures: they are never moved to a grid, and their rate
/// is not capped; what changes is the hardware that runs, what the fix can report, and its
/// accuracy. Apple publishes no accuracy per source, so the floors below are Waymark's
/// assumptions (values Core Location commonly reports), documented as such.
///
/// | source | `desiredAccuracy` | hardware on | `horizontalAccuracy` | altitude, speed, course | rate |
/// |---|---|---|---|---|---|
/// | ``Positioning/satellite`` | bestForNavigation, best, nearestTenMeters, under 65 m | GNSS, Wi-Fi, cell | as received | as received | as received |
/// | ``Positioning/wifi`` | hundredMeters, 65 m to under 1 000 m | Wi-Fi, cell (GNSS off) | at least 65 m | invalid | as received |
/// | ``Positioning/cell`` | kilometer, threeKilometers, 1 000 m and more | cell (GNSS and Wi-Fi scans off) | at least 1 000 m | invalid | as received |
/// | ``Positioning/reduced`` | reduced, or any with reduced accuracy authorization | as needed | at least 5 000 m | invalid | at most one per 15 min |
///
/// Each request gets the cheapest source whose accuracy is at or better than it; what a coarse
/// request saves is the hardware that stays off. Apple documents no update rate for Wi-Fi or
/// cell positioning, so Waymark does not cap them (the conservative choice: an app that
/// handles every fix handles fewer); only reduced accuracy, whose rate Apple states, is capped.
///
/// Reduced accuracy is Apple's documented approximate location: "usually within 1–20
/// kilometers of the actual location", "updating the location at most a few times per hour"
/// (`kCLLocationAccuracyReduced`). Waymark moves the position to the centre of a cell of a grid
/// fixed to the Earth, about 7 km on a side (so within 5 km of the fix), and delivers at most one
/// update per 15 minutes.
public enum AccuracyModel {
    /// Where a delivered position comes from.
    public enum Positioning: String, Sendable, Hashable, CaseIterable {
        case satellite, wifi, cell, reduced

        /// Metres: the least `horizontalAccuracy` a fix from this source reports.
        public var accuracyFloor: Double {
            switch self {
            case .satellite: 0
            case .wifi: 65
            case .cell: 1000
            case .reduced: 5000
            }
        }

        /// The shortest time between two delivered updates; nil for every fix.
        public var minimumInterval: Duration? { self == .reduced ? .seconds(900) : nil }
    }

    /// The source for an app's settings on `version`.
    public static func positioning(
        desiredAccuracy: DesiredAccuracy, accuracy: AccuracyAuthorization, version: IOSVersion = .newest
    ) -> Positioning {
        if version.hasReducedAccuracy && (accuracy == .reducedAccuracy || desiredAccuracy == .reduced) {
            return .reduced
        }
        // The cheapest source that still delivers at or better than the request.
        let metres = desiredAccuracy.rawValue
        if metres < Positioning.wifi.accuracyFloor { return .satellite }
        if metres < Positioning.cell.accuracyFloor { return .wifi }
        return .cell
    }

    /// The location an app receives from `source` for the fix `location`.
    public static func apply(_ source: Positioning, to location: consuming Location) -> Location {
        guard source != .satellite else { return location }
        var out = location
        if source == .reduced { out.coordinate = coarsen(out.coordinate, radius: source.accuracyFloor) }
        out.horizontalAccuracy = max(out.horizontalAccuracy, source.accuracyFloor)
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
    ///
    /// A cell of radius *r* is a grid square about 1.4 *r* on a side, so that the coarsened
    /// position lies within *r* of the fix (on the WGS 84 ellipsoid, up to 85° of latitude).
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
