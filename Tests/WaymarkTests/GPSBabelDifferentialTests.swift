import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// gpsbabel (Debian gpsbabel, installed by scripts/test.sh) beside Waymark on the same generated
/// GPX, on the whole value (issue 33, "differential tests on the whole value"): waypoints, a
/// route and a track, each point's latitude, longitude and elevation as the same double, its
/// instant (the date, not only the time of day) from times written in any zone, and its name
/// with the characters XML must escape and the ones it need not.
///
/// Both directions: gpsbabel reads what Waymark reads, and gpsbabel reads back what Waymark
/// writes. gpsbabel's own GPX (UTC times with milliseconds, nine decimals) is read here with
/// Foundation's XMLParser and ISO8601DateFormatter, nothing of Waymark's.
@Suite(.enabled(if: which("gpsbabel") != nil, "needs gpsbabel (scripts/test.sh installs it)"))
struct GPSBabelDifferentialTests {
    typealias Gen = ReaderWriterPropertyTests
    typealias Track = GDALDifferentialTests

    struct Input: Sendable {
        var track: GDALDifferentialTests.Input
        /// Names of the waypoints (the track's first points, again) and of the route's points
        /// (the track's last points, again).
        var waypointNames: [String]
        var routeNames: [String]
    }

    /// Names as a user types them: no white space at either end (gpsbabel trims it).
    static func name(_ r: inout PropertyRandom) -> String {
        let inner = ["a", "Z", "7", " ", "<", ">", "&", "\"", "'", "]]>", "</script>", "é", "ß", "東", "🚲", "\\"]
        let ends = ["a", "Z", "7", "<", "&", "\"", "é", "東", "🚲"]
        return r.pick(ends) + r.array(0...8) { $0.pick(inner) }.joined() + r.pick(ends)
    }

