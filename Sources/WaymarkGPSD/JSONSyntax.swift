/// Whether a line is one well-formed JSON object (RFC 8259), checked in one pass, in time
/// linear in its length and with nesting at most `maximumDepth` deep.
///
/// libgps's parser (gpsd 3.22's `gps_unpack`) can loop for ever: on a line that is not JSON
/// (`{"class":"TPV","alt":0.4,:[{"class":"DEVICE"}]}`), and on a DEVICES of more than four
/// devices, which gpsd itself sends. A client thread stuck in it could never be stopped, so
/// lines go to libgps only once this says they are JSON, and only TPV and SKY lines at all.
enum JSONSyntax {
    static let maximumDepth = 32

    static func isObject(_ bytes: [UInt8]) -> Bool { objectClass(bytes) != nil }

    /// The value of the object's own `"class"` member when the line is one well-formed JSON
    /// object ("" when it has none, or one that is not a plain string); nil when it is not.
    static func objectClass(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { b -> String? in
            var i = 0
            var found: Range<Int>?
            skipSpace(b, &i)
            guard i < b.count, b[i] == UInt8(ascii: "{"), value(b, &i, depth: 0, classValue: &found) else {
                return nil
            }
            skipSpace(b, &i)
            guard i == b.count else { return nil }
            guard let range = found else { return "" }
            return String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
        }
    }

    private static let classKey = Array("class".utf8)

