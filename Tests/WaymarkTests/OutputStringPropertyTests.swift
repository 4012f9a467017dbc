import Foundation
import Testing

@testable import Waymark

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Every output keeps a user's string (a track's name) exactly, or says it cannot (issue 33): a
/// name of XML's and HTML's specials, quotes, backslashes, white space, control characters XML
/// allows (U+0085, U+009B) and text that looks like an escape reads back from the terminal text,
/// the SVG and the HTML page as it was written. GPX and GeoJSON have theirs in `PropertyTests`.
@Suite struct OutputStringPropertyTests {
    static let characters =
        ReaderWriterPropertyTests.nameCharacters + ["\\n", "\\x1b", "$'", "'", "\u{9B}", "\u{85}", " — "]

    static let names = Property<String>(
        name: "output strings",
        generate: { r in r.array(1...10) { $0.pick(characters) }.joined() },
        shrink: { name in
            let parts = Array(name)
            return parts.indices.map { i in String(parts[..<i] + parts[(i + 1)...]) }.filter { !$0.isEmpty }
        },
        describe: { String(reflecting: $0) })

    static func events(_ name: String) -> [GPXEvent] {
        let t0 = Date(timeIntervalSince1970: 1_714_550_400)
        return [
            .header(GPXHeader()), .trackStart(GPXPathInfo(name: name)), .segmentStart,
            .trackPoint(GPXPoint(latitude: 48.1, longitude: 11.5, elevation: 500, time: t0)),
            .trackPoint(GPXPoint(latitude: 48.2, longitude: 11.6, elevation: 510, time: t0 + 60)),
            .segmentEnd(GPXExtensions()), .trackEnd(GPXPathInfo(name: name)),
        ]
    }

    /// The terminal's text: the heading `t.gpx — "name"`, read back by ``TerminalText``'s rule.
    @Test func theTerminalTextReadsBackAsTheName() {
        Self.names.check { name in
            var stats = TraceStatistics()
            for e in Self.events(name) { stats.add(e) }
            let heading = TextRenderer.summary(of: stats, name: name, title: "t.gpx").split(
                separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard heading.hasPrefix("t.gpx — ") else { return ["the heading is \(heading)"] }
            let shown = String(heading.dropFirst("t.gpx — ".count))
            guard shown.unicodeScalars.allSatisfy({ !TerminalText.needsEscape($0, keepingLineBreaks: false) })
            else { return ["a control character reaches the terminal: \(String(reflecting: shown))"] }
            guard let back = Self.unescaped(shown) else { return ["\(shown) does not read back"] }
            return back == "\"\(name)\""
                ? [] : ["\(String(reflecting: shown)) reads back as \(String(reflecting: back))"]
        }
    }

    /// The SVG's title, read by an XML parser.
    @Test func theSVGTitleIsTheName() {
        Self.names.check { name in
            guard let svg = try? SVGTests.draw(Self.events(name), title: "t.gpx") else { return ["no SVG"] }
            guard let title = Self.firstElementText("title", in: svg) else { return ["the SVG is not XML"] }
            return title == "t.gpx — “\(name)”" ? [] : ["the title reads \(String(reflecting: title))"]
        }
    }

    /// The HTML page's heading, its entities decoded as a browser does. HTML cannot carry DEL and
    /// the C1 controls (raw they are parse errors; as character references U+0080 to U+009F become
    /// Windows-1252's letters), so the page shows each as U+FFFD, as `XMLEscaping` documents: the
    /// one change a name may undergo.
    @Test func theHTMLHeadingIsTheName() {
        Self.names.check { name in
            guard let page = try? HTMLPageTests.page(Self.events(name), title: "t.gpx"),
                let start = page.range(of: "<h1>"),
                let end = page.range(of: "</h1>", range: start.upperBound..<page.endIndex)
            else { return ["no heading"] }
            let text = Self.decodingEntities(String(page[start.upperBound..<end.lowerBound]))
            let expected = String(
                String.UnicodeScalarView(
                    name.unicodeScalars.map { (0x7F...0x9F).contains($0.value) ? "\u{FFFD}" : $0 }))
            return text == "t.gpx — “\(expected)”" ? [] : ["the heading reads \(String(reflecting: text))"]
        }
    }

    // MARK: - Reading back

    /// ``TerminalText/escaped(_:keepingLineBreaks:)`` undone: `$'…'` holds escapes; anything
    /// else is the text itself.
    static func unescaped(_ shown: String) -> String? {
        guard shown.hasPrefix("$'") && shown.hasSuffix("'") && shown.count >= 3 else { return shown }
        var scalars = Array(shown.unicodeScalars.dropFirst(2).dropLast())
        var out = String.UnicodeScalarView()
        while !scalars.isEmpty {
            let c = scalars.removeFirst()
            guard c == "\\" else {
                if c == "'" { return nil }  // an unescaped quote cannot be inside
                out.append(c)
                continue
            }
            guard !scalars.isEmpty else { return nil }
            let e = scalars.removeFirst()
            switch e {
            case "\\": out.append("\\")
            case "'": out.append("'")
            case "t": out.append("\t")
            case "n": out.append("\n")
            case "r": out.append("\r")
            case "x":
                guard scalars.count >= 2, let v = UInt32(String(String.UnicodeScalarView(scalars[0..<2])), radix: 16),
                    let s = Unicode.Scalar(v)
                else { return nil }
                scalars.removeFirst(2)
                out.append(s)
            case "u":
                guard scalars.first == "{", let close = scalars.firstIndex(of: "}"),
                    let v = UInt32(String(String.UnicodeScalarView(scalars[1..<close])), radix: 16),
                    let s = Unicode.Scalar(v)
                else { return nil }
                scalars.removeFirst(close + 1)
                out.append(s)
            default: return nil
            }
        }
        return String(out)
    }

    static func decodingEntities(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&#x27;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The text of the first `name` element, by Foundation's XML parser.
    static func firstElementText(_ name: String, in xml: String) -> String? {
        final class Reader: NSObject, XMLParserDelegate {
            let name: String
            var depth = 0
            var text = ""
            var done = false
            init(name: String) { self.name = name }
            func parser(
                _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
            ) {
                if !done && elementName == name { depth += 1 }
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { if depth > 0 { text += string } }
            func parser(
                _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?
            ) {
                if depth > 0 && elementName == name {
                    depth = 0
                    done = true
                }
            }
        }
        let parser = XMLParser(data: Data(xml.utf8))
        let reader = Reader(name: name)
        parser.delegate = reader
        guard parser.parse(), reader.done else { return nil }
        return reader.text
    }
}
