import Foundation
import Testing

@testable import Waymark

/// A replay's first pass reads a large GPX file in two halves at once. Wherever the second
/// half starts, the census, the warnings, the bad points and the error must be those of one
/// reader reading the file from start to end.
@Suite struct CensusHalvesTests {
    /// All a census tells, and what reading it gave, in comparable form.
    struct Outcome: Equatable, CustomStringConvertible {
        var counts: [Int] = []
        var plays: String = ""
        var firstIndex = 0
        var isTimed = false
        var droppedPoints = 0
        var badPoints = 0
        var warnings: [String] = []
        var error: String?

        var description: String {
            "counts \(counts) plays \(plays) first \(firstIndex) timed \(isTimed) dropped \(droppedPoints) "
                + "bad \(badPoints) warnings \(warnings) error \(error ?? "none")"
        }

        init() {}

        init(_ census: ReplayCensus, badPoints: Int, warnings: [String]) {
            counts = [census.waypoints, census.routePoints, census.trackPoints].flatMap {
                [$0.count, $0.untimed, $0.dropped]
            }
            plays = census.plays.map { "\($0)" } ?? "nothing"
            firstIndex = census.firstIndex
            isTimed = census.isTimed
            droppedPoints = census.droppedPoints
            self.badPoints = badPoints
            self.warnings = warnings
        }
    }

    static func withFile<T>(_ text: String, _ body: (String) throws -> T) throws -> T {
        try withFile(bytes: Array(text.utf8), body)
    }

