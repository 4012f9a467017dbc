#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recognises the common shape of a GPX track point straight from the bytes, so that the reader
/// can skip its general path for the millions of points that look alike:
///
/// ```xml
/// <trkpt lat="47.3769" lon="8.5417"><ele>408.2</ele><time>2024-05-01T08:00:00Z</time>
///   <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>158</gpxtpx:hr>
///   </gpxtpx:TrackPointExtension></extensions></trkpt>
/// ```
///
/// It accepts only what it can read exactly as the general path would:
/// - `lat` and `lon` once each and no other attribute;
/// - then `<ele>`, `<time>` and `<extensions>`, each at most once and in that order, with white
///   space between them;
/// - in `<extensions>`, one Garmin TrackPointExtension (v1 or v2) element with value children
///   the reader knows (`hr`, `cad`, `atemp`, `wtemp`, `depth`, `speed`, `course`);
/// - values the reader's own parsers accept: coordinates in range, a time with a zone.
///
/// Anything else, say a comment, an entity, a CDATA section, another element, a prefixed GPX
/// element, a bad value or a point cut off by the end of the window, makes it answer
/// ``Outcome/notSimple`` without having consumed anything. The general path then reads the point
/// and finds any error. Every byte it accepts is ASCII, so the UTF-8 check holds too.
struct TrackPointScanner {
    enum Outcome {
        /// A complete point, `length` bytes long from the window's start (leading white space
        /// included).
        case point(length: Int)
        /// The point's extension uses a prefix the scanner has not been told about: resolve it,
        /// call ``learn(prefix:isTrackPointExtension:)`` and scan again.
        case unknownPrefix(ByteSpan)
        case notSimple
    }

    /// Whether `<extensions>` may be read here: not when extension elements are kept verbatim.
    var readsExtensions: Bool
    /// Whether the default namespace is GPX's (or none), so that `<trkpt>` and its children are
    /// GPX elements. The owner sets it, and calls ``forgetPrefixes()``, whenever the namespaces
    /// in scope change.
    var defaultIsGPX = false
    // The one prefix resolved so far (up to 16 bytes, zero-padded), and whether it names a
    // Garmin TrackPointExtension namespace.
    private var knownPrefix: (UInt64, UInt64) = (0, 0)
    private var knownPrefixCount = 0
    private var knownPrefixIsTPE = false
    private var dayCache = ValueParsing.DayCache()

    init(readsExtensions: Bool) {
        self.readsExtensions = readsExtensions
    }

    /// Records what `prefix` resolves to in the current scope.
    mutating func learn(prefix: ByteSpan, isTrackPointExtension: Bool) {
        guard prefix.count <= 16 else { return }
        knownPrefix = (0, 0)
        withUnsafeMutableBytes(of: &knownPrefix) {
            $0.baseAddress!.copyMemory(from: prefix.start, byteCount: prefix.count)
        }
        knownPrefixCount = prefix.count
        knownPrefixIsTPE = isTrackPointExtension
    }

    mutating func forgetPrefixes() {
        knownPrefixCount = 0
    }

    /// The known prefix, consumed, if the bytes at `c` are it followed by a colon.
    @inline(__always)
    private func knownPrefix(at c: inout Cursor) -> ByteSpan? {
        let n = knownPrefixCount
        guard n > 0, c.end - c.p > n, c.p[n] == UInt8(ascii: ":") else { return nil }
        let same = withUnsafeBytes(of: knownPrefix) {
            ByteSpan.bytesEqual($0.baseAddress!.assumingMemoryBound(to: UInt8.self), c.p, n)
        }
        guard same else { return nil }
        defer { c.p += n }
        return ByteSpan(start: c.p, count: n)
    }

    /// Reads one point at the start of `window` into `point`, which must be fresh (a point with
    /// only a coordinate): the scanner sets the fields it reads and leaves the rest alone. After
    /// any outcome but ``Outcome/point(length:)`` the point is to be thrown away.
    mutating func scan(_ window: UnsafeBufferPointer<UInt8>, into point: inout GPXPoint) -> Outcome {
        guard defaultIsGPX, let base = window.baseAddress else { return .notSimple }
        var cursor = Cursor(p: base, end: base + window.count)
        var unknown: ByteSpan?
        guard readPoint(&cursor, into: &point, unknownPrefix: &unknown) else {
            if let unknown { return .unknownPrefix(unknown) }
            return .notSimple
        }
        return .point(length: cursor.p - base)
    }

