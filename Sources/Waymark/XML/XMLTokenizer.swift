#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Limits that keep the tokenizer's memory bounded whatever the input.
public struct XMLLimits: Sendable, Hashable {
    /// The deepest element nesting accepted; 257, the most libxml2 (xmllint) accepts by default.
    public var maxDepth: Int
    /// The longest single construct (text run, tag with its attributes, comment) in bytes.
    public var maxTokenBytes: Int
    /// How many bytes are read from the source at a time.
    public var chunkBytes: Int

    public init(maxDepth: Int = 257, maxTokenBytes: Int = 1 << 20, chunkBytes: Int = 256 << 10) {
        self.maxDepth = max(1, maxDepth)
        self.maxTokenBytes = max(64, maxTokenBytes)
        self.chunkBytes = max(1, chunkBytes)
    }

    public static let `default` = XMLLimits()
}

/// A streaming, non-validating XML 1.0 (fifth edition) tokenizer with namespaces, for GPX.
///
/// It reads its source in chunks and never holds more than one construct plus one chunk.
/// It checks well-formedness, validates UTF-8, resolves namespace prefixes, decodes
/// character and predefined entity references, and refuses any DOCTYPE, so that entity
/// expansion attacks and external entities cannot happen. Comments and processing
/// instructions are checked and skipped. Text is reported with CRLF normalised to LF.
///
/// Spans it hands out are valid until the next call to ``next()``.
///
/// Confined to one thread and never handed out, it skips Swift's dynamic exclusivity checks on
/// its hot state (`@exclusivity(unchecked)`): no method holds an access to one of those
/// properties across a call that could touch it again.
final class XMLTokenizer {
    enum Token: Equatable {
        case startElement
        case endElement
        case text
        case endOfDocument
    }

    private enum Encoding {
        case utf8, ascii, latin1, windows1252
    }

    private struct NeedMore: Error {}

    private struct Binding {
        var prefixStart: Int
        var prefixCount: Int
        var uriStart: Int
        var uriCount: Int
    }

    private struct OpenElement {
        var nameStart: Int
        var nameCount: Int
        var prefixCount: Int  // 0 when unprefixed; else the length before the colon
        var bindingCount: Int  // bindings in force before this element's own declarations
        var uri: Int  // index into bindings, or -1 for no namespace
        var defaultBefore: Int  // the default namespace's binding before this element, or -1
    }

    struct Attribute {
        var nameStart: Int
        var nameCount: Int
        var prefixCount: Int
        var valueStart: Int
        var valueCount: Int
        var valueInScratch: Bool
        var needsDecode: Bool
        var isNamespaceDeclaration: Bool
        var uri: Int  // index into bindings, or -1
    }

    let fileName: String
    private let source: ByteSource
    private let limits: XMLLimits

    // The window of decoded bytes: buf[0..<end], with buf[end] == 0 as a sentinel.
    @exclusivity(unchecked) private var buf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var pos = 0
    @exclusivity(unchecked) private var end = 0
    @exclusivity(unchecked) private var eof = false
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var encoding = Encoding.utf8
    // Raw bytes read but not yet transcoded (in `staging`), kept when the window was full.
    @exclusivity(unchecked) private var carryStart = 0
    @exclusivity(unchecked) private var carryCount = 0
    private var staging: UnsafeMutablePointer<UInt8>?

    // Where buf[0] sits in the decoded stream, for line:column.
    @exclusivity(unchecked) private var baseOffset = 0
    @exclusivity(unchecked) private var linesBefore = 0
    @exclusivity(unchecked) private var lineStartOffset = 0

    /// For each ASCII byte: bit 0 set when it may start a name, bit 1 when it may continue one
    /// (':' is handled apart). Bytes from 0x80 take the slow path.
    private let nameClass: UnsafeMutablePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        table.initialize(repeating: 0, count: 256)
        for b in 0..<128 {
            let letter = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
            let other = (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E
            table[b] = (letter ? 3 : 0) | (other ? 2 : 0)
        }
        return table
    }()

    // The open elements, innermost last: a plain buffer, grown on demand (bounded by maxDepth).
    @exclusivity(unchecked) private var stack: UnsafeMutablePointer<OpenElement>
    @exclusivity(unchecked) private var stackCapacity = 64
    @exclusivity(unchecked) private var elementCount = 0
    private let names = ByteStore(capacity: 1024)
    @exclusivity(unchecked) private var bindings: [Binding] = []
    private let namespaceStore = ByteStore(capacity: 1024)
    @exclusivity(unchecked) private(set) var attributes: [Attribute] = []
    private let attributeScratch = ByteStore(capacity: 1024)
    private let textScratch = ByteStore(capacity: 4096)

    /// The binding of the default namespace in scope, or -1: saves a search for unprefixed names.
    @exclusivity(unchecked) private var defaultBinding = -1
    @exclusivity(unchecked) private var rootSeen = false
    @exclusivity(unchecked) private var rootClosed = false
    @exclusivity(unchecked) private var pendingEmptyEnd = false
    @exclusivity(unchecked) private var popPending = false
    @exclusivity(unchecked) private var finished = false

    /// Where the most recent token starts in the window.
    @exclusivity(unchecked) private(set) var tokenStart = 0
    /// The text of the most recent `.text` token.
    @exclusivity(unchecked) private(set) var text = ByteSpan.empty
    /// Whether the most recent start tag was an empty-element tag (`<a/>`).
    @exclusivity(unchecked) private(set) var isEmptyElement = false

    init(source: ByteSource, fileName: String, limits: XMLLimits = .default) {
        self.source = source
        self.fileName = fileName
        self.limits = limits
        capacity = limits.chunkBytes * 2 + 64
        buf = .allocate(capacity: capacity + 1)
        buf[0] = 0
        bindings.reserveCapacity(16)
        stack = .allocate(capacity: stackCapacity)
        attributes.reserveCapacity(8)
        pushBinding(prefix: "xml", uri: "http://www.w3.org/XML/1998/namespace")
        pushBinding(prefix: "xmlns", uri: "http://www.w3.org/2000/xmlns/")
    }

    deinit {
        nameClass.deallocate()
        stack.deallocate()
        buf.deallocate()
        staging?.deallocate()
    }

    // MARK: - Public view of the current token

    /// The qualified name of the current element (start or end).
    var qualifiedName: ByteSpan {
        let e = stack[elementCount - 1]
        return names.span(from: e.nameStart, count: e.nameCount)
    }

    /// The local part of the current element's name.
    var localName: ByteSpan {
        let e = stack[elementCount - 1]
        let skip = e.prefixCount == 0 ? 0 : e.prefixCount + 1
        return names.span(from: e.nameStart + skip, count: e.nameCount - skip)
    }

    /// The current element's namespace URI; empty when it is in no namespace.
    var namespaceURI: ByteSpan {
        uriSpan(stack[elementCount - 1].uri)
    }

    func attributeQualifiedName(_ i: Int) -> ByteSpan {
        let a = attributes[i]
        return ByteSpan(start: UnsafePointer(buf + a.nameStart), count: a.nameCount)
    }

    func attributeLocalName(_ i: Int) -> ByteSpan {
        let a = attributes[i]
        let skip = a.prefixCount == 0 ? 0 : a.prefixCount + 1
        return ByteSpan(start: UnsafePointer(buf + a.nameStart + skip), count: a.nameCount - skip)
    }

    func attributeNamespace(_ i: Int) -> ByteSpan { uriSpan(attributes[i].uri) }

