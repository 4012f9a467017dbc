import Foundation
import Testing

@testable import Waymark

/// The wake-up services where a stay or a region straddles the antimeridian, with the anchor or
/// the centre on either side of it (mutations m18 and m19 broke one side each): over generated
/// places near ±180°, a visit's coordinate is the mean of its fixes, within the radius of them,
/// and a region is entered by fixes inside it whichever side of the meridian they are on.
struct ServiceAntimeridianTests {
    struct Place: CustomStringConvertible {
        /// The first fix (a stay's anchor, a region's centre) and the fixes after it.
        var first: Coordinate
        var others: [Coordinate]
        var description: String { "first \(first), then \(others)" }
    }

    /// Fixes within `spread` metres of a point on the antimeridian, the first on either side.
    static func place(_ r: inout PropertyRandom, spread: Double) -> Place {
        let latitude = Double(r.int(-600...600)) / 10
        let metresPerDegree = 111_319.49 * cos(latitude * .pi / 180)
        func fix(_ r: inout PropertyRandom, east: Bool) -> Coordinate {
            let offset = Double(r.int(1...1000)) / 1000 * spread / metresPerDegree
            let north = Double(r.int(-1000...1000)) / 1000 * spread / 110_574 / 4
            return Coordinate(latitude: latitude + north, longitude: east ? -180 + offset : 180 - offset)
        }
        let firstEast = r.bool()
        return Place(
            first: fix(&r, east: firstEast),
            others: (0..<r.int(3...8)).enumerated().map { i, _ in fix(&r, east: i % 2 == 0 ? !firstEast : firstEast) })
    }

    static let visits = Property<Place>(
        name: "visit on the antimeridian", count: 60, generate: { place(&$0, spread: 30) },
        describe: { "\($0)" })

    @Test func aVisitAcrossTheAntimeridianIsWhereItsFixesAre() {
        Self.visits.check { place in
            var m = VisitStateMachine(radius: 100, minimumStay: .seconds(60))
            _ = m.handle(.start)
            let t0 = Date(timeIntervalSince1970: 1_700_000_000)
            var actions: [DeviceAction] = []
            for (i, c) in ([place.first] + place.others).enumerated() {
                actions += m.handle(.fix(c, date: t0.addingTimeInterval(Double(i * 30)), at: .seconds(i * 30)))
            }
            var problems = Problems()
            guard case .post(.serviceEvent(.visit(let visit)))? = actions.first else {
                problems.expect(false, "no arrival after \(place.others.count * 30) s within 60 m")
                return problems.list
            }
            for c in [place.first] + place.others {
                problems.expect(
                    Geodesic.distance(visit.coordinate, c) < 100,
                    "the visit at \(visit.coordinate) is \(Geodesic.distance(visit.coordinate, c)) m from its fix \(c)")
            }
            problems.expect(
                abs(visit.coordinate.longitude) > 179.99, "the visit's longitude \(visit.coordinate.longitude)")
            return problems.list
        }
    }

    static let regions = Property<Place>(
        name: "region on the antimeridian", count: 60, generate: { place(&$0, spread: 40) },
        describe: { "\($0)" })

    @Test func aRegionOnTheAntimeridianIsEnteredFromEitherSide() {
        Self.regions.check { place in
            var m = RegionMonitorStateMachine(hysteresis: 10)
            let region = CircularRegion(center: place.first, radius: 200, identifier: "meridian")
            _ = m.handle(.start(region, at: .zero))
            // From far away (2 km east of the centre, across the meridian or not), then the fixes
            // near the centre for longer than the dwell.
            let far = Coordinate(
                latitude: place.first.latitude,
                longitude: place.first.longitude + (place.first.longitude > 0 ? -0.03 : 0.03))
            var actions = m.handle(.fix(far, at: .zero))
            for (i, c) in place.others.enumerated() { actions += m.handle(.fix(c, at: .seconds(10 + i * 15))) }
            var problems = Problems()
            problems.expect(
                actions == [.post(.serviceEvent(.region(region, .inside)))],
                "fixes within 80 m of the centre \(place.first) across the meridian give \(actions)")
            return problems.list
        }
    }
}
