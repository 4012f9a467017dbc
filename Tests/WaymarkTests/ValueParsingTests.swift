import Foundation
import Testing

@testable import Waymark

/// Number and time parsing and formatting, against Swift's own correctly rounded conversions.
@Suite struct ValueParsingTests {
    static func span<R>(_ text: String, _ body: (ByteSpan) -> R) -> R {
        var text = text
        return text.withUTF8 { body(ByteSpan(start: $0.baseAddress ?? ByteSpan.empty.start, count: $0.count)) }
    }

    @Test func decimalsParseExactlyAsSwiftDoes() {
        var rng = SplitMix64(seed: 5)
        var checked = 0
        for _ in 0..<20_000 {
            let integerDigits = Int(rng.next() % 4)
            let fractionDigits = Int(rng.next() % 18)
            var text = rng.next() % 3 == 0 ? "-" : ""
            for _ in 0..<integerDigits { text.append(Character(String(rng.next() % 10))) }
            if fractionDigits > 0 || integerDigits == 0 {
                text += "."
                for _ in 0..<max(1, fractionDigits) { text.append(Character(String(rng.next() % 10))) }
            }
            guard let expected = Double(text) else { continue }
            let ours = Self.span(text) { ValueParsing.decimal($0) }
            #expect(ours == expected, "\(text)")
            checked += 1
        }
        #expect(checked > 15_000)
        for bad in ["", "-", ".", "1..2", "1e", "NaN", "inf", "0x10", "1,5", "--1", "1 2"] {
            #expect(Self.span(bad) { ValueParsing.decimal($0) } == nil, "\(bad)")
        }
        #expect(Self.span(" 12.5\n") { ValueParsing.decimal($0) } == 12.5)
        #expect(Self.span("1.5E3") { ValueParsing.decimal($0) } == 1500)
    }

    /// Numbers of 16 to 40 digits (Garmin Connect writes the exact expansions of binary values,
    /// 30 digits) are read correctly rounded, as the C library's strtod reads them.
    @Test func longDecimalsAreCorrectlyRounded() {
        var rng = SplitMix64(seed: 29)
        func strtodValue(_ text: String) -> Double { text.withCString { strtod($0, nil) } }
        var checkedByScanner = 0
        for _ in 0..<100_000 {
            let digits = 16 + Int(rng.next() % 25)
            let integerDigits = Int(rng.next() % 6)
            var text = rng.next() % 2 == 0 ? "-" : ""
            for i in 0..<digits {
                if i == integerDigits { text += i == 0 ? "0." : "." }
                // Runs of zeros and nines, where cut digits matter most.
                let r = rng.next() % 10
                text.append(Character(String(r < 3 ? 0 : r < 6 ? 9 : rng.next() % 10)))
            }
            let ours = Self.span(text) { ValueParsing.decimal($0) }
            #expect(ours == strtodValue(text), "\(text)")
            // The scanner's reading, from the bytes up to the first that is not the number's.
            let scanned = Array((text + "<").utf8).withUnsafeBufferPointer { b -> Double? in
                let (value, stop) = ValueParsing.longPlainDecimal(from: b.baseAddress!, to: b.baseAddress! + b.count)
                return stop == b.baseAddress! + b.count - 1 ? value : .nan
            }
            #expect(scanned == nil || scanned == ours, "\(text)")
            checkedByScanner += scanned == nil ? 0 : 1
        }
        #expect(checkedByScanner > 80_000)
        // Leading zeros, long integer parts and long runs of zeros, which the scanner measures
        // eight bytes at a time.
        for _ in 0..<50_000 {
            var text = String(repeating: "0", count: Int(rng.next() % 10))
            for _ in 0..<Int(rng.next() % 24) { text.append(Character(String(rng.next() % 10))) }
            if rng.next() % 4 > 0 {
                text += "." + String(repeating: "0", count: Int(rng.next() % 20))
                for _ in 0..<Int(rng.next() % 30) { text.append(Character(String(rng.next() % 10))) }
            }
            guard text.contains(where: \.isNumber) else { continue }
            let ours = Self.span(text) { ValueParsing.decimal($0) }
            let scanned = Array((text + "<").utf8).withUnsafeBufferPointer { b -> Double? in
                let (value, stop) = ValueParsing.longPlainDecimal(from: b.baseAddress!, to: b.baseAddress! + b.count)
                return stop == b.baseAddress! + b.count - 1 ? value : .nan
            }
            #expect(scanned == nil || scanned == ours, "\(text)")
        }
        // Text of 128 bytes or more is not a number to either (the fuzzer found the scanner
        // reading a 130-digit longitude the general path refuses).
        let long = "2." + String(repeating: "8", count: 127) + "0"
        #expect(Self.span(long) { ValueParsing.decimal($0) } == nil)
        Array((long + "\"").utf8).withUnsafeBufferPointer { b in
            #expect(ValueParsing.longPlainDecimal(from: b.baseAddress!, to: b.baseAddress! + b.count).value == nil)
        }
        // The exact expansions of doubles read back as those doubles.
        for _ in 0..<20_000 {
            let x = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * 360
            let text = String(format: "%.60f", x)
            #expect(Self.span(text) { ValueParsing.decimal($0) } == x, "\(text)")
        }
        // Exact halves between neighbouring doubles round to the even one.
        for j in 0..<8 {
            for _ in 0..<2_000 {
                // x in [2^(52-j), 2^(53-j)): its neighbours are 2^-j apart; n/2^(j+1) is halfway.
                let x = (UInt64(1) << UInt64(52 - j)) | (rng.next() >> UInt64(12 + j))
                let n = x << UInt64(j + 1) | 1
                let whole = n >> UInt64(j + 1)
                var fraction = String((n & ((1 << UInt64(j + 1)) - 1)) * UInt64(pow(5.0, Double(j + 1))))
                fraction = String(repeating: "0", count: j + 1 - fraction.count) + fraction
                let text = "\(whole).\(fraction)"
                let expected = strtodValue(text)
                let ours = Self.span(text) { ValueParsing.decimal($0) }
                #expect(ours == expected, "\(text)")
                // Round half to even: the result's last bit is 0.
                #expect(expected.significandBitPattern & 1 == 0, "\(text)")
            }
        }
    }

