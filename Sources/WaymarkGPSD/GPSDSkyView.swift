/// The satellites a receiver's log says it sees, as gpsd 3.22 reports them in SKY: a pure state
/// machine fed the log's sentences in order, every one of them (any sentence between two GSVs
/// or two GSAs ends a group).
///
/// - **GSV** fills gpsd's skyview slot by slot. Sentence 1 of a group clears it when it begins a
///   cycle (the sentence before was no GSV) or when it is GPS's (`GP`); another talker's group
///   straight after (GLONASS, BeiDou, Galileo, QZSS) is added to it. A satellite number of 0 is
///   skipped one field at a time, as gpsd skips it. Elevation, azimuth and signal to noise ratio
///   are whole numbers, an empty field 0. A group with a field count that is not a multiple of 4
///   (or one more, NMEA 4.10's signal id), or a part below 1, clears the skyview.
/// - A satellite is **used** when the GSAs read before it name it and its ratio is above 0.
///   A GSA that begins a cycle, or follows one of its own talker (but `GN`), starts the set
///   again; the GSAs of other talkers straight after it add to it.
/// - The skyview is **reported** once a group is complete (its last part), when some satellite's
///   azimuth is not 0 (else it is cleared, as SiRF receivers that see nothing send such groups),
///   and not on a GPS group when other talkers' groups have been seen, since theirs complete the
///   picture. ``satellites`` is the last skyview reported.
/// - **Numbers** are gpsd's: a satellite's number, read with its talker, becomes one PRN and
///   u-blox's `gnssid` and `svid` (``prn(talker:number:)``).
public struct GPSDSkyView: Sendable, Hashable {
    public struct Satellite: Sendable, Hashable {
        public var prn: Int
        public var elevation: Double
        public var azimuth: Double
        public var signalToNoise: Double
        public var used: Bool
        public var gnssID: Int
        public var svID: Int
    }

    /// The last skyview reported: what SKY says.
    public private(set) var satellites: [Satellite] = []
    /// The skyview being filled.
    private var slots: [Satellite] = []
    /// The PRNs the GSAs name as used.
    private var used: [Int] = []
    /// The talker of the sentence before, when it was a GSV or a GSA.
    private var lastGSVTalker: String?
    private var lastGSATalker: String?
    /// Whether groups of talkers other than GPS have been seen.
    private var seenOtherTalkers = false

    /// gpsd's limit of satellites in a skyview.
    static let maximumChannels = 140

    public init() {}

