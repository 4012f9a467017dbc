#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One token of a JSON text (RFC 8259), with its value.
enum JSONToken: Equatable {
    case beginObject
    case endObject
    case beginArray
    case endArray
    /// The name of an object member; its value comes next.
    case key(String)
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    /// The end of the input, after the one top-level value. Asking again gives `.end` again.
    case end
}

/// A streaming pull tokenizer for JSON (RFC 8259), for reading large GeoJSON files.
///
/// It pulls bytes from its source in chunks and holds one chunk plus the token being read,
/// never the whole input. It checks the whole grammar as it goes: white space, strings with
/// every escape, valid UTF-8, numbers without leading zeros or '+', the one top-level value and
/// nothing after it. A UTF-8 byte-order mark at the start is skipped. A `\uXXXX` escape naming
/// half of a UTF-16 surrogate pair without its other half reads as U+FFFD, the replacement
/// character, as Swift's `String(decoding:as:)` reads broken UTF-16.
///
/// Numbers are read straight from the bytes and rounded correctly: they are the same doubles
/// `Double(String)` gives. A number too large for a double reads as an infinity, as it does with
/// `Double(String)`; callers that need finite values check.
///
/// With `allowsSequence`, it reads a sequence of JSON texts instead of one: GeoJSON text
/// sequences (RFC 8142, where each text follows an ASCII record separator, 0x1E) and
/// newline-delimited JSON. Between top-level values, record separators count as white space,
/// and `.end` comes only at the end of the input (at once, for an empty one).
///
/// Two ways to read: ``next()`` returns a ``JSONToken`` with its value, and ``nextKind()``
/// returns only the kind, leaving the value in ``text``, ``number`` or ``bool``, so that a caller
/// can compare member names and read strings without making a `String`.
///
/// Errors are `GPXError`s that point at the offending byte: `.invalidValue` for a syntax error,
/// `.truncated` when the input ends early, `.limitExceeded` when nesting or a token passes the
/// limits, `.unsupportedEncoding` for UTF-16 or UTF-32 input. After an error every call throws
/// it again.
///
/// Confined to one thread and never handed out, it skips Swift's dynamic exclusivity checks on
/// its hot state (`@exclusivity(unchecked)`): no method holds an access to one of those
/// properties across a call that could touch it again.
final class JSONTokenizer {
    /// What a token is, without its value (see ``text``, ``number`` and ``bool``).
    enum Kind: UInt8, Equatable {
        case beginObject, endObject, beginArray, endArray, key, string, number, bool, null, end
    }

    /// What may come next.
    private enum State: UInt8 {
        /// Nothing read yet: a byte-order mark, then the top-level value.
        case start
        /// After '[': a value or ']'.
        case firstValue
        /// After '{': a member name or '}'.
        case firstKey
        /// After a member name: ':' and its value.
        case colon
        /// After a value inside an array or object: ',' or the closing bracket.
        case commaOrClose
        /// After the top-level value: only white space.
        case afterTop
        /// `.end` was returned.
        case finished
        /// An error was thrown; it is thrown again.
        case failed
    }

    /// What the tokenizer accepts, fixed when it is made.
    private struct Limits {
        var maxDepth: Int
        var maxTokenBytes: Int
        var allowsSequence: Bool
        /// How many bytes a read asks for.
        var chunkBytes: Int
    }

    /// The most recent token's place and value.
    private struct Current {
        var line = 1
        var column = 1
        var text = ByteSpan.empty
        var number = 0.0
        var bool = false
    }

    /// The name used in error messages.
    let fileName: String
    private let limits: Limits
    /// The deepest nesting of arrays and objects accepted.
    var maxDepth: Int { limits.maxDepth }
    /// The longest string (with its quotes) or number accepted, in bytes.
    var maxTokenBytes: Int { limits.maxTokenBytes }
    /// Whether the input may hold several top-level values (see the type's discussion).
    var allowsSequence: Bool { limits.allowsSequence }
    private var chunkBytes: Int { limits.chunkBytes }

    private let source: ByteSource

    // The window: buf[0..<end], with buf[end] == 0 as a sentinel that stops every scan.
    @exclusivity(unchecked) private var buf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var pos = 0
    @exclusivity(unchecked) private var end = 0
    @exclusivity(unchecked) private var eof = false
    /// Where the current token starts in the window.
    @exclusivity(unchecked) private var tokenStart = 0

