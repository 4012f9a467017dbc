import Foundation
import Waymark

/// `CLRegion`: a region the app monitors. Regions are the app's, shared by all its location
/// managers, and persist across launches; two regions with the same identifier are the same.
open class CLRegion: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    // @unchecked Sendable, as Apple's: its two switches are set by the app before it hands it on.
    public let identifier: String
    public var notifyOnEntry = true
    public var notifyOnExit = true
    let centerValue: CLLocationCoordinate2D
    let radiusValue: CLLocationDistance

    init(identifier: String, center: CLLocationCoordinate2D, radius: CLLocationDistance) {
        self.identifier = identifier
        centerValue = center
        radiusValue = radius
    }

    @available(iOS, introduced: 4.0, deprecated: 7.0, message: "Please see CLCircularRegion")
    public convenience init(
        circularRegionWithCenter center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String
    ) {
        self.init(identifier: identifier, center: center, radius: radius)
    }

    @available(iOS, introduced: 4.0, deprecated: 7.0, message: "Please see CLCircularRegion")
    public var center: CLLocationCoordinate2D { centerValue }
    @available(iOS, introduced: 4.0, deprecated: 7.0, message: "Please see CLCircularRegion")
    public var radius: CLLocationDistance { radiusValue }

    @available(iOS, introduced: 4.0, deprecated: 7.0, message: "Please see CLCircularRegion")
    public func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
        Geodesic.distance(centerValue.coordinate, coordinate.coordinate) <= radiusValue
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CLRegion else { return false }
        return other.identifier == identifier && type(of: other) == type(of: self)
            && other.centerValue.latitude == centerValue.latitude
            && other.centerValue.longitude == centerValue.longitude
            && other.radiusValue == radiusValue
    }

    open override var hash: Int { identifier.hashValue }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = CLRegion(identifier: identifier, center: centerValue, radius: radiusValue)
        copy.notifyOnEntry = notifyOnEntry
        copy.notifyOnExit = notifyOnExit
        return copy
    }

    public class var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) {
        coder.encode(identifier as NSString, forKey: "identifier")
        coder.encode(centerValue.latitude, forKey: "latitude")
        coder.encode(centerValue.longitude, forKey: "longitude")
        coder.encode(radiusValue, forKey: "radius")
        coder.encode(notifyOnEntry, forKey: "notifyOnEntry")
        coder.encode(notifyOnExit, forKey: "notifyOnExit")
    }
    public required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: "identifier") else { return nil }
        self.identifier = identifier as String
        centerValue = CLLocationCoordinate2D(
            latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude"))
        radiusValue = coder.decodeDouble(forKey: "radius")
        notifyOnEntry = coder.decodeBool(forKey: "notifyOnEntry")
        notifyOnExit = coder.decodeBool(forKey: "notifyOnExit")
    }

    /// The device's region.
    var circularRegion: CircularRegion {
        CircularRegion(
            center: centerValue.coordinate, radius: radiusValue, identifier: identifier, notifyOnEntry: notifyOnEntry,
            notifyOnExit: notifyOnExit)
    }

    /// The app's object for a region of the device.
    static func make(_ region: CircularRegion) -> CLRegion {
        let r = CLCircularRegion(
            center: CLLocationCoordinate2D(region.center), radius: region.radius, identifier: region.identifier)
        r.notifyOnEntry = region.notifyOnEntry
        r.notifyOnExit = region.notifyOnExit
        return r
    }
}

/// `CLCircularRegion`: a circle around a centre.
open class CLCircularRegion: CLRegion, @unchecked Sendable {
    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
        super.init(identifier: identifier, center: center, radius: radius)
    }

    public required init?(coder: NSCoder) { super.init(coder: coder) }

    public override var center: CLLocationCoordinate2D { centerValue }
    public override var radius: CLLocationDistance { radiusValue }

    /// Whether the coordinate lies within the circle (geodesic distance to the centre ≤ radius).
    public override func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
        Geodesic.distance(centerValue.coordinate, coordinate.coordinate) <= radiusValue
    }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = CLCircularRegion(center: centerValue, radius: radiusValue, identifier: identifier)
        copy.notifyOnEntry = notifyOnEntry
        copy.notifyOnExit = notifyOnExit
        return copy
    }
}

/// `CLBeaconRegion`: the simulated device has no Bluetooth ranging; monitoring one fails, as on a
/// device without beacon support (``CLLocationManager/isMonitoringAvailable(for:)`` is false).
open class CLBeaconRegion: CLRegion, @unchecked Sendable {
    public let uuid: UUID
    public init(uuid: UUID, identifier: String) {
        self.uuid = uuid
        super.init(identifier: identifier, center: CLLocationCoordinate2D(), radius: 0)
    }
    public required init?(coder: NSCoder) {
        uuid = UUID()
        super.init(coder: coder)
    }
}
