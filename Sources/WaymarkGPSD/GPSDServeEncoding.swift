import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `waymark serve` says to look like gpsd 3.22: its release, protocol version and the one
/// device it offers, the trace.
public struct GPSDServedDevice: Sendable, Hashable {
    /// The device path in DEVICES, DEVICE and every TPV and SKY: the trace as the user named it.
    public var path: String
    /// The driver name in DEVICES.
    public var driver: String
    /// When the device was activated: the first fix's time, on the trace's own clock.
    public var activated: Date
    /// Seconds between fixes, as DEVICE's `cycle` states it.
    public var cycle: Double

    public init(path: String, driver: String = "Waymark", activated: Date, cycle: Double = 1) {
        self.path = path
        self.driver = driver
        self.activated = activated
        self.cycle = cycle
    }

    /// gpsd 3.22's release and revision, as VERSION states them; clients check only the
    /// protocol numbers.
    public static let release = "3.22"
    public static let protocolMajor = 3
    public static let protocolMinor = 14
}

/// One epoch of the trace, encoded once for every client that watches: NMEA 0183 sentences (GGA,
/// GSA, RMC) and gpsd's JSON reports (SKY, then TPV), in one buffer.
///
/// Every encoding a client may ask for is a slice of that buffer, so an epoch costs its bytes
/// once (about 600 bytes for a fix with DOPs), whatever its clients watch: NMEA is a prefix,
/// JSON a suffix, both the whole.
public struct GPSDEpoch: Sendable, Hashable {
    /// The fix time (UTC) on the trace's clock.
    public var time: Date
    /// The NMEA sentences, the SKY line and the TPV line, each line ending in CR LF.
    private let storage: [UInt8]
    private let skyStart: Int
    private let tpvStart: Int

    /// An epoch of `nmea`, `sky` and `tpv` (each line with its CR LF; `sky` may be empty).
    public init(time: Date, nmea: [UInt8], sky: [UInt8], tpv: [UInt8]) {
        self.time = time
        storage = nmea + sky + tpv
        skyStart = nmea.count
        tpvStart = nmea.count + sky.count
    }

    /// The SKY line (with its CR LF), when the fix carries DOPs; else empty.
    public var sky: ArraySlice<UInt8> { storage[skyStart..<tpvStart] }
    /// The TPV line, with its CR LF.
    public var tpv: ArraySlice<UInt8> { storage[tpvStart...] }
    /// The SKY and TPV lines.
    public var json: ArraySlice<UInt8> { storage[skyStart...] }
    /// The NMEA sentences, each ending in CR LF.
    public var nmea: ArraySlice<UInt8> { storage[..<skyStart] }
    /// NMEA sentences, then the JSON reports: what a client with both `json` and `nmea` gets.
    public var both: ArraySlice<UInt8> { storage[...] }

    /// The bytes for a client watching with `policy` (a slice of the epoch's one buffer, not a
    /// copy); empty when it wants none.
    public func bytes(for policy: GPSDWatchPolicy) -> ArraySlice<UInt8> {
        guard policy.enable else { return [] }
        let nmeaWanted = policy.nmea || policy.raw > 0
        switch (policy.json, nmeaWanted) {
        case (true, true): return both
        case (true, false): return json
        case (false, true): return nmea
        case (false, false): return []
        }
    }
}

/// Encodes fixes as gpsd 3.22 does: the JSON reports' member names, order and precision, and
/// NMEA sentences with their checksums.
///
/// A fix becomes a TPV (mode 2 or 3, with the point's time, position, altitudes, errors, speed
/// and course as far as the trace has them) and, when it carries DOPs, a SKY before it; a point
/// without a fix becomes a TPV of mode 1. Accuracies are passed through as gpsd's errors
/// (`eph`, `epv`, `eps`, `epd`), the inverse of ``GPSDMapping``, so that a client that maps them
/// back (`waymark record`) gets the trace's values.
public enum GPSDServeEncoding {
    /// The epoch of `event`'s fix for `device`; `ownSentences`, when given, are its NMEA (the
    /// log's own, ``GPSDRawNMEA``) instead of sentences made from the fix.
    public static func epoch(
        _ kind: SourceEvent.Kind, time fallback: Date, device: GPSDServedDevice, ownSentences: [UInt8]? = nil,
        satellites: [GPSDSkyView.Satellite]? = nil
    ) -> GPSDEpoch {
        let sky: [UInt8]
        let tpv: [UInt8]
        let nmea: [UInt8]
        let time: Date
        switch kind {
        case .fix(let location):
            time = location.timestamp
            sky = skyLine(location, device: device.path, satellites: satellites)
            tpv = tpvLine(location, device: device.path)
            nmea = sentences(location)
        case .noFix:
            time = fallback
            sky = []
            var o = JSONLine(class: "TPV")
            o.string("device", device.path)
            o.raw("mode", "1")
            o.string("time", ValueFormatting.iso8601(time))
            tpv = o.finish()
            nmea = noFixSentences(time)
        }
        return GPSDEpoch(time: time, nmea: ownSentences ?? nmea, sky: sky, tpv: tpv)
    }