    // Where buf[0] sits in the input, and the line being read: line breaks only occur in white
    // space between tokens (a string cannot hold one), so the white space skipper counts them all.
    @exclusivity(unchecked) private var baseOffset = 0
    @exclusivity(unchecked) private var currentLine = 1
    /// The offset in the input of the first byte of the current line.
    @exclusivity(unchecked) private var lineStart = 0

    @exclusivity(unchecked) private var state = State.start
    @exclusivity(unchecked) private var failure: (any Error)?
    /// The open arrays and objects, innermost last: 1 for an object, 0 for an array.
    @exclusivity(unchecked) private var containers: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var containerCapacity = 64
    /// How many arrays and objects are open.
    @exclusivity(unchecked) private(set) var depth = 0
    /// Set while skipping: numbers are checked but not converted.
    @exclusivity(unchecked) private var skipping = false
    /// Strings with escapes are decoded here.
    private let scratch = ByteStore(capacity: 256)

    @exclusivity(unchecked) private var current = Current()
    /// The 1-based line where the most recent token starts.
    var line: Int { current.line }
    /// The 1-based column, in bytes, where the most recent token starts.
    var column: Int { current.column }
    /// The UTF-8 text of the most recent `.key` or `.string`, escapes decoded. Valid until the
    /// next call.
    var text: ByteSpan { current.text }
    /// The value of the most recent `.number`.
    var number: Double { current.number }
    /// The value of the most recent `.bool`.
    var bool: Bool { current.bool }

    /// The text of the most recent `.key` or `.string`, as a `String`.
    var string: String { text.string }

    /// - Parameters:
    ///   - source: where the bytes come from.
    ///   - fileName: the name used in error messages.
    ///   - allowsSequence: whether the input may hold several top-level values, as a GeoJSON
    ///     text sequence or newline-delimited JSON does.
    ///   - maxDepth: the deepest nesting of arrays and objects accepted (at least 1).
    ///   - maxTokenBytes: the longest string (with its quotes) or number accepted, in bytes (at
    ///     least 64). The window holds at most about twice this plus 128 KiB.
    init(
        source: ByteSource, fileName: String, allowsSequence: Bool = false, maxDepth: Int = 512,
        maxTokenBytes: Int = 16 << 20
    ) {
        self.source = source
        self.fileName = fileName
        limits = Limits(
            maxDepth: max(1, maxDepth), maxTokenBytes: max(64, maxTokenBytes), allowsSequence: allowsSequence,
            chunkBytes: 64 << 10)
        capacity = limits.chunkBytes * 2
        buf = .allocate(capacity: capacity + 1)
        buf[0] = 0
        containers = .allocate(capacity: containerCapacity)
    }

    deinit {
        buf.deallocate()
        containers.deallocate()
    }

    // MARK: - Reading

    /// Reads the next token, with its value.
    ///
    /// A string of more than 15 bytes costs an allocation; loops over many strings (times, say)
    /// go faster with ``nextKind()`` and ``text``.
    func next() throws -> JSONToken {
        switch try nextKind() {
        case .beginObject: return .beginObject
        case .endObject: return .endObject
        case .beginArray: return .beginArray
        case .endArray: return .endArray
        case .key: return .key(text.string)
        case .string: return .string(text.string)
        case .number: return .number(number)
        case .bool: return .bool(bool)
        case .null: return .null
        case .end: return .end
        }
    }

    /// Reads the next token; its value is left in ``text``, ``number`` or ``bool``.
    func nextKind() throws -> Kind {
        do {
            return try advance()
        } catch {
            if state != .failed {
                state = .failed
                failure = error
            }
            throw error
        }
    }

    /// Skips the value that starts at the next token, whole: an object or array with everything
    /// in it, or one scalar. Call it where a value must come, such as after a `.key`.
    ///
    /// It reads on without keeping anything, checking the grammar as ``next()`` does; a closing
    /// bracket or the end of the input where the value should be is an error.
    func skipValue() throws {
        skipping = true
        defer { skipping = false }
        switch try nextKind() {
        case .beginObject, .beginArray:
            let outer = depth - 1
            while depth > outer { _ = try nextKind() }
        case .string, .number, .bool, .null:
            return
        case .key:
            throw fail(error("expected a value, found the member name \"\(text.string)\""))
        case .endObject, .endArray:
            throw fail(error("expected a value, found the end of the enclosing array or object"))
        case .end:
            throw fail(error("expected a value, found the end of the JSON text"))
        }
    }

