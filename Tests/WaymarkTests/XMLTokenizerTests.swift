import Foundation
import Testing

@testable import Waymark

/// The tokenizer on its own: what it reports, and that it agrees with xmllint.
@Suite struct XMLTokenizerTests {
    /// A readable trace of the tokens: `<qname{uri}@attr=value>`, `</qname>`, `"text"`.
    static func trace(_ bytes: [UInt8], pieceSize: Int = .max, chunk: Int = 256 << 10) throws -> [String] {
        let t = XMLTokenizer(
            source: MemoryByteSource(bytes, pieceSize: pieceSize), fileName: "t.xml",
            limits: XMLLimits(chunkBytes: chunk))
        var out: [String] = []
        var text = ""
        while true {
            let token = try t.next()
            if token != .text && !text.isEmpty {
                out.append("\"\(text)\"")
                text = ""
            }
            switch token {
            case .startElement:
                var s = "<\(t.qualifiedName.string){\(t.namespaceURI.string)}"
                for i in t.attributes.indices {
                    s +=
                        " \(t.attributeQualifiedName(i).string){\(t.attributeNamespace(i).string)}=\(t.attributeValue(i).string)"
                }
                out.append(s + ">")
            case .endElement:
                out.append("</\(t.qualifiedName.string)>")
            case .text:
                text += t.text.string
            case .endOfDocument:
                return out
            }
        }
    }

    static func trace(_ text: String) throws -> [String] { try trace(Array(text.utf8)) }

