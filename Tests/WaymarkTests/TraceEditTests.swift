import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `render`'s edits (issue 29, item 3): shift times, keep a range, discard by HDOP, accuracy,
/// satellites or fix, drop repeated fixes, split at gaps. Checked as a property against the
/// edits done here on plain lists, and on the command line against gpsbabel's filters on the
/// same files (`-x track,move=`, `-x track,start=,stop=`, `-x discard,hdop=`, `-x discard,sat=`,
/// `-x track,split=`).
@Suite struct TraceEditTests {
    typealias Gen = ReaderWriterPropertyTests

    struct Point: Sendable, Equatable {
        var lat7: Int
        var lon7: Int
        var time: Int
        var hdop: Int  // tenths
        var sat: Int
        var fix: GPXFix
    }

    struct Input: Sendable {
        var points: [Point]
        var edits: [String]
    }

    static func points(_ r: inout PropertyRandom) -> [Point] {
        var t = Gen.start(&r)
        return r.array(1...40) { r in
            defer { t += r.pick([0, 1, 1, 1, 2, 5, 9, 30]) }
            return Point(
                lat7: r.int(-800_000_000...800_000_000), lon7: r.int(-1_790_000_000...1_790_000_000), time: t,
                hdop: r.int(5...60), sat: r.int(3...12), fix: r.pick([.twoD, .threeD, .threeD, .dgps]))
        }
    }

    static func gpx(_ points: [Point]) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="TraceEditTests" xmlns="http://www.topografix.com/GPX/1/1">
            <wpt lat="1" lon="2"><time>\(Gen.iso(points[0].time))</time><name>start</name></wpt>
            <trk><name>generated</name><trkseg>