    /// Makes `error` the one every later call throws.
    private func fail(_ error: GPXError) -> GPXError {
        state = .failed
        failure = error
        return error
    }

    /// Skips the rest of the innermost open array or object, up to and including its closing
    /// bracket. Does nothing at the top level.
    func skipContainer() throws {
        guard depth > 0 else { return }
        skipping = true
        defer { skipping = false }
        let outer = depth - 1
        while depth > outer { _ = try nextKind() }
    }

    /// An error at the start of the most recent token, for a value the caller cannot use.
    func error(_ message: String) -> GPXError {
        GPXError(code: .invalidValue, file: fileName, line: line, column: column, message: message)
    }

    // MARK: - The grammar

    @inline(__always)
    private func advance() throws -> Kind {
        var b = buf[pos]
        if b <= 0x20 { b = try skipWhitespace() }
        markToken()
        switch state {
        case .commaOrClose:
            if containers[depth &- 1] != 0 {
                if b == UInt8(ascii: ",") {
                    pos &+= 1
                    b = try nextNonSpace()
                    markToken()
                    return try memberName(b, afterComma: true)
                }
                if b == UInt8(ascii: "}") { return close(.endObject) }
                throw syntaxError(expected: "',' or '}' after an object member", at: pos)
            }
            if b == UInt8(ascii: ",") {
                pos &+= 1
                b = try nextNonSpace()
                markToken()
                return try value(b, afterComma: true)
            }
            if b == UInt8(ascii: "]") { return close(.endArray) }
            throw syntaxError(expected: "',' or ']' after an array element", at: pos)
        case .colon:
            guard b == UInt8(ascii: ":") else { throw syntaxError(expected: "':' after the member name", at: pos) }
            pos &+= 1
            b = try nextNonSpace()
            markToken()
            return try value(b, afterComma: false)
        case .firstValue:
            if b == UInt8(ascii: "]") { return close(.endArray) }
            return try value(b, afterComma: false)
        case .firstKey:
            if b == UInt8(ascii: "}") { return close(.endObject) }
            return try memberName(b, afterComma: false)
        case .afterTop:
            if allowsSequence { return try nextInSequence(b) }
            if b == 0 && pos == end {
                state = .finished
                return .end
            }
            throw invalid(at: pos, "unexpected \(describe(pos)) after the end of the JSON value")
        case .start:
            return try begin(b)
        case .finished:
            return .end
        case .failed:
            throw failure ?? error("the JSON tokenizer was used after an error")
        }
    }

    /// The first value, after an optional byte-order mark; refuses UTF-16 and UTF-32.
    private func begin(_ first: UInt8) throws -> Kind {
        var b = first
        // The first bytes whole, so that every way of reading the input sees the same.
        while end - pos < 4 && !eof { _ = try refill(keep: pos) }
        let atStart = baseOffset &+ pos == 0
        if b == 0xFE || b == 0xFF || (b == 0 && pos < end)
            || (atStart && b < 0x80 && pos + 1 < end && buf[pos + 1] == 0)
        {
            throw GPXError(
                code: .unsupportedEncoding, file: fileName, line: 1, column: 1,
                message: "JSON must be UTF-8 (RFC 8259), but this file looks like UTF-16 or UTF-32: convert it first"
            )
        }
        if b == 0xEF && atStart && end - pos >= 3 && buf[pos + 1] == 0xBB && buf[pos + 2] == 0xBF {
            pos += 3
            lineStart = 3  // columns count from after the mark, as editors show them
            b = try nextNonSpace()
            markToken()
        }
        if allowsSequence { return try nextInSequence(b) }
        if b == 0 && pos == end {
            throw truncated(
                at: pos,
                baseOffset &+ pos == 0
                    ? "the file is empty: expected a JSON value" : "expected a JSON value, found the end of the file")
        }
        return try value(b, afterComma: false)
    }

    /// In a sequence, between top-level values: skips record separators, then reads the next
    /// value or ends.
    private func nextInSequence(_ first: UInt8) throws -> Kind {
        var b = first
        while b == 0x1E {
            pos += 1
            b = try nextNonSpace()
        }
        markToken()
        if b == 0 && pos == end {
            state = .finished
            return .end
        }
        return try value(b, afterComma: false)
    }

