import Foundation
import Testing

@testable import Waymark

/// GDAL's GPX driver (`ogr2ogr`, Debian gdal-bin, installed by scripts/test.sh) and Waymark's
/// reader on the same generated files, compared on the whole value (issue 33, "differential
/// tests on the whole value"): every point's latitude, longitude and elevation as the same
/// double, and its instant (the date, not only the time of day) from times written in any zone,
/// with milliseconds, across midnights, month and year ends from 1990 to 2079, some with white
/// space around them.
@Suite(.enabled(if: which("ogr2ogr") != nil, "needs ogr2ogr (gdal-bin; scripts/test.sh installs it)"))
struct GDALDifferentialTests {
    typealias Gen = ReaderWriterPropertyTests

    struct Input: Sendable {
        var fixes: [Gen.Fix]
        var start: Int
        /// Each point's zone, in minutes east of UTC, and the milliseconds of its time.
        var zones: [Int]
        var milliseconds: [Int]
        /// Whether a time's text has white space around it (as an indenting writer puts it),
        /// which takes it off the reader's fast path.
        var padded: [Bool]
    }

    static let property = Property<Input>(
        name: "gdal gpx",
        count: 25,
        generate: { r in
            let fixes = Gen.fixes(&r)
            return Input(
                fixes: fixes, start: Gen.start(&r),
                zones: fixes.map { _ in r.pick([0, 0, 60, 330, -210, -720, 840, 345]) },
                milliseconds: fixes.map { _ in r.bool() ? 0 : r.int(1...999) },
                padded: fixes.map { _ in r.bool(0.3) })
        },
        describe: { input in Self.gpx(input) })

    /// The instants of the points, in milliseconds since 1970.
    static func instants(_ input: Input) -> [Int] {
        zip(Gen.times(input.fixes, from: input.start), input.milliseconds).map { $0 * 1000 + $1 }
    }

    /// `2024-05-01T13:30:00.125+05:30`: the instant written in the point's zone.
    static func localTime(_ milliseconds: Int, zone: Int) -> String {
        let local = milliseconds / 1000 + zone * 60
        let utc = Gen.iso(local).dropLast()  // the local wall time, without its Z
        let fraction = milliseconds % 1000
        let z = abs(zone)
        let designator =
            zone == 0 ? "Z" : (zone < 0 ? "-" : "+") + Gen.two(z / 60) + ":" + Gen.two(z % 60)
        return utc + (fraction == 0 ? "" : "." + String(format: "%03d", fraction)) + designator
    }

    static func gpx(_ input: Input) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="GDALDifferentialTests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>generated</name><trkseg>

            """
        for (i, fix) in input.fixes.enumerated() {
            text += "<trkpt lat=\"\(Gen.decimal(fix.lat7))\" lon=\"\(Gen.decimal(fix.lon7))\">"
            text += "<ele>\(Double(fix.eleCm) / 100)</ele>"
            let time = localTime(instants(input)[i], zone: input.zones[i])
            text += "<time>\(input.padded[i] ? "\n        " + time + " " : time)</time></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    /// GDAL's time, `2024/05/01 13:30:00.125+0530` (`+00` for UTC): milliseconds since 1970.
    static func gdalInstant(_ text: Substring) -> Int? {
        let s = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            return Int(String(decoding: s[range], as: UTF8.self))
        }
        guard s.count >= 19, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var i = 19
        var milliseconds = 0
        if i < s.count, s[i] == UInt8(ascii: ".") {
            guard let m = number(20..<23) else { return nil }
            milliseconds = m
            i = 23
        }
        guard i < s.count, s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") else { return nil }
        let sign = s[i] == UInt8(ascii: "-") ? -1 : 1
        guard let zoneHours = number((i + 1)..<(i + 3)) else { return nil }
        let zoneMinutes = i + 3 < s.count ? number((i + 3)..<(i + 5)) ?? 0 : 0
        let days = ValueParsing.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - sign * (zoneHours * 3600 + zoneMinutes * 60)
        return seconds * 1000 + milliseconds
    }

    @Test func gdalAndWaymarkReadTheSamePointsOnTheWholeValue() throws {
        let ogr2ogr = try #require(which("ogr2ogr"))
        let directory = temporaryPath("-gdal")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        Self.property.check { input in
            var problems = Problems()
            let path = directory + "/generated.gpx"
            let text = Self.gpx(input)
            guard (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil,
                let gdal = try? run(
                    ogr2ogr,
                    ["-f", "CSV", "/vsistdout/", path, "track_points", "-select", "ele,time", "-lco", "GEOMETRY=AS_XY"]),
                gdal.status == 0
            else { return ["ogr2ogr could not read the file"] }
            guard let points = try? Gen.points(text) else { return ["Waymark refused the file"] }
            // X,Y,ele,time
            let rows = gdal.stdoutText.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",") }
            problems.expect(rows.count == points.count, "GDAL \(rows.count) points, Waymark \(points.count)")
            for (k, (row, point)) in zip(rows, points).enumerated() {
                guard row.count == 4 else {
                    problems.expect(false, "GDAL's row \(k): \(row)")
                    continue
                }
                problems.expect(
                    Double(row[0]) == point.coordinate.longitude,
                    "point \(k): lon \(row[0]) \(point.coordinate.longitude)")
                problems.expect(
                    Double(row[1]) == point.coordinate.latitude,
                    "point \(k): lat \(row[1]) \(point.coordinate.latitude)")
                problems.expect(
                    Double(row[2]) == point.elevation,
                    "point \(k): ele \(row[2]) \(String(describing: point.elevation))")
                let instant = point.time.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) }
                problems.expect(
                    Self.gdalInstant(row[3]) == instant,
                    "point \(k): GDAL \(row[3]), Waymark \(point.time.map(ValueFormatting.iso8601) ?? "-")")
                problems.expect(instant == Self.instants(input)[k], "point \(k): the instant written")
            }
            return problems.list
        }
    }
}
