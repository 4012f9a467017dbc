import Foundation
import Testing

@testable import Waymark

/// Issue 27, item 14: control characters in names (a trace's file name, a GPX name, a session's
/// source) reach the terminal escaped, as git and `ls` show them.
@Suite struct ControlCharacterTests {
    @Test func controlCharactersAreShownEscaped() {
        #expect(TerminalText.escaped("walk.gpx") == "walk.gpx")
        #expect(TerminalText.escaped(#"C:\walks\a.gpx"#) == #"C:\walks\a.gpx"#)
        #expect(TerminalText.escaped("w\u{1B}]0;x\u{7}\u{8}.gpx") == #"$'w\x1b]0;x\x07\x08.gpx'"#)
        #expect(TerminalText.escaped("a\u{0}b\u{7F}") == #"$'a\x00b\x7f'"#)
        #expect(TerminalText.escaped("tab\there\nnext\r") == #"$'tab\there\nnext\r'"#)
        // C1 controls (U+009B is CSI) and the bidirectional overrides.
        #expect(TerminalText.escaped("\u{9B}31m\u{202E}fdp.exe") == #"$'\u{9b}31m\u{202e}fdp.exe'"#)
        // Once something is escaped, the whole is quoted as $'…', with a backslash and a quote
        // escaped inside: the result reads back one way. Text that looks quoted is quoted too.
        #expect(TerminalText.escaped("\\x1b\u{1B}") == #"$'\\x1b\x1b'"#)
        #expect(TerminalText.escaped("it's\\n") == "it's\\n", "without a control character, as it is")
        #expect(TerminalText.escaped("it's\u{7}") == #"$'it\'s\x07'"#)
        #expect(TerminalText.escaped("$'a'") == #"$'$\'a\''"#)
        // Messages of several lines keep their line breaks and tabs.
        #expect(TerminalText.escaped("one\n\ttwo\u{7}", keepingLineBreaks: true) == "$'one\n\ttwo\\x07'")
        // Letters of any script are no controls.
        #expect(TerminalText.escaped("Straße → 東京") == "Straße → 東京")
    }
}

/// Through the tool: a trace whose file name holds ESC, BEL and BS.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct ControlCharacterCLITests {
    typealias Tool = XMLForbiddenCharacterCLITests

    /// `info`'s heading, replay's summary, `sessions list` and `sessions show` show the name
    /// escaped, and nothing they print holds a raw control character.
    @Test func namesReachTheTerminalEscaped() throws {
        let directory = temporaryPath("-controls")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A GPX name with U+009B (CSI to many terminals), which XML allows.
        let walk = try String(
            contentsOfFile: Paths.root.appendingPathComponent("traces/city-walk.gpx").path, encoding: .utf8)
        let named = walk.replacingOccurrences(of: "<name>City walk</name>", with: "<name>C1&#x9B;31mred</name>")
        try named.write(toFile: directory + "/" + Tool.name, atomically: true, encoding: .utf8)

        let info = try Tool.waymark(["info", Tool.name], in: directory)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdoutText.hasPrefix(Tool.escaped + "\n"), "\(info.stdoutText)")
        let render = try Tool.waymark(["render", Tool.name, "--no-sketch"], in: directory)
        #expect(render.stdoutText.hasPrefix(Tool.escaped + #" — $'"C1\u{9b}31mred"'"#), "\(render.stdoutText)")

        let replay = try Tool.waymark(
            ["replay", Tool.name, "--store", "s.sqlite", "--rate", "max", "--end", "30s"], in: directory)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect((replay.stdoutText + replay.stderr).contains("Replay of \(Tool.escaped): "), "\(replay.stderr)")
        let list = try Tool.waymark(["sessions", "list", "--store", "s.sqlite"], in: directory)
        #expect(list.stdoutText.contains("  \(Tool.escaped)  "), "\(list.stdoutText)")
        let show = try Tool.waymark(["sessions", "show", "1", "--store", "s.sqlite"], in: directory)
        #expect(show.stdoutText.contains("  source:     \(Tool.escaped)\n"), "\(show.stdoutText)")
        // A warning that names the file (an error too) escapes it: the message is quoted as a whole.
        let bad = try Tool.waymark(["info", "missing" + Tool.name], in: directory)
        #expect(
            bad.status == 66 && bad.stderr.contains("$'waymark: missing" + Tool.escaped.dropFirst(2).dropLast()),
            "\(bad.stderr)")
        // The point table (`--points`) shows a waypoint's name escaped too (mutation m13: the
        // table printed it raw while the heading escaped its own).
        let waypoint = named.replacingOccurrences(
            of: "<name>Start: town square</name>", with: "<name>Start&#x9B;31m&#x7F;</name>")
        try waypoint.write(toFile: directory + "/points.gpx", atomically: true, encoding: .utf8)
        let points = try Tool.waymark(["render", "points.gpx", "--format", "text", "--points"], in: directory)
        #expect(points.status == 0, "\(points.stderr)")
        #expect(points.stdoutText.contains(#"$'Start\u{9b}31m\x7f'"#), "\(points.stdoutText.prefix(2000))")
        for r in [info, render, replay, list, show, bad, points] {
            #expect(!Tool.hasRawControls(r.stdout), "\(r.stdoutText)")
            #expect(!Tool.hasRawControls(Data(r.stderr.utf8)), "\(r.stderr)")
            #expect(!r.stdoutText.contains("\u{9B}") && !r.stderr.contains("\u{9B}"))
        }
    }
}
