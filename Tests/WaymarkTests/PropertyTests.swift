import Foundation
import Testing
import WaymarkGPSD

@testable import Waymark

/// Properties over generated inputs (``Property``: a failure is shrunk and reported with the seed
/// that replays it): the readers give the same points whatever the
/// chunking, with the whole date; the writers lose nothing, across the antimeridian and near the
/// poles; a user's string survives every format exactly.
///
/// Times are generated across midnights, month and year ends and from 1990 to 2089; longitudes
/// are drawn half the time within a few metres of ±180°, latitudes a quarter of the time near a
/// pole. The expected values are computed here, apart from the code under test (the civil date
/// from days since 1970, the decimal text of a coordinate).
@Suite struct ReaderWriterPropertyTests {
    /// A generated fix: latitude and longitude in 1e-7 degrees, elevation in centimetres, and the
    /// seconds since the previous fix.
    struct Fix: Sendable, Hashable {
        var lat7: Int
        var lon7: Int
        var eleCm: Int
        var gap: Int
    }

    static func latitude(_ r: inout PropertyRandom) -> Int {
        switch r.int(0...3) {
        case 0: r.int(899_990_000...900_000_000)
        case 1: r.int(-900_000_000 ... -899_990_000)
        case 2: r.int(-1_000...1_000)
        default: r.int(-900_000_000...900_000_000)
        }
    }
    static func longitude(_ r: inout PropertyRandom) -> Int {
        switch r.int(0...3) {
        case 0: r.int(1_799_990_000...1_800_000_000)
        case 1: r.int(-1_800_000_000 ... -1_799_990_000)
        case 2: r.int(-1_000...1_000)
        default: r.int(-1_800_000_000...1_800_000_000)
        }
    }
    static func fixes(_ r: inout PropertyRandom) -> [Fix] {
        r.array(1...40) { r in
            Fix(lat7: latitude(&r), lon7: longitude(&r), eleCm: r.int(-50_000...900_000), gap: r.int(1...7_200))
        }
    }
    /// Seconds since 1970 of the first fix: 1990 to 2079, less a few days for the fixes after it.
    static func start(_ r: inout PropertyRandom) -> Int { r.int(631_152_000...3_471_292_799 - 300_000) }
    /// How a reader's source cuts the bytes: each read returns the next of these sizes.
    static func cuts(_ r: inout PropertyRandom) -> [Int] { r.array(1...12) { $0.int(1...97) } }

    /// A trace and a way to cut its bytes.
    struct Chunked {
        var fixes: [Fix]
        var start: Int
        var cuts: [Int]
    }
    static let chunked = Property<Chunked>(
        name: "chunked",
        generate: { r in Chunked(fixes: fixes(&r), start: start(&r), cuts: cuts(&r)) },
        shrink: { c in shrinkArray(c.fixes).map { Chunked(fixes: $0, start: c.start, cuts: c.cuts) } })

    /// A trace and a user's name for it.
    struct Named {
        var fixes: [Fix]
        var start: Int
        var name: String
    }
    static let named = Property<Named>(
        name: "named",
        generate: { r in
            Named(fixes: fixes(&r), start: start(&r), name: r.array(1...12) { $0.pick(nameCharacters) }.joined())
        },
        shrink: { n in shrinkArray(n.fixes).map { Named(fixes: $0, start: n.start, name: n.name) } })

    // MARK: - The text of the inputs, written here

    /// `-12.3456789` from -123456789.
    static func decimal(_ e7: Int) -> String {
        let sign = e7 < 0 ? "-" : ""
        let m = abs(e7)
        let fraction = String(m % 10_000_000)
        return sign + String(m / 10_000_000) + "." + String(repeating: "0", count: 7 - fraction.count) + fraction
    }

    /// The civil date of a day since 1970 (Howard Hinnant's days_from_civil, inverted).
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// `2024-05-01T08:00:00Z`.
    static func iso(_ seconds: Int) -> String { iso(Label(seconds)) }

    /// A time as a receiver or a file writes it: a day (since 1970) and a second of that day,
    /// which may be 86 400, a leap second (23:59:60).
    struct Label: Sendable, Hashable {
        var day: Int
        var second: Int
        init(day: Int, second: Int) {
            self.day = day
            self.second = second
        }
        init(_ seconds: Int) { self.init(day: seconds / 86_400, second: seconds % 86_400) }
        /// The hours, minutes and seconds: 23, 59, 60 for a leap second.
        var clock: (Int, Int, Int) {
            second >= 86_400 ? (23, 59, second - 86_340) : (second / 3600, second / 60 % 60, second % 60)
        }
    }

