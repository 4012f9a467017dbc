import Foundation
import Waymark

/// `CLError`: an error of Core Location, with its code (`kCLErrorDomain`). Errors the manager
/// reports reach `locationManager(_:didFailWithError:)` as this type, so `error as? CLError` and
/// `(error as? CLError)?.code == .denied` work as on iOS.
public struct CLError: CustomNSError, Hashable, Error, Sendable {
    /// `CLError.Code`.
    public enum Code: Int, @unchecked Sendable, Equatable {
        case locationUnknown = 0
        case denied = 1
        case network = 2
        case headingFailure = 3
        case regionMonitoringDenied = 4
        case regionMonitoringFailure = 5
        case regionMonitoringSetupDelayed = 6
        case regionMonitoringResponseDelayed = 7
        case geocodeFoundNoResult = 8
        case geocodeFoundPartialResult = 9
        case geocodeCanceled = 10
        case deferredFailed = 11
        case deferredNotUpdatingLocation = 12
        case deferredAccuracyTooLow = 13
        case deferredDistanceFiltered = 14
        case deferredCanceled = 15
        case rangingUnavailable = 16
        case rangingFailure = 17
        case promptDeclined = 18
        case historicalLocationError = 19
    }

    public let code: Code
    /// The error's string values (Waymark puts its reason in a word under `"reason"`).
    private let strings: [String: String]

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        strings = userInfo.compactMapValues { $0 as? String }
    }

    /// What the error carries.
    public var userInfo: [String: Any] { strings }

    public static var errorDomain: String { kCLErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { strings }

    public static func == (a: CLError, b: CLError) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static var locationUnknown: Code { .locationUnknown }
    public static var denied: Code { .denied }
    public static var network: Code { .network }
    public static var headingFailure: Code { .headingFailure }
    public static var regionMonitoringDenied: Code { .regionMonitoringDenied }
    public static var regionMonitoringFailure: Code { .regionMonitoringFailure }
    public static var regionMonitoringSetupDelayed: Code { .regionMonitoringSetupDelayed }
    public static var regionMonitoringResponseDelayed: Code { .regionMonitoringResponseDelayed }
    public static var geocodeFoundNoResult: Code { .geocodeFoundNoResult }
    public static var geocodeFoundPartialResult: Code { .geocodeFoundPartialResult }
    public static var geocodeCanceled: Code { .geocodeCanceled }
    public static var deferredFailed: Code { .deferredFailed }
    public static var deferredNotUpdatingLocation: Code { .deferredNotUpdatingLocation }
    public static var deferredAccuracyTooLow: Code { .deferredAccuracyTooLow }
    public static var deferredDistanceFiltered: Code { .deferredDistanceFiltered }
    public static var deferredCanceled: Code { .deferredCanceled }
    public static var rangingUnavailable: Code { .rangingUnavailable }
    public static var rangingFailure: Code { .rangingFailure }
    public static var promptDeclined: Code { .promptDeclined }
    public static var historicalLocationError: Code { .historicalLocationError }

    /// The region the system would monitor instead (`kCLErrorUserInfoAlternateRegionKey`): never
    /// set by the simulated device.
    public var alternateRegion: CLRegion? { nil }

    /// The device's error, in Core Location's terms.
    init(_ error: LocationError) {
        self.init(Code(rawValue: error.code.rawValue) ?? .locationUnknown, userInfo: ["reason": error.reason])
    }
}