    /// Reads the value that starts with `b` at `pos`.
    @inline(__always)
    private func value(_ b: UInt8, afterComma: Bool) throws -> Kind {
        switch b {
        case UInt8(ascii: "\""):
            try scanString()
            endScalar()
            return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
            endScalar()
            return .number
        case UInt8(ascii: "{"):
            try push(1)
            state = .firstKey
            return .beginObject
        case UInt8(ascii: "["):
            try push(0)
            state = .firstValue
            return .beginArray
        case UInt8(ascii: "t"):
            try literal("true")
            current.bool = true
            endScalar()
            return .bool
        case UInt8(ascii: "f"):
            try literal("false")
            current.bool = false
            endScalar()
            return .bool
        case UInt8(ascii: "n"):
            try literal("null")
            endScalar()
            return .null
        default:
            throw badValue(at: pos, afterComma: afterComma)
        }
    }

    @inline(__always)
    private func memberName(_ b: UInt8, afterComma: Bool) throws -> Kind {
        guard b == UInt8(ascii: "\"") else {
            if afterComma && b == UInt8(ascii: "}") {
                throw invalid(at: pos, "expected a member name after ',', found '}' (JSON allows no trailing comma)")
            }
            if b == UInt8(ascii: "'") {
                throw invalid(
                    at: pos, "expected a member name in double quotes, found \"'\" (JSON has no single quotes)")
            }
            throw syntaxError(expected: "a member name in double quotes", at: pos)
        }
        try scanString()
        state = .colon
        return .key
    }

    @inline(__always)
    private func endScalar() {
        state = depth == 0 ? .afterTop : .commaOrClose
    }

    @inline(__always)
    private func close(_ kind: Kind) -> Kind {
        pos &+= 1
        depth &-= 1
        state = depth == 0 ? .afterTop : .commaOrClose
        return kind
    }

    @inline(__always)
    private func push(_ isObject: UInt8) throws {
        if depth >= maxDepth { throw tooDeep() }
        if depth == containerCapacity { growContainers() }
        containers[depth] = isObject
        depth &+= 1
        pos &+= 1
    }

    @inline(never)
    private func tooDeep() -> GPXError {
        GPXError(
            code: .limitExceeded, file: fileName, line: line, column: column,
            message: "JSON nested deeper than \(maxDepth) arrays and objects, the limit")
    }

