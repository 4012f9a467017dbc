#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The kind of movement an app expects, as `CLActivityType`; it sets how soon a stationary
/// device pauses updates (see ``AutoPause``).
public enum ActivityType: String, Sendable, Hashable, Codable, CaseIterable {
    case other, automotiveNavigation, fitness, otherNavigation, airborne
}

/// An error the manager reports, with CoreLocation's codes (`CLError.Code`).
public struct LocationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Int, Sendable, Hashable, Codable {
        /// No location right now; keep trying (`kCLErrorLocationUnknown`).
        case locationUnknown = 0
        /// The user or the system denied access (`kCLErrorDenied`).
        case denied = 1
        /// The network is unavailable (`kCLErrorNetwork`).
        case network = 2
        /// The user or the system denied region monitoring (`kCLErrorRegionMonitoringDenied`).
        case regionMonitoringDenied = 4
        /// A region cannot be monitored: 20 already, or too large a radius
        /// (`kCLErrorRegionMonitoringFailure`).
        case regionMonitoringFailure = 5
        /// The temporary full accuracy request failed (`kCLErrorPromptDeclined`).
        case promptDeclined = 18

        /// The name used in audit logs: `locationUnknown`, `denied`, `network`,
        /// `regionMonitoringDenied`, `regionMonitoringFailure`, `promptDeclined`.
        public var name: String {
            switch self {
            case .locationUnknown: "locationUnknown"
            case .denied: "denied"
            case .network: "network"
            case .regionMonitoringDenied: "regionMonitoringDenied"
            case .regionMonitoringFailure: "regionMonitoringFailure"
            case .promptDeclined: "promptDeclined"
            }
        }
    }

    public var code: Code
    /// Why, in a word: for example `authorizationDenied`, `locationServicesDisabled`, `noFix`.
    public var reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.name) (\(reason))" }
}

/// One delivery from ``DeviceLocationManager/updates()``, as `CLLocationUpdate`.
public struct LocationUpdate: Sendable, Hashable {
    public var location: Location
    /// The app's state when the location was delivered.
    public var appState: AppState
    /// Why the policy delivered it (``FixReason``).
    public var reason: FixReason
    /// The point's index in its file, or the fix's sequence number.
    public var index: Int
    /// The track segment it came from.
    public var segment: Int

    public init(location: Location, appState: AppState, reason: FixReason, index: Int = 0, segment: Int = 0) {
        self.location = location
        self.appState = appState
        self.reason = reason
        self.index = index
        self.segment = segment
    }
}

/// Receives what a ``DeviceLocationManager`` reports, as `CLLocationManagerDelegate`.
///
/// Every method has a default that does nothing. Calls come on the simulation's isolation, in
/// simulation-time order. A `@MainActor` class conforms with an isolated conformance, and its
/// methods then run on the main actor, where the simulation runs:
///
/// ```swift
/// extension RunViewModel: @MainActor DeviceLocationManagerDelegate {
///     func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) { … }
/// }
/// ```
public protocol DeviceLocationManagerDelegate: AnyObject {
    /// One call per delivery: a single location, or the queue of a suspended app when it runs
    /// again, oldest first ("the most recent location update is at the end of the array").
    func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location])
    func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError)
    /// The status the app reads changed; from iOS 14 also when the app creates its manager.
    func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager)
    func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager)
    func locationManagerDidResumeLocationUpdates(_ manager: DeviceLocationManager)
    /// The device entered a monitored region (`locationManager(_:didEnterRegion:)`).
    func locationManager(_ manager: DeviceLocationManager, didEnterRegion region: CircularRegion)
    /// The device left a monitored region (`locationManager(_:didExitRegion:)`).
    func locationManager(_ manager: DeviceLocationManager, didExitRegion region: CircularRegion)
    /// A region's state, after a crossing or for `requestState(for:)`.
    func locationManager(
        _ manager: DeviceLocationManager, didDetermineState state: RegionState, for region: CircularRegion)
    func locationManager(_ manager: DeviceLocationManager, didStartMonitoringFor region: CircularRegion)
    func locationManager(
        _ manager: DeviceLocationManager, monitoringDidFailFor region: CircularRegion, withError error: LocationError)
    /// A visit began or ended (`locationManager(_:didVisit:)`).
    func locationManager(_ manager: DeviceLocationManager, didVisit visit: Visit)
}