    @Test func decodesReferencesCDATAAndNewlines() throws {
        // Line ends are normalised first (CRLF → LF), then each tab and LF in a value becomes a space.
        #expect(
            try Self.trace(
                "<r a='&lt;&#x41;&#66;\t\r\nz'>x &amp; &quot;y&apos;\r\n<![CDATA[<&>]]><!-- c --><?p d?>z</r>")
                == ["<r{} a{}=<AB  z>", "\"x & \"y'\n<&>z\"", "</r>"])
    }

    @Test func resolvesNamespacesAndPrefixes() throws {
        #expect(
            try Self.trace(
                "<a:r xmlns:a='urn:a' xmlns='urn:d'><c a:x='1' y='2'><a:d xmlns:a='urn:o'/></c><e xmlns=''/></a:r>")
                == [
                    "<a:r{urn:a} xmlns:a{}=urn:a xmlns{}=urn:d>", "<c{urn:d} a:x{urn:a}=1 y{}=2>",
                    "<a:d{urn:o} xmlns:a{}=urn:o>",
                    "</a:d>", "</c>", "<e{} xmlns{}=>", "</e>", "</a:r>",
                ])
    }

    @Test func transcodesLatin1AndWindows1252() throws {
        let latin1: [UInt8] =
            Array("<?xml version='1.0' encoding='ISO-8859-1'?><r>".utf8) + [0xE9, 0xFC] + Array("</r>".utf8)
        #expect(try Self.trace(latin1) == ["<r{}>", "\"éü\"", "</r>"])
        let cp1252: [UInt8] =
            Array("<?xml version='1.0' encoding='windows-1252'?><r>".utf8) + [0x80, 0x93] + Array("</r>".utf8)
        #expect(try Self.trace(cp1252) == ["<r{}>", "\"€“\"", "</r>"])
    }

    /// Found by the fuzzer: when a read ended inside the declaration, just after its encoding,
    /// the next read was transcoded at once and then again when the declaration completed.
    @Test func encodingDeclarationSplitAcrossReadsIsDecodedOnce() throws {
        let latin1: [UInt8] =
            Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<r>".utf8) + [0xE9, 0xFF] + Array("</r>".utf8)
        for piece in 1...24 {
            for chunk in [piece, 64] {
                #expect(
                    try Self.trace(latin1, pieceSize: piece, chunk: chunk) == ["<r{}>", "\"éÿ\"", "</r>"],
                    "pieces of \(piece)")
            }
        }
    }

    @Test func skipsTheByteOrderMark() throws {
        #expect(try Self.trace([0xEF, 0xBB, 0xBF] + Array("<r/>".utf8)) == ["<r{}>", "</r>"])
    }

    @Test func asciiDeclarationRejectsHighBytes() throws {
        let bytes: [UInt8] =
            Array("<?xml version='1.0' encoding='US-ASCII'?><r>".utf8) + [0xC3, 0xA9] + Array("</r>".utf8)
        #expect { _ = try Self.trace(bytes) } throws: { ($0 as? GPXError)?.message.contains("not US-ASCII") == true }
    }

    /// Every element's line and column is the one counted byte by byte from the file's start,
    /// whatever the chunk size: the window counts the lines it lets go of 32 bytes at a time and
    /// sums its counters every 255 blocks, so the documents have runs of line feeds only (a
    /// counter's limit), long lines with none, and everything between, 300 KB in all.
    @Test func lineAndColumnMatchACountFromTheStart() throws {
        for seed: UInt64 in 1...6 {
            var rng = SplitMix64(seed: seed)
            var bytes = Array("<r>".utf8)
            var expected: [(line: Int, column: Int)] = []
            var line = 1
            var lineStart = 0
            while bytes.count < 300_000 {
                // A run of text: all line feeds, none, or a mixture of a random density.
                let length = Int.random(in: 1...12_000, using: &rng)
                let feedsPerHundred = [100, 0, Int.random(in: 1...60, using: &rng)].randomElement(using: &rng)!
                for _ in 0..<length {
                    if Int.random(in: 0..<100, using: &rng) < feedsPerHundred {
                        bytes.append(0x0A)
                        line += 1
                        lineStart = bytes.count
                    } else {
                        bytes.append(UInt8(ascii: "x"))
                    }
                }
                expected.append((line, bytes.count - lineStart + 1))
                bytes += Array("<e/>".utf8)
            }
            bytes += Array("</r>".utf8)
            for chunk in [256 << 10, 64 << 10, 8_161, 100] {
                let t = XMLTokenizer(
                    source: MemoryByteSource(bytes, pieceSize: .max), fileName: "t.xml",
                    limits: XMLLimits(chunkBytes: chunk))
                var seen: [(line: Int, column: Int)] = []
                while true {
                    let token = try t.next()
                    if token == .endOfDocument { break }
                    if token == .startElement, t.qualifiedName.string == "e" { seen.append(t.tokenLocation) }
                }
                #expect(seen.count == expected.count, "seed \(seed), chunk \(chunk)")
                for (got, want) in zip(seen, expected) where got != want {
                    Issue.record(
                        "seed \(seed), chunk \(chunk): <e/> at \(got.line):\(got.column), counted \(want.line):\(want.column)"
                    )
                    break
                }
            }
        }
    }

    /// A mark keeps the line and column of the token it was made at, however far the reads go on
    /// and however the input arrives: nested elements, each marked at its start and asked for its
    /// place at its end, against a count from the document's start.
    @Test func aMarkKeepsItsPlaceHoweverTheInputArrives() {
        struct Element: CustomStringConvertible, Sendable {
            var text: String
            var children: [Element]
            var description: String { "<e>" + text + children.map(\.description).joined() + "</e>" }
        }
        @Sendable func element(_ r: inout PropertyRandom, depth: Int) -> Element {
            // Text of every shape: runs of line feeds, long lines, short lines.
            let text = r.array(0...4) { r in
                r.pick([
                    "\n", String(repeating: "\n", count: r.int(1...300)), String(repeating: "x", count: r.int(1...500)),
                    "ab\ncd",
                ])
            }.joined()
            let children = depth > 2 ? [] : r.array(0...3) { element(&$0, depth: depth + 1) }
            return Element(text: text, children: children)
        }
        Property<[Element]>(
            name: "marks", count: 40,
            generate: { r in r.array(1...6) { element(&$0, depth: 0) } },
            shrink: { shrinkArray($0) },
            describe: { $0.map(\.description).joined() }
        ).check { elements in
            // Declared windows-1252 half the time: the window then holds the text transcoded.
            let declaration = elements.count % 2 == 0 ? "<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n" : ""
            let bytes = Array(
                (declaration + "<r>\n" + elements.map(\.description).joined(separator: "\n") + "</r>").utf8)
            // Where each <e> starts, counted from the start, in document order.
            var expected: [(line: Int, column: Int)] = []
            var line = 1
            var lineStart = 0
            for (i, b) in bytes.enumerated() {
                if b == UInt8(ascii: "<"), i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "e"),
                    bytes[i + 2] == UInt8(ascii: ">")
                {
                    expected.append((line, i - lineStart + 1))
                }
                if b == 0x0A {
                    line += 1
                    lineStart = i + 1
                }
            }
            var problems = Problems()
            for piece in [1, 7, 64, 65, 4093, Int.max] {
                for chunk in [64, 100, 256 << 10] {
                    let t = XMLTokenizer(
                        source: MemoryByteSource(bytes, pieceSize: piece), fileName: "t.xml",
                        limits: XMLLimits(chunkBytes: chunk))
                    var open: [(mark: Int, order: Int)] = []
                    var got: [(order: Int, place: (line: Int, column: Int))] = []
                    var starts = 0
                    do {
                        reading: while true {
                            switch try t.next() {
                            case .startElement where t.qualifiedName.string == "e":
                                open.append((t.markTokenStart(), starts))
                                starts += 1
                            case .endElement where t.qualifiedName.string == "e":
                                let last = open.removeLast()
                                got.append((last.order, t.place(ofMark: last.mark)))
                                t.unmark(last.mark)
                            case .endOfDocument: break reading
                            default: continue
                            }
                        }
                    } catch {
                        problems.expect(false, "\(piece)-byte reads, \(chunk)-byte chunks: \(error)")
                        continue
                    }
                    problems.expect(got.count == expected.count, "\(got.count) marks for \(expected.count) elements")
                    for (order, place) in got where order < expected.count && place != expected[order] {
                        problems.expect(
                            false,
                            "\(piece)-byte reads, \(chunk)-byte chunks: <e> #\(order) at \(place.line):\(place.column), counted \(expected[order].line):\(expected[order].column)"
                        )
                        break
                    }
                }
            }
            return problems.list
        }
    }

    /// A mark made out of order (an offset before a mark still waiting, while the window holds
    /// both) takes its place at once, and the marks around it still take theirs as the window
    /// moves on.
    @Test func aMarkMadeOutOfOrderTakesItsPlaceAtOnce() throws {
        let lines = String(repeating: "text that makes the window move on\n", count: 40)
        let bytes = Array("<r>\n<a/>\n<b>\(lines)<c>\(lines)</c></b></r>".utf8)
        for piece in [1, 7, 64, Int.max] {
            let t = XMLTokenizer(
                source: MemoryByteSource(bytes, pieceSize: piece), fileName: "t.xml", limits: XMLLimits(chunkBytes: 64))
            var marks: [String: Int] = [:]
            while true {
                let token = try t.next()
                if token == .endOfDocument { break }
                guard token == .startElement else { continue }
                switch t.qualifiedName.string {
                case "a": t.pin = t.absoluteTokenStart  // kept in the window until <b>
                case "b":
                    marks["b"] = t.markTokenStart()  // waits
                    marks["a"] = t.mark(absolute: t.pin!)  // before it, a line up: placed now
                    t.pin = nil
                case "c": marks["c"] = t.markTokenStart()
                default: break
                }
            }
            let places = marks.mapValues { t.place(ofMark: $0) }
            #expect(places["a"]! == (2, 1), "\(piece)-byte reads: \(places)")
            #expect(places["b"]! == (3, 1), "\(piece)-byte reads: \(places)")
            #expect(places["c"]! == (43, 1), "\(piece)-byte reads: \(places)")
        }
    }

    /// The same tokens whatever the chunk and read sizes, over our fixtures and the corpus.
    @Test func chunkBoundariesDoNotMatter() throws {
        var files = Paths.files(under: Paths.fixtures.appendingPathComponent("gpx"), suffix: ".gpx").map {
            Paths.fixture("gpx/" + $0)
        }
        files += Paths.files(under: Paths.fixtures.appendingPathComponent("xml/wellformed"), suffix: ".xml").map {
            Paths.fixture("xml/wellformed/" + $0)
        }
        if Paths.sharedAvailable {
            files += Paths.files(under: Paths.corpus, suffix: ".gpx").map {
                Paths.corpus.appendingPathComponent($0).path
            }
            .filter { ((try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0) < 200_000 }
        }
        #expect(files.count > 10)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let whole = try Self.trace(bytes)
            for (piece, chunk) in [(1, 1), (2, 3), (7, 5), (13, 64), (4096, 100)] {
                #expect(try Self.trace(bytes, pieceSize: piece, chunk: chunk) == whole, "\(file) in pieces of \(piece)")
            }
        }
    }

    // MARK: - Differential testing against xmllint

    static let xmllint = which("xmllint")

    /// xmllint's verdict: well-formed when it exits 0 and reports no namespace error (libxml2
    /// reports namespace errors but still exits 0; Waymark, which resolves namespaces, refuses them).
    /// One kind is left out: libxml2 also checks that a namespace name is a syntactically valid
    /// URI, which the Namespaces recommendation does not make a well-formedness rule; Waymark
    /// compares namespace names as strings and does not.
    static func xmllintAccepts(_ path: String) throws -> Bool {
        let r = try run(xmllint!, ["--noout", "--nonet", path])
        let namespaceErrors = r.stderr.split(separator: "\n").filter {
            $0.contains("namespace error") && !$0.contains("is not a valid URI")
        }
        return r.status == 0 && namespaceErrors.isEmpty
    }

    static func waymarkAccepts(_ path: String) -> Bool {
        let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
        return (try? trace(bytes)) != nil
    }

    @Test(.enabled(if: xmllint != nil, "xmllint is not installed (apt-get install libxml2-utils)"))
    func agreesWithXmllintOnFixtures() throws {
        for kind in ["wellformed", "malformed"] {
            let dir = Paths.fixtures.appendingPathComponent("xml/" + kind)
            let files = Paths.files(under: dir, suffix: ".xml")
            #expect(files.count > 10)
            for f in files {
                let path = dir.appendingPathComponent(f).path
                let theirs = try Self.xmllintAccepts(path)
                #expect(theirs == (kind == "wellformed"), "fixture \(f) is misfiled: xmllint says \(theirs)")
                #expect(Self.waymarkAccepts(path) == theirs, "\(kind)/\(f): xmllint \(theirs)")
            }
        }
    }

    /// What Waymark refuses on purpose although xmllint may accept it: DTDs and non-ASCII-based encodings.
    @Test func refusesDTDsAndUTF16() throws {
        let dir = Paths.fixtures.appendingPathComponent("xml/refused")
        for f in Paths.files(under: dir, suffix: ".xml") {
            let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent(f)))
            #expect {
                _ = try Self.trace(bytes)
            } throws: { error in
                let code = (error as? GPXError)?.code
                return code == .forbiddenDeclaration || code == .unsupportedEncoding
            }
        }
    }

    @Test(.enabled(if: xmllint != nil && Paths.sharedAvailable, "needs xmllint and ../shared/corpus"))
    func agreesWithXmllintOnTheCorpus() throws {
        for f in Paths.files(under: Paths.corpus, suffix: ".gpx") {
            let path = Paths.corpus.appendingPathComponent(f).path
            #expect(Self.waymarkAccepts(path) == (try Self.xmllintAccepts(path)), "\(f)")
        }
    }

    /// Seeded mutations of well-formed documents: Waymark and xmllint must agree on each one.
    @Test(.enabled(if: xmllint != nil, "xmllint is not installed (apt-get install libxml2-utils)"))
    func agreesWithXmllintOnMutations() throws {
        let seeds = [
            "gpx/entities.gpx", "gpx/prefixed.gpx", "gpx/extensions.gpx", "xml/wellformed/cdata-comment-pi.xml",
        ]
        .map { try! [UInt8](Data(contentsOf: URL(fileURLWithPath: Paths.fixture($0)))) }
        let pieces: [[UInt8]] =
            [
                "<", ">", "&", ";", "\"", "'", "/", "=", "!", "[", "]", "?", "-", ":", " ", "\n", "&#0;", "&#x41;",
                "&lt;",
                "]]>", "--", "<!--", "<?", "?>", "<![CDATA[", "xmlns:q=\"u\"", "q:", "\u{7}", "é",
            ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBE], [0]]
        var rng = SplitMix64(seed: 7)
        let dir = URL(fileURLWithPath: temporaryPath("-mutants"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var disagreements: [String] = []
        var accepted = 0
        for n in 0..<400 {
            var bytes = seeds[n % seeds.count]
            for _ in 0..<(1 + Int(rng.next() % 2)) {
                let i = Int(rng.next() % UInt64(bytes.count))
                let piece = pieces[Int(rng.next() % UInt64(pieces.count))]
                switch rng.next() % 3 {
                case 0: bytes.replaceSubrange(i..<min(bytes.count, i + piece.count), with: piece)
                case 1: bytes.removeSubrange(i..<min(bytes.count, i + 1 + Int(rng.next() % 4)))
                default: bytes.insert(contentsOf: piece, at: i)
                }
            }
            let path = dir.appendingPathComponent("m\(n).xml").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let theirs = try Self.xmllintAccepts(path)
            if theirs { accepted += 1 }
            if Self.waymarkAccepts(path) != theirs {
                disagreements.append(
                    "m\(n): xmllint \(theirs): \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5).joined(separator: "\n"))")
        #expect(accepted > 20 && accepted < 380, "the mutations should mix good and bad documents")
    }
}
