import Foundation
import Waymark

/// `CLLocation`: a location the device reported, an immutable object as on iOS.
open class CLLocation: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // @unchecked Sendable: every stored property is a constant of a Sendable value type.
    public let coordinate: CLLocationCoordinate2D
    /// Metres above mean sea level.
    public let altitude: CLLocationDistance
    /// Metres above the WGS 84 ellipsoid (iOS 15).
    public let ellipsoidalAltitude: CLLocationDistance
    public let horizontalAccuracy: CLLocationAccuracy
    public let verticalAccuracy: CLLocationAccuracy
    public let course: CLLocationDirection
    public let courseAccuracy: CLLocationDirectionAccuracy
    public let speed: CLLocationSpeed
    public let speedAccuracy: CLLocationSpeedAccuracy
    public let timestamp: Date
    /// The floor of a building: the simulated device knows none.
    public var floor: CLFloor? { nil }
    /// Where the location came from (iOS 15): replayed locations are simulated by software.
    public let sourceInformation: CLLocationSourceInformation?

    public convenience init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.init(
            coordinate: CLLocationCoordinate2D(latitude: latitude, longitude: longitude), altitude: 0,
            horizontalAccuracy: 0, verticalAccuracy: -1, course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1,
            timestamp: Date(), sourceInfo: nil, ellipsoidalAltitude: 0)
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
        horizontalAccuracy hAccuracy: CLLocationAccuracy,
        verticalAccuracy vAccuracy: CLLocationAccuracy, timestamp: Date
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
            course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1, timestamp: timestamp, sourceInfo: nil,
            ellipsoidalAltitude: altitude)
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
        horizontalAccuracy hAccuracy: CLLocationAccuracy,
        verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection, speed: CLLocationSpeed,
        timestamp: Date
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
            course: course, courseAccuracy: -1, speed: speed, speedAccuracy: -1, timestamp: timestamp, sourceInfo: nil,
            ellipsoidalAltitude: altitude)
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
        horizontalAccuracy hAccuracy: CLLocationAccuracy,
        verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection,
        courseAccuracy: CLLocationDirectionAccuracy, speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy,
        timestamp: Date
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
            course: course, courseAccuracy: courseAccuracy, speed: speed, speedAccuracy: speedAccuracy,
            timestamp: timestamp, sourceInfo: nil, ellipsoidalAltitude: altitude)
    }

    public convenience init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
        horizontalAccuracy hAccuracy: CLLocationAccuracy,
        verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection,
        courseAccuracy: CLLocationDirectionAccuracy, speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy,
        timestamp: Date, sourceInfo: CLLocationSourceInformation
    ) {
        self.init(
            coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
            course: course, courseAccuracy: courseAccuracy, speed: speed, speedAccuracy: speedAccuracy,
            timestamp: timestamp, sourceInfo: sourceInfo as CLLocationSourceInformation?, ellipsoidalAltitude: altitude)
    }

    init(
        coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy: CLLocationAccuracy,
        verticalAccuracy: CLLocationAccuracy, course: CLLocationDirection, courseAccuracy: CLLocationDirectionAccuracy,
        speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy, timestamp: Date,
        sourceInfo: CLLocationSourceInformation?, ellipsoidalAltitude: CLLocationDistance
    ) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.timestamp = timestamp
        self.sourceInformation = sourceInfo
        self.ellipsoidalAltitude = ellipsoidalAltitude
        super.init()
    }

    /// A location the device delivered.
    convenience init(_ l: Location) {
        self.init(
            coordinate: CLLocationCoordinate2D(l.coordinate), altitude: l.altitude,
            horizontalAccuracy: l.horizontalAccuracy, verticalAccuracy: l.verticalAccuracy, course: l.course,
            courseAccuracy: l.courseAccuracy, speed: l.speed, speedAccuracy: l.speedAccuracy, timestamp: l.timestamp,
            sourceInfo: CLLocationSourceInformation(
                softwareSimulationState: l.provenance.isSimulatedBySoftware, andExternalAccessoryState: false),
            ellipsoidalAltitude: l.ellipsoidalAltitude ?? l.altitude)
    }

    /// The geodesic distance to `location` on the WGS 84 ellipsoid, in metres.
    public func distance(from location: CLLocation) -> CLLocationDistance {
        Geodesic.distance(coordinate.coordinate, location.coordinate.coordinate)
    }

    @available(iOS, introduced: 2.0, deprecated: 3.2, message: "Use -distanceFromLocation:")
    public func getDistanceFrom(_ location: CLLocation) -> CLLocationDistance { distance(from: location) }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(coordinate.latitude, forKey: "latitude")
        coder.encode(coordinate.longitude, forKey: "longitude")
        coder.encode(altitude, forKey: "altitude")
        coder.encode(ellipsoidalAltitude, forKey: "ellipsoidalAltitude")
        coder.encode(horizontalAccuracy, forKey: "horizontalAccuracy")
        coder.encode(verticalAccuracy, forKey: "verticalAccuracy")
        coder.encode(course, forKey: "course")
        coder.encode(courseAccuracy, forKey: "courseAccuracy")
        coder.encode(speed, forKey: "speed")
        coder.encode(speedAccuracy, forKey: "speedAccuracy")
        coder.encode(timestamp.timeIntervalSinceReferenceDate, forKey: "timestamp")
    }

    public required convenience init?(coder: NSCoder) {
        self.init(
            coordinate: CLLocationCoordinate2D(
                latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude")),
            altitude: coder.decodeDouble(forKey: "altitude"),
            horizontalAccuracy: coder.decodeDouble(forKey: "horizontalAccuracy"),
            verticalAccuracy: coder.decodeDouble(forKey: "verticalAccuracy"),
            course: coder.decodeDouble(forKey: "course"),
            courseAccuracy: coder.decodeDouble(forKey: "courseAccuracy"), speed: coder.decodeDouble(forKey: "speed"),
            speedAccuracy: coder.decodeDouble(forKey: "speedAccuracy"),
            timestamp: Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: "timestamp")), sourceInfo: nil,
            ellipsoidalAltitude: coder.decodeDouble(forKey: "ellipsoidalAltitude"))
    }

    /// As Apple's: `<+48.13720000,+11.57550000> +/- 10.00m (speed 1.40 mps / course 90.00) @ 2024-05-01 08:00:00 +0000`.
    open override var description: String {
        func f(_ v: Double, _ d: Int) -> String { String(format: "%.\(d)f", v) }
        func s(_ v: Double) -> String { (v >= 0 ? "+" : "") + f(v, 8) }
        return "<\(s(coordinate.latitude)),\(s(coordinate.longitude))> +/- \(f(horizontalAccuracy, 2))m "
            + "(speed \(f(speed, 2)) mps / course \(f(course, 2))) @ \(timestamp)"
    }
}