    /// A 19-digit `w` whose cut digits follow (`w.5`, `w.0001`, `w.9999` in its last place) is
    /// read as strtod reads the text, for runs of consecutive `w`: each step moves the quotient's
    /// cut bits by at most 32 of their 2048 units, so every run crosses halfway points, where the
    /// second division cannot be skipped, and the points just below them, where it can.
    @Test func cutDigitsRoundAsStrtodDoesAcrossHalfwayPoints() {
        var rng = SplitMix64(seed: 41)
        var decided = 0
        for k in 1...27 {
            for run in 0..<3 {
                // One run just above 10^18, where a step moves the cut bits the most.
                let range: UInt64 = run == 0 ? 150_000_000_000_000_000 : 9_000_000_000_000_000_000
                let first = 1_000_000_000_000_000_000 + rng.next() % range
                for step in 0..<1_500 {
                    let w = first &+ UInt64(step)
                    guard w >= 1_000_000_000_000_000_000 else { continue }
                    let digits = String(w)
                    for tail in ["5", "0001", "9999"] {
                        // w · 10^-k with the cut digits after it: 0.000ww… when k passes 19.
                        let point = digits.count - k
                        let text =
                            point > 0
                            ? String(digits.prefix(point)) + "." + String(digits.suffix(k)) + tail
                            : "0." + String(repeating: "0", count: -point) + digits + tail
                        let expected = text.withCString { strtod($0, nil) }
                        let ours = ValueParsing.quotient(w, powerOfTen: k, truncated: true)
                        #expect(ours == nil || ours == expected, "\(text)")
                        if ours != nil { decided += 1 }
                    }
                }
            }
        }
        // Nearly every one is decided (nil sends the text to strtod).
        #expect(decided > 27 * 3 * 1_500 * 3 * 9 / 10)
    }

    @Test func plainDecimalsStopWhereTheNumberEndsAndMatchSwift() {
        // Digits are read eight at a time while eight bytes remain, then one at a time: every
        // length of each part, every distance from the end of the buffer, and several
        // terminators, against Swift's correctly rounded parser.
        var rng = SplitMix64(seed: 17)
        for integerDigits in 0...17 {
            for fractionDigits in [-1, 0, 1, 2, 3, 7, 8, 9, 12, 16] {
                for tail in 0...9 {
                    let sign = ["", "-", "+"][Int(rng.next() % 3)]
                    var digits = ""
                    for _ in 0..<integerDigits { digits.append(Character(String(rng.next() % 10))) }
                    var text = sign + digits
                    var fraction = ""
                    if fractionDigits >= 0 {
                        for _ in 0..<fractionDigits { fraction.append(Character(String(rng.next() % 10))) }
                        text += "." + fraction
                    }
                    // A point after a number without one would start its fraction.
                    let terminators =
                        fractionDigits < 0 ? ["\"", "<", " ", "x", "/", ":"] : ["\"", "<", ".", "x", ":"]
                    let terminator = terminators[Int(rng.next() % UInt64(terminators.count))]
                    let buffer = Array((text + String(repeating: terminator, count: tail)).utf8)
                    let (value, stop) = buffer.withUnsafeBufferPointer { b in
                        let (v, s) = ValueParsing.plainDecimal(from: b.baseAddress!, to: b.baseAddress! + b.count)
                        return (v, s - b.baseAddress!)
                    }
                    let count = integerDigits + max(0, fractionDigits)
                    if count == 0 || count > 15 {
                        #expect(value == nil, "\(text)")
                        continue
                    }
                    let expected = Double(sign + (digits.isEmpty ? "0" : digits) + "." + fraction + "0")!
                    #expect(value == expected, "\(text) + \(tail) × \(terminator)")
                    #expect(stop == text.utf8.count, "\(text) + \(tail) × \(terminator)")
                }
            }
        }
    }