extension DeviceLocationManagerDelegate {
    public func locationManager(_ manager: DeviceLocationManager, didUpdateLocations locations: [Location]) {}
    public func locationManager(_ manager: DeviceLocationManager, didFailWithError error: LocationError) {}
    public func locationManagerDidChangeAuthorization(_ manager: DeviceLocationManager) {}
    public func locationManagerDidPauseLocationUpdates(_ manager: DeviceLocationManager) {}
    public func locationManagerDidResumeLocationUpdates(_ manager: DeviceLocationManager) {}
    public func locationManager(_ manager: DeviceLocationManager, didEnterRegion region: CircularRegion) {}
    public func locationManager(_ manager: DeviceLocationManager, didExitRegion region: CircularRegion) {}
    public func locationManager(
        _ manager: DeviceLocationManager, didDetermineState state: RegionState, for region: CircularRegion
    ) {}
    public func locationManager(_ manager: DeviceLocationManager, didStartMonitoringFor region: CircularRegion) {}
    public func locationManager(
        _ manager: DeviceLocationManager, monitoringDidFailFor region: CircularRegion, withError error: LocationError
    ) {}
    public func locationManager(_ manager: DeviceLocationManager, didVisit visit: Visit) {}
}

/// A CoreLocation-style location manager, owned by the simulated app.
///
/// It keeps CoreLocation's names. It belongs to the app's process that was running when it was
/// created (``AppProcess``), or, created while no process runs, to the next one the device
/// launches: the device decides every fix by the rules of the iOS release it models and delivers
/// the survivors to the ``delegate`` and to ``updates()``. The app may create several, each with
/// its own properties and delegate, sharing the app's authorization. When its process ends it is
/// inert: its delegate is never called again, its streams finish, and a call on it does nothing
/// but say so in the audit log.
///
/// Like `CLLocationManager`, it is not thread-safe: use it on the simulation's isolation, from
/// the app's code, the delegate callbacks or a test.
public final class DeviceLocationManager {
    /// `kCLDistanceFilterNone`: every movement counts.
    public static let distanceFilterNone: Double = -1

    // Read for every delivery, on the device's isolation alone: no dynamic exclusivity checks.
    /// The object that hears the manager's events, held weakly as `CLLocationManager.delegate` is.
    @exclusivity(unchecked) public weak var delegate: (any DeviceLocationManagerDelegate)?
    /// Waymark's own app code listening to the manager (``TutorialApp``'s): it hears each
    /// delivery and pause before the delegate does, and leaves the delegate to the code around
    /// it. Held strongly, so that reading it on every fix costs no weak reference's side table.
    @exclusivity(unchecked) var tap: (any LocationManagerTap)?

    /// Where the manager stands.
    enum Binding {
        /// Created with no device to belong to.
        case unowned
        /// Created while no process ran: the next process of `device` adopts it.
        case waiting(DeviceReference)
        /// Manager `number` of a running `process`.
        case adopted(DeviceReference, ProcessReference, number: Int)
        /// Its process ended.
        case ended(DeviceReference, process: Int)
    }

    private(set) var binding = Binding.unowned
    /// The properties the rules read.
    private(set) var settings = LocationServiceStateMachine.Settings()
    /// Whether the loud message about an unowned manager was given.
    private var warned = false

    private var device: Simulation? {
        switch binding {
        case .unowned: nil
        case .waiting(let d), .adopted(let d, _, _), .ended(let d, _): d.device
        }
    }