    static func iso(_ label: Label) -> String {
        let (y, mo, d) = civil(label.day)
        let (h, m, s) = label.clock
        return "\(y)-\(two(mo))-\(two(d))T\(two(h)):\(two(m)):\(two(s))Z"
    }

    static func times(_ fixes: [Fix], from start: Int) -> [Int] {
        var t = start
        return fixes.map {
            t += $0.gap
            return t
        }
    }

    static func gpx(_ fixes: [Fix], from start: Int, name: String = "generated") -> String {
        gpx(fixes, labels: times(fixes, from: start).map(Label.init), name: name)
    }

    static func gpx(_ fixes: [Fix], labels: [Label], name: String = "generated") -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="PropertyTests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>\(name)</name><trkseg>

            """
        for (fix, t) in zip(fixes, labels) {
            text += "<trkpt lat=\"\(decimal(fix.lat7))\" lon=\"\(decimal(fix.lon7))\">"
            text += "<ele>\(Double(fix.eleCm) / 100)</ele><time>\(iso(t))</time></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    /// RMC and GGA for each fix, with checksums. NMEA has two-digit years; the generated years
    /// are 1990 to 2079, the window NMEA readers take (gpsd's too).
    static func nmea(_ fixes: [Fix], from start: Int) -> String {
        nmea(fixes, labels: times(fixes, from: start).map(Label.init))
    }

    /// ``nmea(_:from:)`` with each fix's time as the receiver writes it. Without `rmc`, GGA alone,
    /// which has no date: the log's `# Date:` line (the first fix's day) dates it.
    static func nmea(_ fixes: [Fix], labels: [Label], rmc: Bool = true) -> String {
        func sentence(_ body: String) -> String {
            let sum = body.utf8.reduce(UInt8(0), ^)
            let hex = String(sum, radix: 16, uppercase: true)
            return "$" + body + "*" + (hex.count == 1 ? "0" + hex : hex) + "\r\n"
        }
        func angle(_ e7: Int, degreesWidth: Int, positive: String, negative: String) -> String {
            // ddmm.mmmmmm: minutes with six decimals (1e-7 degrees is 6e-6 minutes).
            let m = abs(e7)
            let degrees = m / 10_000_000
            let microMinutes = (m % 10_000_000) * 6  // minutes × 1e6
            let minutes = microMinutes / 1_000_000
            let fraction = String(microMinutes % 1_000_000)
            let d = String(degrees)
            return String(repeating: "0", count: degreesWidth - d.count) + d + two(minutes) + "."
                + String(repeating: "0", count: 6 - fraction.count) + fraction + "," + (e7 < 0 ? negative : positive)
        }
        var text = ""
        if !rmc, let first = labels.first {
            let (y, mo, d) = civil(first.day)
            text += "# Date: \(y)-\(two(mo))-\(two(d))\n"
        }
        for (fix, label) in zip(fixes, labels) {
            let (y, mo, d) = civil(label.day)
            let (h, m, s) = label.clock
            let time = "\(two(h))\(two(m))\(two(s)).00"
            let lat = angle(fix.lat7, degreesWidth: 2, positive: "N", negative: "S")
            let lon = angle(fix.lon7, degreesWidth: 3, positive: "E", negative: "W")
            let elevation = String(format: "%.2f", Double(fix.eleCm) / 100)
            if rmc { text += sentence("GPRMC,\(time),A,\(lat),\(lon),0.0,0.0,\(two(d))\(two(mo))\(two(y % 100)),,,A") }
            text += sentence("GPGGA,\(time),\(lat),\(lon),1,08,0.9,\(elevation),M,0.0,M,,")
        }
        return text
    }

    static func capture(_ fixes: [Fix], from start: Int) -> String {
        var text = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\n"
        for (fix, t) in zip(fixes, times(fixes, from: start)) {
            let time = iso(t).dropLast() + ".000Z"
            text += #"{"class":"TPV","device":"/dev/gen","mode":3,"time":"\#(time)","lat":\#(decimal(fix.lat7)),"#
            text += #""lon":\#(decimal(fix.lon7)),"altMSL":\#(Double(fix.eleCm) / 100)}"# + "\n"
        }
        return text
    }

    // MARK: - Reading

    /// Serves bytes in the given cuts, over and over.
    final class CutSource: ByteSource {
        let bytes: [UInt8]
        let cuts: [Int]
        var offset = 0
        var next = 0
        init(_ text: String, cuts: [Int]) {
            bytes = Array(text.utf8)
            self.cuts = cuts.isEmpty ? [Int.max] : cuts
        }
        func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
            let n = min(capacity, cuts[next % cuts.count], bytes.count - offset)
            next += 1
            guard n > 0 else { return 0 }
            bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + offset, count: n) }
            offset += n
            return n
        }
    }

    /// The track points a trace's reader gives.
    static func points(_ text: String, cuts: [Int] = []) throws -> [GPXPoint] {
        let reader = try TraceFormat.reader(
            for: CutSource(text, cuts: cuts), name: "generated", readers: .withGPSDCaptures)
        var points: [GPXPoint] = []
        try reader.readEvents { event in
            if case .trackPoint(let point) = event { points.append(point) }
        }
        return points
    }

    @Test func gpxGivesThePointsWrittenWhateverTheChunking() {
        var property = Self.chunked
        property.name = "gpx chunking"
        property.check { input in
            let (fixes, start, cuts) = (input.fixes, input.start, input.cuts)
            var problems = Problems()
            let text = Self.gpx(fixes, from: start)
            guard let whole = try? Self.points(text), let cut = try? Self.points(text, cuts: cuts) else {
                return ["the generated GPX was refused"]
            }
            problems.expect(cut == whole, "the same points whatever the chunking")
            problems.expect(whole.count == fixes.count)
            for (point, (fix, t)) in zip(whole, zip(fixes, Self.times(fixes, from: start))) {
                problems.expect(point.coordinate.latitude == Double(Self.decimal(fix.lat7)))
                problems.expect(point.coordinate.longitude == Double(Self.decimal(fix.lon7)))
                problems.expect(point.elevation == Double(fix.eleCm) / 100)
                problems.expect(
                    point.time == Date(timeIntervalSince1970: Double(t)), "the whole date of \(Self.iso(t))")
            }
            return problems.list
        }
    }

    @Test func nmeaGivesThePointsWrittenWhateverTheChunking() {
        var property = Self.chunked
        property.name = "nmea chunking"
        property.check { input in
            let (fixes, start, cuts) = (input.fixes, input.start, input.cuts)
            var problems = Problems()
            let text = Self.nmea(fixes, from: start)
            guard let whole = try? Self.points(text), let cut = try? Self.points(text, cuts: cuts) else {
                return ["the generated NMEA was refused"]
            }
            problems.expect(cut == whole, "the same points whatever the chunking")
            problems.expect(whole.count == fixes.count, "\(text)")
            for (point, (fix, t)) in zip(whole, zip(fixes, Self.times(fixes, from: start))) {
                problems.expect(abs(point.coordinate.latitude - Double(fix.lat7) / 1e7) < 1e-9)
                problems.expect(abs(point.coordinate.longitude - Double(fix.lon7) / 1e7) < 1e-9)
                problems.expect(
                    point.time == Date(timeIntervalSince1970: Double(t)), "the whole date of \(Self.iso(t))")
            }
            return problems.list
        }
    }

    /// A log of GGA alone, dated once by its `# Date:` line, keeps the whole date however long
    /// it runs: each epoch is dated from the one before, across every midnight (gpsd's midnight
    /// wrap). Its fixes once went back a day after midnight, or 12 hours after the first.
    @Test func nmeaDatedOnlyByItsDateLineKeepsTheWholeDate() {
        var property = Self.chunked
        property.name = "nmea date line"
        property.check { input in
            let (fixes, start, cuts) = (input.fixes, input.start, input.cuts)
            var problems = Problems()
            let text = Self.nmea(fixes, labels: Self.times(fixes, from: start).map(Label.init), rmc: false)
            guard let whole = try? Self.points(text), let cut = try? Self.points(text, cuts: cuts) else {
                return ["the generated NMEA was refused"]
            }
            problems.expect(cut == whole, "the same points whatever the chunking")
            problems.expect(whole.count == fixes.count, "\(text)")
            for (point, t) in zip(whole, Self.times(fixes, from: start)) {
                problems.expect(
                    point.time == Date(timeIntervalSince1970: Double(t)),
                    "the whole date of \(Self.iso(t)): \(point.time.map(ValueFormatting.iso8601) ?? "-")")
            }
            return problems.list
        }
    }

    @Test func gpsdCapturesGiveThePointsWrittenWhateverTheChunking() {
        var property = Self.chunked
        property.name = "capture chunking"
        property.check { input in
            // A fix more than an hour after the one before it, and alone there, does not fit the
            // receiver's clock and is left out, with a warning (FixCoalescer.aheadLimit): the
            // generated clock keeps to less.
            let fixes = input.fixes.map { fix in
                Fix(lat7: fix.lat7, lon7: fix.lon7, eleCm: fix.eleCm, gap: min(fix.gap, 3_000))
            }
            let (start, cuts) = (input.start, input.cuts)
            var problems = Problems()
            let text = Self.capture(fixes, from: start)
            guard let whole = try? Self.points(text), let cut = try? Self.points(text, cuts: cuts) else {
                return ["the generated capture was refused"]
            }
            problems.expect(cut == whole, "the same points whatever the chunking")
            problems.expect(
                whole.count == fixes.count,
                "\(whole.count) of \(fixes.count) points: \(whole.map(\.coordinate)) from\n\(text)")
            for (point, (fix, t)) in zip(whole, zip(fixes, Self.times(fixes, from: start))) {
                problems.expect(point.coordinate.latitude == Double(Self.decimal(fix.lat7)))
                problems.expect(point.coordinate.longitude == Double(Self.decimal(fix.lon7)))
                problems.expect(
                    point.time == Date(timeIntervalSince1970: Double(t)), "the whole date of \(Self.iso(t))")
            }
            return problems.list
        }
    }

    // MARK: - Writing

    /// Characters a user's name may hold: XML's and HTML's specials, quotes, white space of every
    /// kind XML keeps, a CDATA end, a script end, accents, a CJK character and an emoji.
    static let nameCharacters: [String] = [
        "a", "Z", "7", " ", "<", ">", "&", "\"", "'", "\t", "\n", "\r", "]]>", "</script>", "é", "ß", "東", "🚲", "\\",
        "{", "}", ",", "/", "*", "--", "&amp;",
    ]

    @Test func gpxWrittenAndReadBackKeepsEveryPointAndTheName() {
        var property = Self.named
        property.name = "gpx round trip"
        property.check { input in
            let (fixes, start, name) = (input.fixes, input.start, input.name)
            var problems = Problems()
            var track = GPXTrack(info: GPXPathInfo(name: name))
            track.segments = [
                GPXSegment(
                    points: zip(fixes, Self.times(fixes, from: start)).map { fix, t in
                        GPXPoint(
                            latitude: Double(fix.lat7) / 1e7, longitude: Double(fix.lon7) / 1e7,
                            elevation: Double(fix.eleCm) / 100, time: Date(timeIntervalSince1970: Double(t)))
                    })
            ]
            let document = GPXDocument(tracks: [track])
            guard let bytes = try? render({ try GPXWriter.write(document, to: $0) }),
                let back = try? parseDocument(String(decoding: bytes, as: UTF8.self))
            else {
                return ["GPX written could not be read back"]
            }
            problems.expect(back.tracks.first?.info.name == name, "the name survives exactly")
            problems.expect(back.tracks.first?.segments.first?.points == track.segments[0].points, "every point, whole")
            return problems.list
        }
    }

    @Test func geoJSONIsValidAcrossTheAntimeridianAndKeepsThePointsAndTheName() {
        var property = Self.named
        property.name = "geojson"
        property.check { input in
            let (fixes, start, name) = (input.fixes, input.start, input.name)
            var problems = Problems()
            var track = GPXTrack(info: GPXPathInfo(name: name))
            let points = zip(fixes, Self.times(fixes, from: start)).map { fix, t in
                GPXPoint(
                    latitude: Double(fix.lat7) / 1e7, longitude: Double(fix.lon7) / 1e7,
                    elevation: Double(fix.eleCm) / 100, time: Date(timeIntervalSince1970: Double(t)))
            }
            track.segments = [GPXSegment(points: points)]
            guard let bytes = try? render({ try GeoJSONWriter.write(GPXDocument(tracks: [track]), to: $0) }),
                let json = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any],
                let features = json["features"] as? [[String: Any]], let feature = features.first,
                let geometry = feature["geometry"] as? [String: Any]
            else {
                return ["the GeoJSON is not a feature collection"]
            }
            problems.expect(
                (feature["properties"] as? [String: Any])?["name"] as? String == name, "the name survives exactly")
            // RFC 7946 §3.1.9: a line that crosses the antimeridian is cut there, into a MultiLineString.
            let lines: [[[Double]]]
            switch geometry["type"] as? String {
            case "LineString": lines = [geometry["coordinates"] as? [[Double]] ?? []]
            case "MultiLineString": lines = geometry["coordinates"] as? [[[Double]]] ?? []
            case "Point": lines = [[geometry["coordinates"] as? [Double] ?? []]]
            default: lines = []
            }
            let positions = lines.flatMap { $0 }
            problems.expect(!positions.isEmpty, "\(geometry)")
            for line in lines {
                for (a, b) in zip(line, line.dropFirst()) {
                    problems.expect(abs(a[0] - b[0]) <= 180, "a line segment that goes the long way round: \(a) → \(b)")
                }
            }
            for position in positions {
                problems.expect(position.count >= 2 && abs(position[0]) <= 180 && abs(position[1]) <= 90, "\(position)")
            }
            // Every point is there, with its elevation (the cut adds points on ±180°).
            let written = Set(positions.map { [$0[0], $0[1], $0.count > 2 ? $0[2] : .nan] })
            for point in points {
                let lon = point.coordinate.longitude
                let candidates = lon == 180 || lon == -180 ? [180.0, -180.0] : [lon]
                problems.expect(
                    candidates.contains { written.contains([$0, point.coordinate.latitude, point.elevation ?? .nan]) },
                    "\(point.coordinate) is missing")
            }
            return problems.list
        }
    }
}

/// `serve`'s protocol over generated conversations: a request repeated at once changes nothing
/// and gets the same answer, and how the client's bytes are cut never changes what it gets.
@Suite struct ServeProtocolPropertyTests {
    static let context = GPSDServeSession.Context(
        device: GPSDServedDevice(path: "/tmp/walk.gpx", activated: Date(timeIntervalSince1970: 1_714_550_400)))

    static let requests = [
        "?WATCH={\"enable\":true,\"json\":true};", "?WATCH={\"enable\":true,\"nmea\":true};",
        "?WATCH={\"enable\":false};", "?WATCH={\"json\":false,\"raw\":1};", "?WATCH={\"device\":\"/tmp/walk.gpx\"};",
        "?WATCH={\"device\":\"/dev/other\"};", "?WATCH;", "?POLL;", "?DEVICES;", "?DEVICE;", "?VERSION;", "?BOGUS;",
        "?WATCH={\"enable\":true", "not a request",
    ]

    struct Conversation {
        var requests: [String]
        var cuts: [Int]
    }

    static let conversations = Property<Conversation>(
        name: "serve",
        generate: { r in
            Conversation(
                requests: r.array(1...12) { $0.pick(requests) }, cuts: r.array(1...6) { $0.int(1...40) })
        },
        shrink: { c in shrinkArray(c.requests).map { Conversation(requests: $0, cuts: c.cuts) } })

    @Test func aRepeatedRequestChangesNothing() {
        Self.conversations.check { conversation in
            var problems = Problems()
            var session = GPSDServeSession()
            for request in conversation.requests {
                let line = Array((request + "\n").utf8)
                let first = session.received(line, context: Self.context)
                let policy = session.policy
                let again = session.received(line, context: Self.context)
                problems.expect(session.policy == policy, "\(request) twice changed the policy")
                problems.expect(again.reply == first.reply, "\(request) twice got another answer")
                problems.expect(!again.startedWatching, "\(request) twice started watching twice")
                problems.expect(
                    again.close == first.close, "\(request) twice: close \(first.close) then \(again.close)")
            }
            return problems.list
        }
    }

    @Test func howTheBytesAreCutChangesNothing() {
        Self.conversations.check { conversation in
            let bytes = Array(conversation.requests.map { $0 + "\n" }.joined().utf8)
            var whole = GPSDServeSession()
            let once = whole.received(bytes, context: Self.context)
            var cut = GPSDServeSession()
            var reply: [UInt8] = []
            var started = 0
            var offset = 0
            var i = 0
            while offset < bytes.count {
                let n = min(conversation.cuts[i % conversation.cuts.count], bytes.count - offset)
                let output = cut.received(bytes[offset..<offset + n], context: Self.context)
                reply += output.reply
                if output.startedWatching { started += 1 }
                offset += n
                i += 1
            }
            var problems = Problems()
            problems.expect(reply == once.reply, "the replies differ")
            problems.expect(cut.policy == whole.policy, "the policies differ")
            // Watching starts at most as often as the requests, one by one, start it.
            var single = GPSDServeSession()
            let starts = conversation.requests.filter {
                single.received(Array(($0 + "\n").utf8), context: Self.context).startedWatching
            }.count
            problems.expect(started <= starts, "watching started \(started) times, not at most \(starts)")
            problems.expect(!once.startedWatching || started >= 1, "watching never started")
            return problems.list
        }
    }
}
