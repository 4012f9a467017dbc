import Foundation
import Testing

@testable import Waymark

/// The readers of the formats activity files come in (issue 29, item 2): TCX, KML, GeoJSON, FIT
/// and CSV. One generated activity is written in each format, in several of the layouts real
/// producers use, and read back through `TraceFormat` (told by content: every file is named
/// `trace.dat`), whole and in small pieces: what comes back must be what was written, point by
/// point, on the whole value (the date, the position as the same double, each sensor value).
struct ActivityReaderTests {
    // MARK: - The generated activity

    struct Point: Equatable, CustomStringConvertible {
        var lat7: Int
        var lon7: Int
        /// Elevation in decimetres; even, so that FIT's 0.2 m steps hold it exactly.
        var eleDm: Int?
        /// Unix milliseconds; whole seconds, as FIT and most watches keep them.
        var ms: Int64?
        var hr: Int?
        var cad: Int?
        var power: Int?
        var temp: Int?
        /// Speed in millimetres a second.
        var speedMm: Int?
        var name: String?

        var latitude: Double { Double(ReaderWriterPropertyTests.decimal(lat7))! }
        var longitude: Double { Double(ReaderWriterPropertyTests.decimal(lon7))! }
        var elevation: Double? { eleDm.map { Double($0) / 10 } }
        var description: String {
            "\(ReaderWriterPropertyTests.decimal(lat7)),\(ReaderWriterPropertyTests.decimal(lon7)) ele \(eleDm.map(String.init) ?? "-")dm t \(ms.map(String.init) ?? "-") hr \(hr.map(String.init) ?? "-") cad \(cad.map(String.init) ?? "-") W \(power.map(String.init) ?? "-") °C \(temp.map(String.init) ?? "-") mm/s \(speedMm.map(String.init) ?? "-") name \(name ?? "-")"
        }
    }

    struct Track: Equatable {
        var name: String
        var segments: [[Point]]
    }

    struct Activity: CustomStringConvertible {
        var tracks: [Track]
        var waypoints: [Point]
        var description: String {
            var s = ""
            for w in waypoints { s += "wpt \(w)\n" }
            for t in tracks {
                s += "trk \(t.name)\n"
                for seg in t.segments {
                    s += "  seg\n"
                    for p in seg { s += "    \(p)\n" }
                }
            }
            return s
        }
    }

    /// Names as people type them, with what each format must escape or quote.
    static func name(_ r: inout PropertyRandom) -> String {
        let parts = ["Run", "Lap", "Café", "東京", "a,b", "x;y", "\"q\"", "<&>", "🚲", "7"]
        return r.array(1...3) { $0.pick(parts) }.joined(separator: " ")
    }

    static func generate(_ r: inout PropertyRandom) -> Activity {
        // Anywhere, the antimeridian and the poles' neighbourhoods included.
        var lat7 = r.pick([r.int(-899_000_000...899_000_000), 515_000_000, -335_000_000, 895_000_000])
        var lon7 = r.pick([r.int(-1_799_000_000...1_799_000_000), 1_799_990_000, -1_799_990_000, 0])
        // Any day, across midnight and years.
        var ms = Int64(r.pick([r.int(0...2_000_000_000), 1_704_067_195, 1_719_791_990])) * 1000
        let sensors = (hr: r.bool(0.7), cad: r.bool(0.5), power: r.bool(0.4), temp: r.bool(0.4), speed: r.bool(0.5))
        let hasElevation = r.bool(0.8)
        func point(_ r: inout PropertyRandom) -> Point {
            lat7 = max(-899_999_999, min(899_999_999, lat7 + r.int(-2000...2000)))
            lon7 += r.int(-3000...3000)
            if lon7 > 1_800_000_000 { lon7 -= 3_600_000_000 }
            if lon7 <= -1_800_000_000 { lon7 += 3_600_000_000 }
            ms += Int64(r.int(1...30)) * 1000
            return Point(
                lat7: lat7, lon7: lon7, eleDm: hasElevation ? 2 * r.int(-200...20000) : nil, ms: ms,
                hr: sensors.hr ? r.int(40...220) : nil, cad: sensors.cad ? r.int(0...200) : nil,
                power: sensors.power ? r.int(0...1500) : nil, temp: sensors.temp ? r.int(-30...50) : nil,
                speedMm: sensors.speed ? r.int(0...30000) : nil)
        }
        // Each track's name is its own (a CSV's track column starts a track where it changes).
        let tracks = (0..<r.int(1...3)).map { k in
            Track(name: name(&r) + " \(k)", segments: r.array(1...3) { r in r.array(1...12) { point(&$0) } })
        }
        let waypoints = r.array(0...3) { r -> Point in
            var p = point(&r)
            p.name = name(&r)
            p.hr = nil
            p.cad = nil
            p.power = nil
            p.temp = nil
            p.speedMm = nil
            return p
        }
        return Activity(tracks: tracks, waypoints: waypoints)
    }