    /// `{"class":"TPV",…}` and CR LF for a fix.
    static func tpvLine(_ l: Location, device: String) -> [UInt8] {
        let p = l.provenance
        let threeD = p.fixMode == .threeD
        var o = JSONLine(class: "TPV")
        o.string("device", device)
        o.raw("mode", threeD ? "3" : "2")
        switch p.differential {
        case .none: break
        case .dgps: o.raw("status", "2")
        case .rtkFixed: o.raw("status", "3")
        case .rtkFloat: o.raw("status", "4")
        }
        o.string("time", ValueFormatting.iso8601(l.timestamp))
        o.number("lat", l.coordinate.latitude, 9)
        o.number("lon", l.coordinate.longitude, 9)
        if threeD && l.hasValidAltitude {
            if let hae = l.ellipsoidalAltitude { o.number("altHAE", hae, 4) }
            o.number("altMSL", l.altitude, 4)
            o.number("alt", l.altitude, 4)
            o.number("epv", l.verticalAccuracy, 3)
        }
        if l.course >= 0 {
            o.number("track", l.course, 4)
            if l.courseAccuracy >= 0 { o.number("epd", l.courseAccuracy, 4) }
        }
        if l.speed >= 0 {
            o.number("speed", l.speed, 3)
            if l.speedAccuracy >= 0 { o.number("eps", l.speedAccuracy, 2) }
        }
        if threeD && l.hasValidAltitude, let hae = l.ellipsoidalAltitude { o.number("geoidSep", hae - l.altitude, 3) }
        if l.horizontalAccuracy >= 0 { o.number("eph", l.horizontalAccuracy, 3) }
        return o.finish()
    }

    /// `{"class":"SKY",…}` and CR LF when the fix has DOPs or `satellites` (an NMEA log's
    /// GSV and GSA, ``GPSDSkyView``) are known, else nothing. gpsd 3.22 has no satellite count
    /// without the satellites themselves, which a GPX trace does not name.
    static func skyLine(_ l: Location, device: String, satellites: [GPSDSkyView.Satellite]? = nil) -> [UInt8] {
        let p = l.provenance
        guard p.hdop != nil || p.vdop != nil || p.pdop != nil || satellites != nil else { return [] }
        var o = JSONLine(class: "SKY")
        o.string("device", device)
        o.string("time", ValueFormatting.iso8601(l.timestamp))
        if let v = p.vdop { o.number("vdop", v, 2) }
        if let h = p.hdop { o.number("hdop", h, 2) }
        if let d = p.pdop { o.number("pdop", d, 2) }
        guard let satellites else {
            o.raw("satellites", "[]")
            return o.finish()
        }
        o.raw("nSat", String(satellites.count))
        o.raw("uSat", String(satellites.count { $0.used }))
        var items: [String] = []
        for s in satellites {
            var list = JSONLine(members: "\"PRN\":\(s.prn)")
            list.number("el", s.elevation, 1)
            list.number("az", s.azimuth, 1)
            list.number("ss", s.signalToNoise, 1)
            list.bool("used", s.used)
            list.raw("gnssid", String(s.gnssID))
            list.raw("svid", String(s.svID))
            items.append(list.object)
        }
        o.raw("satellites", "[" + items.joined(separator: ",") + "]")
        return o.finish()
    }

    // MARK: - NMEA 0183

    /// GGA, GSA and RMC for a fix.
    static func sentences(_ l: Location) -> [UInt8] {
        let p = l.provenance
        let (hhmmss, ddmmyy) = clock(l.timestamp)
        let (lat, ns) = angle(l.coordinate.latitude, degreeDigits: 2, positive: "N", negative: "S")
        let (lon, ew) = angle(l.coordinate.longitude, degreeDigits: 3, positive: "E", negative: "W")
        let quality: String
        switch p.differential {
        case .none: quality = "1"
        case .dgps: quality = "2"
        case .rtkFixed: quality = "4"
        case .rtkFloat: quality = "5"
        }
        let threeD = p.fixMode == .threeD && l.hasValidAltitude
        let altitude = threeD ? fixed(l.altitude, 1) : ""
        let separation = threeD ? l.ellipsoidalAltitude.map { fixed($0 - l.altitude, 1) } ?? "" : ""
        let gga = [
            "GPGGA", hhmmss, lat, ns, lon, ew, quality, p.satellitesUsed.map { twoDigits($0) } ?? "",
            p.hdop.map { fixed($0, 1) } ?? "", altitude, threeD ? "M" : "", separation, separation.isEmpty ? "" : "M",
            "", "",
        ]
        let gsa =
            ["GPGSA", "A", p.fixMode == .threeD ? "3" : "2"] + Array(repeating: "", count: 12) + [
                p.pdop.map { fixed($0, 1) } ?? "", p.hdop.map { fixed($0, 1) } ?? "", p.vdop.map { fixed($0, 1) } ?? "",
            ]
        let knots = l.speed >= 0 ? fixed(l.speed * 3600 / 1852, 3) : ""
        let course = l.course >= 0 ? fixed(l.course, 1) : ""
        let rmc = [
            "GPRMC", hhmmss, "A", lat, ns, lon, ew, knots, course, ddmmyy, "", "", p.differential == .none ? "A" : "D",
        ]
        return sentence(gga) + sentence(gsa) + sentence(rmc)
    }

