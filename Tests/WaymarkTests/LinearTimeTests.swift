import Foundation
import Testing

@testable import Waymark

/// Structures that once made the reader or the writers quadratic, each at a size that takes
/// minutes if they are again and about a second if linear (issue 15, item 5). The duplicate
/// attribute check is `BadInputTests.aTagWithManyAttributesIsCheckedInLinearTime`. The CPU
/// time of the work is measured (the test's thread, the programs it runs), not the wall clock,
/// which a busy machine stretches; the time limits only guard against a hang.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "run `swift build` first: the waymark product is missing beside the tests"))
struct LinearTimeTests {
    static func write(_ text: String) throws -> String {
        let path = temporaryPath(".gpx")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// `body`'s result and the CPU time this thread spent on it.
    static func measured<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = threadCPUSeconds()
        let value = try body()
        return (value, threadCPUSeconds() - start)
    }

    /// 160 000 `<link>` children of one waypoint (10 MB): each append copied the point's links
    /// (40 000 took 14 s).
    @Test(.timeLimit(.minutes(45))) func manyLinksOfOnePointAreRead() async throws {
        let count = 160_000
        let links = (0..<count).map { #"<link href="http://example.com/\#($0)"><text>t\#($0)</text></link>"# }.joined()
        let path = try Self.write(
            #"<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="1" lon="2">"#
                + links + "</wpt></gpx>")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (document, readCPU) = try Self.measured { try readDocument(path).0 }
        #expect(document.waypoints.first?.links.count == count)
        #expect(document.waypoints.first?.links.last?.text == "t\(count - 1)")
        #expect(readCPU < 30, "\(readCPU) CPU seconds to read \(count) links")
        let (r, cpu) = try await runMeasuringCPU([Paths.waymark.path, "render", path, "--format", "gpx"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(cpu < 30, "render: \(cpu) CPU seconds for \(count) links")
        #expect(r.stdoutText.components(separatedBy: "<link ").count == count + 1)
    }

    /// 160 000 extension elements of one track point (3.5 MB), through `render --format gpx`
    /// and `repair`: each one appended copied the others (40 000 took 18 s).
    @Test(.timeLimit(.minutes(45))) func manyExtensionElementsAreReadAndWritten() async throws {
        let count = 160_000
        let elements = (0..<count).map { "<x:e\($0)>v</x:e\($0)>" }.joined()
        let path = try Self.write(
            #"<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" xmlns:x="urn:x"><trk><trkseg>"#
                + #"<trkpt lat="1" lon="2"><extensions>"# + elements + "</extensions></trkpt></trkseg></trk></gpx>")
        defer { try? FileManager.default.removeItem(atPath: path) }
        for command in [["render", path, "--format", "gpx"], ["repair", path]] {
            let (r, cpu) = try await runMeasuringCPU([Paths.waymark.path] + command)
            #expect(r.status == 0, "\(command): \(r.stderr)")
            #expect(cpu < 30, "\(command): \(cpu) CPU seconds for \(count) extension elements")
            #expect(r.stdoutText.contains("<x:e\(count - 1) xmlns:x=\"urn:x\">v</x:e\(count - 1)>"), "\(command)")
        }
    }
}
