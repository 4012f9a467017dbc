/// Reads one flat JSON object (string, number, `true`, `false` and `null` values, no escapes in
/// its strings) in one pass: what the audit log's lines are. A run's page reads every line of a
/// long run, and this is several times cheaper than `JSONDecoder`.
///
/// Anything else (a nested value, an escape, text that is not JSON) gives nil, and the caller
/// reads the line with `JSONDecoder`, which also names what is wrong. `FlatJSONTests` holds the
/// two to the same answers on every golden audit log.
enum FlatJSON {
    static func object(_ line: String) -> [String: SessionReportWriter.Value]? {
        var line = line
        return line.withUTF8 { bytes -> [String: SessionReportWriter.Value]? in
            var reader = Reader(bytes: bytes)
            return reader.object()
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D {
                i += 1
            }
        }

        mutating func byte(_ b: UInt8) -> Bool {
            skipSpace()
            guard i < bytes.count, bytes[i] == b else { return false }
            i += 1
            return true
        }

        /// A string without escapes or control characters.
        mutating func string() -> String? {
            guard byte(UInt8(ascii: "\"")) else { return nil }
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") || bytes[i] < 0x20 { return nil }
                i += 1
            }
            guard i < bytes.count else { return nil }
            defer { i += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard i + n <= bytes.count else { return false }
            for k in 0..<n where bytes[i + k] != text.utf8Start[k] { return false }
            i += n
            return true
        }

        /// A number as JSON writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() -> Double? {
            let start = i
            func digits() -> Int {
                let from = i
                while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
                return i - from
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let first = i
            guard digits() > 0 else { return nil }
            if bytes[first] == UInt8(ascii: "0") && i - first > 1 { return nil }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return nil }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { return nil }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { return nil }
            return value
        }

        mutating func value() -> SessionReportWriter.Value? {
            skipSpace()
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number().map { .number($0) }
            }
        }

        mutating func object() -> [String: SessionReportWriter.Value]? {
            guard byte(UInt8(ascii: "{")) else { return nil }
            var out: [String: SessionReportWriter.Value] = [:]
            if byte(UInt8(ascii: "}")) { return end() ? out : nil }
            while true {
                guard let key = string(), byte(UInt8(ascii: ":")), let v = value() else { return nil }
                out[key] = v
                if byte(UInt8(ascii: ",")) { continue }
                guard byte(UInt8(ascii: "}")) else { return nil }
                return end() ? out : nil
            }
        }

        mutating func end() -> Bool {
            skipSpace()
            return i == bytes.count
        }
    }
}
