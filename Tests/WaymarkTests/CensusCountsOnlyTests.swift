import Foundation
import Testing

@testable import Waymark

/// A replay's first pass only counts points and their times, so its track point scanner checks
/// the other numbers without working them out (``TrackPointScanner/countsOnly``). It must accept
/// exactly the points, and so give exactly the warnings and errors, that reading the numbers
/// would.
@Suite struct CensusCountsOnlyTests {
    /// A text that is often a number and often almost one: a sign, an integer part with its
    /// leading zeros, a point, up to 130 digits after it, something after the number.
    static func numberText(_ r: inout PropertyRandom) -> String {
        var text = r.pick(["", "", "", "-", "+", " ", "--"])
        let integerDigits = r.pick(["", "0", "00", "8", "9", "89", "90", "91", "179", "180", "181", "0089", "1234567"])
        text += integerDigits
        for _ in 0..<r.int(0...(integerDigits.isEmpty ? 0 : 2)) { text += String(r.int(0...9)) }
        if r.bool(0.75) {
            text += "."
            let fraction = r.pick([0, 1, 5, 14, 15, 16, 19, 20, 30, 60, 110, 130])
            for _ in 0..<fraction { text += r.pick(["9", "9", "0", String(r.int(0...9))]) }
        }
        text += r.pick(["", "", "", "", "e5", "E-3", " ", "x", ".", "1e400"])
        return text
    }

    /// The outcome of scanning `point`: the point's length, or nil; and the coordinate read.
    static func scan(_ point: String, countsOnly: Bool) -> (length: Int?, latitude: Double, elevation: Double?) {
        var scanner = TrackPointScanner(readsExtensions: true)
        scanner.defaultIsGPX = true
        scanner.countsOnly = countsOnly
        // Room after the point, as a reader's window has.
        let bytes = Array((point + "\n  <trkpt").utf8)
        var read = GPXPoint(coordinate: Coordinate(latitude: 0, longitude: 0))
        let outcome = bytes.withUnsafeBufferPointer { scanner.scan($0, into: &read) }
        guard case .point(let length) = outcome else { return (nil, 0, nil) }
        return (length, read.coordinate.latitude, read.elevation)
    }

    static func point(lat: String, lon: String, ele: String, hdop: String) -> String {
        "<trkpt lat=\"\(lat)\" lon=\"\(lon)\"><ele>\(ele)</ele><time>2024-05-01T08:00:00Z</time>"
            + "<hdop>\(hdop)</hdop></trkpt>"
    }

    @Test func checkingANumberAcceptsThePointsReadingItAccepts() {
        var r = PropertyRandom(seed: 2026)
        // Random latitudes and elevations that were only checked (the others are fixed, and
        // always only checked).
        var skippedLatitudes = 0
        var skippedElevations = 0
        for _ in 0..<20_000 {
            let (lat, lon, ele, hdop) = (
                Self.numberText(&r), Self.numberText(&r), Self.numberText(&r), Self.numberText(&r)
            )
            // One number at a time is odd, so that each kind of value decides the outcome.
            let texts = [
                Self.point(lat: lat, lon: "8.5", ele: "408", hdop: "1.2"),
                Self.point(lat: "47.3", lon: lon, ele: "408", hdop: "1.2"),
                Self.point(lat: "47.3", lon: "8.5", ele: ele, hdop: "1.2"),
                Self.point(lat: "47.3", lon: "8.5", ele: "408", hdop: hdop),
            ]
            for (slot, text) in texts.enumerated() {
                let read = Self.scan(text, countsOnly: false)
                let checked = Self.scan(text, countsOnly: true)
                #expect(read.length == checked.length, "\(text)")
                guard checked.length != nil else { continue }
                if slot == 0 && checked.latitude == 0 && read.latitude != 0 { skippedLatitudes += 1 }
                if slot == 2 && checked.elevation == nil && read.elevation != nil { skippedElevations += 1 }
            }
        }
        // Most texts that are numbers in range were only checked.
        #expect(skippedLatitudes > 1_000 && skippedElevations > 1_000)
    }

    @Test func numbersAtTheEdgesOfTheirRangeAreTheParsersCall() {
        let latitudes = [
            "90", "90.0", "-90", "+90.000", "89.99999999999999999999999999", "90.00000000000000000000000001",
            "-90.0000000000000000001", "090", "0000000000000000000089.5", "89", "1e1", ".5", "5.", "-.5", "+",
            "-", ".", "", "9" + String(repeating: "0", count: 130), "8." + String(repeating: "9", count: 130),
            "8." + String(repeating: "9", count: 120), "91", "100", "-89.9999999999999999999999999999999",
            // Integer parts too long for 64 bits, which would wrap to 5 and 89.
            "18446744073709551621", "-18446744073709551705.5",
        ]
        for lat in latitudes {
            for lon in [
                "180", "180.0000000000000000000001", "179.99999999999999999999999", "-180", "181", "0180", "8.5",
            ] {
                let text = Self.point(lat: lat, lon: lon, ele: "408", hdop: "1")
                #expect(
                    Self.scan(text, countsOnly: false).length == Self.scan(text, countsOnly: true).length, "\(text)")
            }
        }
    }

    @Test func garminsLongDecimalsAreOnlyChecked() {
        // Garmin Connect writes each value as the exact expansion of a binary one.
        let text = Self.point(
            lat: "47.3769000358879566192626953125", lon: "8.5416999645531177520751953125",
            ele: "408.376800537109375", hdop: "0.89999997615814208984375")
        let read = Self.scan(text, countsOnly: false)
        let checked = Self.scan(text, countsOnly: true)
        #expect(read.length != nil && read.length == checked.length)
        #expect(read.latitude == 47.3769000358879566192626953125 && read.elevation == 408.376800537109375)
        #expect(checked.latitude == 0 && checked.elevation == nil)
    }

    @Test func aCensusOfValuesAtTheirEdgesIsAWholeReadsCensus() throws {
        // Points with numbers the parser must decide on, among ordinary ones, strict and lenient:
        // the census (only checking) gives the counts, warnings, bad points and error of a
        // reader that reads every number.
        let odd = [
            "90.00000000000000000000000001", "89.99999999999999999999999999", "-90", "91", "1e1", "5.",
            "9" + String(repeating: "0", count: 130), " 47.5 ",
        ]
        for value in odd {
            var points: [String] = []
            for i in 0..<12 { points.append(CensusHalvesTests.point(i, seconds: i)) }
            points.insert("<trkpt lat=\"\(value)\" lon=\"8.5\"><time>2024-05-01T00:00:05Z</time></trkpt>", at: 6)
            points.insert(
                "<trkpt lat=\"47\" lon=\"8\"><ele>\(value)</ele><time>2024-05-01T00:00:07Z</time></trkpt>", at: 9)
            let text = CensusHalvesTests.document(tracks: [[points]])
            for lenient in [false, true] {
                let options = GPXReadOptions(lenient: lenient, keepsExtensionElements: false)
                try CensusHalvesTests.withFile(text) { path in
                    let whole = CensusHalvesTests.whole(path, options)
                    let (census, _) = CensusHalvesTests.halves(path, options, at: nil)
                    #expect(census == whole, "\(value), lenient \(lenient)")
                }
            }
        }
    }
}