    static func withFile<T>(bytes: [UInt8], _ body: (String) throws -> T) throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("halves-\(UUID()).gpx").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try body(path)
    }

    /// The census of one reader, from start to end.
    static func whole(_ path: String, _ options: GPXReadOptions) -> Outcome {
        var warnings: [String] = []
        var reader: (any TraceEventReader)?
        do {
            let file = try ReplayFile(path: path)
            reader = try TraceFormat.reader(for: file.bytes(), name: path, options: options)
            let census = try ReplayCensus.count(reader!, warnings: { warnings.append("\($0)") })
            return Outcome(census, badPoints: reader!.droppedPoints, warnings: warnings)
        } catch {
            var outcome = Outcome()
            outcome.warnings = warnings
            outcome.error = "\(error)"
            return outcome
        }
    }

    /// The census read in halves, the second starting at `offset`; and how it was read.
    static func halves(_ path: String, _ options: GPXReadOptions, at offset: Int?) -> (Outcome, ReplayCensus.Reading?) {
        var warnings: [String] = []
        do {
            let file = try ReplayFile(path: path)
            let reader = try #require(
                try TraceFormat.reader(for: file.bytes(), name: path, options: options) as? GPXReader)
            let (census, bad, reading) = try ReplayCensus.count(
                reader, file: file, readOptions: options, warnings: { warnings.append("\($0)") }, secondHalfAt: offset)
            return (Outcome(census, badPoints: bad, warnings: warnings), reading)
        } catch {
            var outcome = Outcome()
            outcome.warnings = warnings
            outcome.error = "\(error)"
            return (outcome, nil)
        }
    }

    /// A track point, timed `seconds` after 2024-05-01T00:00:00Z (nil: untimed).
    static func point(_ i: Int, seconds: Int?, extra: String = "") -> String {
        let time = seconds.map { "<time>\(Self.iso(1_714_521_600 + $0))</time>" }
        return "<trkpt lat=\"48.\(1000 + i)\" lon=\"11.\(2000 + i)\"><ele>\(500 + i)</ele>\(time ?? "")\(extra)</trkpt>"
    }

    /// `seconds` since 1970 as an ISO 8601 UTC time (days from 2024-05-01 within the month).
    static func iso(_ seconds: Int) -> String {
        let s = seconds - 1_714_521_600
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "2024-05-\(two(1 + s / 86_400))T\(two(s % 86_400 / 3600)):\(two(s % 3600 / 60)):\(two(s % 60))Z"
    }

    /// The UTF-8 offset of the first `needle` in `text` (its last with `last`).
    static func offset(of needle: String, in text: String, last: Bool = false) -> Int {
        let range = last ? text.range(of: needle, options: .backwards)! : text.range(of: needle)!
        return text.utf8.distance(from: text.startIndex, to: range.lowerBound)
    }

    /// A document: its tracks, each a list of segments of track points, between `head` and
    /// `tail`; `space` goes between points.
    static func document(
        tracks: [[[String]]], trackTags: [String]? = nil, segmentTag: String = "<trkseg>", space: String = "\n   ",
        head: String =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n",
        tail: String = "</gpx>\n"
    ) -> String {
        var text = head + "<metadata><name>walk</name></metadata>\n"
        for (t, segments) in tracks.enumerated() {
            text += (trackTags?[t] ?? "<trk>") + "<name>track \(t)</name>\n"
            for points in segments {
                text += segmentTag + space + points.joined(separator: space) + "\n</trkseg>\n"
            }
            text += "</trk>\n"
        }
        return text + tail
    }

    /// Every offset of `text` where a second half could start: every `<` and every byte of white
    /// space (a second half is kept only where the first half's next child starts after white
    /// space); with `all`, every offset.
    static func offsets(_ bytes: [UInt8], all: Bool = false) -> [Int] {
        bytes.indices.filter { all || [0x3C, 0x20, 0x0A, 0x0D, 0x09].contains(bytes[$0]) }
    }

    /// Reads `text` in halves from every offset and compares each with the whole read; returns
    /// the offsets where the halves were joined.
    @discardableResult
    static func expectSameEverywhere(
        _ text: String, options: GPXReadOptions = GPXReadOptions(keepsExtensionElements: false), all: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Int] {
        try expectSameEverywhere(
            bytes: Array(text.utf8), options: options, all: all, sourceLocation: sourceLocation)
    }

    @discardableResult
    static func expectSameEverywhere(
        bytes: [UInt8], options: GPXReadOptions = GPXReadOptions(keepsExtensionElements: false), all: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Int] {
        try withFile(bytes: bytes) { path in
            let expected = whole(path, options)
            var joined: [Int] = []
            var differences = 0
            for offset in offsets(bytes, all: all) {
                let (actual, reading) = halves(path, options, at: offset)
                if actual != expected {
                    differences += 1
                    if differences <= 3 {
                        Issue.record(
                            "second half at \(offset): \(actual)\nwhole: \(expected)", sourceLocation: sourceLocation)
                    }
                }
                if reading == .halves { joined.append(offset) }
            }
            #expect(differences == 0, sourceLocation: sourceLocation)
            return joined
        }
    }

    /// The offsets where `<trkpt` starts, after the first segment's start tag.
    static func trackPointStarts(_ text: String) -> [Int] {
        let bytes = Array(text.utf8)
        let name = Array("<trkpt".utf8)
        let firstSegment = offset(of: "<trkseg", in: text)
        return bytes.indices.filter {
            $0 > firstSegment && $0 + name.count <= bytes.count && Array(bytes[$0..<($0 + name.count)]) == name
        }
    }

    @Test func aCleanWalkIsJoinedAtEveryTrackPointAndCountsAsWhole() throws {
        var t = 0
        let tracks = (0..<2).map { _ in
            (0..<2).map { _ in
                (0..<6).map { i -> String in
                    t += 7
                    return Self.point(t, seconds: t, extra: i == 2 ? "<extensions><x>1</x></extensions>" : "")
                }
            }
        }
        let text = Self.document(tracks: tracks)
        let joined = try Self.expectSameEverywhere(text, all: true)
        // Every track point after the first segment's start tag can begin the second half.
        let starts = Self.trackPointStarts(text)
        #expect(starts.count == 24)
        #expect(Set(starts).isSubset(of: Set(joined)), "not joined at \(Set(starts).subtracting(joined).sorted())")
    }

    @Test func timesThatGoBackAroundTheSplitCountAsWhole() throws {
        // Back in time within the second half, across it, by less than a second, and to the
        // very first time; equal times; an untimed point.
        let seconds: [Int?] = [0, 10, 20, 5, 30, 30, 29, 40, 50, 45, 60, 0, 70, nil, 80, 79, 90, 100, 95, 110]
        let points = seconds.enumerated().map { Self.point($0.offset, seconds: $0.element) }
        let text = Self.document(tracks: [[Array(points[..<9]), Array(points[9...])]])
        let joined = try Self.expectSameEverywhere(text)
        #expect(!joined.isEmpty)
        // Timed throughout but for one point, then every point timed.
        let timed = seconds.enumerated().compactMap { i, time in time.map { Self.point(i, seconds: $0) } }
        let joinedTimed = try Self.expectSameEverywhere(Self.document(tracks: [[timed]]))
        #expect(!joinedTimed.isEmpty)
    }

    @Test func subSecondTimesAndTimesFarApartCountAsWhole() throws {
        // Milliseconds, and a jump of years (no longer within a factor of two of the first time:
        // the halves are not joined after it, and nothing changes).
        let points = (0..<16).map { i in
            let base = i < 10 ? "2024-05-01T10:00:0\(i % 10).\(900 - i * 50)Z" : "2061-05-01T10:00:00.\(i)Z"
            return "<trkpt lat=\"1.\(i)\" lon=\"2.\(i)\"><time>\(base)</time></trkpt>"
        }
        try Self.expectSameEverywhere(Self.document(tracks: [[points]]))
        // Times before 2001 (negative from the reference date).
        let old = (0..<12).map { i in
            "<trkpt lat=\"1.\(i)\" lon=\"2.\(i)\"><time>1999-05-01T10:00:\(10 + (i * 7) % 40)Z</time></trkpt>"
        }
        let before2001 = Self.document(tracks: [[old]])
        let joined = try Self.expectSameEverywhere(before2001)
        // Only where one half has no time: before the first point, or after the last.
        let first = Self.offset(of: "<trkpt", in: before2001)
        let last = Self.offset(of: "</trkpt>", in: before2001, last: true) + 8
        #expect(joined.allSatisfy { $0 <= first || $0 >= last })
        #expect(joined.contains { $0 >= last })
    }

    @Test func aSecondHalfWithWaypointsRoutesOrWarningsIsNotKept() throws {
        let points = (0..<10).map { Self.point($0, seconds: $0 * 10) }
        // A waypoint and a route after the tracks count before them: the first half reads on.
        let wpt = Self.document(
            tracks: [[points]], tail: "<wpt lat=\"1\" lon=\"2\"/><rte><rtept lat=\"1\" lon=\"2\"/></rte></gpx>\n")
        #expect(try Self.expectSameEverywhere(wpt).isEmpty)
        // Warnings the second half would give with its own line numbers: a time without a zone
        // and an unknown element (strict and lenient), a bad number and a point without a
        // usable position (lenient; strict reading fails at them).
        let strict = GPXReadOptions(lenient: false, keepsExtensionElements: false)
        let lenient = GPXReadOptions(lenient: true, keepsExtensionElements: false)
        var warned = points
        warned[6] = "<trkpt lat=\"1\" lon=\"2\"><time>2024-05-01T10:00:00</time></trkpt>"
        warned[8] = "<trkpt lat=\"1\" lon=\"2\"><wat/></trkpt>"
        for options in [strict, lenient] {
            let joined = try Self.expectSameEverywhere(Self.document(tracks: [[warned]]), options: options)
            let text = Self.document(tracks: [[warned]])
            // Not joined before the last warning.
            #expect(joined.allSatisfy { $0 > Self.offset(of: "<wat/>", in: text) })
        }
        for bad in ["<trkpt lat=\"1\" lon=\"2\"><ele>high</ele></trkpt>", "<trkpt lat=\"91\" lon=\"2\"></trkpt>"] {
            var odd = points
            odd[7] = bad
            try Self.expectSameEverywhere(Self.document(tracks: [[odd]]), options: strict)
            let text = Self.document(tracks: [[odd]])
            let joined = try Self.expectSameEverywhere(text, options: lenient)
            #expect(joined.allSatisfy { $0 > Self.offset(of: bad, in: text) })
        }
        // A warning still held when the first half reaches the second's start (an unknown
        // element in the segment, reported with the point after it) is not lost.
        var held = points
        held[5] = "<what/>\n" + held[5]
        let text = Self.document(tracks: [[held]])
        let joined = try Self.expectSameEverywhere(text)
        #expect(joined.contains { $0 > Self.offset(of: "<what/>", in: text) })
    }

    @Test func aDamagedSecondHalfFailsAsTheWholeFileDoes() throws {
        let points = (0..<12).map { Self.point($0, seconds: $0 * 10) }
        let text = Self.document(tracks: [[points]])
        // Cut short, cut inside a tag, and with a stray end tag.
        for damaged in [
            String(text.dropLast(30)), String(text.dropLast(90)),
            text.replacingOccurrences(of: "</trkseg>", with: "</trkseg></trk></trk>"),
        ] {
            try Self.expectSameEverywhere(damaged)
            try Self.expectSameEverywhere(
                damaged, options: GPXReadOptions(lenient: true, keepsExtensionElements: false))
        }
    }

    @Test func trackPointsInCommentsTextAndOtherTracksAreWatchedForAsTheyAre() throws {
        // A `<trkpt` in a comment and in CDATA, a segment with an attribute and a namespace, a
        // second track whose start tag differs, CRLF and tabs between points.
        let points = (0..<14).map { i in
            Self.point(i, seconds: i * 10, extra: i == 4 ? "<desc><![CDATA[<trkpt lat=\"9\" lon=\"9\">]]></desc>" : "")
        }
        let tracks = [
            [Array(points[..<5]) + ["<!-- <trkpt lat=\"9\" lon=\"9\"> -->"], Array(points[5..<8])],
            [Array(points[8...])],
        ]
        let text = Self.document(
            tracks: tracks, trackTags: ["<trk>", "<trk xmlns:x=\"urn:x\">"],
            segmentTag: "<trkseg\txmlns=\"http://www.topografix.com/GPX/1/1\" >", space: "\r\n\t")
        let joined = try Self.expectSameEverywhere(text, all: true)
        // Joined in the first track only (the second's start tag is not the one the half was given).
        let second = Self.offset(of: "<trk xmlns", in: text)
        #expect(!joined.isEmpty)
        #expect(joined.allSatisfy { $0 < second })
    }

    @Test func prefixedGPXAndGPX10AreJoinedToo() throws {
        let points = (0..<8).map { i in
            "<g:trkpt lat=\"1.\(i)\" lon=\"2.\(i)\"><g:time>2024-05-01T10:00:0\(i)Z</g:time></g:trkpt>"
        }
        let prefixed =
            "<g:gpx xmlns:g=\"http://www.topografix.com/GPX/1/1\" version=\"1.1\"><g:trk><g:trkseg>\n"
            + points.joined(separator: "\n") + "\n</g:trkseg></g:trk></g:gpx>\n"
        #expect(try !Self.expectSameEverywhere(prefixed).isEmpty)
        let gpx10 = Self.document(
            tracks: [[(0..<8).map { Self.point($0, seconds: $0) }]],
            head: "<gpx version=\"1.0\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/0\">")
        #expect(try !Self.expectSameEverywhere(gpx10).isEmpty)
    }

    /// The start tags are compared byte for byte: under the same names, a segment or a track that
    /// declares another default namespace puts its points elsewhere (GPX 1.0 keeps a foreign
    /// element silently), and a second half given the first segment's tags would count them.
    @Test func startTagsThatDifferUnderTheSameNamesAreNotJoined() throws {
        let segment = """
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/0" version="1.0"><g:trk>
            <g:trkseg><trkpt lat="1" lon="1"/></g:trkseg>
            <g:trkseg xmlns="urn:x">
            <trkpt lat="2" lon="2"/></g:trkseg></g:trk></g:gpx>

            """
        let track = """
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/0" version="1.0"><g:trk>
            <g:trkseg><trkpt lat="1" lon="1"/></g:trkseg></g:trk><g:trk xmlns="urn:x">
            <g:trkseg><trkpt lat="2" lon="2"/></g:trkseg></g:trk></g:gpx>

            """
        for (text, differing) in [(segment, "<g:trkseg xmlns"), (track, "<g:trk xmlns")] {
            let joined = try Self.expectSameEverywhere(text, all: true)
            let second = Self.offset(of: "<trkpt", in: text, last: true)
            // Joined in the first segment, never under the start tag that differs.
            #expect(joined.contains { $0 < Self.offset(of: differing, in: text) })
            #expect(!joined.contains { (Self.offset(of: differing, in: text)...second).contains($0) })
            try Self.withFile(text) { path in
                let (outcome, _) = Self.halves(path, GPXReadOptions(keepsExtensionElements: false), at: second)
                #expect(outcome.counts[6] == 1)
            }
        }
    }

    /// A Latin-1 file is transcoded, so its offsets are not the file's: it is read whole.
    @Test func aTranscodedFileIsReadWhole() throws {
        let points = (0..<8).map { Self.point($0, seconds: $0 * 10) }
        let text = Self.document(
            tracks: [[Array(points[..<4]), Array(points[4...])]],
            head: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<gpx version=\"1.1\" creator=\"t\" "
                + "xmlns=\"http://www.topografix.com/GPX/1/1\">\n<metadata><desc>\u{E9}t\u{E9} \u{E0} "
                + String(repeating: "\u{E8}", count: 200) + "</desc></metadata>\n")
        let latin1 = text.unicodeScalars.map { UInt8($0.value) }
        let joined = try Self.expectSameEverywhere(bytes: latin1)
        #expect(joined.isEmpty)
    }

    /// Whitespace reported as text (extension elements kept verbatim), a byte order mark, an
    /// empty first segment, and a prefix declared on the track and used in the second half.
    @Test func otherReadingsAndLayoutsAreJoinedAsTheyCount() throws {
        let points = (0..<10).map {
            Self.point($0, seconds: $0 * 10, extra: $0 % 3 == 0 ? "<extensions><p:x>\($0)</p:x></extensions>" : "")
        }
        let text = Self.document(
            tracks: [[Array(points[..<5]), Array(points[5...])]], trackTags: ["<trk xmlns:p=\"urn:p\">"]
        )
        .replacingOccurrences(
            of: "<trk xmlns:p=\"urn:p\"><name>track 0</name>\n",
            with: "<trk xmlns:p=\"urn:p\"><name>track 0</name>\n<trkseg/>\n")
        #expect(text.contains("<trkseg/>"))
        #expect(try !Self.expectSameEverywhere(text).isEmpty)
        #expect(try !Self.expectSameEverywhere(text, options: GPXReadOptions(keepsExtensionElements: true)).isEmpty)
        #expect(try !Self.expectSameEverywhere(bytes: [0xEF, 0xBB, 0xBF] + Array(text.utf8)).isEmpty)
    }

    /// Where a second half starts when none is chosen: the first track point's start tag from
    /// an offset on, with or without a prefix, never a name that only ends in `trkpt`.
    @Test func theSecondHalfStartsAtATrackPointStartTag() throws {
        let text = """
            <gpx><trk><trkseg><trkpt lat="1" lon="2"/> <xtrkpt/><a:trkptx/><x a="b:trkpt "/>
            <g:trkpt lat="1" lon="2"/><trkpt\tlat="3" lon="4"/><long.prefix-1:trkpt/></trkseg></trk></gpx>
            """
        let bytes = Array(text.utf8)
        try Self.withFile(text) { path in
            let file = try ReplayFile(path: path)
            let starts = [
                Self.offset(of: "<trkpt", in: text), Self.offset(of: "<g:trkpt", in: text),
                Self.offset(of: "<trkpt\t", in: text), Self.offset(of: "<long.prefix", in: text),
            ]
            for from in 0...bytes.count {
                let expected = starts.first { $0 >= from }
                #expect(ReplayCensus.trackPoint(in: file, from: from, before: bytes.count) == expected, "from \(from)")
            }
        }
    }

    /// Two tallies joined count as one tally of all their points, whenever they can be joined;
    /// they can be whenever every time is positive and within a factor of two of the earliest,
    /// and the second's first time is at or after the first's latest (or a half has no time).
    @Test func talliesJoinAsOneTallyOfAllTheirPoints() {
        struct Input {
            var times: [Double?]
            var split: Int
        }
        Property<Input>(
            name: "tallies join",
            count: 400,
            generate: { random in
                // Times near 2024, near 1999 (negative), or spread over a century; steps of
                // whole and part seconds, some back in time, some equal, some missing.
                let base = random.pick([7.3e8, -4e7, 1e3, 3e9])
                var t = base + Double(random.int(0...1000))
                let times = random.array(0...24) { random -> Double? in
                    if random.bool(0.1) { return nil }
                    switch random.int(0...9) {
                    case 0: t -= Double(random.int(1...30))
                    case 1: t += 0
                    case 2: t += Double(random.int(0...999)) / 1000
                    case 3: t *= random.bool() ? 1.9 : 2.1
                    default: t += Double(random.int(1...60))
                    }
                    return t
                }
                return Input(times: times, split: random.int(0...times.count))
            },
            shrink: { input in
                shrinkArray(input.times, minimum: 0).map { Input(times: $0, split: min(input.split, $0.count)) }
            },
            describe: { "split \($0.split) of \($0.times)" }
        ).check { input in
            func tally(_ times: ArraySlice<Double?>) -> ReplayCensus.Tally {
                var tally = ReplayCensus.Tally()
                for time in times { tally.add(time.map { Date(timeIntervalSinceReferenceDate: $0) }) }
                return tally
            }
            let whole = tally(input.times[...])
            let first = tally(input.times[..<input.split])
            let second = tally(input.times[input.split...])
            var problems = Problems()
            let timed = input.times.compactMap { $0 }
            let firstTimes = input.times[..<input.split].compactMap { $0 }
            let secondTimes = input.times[input.split...].compactMap { $0 }
            let joinable =
                firstTimes.isEmpty || secondTimes.isEmpty
                || (timed.min()! > 0 && timed.max()! <= 2 * timed.min()! && secondTimes[0] >= firstTimes.max()!)
            if let joined = first.followed(by: second) {
                problems.expect(joinable, "joined where it may not be")
                problems.expect(
                    [joined.count, joined.untimed, joined.dropped] == [whole.count, whole.untimed, whole.dropped],
                    "joined \([joined.count, joined.untimed, joined.dropped]) whole \([whole.count, whole.untimed, whole.dropped])"
                )
                problems.expect(joined.origin == whole.origin, "origin \(String(describing: joined.origin))")
            } else {
                problems.expect(!joinable, "not joined where it may be")
            }
            return problems.list
        }
    }

    /// A large file is read in halves by a replay's first pass, with the counts of a whole read.
    @Test func aStreamingReplayReadsALargeFileInHalves() throws {
        var points: [String] = []
        var t = 100
        var size = 0
        while size < ReplayCensus.halvesFrom + (1 << 20) {
            t += points.count % 97 == 0 ? -3 : 1
            points.append(Self.point(points.count, seconds: t))
            size += points[points.count - 1].utf8.count + 4
        }
        let text = Self.document(tracks: [[Array(points[..<1000]), Array(points[1000...])]])
        #expect(text.utf8.count > ReplayCensus.halvesFrom)
        try Self.withFile(text) { path in
            let options = GPXReadOptions(keepsExtensionElements: false)
            let expected = Self.whole(path, options)
            let source = try StreamingReplaySource(contentsOf: path, readOptions: options)
            #expect(source.censusReading == .halves)
            #expect(source.pointCount == points.count)
            #expect(source.totalDroppedPoints == expected.droppedPoints)
            #expect(source.totalDroppedPoints > 0)
            #expect(source.isTimed)
        }
    }
}
