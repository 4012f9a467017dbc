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
