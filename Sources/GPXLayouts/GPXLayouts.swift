// The point layouts of the GPX files people have, generated at any size: the benchmark measures
// the reader on each, and the tests check that the reader's fast path reads each exactly as its
// general path does. Each layout copies the bytes a real writer produces (element order,
// indentation, line ends, number formats, namespaces), with values from a seeded random walk
// and the irregularities real logs have (a fix that drops to 2D, a point without a value).

import Foundation
import Waymark

/// A GPX point layout of a common writer.
public enum GPXLayout: String, CaseIterable, Sendable {
    /// gpsd's gpxlogger (3.22): one element per line, `fix`, `sat` and the three DOPs.
    case gpxlogger
    /// Garmin Connect: coordinates and elevations as the exact decimals of the device's binary
    /// values (30 digits), `ns3:` TrackPointExtension with atemp, hr and cad.
    case garminConnect
    /// Strava: 7-decimal coordinates, `gpxtpx:` TrackPointExtension, an unprefixed `<power>`.
    case strava
    /// OsmAnd: `<hdop>`, and `osmand:speed` and `osmand:heading` extensions.
    case osmand
    /// GPSLogger for Android: GPX 1.0, a whole point on one line with course, speed,
    /// geoidheight, src, sat and the DOPs.
    case gpslogger
    /// Latitude, longitude and time only, indented with tabs, CRLF line ends.
    case minimalTabsCRLF
    /// Apple Health's export: `lon` before `lat`, times with a zone offset, unprefixed
    /// `<speed>`, `<course>`, `<hAcc>` and `<vAcc>`.
    case appleHealth
    /// A Garmin-style walk with its fix's quality, the shape of the replay engine's target walk:
    /// 9-decimal coordinates, `<sat>` and `<hdop>` on every point, `gpxtpx:` TrackPointExtension
    /// with atemp, hr and cad.
    case garminWithFixQuality

    /// How the layout is named in the benchmark's table.
    public var title: String {
        switch self {
        case .gpxlogger: return "gpxlogger"
        case .garminConnect: return "Garmin Connect"
        case .strava: return "Strava"
        case .osmand: return "OsmAnd"
        case .gpslogger: return "GPSLogger 1.0"
        case .minimalTabsCRLF: return "tabs+CRLF"
        case .appleHealth: return "Apple Health"
        case .garminWithFixQuality: return "Garmin, sat+hdop"
        }
    }

    /// Writes a whole file through `put`, about `bytes` long (at least one point), from the
    /// walk seeded by `seed`. A new segment starts every `segmentLength` points.
    /// Returns the number of points.
    @discardableResult
    public func generate(bytes: Int, seed: UInt64 = 1, segmentLength: Int = 3600, _ put: (String) -> Void) -> Int {
        var written = 0
        func emit(_ s: String) {
            put(s)
            written += s.utf8.count
        }
        emit(header)
        let footer = self.footer
        var walk = Walk(seed: seed)
        var i = 0
        repeat {
            emit(point(&walk))
            walk.step()
            i += 1
            if i % segmentLength == 0 {
                walk.pause()
                emit(segmentBreak)
            }
        } while written + footer.utf8.count < bytes
        emit(footer)
        return i
    }

    /// A whole file of about `bytes` bytes, as a string (for tests).
    public func document(bytes: Int, seed: UInt64 = 1, segmentLength: Int = 3600) -> String {
        var text = ""
        generate(bytes: bytes, seed: seed, segmentLength: segmentLength) { text += $0 }
        return text
    }

