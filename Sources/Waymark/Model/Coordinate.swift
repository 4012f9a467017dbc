/// A position on the WGS 84 ellipsoid.
public struct Coordinate: Sendable, Hashable, Codable {
    /// Degrees north of the equator, WGS 84, in -90...90.
    public var latitude: Double
    /// Degrees east of the prime meridian, WGS 84, in -180...180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when both values are finite and in range.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }
}

/// A latitude/longitude box.
public struct Bounds: Sendable, Hashable, Codable {
    /// Degrees, WGS 84.
    public var minLatitude: Double
    public var minLongitude: Double
    public var maxLatitude: Double
    public var maxLongitude: Double

    public init(minLatitude: Double, minLongitude: Double, maxLatitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.minLongitude = minLongitude
        self.maxLatitude = maxLatitude
        self.maxLongitude = maxLongitude
    }

    public init(_ c: Coordinate) {
        self.init(
            minLatitude: c.latitude, minLongitude: c.longitude, maxLatitude: c.latitude, maxLongitude: c.longitude)
    }

    /// Grows the box to include `c`.
    public mutating func extend(_ c: Coordinate) {
        minLatitude = min(minLatitude, c.latitude)
        maxLatitude = max(maxLatitude, c.latitude)
        minLongitude = min(minLongitude, c.longitude)
        maxLongitude = max(maxLongitude, c.longitude)
    }
}

extension Bounds? {
    /// Grows an optional box, starting it at the first coordinate.
    public mutating func extend(_ c: Coordinate) {
        if self == nil { self = Bounds(c) } else { self!.extend(c) }
    }
}
