import Foundation
import Testing

@_spi(Testing) @testable import Waymark

/// The reader's fast path for track points (``TrackPointScanner``) must be invisible: with it and
/// without it, every input gives the same events, the same warnings and the same error at the
/// same line and column.
@Suite struct TrackPointScannerTests {
    /// What a read gave: every event, or the error that stopped it (after the events before it).
    struct Outcome: Equatable, CustomStringConvertible {
        var events: [GPXEvent]
        var error: String?
        var scanned = 0

        static func == (a: Outcome, b: Outcome) -> Bool { a.events == b.events && a.error == b.error }

        var description: String {
            "\(events.count) events, error: \(error ?? "none"), last: \(events.last.map { "\($0)" } ?? "none")"
        }
    }

    struct Settings: CustomStringConvertible {
        var lenient = false
        var keepsExtensions = false
        var pieceSize = Int.max
        var limits = XMLLimits.default

        var description: String {
            "lenient \(lenient), keeps extensions \(keepsExtensions), pieces of \(pieceSize)"
        }

        static let all: [Settings] = [
            Settings(), Settings(lenient: true), Settings(keepsExtensions: true),
            Settings(lenient: true, keepsExtensions: true),
        ]
    }

    static func read(_ bytes: [UInt8], scanner: Bool, _ settings: Settings = Settings()) -> Outcome {
        let reader = GPXReader(
            source: MemoryByteSource(bytes, pieceSize: settings.pieceSize), name: "t.gpx",
            options: GPXReadOptions(
                lenient: settings.lenient, limits: settings.limits, keepsExtensionElements: settings.keepsExtensions))
        reader.usesTrackPointScanner = scanner
        var outcome = Outcome(events: [])
        do {
            try reader.read { outcome.events.append($0) }
        } catch {
            outcome.error = "\(error)"
        }
        outcome.scanned = reader.scannedPoints
        return outcome
    }

    /// Reads `bytes` both ways under `settings` and expects the same outcome.
    static func expectSame(_ bytes: [UInt8], _ settings: Settings, _ what: @autoclosure () -> String) {
        let general = read(bytes, scanner: false, settings)
        let fast = read(bytes, scanner: true, settings)
        #expect(general.scanned == 0)
        #expect(fast == general, "\(what()), \(settings)\n  general: \(general)\n  scanner: \(fast)")
    }

    static let ns = """
        xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
        """

    /// Points of several shapes the scanner reads, and some it leaves to the general path.
    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" \(ns)>
        <trk><name>T</name><trkseg>
        <trkpt lat="47.1" lon="8.5"><ele>408.2</ele><time>2024-05-01T08:00:00Z</time><extensions>\
        <gpxtpx:TrackPointExtension><gpxtpx:hr>158</gpxtpx:hr><gpxtpx:cad>80</gpxtpx:cad>\
        </gpxtpx:TrackPointExtension></extensions></trkpt>
        <trkpt lat='47.2' lon = "8.6" ><ele>1e2</ele><time>2024-02-29T23:59:59.5+01:00</time></trkpt>
          <trkpt lon="-8.7" lat="-47.3"/>
        <trkpt lat="47.4" lon="8.8"><time>2024-12-31T23:59:59Z</time><extensions>
          <gpxtpx:TrackPointExtension>
            <gpxtpx:atemp>-3.5</gpxtpx:atemp>
            <gpxtpx:hr>x</gpxtpx:hr>
          </gpxtpx:TrackPointExtension>
        </extensions></trkpt>
        <trkpt lat="47.5" lon="8.9"><ele>1</ele><sat>7</sat></trkpt>
        </trkseg><trkseg><trkpt lat="0" lon="180"></trkpt></trkseg></trk></gpx>