    private var header: String {
        switch self {
        case .gpxlogger:
            return """
                <?xml version="1.0" encoding="utf-8"?>
                <gpx version="1.1" creator="GPSD 3.22 - https://gpsd.gitlab.io/gpsd/"
                        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                        xmlns="http://www.topografix.com/GPX/1/1"
                        xsi:schemaLocation="http://www.topografix.com/GPX/1/1
                        http://www.topografix.com/GPX/1/1/gpx.xsd">
                 <metadata>
                  <time>2024-05-01T08:00:00.000Z</time>
                 </metadata>
                 <trk>
                  <src>GPSD 3.22</src>
                  <trkseg>

                """
        case .garminConnect:
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx creator="Garmin Connect" version="1.1"
                  xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/11.xsd"
                  xmlns="http://www.topografix.com/GPX/1/1"
                  xmlns:ns3="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
                  xmlns:ns2="http://www.garmin.com/xmlschemas/GpxExtensions/v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
                  <metadata>
                    <link href="connect.garmin.com">
                      <text>Garmin Connect</text>
                    </link>
                    <time>2024-05-01T08:00:00.000Z</time>
                  </metadata>
                  <trk>
                    <name>Zürich Cycling</name>
                    <type>cycling</type>
                    <trkseg>

                """
        case .strava:
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx creator="StravaGPX" version="1.1" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
                xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
                http://www.garmin.com/xmlschemas/GpxExtensions/v3 http://www.garmin.com/xmlschemas/GpxExtensionsv3.xsd \
                http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd" \
                xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
                xmlns:gpxx="http://www.garmin.com/xmlschemas/GpxExtensions/v3">
                 <metadata>
                  <time>2024-05-01T08:00:00Z</time>
                 </metadata>
                 <trk>
                  <name>Morning Ride</name>
                  <type>1</type>
                  <trkseg>

                """
        case .osmand:
            return """
                <?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
                <gpx version="1.1" creator="OsmAnd~ 4.6.7" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:osmand="https://osmand.net" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
                xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
                  <metadata>
                    <name>2024-05-01_08-00_Wed</name>
                  </metadata>
                  <trk>
                    <trkseg>

                """
        case .gpslogger:
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                + "<gpx version=\"1.0\" creator=\"GPSLogger 131 - http://gpslogger.mendhak.com/\" "
                + "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns=\"http://www.topografix.com/GPX/1/0\" "
                + "xsi:schemaLocation=\"http://www.topografix.com/GPX/1/0 http://www.topografix.com/GPX/1/0/gpx.xsd\">"
                + "<time>2024-05-01T08:00:00.000Z</time><trk><name>20240501</name><trkseg>"
        case .minimalTabsCRLF:
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n"
                + "<gpx version=\"1.1\" creator=\"Logger\" xmlns=\"http://www.topografix.com/GPX/1/1\">\r\n"
                + "\t<trk>\r\n\t\t<trkseg>\r\n"
        case .appleHealth:
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
                xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
                  <metadata>
                    <time>2024-05-01T10:00:00-07:00</time>
                  </metadata>
                  <trk>
                    <name>Route 2024-05-01 8:00am</name>
                    <trkseg>

                """
        case .garminWithFixQuality:
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx creator="Garmin Edge 830" version="1.1" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
                xmlns:gpxx="http://www.garmin.com/xmlschemas/GpxExtensions/v3" \
                xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
                xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/11.xsd">
                  <metadata>
                    <time>2024-05-01T08:00:00Z</time>
                  </metadata>
                  <trk>
                    <name>Morning walk</name>
                    <type>walking</type>
                    <trkseg>

                """
        }
    }

    private var segmentBreak: String {
        switch self {
        case .gpxlogger: return "  </trkseg>\n  <trkseg>\n"
        case .garminConnect, .garminWithFixQuality: return "    </trkseg>\n    <trkseg>\n"
        case .strava: return "  </trkseg>\n  <trkseg>\n"
        case .osmand: return "    </trkseg>\n    <trkseg>\n"
        case .gpslogger: return "</trkseg><trkseg>"
        case .minimalTabsCRLF: return "\t\t</trkseg>\r\n\t\t<trkseg>\r\n"
        case .appleHealth: return "    </trkseg>\n    <trkseg>\n"
        }
    }

    private var footer: String {
        switch self {
        case .gpxlogger: return "  </trkseg>\n </trk>\n</gpx>\n"
        case .garminConnect, .garminWithFixQuality: return "    </trkseg>\n  </trk>\n</gpx>\n"
        case .strava: return "  </trkseg>\n </trk>\n</gpx>\n"
        case .osmand: return "    </trkseg>\n  </trk>\n</gpx>\n"
        case .gpslogger: return "</trkseg></trk></gpx>"
        case .minimalTabsCRLF: return "\t\t</trkseg>\r\n\t</trk>\r\n</gpx>\r\n"
        case .appleHealth: return "    </trkseg>\n  </trk>\n</gpx>\n"
        }
    }