    /// A position in the window; every read checks the end.
    private struct Cursor {
        var p: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>

        @inline(__always)
        mutating func skipSpace() {
            while p < end, ByteSpan.isSpace(p.pointee) { p += 1 }
        }

        /// Consumes `literal` if the bytes here are exactly it.
        @inline(__always)
        mutating func take(_ literal: StaticString) -> Bool {
            let n = literal.utf8CodeUnitCount
            guard end - p >= n, ByteSpan.bytesEqual(p, literal.utf8Start, n) else { return false }
            p += n
            return true
        }

        @inline(__always)
        mutating func take(_ byte: UInt8) -> Bool {
            guard p < end, p.pointee == byte else { return false }
            p += 1
            return true
        }

        /// Consumes `span`'s bytes if they are next.
        @inline(__always)
        mutating func take(_ span: ByteSpan) -> Bool {
            guard end - p >= span.count, ByteSpan.bytesEqual(p, span.start, span.count) else { return false }
            p += span.count
            return true
        }

        /// The bytes up to the next `stop`, which is not consumed; nil if the window ends first.
        @inline(__always)
        mutating func until(_ stop: UInt8) -> ByteSpan? {
            let start = p
            while p < end {
                if p.pointee == stop { return ByteSpan(start: start, count: p - start) }
                p += 1
            }
            return nil
        }

        /// The number from here up to `stop` (not consumed). The common form is parsed in the
        /// same pass as it is found (``ValueParsing/plainDecimal(from:to:)``); any other text
        /// goes to ``ValueParsing/decimal(_:)``. Nil if the window ends first or the text is not
        /// a number.
        @inline(__always)
        mutating func number(until stop: UInt8) -> Double? {
            if case (let value?, let next) = ValueParsing.plainDecimal(from: p, to: end), next < end,
                next.pointee == stop
            {
                p = next
                return value
            }
            guard let text = until(stop) else { return nil }
            return ValueParsing.decimal(text)
        }

        /// The text of a `<time>` element, up to the next `<` (not consumed). The common
        /// `YYYY-MM-DDThh:mm:ssZ` is taken as 20 bytes at once when a `<` follows them; if one
        /// of them is a `<` too, the time parser refuses the text, as it would refuse the text
        /// cut there.
        @inline(__always)
        mutating func timeText() -> ByteSpan? {
            if end - p > 20 && p[20] == UInt8(ascii: "<") && p[19] == UInt8(ascii: "Z") {
                defer { p += 20 }
                return ByteSpan(start: p, count: 20)
            }
            return until(UInt8(ascii: "<"))
        }

        /// `>` after optional white space: the end of an end tag.
        @inline(__always)
        mutating func closeTag() -> Bool {
            skipSpace()
            return take(UInt8(ascii: ">"))
        }

        /// A namespace prefix: an XML name without a colon, ASCII only.
        mutating func prefix() -> ByteSpan? {
            let start = p
            guard p < end, Self.isNameStart(p.pointee) else { return nil }
            p += 1
            while p < end, Self.isNameStart(p.pointee) || Self.isNameRest(p.pointee) { p += 1 }
            return ByteSpan(start: start, count: p - start)
        }

        @inline(__always)
        static func isNameStart(_ b: UInt8) -> Bool {
            (b | 0x20) &- 0x61 < 26 || b == UInt8(ascii: "_")
        }

        @inline(__always)
        static func isNameRest(_ b: UInt8) -> Bool {
            b &- 0x30 < 10 || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
        }
    }

    private mutating func readPoint(_ c: inout Cursor, into point: inout GPXPoint, unknownPrefix: inout ByteSpan?)
        -> Bool
    {
        c.skipSpace()
        guard c.take("<trkpt") else { return false }
        var lat: Double?
        var lon: Double?
        var empty = false
        // Attributes: lat and lon, each once, white space before each.
        while true {
            let beforeSpace = c.p
            c.skipSpace()
            if c.take(UInt8(ascii: ">")) { break }
            if c.take("/>") {
                empty = true
                break
            }
            guard c.p > beforeSpace else { return false }
            let isLat: Bool
            if c.take("lat") {
                isLat = true
            } else if c.take("lon") {
                isLat = false
            } else {
                return false
            }
            c.skipSpace()
            guard c.take(UInt8(ascii: "=")) else { return false }
            c.skipSpace()
            guard c.p < c.end else { return false }
            let quote = c.p.pointee
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return false }
            c.p += 1
            // A plain number (no entity; white space only around it, which the number parser
            // trims as attribute normalisation would leave it), in range.
            guard let value = c.number(until: quote) else { return false }
            c.p += 1
            if isLat {
                guard lat == nil, abs(value) <= 90 else { return false }
                lat = value
            } else {
                guard lon == nil, abs(value) <= 180 else { return false }
                lon = value
            }
        }
        guard let latitude = lat, let longitude = lon else { return false }
        point.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        if empty { return true }

