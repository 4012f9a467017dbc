/// The sentence types Waymark reads from an NMEA 0183 log; the rest are skipped (and counted).
enum NMEAType: Sendable, Equatable {
    case gga, rmc, gll, gns, gsa, gsv, vtg, zda, gst, gbs
    /// A sentence of another type, or a proprietary one (`$P…`).
    case other

    /// The type of the address `GPGGA` (any talker: GP, GN, GL, GA, GB, BD, GQ, QZ, …).
    static func of(_ address: ByteSpan) -> NMEAType {
        guard address.count == 5, address[0] != UInt8(ascii: "P") else { return .other }
        let a = address[2]
        let b = address[3]
        let c = address[4]
        switch (a, b, c) {
        case (0x47, 0x47, 0x41): return .gga  // GGA
        case (0x52, 0x4D, 0x43): return .rmc  // RMC
        case (0x47, 0x4C, 0x4C): return .gll  // GLL
        case (0x47, 0x4E, 0x53): return .gns  // GNS
        case (0x47, 0x53, 0x41): return .gsa  // GSA
        case (0x47, 0x53, 0x56): return .gsv  // GSV
        case (0x56, 0x54, 0x47): return .vtg  // VTG
        case (0x5A, 0x44, 0x41): return .zda  // ZDA
        case (0x47, 0x53, 0x54): return .gst  // GST
        case (0x47, 0x42, 0x53): return .gbs  // GBS
        default: return .other
        }
    }
}

/// Cuts one NMEA 0183 sentence into its fields and checks it: a pure function of its bytes.
///
/// A sentence is `$` (or `!`), an address (two talker letters and three of type, or `P` and a
/// maker's), comma-separated fields, and `*` with two hexadecimal digits: the exclusive or of
/// every byte between `$` and `*`. A sentence without the `*` part is read unchecked, as gpsd
/// reads it; one whose digits do not match, or with a `*` and no two digits, is refused.
/// Fields are byte ranges of the line, so nothing is copied; they live in a buffer the lexer
/// owns (a class for that reason: one lexer per reader, used by one thread).
final class NMEALexer {
    enum Outcome: Equatable {
        case sentence(NMEAType)
        /// The checksum does not match, or the `*` is not followed by two hex digits.
        case badChecksum
        /// Not a sentence: no address, or a byte that NMEA does not allow (control or 8-bit).
        case malformed
    }

    /// The most fields kept; later ones read as empty (the longest standard sentence, GSV of
    /// NMEA 4.11, has 21).
    static let maxFields = 64
    /// Where the fields of the last sentence lie: `bounds[0]` is its `$` and `bounds[i + 1]` the
    /// byte that ends field `i` (a comma, the `*`, or the end), so that field `i` is the bytes
    /// between `bounds[i]` and `bounds[i + 1]`. Room for `maxFields + 1`.
    private let bounds: UnsafeMutablePointer<UnsafePointer<UInt8>>
    /// Fields of the last sentence, the address included.
    private(set) var count = 0
    /// Whether the last sentence had a checksum (else it was read unchecked).
    private(set) var hadChecksum = false

    init() {
        bounds = .allocate(capacity: Self.maxFields + 1)
        bounds.initialize(repeating: ByteSpan.empty.start, count: Self.maxFields + 1)
    }

    deinit { bounds.deallocate() }

