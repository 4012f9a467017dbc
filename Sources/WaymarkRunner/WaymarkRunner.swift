import Waymark
import WaymarkCLI
import WaymarkUIKit

/// Runs a team's own iOS app on the simulated device under `waymark replay`'s options: the same
/// audit log, report page and store, for the app's own code.
///
/// A package adds a three-line executable target:
///
/// ```swift
/// import WaymarkRunner
/// import MyApp
/// await WaymarkRunner.main(app: AppDelegate.self)
/// ```
///
/// and runs it as `swift run my-app-runner walk.gpx --info-plist Info.plist --background-at 1m
/// --audit run.ndjson --report run.html`. Every launch makes a new `AppDelegate` (and a new
/// process), on the main actor.
public enum WaymarkRunner {
    @MainActor public static func main<Delegate: UIResponder & UIApplicationDelegate>(app: Delegate.Type) async {
        await main(app: app, arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// The same with `arguments` (`waymark replay`'s, without the command name).
    @MainActor public static func main<Delegate: UIResponder & UIApplicationDelegate>(
        app: Delegate.Type, arguments: [String]
    ) async {
        do {
            guard let command = try WaymarkCommand.Replay.parseAsRoot(arguments) as? WaymarkCommand.Replay else {
                // --help, --version: what parsing printed is the answer.
                return
            }
            try await command.run(makeApp: UIKitAppHost.factory(Delegate.self))
        } catch {
            WaymarkCommand.Replay.exit(withError: error)
        }
    }
}
