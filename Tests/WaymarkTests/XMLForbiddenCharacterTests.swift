import Foundation
import Testing

@testable import Waymark

/// Issue 27, item 15: control characters in names (a trace's file name, a session's source)
/// make no XML output (GPX, SVG, HTML) ill-formed: Waymark reads its own exports.
@Suite struct XMLForbiddenCharacterTests {
    /// The XML text of `text` as ``XMLEscaping`` writes it.
    static func xml(_ text: String, attribute: Bool = false, html: Bool = false) -> String {
        let out = ByteStore(capacity: 64)
        XMLEscaping.appendEscaped(text, attribute: attribute, html: html, to: out)
        return out.string
    }

    @Test func xmlLeavesNoCharacterXMLForbids() {
        #expect(Self.xml("a\u{1}b\u{1B}[31m\u{7}\u{8}c") == "a\u{FFFD}b\u{FFFD}[31m\u{FFFD}\u{FFFD}c")
        #expect(Self.xml("x\u{FFFE}\u{FFFF}\u{FFFD}y") == "x\u{FFFD}\u{FFFD}\u{FFFD}y")
        #expect(Self.xml("tab\tline\ncr\r<&>") == "tab\tline\ncr&#13;&lt;&amp;&gt;")
        #expect(Self.xml("\"\u{0}\"\t", attribute: true) == "&quot;\u{FFFD}&quot;&#9;")
        // XML 1.0 allows DEL and the C1 controls; HTML's parser does not.
        #expect(Self.xml("\u{7F}\u{85}\u{9B}é") == "\u{7F}\u{85}\u{9B}é")
        #expect(Self.xml("\u{7F}\u{85}\u{9B}é", html: true) == "\u{FFFD}\u{FFFD}\u{FFFD}é")
    }

    /// A GPX track and an SVG picture whose names hold every C0 control are well-formed, and
    /// Waymark reads its GPX back.
    @Test func gpxAndSVGWithControlCharactersInNamesAreWellFormed() throws {
        let controls = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{FFFE}"
        var events = SVGTests.track([[(48.1, 11.5), (48.2, 11.6)]], name: "track" + controls)
        var metadata = GPXMetadata()
        metadata.name = "meta" + controls
        metadata.description = controls
        events.insert(.metadata(metadata), at: 1)
        let gpx = String(
            decoding: try render { sink in
                let writer = GPXWriter(sink: sink)
                for event in events { try writer.write(event) }
                try writer.finish()
            }, as: UTF8.self)
        let document = try parseDocument(gpx)
        #expect(document.tracks.first?.info.name?.hasPrefix("track") == true)
        #expect(
            document.tracks.first?.info.name?.unicodeScalars.contains {
                $0.value < 0x20 && !["\t", "\n", "\r"].contains($0)
            }
                == false)
        let svg = try SVGTests.draw(events, title: "file\u{1B}]0;x\u{7}.gpx")
        for text in [gpx, svg] {
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 && !["\t", "\n", "\r"].contains($0) })
            if let xmllint = which("xmllint") {
                let r = try run(xmllint, ["--noout", "-"], input: Data(text.utf8))
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
    }
}
/// Through the tool: a trace whose file name holds ESC, BEL and BS.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct XMLForbiddenCharacterCLITests {
    static let name = "walk\u{1B}]0;pwned\u{7}\u{8}\u{1B}[31m.gpx"
    static let escaped = #"$'walk\x1b]0;pwned\x07\x08\x1b[31m.gpx'"#

    /// Whether `data` has a byte that moves or reprograms a terminal (any C0 control but tab
    /// and line feed).
    static func hasRawControls(_ data: Data) -> Bool {
        data.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A }
    }

    static func waymark(_ arguments: [String], in directory: String) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        environment["NO_COLOR"] = "1"
        return try run(
            Paths.waymark.path, arguments, environment: environment, directory: URL(fileURLWithPath: directory))
    }

    /// The SVG and HTML of such a trace and its session's GPX are well-formed, and Waymark
    /// reads its own GPX export.
    @Test func exportsOfSuchATraceAreWellFormed() throws {
        let directory = temporaryPath("-controls")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(
            atPath: Paths.root.appendingPathComponent("traces/city-walk.gpx").path, toPath: directory + "/" + Self.name)
        let replay = try Self.waymark(
            ["replay", Self.name, "--store", "s.sqlite", "--rate", "max", "--end", "1m", "--report", "run.html"],
            in: directory)
        #expect(replay.status == 0, "\(replay.stderr)")
        for (arguments, file) in [
            (["render", Self.name, "-o", "walk.svg"], "walk.svg"),
            (["render", Self.name, "-o", "walk.html"], "walk.html"),
            (["sessions", "export", "1", "--store", "s.sqlite", "--format", "gpx", "-o", "s.gpx"], "s.gpx"),
            (["sessions", "export", "1", "--store", "s.sqlite", "--format", "html", "-o", "s.html"], "s.html"),
        ] {
            let r = try Self.waymark(arguments, in: directory)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            #expect(!Self.hasRawControls(data.filter { $0 != 0x0D }), "\(file)")
            if file.hasSuffix(".svg") || file.hasSuffix(".gpx"), let xmllint = which("xmllint") {
                let lint = try run(xmllint, ["--noout", directory + "/" + file])
                #expect(lint.status == 0, "\(file): \(lint.stderr)")
            }
        }
        let report = try Data(contentsOf: URL(fileURLWithPath: directory + "/run.html"))
        #expect(!Self.hasRawControls(report.filter { $0 != 0x0D }))
        let again = try Self.waymark(["render", "s.gpx", "--no-sketch"], in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdoutText.contains("Waymark session 1: walk\u{FFFD}]0;pwned"), "\(again.stdoutText)")
    }
}