    @Test func byteComparisonFindsADifferenceAnywhere() {
        // Words, an overlapping last word, halves and single bytes: every length up to past the
        // memcmp cut-off, equal, and with one byte changed at each position.
        let a = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        for n in 0...80 {
            var b = a
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    #expect(ByteSpan.bytesEqual(x.baseAddress!, y.baseAddress!, n), "length \(n)")
                }
            }
            for position in 0..<n {
                b[position] ^= 0x40
                a.withUnsafeBufferPointer { x in
                    b.withUnsafeBufferPointer { y in
                        #expect(!ByteSpan.bytesEqual(x.baseAddress!, y.baseAddress!, n), "length \(n), at \(position)")
                    }
                }
                b[position] ^= 0x40
            }
        }
    }

    @Test func timesFormatAsTheCLibraryDoes() {
        // The cached day and the time of day written as two words, against gmtime_r: random
        // instants from year 1 to 9999, and runs of nearby ones that share the day.
        var rng = SplitMix64(seed: 29)
        var cache = ValueFormatting.DayCache()
        let store = ByteStore()
        var millis: Int64 = 0
        for i in 0..<30_000 {
            if i % 100 == 0 {
                millis = Int64(bitPattern: rng.next() % 315_537_897_600_000) - 62_135_596_800_000
            } else {
                millis += Int64(rng.next() % 90_000_000)
            }
            store.count = 0
            ValueFormatting.appendISO8601(Date(timeIntervalSince1970: Double(millis) / 1000), to: store, cache: &cache)
            var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
            let fraction = Int(millis - Int64(seconds) * 1000)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let expected = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction)
            #expect(store.string == expected, "\(millis)")
        }
    }

    /// Years -9999 to 9999 read and write back the same, negative ones with four digits as
    /// xsd:dateTime wants; longer years are refused as out of range, not read.
    @Test func yearsFromMinus9999To9999ReadAndWriteBack() throws {
        for text in [
            "-9999-01-01T00:00:00.000Z", "-0044-03-15T12:00:00.000Z", "-0001-12-31T23:59:59.999Z",
            "0000-02-29T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
        ] {
            let read = Self.span(text) { ValueParsing.dateTime($0) }
            guard case .success(let time) = read else {
                Issue.record("\(text) was refused")
                continue
            }
            #expect(ValueFormatting.iso8601(time.date) == text)
            let store = ByteStore()
            var cache = ValueFormatting.DayCache()
            ValueFormatting.appendISO8601(time.date, to: store, cache: &cache)
            #expect(store.string == text, "the cached writer")
        }
        for text in ["10000-01-01T00:00:00Z", "-10000-01-01T00:00:00Z", "123456789-05-01T08:00:00Z"] {
            let read = Self.span(text) { ValueParsing.dateTime($0) }
            guard case .failure(.range(let field)) = read else {
                Issue.record("\(text): \(read)")
                continue
            }
            #expect(field.hasPrefix("year"))
        }
    }

    /// A date no reader gives (made in code, or a damaged store row) is still written, never a
    /// trap: out at the bound of about 285 million years.
    @Test func anyDateIsWrittenWithoutATrap() {
        for seconds in [1e300, -1e300, .infinity, -.infinity, .nan, 3.2e17, -3.2e17, 4e12, -4e12] {
            let text = ValueFormatting.iso8601(Date(timeIntervalSince1970: seconds))
            #expect(text.hasSuffix("Z"), "\(seconds): \(text)")
        }
        #expect(ValueFormatting.iso8601(Date(timeIntervalSince1970: 4e12)) == "128724-12-15T07:06:40.000Z")
        #expect(ValueFormatting.iso8601(Date(timeIntervalSince1970: -4e12)) == "-124785-01-17T16:53:20.000Z")
    }

    /// One checked conversion for every duration Waymark makes from a number: nanoseconds in
    /// 64 bits, so at most 9e9 s either way; not a number is nothing.
    @Test func durationsBeyond285YearsAreRefusedNotTrapped() {
        #expect(Duration.checked(seconds: 9e9) == .seconds(9_000_000_000))
        #expect(Duration.checked(seconds: -9e9) == .seconds(-9_000_000_000))
        #expect(Duration.checked(seconds: 1.5) == .milliseconds(1500))
        for bad in [9.3e9, 1e15, -9.3e9, .infinity, .nan] { #expect(Duration.checked(seconds: bad) == nil, "\(bad)") }
        #expect(DurationText.parse("9e9") == .seconds(9_000_000_000))
        for text in ["9.3e9", "1e14", "100000000000000000000s", "2922789d", "9999999999h"] {
            #expect(DurationText.parse(text) == nil, "\(text)")
        }
    }

    /// A recorded span read from a store or a file may be anything (a row with a time of 1e300
    /// trapped `render --session --format text`).
    @Test func textDurationsOfAnySizeAreWrittenWithoutATrap() {
        #expect(TextRenderer.duration(3725) == "1h 2m 5s")
        #expect(TextRenderer.duration(-65) == "−1m 5s")
        #expect(TextRenderer.duration(-1e300) == "less than −31 million years")
        #expect(TextRenderer.duration(1e300) == "more than 31 million years")
        #expect(TextRenderer.duration(.nan) == "more than 31 million years")
    }

    @Test func byteStoreAppendsEveryLengthExactly() {
        // Short appends take word-sized copies; each length must land exactly, after any offset.
        let source = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for offset in 0..<9 {
            for n in 0...40 {
                let store = ByteStore(capacity: 16)
                let prefix = [UInt8](repeating: 0xEE, count: offset)
                prefix.withUnsafeBufferPointer { store.append($0.baseAddress!, count: offset) }
                source.withUnsafeBufferPointer { store.append($0.baseAddress! + 3, count: n) }
                store.append(UInt8(0x7F))
                let bytes = Array(UnsafeBufferPointer(start: store.base, count: store.count))
                #expect(bytes == prefix + Array(source[3..<(3 + n)]) + [0x7F], "offset \(offset), length \(n)")
            }
        }
    }

    @Test func fixedFormattingRoundsToTheRequestedDecimals() {
        var rng = SplitMix64(seed: 6)
        let store = ByteStore()
        for _ in 0..<20_000 {
            let magnitude = [1.0, 180.0, 10_000.0, 1e-6][Int(rng.next() % 4)]
            let value = (Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1) * magnitude
            let decimals = Int(rng.next() % 10)
            store.count = 0
            ValueFormatting.appendFixed(value, decimals: decimals, to: store)
            let text = store.string
            let back = Double(text)!
            let step = pow(10, -Double(decimals))
            #expect(abs(back - value) <= step / 2 * (1 + 1e-9) + abs(value) * 1e-15, "\(value) → \(text)")
            #expect(!text.contains("e") && !(text.contains(".") && text.hasSuffix("0")), "\(text)")
            if let dot = text.firstIndex(of: ".") {
                #expect(text.distance(from: dot, to: text.endIndex) - 1 <= decimals, "\(text)")
            }
        }
        for (value, decimals, text) in [
            (0.0, 7, "0"), (-0.00000001, 7, "0"), (-1.5, 0, "-2"), (2.5, 0, "3"), (180.0, 7, "180"),
            (-77.0201617, 7, "-77.0201617"), (0.05, 2, "0.05"), (1234.5, 3, "1234.5"), (-0.5, 1, "-0.5"),
            (100.0, 0, "100"), (99.99, 1, "100"), (10.0, 2, "10"), (7.0, 9, "7"), (0.000000001, 9, "0.000000001"),
            (123_456_789.123, 2, "123456789.12"), (-9.99, 7, "-9.99"),
        ] {
            store.count = 0
            ValueFormatting.appendFixed(value, decimals: decimals, to: store)
            #expect(store.string == text, "\(value)")
        }
    }
}

