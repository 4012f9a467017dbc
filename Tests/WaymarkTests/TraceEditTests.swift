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

/// The edits that keep a place or a stretch, split tracks, and simplify (issue 29, item 3):
/// `--within`, `--near`, `--from-distance`/`--to-distance`, `--split-day`, `--split-every`,
/// `--simplify`, against the same edits done here on plain lists, and `--split-day` against
/// gpsbabel's `-x track,split` (by day, with TZ=UTC so that its days are UTC days).
@Suite struct TraceSplitEditTests {
    typealias Gen = ReaderWriterPropertyTests
    typealias Point = TraceEditTests.Point

    /// Points a few minutes to several hours apart near one place, so that days change and
    /// boxes and circles cut the track.
    static func points(_ r: inout PropertyRandom) -> [Point] {
        var t = Gen.start(&r)
        let lat7 = r.int(-600_000_000...600_000_000)
        let lon7 = r.pick([r.int(-1_790_000_000...1_790_000_000), 1_799_950_000])
        return r.array(1...40) { r in
            defer { t += r.pick([0, 5, 60, 600, 3600, 5 * 3600, 9 * 3600]) }
            var lon = lon7 + r.int(-100_000...100_000)
            if lon > 1_800_000_000 { lon -= 3_600_000_000 }
            return Point(
                lat7: lat7 + r.int(-100_000...100_000), lon7: lon, time: t, hdop: 10, sat: 8, fix: .threeD)
        }
    }

    static func coordinate(_ p: Point) -> Coordinate {
        Coordinate(latitude: Double(Gen.decimal(p.lat7))!, longitude: Double(Gen.decimal(p.lon7))!)
    }

    /// The tracks (parts) the editor writes, each its segments of point indices, and their names.
    static func edited(_ points: [Point], _ edits: TraceEdits) throws -> (parts: [[[Int]]], names: [String]) {
        var parts: [[[Int]]] = []
        var names: [String] = []
        let reader = GPXReader(source: MemoryByteSource(Array(TraceEditTests.gpx(points).utf8)), name: "in.gpx")
        let editor = TraceEditor(edits) { event in
            switch event {
            case .trackStart: parts.append([])
            case .trackEnd(let info): names.append(info.name ?? "")
            case .segmentStart: parts[parts.count - 1].append([])
            case .trackPoint(let p):
                let t = Int(p.time!.timeIntervalSince1970)
                let i = points.firstIndex { $0.time == t && coordinate($0) == p.coordinate } ?? -1
                parts[parts.count - 1][parts[parts.count - 1].count - 1].append(i)
            default: break
            }
        }
        try reader.read { try editor.write($0) }
        return (parts, names)
    }

    @Test func placesStretchesAndSplitsAreTheEditsDoneByHand() {
        Property<(points: [Point], edits: TraceEdits)>(
            name: "places and splits by hand", count: 300,
            generate: { r in
                let points = Self.points(&r)
                var edits = TraceEdits()
                let a = Self.coordinate(r.pick(points))
                let b = Self.coordinate(r.pick(points))
                if r.bool(0.3) {
                    // A box from two of the points; across the antimeridian when it is shorter.
                    var west = min(a.longitude, b.longitude)
                    var east = max(a.longitude, b.longitude)
                    if east - west > 180 { (west, east) = (east, west) }
                    edits.within = Bounds(
                        minLatitude: min(a.latitude, b.latitude), minLongitude: west,
                        maxLatitude: max(a.latitude, b.latitude), maxLongitude: east)
                }
                if r.bool(0.3) { edits.near = (a, Double(r.int(100...15_000))) }
                if r.bool(0.3) { edits.fromDistance = Double(r.int(0...20_000)) }
                if r.bool(0.3) { edits.toDistance = (edits.fromDistance ?? 0) + Double(r.int(0...30_000)) }
                if r.bool(0.4) { edits.splitDay = true }
                if r.bool(0.4) { edits.splitEvery = r.int(1...10) }
                if r.bool(0.3) { edits.splitGap = Double(r.pick([60, 3600])) }
                if r.bool(0.2) { edits.dedupe = true }
                return (points, edits)
            },
            describe: { "\($0.edits)\n\(TraceEditTests.gpx($0.points))" }
        ).check { input in
            let e = input.edits
            // By hand: the distance along the track over every point read, then the filters,
            // then the splits.
            var parts: [[[Int]]] = []
            var names: [String] = []
            var along = 0.0
            var last: Int?
            var day: Int?
            var inPart = 0
            for (i, p) in input.points.enumerated() {
                if i > 0 { along += Geodesic.distance(Self.coordinate(input.points[i - 1]), Self.coordinate(p)) }
                if let from = e.fromDistance, along < from { continue }
                if let to = e.toDistance, along > to { continue }
                let c = Self.coordinate(p)
                if let box = e.within {
                    // Written out here, not the editor's: across the antimeridian when west > east.
                    let latitudeIn = c.latitude >= box.minLatitude && c.latitude <= box.maxLatitude
                    let eastOfWest = c.longitude >= box.minLongitude
                    let westOfEast = c.longitude <= box.maxLongitude
                    let longitudeIn =
                        box.minLongitude <= box.maxLongitude ? eastOfWest && westOfEast : eastOfWest || westOfEast
                    if !(latitudeIn && longitudeIn) { continue }
                }
                if let near = e.near, !Geodesic.isWithin(near.radius, near.centre, c) { continue }
                if e.dedupe, let last, last == p.time, !parts.isEmpty { continue }
                let pDay = Int((Double(p.time) / 86_400).rounded(.down))
                let newPart =
                    parts.isEmpty || (e.splitDay && pDay != day)
                    || (e.splitEvery.map { inPart >= $0 } ?? false)
                if newPart {
                    parts.append([[]])
                    inPart = 0
                    day = pDay
                    let (y, m, d) = ValueParsing.civil(fromDays: pDay)
                    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
                    var name = ["generated"]
                    if e.splitDay { name.append("\(y)-\(two(m))-\(two(d))") }
                    if e.splitEvery != nil { name.append("(\(parts.count))") }
                    names.append(name.joined(separator: " "))
                } else if let gap = e.splitGap, let last, Double(p.time - last) > gap {
                    parts[parts.count - 1].append([])
                }
                parts[parts.count - 1][parts[parts.count - 1].count - 1].append(i)
                inPart += 1
                last = p.time
            }
            if parts.isEmpty {
                parts = [[]]
                names = ["generated"]
            }
            if !e.splitDay && e.splitEvery == nil { names = ["generated"] }
            do {
                let (found, foundNames) = try Self.edited(input.points, e)
                var problems = Problems()
                problems.expect(found == parts, "editor \(found), by hand \(parts)")
                problems.expect(foundNames == names, "names \(foundNames), by hand \(names)")
                return problems.list
            } catch {
                return ["\(error)"]
            }
        }
    }