    func attributeValue(_ i: Int) -> ByteSpan {
        let a = attributes[i]
        if a.valueInScratch { return attributeScratch.span(from: a.valueStart, count: a.valueCount) }
        return ByteSpan(start: UnsafePointer(buf + a.valueStart), count: a.valueCount)
    }

    /// The value of the unprefixed attribute `name`, if present.
    func attribute(_ name: StaticString) -> ByteSpan? {
        for i in attributes.indices where attributes[i].prefixCount == 0 {
            if attributeQualifiedName(i).equals(name) { return attributeValue(i) }
        }
        return nil
    }

    /// Changes whenever a namespace binding is declared or goes out of scope, so that callers can
    /// cache facts about the bindings in force (indices are reused once an element's declarations
    /// go out of scope).
    @exclusivity(unchecked) private(set) var bindingsVersion = 0

    /// The index of the binding that gave the current element its namespace, or -1.
    var elementBindingIndex: Int { stack[elementCount - 1].uri }

    /// How many bindings were in force before the current element's own declarations.
    var bindingCountBeforeElement: Int { stack[elementCount - 1].bindingCount }

    func attributeBindingIndex(_ i: Int) -> Int { attributes[i].uri }

    /// The prefix and URI of binding `index`.
    func binding(_ index: Int) -> (prefix: ByteSpan, uri: ByteSpan) {
        let b = bindings[index]
        return (
            namespaceStore.span(from: b.prefixStart, count: b.prefixCount),
            namespaceStore.span(from: b.uriStart, count: b.uriCount)
        )
    }

    /// The absolute offset of the current token in the decoded stream.
    var absoluteTokenStart: Int { baseOffset + tokenStart }

    /// The location of an absolute offset, if it is still in the window; else of the current token.
    /// A reader that reports a place after reading on marks it instead (``markTokenStart()``).
    func location(ofAbsolute offset: Int) -> (line: Int, column: Int) {
        offset >= baseOffset ? location(ofIndex: offset - baseOffset) : tokenLocation
    }

    // MARK: Marks

    /// A place a reader reports after reading on: an element's start, reported at its end.
    private struct Mark {
        var offset: Int
        /// Its line and column, worked out when the window let go of its text.
        var place: (line: Int, column: Int)?
    }

    /// The marks made and not yet let go, in the order made; those waiting for their places are
    /// in the order of their offsets.
    @exclusivity(unchecked) private var marks: [Mark] = []
    /// Every mark before this one has its place: the window goes over each mark once, however
    /// many stay (a track's bad positions, say).
    @exclusivity(unchecked) private var firstWaiting = 0

    /// Marks where the current token starts, for a report made after reading on; returns the
    /// mark's handle, for ``place(ofMark:)`` and ``unmark(_:)``. A handle is good until it, or
    /// a mark made before it, is let go of.
    ///
    /// Unlike ``pin``, a mark does not keep its text in the window: when the window lets go of
    /// it, its line and column are worked out in the same count of lines that moves the window
    /// on, so a mark costs nothing until it is asked for, and its place is the same however the
    /// input arrives.
    func markTokenStart() -> Int { mark(absolute: absoluteTokenStart) }

    /// Marks an absolute offset the window still holds (a leaf just read, say); see
    /// ``markTokenStart()``. One the window has let go of, or one before a mark still waiting
    /// for its place, takes its place at once (``location(ofAbsolute:)``).
    func mark(absolute offset: Int) -> Int {
        var mark = Mark(offset: offset)
        let lastWaiting = marks[firstWaiting...].last { $0.place == nil }
        if offset < baseOffset || lastWaiting.map({ offset < $0.offset }) == true {
            mark.place = location(ofAbsolute: offset)
        }
        marks.append(mark)
        return marks.count - 1
    }

    /// The line and column of the mark `handle`.
    func place(ofMark handle: Int) -> (line: Int, column: Int) {
        let mark = marks[handle]
        return mark.place ?? location(ofAbsolute: mark.offset)
    }

    /// Lets go of the mark `handle` and of every mark made after it.
    func unmark(_ handle: Int) {
        guard handle >= 0, handle < marks.count else { return }
        marks.removeSubrange(handle...)
        firstWaiting = min(firstWaiting, marks.count)
    }

    private func uriSpan(_ index: Int) -> ByteSpan {
        guard index >= 0 else { return .empty }
        let b = bindings[index]
        return namespaceStore.span(from: b.uriStart, count: b.uriCount)
    }

    // MARK: - Locations and errors

    /// The 1-based line and byte column of a window index.
    func location(ofIndex index: Int) -> (line: Int, column: Int) {
        var line = linesBefore
        var lineStart = lineStartOffset
        var p = UnsafeMutableRawPointer(buf)
        let stop = UnsafeMutableRawPointer(buf + min(max(index, 0), end))
        while p < stop, let q = memchr(p, 0x0A, stop - p) {
            line += 1
            lineStart = baseOffset + (q - UnsafeMutableRawPointer(buf)) + 1
            p = q + 1
        }
        return (line + 1, baseOffset + index - lineStart + 1)
    }

    /// The location where the most recent token starts.
    var tokenLocation: (line: Int, column: Int) { location(ofIndex: tokenStart) }

    func error(_ code: GPXError.Code, at index: Int, _ message: String) -> GPXError {
        let (line, column) = location(ofIndex: index)
        return GPXError(code: code, file: fileName, line: line, column: column, message: message)
    }

    /// What a file that is not XML at all is, when its first bytes say so, with what to do
    /// instead; nil when they do not.
    static let sniffLength = 16

    static func notXML(_ buf: UnsafeMutablePointer<UInt8>, from p: Int, count: Int) -> String? {
        func at(_ i: Int) -> UInt8? { i < count ? buf[p + i] : nil }
        if at(0) == 0x1F && at(1) == 0x8B {
            return "this is gzip-compressed data, not GPX text: decompress it first (gunzip -k FILE)"
        }
        if at(0) == UInt8(ascii: "P") && at(1) == UInt8(ascii: "K") && at(2) == 3 && at(3) == 4 {
            return "this is a ZIP archive (a KMZ?), not GPX: extract the file inside it first"
        }
        if at(0) == UInt8(ascii: "$") || at(0) == UInt8(ascii: "!") {
            // "$GPGGA,", "$GNRMC,", "!AIVDM,": a talker and a sentence, then a comma.
            var i = 1
            while i <= 8, let c = at(i), (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) { i += 1 }
            if i >= 4 && i <= 8 && at(i) == UInt8(ascii: ",") {
                return "this is an NMEA 0183 log, not GPX: convert it (gpsbabel -i nmea -f FILE -o gpx -F OUT.gpx)"
            }
        }
        if at(0) == UInt8(ascii: "{") || at(0) == UInt8(ascii: "[") {
            return
                "this is JSON, not GPX, and neither GeoJSON (a \"type\" of FeatureCollection, Feature, LineString…) nor gpsd's reports (a \"class\"), the JSON traces Waymark reads"
        }
        return nil
    }

    private func malformed(at index: Int, _ message: String) -> GPXError {
        error(.malformedXML, at: index, message)
    }

    // MARK: - Reading

    /// Advances to the next start tag, end tag or text run.
    func next() throws -> Token {
        if popPending {
            popPending = false
            popElement()
        }
        if pendingEmptyEnd {
            pendingEmptyEnd = false
            popPending = true
            return .endElement
        }
        if finished { return .endOfDocument }
        if !started { try begin() }
        while true {
            let start = pos
            tokenStart = start
            do {
                if pos == end {
                    if !eof {
                        throw NeedMore()
                    }
                    return try finish()
                }
                if let token = try scanToken() { return token }
            } catch is NeedMore {
                pos = start
                if eof { throw truncated(at: start) }
                try refill(keepingFrom: start)
            }
        }
    }

