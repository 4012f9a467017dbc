import Foundation
import Testing

@testable import Waymark

/// A trace across a leap second (issue 33, "shifting every time … across a leap second"): the
/// receiver counts 23:59:58, 23:59:59, 23:59:60, 00:00:00. Times here, as POSIX's and
/// CoreLocation's, have no leap seconds; gpsd dates the epoch at 23:59:60 as the next day's
/// 00:00:00 and reports it as an epoch of its own. Every reader must do the same and say so: the
/// NMEA reader merged it silently into the next second, and the GPX reader left its time out.
@Suite struct LeapSecondTests {
    typealias Gen = ReaderWriterPropertyTests

    /// Fixes a second apart around a leap second: the `leap`-th is at 23:59:60 of `day` (the
    /// last of June or December), and the trace is read in `cuts`.
    struct Input: Sendable {
        var fixes: [Gen.Fix]
        var day: Int
        var leap: Int
        var cuts: [Int]

        /// The times as the receiver writes them.
        var labels: [Gen.Label] {
            fixes.indices.map { i in
                i <= leap
                    ? Gen.Label(day: day, second: 86_400 - (leap - i))
                    : Gen.Label(day: day + 1, second: i - leap - 1)
            }
        }
        /// The times read: the leap second is the next day's 00:00:00, as gpsd dates it.
        var seconds: [Int] { labels.map { $0.day * 86_400 + $0.second } }
        /// The same fixes a second apart from noon of that day: no leap second.
        var plainLabels: [Gen.Label] { fixes.indices.map { i in Gen.Label(day * 86_400 + 43_200 + i) } }
    }

    static let property = Property<Input>(
        name: "leap second",
        generate: { r in
            let fixes = Gen.fixes(&r)
            let year = r.int(1990...2079)
            let (month, dayOfMonth) = r.bool() ? (6, 30) : (12, 31)
            let day = Self.days(year: year, month: month, day: dayOfMonth)
            return Input(fixes: fixes, day: day, leap: r.int(0...fixes.count - 1), cuts: Gen.cuts(&r))
        },
        describe: { input in
            Gen.nmea(input.fixes, labels: input.labels)
        })

    static func days(year: Int, month: Int, day: Int) -> Int {
        Int(ValueParsing.daysFromCivil(year: year, month: month, day: day))
    }

    /// The points a trace's reader gives, and its warnings.
    static func read(_ text: String, cuts: [Int] = [], lenient: Bool = false) throws -> ([GPXPoint], [GPXWarning]) {
        let reader = try TraceFormat.reader(
            for: Gen.CutSource(text, cuts: cuts), name: "generated", options: GPXReadOptions(lenient: lenient))
        var points: [GPXPoint] = []
        var warnings: [GPXWarning] = []
        try reader.readEvents { event in
            switch event {
            case .trackPoint(let point): points.append(point)
            case .warning(let warning): warnings.append(warning)
            default: break
            }
        }
        return (points, warnings)
    }

    /// Shifting a trace across a leap second keeps every epoch a point, in order, with its
    /// position, and gives each the time POSIX gives its label, whatever the chunking; one
    /// warning names the leap second's line.
    @Test func nmeaKeepsTheLeapSecondAsAPointOfItsOwn() {
        Self.property.check { input in
            var problems = Problems()
            guard let (plain, _) = try? Self.read(Gen.nmea(input.fixes, labels: input.plainLabels)),
                let (leap, warnings) = try? Self.read(Gen.nmea(input.fixes, labels: input.labels)),
                let (cut, _) = try? Self.read(Gen.nmea(input.fixes, labels: input.labels), cuts: input.cuts)
            else { return ["the generated NMEA was refused"] }
            problems.expect(
                leap.count == input.fixes.count, "every epoch a point: \(leap.count) of \(input.fixes.count)")
            problems.expect(cut == leap, "the same points whatever the chunking")
            problems.expect(plain.map(\.coordinate) == leap.map(\.coordinate), "the same geometry")
            problems.expect(plain.map(\.elevation) == leap.map(\.elevation), "the same elevations")
            problems.expect(
                leap.map(\.time) == input.seconds.map { Date(timeIntervalSince1970: Double($0)) },
                "the whole dates: \(leap.map { $0.time.map(ValueFormatting.iso8601) ?? "-" })")
            let said = warnings.filter { $0.message.contains("leap second") }
            problems.expect(said.count == 1, "one warning: \(warnings.map(\.message))")
            // Each fix is an RMC line, then a GGA line: the leap second's epoch begins on line 2k+1.
            problems.expect(said.first?.line == 2 * input.leap + 1, "at the leap second's line: \(said)")
            problems.expect(said.first?.message.hasPrefix("1 fix(es)") == true, "\(said)")
            return problems.list
        }
    }

