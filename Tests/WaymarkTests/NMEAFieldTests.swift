import Testing

@testable import Waymark

/// ``NMEAField``'s readings of times and angles, which read most fields a word at a time, give
/// what a byte-by-byte reading of the same rules gives.
@Suite struct NMEAFieldTests {
    /// Fields of each length and shape the word paths take or refuse, and a few thousand more
    /// made of digits, points, signs and letters (the same ones on every run).
    static let fields: [String] = {
        var list = [
            "000000.00", "235959.99", "235960.5", "240000.00", "120000", "1200000", "120000.",
            "120000.1", "120000.12345678", "120000.123456789", "12a000.00", "120000,00", "120000.0a",
            "4808.2220644", "01134.5025957", "4808.22206441", "4808.", "4808", "480", "48", "4860.0000",
            "18000.0000000", "9000.0000001", "4808.2x20644", "-4808.2220", "4808.222064412345",
            "4808.2220644123456", "000000.000000000",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let alphabet = Array("0123456789012345678901234567890123456789..-+aZ ")
        for _ in 0..<4000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 59) % 18
            var text = ""
            var bits = state
            for i in 0..<length {
                if i % 8 == 0 {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    bits = state
                }
                text.append(alphabet[Int(bits % UInt64(alphabet.count))])
                bits /= UInt64(alphabet.count)
            }
            list.append(text)
        }
        return list
    }()

    @Test func timesReadAsWordsMatchAByteByByteReading() {
        for text in Self.fields {
            let bytes = Array(text.utf8)
            let got = bytes.withUnsafeBufferPointer { b in
                NMEAField.timeOfDay(ByteSpan(start: b.baseAddress ?? ByteSpan.empty.start, count: b.count))
            }
            #expect(got == Self.referenceTimeOfDay(bytes), "\(text)")
        }
    }

    @Test func anglesReadAsWordsMatchAByteByByteReading() {
        let north = Array("N".utf8)
        for text in Self.fields {
            let bytes = Array(text.utf8)
            let got = bytes.withUnsafeBufferPointer { b in
                north.withUnsafeBufferPointer { h in
                    NMEAField.angle(
                        ByteSpan(start: b.baseAddress ?? ByteSpan.empty.start, count: b.count),
                        ByteSpan(start: h.baseAddress!, count: 1), limit: 180)
                }
            }
            #expect(got == Self.referenceAngle(bytes), "\(text)")
        }
    }

    /// `hhmmss[.s…]` byte by byte: nanoseconds since midnight, digits past the ninth cut.
    static func referenceTimeOfDay(_ f: [UInt8]) -> Int64? {
        guard f.count >= 6, f.count <= 16 else { return nil }
        guard f[0..<6].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        func pair(_ i: Int) -> Int64 { Int64(f[i] - 0x30) * 10 + Int64(f[i + 1] - 0x30) }
        let (h, m, s) = (pair(0), pair(2), pair(4))
        guard h < 24, m < 60, s <= 60 else { return nil }
        var nanos: Int64 = 0
        if f.count > 6 {
            guard f[6] == UInt8(ascii: "."), f.count > 7 else { return nil }
            var scale: Int64 = 100_000_000
            for b in f[7...] {
                guard b >= 0x30 && b <= 0x39 else { return nil }
                nanos += Int64(b - 0x30) * scale
                scale /= 10
            }
        }
        return (h * 3600 + m * 60 + s) * 1_000_000_000 + nanos
    }

    /// `dddmm.mmmm` (north) byte by byte, as gpsd reads it.
    static func referenceAngle(_ f: [UInt8]) -> Double? {
        guard f.count >= 3 else { return nil }
        var i = 0
        var whole = 0
        while i < f.count, f[i] >= 0x30 && f[i] <= 0x39 {
            whole = whole * 10 + Int(f[i] - 0x30)
            i += 1
            guard i <= 6 else { return nil }
        }
        guard i >= 3 else { return nil }
        var fraction = 0.0
        if i < f.count {
            guard f[i] == UInt8(ascii: ".") else { return nil }
            let digits = f[(i + 1)...]
            if !digits.isEmpty {
                guard digits.count <= 15, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                let v = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
                fraction = Double(v) / ValueParsing.exactPower(digits.count)
            }
        }
        let minutes = Double(whole % 100) + fraction
        guard minutes < 60 else { return nil }
        let value = Double(whole / 100) + minutes * (1.0 / 60.0)
        return abs(value) <= 180 ? value : nil
    }
}