    static let property = Property<Input>(
        name: "gpsbabel gpx",
        count: 20,
        generate: { r in
            let track = Track.property.generate(&r)
            let count = track.fixes.count
            return Input(
                track: track,
                waypointNames: (0..<min(count, r.int(1...4))).map { _ in name(&r) },
                routeNames: (0..<min(count, r.int(1...4))).map { _ in name(&r) })
        },
        describe: { gpx($0) })

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// One expected point: what the generated file says of it.
    struct Point: Equatable, CustomStringConvertible {
        var kind: String
        var latitude: Double
        var longitude: Double
        var elevation: Double?
        var milliseconds: Int?
        var name: String?
        /// Heart rate and cadence, when gpsbabel writes Garmin's extensions (`gpx,garminextensions`).
        var heartRate: Int?
        var cadence: Int?
        var description: String {
            "\(kind) \(latitude),\(longitude) ele \(elevation.map { "\($0)" } ?? "-") t \(milliseconds.map { "\($0)" } ?? "-") name \(name.map { "\"\($0)\"" } ?? "-") hr \(heartRate.map(String.init) ?? "-") cad \(cadence.map(String.init) ?? "-")"
        }
    }

    /// The points of the generated file, waypoints first, then the route's, then the track's,
    /// as gpsbabel writes them.
    static func expected(_ input: Input) -> [Point] {
        let fixes = input.track.fixes
        let instants = Track.instants(input.track)
        func point(_ kind: String, _ i: Int, name: String?) -> Point {
            Point(
                kind: kind, latitude: Double(Gen.decimal(fixes[i].lat7))!,
                longitude: Double(Gen.decimal(fixes[i].lon7))!, elevation: Double(fixes[i].eleCm) / 100,
                milliseconds: instants[i], name: name)
        }
        let count = fixes.count
        return input.waypointNames.enumerated().map { point("wpt", $0.offset, name: $0.element) }
            + input.routeNames.enumerated().map {
                point("rtept", count - input.routeNames.count + $0.offset, name: $0.element)
            }
            + (0..<count).map { point("trkpt", $0, name: nil) }
    }

    static func gpx(_ input: Input) -> String {
        let track = Track.gpx(input.track)
        let fixes = input.track.fixes
        let instants = Track.instants(input.track)
        func element(_ tag: String, _ i: Int, name: String) -> String {
            let time = Track.localTime(instants[i], zone: input.track.zones[i])
            return "<\(tag) lat=\"\(Gen.decimal(fixes[i].lat7))\" lon=\"\(Gen.decimal(fixes[i].lon7))\">"
                + "<ele>\(Double(fixes[i].eleCm) / 100)</ele><time>\(time)</time><name>\(escaped(name))</name></\(tag)>\n"
        }
        var extra = input.waypointNames.enumerated().map { element("wpt", $0.offset, name: $0.element) }.joined()
        extra += "<rte><name>route</name>\n"
        extra += input.routeNames.enumerated().map {
            element("rtept", fixes.count - input.routeNames.count + $0.offset, name: $0.element)
        }.joined()
        extra += "</rte>\n"
        // Waypoints and routes come before tracks in GPX 1.1.
        return track.replacingOccurrences(of: "<trk>", with: extra + "<trk>")
    }

    /// gpsbabel's GPX, read with Foundation: each point's kind, position, elevation, instant and name.
    final class BabelReader: NSObject, XMLParserDelegate {
        var points: [Point] = []
        var problems: [String] = []
        private var current: Point?
        private var text = ""
        private let withFraction: ISO8601DateFormatter = {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f
        }()
        private let whole = ISO8601DateFormatter()

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes: [String: String] = [:]
        ) {
            text = ""
            guard ["wpt", "rtept", "trkpt"].contains(elementName) else { return }
            guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init)
            else {
                problems.append("gpsbabel's \(elementName) without lat and lon: \(attributes)")
                return
            }
            current = Point(kind: elementName, latitude: lat, longitude: lon)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            switch elementName {
            case "ele": current?.elevation = Double(text)
            case "time" where current != nil:
                guard let date = withFraction.date(from: text) ?? whole.date(from: text) else {
                    problems.append("gpsbabel's time \(text)")
                    return
                }
                current?.milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded())
            case "name" where current != nil: current?.name = text
            case "gpxtpx:hr" where current != nil: current?.heartRate = Int(text)
            case "gpxtpx:cad" where current != nil: current?.cadence = Int(text)
            case "wpt", "rtept", "trkpt":
                if let current { points.append(current) }
                current = nil
            default: break
            }
        }
    }

    static func babel(_ path: String) -> (points: [Point], problems: [String]) {
        guard let result = try? run(which("gpsbabel")!, ["-i", "gpx", "-f", path, "-o", "gpx,gpxver=1.1", "-F", "-"]),
            result.status == 0
        else { return ([], ["gpsbabel could not read \(path)"]) }
        let reader = BabelReader()
        let parser = XMLParser(data: result.stdout)
        parser.delegate = reader
        guard parser.parse() else {
            return ([], ["gpsbabel's GPX does not parse: \(String(describing: parser.parserError))"])
        }
        return (reader.points, reader.problems)
    }

    /// Waymark's reading of a file, as the same points.
    static func waymark(_ path: String) throws -> [Point] {
        let document = try readDocument(path).0
        func point(_ kind: String, _ p: GPXPoint) -> Point {
            Point(
                kind: kind, latitude: p.coordinate.latitude, longitude: p.coordinate.longitude, elevation: p.elevation,
                milliseconds: p.time.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) }, name: p.name)
        }
        return document.waypoints.map { point("wpt", $0) }
            + document.routes.flatMap(\.points).map { point("rtept", $0) }
            + document.tracks.flatMap(\.segments).flatMap(\.points).map { point("trkpt", $0) }
    }

    /// Compares point by point; longitude 180 is the meridian -180 is (GPX 1.1 allows only
    /// the second, and Waymark writes it so).
    static func compare(_ found: [Point], _ expected: [Point], _ who: String) -> [String] {
        func meridian(_ p: Point) -> Point {
            var p = p
            if p.longitude == 180 { p.longitude = -180 }
            return p
        }
        let found = found.map(meridian)
        let expected = expected.map(meridian)
        var problems = Problems()
        problems.expect(found.count == expected.count, "\(who): \(found.count) points, the file has \(expected.count)")
        for (k, (f, e)) in zip(found, expected).enumerated() where f != e {
            problems.expect(false, "\(who), point \(k): \(f)\n  the file: \(e)")
        }
        return problems.list
    }

    /// gpsbabel and Waymark read the same values from the generated file.
    @Test func gpsbabelAndWaymarkReadTheSameFile() throws {
        let directory = temporaryPath("-gpsbabel")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Self.property.check { input in
            let path = directory + "/generated.gpx"
            guard (try? Self.gpx(input).write(toFile: path, atomically: true, encoding: .utf8)) != nil else {
                return ["cannot write \(path)"]
            }
            let (babel, problems) = Self.babel(path)
            guard let ours = try? Self.waymark(path) else { return ["Waymark refused the file"] }
            let expected = Self.expected(input)
            return problems + Self.compare(babel, expected, "gpsbabel") + Self.compare(ours, expected, "Waymark")
        }
    }

    /// What Waymark writes (render --format gpx), gpsbabel reads as the original's values.
    @Test func gpsbabelReadsWhatWaymarkWrites() throws {
        let directory = temporaryPath("-gpsbabel-written")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Self.property.check { input in
            let path = directory + "/generated.gpx"
            let written = directory + "/written.gpx"
            guard (try? Self.gpx(input).write(toFile: path, atomically: true, encoding: .utf8)) != nil,
                let document = try? readDocument(path).0,
                let sink = try? FileSink(atomicPath: written),
                (try? GPXWriter.write(document, to: sink)) != nil, (try? sink.commit()) != nil
            else { return ["Waymark could not read and write the file"] }
            let (babel, problems) = Self.babel(written)
            return problems + Self.compare(babel, Self.expected(input), "gpsbabel on Waymark's GPX")
        }
    }
}