    /// `--simplify`: each segment keeps its first and last point, every point left out lies
    /// within the tolerance of the line kept (measured with the geodesic, so within the
    /// simplifier's half a percent), and a tolerance of 0 keeps every point of a bent line.
    @Test func simplifiedSegmentsKeepTheirEndsAndEveryPointNearTheLine() {
        Property<(points: [Point], tolerance: Double)>(
            name: "simplify as an edit", count: 150,
            generate: { r in (TraceEditTests.points(&r), Double(r.pick([0, 5, 50, 500, 5000]))) },
            describe: { "tolerance \($0.tolerance)\n\(TraceEditTests.gpx($0.points))" }
        ).check { input in
            var problems = Problems()
            guard let (parts, _) = try? Self.edited(input.points, TraceEdits(simplify: input.tolerance)),
                let kept = parts.first?.first
            else { return ["no segment"] }
            problems.expect(kept.first == 0 && kept.last == input.points.count - 1, "the ends: \(kept)")
            problems.expect(kept == kept.sorted() && Set(kept).count == kept.count, "in order, once each")
            for (a, b) in zip(kept, kept.dropFirst()) where b > a + 1 {
                for i in (a + 1)..<b {
                    let d = LineSimplifier<Coordinate>.distanceToSegment(
                        Self.coordinate(input.points[i]), Self.coordinate(input.points[a]),
                        Self.coordinate(input.points[b]))
                    problems.expect(d <= input.tolerance * 1.005 + 1e-6, "point \(i) lies \(d) m from the kept line")
                }
            }
            return problems.list
        }
    }

    /// `--split-day` against gpsbabel's `-x track,split` (by day, in TZ=UTC): the same groups.
    @Test(
        .enabled(
            if: which("gpsbabel") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "needs gpsbabel (scripts/test.sh installs it) and a built waymark"))
    func splitDayIsGpsbabelsSplitByDay() throws {
        let directory = temporaryPath("-split-day")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Property<[Point]>(
            name: "split by day against gpsbabel", count: 25, generate: { Self.points(&$0) },
            describe: { TraceEditTests.gpx($0) }
        ).check { points in
            let path = directory + "/in.gpx"
            guard (try? TraceEditTests.gpx(points).write(toFile: path, atomically: true, encoding: .utf8)) != nil,
                let ours = try? run(Paths.waymark.path, ["render", path, "-f", "gpx", "--split-day"]),
                let theirs = try? run(
                    which("gpsbabel")!, ["-i", "gpx", "-f", path, "-x", "track,split", "-o", "gpx", "-F", "-"],
                    environment: ["TZ": "UTC"])
            else { return ["could not run"] }
            guard ours.status == 0, theirs.status == 0 else {
                return ["waymark: \(ours.stderr) gpsbabel: \(theirs.stderr)"]
            }
            guard let a = TraceEditTests.Groups.read(ours.stdout), let b = TraceEditTests.Groups.read(theirs.stdout)
            else {
                return ["unreadable GPX"]
            }
            return a == b ? [] : ["Waymark \(a)\ngpsbabel \(b)"]
        }
    }
}
