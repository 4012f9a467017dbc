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

/// Distances and bearings on the WGS 84 ellipsoid.
///
/// Lines shorter than 0.01° in latitude and longitude, away from the poles (consecutive fixes),
/// use Gauss's mid-latitude formula on the ellipsoid, with the azimuths turned by half the
/// convergence of the meridians: within 5 µm of GeographicLib in distance and in where the
/// bearings put the far end (checked on 20 000 random lines per span). Longer lines use
/// Vincenty's inverse formula (1975), accurate to well under a millimetre wherever it
/// converges. It fails to converge only for nearly antipodal points, which never follow each
/// other in a trace; there the distance is found as the shortest two-leg path through an
/// intermediate point (see `viaMidpoint(_:_:)`). Tested against GeographicLib.
public enum Geodesic {
    /// WGS 84 semi-major axis, metres.
    public static let a = 6_378_137.0
    /// WGS 84 flattening.
    public static let f = 1 / 298.257_223_563
    /// WGS 84 semi-minor axis, metres.
    public static let b = a * (1 - f)

    /// The result of the inverse problem.
    public struct Inverse: Sendable, Hashable {
        /// Geodesic distance, metres.
        public var distance: Double
        /// Initial bearing at the first point, degrees from true north in 0..<360.
        public var initialBearing: Double
        /// Final bearing at the second point, degrees from true north in 0..<360.
        public var finalBearing: Double
    }

    /// The geodesic distance in metres between two coordinates.
    @inline(__always)
    public static func distance(_ p: Coordinate, _ q: Coordinate) -> Double {
        if p.latitude == q.latitude && p.longitude == q.longitude { return 0 }
        if let r = shortLine(p, q) { return r.distance }
        if let r = vincenty(p, q) { return r.distance }
        return viaMidpoint(p, q).distance
    }

    /// Cheap bounds on the geodesic distance in metres between `p` and `q`, for a hot path that
    /// only needs to compare it with a threshold: `lower` ≤ distance ≤ `upper`.
    ///
    /// On WGS 84 a degree of latitude is 110 574–111 694 m, and a degree of longitude
    /// 111 319–111 694 m times the cosine of the latitude; within a degree of each other (below
    /// 85° of latitude) the flat-Earth distances with the least and the most of these, widened by
    /// 0.01 %, bound the geodesic. Farther apart, the latitude difference alone bounds it from
    /// below (at least the meridian arc), and `upper` is infinite. Near the poles, nothing is
    /// claimed (0 and infinity): compute the distance.
    @inline(__always)
    public static func distanceBounds(_ p: Coordinate, _ q: Coordinate) -> (lower: Double, upper: Double) {
        let dLat = abs(q.latitude - p.latitude)
        var dLon = abs(q.longitude - p.longitude)
        if dLon > 180 { dLon = 360 - dLon }
        guard abs(p.latitude) < 85, abs(q.latitude) < 85 else { return (0, .infinity) }
        guard dLat < 1, dLon < 1 else { return (dLat * 110_574 * 0.9999, .infinity) }
        let north = max(abs(p.latitude), abs(q.latitude)) * .pi / 180
        let south = min(abs(p.latitude), abs(q.latitude)) * .pi / 180
        let y0 = dLat * 110_574
        let x0 = dLon * 111_319 * cos(north)
        let y1 = dLat * 111_694
        let x1 = dLon * 111_694 * cos(south)
        return ((y0 * y0 + x0 * x0).squareRoot() * 0.9999, (y1 * y1 + x1 * x1).squareRoot() * 1.0001)
    }

    /// Whether the geodesic distance between `p` and `q` is at most `metres`, computing it only
    /// when ``distanceBounds(_:_:)`` cannot tell.
    @inline(__always)
    public static func isWithin(_ metres: Double, _ p: Coordinate, _ q: Coordinate) -> Bool {
        let (lower, upper) = distanceBounds(p, q)
        if upper <= metres { return true }
        if lower > metres { return false }
        return distance(p, q) <= metres
    }

    /// Distance and bearings between two coordinates.
    public static func inverse(_ p: Coordinate, _ q: Coordinate) -> Inverse {
        if p.latitude == q.latitude && p.longitude == q.longitude {
            return Inverse(distance: 0, initialBearing: 0, finalBearing: 0)
        }
        if let r = shortLine(p, q) { return r }
        if let r = vincenty(p, q) { return r }
        let (d, m) = viaMidpoint(p, q)
        let b1 = vincenty(p, m)?.initialBearing ?? 0
        let b2 = vincenty(m, q)?.finalBearing ?? 0
        return Inverse(distance: d, initialBearing: b1, finalBearing: b2)
    }