    /// The app's authorization, as the user and the system set it (`denied` with Location
    /// Services off, `restricted` on a restricted device).
    public var authorizationStatus: AuthorizationStatus { device?.rules.authorization.status ?? .notDetermined }
    /// Full or reduced accuracy.
    public var accuracyAuthorization: AccuracyAuthorization {
        device?.rules.authorization.accuracy ?? .fullAccuracy
    }

    /// The accuracy the app asks for (``AccuracyModel`` says what each level gives).
    public var desiredAccuracy: DesiredAccuracy {
        get { settings.desiredAccuracy }
        set { update(\.desiredAccuracy, to: newValue, .desiredAccuracy, "\(newValue)") }
    }
    /// Metres the device must move from the last delivered location before the next one is
    /// delivered; ``distanceFilterNone`` (−1) delivers every fix.
    public var distanceFilter: Double {
        get { settings.distanceFilter }
        set { update(\.distanceFilter, to: newValue, .distanceFilter, ValueFormatting.fixed(newValue, decimals: 1)) }
    }
    /// Whether updates continue in the background. Setting it to true without the `location`
    /// background mode is a fatal error that terminates the app, as on iOS.
    public var allowsBackgroundLocationUpdates: Bool {
        get { settings.allowsBackgroundLocationUpdates }
        set {
            guard newValue != settings.allowsBackgroundLocationUpdates else { return }
            if newValue, case .adopted(let d, _, _) = binding, let device = d.device,
                !device.managerMayAllowBackgroundUpdates()
            {
                return
            }
            update(\.allowsBackgroundLocationUpdates, to: newValue, .allowsBackgroundLocationUpdates, "\(newValue)")
        }
    }
    /// Whether a stationary device pauses updates (the default, as in CoreLocation).
    public var pausesLocationUpdatesAutomatically: Bool {
        get { settings.pausesLocationUpdatesAutomatically }
        set {
            update(
                \.pausesLocationUpdatesAutomatically, to: newValue, .pausesLocationUpdatesAutomatically, "\(newValue)")
        }
    }
    /// The movement the app expects; it sets how soon updates pause.
    public var activityType: ActivityType {
        get { settings.activityType }
        set { update(\.activityType, to: newValue, .activityType, newValue.rawValue) }
    }
    /// Whether an Always app's background session shows the location indicator.
    public var showsBackgroundLocationIndicator: Bool {
        get { settings.showsBackgroundLocationIndicator }
        set {
            update(\.showsBackgroundLocationIndicator, to: newValue, .showsBackgroundLocationIndicator, "\(newValue)")
        }
    }

    /// Sets one property and, when it changed, tells the device (a `setting` audit event).
    private func update<T: Equatable>(
        _ property: WritableKeyPath<LocationServiceStateMachine.Settings, T>, to value: T, _ name: ManagerSetting,
        _ text: @autoclosure () -> String
    ) {
        guard value != settings[keyPath: property] else { return }
        settings[keyPath: property] = value
        switch binding {
        case .adopted(let d, _, let number):
            d.device?.managerSettingChanged(number: number, name, text(), settings)
        case .unowned, .waiting:
            changesBeforeAdoption.append((name, text()))
        case .ended:
            break
        }
    }

    /// What the app's code set before a process adopted the manager, in order: the device records
    /// it as `setting` events when its run starts.
    private var changesBeforeAdoption: [(name: ManagerSetting, value: String)] = []

    /// The device whose next process will adopt the manager.
    func wait(for device: Simulation) { binding = .waiting(DeviceReference(device)) }

    /// A process of `device` adopts the manager as its manager `number`.
    func adopt(by device: Simulation, process: AppProcess, number: Int) {
        binding = .adopted(DeviceReference(device), process.reference, number: number)
    }

    /// What was set before the run started, once.
    func takeChangesBeforeAdoption() -> [(name: ManagerSetting, value: String)] {
        defer { changesBeforeAdoption = [] }
        return changesBeforeAdoption
    }

