// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (CoreLocation's C functions and constants keep Apple's names.)

import Foundation
import Waymark

// CoreLocation's scalar types, its coordinate, its constants and its enums, as Apple's SDK
// declares them (iOS 18): the same names, kinds, raw values and optionality, so that an app's
// source file compiles unchanged. Where Apple does not publish a constant's value, the value here
// is noted as Waymark's choice.

public typealias CLLocationDegrees = Double
public typealias CLLocationAccuracy = Double
public typealias CLLocationSpeed = Double
public typealias CLLocationSpeedAccuracy = Double
public typealias CLLocationDirection = Double
public typealias CLLocationDirectionAccuracy = Double
public typealias CLLocationDistance = Double
public typealias CLHeadingComponentValue = Double
public typealias CLBeaconMajorValue = UInt16
public typealias CLBeaconMinorValue = UInt16

/// A latitude and longitude, degrees on WGS 84, as the C struct `CLLocationCoordinate2D`.
///
/// Like Apple's, it is neither `Equatable`, `Hashable` nor `Codable`: apps that need those add
/// them in an extension of their own, which must not meet a second conformance here.
public struct CLLocationCoordinate2D: Sendable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees

    public init() {
        latitude = 0
        longitude = 0
    }

    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Whether `coord` is a valid coordinate: latitude in −90…90, longitude in −180…180.
public func CLLocationCoordinate2DIsValid(_ coord: CLLocationCoordinate2D) -> Bool {
    coord.latitude >= -90 && coord.latitude <= 90 && coord.longitude >= -180 && coord.longitude <= 180
}

/// `CLLocationCoordinate2DMake`.
public func CLLocationCoordinate2DMake(
    _ latitude: CLLocationDegrees, _ longitude: CLLocationDegrees
) -> CLLocationCoordinate2D {
    CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
}

/// An invalid coordinate (−180, −180).
public let kCLLocationCoordinate2DInvalid = CLLocationCoordinate2D(latitude: -180, longitude: -180)

/// Every movement counts.
public let kCLDistanceFilterNone: CLLocationDistance = -1
public let kCLHeadingFilterNone: CLLocationDegrees = -1
public let kCLLocationAccuracyBestForNavigation: CLLocationAccuracy = -2
public let kCLLocationAccuracyBest: CLLocationAccuracy = -1
public let kCLLocationAccuracyNearestTenMeters: CLLocationAccuracy = 10
public let kCLLocationAccuracyHundredMeters: CLLocationAccuracy = 100
public let kCLLocationAccuracyKilometer: CLLocationAccuracy = 1000
public let kCLLocationAccuracyThreeKilometers: CLLocationAccuracy = 3000
/// Approximate locations, as with Precise Location off (iOS 14). Apple publishes no value; Waymark
/// uses −3, apart from every other level.
public let kCLLocationAccuracyReduced: CLLocationAccuracy = -3
public let CLLocationDistanceMax: CLLocationDistance = .greatestFiniteMagnitude
public let CLTimeIntervalMax: TimeInterval = .greatestFiniteMagnitude
public let kCLErrorDomain = "kCLErrorDomain"
public let kCLErrorUserInfoAlternateRegionKey = "alternateRegion"

/// `CLAuthorizationStatus`.
public enum CLAuthorizationStatus: Int32, @unchecked Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    case authorizedAlways = 3
    case authorizedWhenInUse = 4

    @available(iOS, introduced: 2.0, deprecated: 8.0, message: "Use kCLAuthorizationStatusAuthorizedAlways")
    public static var authorized: CLAuthorizationStatus { .authorizedAlways }
}

/// `CLAccuracyAuthorization` (iOS 14).
public enum CLAccuracyAuthorization: Int, @unchecked Sendable {
    case fullAccuracy = 0
    case reducedAccuracy = 1
}

/// `CLActivityType`.
public enum CLActivityType: Int, @unchecked Sendable {
    case other = 1
    case automotiveNavigation = 2
    case fitness = 3
    case otherNavigation = 4
    case airborne = 5
}

/// `CLDeviceOrientation`.
public enum CLDeviceOrientation: Int32, @unchecked Sendable {
    case unknown = 0
    case portrait = 1
    case portraitUpsideDown = 2
    case landscapeLeft = 3
    case landscapeRight = 4
    case faceUp = 5
    case
        faceDown = 6
}

/// `CLRegionState`.
@frozen public enum CLRegionState: Int, @unchecked Sendable {
    case unknown = 0
    case inside = 1
    case outside = 2
}

/// `CLProximity`.
public enum CLProximity: Int, @unchecked Sendable {
    case unknown = 0
    case immediate = 1
    case near = 2
    case far = 3
}

// MARK: - Between Apple's spelling and the device's

extension CLLocationCoordinate2D {
    init(_ c: Coordinate) { self.init(latitude: c.latitude, longitude: c.longitude) }
    var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

extension CLAuthorizationStatus {
    init(_ status: AuthorizationStatus) {
        switch status {
        case .notDetermined: self = .notDetermined
        case .restricted: self = .restricted
        case .denied: self = .denied
        case .authorizedWhenInUse: self = .authorizedWhenInUse
        case .authorizedAlways: self = .authorizedAlways
        }
    }
}

extension CLAccuracyAuthorization {
    init(_ accuracy: AccuracyAuthorization) { self = accuracy == .fullAccuracy ? .fullAccuracy : .reducedAccuracy }
}

extension CLActivityType {
    init(_ type: ActivityType) {
        switch type {
        case .other: self = .other
        case .automotiveNavigation: self = .automotiveNavigation
        case .fitness: self = .fitness
        case .otherNavigation: self = .otherNavigation
        case .airborne: self = .airborne
        }
    }

    var activityType: ActivityType {
        switch self {
        case .other: .other
        case .automotiveNavigation: .automotiveNavigation
        case .fitness: .fitness
        case .otherNavigation: .otherNavigation
        case .airborne: .airborne
        }
    }
}

extension CLRegionState {
    init(_ state: RegionState) {
        switch state {
        case .unknown: self = .unknown
        case .inside: self = .inside
        case .outside: self = .outside
        }
    }
}