    /// Takes one sentence (from `$` or `!` to the end of its checksum, without CR LF).
    public mutating func take(_ sentence: some Collection<UInt8>) {
        let text = Array(sentence)
        guard text.count > 6, text[0] == UInt8(ascii: "$") || text[0] == UInt8(ascii: "!") else { return }
        let star = text.lastIndex(of: UInt8(ascii: "*"))
        var fields = text[1..<(star ?? text.count)].split(
            separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        // gpsd counts the fields a comma ends; without a checksum the last has none.
        if star == nil { fields.removeLast() }
        guard let address = fields.first, address.count >= 5 else { return }
        let talker = String(decoding: address.prefix(2), as: UTF8.self)
        let type = String(decoding: address.suffix(3), as: UTF8.self)
        switch type {
        case "GSV": gsv(talker, fields)
        case "GSA": gsa(talker, fields)
        default: break
        }
        if type != "GSV" { lastGSVTalker = nil }
        if type != "GSA" { lastGSATalker = nil }
    }

    private mutating func gsv(_ talker: String, _ fields: [ArraySlice<UInt8>]) {
        let count = fields.count
        guard count > 3, count % 4 <= 1 else {
            slots = []
            return
        }
        let signal = count % 4 == 1 ? Self.atoi(fields[count - 1]) : 0
        let parts = Self.atoi(fields[1])
        let part = Self.atoi(fields[2])
        guard part >= 1 else {
            slots = []
            return
        }
        if part == 1 {
            if lastGSVTalker == nil || (talker == "GP" && signal == 0) { slots = [] }
            lastGSVTalker = talker
            if ["GA", "GB", "BD", "PQ", "GL", "QZ"].contains(talker) { seenOtherTalkers = true }
        }
        var k = 4
        while k < count / 4 * 4 {
            guard slots.count < Self.maximumChannels else {
                slots = []
                break
            }
            let number = Self.atoi(fields[k])
            k += 1
            if number == 0 { continue }  // a bogus field: the next is read as a number
            let (prn, gnss, sv) = Self.prn(talker: talker, number: number)
            func value(_ i: Int) -> Double { i < count ? Double(Self.atoi(fields[i])) : 0 }
            let ratio = value(k + 2)
            slots.append(
                Satellite(
                    prn: prn, elevation: value(k), azimuth: value(k + 1), signalToNoise: ratio,
                    used: prn > 0 && ratio > 0 && used.contains(prn), gnssID: gnss, svID: sv))
            k += 3
        }
        guard part >= parts else { return }
        guard slots.contains(where: { $0.azimuth != 0 }) else {
            slots = []
            return
        }
        if seenOtherTalkers && talker == "GP" { return }
        satellites = slots
    }

    private mutating func gsa(_ talker: String, _ fields: [ArraySlice<UInt8>]) {
        let count = fields.count
        guard count >= 18 else { return }
        if lastGSATalker == nil || (lastGSATalker == talker && talker != "GN") { used = [] }
        lastGSATalker = talker
        // gpsd's count: the fields less the address, both modes and the three DOPs.
        for i in 0..<(count - 6) where i + 3 < count {
            let number = Self.atoi(fields[i + 3])
            guard number >= 1 else { continue }
            let prn = Self.prn(talker: talker, number: number).prn
            if prn > 0 && used.count < Self.maximumChannels { used.append(prn) }
        }
    }

    /// gpsd's PRN, u-blox gnssid and svid for satellite `number` as `talker` names it: numbers
    /// up to 32 by the talker (Galileo 301–332 from `GA`, BeiDou 401–432 from `GB`, `BD` or
    /// `PQ`, GLONASS 65–96 from `GL`, QZSS 193–224 from `QZ`, else GPS), larger ones by their
    /// range (SBAS 33–64 and 120–158, GLONASS 65–96, IMES 173–182, QZSS 193–197, BeiDou 201–237
    /// as 401–437, Galileo 301–356, BeiDou 401–437); a number in no range is PRN 0.
    static func prn(talker: String, number n: Int) -> (prn: Int, gnssID: Int, svID: Int) {
        if n < 1 { return (0, 0, 0) }
        if n <= 32 {
            switch talker {
            case "GA": return (300 + n, 2, n)
            case "GB", "BD", "PQ": return (400 + n, 3, n)
            case "GL": return (64 + n, 6, n)
            case "QZ": return (192 + n, 5, n)
            default: return (n, 0, n)
            }
        }
        switch n {
        case 33...64: return (n, 1, n + 87)
        case 65...96: return (n, 6, n - 64)
        case 120...158: return (n, 1, n)
        case 173...182: return (n, 4, n - 172)
        case 193...197: return (n, 5, n - 192)
        case 201...237: return (n + 200, 3, n - 200)
        case 301...356: return (n, 2, n - 300)
        case 401...437: return (n, 3, n - 400)
        default: return (0, 0, 0)
        }
    }

    /// C's `atoi`: leading blanks, a sign and the digits that follow; 0 when there are none.
    static func atoi(_ f: ArraySlice<UInt8>) -> Int {
        var i = f.startIndex
        while i < f.endIndex, f[i] == 0x20 || f[i] == 0x09 { i += 1 }
        var sign = 1
        if i < f.endIndex, f[i] == UInt8(ascii: "-") || f[i] == UInt8(ascii: "+") {
            if f[i] == UInt8(ascii: "-") { sign = -1 }
            i += 1
        }
        var value = 0
        while i < f.endIndex, f[i] &- 0x30 < 10, value < 1_000_000_000 {
            value = value * 10 + Int(f[i] - 0x30)
            i += 1
        }
        return sign * value
    }
}
