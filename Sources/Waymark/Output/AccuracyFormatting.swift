extension ValueFormatting {
    /// The significant digits an accuracy keeps when it is written.
    public static let accuracyDigits = 6

    /// Writes an accuracy (metres, m/s, degrees) with the precision it came with: up to
    /// ``accuracyDigits`` significant digits, trailing zeros dropped, never an exponent.
    ///
    /// An RTK fix's 0.014 m stays 0.014 (a fixed decimal would have made it 0, a perfect fix),
    /// 3.25 m stays 3.25, and an accuracy computed as DOP × UERE (6.000000000000001) is 6. A value
    /// that is not zero is never written as 0.
    static func appendAccuracy(_ value: Double, to out: ByteStore) {
        let magnitude = abs(value)
        guard value.isFinite, magnitude != 0, magnitude < 100_000 else {
            appendFixed(value, decimals: 0, to: out)
            return
        }
        // The decimals that leave `accuracyDigits` significant digits.
        var decimals = accuracyDigits - 1
        var bound = 1.0
        if magnitude >= 1 {
            while magnitude >= bound * 10 {
                bound *= 10
                decimals -= 1
            }
        } else {
            while magnitude < bound && decimals < 400 {
                bound /= 10
                decimals += 1
            }
        }
        if decimals <= 9 {
            appendFixed(value, decimals: decimals, to: out)
        } else {
            appendPlain(value, maximumDecimals: decimals, to: out)
        }
    }

    /// An accuracy (metres, m/s, degrees) as Waymark writes it, with the precision it came
    /// with: up to ``accuracyDigits`` significant digits, trailing zeros dropped, never an
    /// exponent, and never 0 for a value that is not zero (`0.014` stays `0.014`, `3.25` stays
    /// `3.25`, DOP × UERE's `5.500000000000001` is `5.5`).
    public static func accuracy(_ value: Double) -> String {
        let out = ByteStore(capacity: 32)
        appendAccuracy(value, to: out)
        return out.string
    }
}

extension JSONFields {
    /// Appends `,"key":value` for an accuracy (``ValueFormatting/appendAccuracy(_:to:)``), or
    /// `null` when it is not a number.
    func accuracy(_ key: StaticString, _ value: Double) {
        out.append(",\"")
        out.append(key)
        out.append("\":")
        if value.isFinite {
            ValueFormatting.appendAccuracy(value, to: out)
        } else {
            out.append("null")
        }
    }
}