/// `CLFloor`: the floor of a building (the simulated device reports none).
open class CLFloor: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    public let level: Int
    init(level: Int) { self.level = level }
    public func copy(with zone: NSZone? = nil) -> Any { self }
    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) { coder.encode(level, forKey: "level") }
    public required init?(coder: NSCoder) { level = coder.decodeInteger(forKey: "level") }
}

/// `CLLocationSourceInformation` (iOS 15).
open class CLLocationSourceInformation: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    public let isSimulatedBySoftware: Bool
    public let isProducedByAccessory: Bool

    public init(softwareSimulationState isSoftware: Bool, andExternalAccessoryState isAccessory: Bool) {
        isSimulatedBySoftware = isSoftware
        isProducedByAccessory = isAccessory
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) {
        coder.encode(isSimulatedBySoftware, forKey: "software")
        coder.encode(isProducedByAccessory, forKey: "accessory")
    }
    public required init?(coder: NSCoder) {
        isSimulatedBySoftware = coder.decodeBool(forKey: "software")
        isProducedByAccessory = coder.decodeBool(forKey: "accessory")
    }
}

/// `CLHeading`: the simulated device has no magnetometer, so none is ever reported
/// (``CLLocationManager/headingAvailable()`` is false).
open class CLHeading: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    public let magneticHeading: CLLocationDirection = -1
    public let trueHeading: CLLocationDirection = -1
    public let headingAccuracy: CLLocationDirection = -1
    public let x: CLHeadingComponentValue = 0
    public let y: CLHeadingComponentValue = 0
    public let z: CLHeadingComponentValue = 0
    public let timestamp = Date(timeIntervalSince1970: 0)
    override init() {}
    public func copy(with zone: NSZone? = nil) -> Any { self }
    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) {}
    public required init?(coder: NSCoder) {}
}

/// `CLVisit`: a place the user stayed.
open class CLVisit: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// `Date.distantPast` when the true arrival is unknown.
    public let arrivalDate: Date
    /// `Date.distantFuture` while the user is still there.
    public let departureDate: Date
    public let coordinate: CLLocationCoordinate2D
    public let horizontalAccuracy: CLLocationAccuracy

    init(_ visit: Visit) {
        arrivalDate = visit.arrivalDate
        departureDate = visit.departureDate
        coordinate = CLLocationCoordinate2D(visit.coordinate)
        horizontalAccuracy = visit.horizontalAccuracy
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) {
        coder.encode(arrivalDate.timeIntervalSinceReferenceDate, forKey: "arrival")
        coder.encode(departureDate.timeIntervalSinceReferenceDate, forKey: "departure")
        coder.encode(coordinate.latitude, forKey: "latitude")
        coder.encode(coordinate.longitude, forKey: "longitude")
        coder.encode(horizontalAccuracy, forKey: "horizontalAccuracy")
    }
    public required init?(coder: NSCoder) {
        arrivalDate = Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: "arrival"))
        departureDate = Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: "departure"))
        coordinate = CLLocationCoordinate2D(
            latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude"))
        horizontalAccuracy = coder.decodeDouble(forKey: "horizontalAccuracy")
    }
}