        // Children, in schema order.
        var stage = 0  // 1 after <ele>, 2 after <time>, 3 after <extensions>
        while true {
            c.skipSpace()
            guard c.take(UInt8(ascii: "<")) else { return false }
            if c.take(UInt8(ascii: "/")) {
                return c.take("trkpt") && c.closeTag()
            }
            if stage < 1 && c.take("ele>") {
                guard let v = c.number(until: UInt8(ascii: "<")), c.take("</ele"), c.closeTag() else { return false }
                point.elevation = v
                stage = 1
            } else if stage < 2 && c.take("time>") {
                guard let text = c.timeText(), c.take("</time"), c.closeTag(),
                    let date = Self.time(text, cache: &dayCache)
                else { return false }
                point.time = date
                stage = 2
            } else if stage < 3 && readsExtensions && c.take("extensions>") {
                guard readExtensions(&c, into: &point.extensions, unknownPrefix: &unknownPrefix) else { return false }
                stage = 3
            } else {
                return false
            }
        }
    }

    /// `<extensions>` after its start tag, through its end tag: one TrackPointExtension element.
    private func readExtensions(_ c: inout Cursor, into ext: inout GPXExtensions, unknownPrefix: inout ByteSpan?)
        -> Bool
    {
        c.skipSpace()
        guard c.take(UInt8(ascii: "<")) else { return false }
        if c.take(UInt8(ascii: "/")) { return c.take("extensions") && c.closeTag() }
        let prefix: ByteSpan
        if let known = knownPrefix(at: &c) {
            guard knownPrefixIsTPE, c.take(":TrackPointExtension>") else { return false }
            prefix = known
        } else {
            guard let other = c.prefix(), c.take(":TrackPointExtension>") else { return false }
            if other.count <= 16 { unknownPrefix = other }
            return false
        }
        while true {
            c.skipSpace()
            guard c.take(UInt8(ascii: "<")) else { return false }
            if c.take(UInt8(ascii: "/")) {
                guard c.take(prefix), c.take(":TrackPointExtension"), c.closeTag() else { return false }
                break
            }
            guard c.take(prefix), c.take(UInt8(ascii: ":")) else { return false }
            let nameStart = c.p
            guard let name = c.until(UInt8(ascii: ">")), let field = GPXExtensions.Field(trackPointExtensionName: name)
            else { return false }
            c.p += 1
            // The general path leaves out a value that is not a number, silently; but the text
            // may hold a reference that makes it one, so only that path can tell.
            guard let v = c.number(until: UInt8(ascii: "<")), c.take("</"), c.take(prefix), c.take(UInt8(ascii: ":")),
                c.take(ByteSpan(start: nameStart, count: name.count)), c.closeTag()
            else { return false }
            ext.set(field, v)
        }
        c.skipSpace()
        return c.take("</extensions") && c.closeTag()
    }

    /// A time as the general path reads it: the common `YYYY-MM-DDThh:mm:ssZ` here, with the
    /// day reused while it stays the same; any other form through ``ValueParsing/dateTime(_:)``.
    /// Nil for a time without a zone (the general path warns about it) or a bad one.
    @inline(__always)
    private static func time(_ text: ByteSpan, cache: inout ValueParsing.DayCache) -> Date? {
        if let date = ValueParsing.utcSecond(text, cache: &cache) { return date }
        guard case .success(let t) = ValueParsing.dateTime(text), t.hadZone else { return nil }
        return t.date
    }
}

extension GPXExtensions.Field {
    /// The TrackPointExtension (v1 or v2) value named `name`, if Waymark knows it.
    init?(trackPointExtensionName name: ByteSpan) {
        switch name.count {
        case 2 where name.equals("hr"): self = .heartRate
        case 3 where name.equals("cad"): self = .cadence
        case 5 where name.equals("atemp"): self = .airTemperature
        case 5 where name.equals("wtemp"): self = .waterTemperature
        case 5 where name.equals("depth"): self = .depth
        case 5 where name.equals("speed"): self = .speed
        case 6 where name.equals("course"): self = .course
        default: return nil
        }
    }
}