    // MARK: - Raw access for fast paths

    /// The unread bytes, for a caller that recognises a common construct in place (the GPX
    /// reader's track point scanner): at least `minimum` of them unless the input ends first.
    /// Nil when the tokenizer is not between constructs inside an element. A caller that uses
    /// the bytes must call ``consumeRaw(_:)`` with exactly the length of the complete,
    /// well-formed elements it read; one that does not simply goes on with ``next()``.
    func rawWindow(minimum: Int) throws -> UnsafeBufferPointer<UInt8>? {
        guard started, !finished, !pendingEmptyEnd, pin == nil else { return nil }
        if popPending {
            popPending = false
            popElement()
        }
        guard elementCount > 0 else { return nil }
        // Never read so far ahead that the window limit trips where the general path's would not.
        while end - pos < minimum && !eof && end - pos < limits.maxTokenBytes {
            tokenStart = pos
            try refill(keepingFrom: pos)
        }
        return UnsafeBufferPointer(start: buf + pos, count: min(end - pos, limits.maxTokenBytes))
    }

    /// Skips `count` bytes of ``rawWindow(minimum:)`` that the caller has read as complete
    /// elements, children of the current element.
    func consumeRaw(_ count: Int) {
        pos += count
        tokenStart = pos
    }

    /// The absolute offset of the next unread byte in the decoded stream.
    var position: Int { baseOffset + pos }

    /// Whether offsets in the decoded stream are the source's own (UTF-8 and ASCII are read as
    /// they are; other encodings are transcoded to UTF-8 first).
    var offsetsAreTheSource: Bool { encoding == .utf8 || encoding == .ascii }

    /// The bytes of the most recent token, as they are in the decoded stream: right after a
    /// start tag, the whole tag with its attributes.
    func tokenBytes() -> [UInt8] {
        Array(UnsafeBufferPointer(start: buf + tokenStart, count: pos - tokenStart))
    }

    /// How deep the current element is (the root is 1).
    var depth: Int { elementCount }

    /// The nesting limit.
    var maxDepth: Int { limits.maxDepth }

    /// The binding index a prefix resolves to in the current element (-1 for no namespace), or
    /// nil when it is not declared. The empty prefix gives the default namespace.
    func bindingIndex(forPrefix prefix: ByteSpan) -> Int? {
        if prefix.count == 0 { return defaultBinding }
        var i = bindings.count - 1
        while i >= 0 {
            let b = bindings[i]
            // A prefix is never bound to an empty URI (openElement refuses it).
            if namespaceStore.span(from: b.prefixStart, count: b.prefixCount).equals(prefix) { return i }
            i -= 1
        }
        return nil
    }

    /// The URI of binding `index` (empty for -1).
    func namespaceURI(ofBinding index: Int) -> ByteSpan { uriSpan(index) }

    private func truncated(at index: Int) -> GPXError {
        if elementCount == 0 && !rootSeen {
            return error(.truncated, at: end, "unexpected end of file in the prolog")
        }
        if elementCount > 0 {
            let open = stack[elementCount - 1]
            let name = names.span(from: open.nameStart, count: open.nameCount).string
            return error(.truncated, at: end, "unexpected end of file: <\(name)> is not closed")
        }
        return error(.truncated, at: end, "unexpected end of file inside a comment or processing instruction")
    }

    private func finish() throws -> Token {
        if elementCount > 0 {
            let open = stack[elementCount - 1]
            let name = names.span(from: open.nameStart, count: open.nameCount).string
            throw error(.truncated, at: end, "unexpected end of file: <\(name)> is not closed")
        }
        if !rootSeen {
            if baseOffset + end == 0 { throw error(.truncated, at: 0, "the file is empty") }
            throw error(.truncated, at: end, "no root element: the file holds no XML element")
        }
        finished = true
        return .endOfDocument
    }

    // MARK: Buffer management

    /// An absolute offset the window must keep while set, so that a caller can still locate an
    /// earlier token (say `<time>`) when it finds a problem in what follows. Set it only around
    /// small elements: everything from the pin on counts against ``XMLLimits/maxTokenBytes``.
    @exclusivity(unchecked) var pin: Int?