    @inline(never)
    private func growContainers() {
        let newCapacity = min(containerCapacity * 2, maxDepth)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: containers, count: depth)
        containers.deallocate()
        containers = grown
        containerCapacity = newCapacity
    }

    @inline(__always)
    private func markToken() {
        tokenStart = pos
        current.line = currentLine
        current.column = baseOffset &+ pos &- lineStart &+ 1
    }

    // MARK: - White space

    @inline(__always)
    private func nextNonSpace() throws -> UInt8 {
        let b = buf[pos]
        return b <= 0x20 ? try skipWhitespace() : b
    }

    /// Skips white space, counting lines, and returns the byte after it: 0 at the end of the
    /// input (then `pos == end`).
    private func skipWhitespace() throws -> UInt8 {
        while true {
            let b = buf[pos]
            switch b {
            case 0x20, 0x09, 0x0D:
                pos &+= 1
            case 0x0A:
                pos &+= 1
                currentLine &+= 1
                lineStart = baseOffset &+ pos
            case 0 where pos == end:
                if eof { return 0 }
                _ = try refill(keep: pos)
            default:
                return b
            }
        }
    }

    // MARK: - Literals

    private func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        while end - pos < n && !eof { _ = try refill(keep: pos) }
        let w = word.utf8Start
        var k = 0
        while k < n && pos + k < end && buf[pos + k] == w[k] { k += 1 }
        if k == n {
            pos += n
            return
        }
        if pos + k == end {
            throw truncated(at: pos, "expected '\(word)', found the end of the file")
        }
        throw invalid(at: pos, "expected '\(word)', found \(describe(pos))")
    }

    // MARK: - Numbers

    /// Reads the number at `pos` into ``number``.
    @inline(__always)
    private func scanNumber() throws {
        var r = parseNumber(from: pos)
        if r.stop == end && !eof {
            // It may go on past the window: take all of it in, then read it again.
            try extendNumber()
            r = parseNumber(from: pos)
        }
        if r.stop &- pos > maxTokenBytes { throw tooLong() }
        guard r.status <= 1 else { throw numberError(r.status, at: r.stop) }
        let start = pos
        pos = r.stop
        if skipping { return }
        current.number = r.status == 0 ? r.value : slowNumber(from: start, to: r.stop)
    }

    /// Reads a number per RFC 8259 from `start`, up to the first byte that cannot continue it.
    ///
    /// Status 0: the value is exact (at most 2^53 in its digits, a power of ten up to 22:
    /// Clinger's fast path); 1: well-formed, but its value needs ``slowNumber(from:to:)``;
    /// 2 to 5: malformed at `stop` (no digit after '-', a leading zero, no digit after '.', no
    /// digit in the exponent).
    @inline(__always)
    private func parseNumber(from start: Int) -> (stop: Int, status: UInt8, value: Double) {
        let base = buf
        var q = base + start
        let negative = q.pointee == UInt8(ascii: "-")
        if negative { q += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var d = q.pointee &- 0x30
        if d == 0 {
            q += 1
            digits = 1
            if q.pointee &- 0x30 < 10 { return (q - base, 3, 0) }
        } else if d < 10 {
            repeat {
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits &+= 1
                q += 1
                d = q.pointee &- 0x30
            } while d < 10
        } else {
            return (q - base, 2, 0)
        }
        var fraction = 0
        if q.pointee == UInt8(ascii: ".") {
            q += 1
            let first = q
            d = q.pointee &- 0x30
            while d < 10 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                q += 1
                d = q.pointee &- 0x30
            }
            fraction = q - first
            if fraction == 0 { return (q - base, 4, 0) }
            digits &+= fraction
        }
        var exponent = 0
        if q.pointee | 0x20 == UInt8(ascii: "e") {
            q += 1
            let expNegative = q.pointee == UInt8(ascii: "-")
            if expNegative || q.pointee == UInt8(ascii: "+") { q += 1 }
            d = q.pointee &- 0x30
            if d >= 10 { return (q - base, 5, 0) }
            repeat {
                if exponent < 100_000 { exponent = exponent &* 10 &+ Int(d) }
                q += 1
                d = q.pointee &- 0x30
            } while d < 10
            if expNegative { exponent = -exponent }
        }
        let stop = q - base
        let scale = exponent &- fraction
        if digits <= 19 && mantissa <= 1 << 53 && scale >= -22 && scale <= 22 {
            // Both exact, so one rounding: the correctly rounded value.
            let m = Double(Int64(bitPattern: mantissa))
            let v = scale >= 0 ? m * ValueParsing.exactPower(scale) : m / ValueParsing.exactPower(-scale)
            return (stop, 0, negative ? -v : v)
        }
        return (stop, 1, 0)
    }

    /// Reads on until the number at `pos` is whole in the window (or the input ends).
    private func extendNumber() throws {
        var i = end
        while true {
            // Past the limit, the number is too long whatever follows (parseNumber stops short
            // of here if it is malformed before it).
            if i &- tokenStart > maxTokenBytes { return }
            if i == end {
                if eof { return }
                i -= try refill(keep: tokenStart)
                continue
            }
            let b = buf[i]
            guard
                b &- 0x30 < 10 || b == UInt8(ascii: ".") || b | 0x20 == UInt8(ascii: "e") || b == UInt8(ascii: "-")
                    || b == UInt8(ascii: "+")
            else { return }
            i += 1
        }
    }

    /// The value of a well-formed number outside the fast path: long mantissas, large exponents.
    /// `ValueParsing.decimal` rounds correctly; past its reach, `strtod` does.
    @inline(never)
    private func slowNumber(from start: Int, to stop: Int) -> Double {
        if stop - start < 128, let v = ValueParsing.decimal(ByteSpan(start: buf + start, count: stop - start)) {
            return v
        }
        // strtod reads the text in place, ended by a 0 written over the byte after it for the call.
        let saved = buf[stop]
        buf[stop] = 0
        defer { buf[stop] = saved }
        return (buf + start).withMemoryRebound(to: CChar.self, capacity: stop - start + 1) { strtod($0, nil) }
    }

    @inline(never)
    private func numberError(_ status: UInt8, at i: Int) -> GPXError {
        if i >= end { return truncated(at: i, "the file ends inside a number") }
        switch status {
        case 2: return invalid(at: i, "expected a digit after '-', found \(describe(i))")
        case 3: return invalid(at: i, "a JSON number cannot have a leading zero: found \(describe(i)) after '0'")
        case 4: return invalid(at: i, "expected a digit after the decimal point, found \(describe(i))")
        default: return invalid(at: i, "expected a digit in the exponent, found \(describe(i))")
        }
    }

    // MARK: - Strings

    /// Reads the string whose opening quote is at `pos` into ``text``.
    private func scanString() throws {
        current.text = .empty  // until this string is whole: the scratch store may move
        var i = pos &+ 1
        var runStart = i
        var escaped = false
        while true {
            i = skipPlain(from: i)
            // Never past the limit, so that where the reads happen to end cannot change the error.
            if i &- tokenStart >= maxTokenBytes { throw tooLong() }
            let c = buf[i]
            if c == UInt8(ascii: "\"") {
                if escaped {
                    scratch.append(buf + runStart, count: i - runStart)
                    current.text = scratch.span
                } else {
                    current.text = ByteSpan(start: buf + runStart, count: i - runStart)
                }
                pos = i &+ 1
                return
            }
            if c == UInt8(ascii: "\\") {
                if end - i < 12 && !eof {
                    let shift = try refill(keep: tokenStart, lookahead: true)
                    i -= shift
                    runStart -= shift
                    continue
                }
                if !escaped {
                    escaped = true
                    scratch.count = 0
                }
                scratch.append(buf + runStart, count: i - runStart)
                i = try decodeEscape(at: i)
                runStart = i
                continue
            }
            if c >= 0x80 {
                if end - i < 4 && !eof {
                    let shift = try refill(keep: tokenStart, lookahead: true)
                    i -= shift
                    runStart -= shift
                    continue
                }
                i = try skipUTF8(at: i)
                continue
            }
            if c == 0 && i == end {
                if eof { throw truncated(at: tokenStart, "the file ends inside this string") }
                let shift = try refill(keep: tokenStart)
                i -= shift
                runStart -= shift
                continue
            }
            throw invalid(at: i, "\(describe(i)) must be escaped in a JSON string\(Self.escapeHint(c))")
        }
    }

    /// The first byte from `i` that is not plain string content: '"', '\', a control character
    /// (the sentinel at `end` is one) or a byte from 0x80.
    @inline(__always)
    private func skipPlain(from i: Int) -> Int {
        let base = buf
        var p = base + i
        #if _endian(little)
            let e = base + end
            while e - p >= 8 {
                let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let quote = w ^ (ones &* 0x22)
                let backslash = w ^ (ones &* 0x5C)
                // The classic tests for a zero byte and a byte below 0x20, and the high bits: the
                // lowest flagged byte is always a true one (borrows only run upwards).
                let special =
                    ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((w &- ones &* 0x20) & ~w) | w
                let flagged = special & 0x8080_8080_8080_8080
                if flagged != 0 { return p - base + flagged.trailingZeroBitCount &>> 3 }
                p += 8
            }
        #endif
        while true {
            let c = p.pointee
            if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return p - base }
            p += 1
        }
    }

    /// Decodes the escape at `i` (its backslash) into the scratch store: where the next byte is.
    private func decodeEscape(at i: Int) throws -> Int {
        let e = buf[i + 1]
        let simple: UInt8
        switch e {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let v = try hex4(at: i + 2)
            if v >= 0xD800 && v <= 0xDBFF {
                // A high surrogate: with a low one after it, one scalar; alone, U+FFFD. Each
                // test reads a byte only after the one before it was not the sentinel.
                if buf[i + 6] == UInt8(ascii: "\\") && buf[i + 7] == UInt8(ascii: "u"),
                    let low = hex4IfValid(at: i + 8), low >= 0xDC00 && low <= 0xDFFF
                {
                    scratch.appendScalar(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00))
                    return i + 12
                }
                scratch.appendScalar(0xFFFD)
            } else if v >= 0xDC00 && v <= 0xDFFF {
                scratch.appendScalar(0xFFFD)
            } else {
                scratch.appendScalar(v)
            }
            return i + 6
        default:
            if i + 1 >= end { throw truncated(at: tokenStart, "the file ends inside this string") }
            throw invalid(
                at: i,
                "invalid escape in a string: '\\' followed by \(describe(i + 1)); JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"
            )
        }
        scratch.append(simple)
        return i + 2
    }

    /// The four hex digits at `i`, read one by one so that none is read past the sentinel.
    private func hex4(at i: Int) throws -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let h = Self.hexValue(buf[i + k]) else {
                if i + k >= end { throw truncated(at: tokenStart, "the file ends inside this string") }
                throw invalid(at: i + k, "expected 4 hex digits after '\\u', found \(describe(i + k))")
            }
            v = v << 4 | h
        }
        return v
    }

    private func hex4IfValid(at i: Int) -> UInt32? {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let h = Self.hexValue(buf[i + k]) else { return nil }
            v = v << 4 | h
        }
        return v
    }

    @inline(__always)
    private static func hexValue(_ b: UInt8) -> UInt32? {
        if b &- 0x30 < 10 { return UInt32(b &- 0x30) }
        let lower = b | 0x20
        if lower &- 0x61 < 6 { return UInt32(lower &- 0x61 &+ 10) }
        return nil
    }

    /// Checks the UTF-8 sequence at `i` (Unicode's table 3-7: no overlong forms, no surrogates,
    /// nothing past U+10FFFF): where the next character starts.
    private func skipUTF8(at i: Int) throws -> Int {
        let b0 = buf[i]
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        let count: Int
        switch b0 {
        case 0xC2...0xDF: count = 1
        case 0xE0:
            count = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: count = 2
        case 0xED:
            count = 2
            high = 0x9F
        case 0xF0:
            count = 3
            low = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4:
            count = 3
            high = 0x8F
        default: throw notUTF8(at: i, badAt: i)
        }
        let b1 = buf[i + 1]
        guard b1 >= low && b1 <= high else { throw notUTF8(at: i, badAt: i + 1) }
        var k = 2
        while k <= count {
            guard buf[i + k] & 0xC0 == 0x80 else { throw notUTF8(at: i, badAt: i + k) }
            k += 1
        }
        return i + count + 1
    }

    @inline(never)
    private func notUTF8(at i: Int, badAt j: Int) -> GPXError {
        if j >= end { return truncated(at: tokenStart, "the file ends inside this string") }
        var bytes = ""
        for k in i...j { bytes += (k == i ? "" : " ") + Self.hexByte(buf[k]) }
        return invalid(at: i, "a string holds bytes that are not UTF-8 (\(bytes))")
    }

    private static func escapeHint(_ c: UInt8) -> String {
        switch c {
        case 0x0A: return " (as \\n)"
        case 0x0D: return " (as \\r)"
        case 0x09: return " (as \\t)"
        default: return " (as \\u00" + hexByte(c).dropFirst(2) + ")"
        }
    }

    // MARK: - The window

    /// Reads more input after `end`, first moving the bytes from `keep` on to the front when
    /// room is short (or when nothing is kept, which costs nothing): how far they moved, for the
    /// caller to shift its own indices.
    ///
    /// Refuses to keep more than ``maxTokenBytes`` of one token, so the window stays bounded;
    /// `lookahead` lets a string read the few bytes of an escape or a UTF-8 sequence that
    /// starts within the limit.
    @inline(never)
    private func refill(keep: Int, lookahead: Bool = false) throws -> Int {
        if eof { return 0 }
        let kept = end - keep
        if kept > maxTokenBytes && !lookahead { throw tooLong() }
        var shift = 0
        // The text of the last string may be in the window, which is about to change.
        current.text = .empty
        if keep > 0 && (kept == 0 || capacity - end < chunkBytes / 2) {
            (buf).update(from: buf + keep, count: kept)
            shift = keep
            baseOffset += keep
            end = kept
            pos -= keep
            tokenStart -= keep
        }
        if capacity - end < chunkBytes / 2 {
            let newCapacity = max(capacity * 2, end + chunkBytes)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + 1)
            grown.update(from: buf, count: end)
            buf.deallocate()
            buf = grown
            capacity = newCapacity
        }
        let room = capacity - end
        let n = try source.read(into: buf + end, capacity: room)
        guard n >= 0 && n <= room else {
            throw GPXError(
                code: .io, file: fileName, line: 0, column: 0,
                message: "the byte source returned \(n) bytes when asked for at most \(room)")
        }
        if n == 0 { eof = true } else { end += n }
        buf[end] = 0
        return shift
    }

    // MARK: - Errors

    @inline(never)
    private func invalid(at i: Int, _ message: String) -> GPXError {
        GPXError(
            code: .invalidValue, file: fileName, line: currentLine, column: baseOffset &+ i &- lineStart &+ 1,
            message: "invalid JSON: " + message)
    }

    /// Input that ends early. At `tokenStart`, the place is the token's (so a string that is
    /// never closed is shown where it opens); elsewhere it is the end of the input.
    @inline(never)
    private func truncated(at i: Int, _ message: String) -> GPXError {
        let place = i == tokenStart ? (line, column) : (currentLine, baseOffset &+ i &- lineStart &+ 1)
        return GPXError(
            code: .truncated, file: fileName, line: place.0, column: place.1, message: "truncated JSON: " + message)
    }

    @inline(never)
    private func syntaxError(expected: String, at i: Int) -> GPXError {
        if i >= end { return truncated(at: end, "expected \(expected), found the end of the file") }
        return invalid(at: i, "expected \(expected), found \(describe(i))")
    }

    @inline(never)
    private func badValue(at i: Int, afterComma: Bool) -> GPXError {
        let b = buf[i]
        if i >= end { return truncated(at: end, "expected a value, found the end of the file") }
        if afterComma && (b == UInt8(ascii: "]") || b == UInt8(ascii: "}")) {
            return invalid(at: i, "expected a value after ',', found \(describe(i)) (JSON allows no trailing comma)")
        }
        let hint: String
        switch b {
        case UInt8(ascii: "+"): hint = " (a JSON number has no '+' sign)"
        case UInt8(ascii: "."): hint = " (a JSON number needs a digit before '.')"
        case UInt8(ascii: "'"): hint = " (JSON strings take double quotes)"
        case UInt8(ascii: "N"), UInt8(ascii: "I"): hint = " (JSON has no NaN or Infinity)"
        default: hint = ""
        }
        return invalid(at: i, "expected a value, found \(describe(i))\(hint)")
    }

    @inline(never)
    private func tooLong() -> GPXError {
        GPXError(
            code: .limitExceeded, file: fileName, line: line, column: column,
            message: "JSON string or number longer than \(maxTokenBytes) bytes, the limit")
    }

    /// What is at `i`, for "found …": a word, a quoted character, or a named byte.
    @inline(never)
    private func describe(_ i: Int) -> String {
        readAhead(from: i)
        let b = buf[i]
        switch b {
        case 0x20: return "a space"
        case 0x0A: return "a line break"
        case 0x09: return "a tab"
        case UInt8(ascii: "'"): return "\"'\""
        case 0..<0x20, 0x7F: return "control character U+00" + Self.hexByte(b).dropFirst(2)
        default: break
        }
        if b >= 0x80 {
            guard let scalar = scalar(at: i) else { return "byte \(Self.hexByte(b)), which is not UTF-8" }
            let code = String(scalar.value, radix: 16, uppercase: true)
            return "'\(scalar)' (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))"
        }
        if Self.isWordByte(b) {
            var j = i
            while j < end && j - i < 24 && Self.isWordByte(buf[j]) { j += 1 }
            return "'" + String(decoding: UnsafeBufferPointer(start: buf + i, count: j - i), as: UTF8.self) + "'"
        }
        return "'\(UnicodeScalar(b))'"
    }

    /// The Unicode scalar whose UTF-8 starts at `i`, if it is whole and valid there.
    private func scalar(at i: Int) -> Unicode.Scalar? {
        let b = buf[i]
        let count = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
        guard i + count <= end else { return nil }
        var decoder = UTF8()
        var iterator = UnsafeBufferPointer(start: buf + i, count: count).makeIterator()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }

    /// Reads until 24 bytes from `i` are in the window (or the input ends), without moving
    /// anything, so that an error message shows the same whatever the sizes of the reads. Only
    /// for errors: a failing read just ends the look.
    private func readAhead(from i: Int) {
        while end - i < 24 && !eof {
            current.text = .empty
            if capacity == end {
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + 64 + 1)
                grown.update(from: buf, count: end)
                buf.deallocate()
                buf = grown
                capacity += 64
            }
            guard let n = try? source.read(into: buf + end, capacity: capacity - end), n > 0, n <= capacity - end
            else {
                eof = true
                break
            }
            end += n
            buf[end] = 0
        }
    }

    private static func isWordByte(_ b: UInt8) -> Bool {
        (b | 0x20) &- 0x61 < 26 || b &- 0x30 < 10 || b == UInt8(ascii: "_")
    }

    private static func hexByte(_ b: UInt8) -> String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return "0x" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 15)])
    }
}
