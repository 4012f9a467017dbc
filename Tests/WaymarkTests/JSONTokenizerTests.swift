import Foundation
import Testing

@testable import Waymark

/// The streaming JSON tokenizer under the GeoJSON reader: it accepts exactly the JSON texts of
/// RFC 8259, reads every value as Foundation's `JSONSerialization` does and every number bit for
/// bit as `Double(String)` does, reads the same whatever the sizes of its source's reads, calls
/// input that ends early truncated, and says where each error is.
///
/// These checks come from the standalone driver the tokenizer was written against (which
/// compared it with Python's `json` module on a generated corpus); Foundation stands in for
/// Python here. Reading in small pieces matters because the tokenizer keeps a window over its
/// input and a token may straddle two reads.
@Suite struct JSONTokenizerTests {
    /// What reading a text gave: a line per token, then the error that stopped it, if any.
    struct Outcome: Equatable {
        /// `{ } [ ]`, `K` and `S` with the text of a key or string (scalars outside printable
        /// ASCII as `\u{…}`, so that equal lines mean equal scalars), `N` with the number, `T F Z`
        /// for true, false and null, `E` for the end; and complaints, should `.end` or the error
        /// not come again when asked again.
        var tokens: [String] = []
        var error: GPXError?

        /// The tokens, then the error's code and place.
        var summary: [String] { tokens + (error.map { ["\($0.code)@\($0.line):\($0.column)"] } ?? []) }
    }

    static func read(
        _ bytes: [UInt8], pieceSize: Int = .max, allowsSequence: Bool = false, maxDepth: Int = 512,
        maxTokenBytes: Int = 16 << 20
    ) -> Outcome {
        let t = JSONTokenizer(
            source: MemoryByteSource(bytes, pieceSize: pieceSize), fileName: "t.json", allowsSequence: allowsSequence,
            maxDepth: maxDepth, maxTokenBytes: maxTokenBytes)
        var outcome = Outcome()
        do {
            while true {
                let kind = try t.nextKind()
                switch kind {
                case .beginObject: outcome.tokens.append("{")
                case .endObject: outcome.tokens.append("}")
                case .beginArray: outcome.tokens.append("[")
                case .endArray: outcome.tokens.append("]")
                case .key: outcome.tokens.append("K" + escaped(t.string))
                case .string: outcome.tokens.append("S" + escaped(t.string))
                case .number: outcome.tokens.append("N\(t.number)")
                case .bool: outcome.tokens.append(t.bool ? "T" : "F")
                case .null: outcome.tokens.append("Z")
                case .end:
                    outcome.tokens.append("E")
                    let again = try t.nextKind()
                    let token = try t.next()
                    if again != .end || token != .end { outcome.tokens.append("the end did not come again") }
                    return outcome
                }
            }
        } catch let error as GPXError {
            outcome.error = error
            do { _ = try t.nextKind() } catch let again as GPXError where again == error { return outcome } catch {}
            outcome.tokens.append("the error did not come again")
        } catch {
            outcome.tokens.append("an error that is not a GPXError: \(error)")
        }
        return outcome
    }

    static func read(_ text: String, pieceSize: Int = .max, allowsSequence: Bool = false) -> Outcome {
        read(Array(text.utf8), pieceSize: pieceSize, allowsSequence: allowsSequence)
    }

    static func escaped(_ s: String) -> String {
        s.unicodeScalars.map {
            $0.value >= 0x20 && $0.value < 0x7F && $0 != "\\" ? String($0) : "\\u{\(String($0.value, radix: 16))}"
        }.joined()
    }

    // MARK: - Accepted and rejected texts

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        /// Nil when the text is JSON; else the code of the error it gets.
        var error: GPXError.Code?
        var testDescription: String { name }