    /// GPX's `xsd:dateTime` cannot hold a leap second: strict reading refuses it at its place,
    /// saying so and what `--lenient` does; lenient reading gives the points the NMEA reader
    /// gives, with a warning.
    @Test func gpxRefusesALeapSecondStrictAndReadsItAsNMEADoesLenient() {
        Self.property.check { input in
            var problems = Problems()
            let gpx = Gen.gpx(input.fixes, labels: input.labels)
            do {
                _ = try Self.read(gpx)
                problems.expect(false, "strict reading refuses 23:59:60")
            } catch let error as GPXError {
                // The header takes four lines, then one point a line.
                problems.expect(error.line == 4 + input.leap, "at the point's line: \(error)")
                problems.expect(error.message.contains("leap second"), "\(error.message)")
                problems.expect(error.message.contains("--lenient"), "\(error.message)")
            } catch {
                problems.expect(false, "\(error)")
            }
            guard let (nmea, _) = try? Self.read(Gen.nmea(input.fixes, labels: input.labels)),
                let (lenient, warnings) = try? Self.read(gpx, cuts: input.cuts, lenient: true)
            else { return ["the generated trace was refused"] }
            problems.expect(lenient.count == nmea.count, "\(lenient.count) points, NMEA \(nmea.count)")
            problems.expect(lenient.map(\.time) == nmea.map(\.time), "the same whole dates as NMEA")
            for (g, n) in zip(lenient, nmea) {
                problems.expect(abs(g.coordinate.latitude - n.coordinate.latitude) < 1e-9)
                problems.expect(abs(g.coordinate.longitude - n.coordinate.longitude) < 1e-9)
            }
            problems.expect(
                warnings.filter { $0.message.contains("leap second") }.count == 1, "\(warnings.map(\.message))")
            return problems.list
        }
    }

    /// A time of 60 seconds in another minute is no leap second: refused as out of range, as
    /// before, and the same 23:59:60 written in another zone is one.
    @Test func onlyTheLastSecondOfAUTCDayIsALeapSecond() {
        func failure(_ text: String) -> ValueParsing.DateTimeFailure? {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { buffer in
                if case .failure(let f) = ValueParsing.dateTime(
                    ByteSpan(start: buffer.baseAddress!, count: buffer.count))
                {
                    return f
                }
                return nil
            }
        }
        let midnight = Date(timeIntervalSince1970: Double(Self.days(year: 2017, month: 1, day: 1) * 86_400))
        for text in ["2016-12-31T23:59:60Z", "2017-01-01T00:59:60+01:00", "2016-12-31T18:29:60-05:30"] {
            guard case .leapSecond(let next)? = failure(text) else {
                Issue.record("\(text): \(String(describing: failure(text)))")
                continue
            }
            #expect(next == midnight, "\(text)")
        }
        for text in ["2016-12-31T12:34:60Z", "2016-12-31T23:59:60+01:00", "2016-12-31T23:59:61Z"] {
            guard case .range("second")? = failure(text) else {
                Issue.record("\(text): \(String(describing: failure(text)))")
                continue
            }
        }
    }

    /// gpsd itself, on the same receiver's log played by gpsfake: the epochs it reports with a
    /// time are the fixes the NMEA reader gives, on the whole date, the leap second's included.
    @Test(
        .enabled(if: which("gpsfake") != nil, "needs gpsfake (scripts/test.sh installs it)"),
        .timeLimit(.minutes(45)))
    func gpsdDatesTheLeapSecondAsTheReaderDoes() async throws {
        let fixes = (0..<6).map { i in Gen.Fix(lat7: 481_173_000 + i * 1_000, lon7: 115_166_666, eleCm: 54_540, gap: 1)
        }
        let input = Input(fixes: fixes, day: Self.days(year: 2026, month: 12, day: 31), leap: 3, cuts: [])
        let text = Gen.nmea(input.fixes, labels: input.labels)
        let (points, _) = try Self.read(text)
        let directory = temporaryPath("-leap")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)  // gpsfake, as nobody, makes its control socket here
        let log = directory + "/leap.log"
        try text.write(toFile: log, atomically: true, encoding: .utf8)
        chmod(log, 0o644)
        let asNobody = getuid() == 0 ? "runuser -u nobody -- " : ""
        let r = try await runUnblockedAsync([
            "/bin/bash", "-c", asNobody + #"env TMPDIR="$1" gpsfake -s 38400 -1 -p "$2""#, "gpsfake", directory, log,
        ])
        // gpsd reports a cycle again while it learns where cycles end (the first epoch here,
        // at its RMC and at its GGA): a report repeated with the same time and place is one
        // epoch. The leap second and the second after it share a time, not a place.
        var reports: [(time: String, latitude: Double)] = []
        for object in try ndjsonObjects(
            r.stdoutText.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{\"class\":\"TPV\"") }
                .joined(separator: "\n"))
        {
            guard let time = object["time"] as? String, let latitude = object["lat"] as? Double else { continue }
            if let last = reports.last, last.time == time, last.latitude == latitude { continue }
            reports.append((time, latitude))
        }
        let reported = reports.map(\.time)
        #expect(reported.count == fixes.count, "gpsd: \(r.stdoutText) \(r.stderr)")
        let dates = reported.map { text in
            Array(text.utf8).withUnsafeBufferPointer { b -> Date? in
                guard case .success(let t) = ValueParsing.dateTime(ByteSpan(start: b.baseAddress!, count: b.count))
                else { return nil }
                return t.date
            }
        }
        #expect(dates == points.map(\.time), "gpsd \(reported), Waymark \(points.map(\.time))")
        #expect(
            zip(reports, points).allSatisfy { abs($0.latitude - $1.coordinate.latitude) < 1e-9 },
            "the same epochs in the same order")
        #expect(reported.filter { $0 == "2027-01-01T00:00:00.000Z" }.count == 2, "\(reported)")
    }
}