/// Issue 14, item 9: numbers are rounded correctly and written as plain decimals the GPX schema's
/// `xsd:decimal` accepts, at every edge.
@Suite struct NumberFormattingEdgeTests {
    @Test func fixedDecimalsRoundTheExactValueHalfAwayFromZero() {
        // The largest double below 0.5: "+0.5 then truncate" made it 1.
        #expect(ValueFormatting.fixed(0.49999999999999994, decimals: 0) == "0")
        #expect(ValueFormatting.fixed(-0.49999999999999994, decimals: 0) == "0")
        #expect(ValueFormatting.fixed(0.5, decimals: 0) == "1")
        #expect(ValueFormatting.fixed(-0.5, decimals: 0) == "-1")
        #expect(ValueFormatting.fixed(2.5, decimals: 0) == "3")
        // 1.005 is 1.00499999999999989…: two decimals give 1 (the product 100.49999… is below the tie).
        #expect(ValueFormatting.fixed(1.005, decimals: 2) == "1")
        // 0.125 is exact: a true tie, away from zero.
        #expect(ValueFormatting.fixed(0.125, decimals: 2) == "0.13")
        #expect(ValueFormatting.fixed(-0.125, decimals: 2) == "-0.13")
        // A product that rounds up to the tie although the value is below it: 0.145 is
        // 0.14499999999999999…, and 0.145 × 100 is 14.5 exactly in doubles.
        #expect(0.145 * 100 == 14.5)
        #expect(ValueFormatting.fixed(0.145, decimals: 2) == "0.14")
        #expect(ValueFormatting.fixed(-0.0, decimals: 3) == "0")
        #expect(ValueFormatting.fixed(-0.0004, decimals: 3) == "0")
    }