    /// GGA of quality 0 and RMC of status V, for a point without a fix.
    static func noFixSentences(_ time: Date) -> [UInt8] {
        let (hhmmss, ddmmyy) = clock(time)
        return sentence(["GPGGA", hhmmss, "", "", "", "", "0", "00", "", "", "", "", "", "", ""])
            + sentence(["GPRMC", hhmmss, "V", "", "", "", "", "", "", ddmmyy, "", "", "N"])
    }

    /// `$FIELDS*CS` and CR LF: the checksum is the XOR of every byte between `$` and `*`.
    public static func sentence(_ fields: [String]) -> [UInt8] {
        let body = Array(fields.joined(separator: ",").utf8)
        let sum = body.reduce(UInt8(0), ^)
        let hex = Array("0123456789ABCDEF".utf8)
        return [UInt8(ascii: "$")] + body + [UInt8(ascii: "*"), hex[Int(sum >> 4)], hex[Int(sum & 15)], 13, 10]
    }

    /// `hhmmss.ss` and `ddmmyy` (UTC).
    static func clock(_ time: Date) -> (String, String) {
        let centis = Int64((time.timeIntervalSince1970 * 100).rounded(.down))
        var days = centis / 8_640_000
        var ofDay = centis % 8_640_000
        if ofDay < 0 {
            ofDay += 8_640_000
            days -= 1
        }
        let (y, m, d) = ValueParsing.civil(fromDays: Int(days))
        let s = ofDay / 100
        let hhmmss =
            twoDigits(Int(s / 3600)) + twoDigits(Int(s / 60 % 60)) + twoDigits(Int(s % 60)) + "."
            + twoDigits(Int(ofDay % 100))
        return (hhmmss, twoDigits(d) + twoDigits(m) + twoDigits(((y % 100) + 100) % 100))
    }

    /// `ddmm.mmmmmm` (or `dddmm.mmmmmm`) and its hemisphere.
    static func angle(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String) {
        let micro = Int64((abs(value) * 60 * 1_000_000).rounded())
        let degrees = micro / 60_000_000
        let minutes = micro % 60_000_000
        var d = String(degrees)
        while d.count < degreeDigits { d = "0" + d }
        let whole = minutes / 1_000_000
        var fraction = String(minutes % 1_000_000)
        while fraction.count < 6 { fraction = "0" + fraction }
        return (d + twoDigits(Int(whole)) + "." + fraction, value < 0 ? negative : positive)
    }

    static func twoDigits(_ n: Int) -> String { n < 10 && n >= 0 ? "0\(n)" : String(n) }

    /// `value` with exactly `decimals` fraction digits, as C's `%.Nf` writes it.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return ValueFormatting.fixed(value, decimals: decimals) }
        let n = UInt64(scaled)
        let factor = UInt64(scale)
        var text = String(n / factor)
        if decimals > 0 {
            var fraction = String(n % factor)
            while fraction.count < decimals { fraction = "0" + fraction }
            text += "." + fraction
        }
        return value < 0 && n > 0 ? "-" + text : text
    }
}

/// A gpsd JSON object built member by member: `{"class":"…",…}` and CR LF.
struct JSONLine {
    private var bytes: [UInt8]

    init(class name: String) {
        bytes = Array("{\"class\":\"\(name)\"".utf8)
        bytes.reserveCapacity(320)
    }

    /// An object that begins with `members` (no class).
    init(members: String) { bytes = Array(("{" + members).utf8) }

    /// The object, closed, without CR LF.
    var object: String { String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self) }

    mutating func raw(_ key: String, _ value: String) {
        bytes += Array(",\"\(key)\":".utf8)
        bytes += Array(value.utf8)
    }

    mutating func number(_ key: String, _ value: Double, _ decimals: Int) {
        raw(key, GPSDServeEncoding.fixed(value, decimals))
    }

    mutating func string(_ key: String, _ value: String) {
        bytes += Array(",\"\(key)\":".utf8)
        JSONLine.appendString(value, to: &bytes)
    }

    mutating func bool(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }

    func finish() -> [UInt8] { bytes + [UInt8(ascii: "}"), 13, 10] }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in value.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [92, b]
            case 92: out += [92, 92]
            case 10: out += [92, UInt8(ascii: "n")]
            case 13: out += [92, UInt8(ascii: "r")]
            case 9: out += [92, UInt8(ascii: "t")]
            case 0..<32:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