    /// Whether a device has taken the manager.
    var isAdopted: Bool { if case .unowned = binding { false } else { true } }

    /// Whether a process has taken it (now or before it ended).
    var isInProcess: Bool {
        switch binding {
        case .adopted, .ended: true
        case .unowned, .waiting: false
        }
    }

    /// Leaves the device it waits for, if any.
    func leaveWaitingDevice() {
        guard case .waiting(let d) = binding else { return }
        d.device?.waitingManagers.removeAll { $0 === self }
        binding = .unowned
    }

    /// Undoes `allowsBackgroundLocationUpdates` set before adoption on a device whose app lacks
    /// the `location` background mode.
    func refuseBackgroundUpdates() { settings.allowsBackgroundLocationUpdates = false }

    // The manager is used on its device's isolation alone, and these (and the two buffers
    // below) are read or set for every fix: no dynamic exclusivity checks.
    /// The most recently delivered location; a manager created while the significant-change
    /// service runs starts with the service's latest location (``DeviceRules/locationForNewManager``).
    @exclusivity(unchecked) public internal(set) var location: Location?
    /// Whether the app has asked for updates and not stopped them (paused updates count).
    public var isUpdatingLocation: Bool {
        guard case .adopted(let d, _, let number) = binding, let device = d.device else { return false }
        return device.rules.isUpdating(manager: number)
    }

    @exclusivity(unchecked) private var continuations: [Int: DeviceStreamBuffer<LocationUpdate>] = [:]
    @exclusivity(unchecked) private var liveContinuations: [Int: DeviceStreamBuffer<LiveUpdate>] = [:]
    /// Whether live-update streams are open on it.
    var hasLiveStreams: Bool { !liveContinuations.isEmpty }
    /// The array handed to the delegate, reused from call to call.
    @exclusivity(unchecked) private var spareLocations: [Location] = []
    /// The updates being delivered to the delegate (empty between calls): a delegate inside
    /// Waymark reads their app state and reason here, without going through the simulation and
    /// its process. The tap is handed them.
    @exclusivity(unchecked) private(set) var updatesBeingDelivered: [LocationUpdate] = []
    private var nextContinuationID = 0

    /// A manager the app's code creates, as it would create `CLLocationManager()`.
    ///
    /// It belongs to the device running the app's code now (created in the app's launch or a
    /// callback), or to the device the current task created (a test's): to the process running
    /// there, or to the next one launched. With no device to belong to, its properties can still
    /// be set and it can be handed to ``Simulation/init(scenario:epoch:app:manager:)`` or
    /// `TestDevice(manager:)`; used otherwise, it stops the program with a message that says how
    /// to give it a device.
    public init() {
        CurrentDevice.value?.managerCreated(self)
    }

    /// A manager the device itself creates.
    init(unowned: ()) {}

    /// Sends a call to the device, as its process's manager; says what went wrong otherwise.
    private func call(_ name: String, _ event: (Int) -> DeviceEvent) {
        switch binding {
        case .adopted(let d, let process, let number):
            guard let device = d.device, !process.hasEnded else { return }
            device.managerCall(event(number))
        case .ended(let d, let number):
            d.device?.endedManagerUsed(name, process: number)
        case .waiting:
            // No process runs: no app code can have made this call; as before the launch, the
            // device does not hear it.
            break
        case .unowned:
            Simulation.noDevice("\(name) on a location manager that")
        }
    }

    /// Asks for When In Use authorization (`requestWhenInUseAuthorization()`).
    public func requestWhenInUseAuthorization() {
        call("requestWhenInUseAuthorization()") { _ in .requestAuthorization(always: false) }
    }
    /// Asks for Always authorization (`requestAlwaysAuthorization()`).
    public func requestAlwaysAuthorization() {
        call("requestAlwaysAuthorization()") { _ in .requestAuthorization(always: true) }
    }
    /// Starts standard location updates (`startUpdatingLocation()`); after an automatic pause,
    /// restarts them.
    public func startUpdatingLocation() { call("startUpdatingLocation()") { .startUpdates(manager: $0) } }
    /// Stops them (`stopUpdatingLocation()`).
    public func stopUpdatingLocation() { call("stopUpdatingLocation()") { .stopUpdates(manager: $0) } }

