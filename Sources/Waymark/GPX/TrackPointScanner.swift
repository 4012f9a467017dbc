#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads GPX track points straight from the bytes, so that the reader can skip its general path
/// for the millions of points of a log that look alike, whatever layout the logger writes:
///
/// ```xml
/// <trkpt lat="47.3769" lon="8.5417"><ele>408.2</ele><time>2024-05-01T08:00:00Z</time>
///   <fix>3d</fix><sat>9</sat><hdop>0.9</hdop>
///   <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>158</gpxtpx:hr>
///   </gpxtpx:TrackPointExtension><power>250</power></extensions></trkpt>
/// ```
///
/// It accepts only what it can read exactly as the general path would:
/// - `lat` and `lon` once each, in either order, and no other attribute;
/// - then, in any order (the general path takes any), the GPX elements of a point whose value is
///   a number, a whole number, a `fix` or plain text (`ele`, `time`, `magvar`, `geoidheight`,
///   `name`, `cmt`, `desc`, `src`, `sym`, `type`, `fix`, `sat`, `hdop`, `vdop`, `pdop`,
///   `ageofdgpsdata`, `dgpsid`, and GPX 1.0's `course` and `speed`), each without attributes;
/// - `<extensions>` (when extension elements are not kept verbatim): elements without
///   attributes, nested a few levels, each holding text or elements; the values Waymark knows
///   (``ExtensionTarget``) are picked out as the general path picks them out;
/// - values the reader's own parsers accept: coordinates in range, a time with a zone, text of
///   printable ASCII without references.
///
/// Anything else, say a comment, an entity, a CDATA section, a link, an attribute on an
/// extension element, a prefixed GPX element, a bad value or a point cut off by the end of the
/// window, makes it answer ``Outcome/notSimple`` without having consumed anything. The general
/// path then reads the point and finds any error. Every byte it accepts is ASCII, so the UTF-8
/// check holds too.
///
/// A point laid out exactly as the last one it read the long way (the same bytes around the
/// values) is read from a ``PointTemplate`` of that layout, which accepts a subset of what the
/// long way accepts and reads each value with the same code.
struct TrackPointScanner {
    enum Outcome {
        /// A complete point, `length` bytes long from the window's start (leading white space
        /// included).
        case point(length: Int)
        /// The point's extensions use a prefix the scanner has not been told about: resolve it,
        /// call ``learn(prefix:namespace:)`` and scan again.
        case unknownPrefix(ByteSpan)
        case notSimple
    }

    /// Whether `<extensions>` may be read here: not when extension elements are kept verbatim.
    var readsExtensions: Bool
    /// Whether the point's numbers are only checked, not read (a replay's first pass, which
    /// counts points and their times): a number the parser certainly accepts, in range, is
    /// skipped, and its field keeps whatever it held (a coordinate, the last one read). Any
    /// other is read as ever, so the same points are accepted and the same ones go to the
    /// general path.
    var countsOnly = false
    /// Whether the default namespace is GPX's (or none), so that `<trkpt>` and its children are
    /// GPX elements. The owner sets it, and calls ``forgetPrefixes()``, whenever the namespaces
    /// in scope change.
    var defaultIsGPX = false
    /// Whether there is no default namespace at all (unprefixed extension elements are then in
    /// none).
    var defaultIsEmpty = false
    /// How deep elements may nest inside `<extensions>` (the owner keeps it within the
    /// tokenizer's depth limit).
    var extensionLevels = 0
    /// The prefixes resolved so far in this scope.
    private var prefixes = PrefixTable()
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
    // The point being read: its coordinate and the fields that live in its details, gathered
    // here and stored once.
    private var latitude = 0.0
    private var longitude = 0.0
    private var details = GPXPoint.Details()
    private var hasDetails = false
    /// Whether a field of `details` was set to nil (white-space text), so that they may be
    /// empty after all.
    private var detailsMayBeEmpty = false

    init(readsExtensions: Bool) {
        self.readsExtensions = readsExtensions
    }

    /// Records what `prefix` resolves to in the current scope: a namespace, or nil when it is
    /// not declared (the general path reports that).
    mutating func learn(prefix: ByteSpan, namespace: ExtensionNamespace?) {
        prefixes.add(prefix, namespace)
    }

    mutating func forgetPrefixes() {
        prefixes.removeAll()
        template.clear()
    }