    private func refill(keepingFrom tokenIndex: Int) throws {
        var start = tokenIndex
        if let pin { start = max(0, min(start, pin - baseOffset)) }
        if start > 0 {
            var counted = 0
            // The marks the window lets go of take their places on the way.
            var i = firstWaiting
            while i < marks.count {
                if marks[i].place == nil {
                    let index = marks[i].offset - baseOffset
                    if index >= start { break }
                    accountLines(from: counted, upTo: index)
                    counted = index
                    marks[i].place = (linesBefore + 1, marks[i].offset - lineStartOffset + 1)
                }
                i += 1
            }
            firstWaiting = i
            accountLines(from: counted, upTo: start)
            (buf).update(from: buf + start, count: end - start)
            baseOffset += start
            end -= start
            pos -= start
            tokenStart -= start
        }
        // The window never holds more than maxTokenBytes of one construct, whatever the read
        // sizes, so every chunking scans exactly the same bytes before giving up.
        let room = limits.maxTokenBytes - end
        if room <= 0 { throw tooLong() }
        let factor = encoding == .utf8 || encoding == .ascii ? 1 : 3
        let want = min(limits.chunkBytes * factor, room)
        if capacity - end < want {
            let newCapacity = max(capacity * 2, end + want + 64)
            let newBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + 1)
            newBuf.update(from: buf, count: end)
            buf.deallocate()
            buf = newBuf
            capacity = newCapacity
        }
        if factor == 1 {
            let n = try source.read(into: buf + end, capacity: want)
            if n == 0 { eof = true } else { end += n }
        } else {
            if staging == nil { staging = .allocate(capacity: limits.chunkBytes) }
            if carryCount == 0 {
                let n = try source.read(into: staging!, capacity: limits.chunkBytes)
                carryStart = 0
                carryCount = n
            }
            if carryCount == 0 {
                eof = true
            } else {
                let used = transcode(staging! + carryStart, count: carryCount, limit: want)
                if used == 0 { throw tooLong() }
                carryStart += used
                carryCount -= used
            }
        }
        buf[end] = 0
    }

    private func tooLong() -> GPXError {
        error(
            .limitExceeded, at: 0, "a single XML construct is longer than the \(limits.maxTokenBytes / 1024) KiB limit")
    }

    /// Counts the lines of `buf[from..<index]`, about to leave the window.
    private func accountLines(from: Int, upTo index: Int) {
        // Counted 32 bytes at a time (logs have a line every 20 bytes or so, too short for a
        // memchr per line); the last line feed is then found from the end. The loop reads a
        // local pointer with unchecked arithmetic (the bounds are checked once, by the loop's
        // condition), so that it is compare-and-add alone.
        let bytes = UnsafeRawPointer(buf)
        var lines = 0
        var i = from
        let feed = SIMD32<UInt8>(repeating: 0x0A)
        while index &- i >= 32 {
            // A true lane is all ones, 255: subtracting it adds one. A lane counts at most 255
            // blocks before the lanes are summed, so it never wraps.
            var counts = SIMD32<UInt8>(repeating: 0)
            let blocks = min((index &- i) / 32, 255)
            for _ in 0..<blocks {
                let v = bytes.loadUnaligned(fromByteOffset: i, as: SIMD32<UInt8>.self)
                counts &-= unsafeBitCast(v .== feed, to: SIMD32<UInt8>.self)
                i &+= 32
            }
            lines &+= Self.byteSum(counts)
        }
        while i < index {
            if buf[i] == 0x0A { lines += 1 }
            i += 1
        }
        var last = index - 1
        if lines > 0 { while buf[last] != 0x0A { last -= 1 } }
        guard lines > 0 else { return }
        linesBefore += lines
        lineStartOffset = baseOffset + last + 1
    }

    /// The sum of the 32 bytes of `v`: added in pairs into the 16-bit fields of four 64-bit
    /// words (at most 510 each), the words added (at most 2 040 a field), then the fields (at
    /// most 8 160): no sum carries into the next field.
    @inline(__always)
    private static func byteSum(_ v: SIMD32<UInt8>) -> Int {
        let words = unsafeBitCast(v, to: SIMD4<UInt64>.self)
        let low = SIMD4<UInt64>(repeating: 0x00FF_00FF_00FF_00FF)
        let pairs = (words & low) &+ ((words &>> 8) & low)
        let total = pairs[0] &+ pairs[1] &+ pairs[2] &+ pairs[3]
        // The four 16-bit fields of `total` added into the top one.
        return Int(truncatingIfNeeded: (total &* 0x0001_0001_0001_0001) &>> 48)
    }

    /// Appends single-byte-encoded bytes to the window as UTF-8.
    ///
    /// Bytes undefined in windows-1252 become NUL, which the scanner reports as an invalid
    /// character at its exact place.
    private func transcode(_ raw: UnsafePointer<UInt8>, count: Int, limit: Int) -> Int {
        var e = end
        let stop = end + limit
        var i = 0
        while i < count {
            let b = raw[i]
            if b < 0x80 {
                guard e < stop else { break }
                buf[e] = b
                e += 1
                i += 1
                continue
            }
            var scalar = UInt32(b)
            if encoding == .windows1252, b < 0xA0 {
                scalar = Self.windows1252[Int(b - 0x80)]
                if scalar == 0 {
                    guard e < stop else { break }
                    buf[e] = 0
                    e += 1
                    i += 1
                    continue
                }
            }
            if scalar < 0x800 {
                guard e + 2 <= stop else { break }
                buf[e] = UInt8(0xC0 | (scalar >> 6))
                buf[e + 1] = UInt8(0x80 | (scalar & 0x3F))
                e += 2
            } else {
                guard e + 3 <= stop else { break }
                buf[e] = UInt8(0xE0 | (scalar >> 12))
                buf[e + 1] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                buf[e + 2] = UInt8(0x80 | (scalar & 0x3F))
                e += 3
            }
            i += 1
        }
        end = e
        return i
    }

    private static let windows1252: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,
        0x017D, 0, 0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0, 0x017E, 0x0178,
    ]

    // MARK: Prolog

    private func begin() throws {
        started = true
        while end - pos < 6 && !eof { try refill(keepingFrom: pos) }
        if end - pos >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF {
            pos = 3
        } else if end - pos >= 2, (buf[0] == 0xFE && buf[1] == 0xFF) || (buf[0] == 0xFF && buf[1] == 0xFE) {
            throw error(
                .unsupportedEncoding, at: 0,
                "the file is UTF-16; convert it with `iconv -f UTF-16 -t UTF-8`")
        } else if end - pos >= 2, (buf[0] == 0x3C && buf[1] == 0) || (buf[0] == 0 && buf[1] == 0x3C) {
            throw error(
                .unsupportedEncoding, at: 0,
                "the file looks like UTF-16 without a byte order mark; convert it to UTF-8 with iconv")
        }
        let hasBOM = pos == 3
        while true {
            let start = pos
            do {
                try scanDeclaration(hasBOM: hasBOM)
                return
            } catch is NeedMore {
                pos = start
                if eof { throw error(.truncated, at: end, "unexpected end of file in the XML declaration") }
                try refill(keepingFrom: start)
            }
        }
    }

    private func startsWith(_ literal: StaticString, at index: Int) throws -> Bool {
        let n = literal.utf8CodeUnitCount
        if end - index < n {
            // Only a prefix is here; if it matches so far, more bytes are needed.
            if memcmp(buf + index, literal.utf8Start, end - index) == 0 && !eof { throw NeedMore() }
            return false
        }
        return memcmp(buf + index, literal.utf8Start, n) == 0
    }

    private func scanDeclaration(hasBOM: Bool) throws {
        guard try startsWith("<?xml", at: pos) else { return }
        var p = pos + 5
        if p == end { throw NeedMore() }
        guard ByteSpan.isSpace(buf[p]) else { return }  // a PI such as <?xml-stylesheet?>
        tokenStart = pos
        func expectSpace() throws {
            if p == end { throw NeedMore() }
            guard ByteSpan.isSpace(buf[p]) else {
                throw malformed(at: p, "malformed XML declaration: expected white space")
            }
            skipSpace(&p)
            if p == end { throw NeedMore() }
        }
        func pseudoAttribute(_ name: StaticString) throws -> ByteSpan? {
            guard try startsWith(name, at: p) else { return nil }
            p += name.utf8CodeUnitCount
            skipSpace(&p)
            if p == end { throw NeedMore() }
            guard buf[p] == UInt8(ascii: "=") else {
                throw malformed(at: p, "malformed XML declaration: expected '=' after '\(name)'")
            }
            p += 1
            skipSpace(&p)
            if p == end { throw NeedMore() }
            let quote = buf[p]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw malformed(at: p, "malformed XML declaration: the value of '\(name)' must be quoted")
            }
            p += 1
            let valueStart = p
            while p < end && buf[p] != quote && buf[p] != UInt8(ascii: "?") && buf[p] != UInt8(ascii: ">") {
                p += 1
            }
            if p == end { throw NeedMore() }
            guard buf[p] == quote else {
                throw malformed(at: p, "malformed XML declaration: unterminated value of '\(name)'")
            }
            p += 1
            return ByteSpan(start: UnsafePointer(buf + valueStart), count: p - 1 - valueStart)
        }
        try expectSpace()
        guard let version = try pseudoAttribute("version") else {
            throw malformed(at: p, "malformed XML declaration: 'version' must come first")
        }
        let v = version.string
        guard v.count >= 3, v.hasPrefix("1."), v.dropFirst(2).allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw malformed(at: p, "unsupported XML version '\(v)'")
        }
        var declared = Encoding.utf8
        var sawSpace = false
        func spaceIfAny() throws {
            if p == end { throw NeedMore() }
            sawSpace = ByteSpan.isSpace(buf[p])
            skipSpace(&p)
            if p == end { throw NeedMore() }
        }
        try spaceIfAny()
        if sawSpace, let name = try pseudoAttribute("encoding") {
            declared = try declaredEncoding(
                name.string, at: UnsafePointer(name.start) - UnsafePointer(buf), hasBOM: hasBOM)
            try spaceIfAny()
        }
        if sawSpace, let standalone = try pseudoAttribute("standalone") {
            guard standalone.equals("yes") || standalone.equals("no") else {
                throw malformed(at: p, "standalone must be 'yes' or 'no'")
            }
            try spaceIfAny()
        }
        if end - p < 2 { throw NeedMore() }
        guard buf[p] == UInt8(ascii: "?"), buf[p + 1] == UInt8(ascii: ">") else {
            throw malformed(at: p, "malformed XML declaration: expected '?>'")
        }
        pos = p + 2
        encoding = declared
        if encoding == .latin1 || encoding == .windows1252 {
            // Re-decode what is already in the window after the declaration.
            let rest = end - pos
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(rest, 1))
            defer { copy.deallocate() }
            copy.update(from: buf + pos, count: rest)
            end = pos
            if capacity - end < rest * 3 {
                let newCapacity = end + rest * 3 + limits.chunkBytes * 3 + 64
                let newBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + 1)
                newBuf.update(from: buf, count: end)
                buf.deallocate()
                buf = newBuf
                capacity = newCapacity
            }
            _ = transcode(copy, count: rest, limit: rest * 3)
            buf[end] = 0
        }
    }

    /// The encoding a declaration names. It takes effect only once the whole declaration has
    /// been read: the scan may be retried after more bytes arrive, and those must not be
    /// transcoded twice.
    private func declaredEncoding(_ name: String, at index: Int, hasBOM: Bool) throws -> Encoding {
        let declared: Encoding
        switch name.uppercased() {
        case "UTF-8", "UTF8":
            declared = .utf8
        case "US-ASCII", "ASCII":
            declared = .ascii
        case "ISO-8859-1", "ISO8859-1", "ISO_8859-1", "LATIN1", "LATIN-1", "L1":
            declared = .latin1
        case "WINDOWS-1252", "CP1252":
            declared = .windows1252
        default:
            throw error(
                .unsupportedEncoding, at: index,
                "encoding '\(name)' is not supported (Waymark reads UTF-8, US-ASCII, ISO-8859-1 and windows-1252); "
                    + "convert the file with `iconv -f \(name) -t UTF-8`")
        }
        if hasBOM && declared != .utf8 && declared != .ascii {
            throw error(
                .unsupportedEncoding, at: index, "the file starts with a UTF-8 byte order mark but declares '\(name)'")
        }
        return declared
    }

    // MARK: Tokens

    @inline(__always)
    private func skipSpace(_ p: inout Int) {
        while ByteSpan.isSpace(buf[p]) { p += 1 }
    }

    /// Scans one construct at `pos`; nil when it was skipped (comment, PI, space outside the root).
    private func scanToken() throws -> Token? {
        let c = buf[pos]
        if c == UInt8(ascii: "<") {
            if end - pos < 2 { throw NeedMore() }
            switch buf[pos + 1] {
            case UInt8(ascii: "/"):
                return try scanEndTag()
            case UInt8(ascii: "?"):
                try scanProcessingInstruction()
                return nil
            case UInt8(ascii: "!"):
                return try scanBang()
            default:
                return try scanStartTag()
            }
        }
        if elementCount == 0 {
            var p = pos
            skipSpace(&p)
            guard p == pos else {
                pos = p
                return nil
            }
            if !rootClosed {
                // The decision must not depend on how the input arrives: it reads at most 16
                // bytes, so it waits for 16 (or the end).
                if end - p < Self.sniffLength && !eof { throw NeedMore() }
                if let kind = Self.notXML(buf, from: p, count: min(end - p, Self.sniffLength)) {
                    throw error(.notGPX, at: p, kind)
                }
            }
            let what = rootClosed ? "content after the root element" : "text before the root element"
            throw malformed(at: p, what + " is not allowed")
        }
        return try scanText()
    }

    private func scanBang() throws -> Token? {
        if try startsWith("<!--", at: pos) {
            try scanComment()
            return nil
        }
        if try startsWith("<![CDATA[", at: pos) {
            guard elementCount > 0 else {
                throw malformed(at: pos, "a CDATA section is not allowed outside the root element")
            }
            return try scanCDATA()
        }
        if try startsWith("<!DOCTYPE", at: pos) {
            throw error(
                .forbiddenDeclaration, at: pos,
                "DOCTYPE declarations are refused: GPX needs none, and they allow entity expansion attacks and external entities"
            )
        }
        if try startsWith("<!ENTITY", at: pos) {
            throw error(.forbiddenDeclaration, at: pos, "entity declarations are refused")
        }
        throw malformed(at: pos, "'<!' must start a comment or a CDATA section")
    }

    private func scanComment() throws {
        var p = pos + 4
        while true {
            let b = buf[p]
            if b == UInt8(ascii: "-") {
                if end - p < 3 { throw NeedMore() }
                if buf[p + 1] == UInt8(ascii: "-") {
                    guard buf[p + 2] == UInt8(ascii: ">") else {
                        throw malformed(at: p, "'--' is not allowed inside a comment")
                    }
                    pos = p + 3
                    return
                }
                p += 1
            } else {
                p = try checkChar(at: p)
            }
        }
    }

    private func scanCDATA() throws -> Token {
        let contentStart = pos + 9
        var p = contentStart
        var hasCR = false
        while true {
            let b = buf[p]
            if b == UInt8(ascii: "]") {
                if end - p < 3 { throw NeedMore() }
                if buf[p + 1] == UInt8(ascii: "]") && buf[p + 2] == UInt8(ascii: ">") { break }
                p += 1
            } else {
                if b == 0x0D { hasCR = true }
                p = try checkChar(at: p)
            }
        }
        textScratch.count = 0
        if hasCR {
            normalizeNewlines(from: contentStart, to: p)
            text = textScratch.span
        } else {
            text = ByteSpan(start: UnsafePointer(buf + contentStart), count: p - contentStart)
        }
        pos = p + 3
        return .text
    }

    private func normalizeNewlines(from start: Int, to stop: Int) {
        var i = start
        while i < stop {
            let b = buf[i]
            if b == 0x0D {
                textScratch.append(0x0A)
                if i + 1 < stop && buf[i + 1] == 0x0A { i += 1 }
            } else {
                textScratch.append(b)
            }
            i += 1
        }
    }

    private func scanProcessingInstruction() throws {
        let targetStart = pos + 2
        var p = targetStart
        guard try scanName(&p, allowColon: false) else {
            throw malformed(at: p, "a processing instruction must start with a target name")
        }
        let target = ByteSpan(start: UnsafePointer(buf + targetStart), count: p - targetStart)
        if target.count == 3,
            target[0] | 0x20 == UInt8(ascii: "x"), target[1] | 0x20 == UInt8(ascii: "m"),
            target[2] | 0x20 == UInt8(ascii: "l")
        {
            let what =
                target.equals("xml")
                ? "the XML declaration is allowed only at the very start of the file"
                : "the processing instruction target '\(target.string)' is reserved"
            throw malformed(at: pos, what)
        }
        if end - p < 2 { throw NeedMore() }
        if buf[p] == UInt8(ascii: "?") && buf[p + 1] == UInt8(ascii: ">") {
            pos = p + 2
            return
        }
        guard ByteSpan.isSpace(buf[p]) else {
            throw malformed(at: p, "expected white space or '?>' after the processing instruction target")
        }
        while true {
            let b = buf[p]
            if b == UInt8(ascii: "?") {
                if end - p < 2 { throw NeedMore() }
                if buf[p + 1] == UInt8(ascii: ">") {
                    pos = p + 2
                    return
                }
                p += 1
            } else {
                p = try checkChar(at: p)
            }
        }
    }

    /// Checks the character at `p` (any byte other than the delimiters the caller handles) and
    /// returns the index after it.
    @inline(__always)
    private func checkChar(at p: Int) throws -> Int {
        let b = buf[p]
        if b >= 0x20 && b < 0x80 { return p + 1 }
        if b == 0x0A || b == 0x09 || b == 0x0D { return p + 1 }
        if b == 0 && p == end { throw NeedMore() }
        if b < 0x20 {
            throw malformed(at: p, "invalid character U+\(hex4(UInt32(b))) (XML forbids control characters)")
        }
        return try checkUTF8(at: p)
    }

    /// Validates the UTF-8 sequence starting at `p` (a byte ≥ 0x80) and checks it is an XML Char.
    private func checkUTF8(at p: Int) throws -> Int {
        if encoding == .ascii {
            throw error(
                .malformedXML, at: p,
                "byte 0x\(String(buf[p], radix: 16, uppercase: true)) is not US-ASCII, as the declaration says")
        }
        let b0 = buf[p]
        var length = 0
        var scalar: UInt32 = 0
        var minimum: UInt32 = 0
        switch b0 {
        case 0xC2...0xDF:
            length = 2
            scalar = UInt32(b0 & 0x1F)
            minimum = 0x80
        case 0xE0...0xEF:
            length = 3
            scalar = UInt32(b0 & 0x0F)
            minimum = 0x800
        case 0xF0...0xF4:
            length = 4
            scalar = UInt32(b0 & 0x07)
            minimum = 0x10000
        default:
            throw malformed(
                at: p, "invalid UTF-8: byte 0x\(String(b0, radix: 16, uppercase: true)) cannot start a character")
        }
        if end - p < length { throw NeedMore() }
        for i in 1..<length {
            let b = buf[p + i]
            guard b & 0xC0 == 0x80 else {
                throw malformed(at: p, "invalid UTF-8: truncated multi-byte sequence")
            }
            scalar = (scalar << 6) | UInt32(b & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw malformed(at: p, "invalid UTF-8: overlong or out-of-range sequence")
        }
        guard scalar != 0xFFFE && scalar != 0xFFFF else {
            throw malformed(at: p, "invalid character U+\(hex4(scalar)) (not an XML character)")
        }
        return p + length
    }

    /// Decodes the UTF-8 scalar at `p` (already validated) and its length.
    private func scalar(at p: Int) -> (UInt32, Int) {
        let b0 = buf[p]
        if b0 < 0x80 { return (UInt32(b0), 1) }
        if b0 < 0xE0 { return ((UInt32(b0 & 0x1F) << 6) | UInt32(buf[p + 1] & 0x3F), 2) }
        if b0 < 0xF0 {
            return ((UInt32(b0 & 0x0F) << 12) | (UInt32(buf[p + 1] & 0x3F) << 6) | UInt32(buf[p + 2] & 0x3F), 3)
        }
        return (
            (UInt32(b0 & 0x07) << 18) | (UInt32(buf[p + 1] & 0x3F) << 12) | (UInt32(buf[p + 2] & 0x3F) << 6)
                | UInt32(buf[p + 3] & 0x3F), 4
        )
    }

    /// Scans an XML Name at `p`. Returns false when no name starts there.
    /// With `allowColon`, records nothing: callers find the colon themselves.
    private func scanName(_ p: inout Int, allowColon: Bool) throws -> Bool {
        let start = p
        while true {
            let b = buf[p]
            if b < 0x80 {
                let letter = (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A
                let isStart = letter || b == 0x5F || (b == 0x3A && allowColon)
                let isChar = isStart || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E
                if p == start ? isStart : isChar {
                    p += 1
                    continue
                }
                if b == 0 && p == end { throw NeedMore() }
                return p > start
            }
            let next = try checkUTF8(at: p)
            let (v, _) = scalar(at: p)
            if !(Self.isNameStart(v) || (p > start && Self.isNameCharExtra(v))) {
                return p > start
            }
            p = next
        }
    }

    private static func isNameStart(_ v: UInt32) -> Bool {
        switch v {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
            0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD,
            0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    private static func isNameCharExtra(_ v: UInt32) -> Bool {
        v == 0xB7 || (0x300...0x36F).contains(v) || (0x203F...0x2040).contains(v)
    }

    /// Scans a qualified name; returns the prefix length (0 when unprefixed).
    private func scanQName(_ p: inout Int, what: StaticString) throws -> Int {
        let start = p
        let b = buf
        // Fast path: an ASCII name ended by an ASCII delimiter.
        let table = nameClass
        var q = p
        var c = b[q]
        if table[Int(c)] & 1 != 0 {
            var colon = -1
            q += 1
            while true {
                c = b[q]
                if table[Int(c)] & 2 != 0 {
                    q &+= 1
                } else if c == 0x3A && colon < 0 {
                    colon = q
                    q += 1
                } else {
                    break
                }
            }
            if c < 0x80 && c != 0x3A && !(c == 0 && q == end) {
                if colon == q - 1 {
                    throw malformed(
                        at: start,
                        "'\(ByteSpan(start: UnsafePointer(b + start), count: q - start).string)' is not a valid qualified name"
                    )
                }
                p = q
                return colon < 0 ? 0 : colon - start
            }
        }
        guard try scanName(&p, allowColon: true) else {
            if p == end { throw NeedMore() }
            throw malformed(at: p, "expected \(what)")
        }
        var colon = -1
        for i in start..<p where buf[i] == UInt8(ascii: ":") {
            guard colon < 0 else { throw malformed(at: start, "a name may contain at most one ':' (namespaces)") }
            colon = i
        }
        if colon == start || colon == p - 1 {
            throw malformed(
                at: start,
                "'\(ByteSpan(start: UnsafePointer(buf + start), count: p - start).string)' is not a valid qualified name"
            )
        }
        return colon < 0 ? 0 : colon - start
    }

    private func scanStartTag() throws -> Token {
        var p = pos + 1
        let nameStart = p
        let prefixCount = try scanQName(&p, what: "an element name after '<'")
        let nameCount = p - nameStart
        if !attributes.isEmpty { attributes.removeAll(keepingCapacity: true) }
        attributeScratch.count = 0
        var empty = false
        while true {
            let hadSpace = ByteSpan.isSpace(buf[p])
            skipSpace(&p)
            let c = buf[p]
            if c == UInt8(ascii: ">") {
                p += 1
                break
            }
            if c == UInt8(ascii: "/") {
                if end - p < 2 { throw NeedMore() }
                guard buf[p + 1] == UInt8(ascii: ">") else { throw malformed(at: p, "expected '>' after '/'") }
                p += 2
                empty = true
                break
            }
            if c == 0 && p == end { throw NeedMore() }
            guard hadSpace else {
                throw malformed(at: p, "expected white space, '>' or '/>' in the start tag")
            }
            let attrStart = p
            let attrPrefix = try scanQName(&p, what: "an attribute name, '>' or '/>'")
            let attrCount = p - attrStart
            skipSpace(&p)
            if p == end { throw NeedMore() }
            guard buf[p] == UInt8(ascii: "=") else { throw malformed(at: p, "expected '=' after the attribute name") }
            p += 1
            skipSpace(&p)
            if p == end { throw NeedMore() }
            let quote = buf[p]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw malformed(at: p, "an attribute value must be quoted")
            }
            p += 1
            let valueStart = p
            var needsDecode = false
            while true {
                let b = buf[p]
                if b == quote { break }
                if b >= 0x20 && b < 0x80 {
                    if b == UInt8(ascii: "<") { throw malformed(at: p, "'<' is not allowed in an attribute value") }
                    if b == UInt8(ascii: "&") {
                        p = try checkReference(at: p)
                        needsDecode = true
                        continue
                    }
                    p += 1
                    continue
                }
                if b == 0x09 || b == 0x0A || b == 0x0D { needsDecode = true }
                p = try checkChar(at: p)
            }
            let attribute = Attribute(
                nameStart: attrStart, nameCount: attrCount, prefixCount: attrPrefix,
                valueStart: valueStart, valueCount: p - valueStart, valueInScratch: false,
                needsDecode: needsDecode, isNamespaceDeclaration: false, uri: -1)
            attributes.append(attribute)
            p += 1
        }
        // The whole tag is here: now act on it.
        if elementCount == 0 && rootClosed {
            throw malformed(at: pos, "content after the root element is not allowed (a second root element)")
        }
        if elementCount >= limits.maxDepth {
            throw error(.limitExceeded, at: pos, "elements are nested deeper than the limit of \(limits.maxDepth)")
        }
        pos = p
        try openElement(nameStart: nameStart, nameCount: nameCount, prefixCount: prefixCount)
        rootSeen = true
        isEmptyElement = empty
        pendingEmptyEnd = empty
        return .startElement
    }

    private func openElement(nameStart: Int, nameCount: Int, prefixCount: Int) throws {
        let bindingsBefore = bindings.count
        let defaultBefore = defaultBinding
        // Decode values and register namespace declarations.
        for i in attributes.indices {
            if attributes[i].needsDecode {
                let a = attributes[i]
                let offset = attributeScratch.count
                decodeAttribute(from: a.valueStart, to: a.valueStart + a.valueCount)
                attributes[i].valueStart = offset
                attributes[i].valueCount = attributeScratch.count - offset
                attributes[i].valueInScratch = true
            }
            let a = attributes[i]
            let qname = ByteSpan(start: UnsafePointer(buf + a.nameStart), count: a.nameCount)
            let isDefault = a.prefixCount == 0 && qname.equals("xmlns")
            let isPrefixed = a.prefixCount == 5 && memcmp(qname.start, "xmlns", 5) == 0
            guard isDefault || isPrefixed else { continue }
            attributes[i].isNamespaceDeclaration = true
            let value = attributeValue(i)
            let prefix =
                isDefault
                ? ByteSpan.empty : ByteSpan(start: qname.start + 6, count: qname.count - 6)
            if isPrefixed {
                if prefix.equals("xmlns") {
                    throw malformed(at: a.nameStart, "the prefix 'xmlns' cannot be declared")
                }
                if value.count == 0 {
                    throw malformed(at: a.nameStart, "a namespace prefix cannot be bound to an empty URI")
                }
                if prefix.equals("xml") != value.equals("http://www.w3.org/XML/1998/namespace") {
                    throw malformed(at: a.nameStart, "the prefix 'xml' is bound to its own namespace only")
                }
            }
            let prefixOffset = namespaceStore.count
            namespaceStore.append(prefix)
            let uriOffset = namespaceStore.count
            namespaceStore.append(value)
            bindings.append(
                Binding(
                    prefixStart: prefixOffset, prefixCount: prefix.count, uriStart: uriOffset, uriCount: value.count))
            if isDefault { defaultBinding = value.count == 0 ? -1 : bindings.count - 1 }
            bindingsVersion &+= 1
        }
        let nameOffset = names.count
        names.append(buf + nameStart, count: nameCount)
        let prefix = ByteSpan(start: UnsafePointer(buf + nameStart), count: prefixCount)
        let uri = prefixCount == 0 ? defaultBinding : try resolve(prefix: prefix, isElement: true, at: nameStart)
        if elementCount == stackCapacity {
            let bigger = UnsafeMutablePointer<OpenElement>.allocate(capacity: stackCapacity * 2)
            bigger.moveInitialize(from: stack, count: elementCount)
            stack.deallocate()
            stack = bigger
            stackCapacity *= 2
        }
        (stack + elementCount).initialize(
            to: OpenElement(
                nameStart: nameOffset, nameCount: nameCount, prefixCount: prefixCount,
                bindingCount: bindingsBefore, uri: uri, defaultBefore: defaultBefore))
        elementCount += 1
        // Resolve attribute prefixes and reject duplicates: pairwise for the few attributes of
        // a usual tag, through hashes of the names beyond that, so that a tag with a hundred
        // thousand attributes costs linear time, not quadratic. Most tags have none (a TCX or
        // KML file's): they make no tables.
        guard !attributes.isEmpty else { return }
        let hashed = attributes.count > 16
        var qualifiedNames: [Int: [Int]] = [:]
        var namespacedNames: [Int: [Int]] = [:]
        /// Whether an attribute before `i` matches: among those of the same hash, or all of them.
        func anyEarlier(than i: Int, key: Int, in table: [Int: [Int]], _ matches: (Int) -> Bool) -> Bool {
            hashed ? table[key]?.contains(where: matches) ?? false : (0..<i).contains(where: matches)
        }
        for i in attributes.indices {
            let a = attributes[i]
            if !a.isNamespaceDeclaration && a.prefixCount > 0 {
                let p = ByteSpan(start: UnsafePointer(buf + a.nameStart), count: a.prefixCount)
                attributes[i].uri = try resolve(prefix: p, isElement: false, at: a.nameStart)
            }
            let name = attributeQualifiedName(i)
            let nameKey = hashed ? Self.hash(name, .empty) : 0
            if anyEarlier(than: i, key: nameKey, in: qualifiedNames, { attributeQualifiedName($0).equals(name) }) {
                throw malformed(at: a.nameStart, "attribute '\(name.string)' appears twice")
            }
            if hashed { qualifiedNames[nameKey, default: []].append(i) }
            let uri = attributes[i].uri
            guard uri >= 0 else { continue }
            let local = attributeLocalName(i)
            let namespaceKey = hashed ? Self.hash(local, uriSpan(uri)) : 0
            let same = anyEarlier(than: i, key: namespaceKey, in: namespacedNames) {
                attributes[$0].uri >= 0 && attributeLocalName($0).equals(local)
                    && uriSpan(attributes[$0].uri).equals(uriSpan(uri))
            }
            if same {
                throw malformed(at: a.nameStart, "attribute '\(name.string)' appears twice in the same namespace")
            }
            if hashed { namespacedNames[namespaceKey, default: []].append(i) }
        }
    }

    /// A hash of a name and a namespace name, for the duplicate check of tags with many attributes.
    private static func hash(_ name: ByteSpan, _ namespace: ByteSpan) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(start: name.start, count: name.count))
        hasher.combine(0xFF as UInt8)  // not a byte of UTF-8: the two parts cannot run together
        hasher.combine(bytes: UnsafeRawBufferPointer(start: namespace.start, count: namespace.count))
        return hasher.finalize()
    }

    private func resolve(prefix: ByteSpan, isElement: Bool, at index: Int) throws -> Int {
        if prefix.count == 0 { return isElement ? defaultBinding : -1 }
        guard let binding = bindingIndex(forPrefix: prefix) else {
            throw malformed(at: index, "namespace prefix '\(prefix.string)' is not declared")
        }
        return binding
    }

    private func popElement() {
        elementCount -= 1
        let e = stack[elementCount]
        names.count = e.nameStart
        defaultBinding = e.defaultBefore
        if bindings.count > e.bindingCount {
            namespaceStore.count = bindings[e.bindingCount].prefixStart
            bindings.removeSubrange(e.bindingCount...)
            bindingsVersion &+= 1
        }
        if elementCount == 0 { rootClosed = true }
    }

    private func pushBinding(prefix: StaticString, uri: StaticString) {
        let prefixOffset = namespaceStore.count
        namespaceStore.append(prefix)
        let uriOffset = namespaceStore.count
        namespaceStore.append(uri)
        bindings.append(
            Binding(
                prefixStart: prefixOffset, prefixCount: prefix.utf8CodeUnitCount, uriStart: uriOffset,
                uriCount: uri.utf8CodeUnitCount))
    }

    private func scanEndTag() throws -> Token {
        var p = pos + 2
        // Fast path: the end tag names the open element exactly, followed by '>'.
        if elementCount > 0, case let open = stack[elementCount - 1], end - p > open.nameCount,
            buf[p + open.nameCount] == UInt8(ascii: ">"),
            sameBytes(buf + p, names.base + open.nameStart, open.nameCount)
        {
            pos = p + open.nameCount + 1
            popPending = true
            return .endElement
        }
        let nameStart = p
        _ = try scanQName(&p, what: "an element name after '</'")
        let name = ByteSpan(start: UnsafePointer(buf + nameStart), count: p - nameStart)
        skipSpace(&p)
        if p == end { throw NeedMore() }
        guard buf[p] == UInt8(ascii: ">") else { throw malformed(at: p, "expected '>' to close the end tag") }
        guard elementCount > 0, case let open = stack[elementCount - 1] else {
            throw malformed(at: pos, "</\(name.string)> has no matching start tag")
        }
        let openName = names.span(from: open.nameStart, count: open.nameCount)
        guard openName.equals(name) else {
            throw malformed(at: pos, "</\(name.string)> does not match <\(openName.string)>")
        }
        pos = p + 1
        popPending = true
        return .endElement
    }

    @inline(__always)
    private func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if n > 32 { return memcmp(a, b, n) == 0 }
        for i in 0..<n where a[i] != b[i] { return false }
        return true
    }

    /// Validates a reference at `p` ('&') and returns the index after its ';'.
    private func checkReference(at p: Int) throws -> Int {
        var q = p + 1
        if buf[q] == UInt8(ascii: "#") {
            q += 1
            var value: UInt32 = 0
            var digits = 0
            let isHex = buf[q] == UInt8(ascii: "x")
            if isHex { q += 1 }
            while true {
                let b = buf[q]
                var d: UInt32
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f") where isHex: d = UInt32(b - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F") where isHex: d = UInt32(b - UInt8(ascii: "A") + 10)
                case UInt8(ascii: ";"):
                    guard digits > 0 else { throw malformed(at: p, "empty character reference") }
                    guard Self.isXMLChar(value) else {
                        throw malformed(at: p, "character reference to U+\(hex4(value)), which is not an XML character")
                    }
                    return q + 1
                case 0 where q == end:
                    throw NeedMore()
                default:
                    throw malformed(at: p, "malformed character reference (expected digits and ';')")
                }
                value = min(value &* (isHex ? 16 : 10) &+ d, 0x11_0000)
                digits += 1
                q += 1
            }
        }
        guard try scanName(&q, allowColon: true) else {
            throw malformed(at: p, "'&' must start an entity or character reference (write &amp; for a literal '&')")
        }
        if q == end { throw NeedMore() }
        guard buf[q] == UInt8(ascii: ";") else {
            throw malformed(at: p, "entity reference is missing its ';'")
        }
        let name = ByteSpan(start: UnsafePointer(buf + p + 1), count: q - p - 1)
        guard Self.predefined(name) != nil else {
            throw malformed(
                at: p, "undefined entity &\(name.string); (only amp, lt, gt, apos and quot exist without a DTD)")
        }
        return q + 1
    }

    private static func predefined(_ name: ByteSpan) -> UInt8? {
        if name.equals("amp") { return UInt8(ascii: "&") }
        if name.equals("lt") { return UInt8(ascii: "<") }
        if name.equals("gt") { return UInt8(ascii: ">") }
        if name.equals("quot") { return UInt8(ascii: "\"") }
        if name.equals("apos") { return UInt8(ascii: "'") }
        return nil
    }

    static func isXMLChar(_ v: UInt32) -> Bool {
        v == 0x9 || v == 0xA || v == 0xD || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
            || (0x10000...0x10FFFF).contains(v)
    }

    /// Decodes an already validated reference at `p` into `out`; returns the index after ';'.
    private func decodeReference(at p: Int, into out: ByteStore) -> Int {
        var q = p + 1
        if buf[q] == UInt8(ascii: "#") {
            q += 1
            let isHex = buf[q] == UInt8(ascii: "x")
            if isHex { q += 1 }
            var value: UInt32 = 0
            while buf[q] != UInt8(ascii: ";") {
                let b = buf[q]
                let d: UInt32 =
                    b <= UInt8(ascii: "9")
                    ? UInt32(b - UInt8(ascii: "0")) : UInt32((b | 0x20) - UInt8(ascii: "a") + 10)
                value = value * (isHex ? 16 : 10) + d
                q += 1
            }
            out.appendScalar(value)
            return q + 1
        }
        while buf[q] != UInt8(ascii: ";") { q += 1 }
        out.append(Self.predefined(ByteSpan(start: UnsafePointer(buf + p + 1), count: q - p - 1))!)
        return q + 1
    }

    /// Attribute-value normalisation (XML 1.0 §3.3.3) for CDATA attributes.
    private func decodeAttribute(from start: Int, to stop: Int) {
        var i = start
        while i < stop {
            let b = buf[i]
            switch b {
            case UInt8(ascii: "&"):
                i = decodeReference(at: i, into: attributeScratch)
                continue
            case 0x0D:
                attributeScratch.append(0x20)
                if i + 1 < stop && buf[i + 1] == 0x0A { i += 1 }
            case 0x09, 0x0A:
                attributeScratch.append(0x20)
            default:
                attributeScratch.append(b)
            }
            i += 1
        }
    }

    /// When set, runs of white space between markup (`>  \n  <`) are not reported as text.
    @exclusivity(unchecked) var skipsWhitespaceText = false

    private func scanText() throws -> Token? {
        if skipsWhitespaceText {
            var q = pos
            while ByteSpan.isSpace(buf[q]) { q += 1 }
            if buf[q] == UInt8(ascii: "<") && q < end {
                pos = q
                return nil
            }
        }
        var p = pos
        var needsDecode = false
        while true {
            let b = buf[p]
            if (b >= 0x20 && b < 0x80 && b != 0x3C && b != 0x26 && b != 0x5D) || b == 0x0A || b == 0x09 {
                p += 1
                continue
            }
            if b == UInt8(ascii: "<") { break }
            if b == UInt8(ascii: "&") {
                p = try checkReference(at: p)
                needsDecode = true
                continue
            }
            if b == UInt8(ascii: "]") {
                if end - p < 3 { throw NeedMore() }
                if buf[p + 1] == UInt8(ascii: "]") && buf[p + 2] == UInt8(ascii: ">") {
                    throw malformed(at: p, "']]>' is not allowed in text")
                }
                p += 1
                continue
            }
            if b == 0 && p == end && !eof && p - pos >= limits.maxTokenBytes / 2 {
                // A run of text longer than half the token limit (a KML line's coordinates) is
                // reported in pieces rather than refused: readers of such text take it as it
                // comes. A CR stays for the next piece, with the LF that may follow it.
                let q = buf[p - 1] == 0x0D ? p - 1 : p
                if q > pos {
                    p = q
                    break
                }
            }
            if b == 0x0D { needsDecode = true }
            p = try checkChar(at: p)
        }
        if needsDecode {
            textScratch.count = 0
            var i = pos
            while i < p {
                let b = buf[i]
                if b == UInt8(ascii: "&") {
                    i = decodeReference(at: i, into: textScratch)
                    continue
                }
                if b == 0x0D {
                    textScratch.append(0x0A)
                    if i + 1 < p && buf[i + 1] == 0x0A { i += 1 }
                } else {
                    textScratch.append(b)
                }
                i += 1
            }
            text = textScratch.span
        } else {
            text = ByteSpan(start: UnsafePointer(buf + pos), count: p - pos)
        }
        pos = p
        return .text
    }
}

func hex4(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}