    /// For nearly antipodal points, where Vincenty's iteration does not converge: the shortest
    /// path is the minimum over intermediate points M of |PM| + |MQ|, and both legs are short
    /// enough for Vincenty. A pattern search moves M from several starting points (the
    /// spherical midpoint and the two midpoints over the poles) down to 1e-10°; because the sum is
    /// flat near its minimum, the distance is then exact to far below a millimetre.
    static func viaMidpoint(_ p: Coordinate, _ q: Coordinate) -> (distance: Double, midpoint: Coordinate) {
        func legs(_ m: Coordinate) -> Double {
            guard let a = vincenty(p, m), let b = vincenty(m, q) else { return .infinity }
            return a.distance + b.distance
        }
        func clamp(_ lat: Double, _ lon: Double) -> Coordinate {
            Coordinate(
                latitude: max(-90, min(90, lat)), longitude: (lon + 540).truncatingRemainder(dividingBy: 360) - 180)
        }
        let meanLongitude =
            p.longitude + ((q.longitude - p.longitude + 540).truncatingRemainder(dividingBy: 360) - 180) / 2
        let starts = [
            sphericalMidpoint(p, q), clamp(89, meanLongitude), clamp(-89, meanLongitude),
            clamp((p.latitude + q.latitude) / 2, meanLongitude),
            clamp((p.latitude + q.latitude) / 2, meanLongitude + 180),
        ]
        var best = (distance: Double.infinity, midpoint: starts[0])
        for start in starts where start.latitude.isFinite && start.longitude.isFinite {
            var m = start
            var value = legs(m)
            var step = 2.0
            while step > 1e-10 {
                var improved = false
                for (dlat, dlon) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
                    let candidate = clamp(m.latitude + dlat, m.longitude + dlon)
                    let v = legs(candidate)
                    if v < value {
                        value = v
                        m = candidate
                        improved = true
                    }
                }
                if !improved { step /= 2 }
            }
            if value < best.distance { best = (value, m) }
        }
        return best
    }

    private static func sphericalMidpoint(_ p: Coordinate, _ q: Coordinate) -> Coordinate {
        let phi1 = p.latitude * .pi / 180
        let phi2 = q.latitude * .pi / 180
        let lambda1 = p.longitude * .pi / 180
        let deltaLambda = (q.longitude - p.longitude) * .pi / 180
        let bx = cos(phi2) * cos(deltaLambda)
        let by = cos(phi2) * sin(deltaLambda)
        let phiM = atan2(sin(phi1) + sin(phi2), sqrt((cos(phi1) + bx) * (cos(phi1) + bx) + by * by))
        var lambdaM = lambda1 + atan2(by, cos(phi1) + bx)
        lambdaM = (lambdaM + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        return Coordinate(latitude: phiM * 180 / .pi, longitude: lambdaM * 180 / .pi)
    }

    /// The square of WGS 84's first eccentricity.
    static let e2 = f * (2 - f)

    /// Gauss's mid-latitude formula for a short line (both spans under 0.01°, both ends within
    /// 85° of latitude); nil for any other.
    ///
    /// With φm the mean latitude, M and N the radii of curvature in the meridian and the prime
    /// vertical there: x = N cos φm Δλ, y = M Δφ, the distance is √(x² + y²) and the azimuth at
    /// the midpoint atan2(x, y); the azimuths at the ends differ from it by ∓ Δλ sin φm / 2.
    @inline(__always)
    static func shortLine(_ p: Coordinate, _ q: Coordinate) -> Inverse? {
        let dLatDegrees = q.latitude - p.latitude
        var dLonDegrees = q.longitude - p.longitude
        if dLonDegrees > 180 { dLonDegrees -= 360 } else if dLonDegrees < -180 { dLonDegrees += 360 }
        guard abs(dLatDegrees) <= 0.01, abs(dLonDegrees) <= 0.01, abs(p.latitude) <= 85, abs(q.latitude) <= 85
        else { return nil }
        let rad = Double.pi / 180
        let midLatitude = (p.latitude + q.latitude) / 2 * rad
        let sinMid = sin(midLatitude)
        let w = 1 - e2 * sinMid * sinMid
        let n = a / w.squareRoot()
        let m = a * (1 - e2) / (w * w.squareRoot())
        let dLon = dLonDegrees * rad
        let x = n * cos(midLatitude) * dLon
        let y = m * dLatDegrees * rad
        let azimuth = atan2(x, y)
        let half = dLon / 2 * sinMid
        return Inverse(
            distance: (x * x + y * y).squareRoot(), initialBearing: normalizedDegrees((azimuth - half) / rad),
            finalBearing: normalizedDegrees((azimuth + half) / rad))
    }

    /// Vincenty's inverse formula; nil when it does not converge.
    static func vincenty(_ p: Coordinate, _ q: Coordinate) -> Inverse? {
        let rad = Double.pi / 180
        var deltaLon = (q.longitude - p.longitude).truncatingRemainder(dividingBy: 360)
        if deltaLon > 180 { deltaLon -= 360 } else if deltaLon < -180 { deltaLon += 360 }
        let lonDiff = deltaLon * rad
        let reduced1 = atan((1 - f) * tan(p.latitude * rad))
        let reduced2 = atan((1 - f) * tan(q.latitude * rad))
        let sinU1 = sin(reduced1)
        let cosU1 = cos(reduced1)
        let sinU2 = sin(reduced2)
        let cosU2 = cos(reduced2)
        var lambda = lonDiff
        var sinLambda = 0.0
        var cosLambda = 0.0
        var sinSigma = 0.0
        var cosSigma = 0.0
        var sigma = 0.0
        var cos2Alpha = 0.0
        var cos2SigmaM = 0.0
        var iterations = 0
        while true {
            sinLambda = sin(lambda)
            cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return Inverse(distance: 0, initialBearing: 0, finalBearing: 0) }
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cos2Alpha = 1 - sinAlpha * sinAlpha
            cos2SigmaM = cos2Alpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cos2Alpha : 0
            let c = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let lambdaPrevious = lambda
            lambda =
                lonDiff + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            iterations += 1
            if abs(lambda - lambdaPrevious) < 1e-12 { break }
            if iterations >= 200 || abs(lambda) > .pi { return nil }
        }
        let u2 = cos2Alpha * (a * a - b * b) / (b * b)
        let bigA = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let bigB = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
        let deltaSigma =
            bigB * sinSigma
            * (cos2SigmaM + bigB / 4
                * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) - bigB / 6 * cos2SigmaM
                    * (-3 + 4 * sinSigma * sinSigma)
                    * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let s = b * bigA * (sigma - deltaSigma)
        let alpha1 = atan2(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda)
        let alpha2 = atan2(cosU1 * sinLambda, -sinU1 * cosU2 + cosU1 * sinU2 * cosLambda)
        return Inverse(
            distance: s, initialBearing: normalizedDegrees(alpha1 / rad), finalBearing: normalizedDegrees(alpha2 / rad))
    }

    static func normalizedDegrees(_ d: Double) -> Double {
        let r = d.truncatingRemainder(dividingBy: 360)
        return r < 0 ? r + 360 : (r >= 360 ? 0 : r)
    }
}