    /// Lexes the sentence that begins at `start` (with `$` or `!`) and ends at `end` or at the
    /// next `$` or `!`, whichever comes first (a receiver that overruns its buffer cuts a
    /// sentence short with the next one); `next` is where it ended.
    func lex(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, next: inout UnsafePointer<UInt8>) -> Outcome {
        hadChecksum = false
        bounds[0] = start
        let scanned = NMEABodyScan.scan(start + 1, end, into: bounds + 1, capacity: Self.maxFields)
        count = scanned.count
        let sum = scanned.sum
        let bad = scanned.bad
        let q = scanned.stop
        let body: UnsafePointer<UInt8>? = q < end && q.pointee == 0x2A ? q : nil
        let bodyEnd = body ?? q
        if count < Self.maxFields { bounds[count + 1] = bodyEnd }
        count += 1
        count = min(count, Self.maxFields)
        if let body {
            // The checksum: two hex digits, then at most spaces up to the end of the line.
            var e = body + 1
            while e < end, e - body <= 3, e.pointee != 0x24, e.pointee != 0x21 { e += 1 }
            next = e
            var tail = e
            while tail < end, tail.pointee == 0x20 || tail.pointee == 0x09 { tail += 1 }
            if tail == end { next = end }
            guard !bad else { return .malformed }
            guard e - body == 3, let high = Self.hex(body[1]), let low = Self.hex(body[2]) else {
                return .badChecksum
            }
            guard high << 4 | low == sum else { return .badChecksum }
            hadChecksum = true
        } else {
            next = q
            guard !bad else { return .malformed }
            // An unchecked sentence's trailing blanks are no part of its last field.
            var last = field(count - 1)
            while last.count > 0, last.start[last.count - 1] == 0x20 || last.start[last.count - 1] == 0x09 {
                last.count -= 1
            }
            bounds[count] = last.start + last.count
        }
        let address = field(0)
        guard address.count >= 2, address.count <= 16 else { return .malformed }
        for i in 0..<address.count {
            let b = address[i]
            guard
                (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
            else { return .malformed }
        }
        return .sentence(NMEAType.of(address))
    }

    /// Field `i` (1-based after the address), empty when the sentence has fewer.
    @inline(__always)
    func field(_ i: Int) -> ByteSpan {
        guard i < count else { return ByteSpan(start: bounds[0] + 1, count: 0) }
        let from = bounds[i] + 1
        return ByteSpan(start: from, count: bounds[i + 1] - from)
    }

    var fieldCount: Int { count - 1 }

    @inline(__always)
    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

/// Readings of NMEA fields; each is nil when the field is empty or not what it should be.
enum NMEAField {
    /// A decimal number (`12.5`, `-3`, `.5`): `[-+]digits[.digits]`, 1 to 15 digits in all, the
    /// whole field (what ``ValueParsing/plainDecimal(from:to:)`` reads, with the same rounding:
    /// Clinger's exact fast path), in one loop over the field's few bytes.
    @inline(__always)
    static func number(_ f: ByteSpan) -> Double? {
        guard f.count > 0, f.count < 32 else { return nil }
        var i = 0
        let negative = f[0] == UInt8(ascii: "-")
        if negative || f[0] == UInt8(ascii: "+") { i = 1 }
        // Fewer than 32 bytes: the value may wrap past 19 digits, but more than 15 are refused.
        var value: UInt64 = 0
        var digits = 0
        while i < f.count {
            let d = f[i] &- 0x30
            guard d < 10 else { break }
            value = value &* 10 &+ UInt64(d)
            digits &+= 1
            i &+= 1
        }
        var fraction = 0
        if i < f.count, f[i] == UInt8(ascii: ".") {
            i &+= 1
            while i < f.count {
                let d = f[i] &- 0x30
                guard d < 10 else { break }
                value = value &* 10 &+ UInt64(d)
                fraction &+= 1
                i &+= 1
            }
        }
        digits &+= fraction
        guard i == f.count, digits > 0, digits <= 15 else { return nil }
        // Below 10^15, so the conversion is exact.
        let whole = Double(Int64(bitPattern: value))
        let scaled = fraction > 0 ? whole / ValueParsing.exactPower(fraction) : whole
        return negative ? -scaled : scaled
    }

    /// A non-negative integer.
    @inline(__always)
    static func integer(_ f: ByteSpan) -> Int? {
        guard f.count > 0, f.count <= 9 else { return nil }
        var v = 0
        for i in 0..<f.count {
            let d = f[i] &- 0x30
            guard d < 10 else { return nil }
            v = v * 10 + Int(d)
        }
        return v
    }

    /// `hhmmss[.s…]`: nanoseconds since midnight. A second of 60 (a leap second) is allowed.
    static func timeOfDay(_ f: ByteSpan) -> Int64? {
        guard f.count >= 6, f.count <= 16 else { return nil }
        if f.count >= 8 && f.count <= 15 { return timeOfDayAsWords(f) }
        for i in 0..<6 where f[i] &- 0x30 >= 10 { return nil }
        func pair(_ i: Int) -> Int { Int(f[i] &- 0x30) * 10 + Int(f[i + 1] &- 0x30) }
        let h = pair(0)
        let m = pair(2)
        let s = pair(4)
        guard h < 24, m < 60, s <= 60 else { return nil }
        var nanos: Int64 = 0
        if f.count > 6 {
            guard f[6] == UInt8(ascii: "."), f.count > 7 else { return nil }
            // At most nine digits after the point (16 bytes): no overflow, so wrapping operators.
            var scale: Int64 = 100_000_000
            for i in 7..<f.count {
                let d = f[i] &- 0x30
                guard d < 10 else { return nil }
                nanos &+= Int64(d) &* scale  // digits past the ninth are cut, as gpsd cuts them
                scale /= 10
            }
        }
        return Int64(h * 3600 + m * 60 + s) * 1_000_000_000 + nanos
    }

    /// ``timeOfDay(_:)`` of a field of 8 to 15 bytes (`hhmmss.s` to `hhmmss.ssssssss`, the usual
    /// ones), read as words: the same checks and the same value.
    @inline(__always)
    private static func timeOfDayAsWords(_ f: ByteSpan) -> Int64? {
        var w = UnsafeRawPointer(f.start).loadUnaligned(as: UInt64.self)
        #if _endian(big)
            w = w.byteSwapped
        #endif
        // `hhmmss` in the six low bytes, then '.' and the first digit of the fraction.
        guard (w &>> 48) & 0xFF == 0x2E else { return nil }
        let six = (w & 0x0000_FFFF_FFFF_FFFF) | 0x3030_0000_0000_0000
        let check = (six & 0xF0F0_F0F0_F0F0_F0F0) | (((six &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) &>> 4)
        guard check == 0x3333_3333_3333_3333 else { return nil }
        // Each pair's value in its first byte: hh in byte 0, mm in byte 2, ss in byte 4.
        let pairs = ((six & 0x0F0F_0F0F_0F0F_0F0F) &* 2561) &>> 8
        let h = Int(pairs & 0xFF)
        let m = Int((pairs &>> 16) & 0xFF)
        let s = Int((pairs &>> 32) & 0xFF)
        guard h < 24, m < 60, s <= 60 else { return nil }
        // One to eight digits after the point: their value, scaled to nanoseconds (exact: both
        // factors and the product are integers below 2^53).
        let digits = f.count &- 7
        guard let fraction = eightDigits(endingAt: f.start + f.count, count: digits) else { return nil }
        let nanos = Int64(Double(fraction) * ValueParsing.exactPower(9 &- digits))
        return Int64(h * 3600 + m * 60 + s) * 1_000_000_000 + nanos
    }

    /// A latitude (`ddmm.mmmm`, `N`/`S`) or longitude (`dddmm.mmmm`, `E`/`W`) in degrees, read
    /// as gpsd reads it: whole degrees and minutes as integers, then the fraction of a minute.
    static func angle(_ f: ByteSpan, _ hemisphere: ByteSpan, limit: Double) -> Double? {
        guard f.count >= 3, hemisphere.count == 1 else { return nil }
        var whole = 0
        var i = 0
        while i < f.count, f[i] &- 0x30 < 10 {
            whole = whole &* 10 &+ Int(f[i] &- 0x30)  // at most six digits
            i &+= 1
            guard i <= 6 else { return nil }
        }
        guard i >= 3 else { return nil }
        var fraction = 0.0
        if i < f.count {
            guard f[i] == UInt8(ascii: ".") else { return nil }
            // The fraction of a minute: what `number` reads from `.dddd` (1 to 15 digits, all
            // digits, exactly: Clinger's fast path), read here without its sign and integer part.
            let digits = f.count &- i &- 1
            if digits > 0 {
                guard digits <= 15 else { return nil }
                var v: UInt64 = 0
                if digits <= 8 && f.count >= 8 {
                    guard let eight = eightDigits(endingAt: f.start + f.count, count: digits) else { return nil }
                    v = eight
                } else {
                    for j in (i &+ 1)..<f.count {
                        let d = f[j] &- 0x30
                        guard d < 10 else { return nil }
                        v = v &* 10 &+ UInt64(d)
                    }
                }
                fraction = Double(Int64(bitPattern: v)) / ValueParsing.exactPower(digits)
            }
        }
        let degrees = whole / 100
        let minutes = Double(whole % 100) + fraction
        guard minutes < 60 else { return nil }
        var value = Double(degrees) + minutes * (1.0 / 60.0)
        switch hemisphere[0] {
        case UInt8(ascii: "N"), UInt8(ascii: "E"): break
        case UInt8(ascii: "S"), UInt8(ascii: "W"): value = -value
        default: return nil
        }
        return abs(value) <= limit ? value : nil
    }

    /// The value of the `count` (1 to 8) decimal digits that end at `end`, read as one word;
    /// nil if one of them is not a digit. The eight bytes before `end` must be readable (the
    /// caller's field holds them), the ones before the digits are not looked at.
    @inline(__always)
    static func eightDigits(endingAt end: UnsafePointer<UInt8>, count: Int) -> UInt64? {
        var w = UnsafeRawPointer(end - 8).loadUnaligned(as: UInt64.self)
        #if _endian(big)
            w = w.byteSwapped
        #endif
        // The digits are the word's high bytes (the first the lowest of them); the bytes below
        // them become '0', leading zeros.
        let below: UInt64 = count == 8 ? 0 : (1 &<< UInt64(8 &* (8 &- count))) &- 1
        w = (w & ~below) | (0x3030_3030_3030_3030 & below)
        // Each byte 0x30...0x3F, and below 0x3A: plus 6 it stays below 0x40.
        let check = (w & 0xF0F0_F0F0_F0F0_F0F0) | (((w &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) &>> 4)
        guard check == 0x3333_3333_3333_3333 else { return nil }
        // Pairs, then fours, then all eight (the first digit the most significant).
        var v = w & 0x0F0F_0F0F_0F0F_0F0F
        v = (v &* 2561) &>> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) &>> 16
        return ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) &>> 32
    }

    /// `ddmmyy` (RMC): days since 1970-01-01, the year taken in 1980...2079 (GPS began in 1980).
    static func date(ddmmyy f: ByteSpan) -> Int? {
        guard f.count == 6, let v = integer(f) else { return nil }
        let day = v / 10000
        let month = v / 100 % 100
        let yy = v % 100
        return civilDay(year: yy >= 80 ? 1900 + yy : 2000 + yy, month: month, day: day)
    }

    /// Days since 1970-01-01 of a valid date, else nil.
    static func civilDay(year: Int, month: Int, day: Int) -> Int? {
        guard year >= 1900, year <= 2200, month >= 1, month <= 12, day >= 1 else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let length: Int
        switch month {
        case 2: length = leap ? 29 : 28
        case 4, 6, 9, 11: length = 30
        default: length = 31
        }
        guard day <= length else { return nil }
        return ValueParsing.daysFromCivil(year: year, month: month, day: day)
    }
}