    @Test func largeAndTinyValuesAreWrittenWithoutAnExponent() {
        #expect(ValueFormatting.fixed(1e16, decimals: 1) == "10000000000000000")
        #expect(ValueFormatting.fixed(-1e16, decimals: 3) == "-10000000000000000")
        // Above 2^53, doubles are integers; every digit of the shortest form, then zeros.
        #expect(ValueFormatting.fixed(9_007_199_254_740_992, decimals: 0) == "9007199254740992")
        #expect(ValueFormatting.fixed(1.2345e20, decimals: 2) == "123450000000000000000")
        #expect(ValueFormatting.fixed(4.6e15, decimals: 1) == "4600000000000000")
        #expect(ValueFormatting.fixed(1.5e-10, decimals: 7) == "0")
        #expect(ValueFormatting.fixed(.infinity, decimals: 2) == "null")
        func decimal(_ v: Double) -> String {
            let out = ByteStore(capacity: 64)
            ValueFormatting.appendDecimal(v, to: out)
            return out.string
        }
        #expect(decimal(1.5e-10) == "0.00000000015")
        #expect(decimal(-1.5e-10) == "-0.00000000015")
        #expect(decimal(1e16) == "10000000000000000")
        #expect(decimal(1e300).count == 301 && !decimal(1e300).contains("e"))
        #expect(decimal(123.25) == "123.25")
        #expect(decimal(.leastNonzeroMagnitude).hasPrefix("0.0000") && !decimal(.leastNonzeroMagnitude).contains("e"))
        // Every one of them reads back as the same double, and matches xsd:decimal.
        for v in [
            1.5e-10, -1.5e-10, 1e16, 1e300, 123.25, .leastNonzeroMagnitude, 0.1, 1.7976931348623157e308,
            2.2250738585072014e-308,
        ] {
            let text = decimal(v)
            #expect(Double(text) == v, "\(text)")
            #expect(text.wholeMatch(of: /-?[0-9]+(\.[0-9]+)?/) != nil, "\(text)")
        }
    }

    /// The integer path against the plain path on many random values: the same digits wherever
    /// both apply.
    @Test func theFastPathAgreesWithCorrectRounding() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let decimals = Int.random(in: 0...9, using: &rng)
            let v = Double.random(in: -1e6...1e6, using: &rng) / Double([1, 10, 1000, 1e5].randomElement(using: &rng)!)
            let fast = ValueFormatting.fixed(v, decimals: decimals)
            // The oracle: Foundation's correctly rounded "%.*f" (round half even on the exact
            // binary value, which has no ties at these magnitudes but exact ones), trailing zeros off.
            var oracle = String(format: "%.\(decimals)f", v)
            if oracle.contains(".") {
                while oracle.hasSuffix("0") { oracle.removeLast() }
                if oracle.hasSuffix(".") { oracle.removeLast() }
            }
            if oracle == "-0" { oracle = "0" }
            // Only an exact tie of the true product may differ (half away from zero against half even).
            let scale = pow(10, Double(decimals))
            let product = abs(v) * scale
            let exactTie =
                product.truncatingRemainder(dividingBy: 1) == 0.5 && (-product).addingProduct(abs(v), scale) == 0
            if !exactTie { #expect(fast == oracle, "\(v) with \(decimals): \(fast) vs \(oracle)") }
        }
    }
}
