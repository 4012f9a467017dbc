#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parsers for the XML Schema value types GPX uses, straight from bytes.
package enum ValueParsing {
    /// 10^n for n in 0...22, each exact in a Double.
    @inline(__always)
    static func exactPower(_ n: Int) -> Double {
        switch n {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    /// The commonest form of a number, `[-+]digits[.digits]` with 1 to 15 digits, read from `p`
    /// up to the first byte that is not part of it: the value (Clinger's exact fast path), or nil
    /// when the digits are not 1 to 15, and where reading stopped. ``decimal(_:)`` starts with
    /// it; anything else goes to the general code. (The track point scanner reads numbers of any
    /// length in one pass with ``longPlainDecimal(from:to:)``, which has the same short path.)
    @inline(__always)
    static func plainDecimal(from p: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> (
        value: Double?, stop: UnsafePointer<UInt8>
    ) {
        var q = p
        let negative = q < end && q.pointee == UInt8(ascii: "-")
        if q < end && (negative || q.pointee == UInt8(ascii: "+")) { q += 1 }
        var value: UInt64 = 0
        var digits = 0
        appendDigitRun(&q, end, to: &value, counting: &digits)
        var fraction = 0
        if q < end && q.pointee == UInt8(ascii: ".") {
            q += 1
            let before = digits
            appendDigitRun(&q, end, to: &value, counting: &digits)
            fraction = digits - before
        }
        guard digits > 0, digits <= 15 else { return (nil, q) }
        // Below 10^15, so a signed conversion (one instruction) is exact.
        let whole = Double(Int64(bitPattern: value))
        let scaled = fraction > 0 ? whole / exactPower(fraction) : whole
        return (negative ? -scaled : scaled, q)
    }

    /// Reads the run of ASCII digits at `q` into `value` (which wraps past 19 digits; callers
    /// refuse more than 15), eight at a time while eight bytes remain.
    @inline(__always)
    private static func appendDigitRun(
        _ q: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, to value: inout UInt64,
        counting digits: inout Int
    ) {
        #if _endian(little)
            while end - q >= 8 {
                // Each byte XOR "0" is its digit (0...9) exactly when it is a digit: its high
                // nibble is then 0, and its low nibble plus 6 stays below 16.
                let t = UnsafeRawPointer(q).loadUnaligned(as: UInt64.self) ^ 0x3030_3030_3030_3030
                let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
                let notDigit = (t & high) | (((t & 0x0F0F_0F0F_0F0F_0F0F) &+ 0x0606_0606_0606_0606) & high)
                let n = notDigit.trailingZeroBitCount &>> 3
                if n == 0 { return }
                // The n digits to the top bytes (zeros before them), then combined in pairs,
                // fours and eights.
                var v = t &<< UInt64(64 &- 8 &* n)
                v = ((v & 0x0F0F_0F0F_0F0F_0F0F) &* 2561) &>> 8
                v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) &>> 16
                v = ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) &>> 32
                value = value &* integerPower(n) &+ v
                digits &+= n
                q += n
                if n < 8 { return }
            }
        #endif
        while q < end {
            let d = q.pointee &- 0x30
            guard d < 10 else { return }
            value = value &* 10 &+ UInt64(d)
            digits &+= 1
            q += 1
        }
    }

    /// 10^n for n in 1...8.
    @inline(__always)
    private static func integerPower(_ n: Int) -> UInt64 {
        switch n {
        case 1: return 10
        case 2: return 100
        case 3: return 1000
        case 4: return 10000
        case 5: return 100_000
        case 6: return 1_000_000
        case 7: return 10_000_000
        default: return 100_000_000
        }
    }

    /// Parses a decimal number (`xsd:decimal`, also accepting an exponent) surrounded by optional
    /// white space. Rejects NaN, infinities, hex and empty input.
    ///
    /// Short inputs take Clinger's exact fast path; the rest go to `strtod`, which rounds correctly.
    static func decimal(_ raw: ByteSpan) -> Double? {
        let rawEnd = raw.start + raw.count
        if case (let value?, let stop) = plainDecimal(from: raw.start, to: rawEnd), stop == rawEnd { return value }
        let s = raw.trimmed
        let n = s.count
        guard n > 0, n < 128 else { return nil }
        if n < raw.count, case (let value?, let stop) = plainDecimal(from: s.start, to: s.start + n),
            stop == s.start + n
        {
            return value
        }
        var i = 0
        var negative = false
        if s[0] == UInt8(ascii: "-") || s[0] == UInt8(ascii: "+") {
            negative = s[0] == UInt8(ascii: "-")
            i = 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var significant = 0
        var scale = 0
        var sawDot = false
        var sawDigit = false
        // A digit other than 0 among those past the 19th significant one.
        var truncated = false
        while i < n {
            let b = s[i]
            if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
                sawDigit = true
                if significant > 0 || b != UInt8(ascii: "0") {
                    significant += 1
                }
                if significant <= 19 {
                    mantissa = mantissa &* 10 &+ UInt64(b - UInt8(ascii: "0"))
                    if sawDot { scale -= 1 }
                } else {
                    if !sawDot { scale += 1 }
                    if b != UInt8(ascii: "0") { truncated = true }
                }
                digits += 1
            } else if b == UInt8(ascii: ".") && !sawDot {
                sawDot = true
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { return nil }
        var exponent = 0
        if i < n {
            guard s[i] | 0x20 == UInt8(ascii: "e"), i + 1 < n else { return nil }
            i += 1
            var expNegative = false
            if s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+") {
                expNegative = s[i] == UInt8(ascii: "-")
                i += 1
            }
            var expDigits = 0
            while i < n, s[i] >= UInt8(ascii: "0"), s[i] <= UInt8(ascii: "9") {
                exponent = min(exponent * 10 + Int(s[i] - UInt8(ascii: "0")), 100_000)
                expDigits += 1
                i += 1
            }
            guard expDigits > 0, i == n else { return nil }
            if expNegative { exponent = -exponent }
        }
        let totalScale = scale + exponent
        if significant <= 15 && abs(totalScale) <= 22 {
            let m = Double(mantissa)
            let v = totalScale >= 0 ? m * exactPower(totalScale) : m / exactPower(-totalScale)
            return negative ? -v : v
        }
        // 16 or more digits with a few decimals: Garmin Connect writes every coordinate and
        // height as the exact expansion of a binary value, with up to 30 digits.
        if totalScale < 0, let v = quotient(mantissa, powerOfTen: -totalScale, truncated: truncated) {
            return negative ? -v : v
        }
        // Rare: large or extreme numbers. strtod rounds correctly.
        let v = withUnsafeTemporaryAllocation(of: CChar.self, capacity: n + 1) { copy -> Double in
            for k in 0..<n { copy[k] = CChar(bitPattern: s[k]) }
            copy[n] = 0
            return strtod(copy.baseAddress!, nil)
        }
        return v.isFinite ? v : nil
    }

    /// `[-+]digits[.digits]` with any number of digits (Garmin Connect writes 30), read from `p`
    /// up to the first byte that is not part of it: the value, correctly rounded, or nil when
    /// it takes more than ``quotient(_:powerOfTen:truncated:)`` can do, and where reading
    /// stopped. The same value ``decimal(_:)`` gives for the same text.
    ///
    /// Each part's digits are measured once, eight bytes at a time; up to 15 digits take
    /// Clinger's exact fast path, as ``plainDecimal(from:to:)`` does, so the track point scanner
    /// reads every number in one pass whatever its length.
    static func longPlainDecimal(from p: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> (
        value: Double?, stop: UnsafePointer<UInt8>
    ) {
        var q = p
        let negative = q < end && q.pointee == UInt8(ascii: "-")
        if q < end && (negative || q.pointee == UInt8(ascii: "+")) { q += 1 }
        let integer = q
        let integerCount = digitRunLength(q, end)
        q += integerCount
        var fraction = q
        var fractionCount = 0
        if q < end && q.pointee == UInt8(ascii: ".") {
            fraction = q + 1
            fractionCount = digitRunLength(fraction, end)
            q = fraction + fractionCount
        }
        let count = integerCount + fractionCount
        guard count > 0 else { return (nil, q) }
        if count <= 15 {
            // Below 10^15: exact in a double, and so is its quotient by an exact power of ten.
            var w: UInt64 = 0
            appendDigits(integer, count: integerCount, to: &w)
            appendDigits(fraction, count: fractionCount, to: &w)
            let whole = Double(Int64(bitPattern: w))
            let v = fractionCount > 0 ? whole / exactPower(fractionCount) : whole
            return (negative ? -v : v, q)
        }
        // decimal(_:) refuses text of 128 bytes or more: so does this.
        guard q - p < 128 else { return (nil, q) }
        // The first 19 significant digits make `w`; the value is w · 10^scale, and `truncated`
        // says whether a digit other than 0 was cut after them.
        var w: UInt64 = 0
        var significant = 0
        var scale = 0
        var truncated = false
        var zeros = 0
        while zeros < integerCount && integer[zeros] == UInt8(ascii: "0") { zeros += 1 }
        let run = integerCount - zeros
        var taken = min(run, 19)
        appendDigits(integer + zeros, count: taken, to: &w)
        significant = taken
        scale = run - taken
        truncated = hasNonZeroDigit(integer + zeros + taken, count: run - taken)
        var start = fraction
        var rest = fractionCount
        if significant == 0 {
            // Zeros after the point, before any other digit, only scale the value.
            while rest > 0 && start.pointee == UInt8(ascii: "0") {
                start += 1
                rest -= 1
            }
            scale -= fractionCount - rest
        }
        taken = min(rest, 19 - significant)
        appendDigits(start, count: taken, to: &w)
        significant += taken
        scale -= taken
        if hasNonZeroDigit(start + taken, count: rest - taken) { truncated = true }
        if significant <= 15 && abs(scale) <= 22 {
            let m = Double(w)
            let v = scale >= 0 ? m * exactPower(scale) : m / exactPower(-scale)
            return (negative ? -v : v, q)
        }
        guard scale < 0, let v = quotient(w, powerOfTen: -scale, truncated: truncated) else { return (nil, q) }
        return (negative ? -v : v, q)
    }

    /// Where the number at `p` ends, when ``longPlainDecimal(from:to:)`` (or ``decimal(_:)``
    /// after it, for the text up to there) certainly reads it as a finite value whose integer
    /// part is below `limit`: found without working the value out, for a reader that only checks
    /// values (a replay's first pass). Nil when only reading the value can tell.
    ///
    /// Both accept `[-+]digits[.digits]` with a digit on either side of the point or both (`5.`
    /// and `.5` too), shorter than 128 bytes, and such a number is finite (below 10^128). A value
    /// whose integer part is below `limit` lies below `limit`, and its rounding to the nearest
    /// double is at most `limit` (a double too): `abs(value) <= limit` holds for it.
    static func plainDecimalEnd(
        from p: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>, integerBelow limit: Int
    ) -> UnsafePointer<UInt8>? {
        var q = p
        if q < end && (q.pointee == UInt8(ascii: "-") || q.pointee == UInt8(ascii: "+")) { q += 1 }
        let integer = q
        let integerCount = digitRunLength(q, end)
        q += integerCount
        var fractionCount = 0
        if q < end && q.pointee == UInt8(ascii: ".") {
            fractionCount = digitRunLength(q + 1, end)
            q += 1 + fractionCount
        }
        guard integerCount + fractionCount > 0, q - p < 128 else { return nil }
        guard limit < Int.max else { return q }
        var zeros = 0
        while zeros < integerCount && integer[zeros] == UInt8(ascii: "0") { zeros += 1 }
        guard integerCount - zeros <= 18 else { return nil }
        var whole: UInt64 = 0
        appendDigits(integer + zeros, count: integerCount - zeros, to: &whole)
        return whole < UInt64(limit) ? q : nil
    }

    /// How many ASCII digits begin at `q`, counted eight at a time.
    @inline(__always)
    private static func digitRunLength(_ q: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Int {
        var n = 0
        #if _endian(little)
            while end - (q + n) >= 8 {
                let t = UnsafeRawPointer(q + n).loadUnaligned(as: UInt64.self) ^ 0x3030_3030_3030_3030
                let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
                let notDigit = (t & high) | (((t & 0x0F0F_0F0F_0F0F_0F0F) &+ 0x0606_0606_0606_0606) & high)
                if notDigit != 0 { return n + notDigit.trailingZeroBitCount &>> 3 }
                n += 8
            }
        #endif
        while q + n < end, q[n] &- 0x30 < 10 { n += 1 }
        return n
    }

    /// Appends the `count` digits at `q` (all digits, `count` at most 19) to `value`.
    @inline(__always)
    private static func appendDigits(_ q: UnsafePointer<UInt8>, count: Int, to value: inout UInt64) {
        var i = 0
        #if _endian(little)
            while count - i >= 8 {
                var v = UnsafeRawPointer(q + i).loadUnaligned(as: UInt64.self) & 0x0F0F_0F0F_0F0F_0F0F
                v = (v &* 2561) &>> 8 & 0x00FF_00FF_00FF_00FF
                v = (v &* 6_553_601) &>> 16 & 0x0000_FFFF_0000_FFFF
                v = (v &* 42_949_672_960_001) &>> 32
                value = value &* 100_000_000 &+ v
                i += 8
            }
        #endif
        while i < count {
            value = value &* 10 &+ UInt64(q[i] &- 0x30)
            i += 1
        }
    }

    /// Whether any of the `count` digits at `q` is not 0.
    @inline(__always)
    private static func hasNonZeroDigit(_ q: UnsafePointer<UInt8>, count: Int) -> Bool {
        var i = 0
        while count - i >= 8 {
            if UnsafeRawPointer(q + i).loadUnaligned(as: UInt64.self) != 0x3030_3030_3030_3030 { return true }
            i += 8
        }
        while i < count {
            if q[i] != UInt8(ascii: "0") { return true }
            i += 1
        }
        return false
    }

    /// 5^k for k in 0...27 (5^27 is the largest power of five below 2^63), a literal so that
    /// reading it needs no lazy initialisation.
    private static let powersOfFive: [UInt64] = [
        1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1_953_125, 9_765_625, 48_828_125, 244_140_625,
        1_220_703_125, 6_103_515_625, 30_517_578_125, 152_587_890_625, 762_939_453_125, 3_814_697_265_625,
        19_073_486_328_125, 95_367_431_640_625, 476_837_158_203_125, 2_384_185_791_015_625,
        11_920_928_955_078_125, 59_604_644_775_390_625, 298_023_223_876_953_125, 1_490_116_119_384_765_625,
        7_450_580_596_923_828_125,
    ]

    /// The double nearest to `w` / 10^k (`w` > 0, its digits cut at `truncated`), correctly
    /// rounded; nil when that needs more than this: k above 27, or cut digits that could change
    /// the rounding.
    ///
    /// w / 10^k = (w / 5^k) · 2^-k, and 5^k fits in 64 bits: one 128-by-64-bit division gives a
    /// quotient of 63 or 64 bits and a remainder, which round to 53 bits exactly (the remainder
    /// tells a true half from more than half). When digits were cut after the 19th, the value
    /// lies strictly between w and w + 1 units; if both round to the same double, so does it.
    ///
    /// Most of the time that is known without a second division. Cut digits mean w has 19
    /// digits, so w ≥ 10^18 > 2^59, and w + 1 adds 2^(s + shift) / 5^k < 2^(65 − 60) = 32 units
    /// to the 64-bit quotient, whose last 11 bits (2048 units) are cut. Rounding is monotonic:
    /// a quotient rounded up stays with that double, and one rounded down stays down when its
    /// cut bits lie more than that below the halfway point.
    static func quotient(_ w: UInt64, powerOfTen k: Int, truncated: Bool) -> Double? {
        guard w > 0, k >= 1, k <= 27 else { return nil }
        let low = nearest(w, dividedByPowerOfTen: k)
        guard truncated else { return low.value }
        if w >= 1_000_000_000_000_000_000 && (low.roundedUp || low.cut < 0x400 - Self.cutMargin) { return low.value }
        return nearest(w + 1, dividedByPowerOfTen: k).value == low.value ? low.value : nil
    }

    /// How far below the halfway point (in units of the quotient's 64 bits) a rounding down
    /// must lie for w + 1 to round down too: more than the 32 units w + 1 can add, and the unit
    /// a shifted quotient leaves out.
    private static let cutMargin: UInt64 = 40

    /// w / 10^k correctly rounded, whether it was rounded up, and the 11 bits of the quotient
    /// cut below the double's 53.
    private static func nearest(_ w: UInt64, dividedByPowerOfTen k: Int) -> (
        value: Double, roundedUp: Bool, cut: UInt64
    ) {
        let d = powersOfFive[k]
        // The shift that makes the quotient 63 or 64 bits long: w · 2^s < 2^(63 + bits(d)).
        let s = 63 + (64 - d.leadingZeroBitCount) - (64 - w.leadingZeroBitCount)
        let high = s >= 64 ? w << UInt64(s - 64) : w >> UInt64(64 - s)
        let low = s >= 64 ? 0 : w << UInt64(s)
        let (q, r) = d.dividingFullWidth((high: high, low: low))
        let shift = q.leadingZeroBitCount  // 0 or 1
        let n = q << UInt64(shift)
        var mantissa = n >> 11
        let cut = n & 0x7FF
        let up = cut > 0x400 || (cut == 0x400 && (r != 0 || mantissa & 1 == 1))
        if up { mantissa += 1 }
        var exponent = 11 - s - shift - k
        if mantissa == 1 << 53 {
            mantissa = 1 << 52
            exponent += 1
        }
        // A normal double (w / 10^k lies between 10^-27 and 2^64): its biased exponent, then the
        // mantissa without its leading 1.
        let bits = UInt64(exponent + 1075) << 52 | (mantissa & (1 << 52 - 1))
        return (Double(bitPattern: bits), up, cut)
    }

    /// Parses a non-negative integer.
    static func integer(_ raw: ByteSpan) -> Int? {
        let s = raw.trimmed
        guard s.count > 0, s.count <= 18 else { return nil }
        var v = 0
        for i in 0..<s.count {
            let b = s[i]
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + Int(b - UInt8(ascii: "0"))
        }
        return v
    }

    /// A parsed `xsd:dateTime`.
    struct DateTime {
        var date: Date
        /// False when the text had no zone designator (then it was taken as UTC).
        var hadZone: Bool
    }

    /// Parses `xsd:dateTime`: `[-]YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm]`, any fraction length,
    /// any offset, normalised to UTC. Returns nil with a reason when the text is malformed.
    static func dateTime(_ raw: ByteSpan) -> Result<DateTime, DateTimeFailure> {
        let s = raw.trimmed
        let n = s.count
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= n else { return nil }
            var v = 0
            for k in 0..<count {
                let b = s[i + k]
                guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
                v = v * 10 + Int(b - UInt8(ascii: "0"))
            }
            i += count
            return v
        }
        func expect(_ c: Unicode.Scalar) -> Bool {
            guard i < n, s[i] == UInt8(truncatingIfNeeded: c.value) else { return false }
            i += 1
            return true
        }
        var yearSign = 1
        if i < n && s[i] == UInt8(ascii: "-") {
            yearSign = -1
            i += 1
        }
        var yearDigits = 0
        while i + yearDigits < n, s[i + yearDigits] >= UInt8(ascii: "0"), s[i + yearDigits] <= UInt8(ascii: "9") {
            yearDigits += 1
        }
        // xsd:dateTime allows years of more than four digits (without leading zeros); Waymark
        // reads years -9999 to 9999, which every writer it knows uses and which it writes back the
        // same, and refuses the rest as out of range rather than read a time it cannot write.
        guard (4...18).contains(yearDigits) else { return .failure(.format) }
        guard yearDigits == 4, let y = digits(4) else { return .failure(.range("year (Waymark reads -9999 to 9999)")) }
        let year = y * yearSign
        guard expect("-"), let month = digits(2), expect("-"), let day = digits(2) else { return .failure(.format) }
        guard i < n, s[i] == UInt8(ascii: "T") || s[i] == UInt8(ascii: "t") else { return .failure(.format) }
        i += 1
        guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2) else {
            return .failure(.format)
        }
        var fraction = 0.0
        if i < n && s[i] == UInt8(ascii: ".") {
            let start = i + 1
            (fraction, i) = fractionOfSecond(s, from: start)
            guard i > start else { return .failure(.format) }
        }
        var offsetSeconds = 0
        var hadZone = false
        if i < n {
            if s[i] == UInt8(ascii: "Z") || s[i] == UInt8(ascii: "z") {
                i += 1
                hadZone = true
            } else if s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") {
                let sign = s[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = digits(2) else { return .failure(.format) }
                var om = 0
                if expect(":") {
                    guard let m = digits(2) else { return .failure(.format) }
                    om = m
                } else if let m = digits(2) {
                    om = m
                }
                guard oh < 14 || (oh == 14 && om == 0), om < 60 else { return .failure(.range("zone offset")) }
                offsetSeconds = sign * (oh * 3600 + om * 60)
                hadZone = true
            }
        }
        guard i == n else { return .failure(.format) }
        guard (1...12).contains(month) else { return .failure(.range("month")) }
        guard day >= 1, day <= daysIn(month: month, year: year) else { return .failure(.range("day")) }
        let endOfDay = hour == 24 && minute == 0 && second == 0 && fraction == 0
        guard hour < 24 || endOfDay else { return .failure(.range("hour")) }
        guard minute < 60 else { return .failure(.range("minute")) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let date = Date(timeIntervalSince1970: Double(seconds) + fraction)
        guard second < 60 else {
            // 23:59:60 UTC (in any zone) is a leap second, which xsd:dateTime cannot hold.
            let utcMinute = ((hour * 60 + minute - offsetSeconds / 60) % 1440 + 1440) % 1440
            return .failure(second == 60 && utcMinute == 1439 ? .leapSecond(date) : .range("second"))
        }
        return .success(DateTime(date: date, hadZone: hadZone))
    }

    /// The digits of a fraction of a second from `i`: their value, and where they end.
    @inline(__always)
    static func fractionOfSecond(_ s: ByteSpan, from start: Int) -> (Double, Int) {
        var i = start
        var fraction = 0.0
        var scale = 0.1
        while i < s.count, s[i] >= UInt8(ascii: "0"), s[i] <= UInt8(ascii: "9") {
            fraction += Double(s[i] - UInt8(ascii: "0")) * scale
            scale *= 0.1
            i += 1
        }
        return (fraction, i)
    }

    /// The day of the last `YYYY-MM-DD` read by ``commonTime(_:cache:)``.
    struct DayCache {
        var prefix: (UInt64, UInt16) = (0, 0)
        var days = Int.min
    }

    /// The forms loggers write, `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)` exactly (years 0000
    /// to 9999, no white space): the same instant ``dateTime(_:)`` gives, without its generality,
    /// reusing the day while it is the same as the last one. Nil for anything else, which
    /// ``dateTime(_:)`` must then read.
    @inline(__always)
    static func commonTime(_ s: ByteSpan, cache: inout DayCache) -> Date? {
        guard s.count >= 20, s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == UInt8(ascii: "T"),
            s[13] == UInt8(ascii: ":"), s[16] == UInt8(ascii: ":")
        else { return nil }
        var fraction = 0.0
        var i = 19
        if s[19] == UInt8(ascii: ".") {
            (fraction, i) = fractionOfSecond(s, from: 20)
            guard i > 20, i < s.count else { return nil }
        }
        var offset = 0
        if s[i] == UInt8(ascii: "Z") {
            guard i + 1 == s.count else { return nil }
        } else {
            guard i + 6 == s.count, s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-"),
                s[i + 3] == UInt8(ascii: ":"), let oh = two(s, i + 1), let om = two(s, i + 4),
                oh < 14 || (oh == 14 && om == 0), om < 60
            else { return nil }
            offset = (oh * 3600 + om * 60) * (s[i] == UInt8(ascii: "-") ? -1 : 1)
        }
        let raw = UnsafeRawPointer(s.start)
        let prefix = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        if prefix != cache.prefix || cache.days == Int.min {
            guard let c = two(s, 0), let y = two(s, 2), let month = two(s, 5), let day = two(s, 8) else { return nil }
            let year = c * 100 + y
            guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
            cache.prefix = prefix
            cache.days = daysFromCivil(year: year, month: month, day: day)
        }
        guard let hour = two(s, 11), let minute = two(s, 14), let second = two(s, 17), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let seconds = cache.days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// The two digits at `i` as a number.
    @inline(__always)
    private static func two(_ s: ByteSpan, _ i: Int) -> Int? {
        let a = s[i] &- 0x30
        let b = s[i + 1] &- 0x30
        guard a < 10, b < 10 else { return nil }
        return Int(a) * 10 + Int(b)
    }

    enum DateTimeFailure: Error {
        case format
        case range(String)
        /// 23:59:60 UTC, a leap second, which `xsd:dateTime` (as POSIX time) cannot hold: with
        /// the time of the second after it, as gpsd and the NMEA reader date one.
        case leapSecond(Date)

        var message: String {
            switch self {
            case .format: return "expected an ISO 8601 date-time such as 2024-05-01T12:30:00Z"
            case .range(let field): return "the \(field) is out of range"
            case .leapSecond(let next):
                return
                    "23:59:60 is a leap second, which GPX's xsd:dateTime cannot hold; --lenient reads it as the second after it, \(ValueFormatting.iso8601(next)), as gpsd and Waymark's NMEA reader date one"
            }
        }
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date for days since 1970-01-01.
    package static func civil(fromDays z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

/// Formatting of values for the writers: fixed decimals, ISO 8601 times.
public enum ValueFormatting {
    /// The date part of the last time written, reused while times stay on the same day.
    struct DayCache {
        var day = Int.min
        var prefix: (UInt64, UInt64) = (0, 0)  // "YYYY-MM-DDT", 11 bytes
    }

    /// Writes `date` as `YYYY-MM-DDThh:mm:ss.sssZ` (UTC, milliseconds) into `out`, reusing the
    /// date part from `cache` when the day has not changed.
    static func appendISO8601(_ date: Date, to out: ByteStore, cache: inout DayCache) {
        let scaled = date.timeIntervalSince1970 * 1000
        guard abs(scaled) < 2.5e14 else {
            appendISO8601(date, to: out)
            return
        }
        // Half away from zero, as rounded() does: from 1 on, adding the half is exact and the
        // conversion truncates, without a libm call.
        let millisInt = abs(scaled) >= 1 ? Int(scaled + (scaled < 0 ? -0.5 : 0.5)) : Int(scaled.rounded())
        let days = millisInt >= 0 ? millisInt / 86_400_000 : (millisInt - 86_399_999) / 86_400_000
        let millisOfDay = millisInt - days * 86_400_000
        if cache.day != days {
            let (y, _, _) = ValueParsing.civil(fromDays: days)
            guard y >= 0 && y <= 9999 else {
                appendISO8601(date, to: out)
                return
            }
            let tmp = ByteStore(capacity: 32)
            appendISO8601(date, to: tmp)
            cache.day = days
            withUnsafeMutableBytes(of: &cache.prefix) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: tmp.base, count: 11))
            }
        }
        out.reserve(24)
        withUnsafeBytes(of: cache.prefix) { out.append($0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 11) }
        appendTimeOfDay(millisOfDay, to: out)
    }

    /// Writes `hh:mm:ss.sssZ` for milliseconds since midnight.
    @inline(__always)
    private static func appendTimeOfDay(_ millisOfDay: Int, to out: ByteStore) {
        let secondOfDay = millisOfDay / 1000
        let millis = millisOfDay &- secondOfDay &* 1000
        let hour = secondOfDay / 3600
        let minuteOfDay = secondOfDay / 60
        let minute = minuteOfDay &- hour &* 60
        let second = secondOfDay &- minuteOfDay &* 60
        out.reserve(16)
        @inline(__always) func two(_ v: Int) -> UInt64 { UInt64(digitPair(v)) }
        let hundreds = millis / 100
        #if _endian(little)
            // "hh:mm:ss" and ".sssZ", as two words.
            let clock = two(hour) | 0x3A &<< 16 | two(minute) &<< 24 | 0x3A &<< 40 | two(second) &<< 48
            let fraction =
                0x2E | UInt64(hundreds &+ 0x30) &<< 8 | two(millis &- hundreds &* 100) &<< 16 | 0x5A &<< 32
            let t = UnsafeMutableRawPointer(out.base + out.count)
            t.storeBytes(of: clock, as: UInt64.self)
            t.storeBytes(of: fraction, toByteOffset: 8, as: UInt64.self)
        #else
            let t = out.base + out.count
            @inline(__always) func put(_ v: Int, at i: Int) {
                t[i] = UInt8(truncatingIfNeeded: v / 10) &+ 0x30
                t[i + 1] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
            }
            put(hour, at: 0)
            t[2] = UInt8(ascii: ":")
            put(minute, at: 3)
            t[5] = UInt8(ascii: ":")
            put(second, at: 6)
            t[8] = UInt8(ascii: ".")
            t[9] = UInt8(truncatingIfNeeded: hundreds) &+ 0x30
            put(millis &- hundreds &* 100, at: 10)
            t[12] = UInt8(ascii: "Z")
        #endif
        out.count += 13
    }

    /// Unix seconds of the years −9999 to 9999: the times Waymark reads (GPX, gpsd), and the
    /// times the session store takes (its `CHECK`s) and reads back.
    public static let readableSeconds: ClosedRange<Double> = -377_705_116_800...253_402_300_799

    /// The most milliseconds from 1970 a time is written with (about 285 million years either
    /// way); a `Date` further out, or not a number, is written as this bound. Readers refuse years
    /// beyond ±9999, so only a date made in code or a damaged store row gets here.
    static let writableMillis = 9e18

    /// Writes `date` as `YYYY-MM-DDThh:mm:ss.sssZ` (UTC, milliseconds) into `out`: a year before
    /// 1 BCE as `-YYYY` (four digits at least, as xsd:dateTime), a year after 9999 with its digits.
    /// Never traps, whatever the date.
    static func appendISO8601(_ date: Date, to out: ByteStore) {
        var totalMillis = (date.timeIntervalSince1970 * 1000).rounded()
        if totalMillis.isNaN { totalMillis = 0 }
        totalMillis = min(max(totalMillis, -writableMillis), writableMillis)
        let millisInt = Int(totalMillis)
        var seconds = millisInt / 1000
        var millis = millisInt % 1000
        if millis < 0 {
            millis += 1000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (y, mo, d) = ValueParsing.civil(fromDays: days)
        out.reserve(24)
        if y < 0 {
            out.append(UInt8(ascii: "-"))
            if -y > 9999 { out.append(String(-y)) } else { appendDigits(-y, width: 4, to: out) }
        } else if y > 9999 {
            out.append(String(y))
        } else {
            appendDigits(y, width: 4, to: out)
        }
        out.append(UInt8(ascii: "-"))
        appendDigits(mo, width: 2, to: out)
        out.append(UInt8(ascii: "-"))
        appendDigits(d, width: 2, to: out)
        out.append(UInt8(ascii: "T"))
        appendTimeOfDay(secondOfDay * 1000 + millis, to: out)
    }

    /// `YYYY-MM-DDThh:mm:ss.sssZ` for `date`.
    public static func iso8601(_ date: Date) -> String {
        let out = ByteStore(capacity: 32)
        appendISO8601(date, to: out)
        return out.string
    }

    @inline(__always)
    static func appendDigits(_ value: Int, width: Int, to out: ByteStore) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(v / divisor))
            v %= divisor
            divisor /= 10
        }
    }

    /// Writes `value` with at most `decimals` (0...9) fraction digits, trailing zeros removed,
    /// into `out`. Values too large for the integer path fall back to Swift's shortest form.
    static func appendFixed(_ value: Double, decimals: Int, to out: ByteStore) {
        // One specialised copy of the body per precision, so that its scale and divisions are
        // constants.
        switch decimals {
        case 0: appendFixed(value, Precision0.self, to: out)
        case 1: appendFixed(value, Precision1.self, to: out)
        case 2: appendFixed(value, Precision2.self, to: out)
        case 3: appendFixed(value, Precision3.self, to: out)
        case 4: appendFixed(value, Precision4.self, to: out)
        case 5: appendFixed(value, Precision5.self, to: out)
        case 6: appendFixed(value, Precision6.self, to: out)
        case 7: appendFixed(value, Precision7.self, to: out)
        case 8: appendFixed(value, Precision8.self, to: out)
        default:
            precondition(decimals == 9, "appendFixed takes 0 to 9 decimals")
            appendFixed(value, Precision9.self, to: out)
        }
    }

    private static func appendFixed<P: Precision>(_ value: Double, _: P.Type, to out: ByteStore) {
        let decimals = P.decimals
        let scale = ValueParsing.exactPower(decimals)
        let product = abs(value) * scale
        guard value.isFinite, product < 4.5e15 else {
            appendUnscaled(value, decimals: decimals, to: out)
            return
        }
        // Round half away from zero, on the exact product. The fraction of the rounded product is
        // exact (below 2^52 a double minus its integer part is), and the product's own rounding
        // error is below half its ulp, so it can only matter at an exact tie: there the fused
        // multiply-add says which side the true product lies on ("+0.5 then truncate" rounded
        // 0.49999999999999994 up).
        // The conversion truncates toward zero (one instruction; `rounded(.towardZero)` may call libm).
        var units = UInt64(Int64(product))
        let fractionOfProduct = product - Double(units)
        if fractionOfProduct > 0.5 || (fractionOfProduct == 0.5 && Self.productError(abs(value), scale, product) >= 0) {
            units += 1
        }
        let negative = value < 0 && units != 0
        if units == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        // Straight into the store: the sign, the integer digits, then the fraction without its
        // trailing zeros (and without the point when nothing is left of it). Digits are written
        // two at a time, right to left within each part.
        let divisor = UInt64(scale)
        let integer = units / divisor
        var fraction = units &- integer &* divisor
        out.reserve(32)
        var t = out.base + out.count
        if negative {
            t.pointee = UInt8(ascii: "-")
            t += 1
        }
        var integerDigits = 1
        var limit: UInt64 = 10
        while integer >= limit && integerDigits < 16 {
            integerDigits += 1
            limit &*= 10
        }
        writeDigits(integer, count: integerDigits, endingAt: t + integerDigits)
        t += integerDigits
        if fraction != 0 {
            #if _endian(little)
                if decimals <= 7 {
                    // All the fraction's digits in one word, then its trailing zeros dropped: a
                    // point and at most 7 digits, stored as one 8-byte word (the store has room).
                    let word = eightDigits(fraction)
                    let zeros = (word ^ 0x3030_3030_3030_3030).leadingZeroBitCount &>> 3
                    let digitsWord = (word &>> UInt64(8 &* (8 &- decimals))) &<< 8 | UInt64(UInt8(ascii: "."))
                    UnsafeMutableRawPointer(t).storeBytes(of: digitsWord, as: UInt64.self)
                    t += 1 &+ decimals &- zeros
                    out.count = t - out.base
                    return
                }
            #endif
            var fractionDigits = decimals
            while fraction % 10 == 0 {
                fraction /= 10
                fractionDigits -= 1
            }
            t.pointee = UInt8(ascii: ".")
            writeDigits(fraction, count: fractionDigits, endingAt: t + 1 + fractionDigits)
            t += 1 + fractionDigits
        }
        out.count = t - out.base
    }

    /// The 8 digits of `value` (below 10^8, zero-padded) as ASCII, the first in the lowest byte.
    @inline(__always)
    private static func eightDigits(_ value: UInt64) -> UInt64 {
        @inline(__always) func four(_ x: UInt64) -> UInt64 {
            let high = x / 100
            let low = x &- high &* 100
            return UInt64(digitPair(Int(high))) | UInt64(digitPair(Int(low))) &<< 16
        }
        let high = value / 10000
        return four(high) | four(value &- high &* 10000) &<< 32
    }

    /// The rounding error of `product`, the double nearest `value × scale`: their exact
    /// difference (a fused multiply-add computes it without rounding).
    @inline(never)
    private static func productError(_ value: Double, _ scale: Double, _ product: Double) -> Double {
        (-product).addingProduct(value, scale)  // fused: -product + value × scale, rounded once
    }

    /// A value too large for the integer path of ``appendFixed(_:decimals:to:)`` (its scaled
    /// magnitude is above 4.5 × 10^15; every double that large with `decimals` 0 is an integer),
    /// or not finite: the plain decimal digits of its shortest form, never an exponent (the GPX
    /// schema's `xsd:decimal` refuses one), or `null`.
    @inline(never)
    private static func appendUnscaled(_ value: Double, decimals: Int, to out: ByteStore) {
        guard value.isFinite else {
            out.append("null")
            return
        }
        appendPlain(value, maximumDecimals: decimals, to: out)
    }

    /// `value`'s shortest round-trip digits written as a plain decimal, without an exponent,
    /// with at most `maximumDecimals` fraction digits (rounded half away from zero on the shortest
    /// digits, which are the value's to the last digit shown).
    static func appendPlain(_ value: Double, maximumDecimals: Int = .max, to out: ByteStore) {
        // Swift's description is the shortest decimal that reads back as the same double:
        // "1e+16", "1.5e-10", "123.25".
        let text = value.description
        var digits: [UInt8] = []
        var pointAt = 0
        var exponent = 0
        var negative = false
        var seenPoint = false
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        }
        while let c = bytes.first {
            bytes = bytes.dropFirst()
            if c == UInt8(ascii: ".") {
                seenPoint = true
            } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                exponent = Int(String(decoding: bytes, as: UTF8.self)) ?? 0
                break
            } else {
                digits.append(c)
                if !seenPoint { pointAt += 1 }
            }
        }
        pointAt += exponent
        // The digits are d[0] d[1] … with the decimal point after `pointAt` of them.
        var fractionCount = max(0, digits.count - pointAt)
        if fractionCount > maximumDecimals {
            // Round the digit string half away from zero at `maximumDecimals`.
            let keep = pointAt + maximumDecimals
            var roundUp = false
            if keep >= 0 && keep < digits.count { roundUp = digits[keep] >= UInt8(ascii: "5") }
            if keep < 0 {
                digits = []
            } else {
                digits.removeLast(digits.count - keep)
            }
            if roundUp {
                var i = digits.count - 1
                while i >= 0 {
                    if digits[i] == UInt8(ascii: "9") {
                        digits[i] = UInt8(ascii: "0")
                        i -= 1
                    } else {
                        digits[i] += 1
                        break
                    }
                }
                if i < 0 {
                    digits.insert(UInt8(ascii: "1"), at: 0)
                    pointAt += 1
                }
            }
            fractionCount = max(0, digits.count - pointAt)
        }
        var integer: [UInt8] =
            pointAt <= 0
            ? []
            : Array(digits.prefix(pointAt)) + Array(repeating: UInt8(ascii: "0"), count: max(0, pointAt - digits.count))
        while integer.count > 1, integer.first == UInt8(ascii: "0") { integer.removeFirst() }
        if integer.isEmpty { integer = [UInt8(ascii: "0")] }
        var fraction: [UInt8] = []
        if fractionCount > 0 && !digits.isEmpty {
            fraction =
                Array(repeating: UInt8(ascii: "0"), count: max(0, -pointAt))
                + Array(digits.suffix(min(digits.count, fractionCount)))
        }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if negative && !(integer == [UInt8(ascii: "0")] && fraction.isEmpty) { out.append(UInt8(ascii: "-")) }
        integer.withUnsafeBufferPointer { out.append($0.baseAddress!, count: $0.count) }
        if !fraction.isEmpty {
            out.append(UInt8(ascii: "."))
            fraction.withUnsafeBufferPointer { out.append($0.baseAddress!, count: $0.count) }
        }
    }

    /// Writes the last `count` digits of `value` (with leading zeros) just before `end`.
    @inline(__always)
    private static func writeDigits(_ value: UInt64, count: Int, endingAt end: UnsafeMutablePointer<UInt8>) {
        var v = value
        var e = end
        var n = count
        while n >= 2 {
            let q = v / 100
            UnsafeMutableRawPointer(e - 2).storeBytes(
                of: digitPair(Int(truncatingIfNeeded: v &- q &* 100)), as: UInt16.self)
            e -= 2
            n -= 2
            v = q
        }
        if n == 1 {
            (e - 1).pointee = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
        }
    }

    /// The two ASCII digits of `v` (0...99) as they lie in memory, tens first.
    @inline(__always)
    private static func digitPair(_ v: Int) -> UInt16 {
        UnsafeRawPointer(digitPairs.utf8Start).loadUnaligned(fromByteOffset: v &* 2, as: UInt16.self)
    }

    /// "00", "01", … "99": two digits per lookup.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// Writes `value` in the shortest form that reads back as the same `Double`, as an
    /// `xsd:decimal` (never with an exponent).
    static func appendDecimal(_ value: Double, to out: ByteStore) {
        guard value.isFinite else {
            out.append("0")
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            appendInteger(Int64(value), to: out)
            return
        }
        // The shortest form, as plain digits: 1e16 is "10000000000000000", 1.5e-10
        // "0.00000000015".
        appendPlain(value, to: out)
    }

    static func appendInteger(_ value: Int64, to out: ByteStore) {
        var v = value
        if v < 0 {
            out.append(UInt8(ascii: "-"))
            v = -v
        }
        if v < 10 {
            out.append(UInt8(ascii: "0") + UInt8(v))
            return
        }
        var tmp: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &tmp) { raw in
            var i = raw.count
            while v > 0 {
                i -= 1
                raw[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            out.append(raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + i, count: raw.count - i)
        }
    }

    /// `value` with at most `decimals` fraction digits.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        let out = ByteStore(capacity: 32)
        appendFixed(value, decimals: decimals, to: out)
        return out.string
    }
}

/// A number of decimals known at compile time, for ``ValueFormatting/appendFixed(_:decimals:to:)``.
private protocol Precision {
    static var decimals: Int { get }
}
private enum Precision0: Precision { static var decimals: Int { 0 } }
private enum Precision1: Precision { static var decimals: Int { 1 } }
private enum Precision2: Precision { static var decimals: Int { 2 } }
private enum Precision3: Precision { static var decimals: Int { 3 } }
private enum Precision4: Precision { static var decimals: Int { 4 } }
private enum Precision5: Precision { static var decimals: Int { 5 } }
private enum Precision6: Precision { static var decimals: Int { 6 } }
private enum Precision7: Precision { static var decimals: Int { 7 } }
private enum Precision8: Precision { static var decimals: Int { 8 } }
private enum Precision9: Precision { static var decimals: Int { 9 } }
