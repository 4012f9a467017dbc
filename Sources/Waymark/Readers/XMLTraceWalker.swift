#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What every reader of an XML trace format other than GPX (TCX, KML) needs around the
/// tokenizer: walking children, reading a text leaf as a number or a time, and saying what is
/// wrong at the line and column where it is, strictly (an error) or leniently (a warning, and the
/// value or point left out).
///
/// The readers own one each; it holds no rule of any format.
final class XMLTraceWalker {
    let tokenizer: XMLTokenizer
    let lenient: Bool
    private let leaf = ByteStore(capacity: 256)
    /// Warnings waiting to be handed out with the next event.
    private(set) var pending: [GPXWarning] = []
    private var warnedOnce = Set<String>()
    private var warnedNoZone = false

    init(source: ByteSource, name: String, options: GPXReadOptions) {
        tokenizer = XMLTokenizer(source: source, fileName: name, limits: options.limits)
        tokenizer.skipsWhitespaceText = true
        lenient = options.lenient
    }

    var fileName: String { tokenizer.fileName }

    func next() throws -> XMLTokenizer.Token { try tokenizer.next() }

    /// Moves to the root element's start tag; false when the document has none.
    func moveToRoot() throws -> Bool {
        var token = try next()
        while token == .text { token = try next() }
        return token == .startElement
    }

    /// Calls `body` with each child element's local name (the tokenizer is at the parent's start
    /// tag); `body` must read or skip the child. Returns after the parent's end tag.
    func forEachChild(_ body: (ByteSpan) throws -> Void) throws {
        if tokenizer.isEmptyElement {
            _ = try next()
            return
        }
        while true {
            switch try next() {
            case .startElement: try body(tokenizer.localName)
            case .endElement, .endOfDocument: return
            case .text: continue
            }
        }
    }

    /// Skips the element whose start tag the tokenizer is at, with everything in it.
    func skipElement() throws {
        var depth = 1
        while depth > 0 {
            switch try next() {
            case .startElement: depth += 1
            case .endElement: depth -= 1
            case .text: continue
            case .endOfDocument: return
            }
        }
    }

    /// The text of a simple element (the tokenizer is at its start tag); child elements in it
    /// are skipped with a warning.
    func readLeaf() throws -> ByteSpan {
        leaf.count = 0
        tokenizer.pin = tokenizer.absoluteTokenStart
        defer { tokenizer.pin = nil }
        if tokenizer.isEmptyElement {
            _ = try next()
            return leaf.span
        }
        while true {
            switch try next() {
            case .text:
                leaf.append(tokenizer.text)
            case .startElement:
                warnOnce("<\(tokenizer.qualifiedName.string)> inside a text element is skipped")
                try skipElement()
            case .endElement, .endOfDocument:
                return leaf.span
            }
        }
    }

    /// A text value; white space alone is no value.
    func readString() throws -> String? {
        let s = try readLeaf()
        return s.isWhitespace ? nil : s.trimmed.string
    }

    /// A decimal number, or nil when the element is empty. A value that is not a number is an
    /// error (strict) or left out with a warning (lenient).
    func readDouble(_ what: String) throws -> Double? {
        let start = tokenizer.absoluteTokenStart
        let s = try readLeaf()
        if s.trimmed.count == 0 { return nil }
        if let v = ValueParsing.decimal(s), v.isFinite { return v }
        try badValue(at: start, "<\(what)> is not a number: '\(s.trimmed.string.prefix(40))'")
        return nil
    }

    /// An xsd:dateTime, or nil when the element is empty; a bad one as ``readDouble(_:)``.
    func readTime(_ what: String) throws -> Date? {
        let start = tokenizer.absoluteTokenStart
        let s = try readLeaf()
        return try time(s, what: what, at: start)
    }

