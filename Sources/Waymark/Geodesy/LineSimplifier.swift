#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Douglas–Peucker simplification of a line that streams: no point it leaves out lies farther
/// than ``tolerance`` metres from the line it keeps.
///
/// Points are held until the line ends (``finishLine(_:)``) or until ``window`` of them wait;
/// then the kept ones are passed on, in order. A full window is simplified on its own and its
/// last point starts the next, so memory stays bounded on a line of any length and the bound
/// still holds: each point left out is within the tolerance of the kept line of its window.
///
/// Distances are measured on a local flat map of each span (metres east and north of its start on
/// a sphere of the Earth's mean radius, the east scaled by the cosine of the span's middle
/// latitude, longitudes taken the short way across the antimeridian). Against the WGS 84
/// geodesic this is within about half a percent on spans of tens of kilometres
/// (`LineSimplifierTests` measures it). The first and last points of a line are always kept.
final class LineSimplifier<Element> {
    let tolerance: Double
    let window: Int
    private let coordinate: (Element) -> Coordinate
    private var pending: [Element] = []

    init(tolerance: Double, window: Int = 1 << 16, coordinate: @escaping (Element) -> Coordinate) {
        precondition(tolerance >= 0 && window >= 3)
        self.tolerance = tolerance
        self.window = window
        self.coordinate = coordinate
    }

    /// Takes the next point of the line; passes on what a full window keeps.
    func add(_ element: Element, _ emit: (Element) throws -> Void) throws {
        pending.append(element)
        guard pending.count >= window else { return }
        let kept = Self.keep(pending.map(coordinate), tolerance: tolerance)
        for i in 0..<(pending.count - 1) where kept[i] { try emit(pending[i]) }
        let last = pending[pending.count - 1]
        pending.removeAll(keepingCapacity: true)
        pending.append(last)
    }

    /// Ends the line: passes on the points kept of those that wait.
    func finishLine(_ emit: (Element) throws -> Void) throws {
        defer { pending.removeAll(keepingCapacity: true) }
        guard !pending.isEmpty else { return }
        let kept = Self.keep(pending.map(coordinate), tolerance: tolerance)
        for (element, keep) in zip(pending, kept) where keep { try emit(element) }
    }

    /// Which of `points` Douglas–Peucker keeps at `tolerance` metres (the first and last always).
    static func keep(_ points: [Coordinate], tolerance: Double) -> [Bool] {
        DouglasPeucker.keep(count: points.count, tolerance: tolerance) { i, a, b in
            distanceToSegment(points[i], points[a], points[b])
        }
    }

    /// Metres from `p` to the segment from `a` to `b`, on the span's flat map.
    static func distanceToSegment(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Double {
        let metresPerDegree = 6_371_008.8 * Double.pi / 180
        let scale = cos((a.latitude + b.latitude) / 2 * Double.pi / 180)
        func local(_ c: Coordinate) -> (x: Double, y: Double) {
            var dLon = c.longitude - a.longitude
            if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
            return (dLon * scale * metresPerDegree, (c.latitude - a.latitude) * metresPerDegree)
        }
        return DouglasPeucker.planeDistance(local(p), toSegmentEndingAt: local(b))
    }
}

/// Douglas–Peucker's rule, for any points and any distance: the first and last points are kept;
/// of the points between two kept ones, the farthest from the segment joining them is kept too
/// when it lies farther than the tolerance, and each side is then done the same way.
enum DouglasPeucker {
    /// Which of `count` points are kept at `tolerance`, in the unit of `distance(i, a, b)`: the
    /// distance of point `i` from the segment of points `a` and `b`.
    static func keep(count: Int, tolerance: Double, distance: (Int, Int, Int) -> Double) -> [Bool] {
        guard count > 2 else { return [Bool](repeating: true, count: count) }
        var kept = [Bool](repeating: false, count: count)
        kept[0] = true
        kept[count - 1] = true
        var spans = [(0, count - 1)]
        while let (first, last) = spans.popLast() {
            guard last - first > 1 else { continue }
            var farthest = first
            var worst = -1.0
            for i in (first + 1)..<last {
                let d = distance(i, first, last)
                if d > worst {
                    worst = d
                    farthest = i
                }
            }
            if worst > tolerance {
                kept[farthest] = true
                spans.append((farthest, last))
                spans.append((first, farthest))
            }
        }
        return kept
    }

    /// The distance in a plane from `p` to the segment from the origin to `end` (not the infinite
    /// line: a path that turns back keeps its turn).
    static func planeDistance(_ p: (x: Double, y: Double), toSegmentEndingAt end: (x: Double, y: Double)) -> Double {
        let length2 = end.x * end.x + end.y * end.y
        let t = length2 > 0 ? max(0, min(1, (p.x * end.x + p.y * end.y) / length2)) : 0
        let dx = p.x - t * end.x
        let dy = p.y - t * end.y
        return (dx * dx + dy * dy).squareRoot()
    }
}
