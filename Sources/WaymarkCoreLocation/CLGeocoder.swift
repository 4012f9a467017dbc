import Foundation

/// `CLGeocodeCompletionHandler`.
public typealias CLGeocodeCompletionHandler = @Sendable ([CLPlacemark]?, (any Error)?) -> Void

/// `CLPlacemark`: the simulated device has no geocoding service, so none is ever made.
open class CLPlacemark: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    public init(placemark: CLPlacemark) {}
    public var location: CLLocation? { nil }
    public var region: CLRegion? { nil }
    public var timeZone: TimeZone? { nil }
    public var name: String? { nil }
    public var thoroughfare: String? { nil }
    public var subThoroughfare: String? { nil }
    public var locality: String? { nil }
    public var subLocality: String? { nil }
    public var administrativeArea: String? { nil }
    public var subAdministrativeArea: String? { nil }
    public var postalCode: String? { nil }
    public var isoCountryCode: String? { nil }
    public var country: String? { nil }
    public var inlandWater: String? { nil }
    public var ocean: String? { nil }
    public var areasOfInterest: [String]? { nil }
    public func copy(with zone: NSZone? = nil) -> Any { self }
    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) {}
    public required init?(coder: NSCoder) {}
}

/// `CLGeocoder`: the simulated device has no geocoding service, as a device without a network
/// connection has none: every request fails with `CLError.network`, asynchronously on the main
/// actor, as Apple's completion handlers come.
open class CLGeocoder: NSObject, @unchecked Sendable {
    public override init() {}

    public var isGeocoding: Bool { false }

    private func fail(_ completion: @escaping CLGeocodeCompletionHandler) {
        Task { @MainActor in completion(nil, CLError(.network)) }
    }

    public func reverseGeocodeLocation(_ location: CLLocation, completionHandler: @escaping CLGeocodeCompletionHandler)
    {
        fail(completionHandler)
    }
    public func reverseGeocodeLocation(_ location: CLLocation) async throws -> [CLPlacemark] { throw CLError(.network) }
    public func reverseGeocodeLocation(
        _ location: CLLocation, preferredLocale locale: Locale?, completionHandler: @escaping CLGeocodeCompletionHandler
    ) { fail(completionHandler) }
    public func reverseGeocodeLocation(_ location: CLLocation, preferredLocale locale: Locale?) async throws
        -> [CLPlacemark]
    { throw CLError(.network) }
    public func geocodeAddressString(_ addressString: String, completionHandler: @escaping CLGeocodeCompletionHandler) {
        fail(completionHandler)
    }
    public func geocodeAddressString(_ addressString: String) async throws -> [CLPlacemark] { throw CLError(.network) }
    public func geocodeAddressString(
        _ addressString: String, in region: CLRegion?, completionHandler: @escaping CLGeocodeCompletionHandler
    ) { fail(completionHandler) }
    public func geocodeAddressString(_ addressString: String, in region: CLRegion?) async throws -> [CLPlacemark] {
        throw CLError(.network)
    }
    public func geocodeAddressString(
        _ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?,
        completionHandler: @escaping CLGeocodeCompletionHandler
    ) { fail(completionHandler) }
    public func geocodeAddressString(_ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?)
        async throws -> [CLPlacemark]
    { throw CLError(.network) }
    public func cancelGeocode() {}
}
