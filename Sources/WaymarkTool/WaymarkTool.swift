// The `waymark` command-line tool: its commands live in the WaymarkCLI library.
import ArgumentParser
import WaymarkCLI

@main
enum WaymarkTool {
    static func main() async {
        if WaymarkCommand.refuseUnknownCommand(Array(CommandLine.arguments.dropFirst())) {
            WaymarkCommand.exit(withError: ExitCode(64))
        }
        await run(WaymarkCommand.self)
    }

    /// The command's asynchronous entry point (in an `async` function, the one that runs
    /// asynchronous commands).
    private static func run<Command: AsyncParsableCommand>(_ command: Command.Type) async { await command.main() }
}