    private func point(_ w: inout Walk) -> String {
        switch self {
        case .gpxlogger:
            // gpxlogger: "%f" coordinates, "%.4f" height, ".000Z" times; no <sat> and <fix>2d
            // while the fix is 2D, and a point now and then without DOPs.
            var s = "   <trkpt lat=\"\(w.fixed(w.lat, 6))\" lon=\"\(w.fixed(w.lon, 6))\">\n"
            if !w.is2D { s += "    <ele>\(w.fixed(w.ele, 4))</ele>\n" }
            s += "    <time>\(w.time(fraction: ".000"))</time>\n"
            s += w.is2D ? "    <fix>2d</fix>\n" : "    <fix>3d</fix>\n"
            if !w.is2D { s += "    <sat>\(w.satellites)</sat>\n" }
            if !w.rare(50) {
                s += "    <hdop>\(w.fixed(w.hdop, 1))</hdop>\n    <vdop>\(w.fixed(w.hdop * 1.4, 1))</vdop>\n"
                s += "    <pdop>\(w.fixed(w.hdop * 1.7, 1))</pdop>\n"
            }
            return s + "   </trkpt>\n"
        case .garminConnect:
            // The device stores positions in semicircles and heights as floats; Connect writes
            // their exact decimal expansions.
            let lat = w.semicircles(w.lat)
            let lon = w.semicircles(w.lon)
            let ele = Double(Float(w.ele))
            var s = "      <trkpt lat=\"\(Walk.exact(lat))\" lon=\"\(Walk.exact(lon))\">\n"
            s += "        <ele>\(Walk.exact(ele))</ele>\n"
            s += "        <time>\(w.time(fraction: ".000"))</time>\n"
            s += "        <extensions>\n          <ns3:TrackPointExtension>\n"
            s += "            <ns3:atemp>\(w.fixed(w.temperature, 1))</ns3:atemp>\n"
            s += "            <ns3:hr>\(w.heartRate)</ns3:hr>\n"
            s += "            <ns3:cad>\(w.cadence)</ns3:cad>\n"
            s += "          </ns3:TrackPointExtension>\n        </extensions>\n      </trkpt>\n"
            return s
        case .garminWithFixQuality:
            var s = "      <trkpt lat=\"\(w.fixed(w.lat, 9))\" lon=\"\(w.fixed(w.lon, 9))\">\n"
            s += "        <ele>\(w.fixed(w.ele, 1))</ele>\n"
            s += "        <time>\(w.time(fraction: ""))</time>\n"
            s += "        <sat>\(w.satellites)</sat>\n        <hdop>\(w.fixed(w.hdop, 1))</hdop>\n"
            s += "        <extensions>\n          <gpxtpx:TrackPointExtension>\n"
            s += "            <gpxtpx:atemp>\(w.fixed(w.temperature, 1))</gpxtpx:atemp>\n"
            s += "            <gpxtpx:hr>\(w.heartRate)</gpxtpx:hr>\n"
            s += "            <gpxtpx:cad>\(w.cadence)</gpxtpx:cad>\n"
            s += "          </gpxtpx:TrackPointExtension>\n        </extensions>\n      </trkpt>\n"
            return s
        case .strava:
            var s = "   <trkpt lat=\"\(w.fixed(w.lat, 7))\" lon=\"\(w.fixed(w.lon, 7))\">\n"
            s += "    <ele>\(w.fixed(w.ele, 1))</ele>\n"
            s += "    <time>\(w.time(fraction: ""))</time>\n"
            s += "    <extensions>\n     <power>\(w.power)</power>\n     <gpxtpx:TrackPointExtension>\n"
            s += "      <gpxtpx:atemp>\(Int(w.temperature))</gpxtpx:atemp>\n"
            s += "      <gpxtpx:hr>\(w.heartRate)</gpxtpx:hr>\n"
            s += "      <gpxtpx:cad>\(w.cadence)</gpxtpx:cad>\n"
            s += "     </gpxtpx:TrackPointExtension>\n    </extensions>\n   </trkpt>\n"
            return s
        case .osmand:
            var s = "      <trkpt lat=\"\(w.fixed(w.lat, 7))\" lon=\"\(w.fixed(w.lon, 7))\">\n"
            s += "        <ele>\(w.fixed(w.ele, 1))</ele>\n"
            s += "        <time>\(w.time(fraction: ""))</time>\n"
            s += "        <hdop>\(w.fixed(w.hdop * 3, 1))</hdop>\n"
            s += "        <extensions>\n          <osmand:speed>\(w.fixed(w.speed, 1))</osmand:speed>\n"
            s += "          <osmand:heading>\(Int(w.course))</osmand:heading>\n"
            s += "        </extensions>\n      </trkpt>\n"
            return s
        case .gpslogger:
            var s = "<trkpt lat=\"\(w.shortest(w.lat, 8))\" lon=\"\(w.shortest(w.lon, 8))\">"
            s += "<ele>\(w.shortest(w.ele, 1))</ele><time>\(w.time(fraction: ".000"))</time>"
            s += "<course>\(w.shortest(w.course, 1))</course><speed>\(w.shortest(w.speed, 2))</speed>"
            s += "<geoidheight>47.4</geoidheight><src>gps</src><sat>\(w.satellites)</sat>"
            s += "<hdop>\(w.shortest(w.hdop, 1))</hdop><vdop>\(w.shortest(w.hdop * 1.4, 1))</vdop>"
            s += "<pdop>\(w.shortest(w.hdop * 1.7, 1))</pdop></trkpt>"
            return s
        case .minimalTabsCRLF:
            return "\t\t\t<trkpt lat=\"\(w.fixed(w.lat, 6))\" lon=\"\(w.fixed(w.lon, 6))\">\r\n"
                + "\t\t\t\t<time>\(w.time(fraction: ""))</time>\r\n\t\t\t</trkpt>\r\n"
        case .appleHealth:
            return "      <trkpt lon=\"\(w.fixed(w.lon, 6))\" lat=\"\(w.fixed(w.lat, 6))\">"
                + "<ele>\(w.fixed(w.ele, 6))</ele><time>\(w.time(offsetHours: -7))</time>"
                + "<extensions><speed>\(w.fixed(w.speed, 6))</speed><course>\(w.fixed(w.course, 6))</course>"
                + "<hAcc>\(w.fixed(w.hdop * 2.5, 6))</hAcc><vAcc>\(w.fixed(w.hdop * 1.8, 6))</vAcc></extensions></trkpt>\n"
        }
    }
}