    /// Reads one point at the start of `window` into `point`, which must be fresh (a point with
    /// only a coordinate): the scanner sets the fields it reads and leaves the rest alone. After
    /// any outcome but ``Outcome/point(length:)`` the point is to be thrown away.
    mutating func scan(_ window: UnsafeBufferPointer<UInt8>, into point: inout GPXPoint) -> Outcome {
        guard defaultIsGPX, let base = window.baseAddress else { return .notSimple }
        let end = base + window.count
        if templateBackoff.shouldTry() && template.isValid {
            startPoint()
            if let length = readWithTemplate(base, end, into: &point) {
                finishPoint(&point)
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
        startPoint()
        guard readPoint(&cursor, into: &point, unknownPrefix: &unknown) else {
            if let unknown { return .unknownPrefix(unknown) }
            return .notSimple
        }
        finishPoint(&point)
        if recording { template.learn(point: base, end: cursor.p, marks: marks) }
        return .point(length: cursor.p - base)
    }

    @inline(__always)
    private mutating func startPoint() {
        if hasDetails {
            details = GPXPoint.Details()
            hasDetails = false
            detailsMayBeEmpty = false
        }
    }

    @inline(__always)
    private mutating func finishPoint(_ point: inout GPXPoint) {
        point.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        if hasDetails {
            // Moved out, not copied (a copy retains each string, and costs more than the rest
            // of the point).
            var d = GPXPoint.Details()
            swap(&d, &details)
            point.setBoxedDetails(d, nonEmpty: !detailsMayBeEmpty)
            hasDetails = false
            detailsMayBeEmpty = false
        }
    }

    /// Notes where a value of the point being read the long way lies, for ``PointTemplate``.
    @inline(__always)
    private mutating func mark(
        _ slot: PointTemplate.Slot, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>
    ) {
        if recording { marks.append(PointTemplate.Mark(start: start, end: end, slot: slot)) }
    }

    /// Reads a point laid out exactly as the template's: the same bytes around the values, each
    /// value read by the same code as the long way reads it. The length read, or nil at the
    /// first difference.
    private mutating func readWithTemplate(
        _ base: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, into point: inout GPXPoint
    ) -> Int? {
        var c = Cursor(p: base, end: end)
        var i = 0
        while true {
            guard c.take(template.literal(i)) else { return nil }
            if i == template.slotCount { break }
            // Each value ends where the next literal begins.
            let stop = template.literal(i + 1).start.pointee
            guard readValue(template.slot(i), &c, stop: stop, into: &point) else { return nil }
            i += 1
        }
        return c.p - base
    }

    /// Reads the value of `slot` at `c`, up to `stop` (not consumed), into the point: the one
    /// reading of each kind of value, for the long way and the template alike. False when the
    /// general path must read it.
    @inline(__always)
    private mutating func readValue(
        _ slot: PointTemplate.Slot, _ c: inout Cursor, stop: UInt8, into point: inout GPXPoint
    ) -> Bool {
        switch slot {
        case .latitude:
            if countsOnly, c.skipNumber(until: stop, integerBelow: 90) { break }
            guard let v = c.number(until: stop), abs(v) <= 90 else { return false }
            latitude = v
        case .longitude:
            if countsOnly, c.skipNumber(until: stop, integerBelow: 180) { break }
            guard let v = c.number(until: stop), abs(v) <= 180 else { return false }
            longitude = v
        case .number(let field):
            if countsOnly, c.skipNumber(until: stop, integerBelow: .max) { break }
            guard let v = c.number(until: stop) else { return false }
            set(field, v, in: &point)
        case .value(let field):
            if countsOnly, c.skipNumber(until: stop, integerBelow: .max) { break }
            guard let v = c.number(until: stop) else { return false }
            point.extensions.set(field, v)
        case .time:
            guard let text = c.timeText(), c.p < c.end, c.p.pointee == stop,
                let date = Self.time(text, cache: &dayCache)
            else { return false }
            point.time = date
        case .integer(let field):
            guard let text = c.until(stop), let v = ValueParsing.integer(text) else { return false }
            switch field {
            case .satellites: point.satellites = v
            case .dgpsStation:
                hasDetails = true
                details.dgpsStation = v
            }
        case .fix:
            guard let text = c.until(stop), let fix = GPXFix(bytes: text) else { return false }
            point.fix = fix
        case .text(let field):
            guard let text = c.until(stop), Self.isPlainText(text) else { return false }
            // White space alone counts as no value, as the general path has it.
            let value = text.isWhitespace ? nil : text.string
            if field == .source {
                point.source = value
                return true
            }
            hasDetails = true
            if value == nil { detailsMayBeEmpty = true }
            switch field {
            case .name: details.name = value
            case .comment: details.comment = value
            case .description: details.description = value
            case .source: break
            case .symbol: details.symbol = value
            case .type: details.type = value
            }
        }
        return true
    }

    @inline(__always)
    private mutating func set(_ field: PointTemplate.NumberField, _ v: Double, in point: inout GPXPoint) {
        if field == .elevation {
            point.elevation = v
            return
        }
        switch field {
        case .elevation: break
        case .magneticVariation: point.setNumber(.magneticVariation, v)
        case .geoidHeight: point.setNumber(.geoidHeight, v)
        case .hdop: point.setNumber(.hdop, v)
        case .vdop: point.setNumber(.vdop, v)
        case .pdop: point.setNumber(.pdop, v)
        case .ageOfDGPSData: point.setNumber(.ageOfDGPSData, v)
        case .speed: point.setNumber(.speed, v)
        case .course: point.setNumber(.course, v)
        case .horizontalAccuracy:
            hasDetails = true
            details.horizontalAccuracy = v
        case .verticalAccuracy:
            hasDetails = true
            details.verticalAccuracy = v
        }
    }

    /// Text the general path would read as these very bytes: printable ASCII, tabs and line
    /// feeds, without `&` (a reference), `>` (which could close a `]]>`) or a carriage return
    /// (which XML turns into a line feed).
    @inline(__always)
    static func isPlainText(_ text: ByteSpan) -> Bool {
        var i = 0
        while i < text.count {
            let b = text[i]
            guard (b >= 0x20 && b < 0x7F && b != UInt8(ascii: "&") && b != UInt8(ascii: ">")) || b == 0x09 || b == 0x0A
            else { return false }
            i += 1
        }
        return true
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

        /// Whether the bytes here are `</` (an end tag follows), without consuming them.
        @inline(__always)
        func atEndTag() -> Bool {
            end - p >= 2 && p[0] == UInt8(ascii: "<") && p[1] == UInt8(ascii: "/")
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

        /// The number from here up to `stop` (not consumed). The common form, of any length, is
        /// parsed in the same pass as it is found (``ValueParsing/longPlainDecimal(from:to:)``);
        /// any other text goes to ``ValueParsing/decimal(_:)``. Nil if the window ends first or
        /// the text is not a number.
        @inline(__always)
        mutating func number(until stop: UInt8) -> Double? {
            if case (let value?, let next) = ValueParsing.longPlainDecimal(from: p, to: end), next < end,
                next.pointee == stop
            {
                p = next
                return value
            }
            guard let text = until(stop) else { return nil }
            return ValueParsing.decimal(text)
        }

        /// Moves past the number from here up to `stop` (not consumed) when ``number(until:)``
        /// would certainly read it as a value whose integer part is below `limit`
        /// (``ValueParsing/plainDecimalEnd(from:to:integerBelow:)``); false, with nothing
        /// consumed, when only reading it can tell.
        @inline(__always)
        mutating func skipNumber(until stop: UInt8, integerBelow limit: Int) -> Bool {
            guard let next = ValueParsing.plainDecimalEnd(from: p, to: end, integerBelow: limit), next < end,
                next.pointee == stop
            else { return false }
            p = next
            return true
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

        /// An element name (ASCII letters and digits) ended by `>`, both consumed; the name.
        @inline(__always)
        mutating func simpleStartTag() -> ByteSpan? {
            let start = p
            while p < end, (p.pointee | 0x20) &- 0x61 < 26 || p.pointee &- 0x30 < 10 { p += 1 }
            guard p > start, p < end, p.pointee == UInt8(ascii: ">") else { return nil }
            defer { p += 1 }
            return ByteSpan(start: start, count: p - start)
        }

        /// A qualified name (ASCII, at most one colon), consumed: its prefix (empty when it has
        /// none) and local part. Nil, with `p` anywhere, when it is not one.
        mutating func qualifiedName() -> (prefix: ByteSpan, local: ByteSpan)? {
            let start = p
            guard let first = name() else { return nil }
            guard take(UInt8(ascii: ":")) else { return (ByteSpan(start: start, count: 0), first) }
            guard let local = name() else { return nil }
            return (first, local)
        }

        /// An XML name without a colon, ASCII only.
        mutating func name() -> ByteSpan? {
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
        var sawLatitude = false
        var sawLongitude = false
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
            let slot: PointTemplate.Slot = isLat ? .latitude : .longitude
            guard !(isLat ? sawLatitude : sawLongitude), readValue(slot, &c, stop: quote, into: &point) else {
                return false
            }
            mark(slot, from: valueStart, to: c.p)
            c.p += 1
            if isLat { sawLatitude = true } else { sawLongitude = true }
        }
        guard sawLatitude, sawLongitude else { return false }
        if empty { return true }

        // Children, in any order, as the general path takes them.
        while true {
            c.skipSpace()
            guard c.take(UInt8(ascii: "<")) else { return false }
            if c.take(UInt8(ascii: "/")) {
                return c.take("trkpt") && c.closeTag()
            }
            guard let name = c.simpleStartTag() else { return false }
            if name.equals("extensions") {
                guard readsExtensions, readExtensions(&c, into: &point, unknownPrefix: &unknownPrefix) else {
                    return false
                }
                continue
            }
            guard let slot = PointTemplate.Slot(pointChild: name) else { return false }
            let valueStart = c.p
            guard readValue(slot, &c, stop: UInt8(ascii: "<"), into: &point) else { return false }
            mark(slot, from: valueStart, to: c.p)
            guard c.take("</"), c.take(name), c.closeTag() else { return false }
        }
    }

    /// `<extensions>` after its start tag, through its end tag.
    private mutating func readExtensions(
        _ c: inout Cursor, into point: inout GPXPoint, unknownPrefix: inout ByteSpan?
    ) -> Bool {
        while true {
            c.skipSpace()
            guard c.take(UInt8(ascii: "<")) else { return false }
            if c.take(UInt8(ascii: "/")) { return c.take("extensions") && c.closeTag() }
            guard readExtensionElement(&c, level: 1, into: &point, unknownPrefix: &unknownPrefix) else {
                return false
            }
        }
    }

    /// An element inside `<extensions>`, after its `<`, through its end tag: text (a value, if
    /// Waymark knows the element) or elements, nothing mixed.
    private mutating func readExtensionElement(
        _ c: inout Cursor, level: Int, into point: inout GPXPoint, unknownPrefix: inout ByteSpan?
    ) -> Bool {
        guard level <= extensionLevels else { return false }
        let nameStart = c.p
        guard let (prefix, local) = c.qualifiedName() else { return false }
        let qualifiedName = ByteSpan(start: nameStart, count: c.p - nameStart)
        // An empty element carries no value, but its prefix must be declared as for any other
        // (the fuzzer found `<p:r/>` read here and refused by the general path).
        let isEmpty = c.take("/>")
        guard isEmpty || c.take(UInt8(ascii: ">")) else { return false }
        let namespace: ExtensionNamespace
        if prefix.count == 0 {
            namespace = defaultIsEmpty ? .none : .other
        } else {
            switch prefixes.lookUp(prefix) {
            case .resolved(let resolved): namespace = resolved
            case .undeclared: return false
            case .unknown:
                if prefix.count <= PrefixTable.maximumLength { unknownPrefix = prefix }
                return false
            }
        }
        if isEmpty { return true }
        let textStart = c.p
        guard let text = c.until(UInt8(ascii: "<")), Self.isPlainText(text) else { return false }
        if c.atEndTag() {
            // The general path leaves out a value that is not a number, silently.
            if let target = ExtensionTarget(local: local, namespace: namespace), let v = ValueParsing.decimal(text) {
                let slot: PointTemplate.Slot
                switch target {
                case .value(let field):
                    slot = .value(field)
                    point.extensions.set(field, v)
                case .horizontalAccuracy:
                    slot = .number(.horizontalAccuracy)
                    set(.horizontalAccuracy, v, in: &point)
                case .verticalAccuracy:
                    slot = .number(.verticalAccuracy)
                    set(.verticalAccuracy, v, in: &point)
                }
                mark(slot, from: textStart, to: c.p)
            }
        } else {
            guard text.isWhitespace else { return false }
            repeat {
                c.p += 1
                guard readExtensionElement(&c, level: level + 1, into: &point, unknownPrefix: &unknownPrefix) else {
                    return false
                }
                c.skipSpace()
                guard c.p < c.end, c.p.pointee == UInt8(ascii: "<") else { return false }
            } while !c.atEndTag()
        }
        return c.take("</") && c.take(qualifiedName) && c.closeTag()
    }

    /// A time as the general path reads it: the forms loggers write here, with the day reused
    /// while it stays the same; any other form through ``ValueParsing/dateTime(_:)``.
    /// Nil for a time without a zone (the general path warns about it) or a bad one.
    @inline(__always)
    private static func time(_ text: ByteSpan, cache: inout ValueParsing.DayCache) -> Date? {
        if let date = ValueParsing.commonTime(text, cache: &cache) { return date }
        guard case .success(let t) = ValueParsing.dateTime(text), t.hadZone else { return nil }
        return t.date
    }
}

/// The prefixes the scanner has resolved in the current scope (a few: real files use one to
/// three in their extensions).
struct PrefixTable {
    static let maximumLength = 16
    private static let capacity = 4

    enum Lookup {
        case resolved(ExtensionNamespace)
        /// Resolved, and not declared: the general path reports it.
        case undeclared
        /// Not resolved yet.
        case unknown
    }

    private struct Entry {
        var bytes: (UInt64, UInt64)
        var count: Int
        var namespace: ExtensionNamespace?
    }

    private var entries: [Entry] = []
    private var nextSlot = 0

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        nextSlot = 0
    }

    mutating func add(_ prefix: ByteSpan, _ namespace: ExtensionNamespace?) {
        guard prefix.count <= Self.maximumLength else { return }
        var bytes: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) {
            $0.baseAddress!.copyMemory(from: prefix.start, byteCount: prefix.count)
        }
        let entry = Entry(bytes: bytes, count: prefix.count, namespace: namespace)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[nextSlot] = entry
            nextSlot = (nextSlot + 1) % Self.capacity
        }
    }

    @inline(__always)
    func lookUp(_ prefix: ByteSpan) -> Lookup {
        for i in entries.indices where entries[i].count == prefix.count {
            let same = withUnsafeBytes(of: entries[i].bytes) {
                ByteSpan.bytesEqual($0.baseAddress!.assumingMemoryBound(to: UInt8.self), prefix.start, prefix.count)
            }
            if same {
                if let namespace = entries[i].namespace { return .resolved(namespace) }
                return .undeclared
            }
        }
        return .unknown
    }
}

extension GPXFix {
    /// The fix these bytes name exactly, without trimming.
    init?(bytes: ByteSpan) {
        switch bytes.count {
        case 2 where bytes.equals("2d"): self = .twoD
        case 2 where bytes.equals("3d"): self = .threeD
        case 3 where bytes.equals("pps"): self = .pps
        case 4 where bytes.equals("none"): self = .none
        case 4 where bytes.equals("dgps"): self = .dgps
        default: return nil
        }
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
    /// What a value is, and where it goes.
    enum Slot: Equatable {
        case latitude, longitude, time, fix
        /// A number of the point (GPX's own, or an accuracy from an extension).
        case number(NumberField)
        case integer(IntegerField)
        case text(TextField)
        /// An extension value (``GPXExtensions``).
        case value(GPXExtensions.Field)

        /// The slot of a GPX child element of a point, if its value is one the scanner reads.
        init?(pointChild name: ByteSpan) {
            switch name.count {
            case 3 where name.equals("ele"): self = .number(.elevation)
            case 3 where name.equals("sat"): self = .integer(.satellites)
            case 3 where name.equals("fix"): self = .fix
            case 3 where name.equals("src"): self = .text(.source)
            case 3 where name.equals("sym"): self = .text(.symbol)
            case 3 where name.equals("cmt"): self = .text(.comment)
            case 4 where name.equals("time"): self = .time
            case 4 where name.equals("hdop"): self = .number(.hdop)
            case 4 where name.equals("vdop"): self = .number(.vdop)
            case 4 where name.equals("pdop"): self = .number(.pdop)
            case 4 where name.equals("name"): self = .text(.name)
            case 4 where name.equals("desc"): self = .text(.description)
            case 4 where name.equals("type"): self = .text(.type)
            case 5 where name.equals("speed"): self = .number(.speed)
            case 6 where name.equals("course"): self = .number(.course)
            case 6 where name.equals("magvar"): self = .number(.magneticVariation)
            case 6 where name.equals("dgpsid"): self = .integer(.dgpsStation)
            case 11 where name.equals("geoidheight"): self = .number(.geoidHeight)
            case 13 where name.equals("ageofdgpsdata"): self = .number(.ageOfDGPSData)
            default: return nil
            }
        }
    }

    enum NumberField: Equatable {
        case elevation, magneticVariation, geoidHeight, hdop, vdop, pdop, ageOfDGPSData, speed, course
        case horizontalAccuracy, verticalAccuracy
    }

    enum IntegerField: Equatable {
        case satellites, dgpsStation
    }

    enum TextField: Equatable {
        case name, comment, description, source, symbol, type
    }

    /// Where a value lay in a point read the long way.
    struct Mark {
        var start: UnsafePointer<UInt8>
        var end: UnsafePointer<UInt8>
        var slot: Slot
    }

    private static let byteCapacity = 1024
    private static let slotCapacity = 32
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
