/// `CLLocationUpdate.liveUpdates()` (iOS 17+): what the streams say besides locations. A
/// stationary device says so (iOS 17); from iOS 18 a diagnostic says why no location comes, each
/// once until a location comes again; with `NSLocationRequireExplicitServiceSession` and no
/// `CLServiceSession` the streams carry no location.
public struct LiveUpdateStateMachine: Sendable, Hashable {
    /// The last diagnostic the streams heard.
    public internal(set) var lastDiagnostic: LiveUpdate.Diagnostic?
    /// Whether the gate holds locations back (no service session with the Info's key).
    public internal(set) var blocked = false
    /// Whether the scenario's script listens (its `liveUpdates` action).
    public internal(set) var scriptedListener = false
}