        """

    @Test func scannerReadsTheCommonShapesAndAgreesWithTheGeneralPath() {
        let bytes = Array(Self.sample.utf8)
        let fast = Self.read(bytes, scanner: true)
        // Every point: the one whose heart rate is not a number too (the value is left out, as
        // the general path leaves it out).
        #expect(fast.scanned == 6)
        #expect(fast.error == nil)
        for settings in Settings.all { Self.expectSame(bytes, settings, "the sample") }
        for piece in [1, 2, 3, 7, 64, 333] {
            Self.expectSame(bytes, Settings(pieceSize: piece), "the sample")
        }
    }

    @Test func scannerReadsEachValueOfThePoint() throws {
        let fast = Self.read(Array(Self.sample.utf8), scanner: true)
        let points = fast.events.compactMap { event -> GPXPoint? in
            if case .trackPoint(let p) = event { return p }
            return nil
        }
        #expect(points.count == 6)
        #expect(points[0].coordinate.latitude == 47.1)
        #expect(points[0].elevation == 408.2)
        #expect(points[0].extensions.heartRate == 158)
        #expect(points[0].extensions.cadence == 80)
        #expect(points[0].time == Date(timeIntervalSince1970: 1_714_550_400))
        #expect(points[2].elevation == nil && points[2].time == nil)
        #expect(points[3].extensions.airTemperature == -3.5)
        #expect(points[3].extensions.heartRate == nil)  // "x" is not a number: left out, as before
    }

    /// A prefix or default namespace declared on one segment is out of scope in the next, and the
    /// scanner must not remember it: the general path reports the undeclared prefix.
    @Test func namespacesGoOutOfScopeBetweenSegments() {
        let tpe = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
        let point =
            "<trkpt lat=\"1\" lon=\"2\"><extensions><p:TrackPointExtension><p:hr>99</p:hr></p:TrackPointExtension></extensions></trkpt>"
        let cases = [
            // p bound on the first segment only.
            "<trkseg xmlns:p=\"\(tpe)\">\(point)</trkseg><trkseg>\(point)</trkseg>",
            // p bound to TrackPointExtension, then to another namespace.
            "<trkseg xmlns:p=\"\(tpe)\">\(point)</trkseg><trkseg xmlns:p=\"urn:other\">\(point)</trkseg>",
            // The default namespace is GPX on one segment and another on the next.
            "<trkseg xmlns:p=\"\(tpe)\">\(point)</trkseg><trkseg xmlns=\"urn:other\">\(point)</trkseg>",
            // A point declares its own namespace (the general path reads it), then a plain one.
            "<trkseg xmlns:p=\"\(tpe)\"><trkpt xmlns:p=\"urn:x\" lat=\"1\" lon=\"2\"/>\(point)</trkseg>",
        ]
        for body in cases {
            let doc =
                "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk>\(body)</trk></gpx>"
            for settings in Settings.all { Self.expectSame(Array(doc.utf8), settings, body) }
        }
    }

    /// An empty extension element's prefix is checked as any other's (the fuzzer found `<p:r/>`
    /// with no `p` declared read by the scanner and refused by the general path): undeclared,
    /// declared before, and declared only on the point.
    @Test func anEmptyExtensionElementsPrefixMustBeDeclared() {
        let tpe = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
        let cases = [
            "<trkpt lat=\"1\" lon=\"2\"><extensions><gpxtpx:hr>9</gpxtpx:hr><p:r/></extensions></trkpt>",
            "<trkpt lat=\"1\" lon=\"2\"><extensions><p:r/><gpxtpx:hr>9</gpxtpx:hr></extensions></trkpt>",
            "<trkpt xmlns:p=\"\(tpe)\" lat=\"1\" lon=\"2\"><extensions><p:r/></extensions></trkpt>",
        ]
        for point in cases {
            // The first point teaches the scanner the layout; the second repeats it.
            let good = "<trkpt lat=\"1\" lon=\"2\"><extensions><gpxtpx:hr>9</gpxtpx:hr></extensions></trkpt>"
            let doc =
                "<gpx version=\"1.1\" creator=\"t\" \(Self.ns)><trk><trkseg>\(good)\(point)</trkseg></trk></gpx>"
            for settings in Settings.all { Self.expectSame(Array(doc.utf8), settings, point) }
        }
        let undeclared = Self.read(
            Array(
                "<gpx version=\"1.1\" creator=\"t\" \(Self.ns)><trk><trkseg>\(cases[0])</trkseg></trk></gpx>".utf8),
            scanner: true)
        #expect(undeclared.error?.contains("namespace prefix 'p' is not declared") == true, "\(undeclared)")
    }

    /// Points the scanner cannot read (each has a <link>) make it rest rather than fail on every
    /// one; it takes up again later, and what is read stays the same.
    @Test func scannerRestsWhileItKeepsMissing() {
        var text = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<3000 {
            text += "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"1\"><ele>1</ele><link href=\"x\"/></trkpt>\n"
        }
        for i in 0..<3000 { text += "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"2\"><ele>2</ele></trkpt>\n" }
        text += "</trkseg></trk></gpx>\n"
        let bytes = Array(text.utf8)
        let fast = Self.read(bytes, scanner: true)
        let reader = GPXReader(
            source: MemoryByteSource(bytes), name: "t.gpx", options: GPXReadOptions(keepsExtensionElements: false))
        _ = try? events(of: reader)
        // Without the rest, each of the 3 000 points with <link> would be a miss; with it, 8 in
        // every 1 032 children are. Then the plain points are scanned again, at the latest once
        // a rest of 1 024 is over.
        #expect(reader.scannerAttempts - reader.scannedPoints < 100)
        #expect(fast.scanned > 3000 - 1100)
        Self.expectSame(bytes, Settings(), "points with <link>, then plain ones")
    }

    /// Small limits must trip where they trip without the scanner.
    /// Points that repeat the layout of the one before are read from a template of it; what
    /// they read, and every error and warning, stays the general path's, whatever changes from
    /// one point to the next.
    @Test func repeatedLayoutsAreReadFromTheTemplate() {
        var text = "<gpx version=\"1.1\" creator=\"t\" \(Self.ns)><trk><trkseg>\n"
        func point(
            _ lat: String, _ lon: String, ele: String = "408.2", time: String = "2024-05-01T08:00:00Z",
            hr: String = "150"
        )
            -> String
        {
            "  <trkpt lat=\"\(lat)\" lon=\"\(lon)\"><ele>\(ele)</ele><time>\(time)</time><extensions>"
                + "<gpxtpx:TrackPointExtension><gpxtpx:hr>\(hr)</gpxtpx:hr></gpxtpx:TrackPointExtension>"
                + "</extensions></trkpt>\n"
        }
        var rng = SplitMix64(seed: 23)
        for i in 0..<2000 {
            let lat = String(format: "%.\(rng.next() % 8)f", -89.9 + Double(rng.next() % 1_799_000) / 10_000)
            let lon = String(format: "%.\(rng.next() % 8)f", -179.9 + Double(rng.next() % 3_599_000) / 10_000)
            let day = 1 + (i / 500)
            text += point(
                lat, lon, ele: "\(Int(rng.next() % 9000) - 500).\(rng.next() % 10)",
                time: "2024-05-0\(day)T08:\(10 + i % 50):\(10 + i % 49)Z", hr: "\(60 + rng.next() % 140)")
        }
        // Each of these differs from the point before it: a value the parsers read only the
        // long way (white space, an exponent), or refuse, or a change in the bytes around them.
        for variant in [
            point("47.1", "8.5", ele: " 408.2"), point("47.1", "8.5", ele: "4.082e2"), point("95", "8.5"),
            point("47.1", "181"), point("47.1", "8.5", time: "2024-05-01T08:00:00+02:00"),
            point("47.1", "8.5", time: "2024-05-01T08:00:00"), point("47.1", "8.5", hr: "x"),
            point("47.1", "8.5", hr: "1&#50;"), point("47.1", "8.5").replacingOccurrences(of: "  <", with: "   <"),
            point("47.1", "8.5").replacingOccurrences(of: "<ele>", with: "<ele >"),
            point("47.1", "8.5").replacingOccurrences(of: "gpxtpx:hr>", with: "gpxtpx:cad>"),
            point("-", "8.5"), point("47.1", "8.5", time: "2024-13-01T08:00:00Z"), point("1234567890123456", "8.5"),
        ] {
            text += variant + point("47.2", "8.6")
        }
        text += "</trkseg></trk></gpx>\n"
        let bytes = Array(text.utf8)
        let reader = GPXReader(
            source: MemoryByteSource(bytes), name: "t.gpx",
            options: GPXReadOptions(lenient: true, keepsExtensionElements: false))
        _ = try? events(of: reader)
        #expect(reader.templatedPoints > 1990)
        for settings in Settings.all { Self.expectSame(bytes, settings, "repeated layouts") }
        for piece in [7, 333, 4099] { Self.expectSame(bytes, Settings(pieceSize: piece), "repeated layouts") }
    }

    /// Points whose layouts alternate never repeat the one before (the scanner then rests the
    /// template for a while rather than relearn it at every point); they are all still scanned,
    /// and read the same as on the general path.
    @Test func alternatingLayoutsRestTheTemplate() {
        var text = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<3000 {
            text +=
                i % 2 == 0
                ? "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"1\"><ele>1</ele></trkpt>\n"
                : "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"2\"><time>2024-05-01T08:00:00Z</time></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        let bytes = Array(text.utf8)
        let reader = GPXReader(
            source: MemoryByteSource(bytes), name: "t.gpx", options: GPXReadOptions(keepsExtensionElements: false))
        _ = try? events(of: reader)
        #expect(reader.scannedPoints == 3000)
        #expect(reader.templatedPoints == 0)
        Self.expectSame(bytes, Settings(), "alternating layouts")
    }

    @Test func limitsTripAtTheSameConstruct() {
        let bytes = Array(Self.sample.utf8)
        for limits in [
            XMLLimits(maxDepth: 4), XMLLimits(maxDepth: 5), XMLLimits(maxDepth: 6), XMLLimits(maxDepth: 7),
            XMLLimits(maxTokenBytes: 60, chunkBytes: 16), XMLLimits(maxTokenBytes: 200, chunkBytes: 50),
        ] {
            Self.expectSame(bytes, Settings(limits: limits), "limits \(limits)")
            Self.expectSame(bytes, Settings(lenient: true, limits: limits), "limits \(limits)")
        }
    }

    /// Random damage to the sample: every mutant reads the same both ways, error or not.
    /// `WAYMARK_SCANNER_MUTANTS=N` and `WAYMARK_SCANNER_SEED=S` run more, or others.
    @Test func mutantsReadTheSameWithAndWithoutTheScanner() {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["WAYMARK_SCANNER_MUTANTS"].flatMap { Int($0) } ?? 3000
        let seed = environment["WAYMARK_SCANNER_SEED"].flatMap { UInt64($0) } ?? 7
        let original = Array(Self.sample.utf8)
        let first = original.firstIndex(of: UInt8(ascii: "\n"))! + 1
        let bytesOf = { (s: String) in Array(s.utf8) }
        let pieces: [[UInt8]] =
            Array("<>&;\"'/=:-.+eEZT019 \n\t\r!?[]a".utf8).map { [$0] } + [[0xC3, 0xA9], [0xFF], [0x00]]
            + [
                "<!-- c -->", "<![CDATA[1]]>", "&#49;", "&amp;", " xmlns=\"urn:x\"", " xmlns:gpxtpx=\"urn:y\"",
                "<x/>", "</trkpt>", "<trkpt lat=\"1\" lon=\"2\">", "<?pi x?>", " lat=\"3\"", "<ele>5</ele>",
                "<time>2024-01-01T00:00:00Z</time>", "2024-02-30T00:00:00Z", "24:00:00", "<gpxtpx:hr>1</gpxtpx:hr>",
                "</extensions>", "1e400", "NaN", "-0", "91", "180.0000001",
            ].map(bytesOf)
        var rng = SplitMix64(seed: seed)
        var mutants = 0
        var scanned = 0
        for _ in 0..<count {
            var bytes = original
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let i = first + Int(rng.next() % UInt64(bytes.count - first))
                let piece = pieces[Int(rng.next() % UInt64(pieces.count))]
                switch rng.next() % 4 {
                case 0: bytes.replaceSubrange(i..<min(bytes.count, i + piece.count), with: piece)
                case 1: bytes.remove(at: i)
                default: bytes.insert(contentsOf: piece, at: i)
                }
            }
            let settings = Settings.all[Int(rng.next() % 4)]
            let general = Self.read(bytes, scanner: false, settings)
            let fast = Self.read(bytes, scanner: true, settings)
            scanned += fast.scanned
            mutants += 1
            #expect(
                fast == general,
                "mutant \(mutants), \(settings):\n\(String(decoding: bytes, as: UTF8.self))\n  general: \(general)\n  scanner: \(fast)"
            )
            if fast != general { break }
        }
        // The mutants still exercise the scanner, not only the general path: about one point in
        // two of those read.
        #expect(scanned > mutants / 2)
    }

    /// Every GPX file the project has, and the corpus when present, both ways.
    @Test func everyKnownFileReadsTheSame() throws {
        let files = Paths.projectGPXFiles(corpus: true)
        #expect(files.count > 40)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            for settings in Settings.all { Self.expectSame(bytes, settings, file) }
        }
    }

    /// The scanner's parser of the times loggers write gives the general parser's instant, or
    /// leaves the text to it.
    @Test func commonTimeAgreesWithTheGeneralTimeParser() {
        var rng = SplitMix64(seed: 3)
        var cache = ValueParsing.DayCache()
        var read = 0
        for _ in 0..<40_000 {
            // Mostly valid times, some with a bad field; fractions and zone offsets of every form.
            let y = Int(rng.next() % 10_000)
            let mo = Int(rng.next() % 14)
            let d = Int(rng.next() % 33)
            let h = Int(rng.next() % 26)
            let mi = Int(rng.next() % 62)
            let s = Int(rng.next() % 62)
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let year = String(repeating: "0", count: 4 - String(y).count) + String(y)
            let fractions = ["", "", ".000", ".5", ".123456789", ".", ".9999999999999"]
            let zones = ["Z", "Z", "+05:30", "-03:45", "+14:00", "-14:01", "+13:60", "+0530", "z", "", "-00:00"]
            let fraction = fractions[Int(rng.next() % UInt64(fractions.count))]
            let zone = zones[Int(rng.next() % UInt64(zones.count))]
            let text = "\(year)-\(two(mo))-\(two(d))T\(two(h)):\(two(mi)):\(two(s))\(fraction)\(zone)"
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { b in
                let span = ByteSpan(start: b.baseAddress!, count: b.count)
                guard let fast = ValueParsing.commonTime(span, cache: &cache) else { return }
                read += 1
                guard case .success(let t) = ValueParsing.dateTime(span) else {
                    Issue.record("\(text): read fast, refused by the general parser")
                    return
                }
                #expect(t.hadZone && fast == t.date, "\(text)")
            }
        }
        #expect(read > 10_000)
        for other in [
            "2024-05-01T08:00:00", "x024-05-01T08:00:00Z", "2024-05-01T08:00:00.Z", "2024-05-01T08:00:00.5",
            "2024-05-01T08:00:00+05", " 2024-05-01T08:00:00Z", "2024-05-01T24:00:00Z",
        ] {
            Array(other.utf8).withUnsafeBufferPointer { b in
                #expect(ValueParsing.commonTime(ByteSpan(start: b.baseAddress!, count: b.count), cache: &cache) == nil)
            }
        }
    }
}
