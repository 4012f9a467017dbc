#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Maps WGS 84 coordinates to the pixels of a picture: north up, fitted to a viewport and
/// centred in it, with the same scale along both axes.
///
/// Two projections, chosen by the extent:
/// - **local equirectangular** for small areas (at most ``localExtentLimit`` degrees of latitude
///   and of longitude): x is the longitude times the cosine of the extent's mean latitude, y the
///   latitude. Over such an area it keeps shapes and distances within a fraction of a percent.
/// - **Web Mercator** (EPSG:3857, spherical, latitudes clamped to ±85.0511°) for anything larger.
///
/// Longitudes are taken as given: a caller that draws a path across the antimeridian passes them
/// unwrapped into a continuous range (179.9 then 180.1, not −179.9), as ``SVGWriter`` does.
public struct SVGProjection: Sendable, Hashable {
    /// Which projection a picture uses.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case localEquirectangular = "local equirectangular"
        case webMercator = "Web Mercator"
    }

    /// The largest extent, in degrees of latitude and of longitude, drawn in the local
    /// equirectangular projection.
    public static let localExtentLimit = 5.0
    /// The sphere's radius for both projections: the WGS 84 semi-major axis, in metres.
    static let radius = 6_378_137.0
    /// Web Mercator's latitude limit, in degrees.
    static let mercatorLimit = 85.051_128_779_806_59

    /// The projection in use.
    public let kind: Kind
    /// The cosine of the mean latitude (1 for Web Mercator).
    public let cosineOfMeanLatitude: Double
    /// Pixels per plane metre.
    public let scale: Double
    private let centreX: Double
    private let centreY: Double
    private let offsetX: Double
    private let offsetY: Double

    /// The projection that fits the box from `south`…`north`, `west`…`east` (degrees; `east` may
    /// exceed 180 for a box across the antimeridian) into the viewport at `x`, `y` of `width` ×
    /// `height` pixels.
    ///
    /// A box narrower than 50 m (a single point) is drawn as if it were 50 m wide and high.
    /// `forced` chooses the projection whatever the extent (Web Mercator, to lie on map tiles).
    public init(
        south: Double, west: Double, north: Double, east: Double,
        x: Double, y: Double, width: Double, height: Double, kind forced: Kind? = nil
    ) {
        let kind = forced ?? Self.kind(latitudeSpan: north - south, longitudeSpan: east - west)
        self.kind = kind
        cosineOfMeanLatitude = kind == .webMercator ? 1 : max(0.01, cos((south + north) / 2 * .pi / 180))
        let minX = Self.plane(kind, cosineOfMeanLatitude, latitude: south, longitude: west).x
        let maxX = Self.plane(kind, cosineOfMeanLatitude, latitude: north, longitude: east).x
        let minY = Self.plane(kind, cosineOfMeanLatitude, latitude: south, longitude: west).y
        let maxY = Self.plane(kind, cosineOfMeanLatitude, latitude: north, longitude: east).y
        let spanX = max(maxX - minX, 50)
        let spanY = max(maxY - minY, 50)
        let scale = min(width / spanX, height / spanY)
        self.scale = scale
        // Centre the box: the plane's centre goes to the viewport's centre.
        centreX = (minX + maxX) / 2
        centreY = (minY + maxY) / 2
        offsetX = x + width / 2
        offsetY = y + height / 2
    }

    /// The projection for a box of this many degrees of latitude and longitude.
    public static func kind(latitudeSpan: Double, longitudeSpan: Double) -> Kind {
        latitudeSpan <= localExtentLimit && longitudeSpan <= localExtentLimit ? .localEquirectangular : .webMercator
    }

    /// The pixel of a coordinate: x to the right, y down.
    public func pixel(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
        let p = Self.plane(kind, cosineOfMeanLatitude, latitude: latitude, longitude: longitude)
        return (offsetX + (p.x - centreX) * scale, offsetY - (p.y - centreY) * scale)
    }

    /// The coordinate in plane metres (x east, y north).
    private static func plane(_ kind: Kind, _ cosine: Double, latitude: Double, longitude: Double) -> (
        x: Double, y: Double
    ) {
        let lambda = longitude * .pi / 180
        switch kind {
        case .localEquirectangular:
            return (radius * lambda * cosine, radius * latitude * .pi / 180)
        case .webMercator:
            let phi = min(max(latitude, -mercatorLimit), mercatorLimit) * .pi / 180
            return (radius * lambda, radius * log(tan(.pi / 4 + phi / 2)))
        }
    }

    /// The pixel of a point of the projection's plane (metres; Web Mercator's are EPSG:3857's):
    /// `x` is `offsetX + (planeX − centreX) · scale`, `y` is `offsetY − (planeY − centreY) · scale`.
    /// A page's script places map tiles with these four numbers.
    public var planeToPixel: (centreX: Double, centreY: Double, offsetX: Double, offsetY: Double) {
        (centreX, centreY, offsetX, offsetY)
    }

    /// Degrees of longitude per pixel along a parallel.
    func degreesOfLongitude(perPixels pixels: Double) -> Double {
        pixels / (scale * Self.radius * cosineOfMeanLatitude) * 180 / .pi
    }
}

/// A drawn picture's coordinates-to-pixels mapping (``SVGWriter/mapping``): its projection, and
/// the longitude the picture unwraps others near, so that a layer drawn over the picture puts a
/// point where the picture has it, across the antimeridian too.
public struct SVGMapping: Sendable, Hashable {
    public let projection: SVGProjection
    /// Degrees: the trace's first longitude; others are unwrapped to within 180° of it.
    public let originLongitude: Double

    /// The pixel of a coordinate, in the picture's viewBox, its longitude unwrapped near the
    /// origin's (as the picture places a waypoint, or a line's first point).
    public func pixel(_ c: Coordinate) -> (x: Double, y: Double) {
        projection.pixel(
            latitude: c.latitude, longitude: SVGWriter.unwrap(c.longitude, near: originLongitude))
    }

    /// The pixels of points drawn as lines, a new line where `segments` changes, each longitude
    /// unwrapped as the picture unwraps its lines': a line's first point near the origin, every
    /// other near the point before it. A path that goes more than half way round the world is
    /// then where the picture draws it.
    public func pixels(latitudes: [Double], longitudes: [Double], segments: [Int]) -> [(x: Double, y: Double)] {
        var out: [(x: Double, y: Double)] = []
        out.reserveCapacity(latitudes.count)
        var previous: Double?
        for i in latitudes.indices {
            if i > 0 && segments[i] != segments[i - 1] { previous = nil }
            let longitude = SVGWriter.unwrap(longitudes[i], near: previous ?? originLongitude)
            // A point without a position (NaN) leaves the next one to unwrap near the last real one.
            if longitude.isFinite { previous = longitude }
            out.append(projection.pixel(latitude: latitudes[i], longitude: longitude))
        }
        return out
    }
}