    // MARK: Services that wake or relaunch the app

    /// Starts the significant-change location service
    /// (`startMonitoringSignificantLocationChanges()`): a location when the device has moved
    /// 500 m and at least 5 minutes after the last. It relaunches an Always app; after a relaunch,
    /// call it again to receive the events ("Upon relaunch, you must still configure a location
    /// manager object and call this method").
    public func startMonitoringSignificantLocationChanges() {
        call("startMonitoringSignificantLocationChanges()") { .significantChanges(start: true, manager: $0) }
    }
    /// `stopMonitoringSignificantLocationChanges()`.
    public func stopMonitoringSignificantLocationChanges() {
        call("stopMonitoringSignificantLocationChanges()") { .significantChanges(start: false, manager: $0) }
    }

    /// `startMonitoring(for:)`: entry and exit events for a circular region, at most 20 per app
    /// (one more fails with `regionMonitoringFailure`). Regions persist across launches.
    public func startMonitoring(for region: CircularRegion) {
        call("startMonitoring(for:)") { _ in .startMonitoring(region) }
    }
    /// `stopMonitoring(for:)`.
    public func stopMonitoring(for region: CircularRegion) {
        call("stopMonitoring(for:)") { _ in .stopMonitoring(identifier: region.identifier) }
    }
    /// `requestState(for:)`: the delegate's `didDetermineState` answers.
    public func requestState(for region: CircularRegion) {
        call("requestState(for:)") { _ in .requestState(identifier: region.identifier) }
    }
    /// The regions the app monitors (`monitoredRegions`), across launches.
    public var monitoredRegions: Set<CircularRegion> {
        Set(device?.rules.regionMonitor.regions.map(\.region) ?? [])
    }
    /// `maximumRegionMonitoringDistance`, in metres (an assumption: Apple documents no value).
    public var maximumRegionMonitoringDistance: Double { RegionMonitorStateMachine.maximumRadius }

    /// `startMonitoringVisits()`: arrivals and departures (``VisitStateMachine`` has the model).
    public func startMonitoringVisits() { call("startMonitoringVisits()") { _ in .visits(start: true) } }
    /// `stopMonitoringVisits()`.
    public func stopMonitoringVisits() { call("stopMonitoringVisits()") { _ in .visits(start: false) } }

    /// `requestLocation()`: one location, then the request ends; `didFailWithError` with
    /// `locationUnknown` if none comes in time. It is this manager's own: the location and the
    /// failure come to its delegate, at its `desiredAccuracy`; starting its updates cancels it,
    /// and while its updates run it does nothing.
    public func requestLocation() { call("requestLocation()") { .requestLocation(manager: $0) } }

