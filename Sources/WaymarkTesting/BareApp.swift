import Waymark

/// An app with no code of its own: the test, or the view model under test, drives the manager.
///
/// Its launch configures nothing, requests nothing and starts nothing, and it listens to no
/// manager. Use it when the code under test drives the ``Waymark/DeviceLocationManager`` and is
/// its delegate, as an app's view model does:
///
/// ```swift
/// let device = TestDevice(scenario: scenario, trace: walk, app: BareApp())
/// let model = RunViewModel(manager: device.manager, info: scenario.info)  // becomes the delegate
/// device.launch()
/// ```
///
/// It counts the lifecycle calls it receives, so a test can see what the app was told.
public final class BareApp: SimulatedApp {
    /// How many times the app finished launching.
    public private(set) var launches = 0
    /// How many times it entered the background.
    public private(set) var backgroundEntries = 0
    /// How many times it became active.
    public private(set) var activations = 0

    /// An app that has not launched yet.
    public init() {}

    /// Counts the launch; configures nothing.
    public func didFinishLaunching(_ system: Simulation, inBackground: Bool) { launches += 1 }
    /// Counts the activation; requests nothing and starts nothing.
    public func didBecomeActive(_ system: Simulation) { activations += 1 }
    /// Counts the stay in the background; begins no task.
    public func didEnterBackground(_ system: Simulation) { backgroundEntries += 1 }
}