    /// The xsd:dateTime in `s` (read at byte `start`), or nil when `s` is blank.
    func time(_ s: ByteSpan, what: String, at start: Int) throws -> Date? {
        if s.trimmed.count == 0 { return nil }
        switch ValueParsing.dateTime(s) {
        case .success(let t):
            if !t.hadZone && !warnedNoZone {
                warnedNoZone = true
                warn(
                    at: start,
                    "time '\(s.trimmed.string)' has no zone; it is taken as UTC (further ones are not reported)")
            }
            return t.date
        case .failure(let failure):
            try badValue(at: start, "malformed <\(what)> '\(s.trimmed.string.prefix(40))': \(failure.message)")
            return nil
        }
    }

    /// A bad value (not a position): strict, an error; lenient, a warning, and the value is left
    /// out.
    func badValue(at absolute: Int, _ message: String) throws {
        try badValue(at: place(ofAbsolute: absolute), message)
    }

    /// ``badValue(at:_:)`` at a place kept for a report made later.
    func badValue(at place: (line: Int, column: Int), _ message: String) throws {
        guard lenient else { throw error(.invalidValue, at: place, message) }
        warn(at: place, message + "; the value is left out")
    }

    func error(_ code: GPXError.Code, at absolute: Int, _ message: String) -> GPXError {
        error(code, at: place(ofAbsolute: absolute), message)
    }

    func warn(at absolute: Int, _ message: String) {
        warn(at: place(ofAbsolute: absolute), message)
    }

    /// The line and column of an absolute offset the tokenizer still holds: the current token,
    /// or a leaf ``readLeaf()`` has just read (it pins the leaf's start). Once the tokenizer has
    /// let go of the text there (how soon depends on how the input arrives), an offset's
    /// location is the current token's: a place reported after reading on is marked instead
    /// (``marking(_:)``, ``mark(absolute:)``).
    private func place(ofAbsolute absolute: Int) -> (line: Int, column: Int) {
        tokenizer.location(ofAbsolute: absolute)
    }

    /// Runs `body` with a mark where the current token starts, whose place (``place(ofMark:)``)
    /// stays right however far `body` reads: for an element whose problems show at its end.
    /// It costs no scan of the window's lines until it is asked for.
    func marking<T>(_ body: (_ mark: Int) throws -> T) rethrows -> T {
        let mark = tokenizer.markTokenStart()
        defer { tokenizer.unmark(mark) }
        return try body(mark)
    }

    /// Marks `absolute`, an offset still in the window, until the end of the innermost
    /// ``marking(_:)``: for a leaf whose problem is reported at its parent's end.
    func mark(absolute: Int) -> Int {
        tokenizer.mark(absolute: absolute)
    }

    /// The line and column of a mark made by ``marking(_:)`` or ``mark(absolute:)``.
    func place(ofMark mark: Int) -> (line: Int, column: Int) {
        tokenizer.place(ofMark: mark)
    }

    func error(_ code: GPXError.Code, at place: (line: Int, column: Int), _ message: String) -> GPXError {
        GPXError(code: code, file: fileName, line: place.line, column: place.column, message: message)
    }

    func warn(at place: (line: Int, column: Int), _ message: String) {
        pending.append(GPXWarning(file: fileName, line: place.line, column: place.column, message: message))
    }

    /// A warning at the current token, given once per text: further ones are not reported.
    func warnOnce(_ message: String) {
        guard warnedOnce.insert(message).inserted else { return }
        warn(at: tokenizer.absoluteTokenStart, message + " (further ones are not reported)")
    }

    /// Hands the waiting warnings to `handle`, in the order they were found.
    func flush(_ handle: (consuming GPXEvent) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        let list = pending
        pending.removeAll()
        for w in list { try handle(.warning(w)) }
    }

    /// Checks a position read at byte `absolute`: nil when it is fine, else what is wrong with it.
    static func problem(latitude: Double?, longitude: Double?) -> String? {
        guard let latitude else { return "it has no latitude" }
        guard let longitude else { return "it has no longitude" }
        if !latitude.isFinite || abs(latitude) > 90 { return "latitude \(latitude) is outside -90...90" }
        if !longitude.isFinite || abs(longitude) > 180 { return "longitude \(longitude) is outside -180...180" }
        return nil
    }
}