    // MARK: - Formats and what each keeps

    enum Layout: String, CaseIterable, Sendable {
        case tcx
        case kmlTracks = "kml gx:Track"
        case kmlLines = "kml LineString"
        case geoJSON = "geojson (Waymark's writer)"
        case geoJSONShuffled = "geojson (members in another order, as GPSBabel writes)"
        case geoJSONSequence = "geojson text sequence"
        case csvComma = "csv, comma, ISO times"
        case csvSemicolon = "csv, semicolon, date and time columns"
        case csvTab = "csv, tab, Unix milliseconds"
        case fit
        case fitEveryOption =
            "fit, big-endian, compressed timestamps, enhanced fields, a developer field, redefined midway, 12-byte header"

        var format: TraceFormat {
            switch self {
            case .tcx: .tcx
            case .kmlTracks, .kmlLines: .kml
            case .geoJSON, .geoJSONShuffled, .geoJSONSequence: .geoJSON
            case .csvComma, .csvSemicolon, .csvTab: .csv
            case .fit, .fitEveryOption: .fit
            }
        }
    }

    /// What a layout can hold of the activity: the expected reading.
    static func expected(_ a: Activity, _ layout: Layout) -> Activity {
        var a = a
        switch layout {
        case .tcx, .fit, .fitEveryOption:
            // No waypoints in an activity file; no temperature in TCX.
            a.waypoints = []
            if layout == .tcx { a = map(a) { $0.temp = nil } }
            if layout != .tcx {
                // One activity: FIT's records are one track; its segments stay segments when
                // the timer stops between them.
                a = fitTimes(a)
                a.tracks = [Track(name: "", segments: a.tracks.flatMap(\.segments))]
            }
            a = map(a) { $0.name = nil }
        case .kmlLines:
            a = map(a) { p in
                p.ms = p.name == nil ? nil : p.ms
                (p.hr, p.cad, p.power, p.temp, p.speedMm) = (nil, nil, nil, nil, nil)
            }
        case .csvComma, .csvSemicolon, .csvTab:
            break
        default:
            break
        }
        return a
    }

    static func map(_ a: Activity, _ body: (inout Point) -> Void) -> Activity {
        var a = a
        for i in a.waypoints.indices { body(&a.waypoints[i]) }
        for t in a.tracks.indices {
            for s in a.tracks[t].segments.indices {
                for p in a.tracks[t].segments[s].indices { body(&a.tracks[t].segments[s][p]) }
            }
        }
        return a
    }

    // MARK: - Writers

