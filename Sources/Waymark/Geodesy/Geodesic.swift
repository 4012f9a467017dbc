import Foundation

/// Distances and bearings on the WGS 84 ellipsoid.
///
/// Uses Vincenty's inverse formula (1975), accurate to well under a millimetre wherever it
/// converges. It fails to converge only for nearly antipodal points, which never follow each
/// other in a trace; there the distance is found as the shortest two-leg path through an
/// intermediate point (see ``viaMidpoint(_:_:)``). Tested against GeographicLib.
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
        if let r = vincenty(p, q) { return r.distance }
        return viaMidpoint(p, q).distance
    }

    /// Distance and bearings between two coordinates.
    public static func inverse(_ p: Coordinate, _ q: Coordinate) -> Inverse {
        if p.latitude == q.latitude && p.longitude == q.longitude {
            return Inverse(distance: 0, initialBearing: 0, finalBearing: 0)
        }
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
            Coordinate(latitude: max(-90, min(90, lat)), longitude: (lon + 540).truncatingRemainder(dividingBy: 360) - 180)
        }
        let meanLongitude = p.longitude + ((q.longitude - p.longitude + 540).truncatingRemainder(dividingBy: 360) - 180) / 2
        let starts = [
            sphericalMidpoint(p, q), clamp(89, meanLongitude), clamp(-89, meanLongitude),
            clamp((p.latitude + q.latitude) / 2, meanLongitude), clamp((p.latitude + q.latitude) / 2, meanLongitude + 180),
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
        let φ1 = p.latitude * .pi / 180
        let φ2 = q.latitude * .pi / 180
        let λ1 = p.longitude * .pi / 180
        let Δλ = (q.longitude - p.longitude) * .pi / 180
        let bx = cos(φ2) * cos(Δλ)
        let by = cos(φ2) * sin(Δλ)
        let φm = atan2(sin(φ1) + sin(φ2), sqrt((cos(φ1) + bx) * (cos(φ1) + bx) + by * by))
        var λm = λ1 + atan2(by, cos(φ1) + bx)
        λm = (λm + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        return Coordinate(latitude: φm * 180 / .pi, longitude: λm * 180 / .pi)
    }

    /// Vincenty's inverse formula; nil when it does not converge.
    static func vincenty(_ p: Coordinate, _ q: Coordinate) -> Inverse? {
        let rad = Double.pi / 180
        var Δlon = (q.longitude - p.longitude).truncatingRemainder(dividingBy: 360)
        if Δlon > 180 { Δlon -= 360 } else if Δlon < -180 { Δlon += 360 }
        let L = Δlon * rad
        let U1 = atan((1 - f) * tan(p.latitude * rad))
        let U2 = atan((1 - f) * tan(q.latitude * rad))
        let sinU1 = sin(U1)
        let cosU1 = cos(U1)
        let sinU2 = sin(U2)
        let cosU2 = cos(U2)
        var λ = L
        var sinλ = 0.0
        var cosλ = 0.0
        var sinσ = 0.0
        var cosσ = 0.0
        var σ = 0.0
        var cos2α = 0.0
        var cos2σm = 0.0
        var iterations = 0
        while true {
            sinλ = sin(λ)
            cosλ = cos(λ)
            let t1 = cosU2 * sinλ
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosλ
            sinσ = (t1 * t1 + t2 * t2).squareRoot()
            if sinσ == 0 { return Inverse(distance: 0, initialBearing: 0, finalBearing: 0) }
            cosσ = sinU1 * sinU2 + cosU1 * cosU2 * cosλ
            σ = atan2(sinσ, cosσ)
            let sinα = cosU1 * cosU2 * sinλ / sinσ
            cos2α = 1 - sinα * sinα
            cos2σm = cos2α != 0 ? cosσ - 2 * sinU1 * sinU2 / cos2α : 0
            let C = f / 16 * cos2α * (4 + f * (4 - 3 * cos2α))
            let λPrev = λ
            λ = L + (1 - C) * f * sinα * (σ + C * sinσ * (cos2σm + C * cosσ * (-1 + 2 * cos2σm * cos2σm)))
            iterations += 1
            if abs(λ - λPrev) < 1e-12 { break }
            if iterations >= 200 || abs(λ) > .pi { return nil }
        }
        let u2 = cos2α * (a * a - b * b) / (b * b)
        let A = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
        let B = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
        let Δσ =
            B * sinσ
            * (cos2σm + B / 4
                * (cosσ * (-1 + 2 * cos2σm * cos2σm) - B / 6 * cos2σm * (-3 + 4 * sinσ * sinσ)
                    * (-3 + 4 * cos2σm * cos2σm)))
        let s = b * A * (σ - Δσ)
        let α1 = atan2(cosU2 * sinλ, cosU1 * sinU2 - sinU1 * cosU2 * cosλ)
        let α2 = atan2(cosU1 * sinλ, -sinU1 * cosU2 + cosU1 * sinU2 * cosλ)
        return Inverse(distance: s, initialBearing: normalizedDegrees(α1 / rad), finalBearing: normalizedDegrees(α2 / rad))
    }

    static func normalizedDegrees(_ d: Double) -> Double {
        let r = d.truncatingRemainder(dividingBy: 360)
        return r < 0 ? r + 360 : (r >= 360 ? 0 : r)
    }
}
