import Foundation
import Waymark

/// `CLBackgroundActivitySession` (iOS 17): held while the app is in use, it keeps the app in
/// use in the background (with the location indicator), so its updates and events go on. It needs
/// the `location` background mode and must be created while the app is in use; otherwise it is
/// held but does nothing. It ends with ``invalidate()`` or the app's process.
public final class CLBackgroundActivitySession: @unchecked Sendable {
    // @unchecked Sendable, as Apple's: its one object is used on the device's isolation.
    private let session: BackgroundActivitySession?

    public init() {
        guard let device = Simulation.current else { Simulation.noDevice("CLBackgroundActivitySession(), which") }
        session = device.startBackgroundActivitySession()
    }

    public func invalidate() { session?.invalidate() }

    /// Why the session is not active, as it changes (iOS 18): the simulated device sends none;
    /// its audit log says why a session was ignored.
    public var diagnostics: Diagnostics { Diagnostics() }

    public final class Diagnostics: AsyncSequence, @unchecked Sendable {
        public typealias Element = Diagnostic
        public struct Iterator: AsyncIteratorProtocol {
            public mutating func next() async throws -> Diagnostic? { nil }
        }
        public func makeAsyncIterator() -> Iterator { Iterator() }
    }

    public struct Diagnostic: Sendable {
        public var authorizationDenied: Bool { false }
        public var authorizationDeniedGlobally: Bool { false }
        public var authorizationRestricted: Bool { false }
        public var insufficientlyInUse: Bool { false }
        public var serviceSessionRequired: Bool { false }
        public var authorizationRequestInProgress: Bool { false }
    }
}

/// `CLServiceSession` (iOS 18): the app declares the authorization a feature needs; while the
/// session is held, Core Location asks for it when the app can show a prompt, and again after a
/// temporary authorization lapsed. With `NSLocationRequireExplicitServiceSession`, live updates
/// carry nothing without one.
public final class CLServiceSession: @unchecked Sendable {
    // @unchecked Sendable, as Apple's: its one object is used on the device's isolation.
    public enum AuthorizationRequirement: Sendable, Hashable {
        case none, whenInUse, always

        var engine: ServiceSession.Authorization {
            switch self {
            case .none: .none
            case .whenInUse: .whenInUse
            case .always: .always
            }
        }
    }

    private let session: ServiceSession?

    public init(authorization: AuthorizationRequirement) {
        guard let device = Simulation.current else { Simulation.noDevice("CLServiceSession(authorization:), which") }
        session = device.startServiceSession(authorization: authorization.engine)
    }

    /// The purpose key asks for full accuracy too; the simulated device holds the session alike.
    public convenience init(authorization: AuthorizationRequirement, fullAccuracyPurposeKey: String) {
        self.init(authorization: authorization)
    }

    public func invalidate() { session?.invalidate() }

    /// The session's diagnostics: the simulated device sends none.
    public var diagnostics: Diagnostics { Diagnostics() }

    public final class Diagnostics: AsyncSequence, @unchecked Sendable {
        public typealias Element = Diagnostic
        public struct Iterator: AsyncIteratorProtocol {
            public mutating func next() async throws -> Diagnostic? { nil }
        }
        public func makeAsyncIterator() -> Iterator { Iterator() }
    }

    public struct Diagnostic: Sendable {
        public var authorizationDenied: Bool { false }
        public var authorizationDeniedGlobally: Bool { false }
        public var authorizationRestricted: Bool { false }
        public var insufficientlyInUse: Bool { false }
        public var serviceSessionRequired: Bool { false }
        public var fullAccuracyDenied: Bool { false }
        public var alwaysAuthorizationDenied: Bool { false }
        public var authorizationRequestInProgress: Bool { false }
        public var accuracyLimited: Bool { false }
    }
}