    static func iso(_ ms: Int64) -> String {
        ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    static func xml(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func tcx(_ a: Activity) -> String {
        var s = """
            <?xml version="1.0" encoding="UTF-8" standalone="no" ?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
            <Activities>\n
            """
        for t in a.tracks {
            let first = t.segments.first?.first?.ms ?? 0
            s += "<Activity Sport=\"Running\"><Id>\(xml(t.name))</Id>\n"
            s +=
                "<Lap StartTime=\"\(iso(first))\"><TotalTimeSeconds>1</TotalTimeSeconds><DistanceMeters>1</DistanceMeters>"
            for seg in t.segments {
                s += "<Track>\n"
                for p in seg {
                    s +=
                        "<Trackpoint><Time>\(iso(p.ms!))</Time><Position><LatitudeDegrees>\(ReaderWriterPropertyTests.decimal(p.lat7))</LatitudeDegrees><LongitudeDegrees>\(ReaderWriterPropertyTests.decimal(p.lon7))</LongitudeDegrees></Position>"
                    if let e = p.elevation { s += "<AltitudeMeters>\(e)</AltitudeMeters>" }
                    s += "<DistanceMeters>0</DistanceMeters>"
                    if let hr = p.hr { s += "<HeartRateBpm><Value>\(hr)</Value></HeartRateBpm>" }
                    if let c = p.cad { s += "<Cadence>\(c)</Cadence>" }
                    s += "<SensorState>Present</SensorState>"
                    if p.speedMm != nil || p.power != nil {
                        s += "<Extensions><ns3:TPX>"
                        if let v = p.speedMm { s += "<ns3:Speed>\(Double(v) / 1000)</ns3:Speed>" }
                        if let v = p.power { s += "<ns3:Watts>\(v)</ns3:Watts>" }
                        s += "</ns3:TPX></Extensions>"
                    }
                    s += "</Trackpoint>\n"
                }
                // A sensor-only trackpoint (no fix): left out with a warning.
                s +=
                    "<Trackpoint><Time>\(iso((seg.last?.ms ?? 0) + 500))</Time><HeartRateBpm><Value>99</Value></HeartRateBpm></Trackpoint>\n"
                s += "</Track>\n"
            }
            s += "</Lap><Creator xsi:type=\"Device_t\"><Name>Forerunner</Name></Creator></Activity>\n"
        }
        return s + "</Activities></TrainingCenterDatabase>\n"
    }

    static func kml(_ a: Activity, tracks gx: Bool) -> String {
        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment before the root -->
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document><name>doc</name>
            <Folder><name>Waypoints</name>\n
            """
        for w in a.waypoints {
            s +=
                "<Placemark><name>\(xml(w.name!))</name><TimeStamp><when>\(iso(w.ms!))</when></TimeStamp><Point><coordinates>\(ReaderWriterPropertyTests.decimal(w.lon7)),\(ReaderWriterPropertyTests.decimal(w.lat7))\(w.elevation.map { ",\($0)" } ?? "")</coordinates></Point></Placemark>\n"
        }
        s += "</Folder><Folder><name>Tracks</name>\n"
        for t in a.tracks {
            s += "<Placemark><name>\(xml(t.name))</name><styleUrl>#x</styleUrl>"
            if gx {
                s += "<gx:MultiTrack><altitudeMode>absolute</altitudeMode>\n"
                for seg in t.segments {
                    s += "<gx:Track>\n"
                    for p in seg { s += "<when>\(iso(p.ms!))</when>\n" }
                    for p in seg {
                        s +=
                            "<gx:coord>\(ReaderWriterPropertyTests.decimal(p.lon7)) \(ReaderWriterPropertyTests.decimal(p.lat7))\(p.elevation.map { " \($0)" } ?? "")</gx:coord>\n"
                    }
                    s += "<ExtendedData><SchemaData schemaUrl=\"#schema\">"
                    func array(_ name: String, _ values: [Int?]) {
                        guard values.contains(where: { $0 != nil }) else { return }
                        s += "<gx:SimpleArrayData name=\"\(name)\">"
                        for v in values { s += v.map { "<gx:value>\($0)</gx:value>" } ?? "<gx:value/>" }
                        s += "</gx:SimpleArrayData>\n"
                    }
                    array("heartrate", seg.map(\.hr))
                    array("cadence", seg.map(\.cad))
                    array("power", seg.map(\.power))
                    array("temperature", seg.map(\.temp))
                    if seg.contains(where: { $0.speedMm != nil }) {
                        s += "<gx:SimpleArrayData name=\"speed\">"
                        for p in seg {
                            s += p.speedMm.map { "<gx:value>\(Double($0) / 1000)</gx:value>" } ?? "<gx:value/>"
                        }
                        s += "</gx:SimpleArrayData>\n"
                    }
                    s += "</SchemaData></ExtendedData></gx:Track>\n"
                }
                s += "</gx:MultiTrack>"
            } else {
                s += "<MultiGeometry>"
                for seg in t.segments {
                    // Coordinates as editors write them: one tuple a line, or several, or a
                    // space after a comma.
                    s += "<LineString><tessellate>1</tessellate><coordinates>\n"
                    for (i, p) in seg.enumerated() {
                        let comma = i % 3 == 2 ? ", " : ","
                        s +=
                            "\(ReaderWriterPropertyTests.decimal(p.lon7))\(comma)\(ReaderWriterPropertyTests.decimal(p.lat7))"
                        if let e = p.elevation { s += "\(comma)\(e)" }
                        s += i % 2 == 0 ? "\n" : "  "
                    }
                    s += "</coordinates></LineString>\n"
                }
                s += "</MultiGeometry>"
            }
            s += "</Placemark>\n"
        }
        return s + "</Folder></Document></kml>\n"
    }

    /// The activity as GPX events, for Waymark's own writers.
    static func events(_ a: Activity) -> [GPXEvent] {
        func gpxPoint(_ p: Point) -> GPXPoint {
            var g = GPXPoint(latitude: p.latitude, longitude: p.longitude, elevation: p.elevation)
            g.time = p.ms.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            g.extensions.heartRate = p.hr.map(Double.init)
            g.extensions.cadence = p.cad.map(Double.init)
            g.extensions.power = p.power.map(Double.init)
            g.extensions.airTemperature = p.temp.map(Double.init)
            g.extensions.speed = p.speedMm.map { Double($0) / 1000 }
            g.name = p.name
            return g
        }
        var events: [GPXEvent] = [.header(GPXHeader())]
        for w in a.waypoints { events.append(.waypoint(gpxPoint(w))) }
        for t in a.tracks {
            events.append(.trackStart(GPXPathInfo(name: t.name)))
            for seg in t.segments {
                events.append(.segmentStart)
                for p in seg { events.append(.trackPoint(gpxPoint(p))) }
                events.append(.segmentEnd(GPXExtensions()))
            }
            events.append(.trackEnd(GPXPathInfo(name: t.name)))
        }
        return events
    }

    static func geoJSON(_ a: Activity) throws -> String {
        let data = try render { sink in
            let writer = GeoJSONWriter(sink: sink)
            for e in events(a) { try writer.write(e) }
            try writer.finish()
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The same GeoJSON with every object's members in reverse order (`type` last, properties
    /// before geometry, as GPSBabel's sorted keys give), pretty-printed by Foundation.
    static func geoJSONShuffled(_ a: Activity) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(try geoJSON(a).utf8))
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Each feature of Waymark's GeoJSON as one record of an RFC 8142 sequence.
    static func geoJSONSequence(_ a: Activity) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(try geoJSON(a).utf8)) as! [String: Any]
        var s = ""
        for feature in object["features"] as! [Any] {
            s += "\u{1E}" + String(decoding: try JSONSerialization.data(withJSONObject: feature), as: UTF8.self) + "\n"
        }
        return s
    }

    static func csvQuote(_ s: String, _ delimiter: String) -> String {
        s.contains(delimiter) || s.contains("\"") || s.contains("\n")
            ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }

    static func csv(_ a: Activity, _ layout: Layout, comment: Bool = true) -> String {
        let d = layout == .csvComma ? "," : layout == .csvSemicolon ? ";" : "\t"
        let header: [String] =
            switch layout {
            case .csvComma:
                [
                    "type", "Latitude", "Longitude", "Elevation (ft)", "time", "hr", "Cadence", "power", "temp",
                    "Speed (km/h)", "name", "track", "segment",
                ]
            case .csvSemicolon:
                [
                    "Type", "lat", "lon", "alt", "Date", "Time", "Heart Rate", "cad", "Watts", "Temperature", "speed",
                    "Name", "Track Name", "Seg",
                ]
            default:
                [
                    "kind", "position_lat", "position_long", "altitude", "timestamp_ms", "heartrate", "cadence",
                    "power", "atemp", "speed_kmh", "title", "trk", "segment_id",
                ]
            }
        var s = (comment ? "# exported for a test\n" : "") + header.joined(separator: d) + "\n"
        func row(_ p: Point, kind: String, track: String, segment: Int) {
            var fields = [kind, ReaderWriterPropertyTests.decimal(p.lat7), ReaderWriterPropertyTests.decimal(p.lon7)]
            if layout == .csvComma {
                fields.append(p.eleDm.map { "\(Double($0) / 10 / 0.3048)" } ?? "")
            } else {
                fields.append(p.elevation.map { "\($0)" } ?? "")
            }
            let t = p.ms!
            switch layout {
            case .csvComma: fields.append(iso(t))
            case .csvSemicolon:
                let text = iso(t)  // 2024-05-01T08:00:00.000Z
                fields.append(String(text.prefix(10)).replacingOccurrences(of: "-", with: "/"))
                fields.append(String(text.dropFirst(11).prefix(8)))
            default: fields.append(String(t))
            }
            fields += [p.hr, p.cad, p.power, p.temp].map { $0.map(String.init) ?? "" }
            if layout == .csvSemicolon {
                fields.append(p.speedMm.map { "\(Double($0) / 1000)" } ?? "")
            } else {
                fields.append(p.speedMm.map { "\(Double($0) * 3.6 / 1000)" } ?? "")
            }
            fields += [p.name ?? "", track, String(segment)]
            s += fields.map { csvQuote($0, d) }.joined(separator: d) + "\n"
        }
        // Waypoint rows among the first track's rows, as a logger that marks places writes them.
        var waypoints = a.waypoints[...]
        for t in a.tracks {
            for (k, seg) in t.segments.enumerated() {
                for p in seg {
                    row(p, kind: "T", track: t.name, segment: k)
                    if let w = waypoints.popFirst() { row(w, kind: "W", track: t.name, segment: k) }
                }
            }
        }
        for w in waypoints { row(w, kind: "W", track: "", segment: 0) }
        return s
    }

    static func bytes(_ a: Activity, _ layout: Layout) throws -> [UInt8] {
        switch layout {
        case .tcx: return Array(tcx(a).utf8)
        case .kmlTracks: return Array(kml(a, tracks: true).utf8)
        case .kmlLines: return Array(kml(a, tracks: false).utf8)
        case .geoJSON: return Array(try geoJSON(a).utf8)
        case .geoJSONShuffled: return Array(try geoJSONShuffled(a).utf8)
        case .geoJSONSequence: return Array(try geoJSONSequence(a).utf8)
        case .csvComma, .csvSemicolon, .csvTab: return Array(csv(a, layout).utf8)
        case .fit: return fit(fitTimes(a))
        case .fitEveryOption:
            var encoder = FITEncoder()
            encoder.bigEndian = true
            encoder.compressedTimestamps = true
            encoder.enhancedFields = true
            encoder.developerField = true
            encoder.redefinesRecordsMidway = true
            encoder.headerSize = 12
            return encoder.activity(segments: records(fitTimes(a)).flatMap { $0 })
        }
    }

    /// The activity moved by whole days to after 1998-07-04, if it starts before: FIT's times
    /// below 0x10000000 seconds (from 1989-12-31) are a device's time since power-on, not dates.
    static func fitTimes(_ a: Activity) -> Activity {
        let first = a.tracks.flatMap { $0.segments.flatMap { $0 } }.compactMap(\.ms).min() ?? 0
        let earliest: Int64 = (631_065_600 + 0x1000_0000 + 86_400) * 1000
        guard first < earliest else { return a }
        let days = (earliest - first) / 86_400_000 + 1
        return map(a) { p in p.ms = p.ms.map { $0 + days * 86_400_000 } }
    }

    static func fit(_ a: Activity) -> [UInt8] { FITEncoder.activity(records(a)) }

    static func records(_ a: Activity) -> [[[FITEncoder.Record]]] {
        a.tracks.map { t in
            t.segments.map { seg in
                seg.map { p in
                    FITEncoder.Record(
                        unixSeconds: Int(p.ms! / 1000), latitude: p.latitude, longitude: p.longitude,
                        altitude: p.elevation, heartRate: p.hr, cadence: p.cad, power: p.power,
                        temperature: p.temp, speed: p.speedMm.map { Double($0) / 1000 })
                }
            }
        }
    }

    // MARK: - Reading back

    /// What a reader gave, as the generated model, with the warnings.
    static func read(_ bytes: [UInt8], pieceSize: Int) throws -> (Activity, TraceFormat, [String]) {
        let reader = try TraceFormat.reader(
            for: MemoryByteSource(bytes, pieceSize: pieceSize), name: "trace.dat", readers: TraceReaders())
        let format: TraceFormat =
            switch reader {
            case is TCXReader: .tcx
            case is KMLReader: .kml
            case is GeoJSONReader: .geoJSON
            case is FITReader: .fit
            case is CSVReader: .csv
            case is NMEAReader: .nmea
            default: .gpx
            }
        var activity = Activity(tracks: [], waypoints: [])
        var warnings: [String] = []
        func point(_ g: GPXPoint) -> Point {
            func e7(_ v: Double) -> Int { Int((v * 1e7).rounded()) }
            return Point(
                lat7: e7(g.coordinate.latitude), lon7: e7(g.coordinate.longitude),
                eleDm: g.elevation.map { Int(($0 * 10).rounded()) },
                ms: g.time.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) },
                hr: g.extensions.heartRate.map { Int($0.rounded()) },
                cad: g.extensions.cadence.map { Int($0.rounded()) },
                power: g.extensions.power.map { Int($0.rounded()) },
                temp: g.extensions.airTemperature.map { Int($0.rounded()) },
                speedMm: (g.extensions.speed ?? g.speed).map { Int(($0 * 1000).rounded()) }, name: g.name)
        }
        var events: [GPXEvent] = []
        try reader.readEvents { event in
            events.append(event)
            switch event {
            case .waypoint(let p): activity.waypoints.append(point(p))
            case .trackStart(let info): activity.tracks.append(Track(name: info.name ?? "", segments: []))
            case .segmentStart: activity.tracks[activity.tracks.count - 1].segments.append([])
            case .trackPoint(let p):
                let t = activity.tracks.count - 1
                activity.tracks[t].segments[activity.tracks[t].segments.count - 1].append(point(p))
            case .warning(let w): warnings.append(w.description)
            default: break
            }
        }
        warnings += shapeProblems(events).map { "SHAPE: " + $0 }
        return (activity, format, warnings)
    }

    /// What is out of GPX's shape in `events`: the header first; waypoints outside paths; routes
    /// of route points; tracks of non-empty segments of track points.
    static func shapeProblems(_ events: [GPXEvent]) -> [String] {
        enum Place { case start, document, route, track, segment }
        var place = Place.start
        var points = 0
        var problems: [String] = []
        for event in events {
            switch (place, event) {
            case (.start, .header): place = .document
            case (_, .warning): break
            case (.document, .waypoint), (.document, .metadata), (.document, .documentExtensions): break
            case (.document, .routeStart): place = .route
            case (.route, .routePoint): break
            case (.route, .routeEnd): place = .document
            case (.document, .trackStart): place = .track
            case (.track, .segmentStart):
                place = .segment
                points = 0
            case (.segment, .trackPoint): points += 1
            case (.segment, .segmentEnd):
                if points == 0 { problems.append("an empty segment") }
                place = .track
            case (.track, .trackEnd): place = .document
            default: problems.append("\(String(describing: event).prefix(60)) in \(place)")
            }
        }
        if place != .document { problems.append("the events end in \(place)") }
        return problems
    }

    /// Compares what was read with what the layout holds of the activity, on every field.
    static func compare(_ found: Activity, _ expected: Activity, exactPositions: Bool = true) -> [String] {
        var problems = Problems()
        problems.expect(
            found.waypoints.count == expected.waypoints.count,
            "\(found.waypoints.count) waypoints, expected \(expected.waypoints.count)")
        for (f, e) in zip(found.waypoints, expected.waypoints) {
            problems.expect(same(f, e, exactPositions), "waypoint \(f)\n  expected \(e)")
        }
        problems.expect(
            found.tracks.count == expected.tracks.count,
            "\(found.tracks.count) tracks, expected \(expected.tracks.count)")
        for (ft, et) in zip(found.tracks, expected.tracks) {
            problems.expect(ft.name == et.name, "track named '\(ft.name)', expected '\(et.name)'")
            problems.expect(
                ft.segments.map(\.count) == et.segments.map(\.count),
                "segments of \(ft.segments.map(\.count)) points, expected \(et.segments.map(\.count))")
            for (fs, es) in zip(ft.segments, et.segments) {
                for (f, e) in zip(fs, es) { problems.expect(same(f, e, exactPositions), "point \(f)\n  expected \(e)") }
            }
        }
        return problems.list
    }

    static func same(_ f: Point, _ e: Point, _ exact: Bool) -> Bool {
        if exact { return f == e }
        // FIT keeps positions in semicircles (8.4e-8 degrees): within one of them.
        var g = f
        g.lat7 = e.lat7
        g.lon7 = e.lon7
        return g == e && abs(f.lat7 - e.lat7) <= 1
            && (abs(f.lon7 - e.lon7) <= 1 || abs(abs(f.lon7 - e.lon7) - 3_600_000_000) <= 1)
    }

    static let property = Property<Activity>(
        name: "activity formats", count: 25, generate: { generate(&$0) }, describe: { "\($0)" })

    @Test(arguments: Layout.allCases)
    func eachFormatReadsWhatWasWrittenWhateverTheChunking(_ layout: Layout) {
        Self.property.check { activity in
            var problems = Problems()
            do {
                let bytes = try Self.bytes(activity, layout)
                let expected = Self.expected(activity, layout)
                let (whole, format, warnings) = try Self.read(bytes, pieceSize: .max)
                problems.expect(format == layout.format, "told as \(format), written as \(layout.format)")
                problems.expect(
                    !warnings.contains { $0.hasPrefix("SHAPE") }, "\(warnings.filter { $0.hasPrefix("SHAPE") })")
                problems.list += Self.compare(whole, expected, exactPositions: layout.format != .fit)
                if layout == .tcx {
                    // Reported once, at the first of them (each track ends with one).
                    let lines = String(decoding: bytes, as: UTF8.self).split(
                        separator: "\n", omittingEmptySubsequences: false)
                    let first =
                        (lines.firstIndex { $0.contains("<Value>99</Value>") && !$0.contains("<Position>") } ?? -1) + 1
                    let count = lines.filter { $0.contains("<Value>99</Value>") && !$0.contains("<Position>") }.count
                    problems.expect(
                        warnings.filter { $0.contains("have no <Position>") }
                            == [
                                "trace.dat:\(first):1: warning: \(count) trackpoint(s) have no <Position> (sensor values only, the first here); GPX has no point without a position, so they are left out"
                            ],
                        "the sensor-only trackpoints: \(warnings)")
                }
                for size in [1, 3, 7, 64] {
                    let (pieces, _, _) = try Self.read(bytes, pieceSize: size)
                    problems.expect(
                        Self.compare(pieces, whole, exactPositions: true).isEmpty,
                        "read in \(size)-byte pieces, it differs")
                }
                if !problems.list.isEmpty { problems.list.append(String(decoding: bytes.prefix(3000), as: UTF8.self)) }
            } catch {
                problems.expect(false, "\(layout): \(error)")
            }
            return problems.list
        }
    }
}

/// GPX → GeoJSON → GPX on real files (the fixtures, the bundled traces, and the shared corpus of
/// third-party GPX when it is beside the project): every waypoint, route point and track point
/// comes back, with its position (to GeoJSON's seven decimals), elevation, time (to the
/// millisecond) and sensor values (to the decimals GeoJSON writes), in its route, track and
/// segment (issue 29, item 2's round trip).
@Suite struct GeoJSONRoundTripTests {
    static func document(_ reader: any TraceEventReader) throws -> GPXDocument {
        let builder = GPXDocumentBuilder()
        try reader.readEvents { builder.handle($0) }
        return builder.document
    }

    static func sameish(_ a: Double?, _ b: Double?, _ tolerance: Double) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let x?, let y?): abs(x - y) <= tolerance
        default: false
        }
    }

    /// What differs between a point and its round trip.
    static func differences(_ a: GPXPoint, _ b: GPXPoint) -> [String] {
        var out: [String] = []
        if abs(a.coordinate.latitude - b.coordinate.latitude) > 5.1e-8
            || abs(a.coordinate.longitude - b.coordinate.longitude) > 5.1e-8
        {
            // Longitude 180 comes back as -180: the same meridian.
            if !(abs(abs(a.coordinate.longitude) - 180) < 1e-7 && abs(abs(b.coordinate.longitude) - 180) < 1e-7) {
                out.append("position \(a.coordinate) → \(b.coordinate)")
            }
        }
        if !sameish(a.elevation, b.elevation, 0.0005 + abs(a.elevation ?? 0) * 1e-12) {
            out.append("elevation \(String(describing: a.elevation)) → \(String(describing: b.elevation))")
        }
        let ta = a.time.map { ($0.timeIntervalSince1970 * 1000).rounded() }
        let tb = b.time.map { ($0.timeIntervalSince1970 * 1000).rounded() }
        if ta != tb { out.append("time \(String(describing: a.time)) → \(String(describing: b.time))") }
        let e = a.extensions
        let f = b.extensions
        let values: [(String, Double?, Double?, Double)] = [
            ("hr", e.heartRate, f.heartRate, 0.5), ("cad", e.cadence, f.cadence, 0.5),
            ("atemp", e.airTemperature, f.airTemperature, 0.005), ("power", e.power, f.power, 0.05),
        ]
        for (name, x, y, tolerance) in values where !sameish(x, y, tolerance) {
            out.append("\(name) \(String(describing: x)) → \(String(describing: y))")
        }
        return out
    }

    @Test func everyPointOfRealFilesComesBack() throws {
        var checked = 0
        for path in Paths.projectGPXFiles(corpus: true) {
            guard
                let original = try? Self.document(
                    GPXReader(
                        source: try FileByteSource(path: path), name: path,
                        options: GPXReadOptions(lenient: true, keepsExtensionElements: false)))
            else { continue }
            let json = try render { sink in
                let writer = GeoJSONWriter(sink: sink)
                try writer.write(.header(original.header))
                for w in original.waypoints { try writer.write(.waypoint(w)) }
                for r in original.routes {
                    try writer.write(.routeStart(r.info))
                    for p in r.points { try writer.write(.routePoint(p)) }
                    try writer.write(.routeEnd(r.info))
                }
                for t in original.tracks {
                    try writer.write(.trackStart(t.info))
                    for s in t.segments {
                        try writer.write(.segmentStart)
                        for p in s.points { try writer.write(.trackPoint(p)) }
                        try writer.write(.segmentEnd(s.extensions))
                    }
                    try writer.write(.trackEnd(t.info))
                }
                try writer.finish()
            }
            let back = try Self.document(
                GeoJSONReader(source: MemoryByteSource(Array(json)), name: path + ".geojson"))
            checked += 1
            var problems: [String] = []
            if original.waypoints.count != back.waypoints.count {
                problems.append("\(original.waypoints.count) waypoints → \(back.waypoints.count)")
            }
            for (a, b) in zip(original.waypoints, back.waypoints) {
                problems += Self.differences(a, b)
                if a.name != b.name {
                    problems.append("waypoint name \(String(describing: a.name)) → \(String(describing: b.name))")
                }
            }
            let routes = original.routes.filter { !$0.points.isEmpty }
            if routes.map(\.points.count) != back.routes.map(\.points.count) {
                problems.append("routes of \(routes.map(\.points.count)) → \(back.routes.map(\.points.count))")
            }
            for (a, b) in zip(routes.flatMap(\.points), back.routes.flatMap(\.points)) {
                problems += Self.differences(a, b)
            }
            // Tracks: the writer leaves out empty segments, and tracks with none. A segment of
            // two points alike in every value reads as one point: that is how a one-point segment
            // is written (RFC 7946 needs two positions a line), so a fix written twice (OsmAnd's
            // empty_ele.gpx) comes back once.
            func count(_ s: GPXSegment) -> Int {
                s.points.count == 2 && s.points[0] == s.points[1] ? 1 : s.points.count
            }
            let tracks = original.tracks.map { $0.segments.map(count).filter { $0 > 0 } }.filter { !$0.isEmpty }
            let backTracks = back.tracks.map { $0.segments.map(\.points.count).filter { $0 > 0 } }.filter {
                !$0.isEmpty
            }
            if tracks != backTracks { problems.append("tracks of segments \(tracks) → \(backTracks)") }
            let points = original.tracks.flatMap { $0.segments.flatMap { Array($0.points.prefix(count($0))) } }
            let backPoints = back.tracks.flatMap { $0.segments.flatMap(\.points) }
            for (a, b) in zip(points, backPoints) { problems += Self.differences(a, b) }
            #expect(problems.isEmpty, "\(path):\n\(problems.prefix(5).joined(separator: "\n"))")
        }
        #expect(checked >= 20, "only \(checked) files read")
    }
}