/// A seeded generator (SplitMix64), so that every run writes the same bytes.
public struct SplitMix64 {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// A walk through Zürich at 1 Hz: each step changes heading, height and the sensors a little.
struct Walk {
    var rng: SplitMix64
    var lat = 47.3769
    var lon = 8.5417
    var ele = 408.0
    var heading = 0.3
    var speed = 4.0
    var hdop = 0.9
    var t = 1_714_550_400  // 2024-05-01T08:00:00Z
    var is2D = false
    var satellites = 9
    var heartRate = 120
    var cadence = 82
    var power = 180
    var temperature = 21.5

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { rng.next() }

    mutating func unit() -> Double { rng.unit() }

    /// True once in about `n` calls.
    mutating func rare(_ n: UInt64) -> Bool { next() % n == 0 }

    var course: Double {
        let degrees = heading * 180 / .pi
        return degrees - 360 * (degrees / 360).rounded(.down)
    }

    mutating func step() {
        heading += (unit() - 0.5) * 0.3
        speed = max(0, min(12, speed + (unit() - 0.5) * 0.4))
        lat += cos(heading) * speed * 9e-6
        lon += sin(heading) * speed * 1.3e-5
        ele += (unit() - 0.5) * 0.8
        hdop = max(0.5, min(4, hdop + (unit() - 0.5) * 0.2))
        t += 1
        if rare(200) { is2D.toggle() }
        satellites = max(4, min(14, satellites + Int(next() % 3) - 1))
        heartRate = max(60, min(190, heartRate + Int(next() % 5) - 2))
        cadence = max(0, min(120, cadence + Int(next() % 5) - 2))
        power = max(0, min(900, power + Int(next() % 21) - 10))
        temperature += (unit() - 0.5) * 0.1
    }

    /// A pause between segments.
    mutating func pause() { t += 300 }

    func fixed(_ v: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", v) }

    /// At most `decimals` decimals, without trailing zeros (Java's way of writing a double).
    func shortest(_ v: Double, _ decimals: Int) -> String {
        var s = fixed(v, decimals)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s += "0" }
        return s
    }

    /// `v` rounded to the device's semicircles (2³¹ to 180°).
    func semicircles(_ v: Double) -> Double {
        (v * 2_147_483_648 / 180).rounded() * 180 / 2_147_483_648
    }

    /// The exact decimal expansion of a double whose binary fraction is short, as Garmin Connect
    /// writes it.
    static func exact(_ v: Double) -> String {
        var s = String(format: "%.40f", v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    func time(fraction: String) -> String {
        let (day, second) = t.quotientAndRemainder(dividingBy: 86_400)
        return date(days: day) + "T" + clock(second) + fraction + "Z"
    }

    func time(offsetHours: Int) -> String {
        let local = t + offsetHours * 3600
        let (day, second) = local.quotientAndRemainder(dividingBy: 86_400)
        let sign = offsetHours < 0 ? "-" : "+"
        return date(days: day) + "T" + clock(second) + sign + two(abs(offsetHours)) + ":00"
    }

    private func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }

    private func clock(_ second: Int) -> String {
        two(second / 3600) + ":" + two(second / 60 % 60) + ":" + two(second % 60)
    }

    /// The civil date of a day since 1970, `YYYY-MM-DD`.
    private func date(days: Int) -> String {
        String(ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(days) * 86_400)).prefix(10))
    }
}