    /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:completion:)`: asks the user for
    /// full accuracy until the app is no longer in use. Fails with `promptDeclined` when the
    /// Info has no such purpose key, the app already has full accuracy, or it is in the
    /// background.
    public func requestTemporaryFullAccuracyAuthorization(
        withPurposeKey purposeKey: String, completion: ((LocationError?) -> Void)? = nil
    ) {
        _ = requestTemporaryFullAccuracy(purposeKey, completion: completion, resumesAtEnd: false)
    }

    /// The `async` form: returns once the user allowed or denied; throws `promptDeclined` when
    /// the request is declined (at once: in the cases Apple lists, among them a request made in
    /// the background, as a task of a suspended app makes it) or the prompt dismissed (the app
    /// leaving the screen, or its process ending, dismisses it); when the process ends before
    /// the answer reaches its code (on iOS the waiting code would end with it; here it resumes,
    /// as the process's streams finish); and at once when the manager has no running process
    /// (nothing asks then, and no answer would come).
    nonisolated(nonsending) public func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String)
        async throws(LocationError)
    {
        let error: LocationError? = await withCheckedContinuation { continuation in
            let waits = requestTemporaryFullAccuracy(
                purposeKey, completion: { continuation.resume(returning: $0) }, resumesAtEnd: true)
            if !waits {
                continuation.resume(
                    returning: LocationError(
                        .promptDeclined, reason: "the manager's process does not run: nothing asks"))
            }
        }
        if let error { throw error }
    }

    /// The request, its completion kept under the number the request will have; false when it
    /// cannot be kept (no running process: nothing asks, and the completion is never called).
    /// A process whose code does not run (suspended) keeps it: its request is declined, and the
    /// completion called, at once.
    private func requestTemporaryFullAccuracy(
        _ purposeKey: String, completion: ((LocationError?) -> Void)?, resumesAtEnd: Bool
    ) -> Bool {
        // The device is held while its process is read: it holds the process.
        var kept = false
        if let completion, case .adopted(let d, let reference, _) = binding, let device = d.device,
            let process = reference.process, !process.hasEnded
        {
            process.temporaryFullAccuracyCompletions[device.rules.temporaryAccuracy.counter + 1] =
                AppProcess.AccuracyCompletion(body: completion, resumesAtEnd: resumesAtEnd)
            kept = true
        }
        call("requestTemporaryFullAccuracyAuthorization(withPurposeKey:)") { _ in
            .requestTemporaryFullAccuracy(purposeKey: purposeKey)
        }
        return kept
    }

    /// Delivered locations as an asynchronous sequence, as `CLLocationUpdate.liveUpdates()`.
    ///
    /// Each call gives a new stream that receives every update delivered from then on; it ends
    /// when the simulation finishes or the manager's process ends. The stream buffers without
    /// limit, so a slow reader loses nothing. `for await` works from any isolation, the main
    /// actor included.
    public func updates() -> AsyncStream<LocationUpdate> {
        let buffer = DeviceStreamBuffer<LocationUpdate>()
        let stream = buffer.makeStream()
        if case .ended = binding {
            buffer.finish()
            return stream
        }
        let id = nextContinuationID
        nextContinuationID += 1
        continuations[id] = buffer
        device?.watch(buffer)
        return stream
    }

    /// Live updates, as `CLLocationUpdate.liveUpdates()` (iOS 17+): the locations the app
    /// receives, and the updates that say why none comes: ``LiveUpdate/isStationary`` when the
    /// device stops (iOS 17), ``LiveUpdate/diagnostic`` (iOS 18) when one is dropped, each
    /// diagnostic once until a location comes again.
    ///
    /// Asking for them starts the manager's updates ("Tells Core Location to start delivering
    /// the location updates"), and from notDetermined asks for When In Use, as an implicit service
    /// session does. Before iOS 17 the stream ends at once (the API does not exist).
    public func liveUpdates() -> AsyncStream<LiveUpdate> {
        if case .unowned = binding { Simulation.noDevice("liveUpdates() (CLLocationUpdate.liveUpdates()), which") }
        let buffer = DeviceStreamBuffer<LiveUpdate>()
        let stream = buffer.makeStream()
        guard case .adopted(let d, let process, let number) = binding, let device = d.device, !process.hasEnded,
            device.managerMayStartLiveUpdates()
        else {
            if case .ended(let d, let number) = binding { d.device?.endedManagerUsed("liveUpdates()", process: number) }
            buffer.finish()
            return stream
        }
        let id = nextContinuationID
        nextContinuationID += 1
        liveContinuations[id] = buffer
        device.watch(buffer)
        device.liveListenersChanged()
        device.managerCall(.startLiveUpdates(manager: number))
        return stream
    }

    func yieldLive(_ update: LiveUpdate) {
        var ended: [Int] = []
        for (id, buffer) in liveContinuations where !buffer.yield(update) { ended.append(id) }
        for id in ended { liveContinuations[id] = nil }
        if !ended.isEmpty { device?.liveListenersChanged() }
    }

    /// Hands `updates` to the tap, the delegate and the streams (`liveBlocked`: the live-update streams
    /// carry no location without a service session).
    func deliver(_ updates: [LocationUpdate], liveBlocked: Bool) {
        guard !updates.isEmpty else { return }
        location = updates[updates.count - 1].location
        if !liveContinuations.isEmpty && !liveBlocked {
            for update in updates { yieldLive(LiveUpdate(location: update.location)) }
        }
        // The tap is handed the updates; the delegate reads them here. A delivery the
        // delegate's code starts (a service's location, answered at once) ends inside this
        // one, which then still sees its own updates.
        tap?.managerDelivers(self, updates)
        if let delegate {
            // The buffers are swapped in and out rather than copied (this runs for every fix).
            var locations: [Location] = []
            swap(&locations, &spareLocations)
            locations.empty()
            for i in updates.indices { locations.append(updates[i].location) }
            var outer = updates
            swap(&outer, &updatesBeingDelivered)
            delegate.locationManager(self, didUpdateLocations: locations)
            swap(&outer, &updatesBeingDelivered)
            swap(&locations, &spareLocations)
        }
        guard !continuations.isEmpty else { return }
        var ended: [Int] = []
        for (id, buffer) in continuations {
            for update in updates where !buffer.yield(update) {
                // A stream whose reader has gone (the loop ended, the task was cancelled) is let go.
                ended.append(id)
                break
            }
        }
        for id in ended { continuations[id] = nil }
    }

    /// Calls the delegate's method (a pause is heard by the tap first).
    func tell(_ call: DelegateCall) {
        if case .didPauseLocationUpdates = call { tap?.managerPaused(self) }
        guard let delegate else { return }
        switch call {
        case .didChangeAuthorization: delegate.locationManagerDidChangeAuthorization(self)
        case .didFailWithError(let error): delegate.locationManager(self, didFailWithError: error)
        case .didPauseLocationUpdates: delegate.locationManagerDidPauseLocationUpdates(self)
        case .didResumeLocationUpdates: delegate.locationManagerDidResumeLocationUpdates(self)
        case .didEnterRegion(let region): delegate.locationManager(self, didEnterRegion: region)
        case .didExitRegion(let region): delegate.locationManager(self, didExitRegion: region)
        case .didDetermineState(let state, let region):
            delegate.locationManager(self, didDetermineState: state, for: region)
        case .didStartMonitoring(let region): delegate.locationManager(self, didStartMonitoringFor: region)
        case .monitoringDidFail(let region, let error):
            delegate.locationManager(self, monitoringDidFailFor: region, withError: error)
        case .didVisit(let visit): delegate.locationManager(self, didVisit: visit)
        }
    }

    /// How many update streams are open (for tests).
    var openStreamCount: Int { continuations.count }

    /// The run ended: every stream ends.
    func finishUpdates() {
        for buffer in continuations.values { buffer.finish() }
        continuations.removeAll()
        endLiveUpdates()
    }

    /// The app's live-update streams end.
    func endLiveUpdates() {
        for buffer in liveContinuations.values { buffer.finish() }
        liveContinuations.removeAll()
    }

    /// Its process ended: the manager is inert from now on.
    func processEnded() {
        guard case .adopted(let d, let process, _) = binding else { return }
        binding = .ended(d, process: process.number)
        finishUpdates()
    }
}

/// Waymark's own app code listening to a manager beside its delegate (``DeviceLocationManager/tap``).
protocol LocationManagerTap: AnyObject {
    /// The manager delivers `updates`, before its delegate hears of them.
    func managerDelivers(_ manager: DeviceLocationManager, _ updates: [LocationUpdate])
    /// The system paused the manager's updates.
    func managerPaused(_ manager: DeviceLocationManager)
}
