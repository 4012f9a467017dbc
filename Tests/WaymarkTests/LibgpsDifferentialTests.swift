import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// libgps beside Waymark on the whole value (issue 33, "differential tests on the whole
/// value"): `waymark serve` plays a generated trace and gpxlogger, gpsd's own libgps client
/// (`gps_read` unpacking serve's JSON), logs it. Every point must come back with the trace's
/// latitude and longitude as the same double and its instant to the millisecond: traces start
/// just before a midnight, a month's end, a year's end or a leap day, from 1990 to 2079, near
/// the poles and the antimeridian. gpxlogger's GPX is read with Foundation, nothing of Waymark's.
@Suite(
    .enabled(
        if: which("gpxlogger") != nil && FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
        "needs gpxlogger (gpsd-clients) and a built waymark"))
struct LibgpsDifferentialTests {
    typealias Gen = ReaderWriterPropertyTests

    struct Input: Sendable {
        var fixes: [Gen.Fix]
        /// Milliseconds since 1970 of each point.
        var instants: [Int]
    }

    /// Seconds since 1970 of a boundary: a midnight, the first of a month, New Year, or the day
    /// after a 29 February.
    static func boundary(_ r: inout PropertyRandom) -> Int {
        let year = r.int(1990...2078)
        let (y, month, day): (Int, Int, Int) =
            switch r.int(0...3) {
            case 0: (year, r.int(1...12), r.int(1...28))
            case 1: (year, r.int(2...12), 1)
            case 2: (year + 1, 1, 1)
            default: ([1992, 2000, 2024, 2048, 2076][r.int(0...4)], 3, 1)
            }
        return ValueParsing.daysFromCivil(year: y, month: month, day: day) * 86_400
    }

    static let property = Property<Input>(
        name: "libgps serve",
        count: 8,
        generate: { r in
            let count = r.int(3...12)
            let fixes = (0..<count).map { _ in
                Gen.Fix(
                    lat7: Gen.latitude(&r), lon7: Gen.longitude(&r), eleCm: r.int(-50_000...900_000), gap: r.int(1...2))
            }
            let fraction = r.bool() ? 0 : r.int(1...999)
            var t = (boundary(&r) - r.int(0...(2 * count))) * 1000 + fraction
            var instants: [Int] = []
            for fix in fixes {
                instants.append(t)
                t += fix.gap * 1000
            }
            return Input(fixes: fixes, instants: instants)
        },
        describe: { gpx($0) })

    static func gpx(_ input: Input) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="LibgpsDifferentialTests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>generated</name><trkseg>

            """
        for (fix, instant) in zip(input.fixes, input.instants) {
            let seconds = Gen.iso(instant / 1000).dropLast()
            let time = seconds + "." + String(format: "%03d", instant % 1000) + "Z"
            text += "<trkpt lat=\"\(Gen.decimal(fix.lat7))\" lon=\"\(Gen.decimal(fix.lon7))\">"
            text += "<ele>\(Double(fix.eleCm) / 100)</ele><time>\(time)</time></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    @Test(.timeLimit(.minutes(45)))
    func gpxloggerLogsWhatServeSendsOnTheWholeValue() throws {
        let gpxlogger = try #require(which("gpxlogger"))
        Self.property.check { input in
            let directory = temporaryPath("-libgps")
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let trace = directory + "/trace.gpx"
                try Self.gpx(input).write(toFile: trace, atomically: true, encoding: .utf8)
                let serve = try ServeHarness(trace: trace, ["--rate", "max"])
                defer { serve.tearDown() }
                let out = directory + "/logged.gpx"
                let logger = try runUnblocked([gpxlogger, "-f", out, "127.0.0.1:\(serve.port)"])
                guard logger.status == 0, let data = FileManager.default.contents(atPath: out) else {
                    return ["gpxlogger: \(logger.status) \(logger.stderr)"]
                }
                let reader = GPSBabelDifferentialTests.BabelReader()
                let parser = XMLParser(data: data)
                parser.delegate = reader
                guard parser.parse() else { return ["gpxlogger's GPX does not parse"] }
                var problems = Problems()
                problems.expect(
                    reader.points.count == input.fixes.count,
                    "gpxlogger logged \(reader.points.count) of \(input.fixes.count) points; serve: \(serve.log().suffix(400))"
                )
                for (k, (logged, (fix, instant))) in zip(reader.points, zip(input.fixes, input.instants)).enumerated() {
                    problems.expect(
                        logged.latitude == Double(Gen.decimal(fix.lat7))
                            && logged.longitude == Double(Gen.decimal(fix.lon7)),
                        "point \(k): gpxlogger \(logged.latitude),\(logged.longitude), the trace \(Gen.decimal(fix.lat7)),\(Gen.decimal(fix.lon7))"
                    )
                    problems.expect(
                        logged.milliseconds == instant,
                        "point \(k): gpxlogger's time \(logged.milliseconds.map(String.init) ?? "-") ms, the trace's \(instant) ms"
                    )
                }
                return problems.list + reader.problems
            } catch {
                return ["\(error)"]
            }
        }
    }
}