extension Geodesic {
    /// The point reached from `start` after `distance` metres along the geodesic that leaves it
    /// on `bearing` (degrees from true north): Vincenty's direct formula.
    public static func destination(from start: Coordinate, bearing: Double, distance: Double) -> Coordinate {
        guard distance != 0 else { return start }
        let rad = Double.pi / 180
        let alpha1 = bearing * rad
        let sinAlpha1 = sin(alpha1)
        let cosAlpha1 = cos(alpha1)
        let tanU1 = (1 - f) * tan(start.latitude * rad)
        let cosU1 = 1 / (1 + tanU1 * tanU1).squareRoot()
        let sinU1 = tanU1 * cosU1
        let sigma1 = atan2(tanU1, cosAlpha1)
        let sinAlpha = cosU1 * sinAlpha1
        let cosSqAlpha = 1 - sinAlpha * sinAlpha
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        var sigma = distance / (b * bigA)
        var cos2SigmaM = 0.0
        var sinSigma = 0.0
        var cosSigma = 0.0
        for _ in 0..<200 {
            cos2SigmaM = cos(2 * sigma1 + sigma)
            sinSigma = sin(sigma)
            cosSigma = cos(sigma)
            let deltaSigma =
                bigB * sinSigma
                * (cos2SigmaM + bigB / 4
                    * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) - bigB / 6 * cos2SigmaM
                        * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
            let next = distance / (b * bigA) + deltaSigma
            if abs(next - sigma) < 1e-12 {
                sigma = next
                break
            }
            sigma = next
        }
        cos2SigmaM = cos(2 * sigma1 + sigma)
        sinSigma = sin(sigma)
        cosSigma = cos(sigma)
        let x = sinU1 * sinSigma - cosU1 * cosSigma * cosAlpha1
        let latitude = atan2(
            sinU1 * cosSigma + cosU1 * sinSigma * cosAlpha1, (1 - f) * (sinAlpha * sinAlpha + x * x).squareRoot())
        let lambda = atan2(sinSigma * sinAlpha1, cosU1 * cosSigma - sinU1 * sinSigma * cosAlpha1)
        let c = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
        let lonDiff =
            lambda - (1 - c) * f * sinAlpha
            * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
        var longitude = start.longitude + lonDiff / rad
        longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
        return Coordinate(latitude: latitude / rad, longitude: longitude)
    }

    /// The point `fraction` (0...1) of the way from `p` to `q` along the geodesic between them.
    public static func interpolate(_ p: Coordinate, _ q: Coordinate, fraction: Double) -> Coordinate {
        if fraction <= 0 { return p }
        if fraction >= 1 { return q }
        let line = inverse(p, q)
        return destination(from: p, bearing: line.initialBearing, distance: line.distance * fraction)
    }
}