            """
        for p in points {
            text +=
                "<trkpt lat=\"\(Gen.decimal(p.lat7))\" lon=\"\(Gen.decimal(p.lon7))\"><time>\(Gen.iso(p.time))</time>"
            text += "<fix>\(p.fix.rawValue)</fix><sat>\(p.sat)</sat><hdop>\(Double(p.hdop) / 10)</hdop></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    /// `YYYYMMDDHHMMSS`, gpsbabel's time.
    static func babelTime(_ seconds: Int) -> String {
        String(Gen.iso(seconds).filter(\.isNumber))
    }

    /// Each case: Waymark's options and gpsbabel's filter for the same edit.
    static func edit(_ r: inout PropertyRandom, _ points: [Point]) -> (waymark: [String], babel: [String]) {
        switch r.int(0...4) {
        case 0:
            let hours = r.int(-30...30)
            return (["--time-shift=\(hours)h"], ["-x", "track,move=\(hours >= 0 ? "+" : "")\(hours)h"])
        case 1:
            let a = points[r.int(0...points.count - 1)].time + r.int(-2...2)
            let b = points[r.int(0...points.count - 1)].time + r.int(-2...2)
            let (from, to) = (min(a, b), max(a, b))
            return (
                ["--from", Gen.iso(from), "--to", Gen.iso(to)],
                ["-x", "track,start=\(babelTime(from)),stop=\(babelTime(to))"]
            )
        case 2:
            // Between the points' tenths: gpsbabel keeps an HDOP in single precision, so a point
            // at exactly the limit (2.9 as a float is 2.9000001) would be "greater" there only.
            let hdop = Double(r.int(5...60)) / 10 + 0.05
            return (["--max-hdop", "\(hdop)"], ["-x", "discard,hdop=\(hdop)"])
        case 3:
            let sat = r.int(3...12)
            return (["--min-satellites", "\(sat)"], ["-x", "discard,sat=\(sat)"])
        default:
            let gap = r.pick([2, 5, 10])
            return (["--split-gap", "\(gap)s"], ["-x", "track,split=\(gap)s"])
        }
    }

    /// gpsbabel's GPX or Waymark's, read with Foundation: the track points grouped by segment
    /// (gpsbabel's split makes tracks, Waymark's segments: each group is one of either).
    final class Groups: NSObject, XMLParserDelegate {
        var groups: [[String]] = []
        private var point: String?
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes: [String: String] = [:]
        ) {
            text = ""
            switch elementName {
            case "trkseg": groups.append([])
            case "trkpt":
                point = "\(Double(attributes["lat"] ?? "") ?? .nan),\(Double(attributes["lon"] ?? "") ?? .nan)"
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            if elementName == "time", let p = point {
                let whole = ISO8601DateFormatter()
                let fractional = ISO8601DateFormatter()
                fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let date = whole.date(from: text) ?? fractional.date(from: text)
                point = p + "@" + (date.map { "\($0.timeIntervalSince1970)" } ?? text)
            }
            if elementName == "trkpt", let point, !groups.isEmpty {
                groups[groups.count - 1].append(point)
                self.point = nil
            }
        }

        static func read(_ data: Data) -> [[String]]? {
            let groups = Groups()
            let parser = XMLParser(data: data)
            parser.delegate = groups
            return parser.parse() ? groups.groups.filter { !$0.isEmpty } : nil
        }
    }

    @Test(
        .enabled(
            if: which("gpsbabel") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "needs gpsbabel (scripts/test.sh installs it) and a built waymark"))
    func eachEditIsGpsbabelsFilter() throws {
        let gpsbabel = try #require(which("gpsbabel"))
        let directory = temporaryPath("-edits")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Property<(points: [Point], waymark: [String], babel: [String])>(
            name: "edits against gpsbabel", count: 40,
            generate: { r in
                let points = Self.points(&r)
                let (waymark, babel) = Self.edit(&r, points)
                return (points, waymark, babel)
            },
            describe: { "waymark \($0.waymark), gpsbabel \($0.babel)\n\(Self.gpx($0.points))" }
        ).check { input in
            let path = directory + "/in.gpx"
            guard (try? Self.gpx(input.points).write(toFile: path, atomically: true, encoding: .utf8)) != nil,
                let ours = try? run(Paths.waymark.path, ["render", path, "-f", "gpx"] + input.waymark),
                let theirs = try? run(gpsbabel, ["-i", "gpx", "-f", path] + input.babel + ["-o", "gpx", "-F", "-"])
            else { return ["could not run"] }
            guard ours.status == 0, theirs.status == 0 else {
                return ["waymark: \(ours.stderr) gpsbabel: \(theirs.stderr)"]
            }
            guard let a = Groups.read(ours.stdout), let b = Groups.read(theirs.stdout) else {
                return ["unreadable GPX"]
            }
            return a == b ? [] : ["Waymark \(a)\ngpsbabel \(b)"]
        }
    }

    /// Any combination of edits, against the same edits done here on a plain list: the points
    /// kept, in order, their times shifted, grouped where the gaps are, no empty segment, and
    /// the waypoint's time shifted too.
    @Test func everyCombinationIsTheEditsDoneByHand() {
        Property<(points: [Point], edits: TraceEdits)>(
            name: "edits by hand", count: 200,
            generate: { r in
                let points = Self.points(&r)
                let times = points.map(\.time)
                var edits = TraceEdits()
                if r.bool(0.4) { edits.timeShift = Double(r.int(-90_000...90_000)) }
                if r.bool(0.3) {
                    edits.from = Date(timeIntervalSince1970: Double(r.pick(times) + Int(edits.timeShift ?? 0)))
                }
                if r.bool(0.3) {
                    edits.to = Date(timeIntervalSince1970: Double(r.pick(times) + Int(edits.timeShift ?? 0)))
                }
                if r.bool(0.3) { edits.maxHDOP = Double(r.int(5...60)) / 10 }
                if r.bool(0.3) { edits.minSatellites = r.int(3...12) }
                if r.bool(0.3) { edits.minFix = r.pick([.twoD, .threeD, .dgps]) }
                if r.bool(0.3) { edits.dedupe = true }
                if r.bool(0.4) { edits.splitGap = Double(r.pick([1, 2, 5, 10])) }
                return (points, edits)
            },
            describe: { "\($0.edits)\n\(Self.gpx($0.points))" }
        ).check { input in
            let e = input.edits
            let shift = Int(e.timeShift ?? 0)
            // By hand.
            var expected: [[Int]] = []
            var last: Int?
            for (i, p) in input.points.enumerated() {
                let t = p.time + shift
                if let maxHDOP = e.maxHDOP, Double(p.hdop) / 10 > maxHDOP { continue }
                if let minSatellites = e.minSatellites, p.sat < minSatellites { continue }
                if let minFix = e.minFix, TraceEdits.rank(p.fix) < TraceEdits.rank(minFix) { continue }
                if let from = e.from, Double(t) < from.timeIntervalSince1970 { continue }
                if let to = e.to, Double(t) > to.timeIntervalSince1970 { continue }
                if e.dedupe, let last, last == t { continue }
                if expected.isEmpty || (e.splitGap.map { Double(t - (last ?? t)) > $0 } ?? false) {
                    expected.append([])
                }
                expected[expected.count - 1].append(i)
                last = t
            }
            // By the editor.
            var groups: [[Int]] = []
            var open = false
            var problems = Problems()
            var waypointTime: Date?
            do {
                let reader = GPXReader(source: MemoryByteSource(Array(Self.gpx(input.points).utf8)), name: "in.gpx")
                let editor = TraceEditor(e) { event in
                    switch event {
                    case .segmentStart:
                        problems.expect(!open, "a segment inside a segment")
                        open = true
                        groups.append([])
                    case .segmentEnd:
                        problems.expect(open, "an end without a start")
                        open = false
                    case .trackPoint(let p):
                        let t = Int(p.time!.timeIntervalSince1970)
                        let i = input.points.firstIndex {
                            $0.time + shift == t && Double(Gen.decimal($0.lat7)) == p.coordinate.latitude
                        }
                        groups[groups.count - 1].append(i ?? -1)
                    case .waypoint(let w): waypointTime = w.time
                    default: break
                    }
                }
                try reader.read { try editor.write($0) }
            } catch {
                return ["\(error)"]
            }
            problems.expect(!open, "a segment left open")
            problems.expect(groups == expected, "editor \(groups), by hand \(expected)")
            problems.expect(
                waypointTime == Date(timeIntervalSince1970: Double(input.points[0].time + shift)),
                "the waypoint's time is shifted too")
            return problems.list
        }
    }
}