    private static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
    }

    /// One value at `i`; `i` ends after it.
    /// At depth 0, `classValue` gets the bytes between the quotes of a `"class"` member whose
    /// value is a string without escapes.
    private static func value(
        _ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int, classValue: inout Range<Int>?
    ) -> Bool {
        skipSpace(b, &i)
        guard i < b.count else { return false }
        switch b[i] {
        case UInt8(ascii: "{"):
            guard depth < maximumDepth else { return false }
            i += 1
            skipSpace(b, &i)
            if i < b.count, b[i] == UInt8(ascii: "}") {
                i += 1
                return true
            }
            while true {
                skipSpace(b, &i)
                let keyStart = i
                guard string(b, &i) else { return false }
                let isClass =
                    depth == 0 && i - keyStart == classKey.count + 2
                    && b[(keyStart + 1)..<(i - 1)].elementsEqual(classKey)
                skipSpace(b, &i)
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
                i += 1
                skipSpace(b, &i)
                let valueStart = i
                guard value(b, &i, depth: depth + 1, classValue: &classValue) else { return false }
                if isClass, b[valueStart] == UInt8(ascii: "\""),
                    !b[valueStart..<i].contains(UInt8(ascii: "\\"))
                {
                    classValue = (valueStart + 1)..<(i - 1)
                }
                skipSpace(b, &i)
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard b[i] == UInt8(ascii: "}") else { return false }
                i += 1
                return true
            }
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { return false }
            i += 1
            skipSpace(b, &i)
            if i < b.count, b[i] == UInt8(ascii: "]") {
                i += 1
                return true
            }
            while true {
                guard value(b, &i, depth: depth + 1, classValue: &classValue) else { return false }
                skipSpace(b, &i)
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard b[i] == UInt8(ascii: "]") else { return false }
                i += 1
                return true
            }
        case UInt8(ascii: "\""):
            return string(b, &i)
        case UInt8(ascii: "t"): return word(b, &i, "true")
        case UInt8(ascii: "f"): return word(b, &i, "false")
        case UInt8(ascii: "n"): return word(b, &i, "null")
        default:
            return number(b, &i)
        }
    }

    private static func word(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ w: StaticString) -> Bool {
        let n = w.utf8CodeUnitCount
        guard b.count - i >= n else { return false }
        for k in 0..<n where b[i + k] != w.utf8Start[k] { return false }
        i += n
        return true
    }

    /// A string: no control characters, only JSON's escapes.
    private static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return false }
        i += 1
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return true
            }
            if c < 0x20 { return false }
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < b.count else { return false }
                switch b[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    guard b.count - i > 4 else { return false }
                    for k in 1...4 where !isHex(b[i + k]) { return false }
                    i += 5
                default: return false
                }
                continue
            }
            i += 1
        }
        return false
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { return false }
        if b[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count, isDigit(b[i]) else { return false }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { return false }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        return true
    }

    // MARK: - What libgps is given

    /// A well-formed object (``isObject(_:)``) cut down to what libgps's parser takes safely:
    /// its members whose values are strings, numbers, booleans or null, and, of a member named
    /// `keep` whose value is an array, the objects in it with their own such members. Whatever
    /// else nests (arrays, objects) is left out: nested objects that name a class make gpsd
    /// 3.22's `gps_unpack` loop for ever.
    static func flattened(_ bytes: [UInt8], keeping keep: String) -> [UInt8] {
        let keepKey = Array(keep.utf8)
        return bytes.withUnsafeBufferPointer { b in
            var out: [UInt8] = []
            out.reserveCapacity(b.count)
            var i = 0
            skipSpace(b, &i)
            copyMembers(b, &i, into: &out) { key, value -> [UInt8]? in
                guard b[value.lowerBound] == UInt8(ascii: "["), b[key].elementsEqual(keepKey) else { return nil }
                var part = Array(b[(key.lowerBound - 1)...key.upperBound])
                part.append(UInt8(ascii: ":"))
                part.append(UInt8(ascii: "["))
                var j = value.lowerBound + 1
                var first = true
                while true {
                    skipSpace(b, &j)
                    if b[j] == UInt8(ascii: "]") { break }
                    if b[j] == UInt8(ascii: "{") {
                        if !first { part.append(UInt8(ascii: ",")) }
                        first = false
                        copyMembers(b, &j, into: &part) { _, _ in nil }
                    } else {
                        skipValue(b, &j)
                    }
                    skipSpace(b, &j)
                    if b[j] == UInt8(ascii: ",") { j += 1 }
                }
                part.append(UInt8(ascii: "]"))
                return part
            }
            return out
        }
    }

    /// Copies the object at `i` (well-formed) into `out` with its scalar members; `nested` is
    /// offered each other member (its key's range without the quotes, and its value's range)
    /// and gives what to write for it, if anything. `i` ends after the object.
    private static func copyMembers(
        _ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, into out: inout [UInt8],
        nested: (Range<Int>, Range<Int>) -> [UInt8]?
    ) {
        i += 1  // {
        out.append(UInt8(ascii: "{"))
        var first = true
        while true {
            skipSpace(b, &i)
            if b[i] == UInt8(ascii: "}") {
                i += 1
                break
            }
            let keyStart = i
            skipValue(b, &i)
            let key = (keyStart + 1)..<(i - 1)
            skipSpace(b, &i)
            i += 1  // :
            skipSpace(b, &i)
            let valueStart = i
            skipValue(b, &i)
            let c = b[valueStart]
            if c != UInt8(ascii: "{") && c != UInt8(ascii: "[") {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out += b[keyStart..<(key.upperBound + 1)]
                out.append(UInt8(ascii: ":"))
                out += b[valueStart..<i]
            } else if let part = nested(key, valueStart..<i) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out += part
            }
            skipSpace(b, &i)
            if b[i] == UInt8(ascii: ",") { i += 1 }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Skips one value of well-formed JSON at `i`.
    private static func skipValue(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        switch b[i] {
        case UInt8(ascii: "\""):
            i += 1
            while b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            i += 1
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            repeat {
                switch b[i] {
                case UInt8(ascii: "\""):
                    skipValue(b, &i)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                i += 1
            } while depth > 0
        default:
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || c == 0x20 || c == 0x09
                    || c == 0x0A || c == 0x0D
                {
                    break
                }
                i += 1
            }
        }
    }
}
