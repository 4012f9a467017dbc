#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
///
/// A point laid out exactly as the last one it read the long way (the same bytes around the
/// values) is read from a ``PointTemplate`` of that layout, which accepts a subset of what the
/// long way accepts and reads it the same.
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
    /// The layout of the last point read the long way, for the points that repeat it.
    private let template = PointTemplate()
    /// Whether values are being marked for a new template, and the marks so far.
    private var recording = false
    private var marks: [PointTemplate.Mark] = []
    /// Points whose layout keeps differing from the last one's make the template rest a while.
    private var templateBackoff = MissBackoff(limit: 8, rest: 1024)
    /// Points read from the template (tests check that it is used).
    private(set) var templatedPoints = 0

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
        template.clear()
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
        let end = base + window.count
        if templateBackoff.shouldTry() && template.isValid {
            if let length = readWithTemplate(base, end, into: &point) {
                templateBackoff.hit()
                templatedPoints &+= 1
                return .point(length: length)
            }
            // A partly read point is thrown away: start again from a fresh one.
            point = GPXPoint(coordinate: point.coordinate)
            templateBackoff.miss()
        }
        var cursor = Cursor(p: base, end: end)
        var unknown: ByteSpan?
        recording = !templateBackoff.isResting
        marks.removeAll(keepingCapacity: true)
        defer { recording = false }
        guard readPoint(&cursor, into: &point, unknownPrefix: &unknown) else {
            if let unknown { return .unknownPrefix(unknown) }
            return .notSimple
        }
        if recording { template.learn(point: base, end: cursor.p, marks: marks) }
        return .point(length: cursor.p - base)
    }

    /// Notes where a value of the point being read the long way lies, for ``PointTemplate``.
    @inline(__always)
    private mutating func mark(
        _ slot: PointTemplate.Slot, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>
    ) {
        if recording { marks.append(PointTemplate.Mark(start: start, end: end, slot: slot)) }
    }

    /// Reads a point laid out exactly as the template's: the same bytes around the values, each
    /// value read by the same parser as the long way reads it, with the same range checks. The
    /// length read, or nil at the first difference.
    private mutating func readWithTemplate(
        _ base: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, into point: inout GPXPoint
    ) -> Int? {
        var c = Cursor(p: base, end: end)
        var latitude = 0.0
        var longitude = 0.0
        var i = 0
        while true {
            guard c.take(template.literal(i)) else { return nil }
            if i == template.slotCount { break }
            // Each value ends where the next literal begins.
            let stop = template.literal(i + 1).start.pointee
            switch template.slot(i) {
            case .latitude:
                guard let value = c.number(until: stop), abs(value) <= 90 else { return nil }
                latitude = value
            case .longitude:
                guard let value = c.number(until: stop), abs(value) <= 180 else { return nil }
                longitude = value
            case .elevation:
                guard let value = c.number(until: stop) else { return nil }
                point.elevation = value
            case .value(let field):
                guard let value = c.number(until: stop) else { return nil }
                point.extensions.set(field, value)
            case .time:
                guard let text = c.timeText(), c.p < c.end, c.p.pointee == stop,
                    let date = Self.time(text, cache: &dayCache)
                else { return nil }
                point.time = date
            }
            i += 1
        }
        point.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        return c.p - base
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
            let valueStart = c.p
            guard let value = c.number(until: quote) else { return false }
            mark(isLat ? .latitude : .longitude, from: valueStart, to: c.p)
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
                let valueStart = c.p
                guard let v = c.number(until: UInt8(ascii: "<")) else { return false }
                mark(.elevation, from: valueStart, to: c.p)
                guard c.take("</ele"), c.closeTag() else { return false }
                point.elevation = v
                stage = 1
            } else if stage < 2 && c.take("time>") {
                let valueStart = c.p
                guard let text = c.timeText() else { return false }
                mark(.time, from: valueStart, to: c.p)
                guard c.take("</time"), c.closeTag(), let date = Self.time(text, cache: &dayCache) else { return false }
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
    private mutating func readExtensions(
        _ c: inout Cursor, into ext: inout GPXExtensions, unknownPrefix: inout ByteSpan?
    )
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
            let valueStart = c.p
            guard let v = c.number(until: UInt8(ascii: "<")) else { return false }
            mark(.value(field), from: valueStart, to: c.p)
            guard c.take("</"), c.take(prefix), c.take(UInt8(ascii: ":")),
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

/// The layout of a track point: its bytes with the values cut out (the literals between them)
/// and what each value is. ``TrackPointScanner`` learns it from a point it has read the long
/// way and reads the points that repeat it by comparing those bytes a word at a time and
/// parsing only the values.
final class PointTemplate {
    enum Slot: Equatable {
        case latitude, longitude, elevation, time
        case value(GPXExtensions.Field)
    }

    /// Where a value lay in a point read the long way.
    struct Mark {
        var start: UnsafePointer<UInt8>
        var end: UnsafePointer<UInt8>
        var slot: Slot
    }

    private static let byteCapacity = 1024
    private static let slotCapacity = 16
    private let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: byteCapacity)
    /// Literal i runs from `literalStarts[i]` to `literalStarts[i + 1]` in `bytes`.
    private let literalStarts = UnsafeMutablePointer<Int>.allocate(capacity: slotCapacity + 2)
    private let slots = UnsafeMutablePointer<Slot>.allocate(capacity: slotCapacity)
    /// The number of values; the literals are one more. Zero when there is no template (a
    /// point has at least its latitude and longitude).
    private(set) var slotCount = 0
    var isValid: Bool { slotCount > 0 }

    deinit {
        bytes.deallocate()
        literalStarts.deallocate()
        slots.deinitialize(count: slotCount)
        slots.deallocate()
    }

    func clear() {
        slots.deinitialize(count: slotCount)
        slotCount = 0
    }

    @inline(__always)
    func literal(_ i: Int) -> ByteSpan {
        ByteSpan(start: bytes + literalStarts[i], count: literalStarts[i + 1] - literalStarts[i])
    }

    @inline(__always)
    func slot(_ i: Int) -> Slot { slots[i] }

    /// Learns the layout of the point from `start` to `end`, whose values lie at `marks` (in
    /// order). A point too long or with too many values leaves no template. Every literal but
    /// the first starts with the byte that ended the value before it, so each value's end is
    /// known from the next literal.
    func learn(point start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, marks: [Mark]) {
        clear()
        guard !marks.isEmpty, marks.count <= Self.slotCapacity,
            end - start - marks.reduce(0, { $0 + ($1.end - $1.start) }) <= Self.byteCapacity
        else { return }
        var from = start
        var used = 0
        for (i, mark) in marks.enumerated() {
            let n = mark.start - from
            guard n > 0 || i == 0 else { return }  // values must be apart
            literalStarts[i] = used
            (bytes + used).update(from: from, count: n)
            used += n
            from = mark.end
        }
        literalStarts[marks.count] = used
        let n = end - from
        guard n > 0 else { return }
        (bytes + used).update(from: from, count: n)
        used += n
        literalStarts[marks.count + 1] = used
        slots.initialize(from: marks.map(\.slot), count: marks.count)
        slotCount = marks.count
    }
}

/// Stops trying a fast path that keeps failing: after `limit` misses in a row it rests for the
/// next `rest` chances, then tries again.
struct MissBackoff {
    private let limit: Int
    private let restLength: Int
    private var misses = 0
    private var rest = 0

    init(limit: Int, rest: Int) {
        self.limit = limit
        restLength = rest
    }

    /// Whether to try this time: false while resting (the call uses up one chance of the rest).
    @inline(__always)
    mutating func shouldTry() -> Bool {
        guard rest == 0 else {
            rest -= 1
            return false
        }
        return true
    }

    var isResting: Bool { rest > 0 }

    @inline(__always)
    mutating func hit() { misses = 0 }

    mutating func miss() {
        misses += 1
        if misses == limit {
            misses = 0
            rest = restLength
        }
    }
}