        static func y(_ name: String, _ text: String) -> Case { Case(name: "y_" + name, bytes: Array(text.utf8)) }
        static func y(_ name: String, _ bytes: [UInt8]) -> Case { Case(name: "y_" + name, bytes: bytes) }
        static func n(_ name: String, _ text: String, _ error: GPXError.Code = .invalidValue) -> Case {
            Case(name: "n_" + name, bytes: Array(text.utf8), error: error)
        }
        static func n(_ name: String, _ bytes: [UInt8], _ error: GPXError.Code = .invalidValue) -> Case {
            Case(name: "n_" + name, bytes: bytes, error: error)
        }
    }

    static let cases: [Case] = [
        .y("empty_array", "[]"), .y("empty_object", "{}"),
        .y("ws_everywhere", " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } }\r\n "), .y("top_number", "-0"),
        .y("top_string", "\"x\""), .y("top_true", "true"), .y("top_null_ws", " null "),
        .y("exponents", "[1e5,1E5,1e+5,1e-5,1.5E-05,0e0,-0.0e-0]"),
        .y("escapes", #"["\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC\ud83d\ude00"]"#),
        .y("raw_utf8", "[\"\u{E9}\u{20AC}\u{1F600}\u{10FFFF}\u{7F}\"]"),
        .y("bom", [0xEF, 0xBB, 0xBF] + Array("{}".utf8)), .y("duplicate_keys", #"{"a":1,"a":2}"#),
        .y("lone_high_surrogate", #"["\ud800"]"#), .y("lone_low_surrogate", #"["\udc00x"]"#),
        .y("nested_500", String(repeating: "[", count: 500) + String(repeating: "]", count: 500)),
        .y("big_integer", "123456789012345678901234567890"), .y("huge_exponents", "[1e999999999999,-1e-99999999999]"),
        .y("empty_key", #"{"":""}"#),
        .n("empty", "", .truncated), .n("only_whitespace", " \n ", .truncated),
        .n("bom_only", [0xEF, 0xBB, 0xBF], .truncated), .n("trailing_comma_in_array", "[1,]"),
        .n("trailing_comma_in_object", #"{"a":1,}"#), .n("leading_comma", "[,1]"), .n("double_comma", "[1,,2]"),
        .n("missing_comma", "[1 2]"), .n("missing_colon", #"{"a" 1}"#), .n("unquoted_key", "{a:1}"),
        .n("single_quotes", "['a']"), .n("number_as_key", "{1:1}"), .n("array_as_key", "{[]:1}"),
        .n("comma_after_key", #"{"a",1}"#), .n("colon_in_array", "[1:2]"), .n("leading_zero", "[01]"),
        .n("negative_leading_zero", "-012"), .n("plus_sign", "[+1]"), .n("exponent_sign_only", "[1e+]"),
        .n("point_without_digits", "[1.]"), .n("point_first", "[.5]"), .n("minus_alone", "[-]"),
        .n("minus_space", "[- 1]"), .n("nan", "[NaN]"), .n("infinity", "[-Infinity]"), .n("hex", "[0x1F]"),
        .n("capital_true", "[True]"), .n("short_null", "[nul]"), .n("true_and_more", "[truex]"),
        .n("raw_newline_in_string", "[\"a\nb\"]"), .n("raw_tab_in_string", "[\"a\tb\"]"),
        .n("raw_nul_in_string", [0x5B, 0x22, 0x00, 0x22, 0x5D]), .n("unknown_escape", #"["\x"]"#),
        .n("escaped_single_quote", #"["\'"]"#), .n("escaped_raw_newline", "[\"\\\n\"]"),
        .n("short_unicode_escape", #"["\u12"]"#), .n("bad_unicode_escape", #"["\u12G4"]"#),
        .n("unterminated_string", #"["abc"#, .truncated), .n("dangling_backslash", #"["\"#, .truncated),
        .n("unclosed_array", "[1", .truncated), .n("unclosed_object", #"{"a":1"#, .truncated),
        .n("mismatched_brackets", "[1}"), .n("extra_close", "[1]]"), .n("two_values", "1 2"),
        .n("trailing_garbage", "{} x"), .n("line_comment", "[1] // c"), .n("block_comment", "[/* c */ 1]"),
        .n("invalid_utf8", [0x5B, 0x22, 0xFF, 0x22, 0x5D]), .n("overlong_utf8", [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D]),
        .n("utf8_surrogate", [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D]),
        .n("utf8_past_U+10FFFF", [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D]),
        .n("cut_utf8_sequence", [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D]), .n("utf8_outside_a_string", "[\u{E9}]"),
        .n("no_break_space_as_white_space", "[\u{A0}1]"), .n("form_feed_as_white_space", "[\u{0C}1]"),
        .n("utf16le_with_bom", [0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], .unsupportedEncoding),
        .n("utf16le", [0x5B, 0x00, 0x5D, 0x00], .unsupportedEncoding),
        .n("utf16be", [0x00, 0x5B, 0x00, 0x5D], .unsupportedEncoding),
        .n("nul_at_the_top", [0x00], .unsupportedEncoding),
        .n("nested_600", String(repeating: "[", count: 600) + String(repeating: "]", count: 600), .limitExceeded),
    ]

    @Test(arguments: cases)
    func eachHandWrittenTextIsAcceptedOrRejectedAsRFC8259Says(_ c: Case) {
        let whole = Self.read(c.bytes)
        #expect(whole.error?.code == c.error, "\(whole.summary)")
        for piece in [1, 2, 3] {
            #expect(Self.read(c.bytes, pieceSize: piece) == whole, "pieces of \(piece)")
        }
    }

    /// Hard cases from the literature: halfway points, the extremes, long digit strings.
    @Test func hardNumbersReadAsDoubleStringReadsThem() throws {
        let texts = [
            "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9406564584124654e-324", "2.4703282292062327e-324",
            "2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
            "9007199254740993", "9007199254740992.5", "9007199254740993.0000000001", "0.1", "0.30000000000000004",
            "1e23", "8.41e21", "123456789012345678901234567890e-30", "7.038531e-26", "1e-400", "-1e400", "1e+0",
            "0e0", "-0", "-0.0e-0", "0.000000000000000000000000000000000000000001",
            "1" + String(repeating: "0", count: 400),
            "0." + String(repeating: "0", count: 400) + "1", "1" + String(repeating: "0", count: 30) + "e-330",
        ]
        let expected = ["["] + texts.map { "N\(Double($0)!)" } + ["]", "E"]
        for piece in [Int.max, 1, 7] {
            #expect(Self.read("[" + texts.joined(separator: " ,\n") + "]", pieceSize: piece).tokens == expected)
        }
    }

    /// A byte-order mark inside a string is a character like any other. (swift-corelibs-foundation
    /// drops one that follows an escape, and the generated documents below escape it for that.)
    @Test func aByteOrderMarkInsideAStringIsKept() {
        #expect(
            Self.read("[\"\u{FEFF}\", \"\\n\u{FEFF}\"]").tokens == ["[", "S\\u{feff}", "S\\u{a}\\u{feff}", "]", "E"])
    }

    // MARK: - Generated documents against Foundation

    /// A generated JSON value. Strings (keys too) come with their JSON text, quotes, escapes
    /// and all; numbers are their text.
    enum Value: Sendable {
        case object([(key: Text, value: Value)])
        case array([Value])
        case string(Text)
        case number(String)
        case bool(Bool)
        case null
    }

    typealias Text = (value: String, json: String)

    struct Document: Sendable {
        var value: Value
        /// Seeds the white space between tokens.
        var spacing: UInt64
        var text: String {
            var r = PropertyRandom(seed: spacing)
            var out = ""
            JSONTokenizerTests.render(value, into: &out, &r)
            return out + JSONTokenizerTests.space(&r)
        }
    }

    static func space(_ r: inout PropertyRandom) -> String {
        guard r.bool(0.4) else { return "" }
        return (0..<r.int(1...3)).map { _ in r.pick([" ", "\t", "\n", "\r", "\r\n", "  ", "\n    "]) }.joined()
    }

    static func render(_ value: Value, into out: inout String, _ r: inout PropertyRandom) {
        out += space(&r)
        switch value {
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                out += (i == 0 ? "" : ",") + space(&r) + member.key.json + space(&r) + ":"
                render(member.value, into: &out, &r)
            }
            out += space(&r) + "}"
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                render(element, into: &out, &r)
            }
            out += space(&r) + "]"
        case .string(let text): out += text.json
        case .number(let text): out += text
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        }
        out += space(&r)
    }

    static func generateValue(_ r: inout PropertyRandom, depth: Int) -> Value {
        let roll = r.int(0...99)
        let containers = depth == 0 ? 85 : depth < 5 ? 40 : 0
        if roll < containers / 2 {
            var keys = Set<String>()
            let members = (0..<r.pick([0, 1, 2, 3, 5, 8])).compactMap { _ -> (key: Text, value: Value)? in
                let key = generateText(&r)
                // Foundation keeps one of equal keys, so the keys of an object differ.
                guard keys.insert(key.value).inserted else { return nil }
                return (key, generateValue(&r, depth: depth + 1))
            }
            return .object(members)
        }
        if roll < containers {
            return .array((0..<r.pick([0, 1, 2, 3, 5, 10])).map { _ in generateValue(&r, depth: depth + 1) })
        }
        switch r.int(0...9) {
        case 0...4: return .number(generateNumber(&r))
        case 5...8: return .string(generateText(&r))
        default: return r.pick([.bool(true), .bool(false), .null])
        }
    }

    /// Numbers of every shape: coordinates, long mantissas, exponents near the ends of the
    /// doubles' range (but none past it, which Foundation refuses).
    static func generateNumber(_ r: inout PropertyRandom) -> String {
        func digits(_ n: Int, leading: Bool = false) -> String {
            String((0..<n).map { i in Character(String(i == 0 && leading ? r.int(1...9) : r.int(0...9))) })
        }
        if r.bool(0.3) { return r.pick(["", "-"]) + String(r.int(0...180)) + "." + digits(r.int(1...9)) }
        var s = r.pick(["", "", "-"])
        s += r.bool(0.2) ? "0" : digits(r.pick([1, 2, 3, 5, 10, 15, 16, 17, 18, 19, 20, 25, 40]), leading: true)
        if r.bool(0.6) { s += "." + digits(r.pick([1, 2, 5, 7, 12, 15, 16, 17, 20, 30])) }
        guard r.bool(0.4) else { return s }
        let exponent = r.pick([digits(1), digits(2), String(r.pick([22, 23, 300, 307, 308, 309, 320, 324, 330, 400]))])
        let withExponent = s + r.pick(["e", "E"]) + r.pick(["", "+", "-"]) + r.pick(["", "00"]) + exponent
        return Double(withExponent)!.isFinite ? withExponent : s
    }

    static let characters: [Unicode.Scalar] = [
        "a", "b", "Z", " ", "/", "\"", "\\", "\u{08}", "\u{0C}", "\n", "\r", "\t", "\u{01}", "\u{1F}", "\u{7F}",
        "\u{E9}", "\u{DF}", "\u{20AC}", "\u{4E2D}", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "\u{1F600}", "\u{10FFFF}",
        "\u{10000}", "0", "{", "]", ",", ":",
    ]

    /// A string of characters from every class, each written plainly or escaped in one of the
    /// ways JSON allows.
    static func generateText(_ r: inout PropertyRandom) -> Text {
        func hex(_ v: UInt32) -> String {
            let digits = String(v, radix: 16, uppercase: r.bool())
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }
        var value = ""
        var json = "\""
        for _ in 0..<r.pick([0, 1, 3, 8, 20, 60]) {
            let c = r.bool() ? r.pick(characters) : Unicode.Scalar(UInt8(r.int(0x20...0x7E)))
            value.unicodeScalars.append(c)
            let escape = r.int(0...99)
            let short: [UInt32: String] = [0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"]
            if c == "\u{FEFF}" {
                // Escaped: Foundation on Linux drops a raw one after an escape (see above).
                json += hex(c.value)
            } else if c == "\"" {
                json += r.pick(["\\\"", "\\u0022"])
            } else if c == "\\" {
                json += r.pick(["\\\\", "\\u005C", "\\u005c"])
            } else if c.value < 0x20 {
                json += escape < 50 ? short[c.value] ?? hex(c.value) : hex(c.value)
            } else if escape < 15 {
                let v = c.value
                json += v > 0xFFFF ? hex(0xD800 + (v - 0x10000) >> 10) + hex(0xDC00 + (v - 0x10000) & 0x3FF) : hex(v)
            } else if c == "/" && escape < 30 {
                json += "\\/"
            } else {
                json.unicodeScalars.append(c)
            }
        }
        return (value, json + "\"")
    }

    static func shrinkValue(_ value: Value) -> [Value] {
        switch value {
        case .object(let members):
            return members.map(\.value) + shrinkArray(members, minimum: 0).map { Value.object($0) }
        case .array(let elements):
            return elements + shrinkArray(elements, minimum: 0).map { Value.array($0) }
        default:
            return []
        }
    }

    static let documents = Property<Document>(
        name: "generated JSON documents",
        generate: { r in Document(value: JSONTokenizerTests.generateValue(&r, depth: 0), spacing: r.next()) },
        shrink: { d in JSONTokenizerTests.shrinkValue(d.value).map { Document(value: $0, spacing: d.spacing) } },
        describe: { $0.text })

    /// The texts of the numbers in `value`, in the order they are written.
    static func numbers(in value: Value) -> [String] {
        switch value {
        case .object(let members): return members.flatMap { numbers(in: $0.value) }
        case .array(let elements): return elements.flatMap(numbers(in:))
        case .number(let text): return [text]
        default: return []
        }
    }

    /// Walks the tokens of one value beside Foundation's reading of it, noting what differs.
    static func compare(
        _ tokens: inout ArraySlice<JSONToken>, _ object: Any, _ numbers: inout ArraySlice<String>, at path: String,
        _ problems: inout Problems
    ) {
        guard let token = tokens.popFirst() else { return problems.expect(false, "\(path): no more tokens") }
        switch token {
        case .beginObject:
            guard let dictionary = object as? [String: Any] else { return problems.expect(false, "\(path): an object") }
            var count = 0
            while case .key(let key) = tokens.first {
                tokens.removeFirst()
                count += 1
                guard let member = dictionary[key] else { return problems.expect(false, "\(path): no key \(key)") }
                compare(&tokens, member, &numbers, at: path + "." + key, &problems)
            }
            problems.expect(tokens.popFirst() == .endObject && count == dictionary.count, "\(path): the object's end")
        case .beginArray:
            guard let array = object as? [Any] else { return problems.expect(false, "\(path): an array") }
            for (i, element) in array.enumerated() {
                compare(&tokens, element, &numbers, at: path + "[\(i)]", &problems)
            }
            problems.expect(tokens.popFirst() == .endArray, "\(path): the array's end")
        case .string(let s):
            problems.expect((object as? String).map { Array($0.utf8) == Array(s.utf8) } == true, "\(path): \(s)")
        case .number(let n):
            let want = numbers.popFirst().flatMap(Double.init)
            problems.expect(n.bitPattern == want?.bitPattern, "\(path): \(n) is not Double(String)'s \(want ?? .nan)")
            let f = (object as? NSNumber).map { String(cString: $0.objCType) == "c" ? .nan : $0.doubleValue } ?? .nan
            problems.expect(f == n || abs(f - n) <= 1e-12 * abs(n), "\(path): Foundation reads \(f), not \(n)")
        case .bool(let b):
            let f = object as? NSNumber
            problems.expect(f.map { String(cString: $0.objCType) == "c" && $0.boolValue == b } == true, "\(path): \(b)")
        case .null:
            problems.expect(object is NSNull, "\(path): null")
        default:
            problems.expect(false, "\(path): \(token) where a value should be")
        }
    }

    @Test func generatedDocumentsReadTokenByTokenAsFoundationReadsThemInPiecesOfAnySize() {
        Self.documents.check { document in
            let bytes = Array(document.text.utf8)
            var problems = Problems()
            let whole = Self.read(bytes)
            problems.expect(whole.error == nil, "\(whole.summary)")
            for piece in [1, 3, 7] {
                let pieces = Self.read(bytes, pieceSize: piece)
                problems.expect(pieces == whole, "pieces of \(piece): \(pieces.summary)")
            }
            let t = JSONTokenizer(source: MemoryByteSource(bytes), fileName: "t.json")
            var tokens: [JSONToken] = []
            while let token = try? t.next(), token != .end { tokens.append(token) }
            do {
                let object = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
                var slice = tokens[...]
                var numbers = Self.numbers(in: document.value)[...]
                Self.compare(&slice, object, &numbers, at: "$", &problems)
                problems.expect(slice.isEmpty && numbers.isEmpty, "tokens or numbers left over")
            } catch {
                problems.expect(false, "Foundation refuses it: \(error)")
            }
            return problems.list
        }
    }

    // MARK: - Truncation

    static let validDocuments = [
        """
        {"type": "Feature", "geometry": {"type": "LineString",
          "coordinates": [[-0.1275, 51.507222, 35.5], [2.35e0, 48.8566, -1E-2]]},
         "properties": {"name": "caf\\u00e9 \\"q\\" \\\\ \\/ \\ud83d\\ude00 \u{E9}\u{20AC}\u{1F600}",
           "ok": true, "no": false, "none": null, "n": -0.0, "e": 1e+300}}
        """,
        "[1, 22, 333e3, -0.5E+10, \"\", \"\\n\\t\", [], {}, [[]], {\"\":{}}, 0]\n",
        "-12.5e-3",
        "\"abc\\u00E9\u{1F600}\"",
    ]

    /// A text cut anywhere is incomplete, not wrong: the error must not blame the last byte.
    @Test func everyTruncationOfAValidDocumentIsTruncatedOrComplete() {
        for document in Self.validDocuments {
            let bytes = Array(document.utf8)
            for n in 0...bytes.count {
                let prefix = Array(bytes[..<n])
                let whole = Self.read(prefix)
                #expect(Self.read(prefix, pieceSize: 1) == whole, "\(n) bytes of \(document)")
                let foundation = try? JSONSerialization.jsonObject(with: Data(prefix), options: .fragmentsAllowed)
                if let error = whole.error {
                    #expect(error.code == .truncated && n < bytes.count, "\(n) bytes of \(document): \(error)")
                } else {
                    #expect(foundation != nil, "\(n) bytes of \(document): accepted, but Foundation refuses them")
                }
            }
        }
    }

    // MARK: - Places

    @Test func tokensSayWhereTheyStartCountingColumnsAfterAByteOrderMark() throws {
        let t = JSONTokenizer(
            source: MemoryByteSource(Array("\u{FEFF}{\n  \"a\": [1,\n   true]}".utf8)), fileName: "p.json")
        var places: [String] = []
        while true {
            let token = try t.next()
            places.append("\(t.line):\(t.column)")
            if token == .end { break }
            if token == .bool(true) {
                let error = t.error("expected a number")
                #expect(error.code == .invalidValue && error.description == "p.json:3:4: expected a number")
            }
        }
        #expect(places == ["1:1", "2:3", "2:8", "2:9", "3:4", "3:8", "3:9", "3:10"])
    }

    @Test(arguments: [
        ("{} x", "invalidValue@1:4"), ("[1,\n  2,\n  ]", "invalidValue@3:3"), ("[01]", "invalidValue@1:3"),
        ("[1,\r\n\t\"x\" 2]", "invalidValue@2:6"), ("[\"a\u{01}\"]", "invalidValue@1:4"),
        ("[\"\\x\"]", "invalidValue@1:3"), ("[\n  \"abc", "truncated@2:3"), ("{\"a\":", "truncated@1:6"),
    ])
    func errorsSayWhereTheyAre(_ text: String, _ place: String) {
        for piece in [Int.max, 1] {
            #expect(Self.read(text, pieceSize: piece).summary.last == place, "\(text)")
        }
    }

    // MARK: - Skipping

    @Test func skipValueAndSkipContainerPassOverWhatTheyShould() throws {
        let document = #"""
            {"type":"FeatureCollection","junk":{"a":[1,2,{"b":"\u00e9\n"}],"c":[[[]]],"d":1e400},
            "n":-0,"s":"x","t":true,"z":null,"features":[{"x":1}]}
            """#
        for piece in [Int.max, 1, 3] {
            let t = JSONTokenizer(source: MemoryByteSource(Array(document.utf8), pieceSize: piece), fileName: "s.json")
            var keys: [String] = []
            #expect(try t.next() == .beginObject)
            while case .key(let name) = try t.next() {
                keys.append(name)
                if name == "type" {
                    #expect(try t.next() == .string("FeatureCollection"))
                } else if name == "features" {
                    #expect(try t.next() == .beginArray)
                    #expect(try t.next() == .beginObject)
                    try t.skipContainer()
                    #expect(t.depth == 2)
                    try t.skipContainer()
                } else {
                    try t.skipValue()
                }
            }
            #expect(try t.next() == .end)
            #expect(keys == ["type", "junk", "n", "s", "t", "z", "features"], "pieces of \(piece)")

            // A syntax error inside a skipped value is still one.
            let bad = JSONTokenizer(
                source: MemoryByteSource(Array(#"{"a":[1,{"b":01}]}"#.utf8), pieceSize: piece), fileName: "v.json")
            _ = try bad.next()
            _ = try bad.next()
            #expect(throws: GPXError.self) { try bad.skipValue() }
        }
        // Where no value comes, skipValue is an error, and stays one.
        let empty = JSONTokenizer(source: MemoryByteSource(Array("[]".utf8)), fileName: "u.json")
        _ = try empty.next()
        #expect(throws: GPXError.self) { try empty.skipValue() }
        #expect(throws: GPXError.self) { try empty.next() }
        // At the top level, skipContainer does nothing.
        let top = JSONTokenizer(source: MemoryByteSource(Array("[1]".utf8)), fileName: "top.json")
        try top.skipValue()
        try top.skipContainer()
        #expect(try top.next() == .end)
    }

    // MARK: - Sequences

    /// GeoJSON text sequences (RFC 8142) and newline-delimited JSON: values one after another,
    /// record separators (0x1E) as white space between them, and nowhere else.
    @Test func aSequenceReadsEachValueAndRecordSeparatorsOnlyBetweenThem() {
        let cases: [(String, [String])] = [
            ("\u{1E}{\"a\":1}\n\u{1E}[true]\n", ["{", "Ka", "N1.0", "}", "[", "T", "]", "E"]),
            ("", ["E"]), (" \n ", ["E"]), ("\u{1E}\u{1E}\n", ["E"]), ("\u{FEFF}\u{1E}null", ["Z", "E"]),
            ("1 2\n\"x\"", ["N1.0", "N2.0", "Sx", "E"]), ("{}\n{}\n", ["{", "}", "{", "}", "E"]),
            ("{} x", ["{", "}", "invalidValue@1:4"]), ("[1,\u{1E}2]", ["[", "N1.0", "invalidValue@1:4"]),
            ("{\"a\":", ["{", "Ka", "truncated@1:6"]),
        ]
        for (text, expected) in cases {
            for piece in [Int.max, 1, 2] {
                let outcome = Self.read(text, pieceSize: piece, allowsSequence: true)
                #expect(outcome.summary == expected, "\(text) in pieces of \(piece)")
            }
        }
        #expect(Self.read("{}\n{}").error?.code == .invalidValue, "without allowsSequence, one value only")
    }

    // MARK: - Limits

    @Test func theDepthAndTokenLimitsHoldWhateverTheReads() {
        let limit = 1000
        func code(_ text: String, piece: Int, maxDepth: Int = 512) -> GPXError.Code? {
            Self.read(Array(text.utf8), pieceSize: piece, maxDepth: maxDepth, maxTokenBytes: limit).error?.code
        }
        for piece in [Int.max, 1, 100] {
            // A string of the limit's length (quotes included) passes; a byte more does not.
            #expect(code("[\"" + String(repeating: "a", count: limit - 2) + "\"]", piece: piece) == nil)
            #expect(code("[\"" + String(repeating: "a", count: limit - 1) + "\"]", piece: piece) == .limitExceeded)
            #expect(code("[" + String(repeating: "1", count: limit) + "]", piece: piece) == nil)
            #expect(code("[" + String(repeating: "1", count: limit + 1) + "]", piece: piece) == .limitExceeded)
            // A string that never ends is too long before it is truncated.
            #expect(code("\"" + String(repeating: "a", count: 10 * limit), piece: piece) == .limitExceeded)
            let nested = { (n: Int) in String(repeating: "[", count: n) + String(repeating: "]", count: n) }
            #expect(code(nested(10), piece: piece, maxDepth: 10) == nil)
            #expect(code(nested(11), piece: piece, maxDepth: 10) == .limitExceeded)
            #expect(code(String(repeating: "{\"a\":", count: 2000), piece: piece) == .limitExceeded)
        }
    }
}
