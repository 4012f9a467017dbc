import Foundation
import Waymark

/// `CLLocationUpdate` (iOS 17): one element of ``liveUpdates(_:)``: a location, or (iOS 18) why
/// there is none.
public struct CLLocationUpdate: Sendable {
    public let location: CLLocation?
    /// The device is stationary: updates pause until it moves.
    public let isStationary: Bool
    let diagnostic: LiveUpdate.Diagnostic?

    init(_ update: LiveUpdate) {
        location = update.location.map(CLLocation.init)
        isStationary = update.isStationary
        diagnostic = update.diagnostic
    }

    public var stationary: Bool { isStationary }
    public var authorizationDenied: Bool { diagnostic == .authorizationDenied }
    public var authorizationDeniedGlobally: Bool { diagnostic == .authorizationDeniedGlobally }
    public var authorizationRestricted: Bool { diagnostic == .authorizationRestricted }
    public var authorizationRequestInProgress: Bool { diagnostic == .authorizationRequestInProgress }
    public var insufficientlyInUse: Bool { diagnostic == .insufficientlyInUse }
    public var locationUnavailable: Bool { diagnostic == .locationUnavailable }
    public var accuracyLimited: Bool { diagnostic == .accuracyLimited }
    public var serviceSessionRequired: Bool { diagnostic == .serviceSessionRequired }

    /// How the updates are used; it sets the activity type, and so when a stationary device
    /// pauses them.
    public enum LiveConfiguration: Sendable, Hashable {
        case `default`, automotiveNavigation, otherNavigation, fitness, airborne

        var activityType: ActivityType {
            switch self {
            case .default: .other
            case .automotiveNavigation: .automotiveNavigation
            case .otherNavigation: .otherNavigation
            case .fitness: .fitness
            case .airborne: .airborne
            }
        }
    }

    /// The updates as an asynchronous sequence: they begin when it is asked for (starting the
    /// device's location updates for the app), and end when the app's process does.
    public static func liveUpdates(_ configuration: LiveConfiguration = .default) -> Updates {
        let manager = DeviceLocationManager()
        manager.activityType = configuration.activityType
        return Updates(stream: manager.liveUpdates())
    }

    /// `CLLocationUpdate.Updates`.
    public struct Updates: AsyncSequence, Sendable {
        public typealias Element = CLLocationUpdate
        let stream: AsyncStream<LiveUpdate>

        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<LiveUpdate>.Iterator
            public mutating func next() async throws -> CLLocationUpdate? {
                await base.next().map(CLLocationUpdate.init)
            }
        }

        public func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator()) }
    }
}
