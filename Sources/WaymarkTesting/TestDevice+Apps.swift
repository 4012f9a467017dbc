import Waymark
import WaymarkUIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Driving an app written for iOS: its app delegate's type, its Info.plist, its prompts as they
/// appear, and waiting for its asynchronous code.
extension TestDevice {
    /// A device running the app whose delegate is `app`: a new delegate (and a new process) at
    /// every launch, as on iOS. `infoPlist` is the path of the app's own `Info.plist`, which
    /// replaces the scenario's `info`.
    ///
    /// Drive it on the main actor, where UIKit runs the app's code.
    @MainActor
    public convenience init<Delegate: UIResponder & UIApplicationDelegate>(
        app: Delegate.Type, scenario: Scenario = Scenario(), infoPlist: String? = nil, trace: GPXReplaySource,
        epoch: Date? = nil
    ) throws {
        var scenario = scenario
        if let infoPlist { scenario.info = try AppInfo(contentsOfPropertyList: infoPlist) }
        self.init(scenario: scenario, trace: trace, epoch: epoch, makeApp: UIKitAppHost.factory(Delegate.self))
    }

    /// The app delegate of the current process, if it is a `D`.
    @MainActor public func appDelegate<D>(as type: D.Type = D.self) -> D? {
        (simulation.process?.app as? UIKitAppHost)?.delegate as? D
    }

    /// What the device's network answers: `device.network.serve("https://example.com/feed",
    /// text: "…")` before the app asks (``Waymark/SimulatedNetwork``).
    public var network: SimulatedNetwork { simulation.network }

    /// The user opens the app again after its end: a new process.
    public func relaunch() { bringToForeground() }

    /// The system alert waiting for the user: a permission prompt (on screen, or waiting for the
    /// app to come back), the Location Services alert, or the temporary full accuracy prompt.
    public var prompt: SystemAlert? { simulation.rules.promptWaiting }

    /// The user taps `button` on the alert waiting for them ("the prompt is on screen: tap Allow
    /// While Using"). Stops the test with a message when there is none, or it has no such button.
    public func tap(_ button: PromptAnswer) {
        precondition(!isFinished, "the run has finished")
        simulation.tap(button)
    }

    /// Waits until the app's asynchronous code has handled everything delivered so far (its
    /// streams read, its `async` delegate methods returned): see ``Waymark/Simulation/idle()``.
    public func idle(isolation: isolated (any Actor)? = #isolation) async { await simulation.idle() }
}
