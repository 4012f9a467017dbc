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

/// One piece of a GPX document, in document order.
///
/// Everything but points is stored indirectly, so that an event is no bigger than a point: events
/// are moved (never copied) on their way from reader to writer.
public enum GPXEvent: Sendable, Hashable {
    /// The `<gpx>` element's attributes. Always first.
    indirect case header(GPXHeader)
    /// The file's metadata; at most once, before any waypoint, route or track.
    indirect case metadata(GPXMetadata)
    case waypoint(GPXPoint)
    /// A route begins; its info holds what precedes its first point.
    indirect case routeStart(GPXPathInfo)
    case routePoint(GPXPoint)
    /// A route ends; its info is complete.
    indirect case routeEnd(GPXPathInfo)
    /// A track begins; its info holds what precedes its first segment.
    indirect case trackStart(GPXPathInfo)
    case segmentStart
    case trackPoint(GPXPoint)
    indirect case segmentEnd(GPXExtensions)
    /// A track ends; its info is complete.
    indirect case trackEnd(GPXPathInfo)
    /// Extensions of the `<gpx>` element itself.
    indirect case documentExtensions(GPXExtensions)
    /// Something was wrong but reading went on.
    indirect case warning(GPXWarning)
}

extension GPXEvent {
    /// Whether this is a ``warning(_:)``: a test of the case alone, which copies nothing (a
    /// pattern that binds the warning copies the event first).
    public var isWarning: Bool {
        if case .warning = self { return true }
        return false
    }
}

/// How strictly to read.
public struct GPXReadOptions: Sendable, Hashable {
    /// Strict (the default): the first error stops reading and is thrown.
    /// Lenient: a bad value of a point (its time, a number) is left out and the point kept, a
    /// point without a usable position is dropped, each with a warning, and a file damaged
    /// part-way is read up to the damage, with a warning that says what was dropped.
    public var lenient: Bool
    public var limits: XMLLimits
    /// Keep every extension element verbatim in ``GPXExtensions/elements`` (needed to write GPX
    /// back). Without it only the known values (heart rate, cadence, …) are read, which is much
    /// faster for GeoJSON, text and statistics.
    public var keepsExtensionElements: Bool

    public init(lenient: Bool = false, limits: XMLLimits = .default, keepsExtensionElements: Bool = true) {
        self.lenient = lenient
        self.limits = limits
        self.keepsExtensionElements = keepsExtensionElements
    }
}

/// A streaming GPX 1.0 and 1.1 reader that never builds the whole document.
///
/// ```swift
/// let reader = try GPXReader(contentsOf: "walk.gpx")
/// try reader.read { event in
///     if case .trackPoint(let point) = event { print(point.coordinate) }
/// }
/// ```
///
/// It stands on its own XML 1.0 tokenizer (Foundation's `XMLParser` is not used): memory stays
/// bounded by the chunk size, the nesting depth and the longest construct, whatever the file size.
public final class GPXReader {
    // A reader belongs to one thread at a time; its fields skip Swift's dynamic exclusivity checks.
    static let gpx10 = "http://www.topografix.com/GPX/1/0"
    static let gpx11 = "http://www.topografix.com/GPX/1/1"

    private let tokenizer: XMLTokenizer
    private let options: GPXReadOptions
    @exclusivity(unchecked) private var handler: (consuming GPXEvent) throws -> Void = { _ in }
    private let leaf = ByteStore(capacity: 256)
    @exclusivity(unchecked) private var version = "1.1"
    @exclusivity(unchecked) private var metadata = GPXMetadata()
    @exclusivity(unchecked) private var metadataSent = false
    @exclusivity(unchecked) private var warnedNoZone = false
    @exclusivity(unchecked) private var warnedUnknown = Set<String>()
    @exclusivity(unchecked) private var delivered = 0
    /// Points dropped so far because they were bad (lenient reading only).
    @exclusivity(unchecked) public private(set) var droppedPoints = 0

    /// The name used in messages.
    public var fileName: String { tokenizer.fileName }

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        try self.init(source: FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        tokenizer = XMLTokenizer(source: source, fileName: name, limits: options.limits)
        // White space between elements carries nothing in GPX; only when extension elements are
        // kept verbatim must their white space be seen.
        tokenizer.skipsWhitespaceText = !options.keepsExtensionElements
        scanner = TrackPointScanner(readsExtensions: !options.keepsExtensionElements)
        self.options = options
    }

    /// Reads the whole document, handing each event to `handle` as soon as it is complete.
    ///
    /// Each event is handed over, not lent (`consuming`): a handler that keeps it or passes it
    /// on moves it rather than copies it.
    ///
    /// - Throws: ``GPXError`` for malformed input (in lenient mode only when nothing can be
    ///   recovered), or whatever `handle` throws.
    public func read(_ handle: @escaping (consuming GPXEvent) throws -> Void) throws {
        handler = handle
        defer { handler = { _ in } }
        do {
            try readDocument()
        } catch let error as GPXError where options.lenient && delivered > 0 && isRecoverable(error) {
            try handle(
                .warning(
                    GPXWarning(
                        file: error.file, line: error.line, column: error.column,
                        message:
                            "\(error.message); kept the \(delivered) point(s) read before this, dropped the rest of the file"
                    )))
            try closeOpenStructures()
        }
    }

    private func isRecoverable(_ error: GPXError) -> Bool {
        error.code != .io && error.code != .fileNotFound
    }

    // Open structures at the moment reading stopped, so a lenient read can close them.
    @exclusivity(unchecked) private var openRoute: GPXPathInfo?
    @exclusivity(unchecked) private var openTrack: GPXPathInfo?
    @exclusivity(unchecked) private var openSegment = false

    private func closeOpenStructures() throws {
        if openSegment { try handler(.segmentEnd(GPXExtensions())) }
        if let info = openTrack { try handler(.trackEnd(info)) }
        if let info = openRoute { try handler(.routeEnd(info)) }
        openSegment = false
        openTrack = nil
        openRoute = nil
    }

    // MARK: - Structure

    private func next() throws -> XMLTokenizer.Token { try tokenizer.next() }

    // Verdicts about binding indices, valid while the tokenizer's bindingsVersion is unchanged.
    @exclusivity(unchecked) private var bindingCacheVersion = -1
    @exclusivity(unchecked) private var gpxBinding = -2
    @exclusivity(unchecked) private var otherBinding = -2
    @exclusivity(unchecked) private var extensionNamespaceBinding = -2
    @exclusivity(unchecked) private var extensionNamespaceKind = ExtensionNamespace.none

    private func refreshBindingCache() {
        guard bindingCacheVersion != tokenizer.bindingsVersion else { return }
        bindingCacheVersion = tokenizer.bindingsVersion
        gpxBinding = -2
        otherBinding = -2
        extensionNamespaceBinding = -2
    }

    /// Whether the current element is in GPX's namespace (1.0 or 1.1) or in none.
    private var isGPXNamespace: Bool {
        let binding = tokenizer.elementBindingIndex
        if binding < 0 { return true }
        refreshBindingCache()
        if binding == gpxBinding { return true }
        if binding == otherBinding { return false }
        let isGPX = isGPXURI(tokenizer.namespaceURI)
        if isGPX { gpxBinding = binding } else { otherBinding = binding }
        return isGPX
    }

    private func readDocument() throws {
        var token = try next()
        while token == .text { token = try next() }
        guard token == .startElement else { return }
        guard tokenizer.localName.equals("gpx") else {
            let name = tokenizer.localName.string
            let what: String =
                switch name {
                case "kml": "this is KML, not GPX: read it with KMLReader (or TraceFormat.reader, which tells it)"
                case "TrainingCenterDatabase":
                    "this is a Garmin TCX file, not GPX: read it with TCXReader (or TraceFormat.reader, which tells it)"
                case "osm": "this is OpenStreetMap XML, not GPX"
                default: "this is not a GPX file"
                }
            throw tokenizer.error(
                .notGPX, at: tokenizer.tokenStart,
                "the root element is <\(tokenizer.qualifiedName.string)>, not <gpx>: \(what)")
        }
        let ns = tokenizer.namespaceURI
        if let v = tokenizer.attribute("version") {
            version = v.trimmed.string
        } else if ns.equals("http://www.topografix.com/GPX/1/0") {
            version = "1.0"
        }
        if ns.count == 0 {
            warn("the <gpx> element has no namespace (GPX 1.1's is \(Self.gpx11)); reading it as GPX")
        } else if !Self.isGPXURI(ns) {
            // As gpxpy, GPSBabel and GDAL do: the root's namespace, whatever it is, is GPX's here
            // (GPX/1/2, a typo, a vendor's), so its elements are read, not skipped as foreign.
            warn("the <gpx> element is in namespace '\(ns.string)', not GPX's; reading it as GPX")
            rootNamespace = Array(UnsafeBufferPointer(start: ns.start, count: ns.count))
        }
        if halves != nil { rootTagEnd = tokenizer.position }
        let creator = tokenizer.attribute("creator").map { $0.string }
        try handler(.header(GPXHeader(version: version, creator: creator)))
        try forEachChild { name in
            guard isGPXNamespace else {
                try skipForeign()
                return
            }
            if name.equals("trk") {
                try sendMetadata()
                try readPath(isRoute: false)
            } else if name.equals("wpt") {
                try sendMetadata()
                if let point = try readPoint(kind: "wpt") {
                    delivered += 1
                    try handler(.waypoint(point))
                }
            } else if name.equals("rte") {
                try sendMetadata()
                try readPath(isRoute: true)
            } else if name.equals("metadata") {
                try readMetadata()
            } else if name.equals("extensions") {
                try sendMetadata()
                try handler(.documentExtensions(readExtensions()))
            } else if !(try readGPX10Metadata(name)) {
                try skipUnknown(name)
            }
        }
        try sendMetadata()
        // The rest of the document: only comments, PIs and space may follow; the tokenizer checks.
        while try next() != .endOfDocument {}
    }

    private func sendMetadata() throws {
        guard !metadataSent else { return }
        metadataSent = true
        if !metadata.isEmpty { try handler(.metadata(metadata)) }
    }

    /// Calls `body` for each child element (the tokenizer is at its start tag); `body` must
    /// consume the child. Returns after the parent's end tag.
    @inline(__always)
    private func forEachChild(_ body: (ByteSpan) throws -> Void) throws {
        while true {
            switch try next() {
            case .startElement:
                try body(tokenizer.localName)
            case .endElement, .endOfDocument:
                return
            case .text:
                continue
            }
        }
    }

    private func skipElement() throws {
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

    private func skipUnknown(_ name: ByteSpan) throws {
        let key = name.string
        if warnedUnknown.insert(key).inserted {
            warn("<\(key)> is not a GPX \(version) element here; it is skipped (further ones are not reported)")
        }
        try skipElement()
    }

    /// An element of another namespace outside `<extensions>`: allowed anywhere in GPX 1.0
    /// (geocaching's `groundspeak:cache`, TopoGrafix colours), misplaced in 1.1. It is kept in the
    /// `<extensions>` of the element it is in, as GPSBabel keeps it, so the upgrade to 1.1 loses
    /// nothing (a 1.1 file is told it was moved).
    private func keepForeign(in ext: inout GPXExtensions) throws {
        if version != "1.0" {
            let key = tokenizer.qualifiedName.string
            if warnedUnknown.insert(key).inserted {
                warn("<\(key)> belongs in <extensions>; it is kept there (further ones are not reported)")
            }
        }
        let fragment = try captureFragment(into: &ext)
        if options.keepsExtensionElements { ext.elements.append(fragment) }
    }

    private func skipForeign() throws {
        let key = tokenizer.qualifiedName.string
        if warnedUnknown.insert(key).inserted {
            warn("<\(key)> belongs in <extensions>; it is skipped (further ones are not reported)")
        }
        try skipElement()
    }

    private func warn(_ message: String) {
        let (line, column) = tokenizer.tokenLocation
        pendingWarnings.append(GPXWarning(file: fileName, line: line, column: column, message: message))
        flushWarningsSoon = true
    }

    /// Reports a warning at once, at the byte offset `absolute` of the input.
    private func warnNow(_ message: String, atAbsolute absolute: Int) throws {
        let (line, column) = tokenizer.location(ofAbsolute: absolute)
        try handler(.warning(GPXWarning(file: fileName, line: line, column: column, message: message)))
    }

    @exclusivity(unchecked) private var pendingWarnings: [GPXWarning] = []
    @exclusivity(unchecked) private var flushWarningsSoon = false

    private func flushWarnings() throws {
        guard flushWarningsSoon else { return }
        flushWarningsSoon = false
        let list = pendingWarnings
        pendingWarnings.removeAll()
        for w in list { try handler(.warning(w)) }
    }

    // MARK: - Leaves

    /// Reads the text of a simple element (the tokenizer is at its start tag) into `leaf`.
    private func readLeaf() throws -> ByteSpan {
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
                warn("<\(tokenizer.qualifiedName.string)> inside a text element is skipped")
                try skipElement()
            case .endElement, .endOfDocument:
                return leaf.span
            }
        }
    }

    /// A text value; white space alone counts as no value.
    private func readString() throws -> String? {
        let s = try readLeaf()
        return s.isWhitespace ? nil : s.string
    }

    /// Reads a decimal value; an empty element means "no value".
    private func readDouble(_ what: String, point: inout PointProblem?) throws -> Double? {
        let start = tokenizer.absoluteTokenStart
        let s = try readLeaf()
        if s.trimmed.count == 0 { return nil }
        if let v = ValueParsing.decimal(s) { return v }
        try badValue(at: start, "<\(what)> is not a number: '\(s.trimmed.string.prefix(40))'")
        return nil
    }

    /// A bad value of a point (not its position): strict, an error; lenient, a warning, and only
    /// the value is left out: the point is kept.
    /// A warning at the byte `absolute`, reported with the events around it.
    private func warn(at absolute: Int, _ message: String) {
        let (line, column) = tokenizer.location(ofAbsolute: absolute)
        pendingWarnings.append(GPXWarning(file: fileName, line: line, column: column, message: message))
        flushWarningsSoon = true
    }

    private func badValue(at absolute: Int, _ message: String) throws {
        guard options.lenient else {
            let (line, column) = tokenizer.location(ofAbsolute: absolute)
            throw GPXError(code: .invalidValue, file: fileName, line: line, column: column, message: message)
        }
        warn(at: absolute, message + "; the value is left out")
    }

    private func readInteger(_ what: String, point: inout PointProblem?) throws -> Int? {
        let start = tokenizer.absoluteTokenStart
        let s = try readLeaf()
        if s.trimmed.count == 0 { return nil }
        if let v = ValueParsing.integer(s) { return v }
        try badValue(at: start, "<\(what)> is not a whole number: '\(s.trimmed.string.prefix(40))'")
        return nil
    }

    private func readTime(point: inout PointProblem?) throws -> Date? {
        let start = tokenizer.absoluteTokenStart
        let s = try readLeaf()
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
        case .failure(.leapSecond(let next)) where options.lenient:
            // Lenient, a leap second is the second after it, as the NMEA reader dates it.
            warn(
                at: start,
                "<time> '\(s.trimmed.string.prefix(40))' is a leap second, which GPX's xsd:dateTime cannot hold; it is read as the second after it, \(ValueFormatting.iso8601(next)), as gpsd and Waymark's NMEA reader date one"
            )
            return next
        case .failure(let failure):
            // A space for the T, a month 13: the time is left out, the point kept (lenient).
            try badValue(at: start, "malformed <time> '\(s.trimmed.string.prefix(40))': \(failure.message)")
            return nil
        }
    }

    /// A problem with one point: thrown when strict, kept (and the point dropped) when lenient.
    private struct PointProblem {
        var warning: GPXWarning
    }

    private func problem(_ slot: inout PointProblem?, _ code: GPXError.Code, at absolute: Int, _ message: String) throws
    {
        let (line, column) = tokenizer.location(ofAbsolute: absolute)
        if !options.lenient {
            throw GPXError(code: code, file: fileName, line: line, column: column, message: message)
        }
        if slot == nil {
            slot = PointProblem(warning: GPXWarning(file: fileName, line: line, column: column, message: message))
        }
    }

    private func readLink(into links: inout [GPXLink]) throws {
        let href = tokenizer.attribute("href")?.string ?? ""
        var link = GPXLink(href: href)
        if !tokenizer.isEmptyElement {
            try forEachChild { name in
                if name.equals("text") {
                    link.text = try readString()
                } else if name.equals("type") {
                    link.type = try readString()
                } else {
                    try skipElement()
                }
            }
        } else {
            _ = try next()
        }
        links.append(link)
    }

    // MARK: - Points

    private func readPoint(kind: StaticString) throws -> GPXPoint? {
        let tagStart = tokenizer.absoluteTokenStart
        var issue: PointProblem?
        accuracyScratch.horizontal = .nan
        accuracyScratch.vertical = .nan
        let lat = tokenizer.attribute("lat")
        let lon = tokenizer.attribute("lon")
        var latitude = Double.nan
        var longitude = Double.nan
        if let lat, let lon {
            latitude = ValueParsing.decimal(lat) ?? .nan
            longitude = ValueParsing.decimal(lon) ?? .nan
            if latitude.isNaN {
                try problem(
                    &issue, .invalidCoordinate, at: tagStart,
                    "<\(kind)> latitude '\(lat.string.prefix(40))' is not a number")
            } else if abs(latitude) > 90 {
                try problem(
                    &issue, .invalidCoordinate, at: tagStart,
                    "<\(kind)> latitude \(lat.trimmed.string) is outside -90...90")
            }
            if longitude.isNaN {
                try problem(
                    &issue, .invalidCoordinate, at: tagStart,
                    "<\(kind)> longitude '\(lon.string.prefix(40))' is not a number")
            } else if abs(longitude) > 180 {
                try problem(
                    &issue, .invalidCoordinate, at: tagStart,
                    "<\(kind)> longitude \(lon.trimmed.string) is outside -180...180")
            }
        } else {
            try problem(
                &issue, .invalidCoordinate, at: tagStart, "<\(kind)> has no '\(lat == nil ? "lat" : "lon")' attribute")
        }
        var point = GPXPoint(coordinate: Coordinate(latitude: latitude, longitude: longitude))
        if tokenizer.isEmptyElement {
            _ = try next()
        } else {
            try forEachChild { name in
                guard isGPXNamespace else {
                    try keepForeign(in: &point.extensions)
                    return
                }
                switch name.count {
                case 3 where name.equals("ele"):
                    point.elevation = try readDouble("ele", point: &issue)
                case 4 where name.equals("time"):
                    point.time = try readTime(point: &issue)
                default:
                    try readPointField(name, into: &point, issue: &issue)
                }
            }
        }
        try flushWarnings()
        if !accuracyScratch.horizontal.isNaN || !accuracyScratch.vertical.isNaN {
            // An app's own accuracy (Apple Health): kept in the details, written back only as the
            // extension element it came in.
            if !accuracyScratch.horizontal.isNaN { point.horizontalAccuracy = accuracyScratch.horizontal }
            if !accuracyScratch.vertical.isNaN { point.verticalAccuracy = accuracyScratch.vertical }
        }
        if let issue {
            droppedPoints += 1
            try handler(
                .warning(
                    GPXWarning(
                        file: issue.warning.file, line: issue.warning.line, column: issue.warning.column,
                        message: issue.warning.message + "; the point is dropped")))
            return nil
        }
        return point
    }

    private func readPointField(_ name: ByteSpan, into point: inout GPXPoint, issue: inout PointProblem?) throws {
        if name.equals("name") {
            point.name = try readString()
        } else if name.equals("desc") {
            point.description = try readString()
        } else if name.equals("cmt") {
            point.comment = try readString()
        } else if name.equals("sym") {
            point.symbol = try readString()
        } else if name.equals("type") {
            point.type = try readString()
        } else if name.equals("src") {
            point.source = try readString()
        } else if name.equals("link") {
            try readLink(into: &point.links)
        } else if name.equals("url") {
            if let href = try readString() { point.links.append(GPXLink(href: href)) }
        } else if name.equals("urlname") {
            let text = try readString()
            if !point.links.isEmpty { point.links[point.links.count - 1].text = text }
        } else if name.equals("hdop") {
            point.hdop = try readDouble("hdop", point: &issue)
        } else if name.equals("vdop") {
            point.vdop = try readDouble("vdop", point: &issue)
        } else if name.equals("pdop") {
            point.pdop = try readDouble("pdop", point: &issue)
        } else if name.equals("sat") {
            point.satellites = try readInteger("sat", point: &issue)
        } else if name.equals("fix") {
            let start = tokenizer.absoluteTokenStart
            let text = try readLeaf().trimmed
            if text.count > 0 {
                if let fix = GPXFix(rawValue: text.string) {
                    point.fix = fix
                } else {
                    try warnNow(
                        "<fix> '\(text.string.prefix(40))' is not none, 2d, 3d, dgps or pps; it is ignored",
                        atAbsolute: start)
                }
            }
        } else if name.equals("magvar") {
            point.magneticVariation = try readDouble("magvar", point: &issue)
        } else if name.equals("geoidheight") {
            point.geoidHeight = try readDouble("geoidheight", point: &issue)
        } else if name.equals("ageofdgpsdata") {
            point.ageOfDGPSData = try readDouble("ageofdgpsdata", point: &issue)
        } else if name.equals("dgpsid") {
            point.dgpsStation = try readInteger("dgpsid", point: &issue)
        } else if name.equals("speed") {
            point.speed = try readDouble("speed", point: &issue)
        } else if name.equals("course") {
            point.course = try readDouble("course", point: &issue)
        } else if name.equals("extensions") {
            point.extensions.merge(try readExtensions())
        } else {
            try skipUnknown(name)
        }
    }

    // MARK: - Routes and tracks

    private func readPathInfoField(_ name: ByteSpan, into info: inout GPXPathInfo) throws -> Bool {
        if name.equals("name") {
            info.name = try readString()
        } else if name.equals("desc") {
            info.description = try readString()
        } else if name.equals("cmt") {
            info.comment = try readString()
        } else if name.equals("src") {
            info.source = try readString()
        } else if name.equals("type") {
            info.type = try readString()
        } else if name.equals("number") {
            var issue: PointProblem?
            info.number = try readInteger("number", point: &issue)
        } else if name.equals("link") {
            try readLink(into: &info.links)
        } else if name.equals("url") {
            if let href = try readString() { info.links.append(GPXLink(href: href)) }
        } else if name.equals("urlname") {
            let text = try readString()
            if !info.links.isEmpty { info.links[info.links.count - 1].text = text }
        } else if name.equals("extensions") {
            info.extensions.merge(try readExtensions())
        } else {
            return false
        }
        return true
    }

    /// Reads a `<rte>` or a `<trk>`: its description, then its points or segments.
    private func readPath(isRoute: Bool) throws {
        if halves != nil && !isRoute { trackTag = tokenizer.tokenBytes() }
        var info = GPXPathInfo()
        var started = false
        func noteOpen() {
            if isRoute { openRoute = info } else { openTrack = info }
        }
        if tokenizer.isEmptyElement {
            _ = try next()
        } else {
            try forEachChild { name in
                guard isGPXNamespace else {
                    try keepForeign(in: &info.extensions)
                    return
                }
                if name.equals(isRoute ? "rtept" : "trkseg") {
                    if !started {
                        started = true
                        noteOpen()
                        try handler(isRoute ? .routeStart(info) : .trackStart(info))
                    }
                    if !isRoute {
                        try readSegment()
                    } else if let point = try readPoint(kind: "rtept") {
                        delivered += 1
                        try handler(.routePoint(point))
                    }
                } else if try readPathInfoField(name, into: &info) {
                    if started { noteOpen() }
                } else {
                    try skipUnknown(name)
                }
            }
        }
        if !started { try handler(isRoute ? .routeStart(info) : .trackStart(info)) }
        if isRoute { openRoute = nil } else { openTrack = nil }
        try handler(isRoute ? .routeEnd(info) : .trackEnd(info))
    }

    private func readSegment() throws {
        if let halves, !tokenizer.isEmptyElement {
            segmentTag = tokenizer.tokenBytes()
            halves.enteredSegment(self)
        }
        try handler(.segmentStart)
        openSegment = true
        var extensions = GPXExtensions()
        if tokenizer.isEmptyElement {
            _ = try next()
        } else {
            children: while true {
                if tokenizer.position >= watchFrom { try watchHalves() }
                if try readSimpleTrackPoint() { continue }
                switch try next() {
                case .startElement:
                    let name = tokenizer.localName
                    guard isGPXNamespace else {
                        try keepForeign(in: &extensions)
                        continue
                    }
                    if name.equals("trkpt") {
                        if let point = try readPoint(kind: "trkpt") {
                            delivered += 1
                            try handler(.trackPoint(point))
                        }
                    } else if name.equals("extensions") {
                        extensions.merge(try readExtensions())
                    } else {
                        try skipUnknown(name)
                    }
                case .endElement, .endOfDocument:
                    break children
                case .text:
                    continue
                }
            }
        }
        openSegment = false
        try handler(.segmentEnd(extensions))
    }

    // MARK: - Halves

    /// A census that reads a large file in two halves at once (``ReplayCensus``): it is told of
    /// each segment this reader enters, and of the moment it reaches the watched offset.
    @exclusivity(unchecked) var halves: (any HalfWatch)?
    /// From where a segment's children are looked at closely for ``HalfWatch/offset``: a little
    /// before it, or `Int.max` when nothing is watched.
    @exclusivity(unchecked) var watchFrom = Int.max
    /// Kept while ``halves`` is set: where the root's start tag ends, and the start tags of the
    /// track and the segment being read, byte for byte.
    @exclusivity(unchecked) private(set) var rootTagEnd = 0
    @exclusivity(unchecked) private(set) var trackTag: [UInt8] = []
    @exclusivity(unchecked) private(set) var segmentTag: [UInt8] = []

    /// Whether the tokenizer's offsets are the source's bytes (no transcoding).
    var offsetsAreTheSource: Bool { tokenizer.offsetsAreTheSource }
    /// The offset of the next byte the reader reads.
    var position: Int { tokenizer.position }

    /// At the top of a segment's children, near the watched offset: tells ``halves`` when the
    /// segment's next child starts exactly there (only white space before it), or that the
    /// reader has gone past it.
    private func watchHalves() throws {
        guard let halves else {
            watchFrom = .max
            return
        }
        let offset = halves.offset
        let here = tokenizer.position
        guard here <= offset else {
            watchFrom = .max
            halves.missed()
            return
        }
        let gap = offset - here
        guard let window = try tokenizer.rawWindow(minimum: gap + 1), tokenizer.depth == 3, gap < window.count
        else { return }
        for i in 0..<gap {
            switch window[i] {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return  // something else comes first: look again after it
            }
        }
        watchFrom = .max
        // Warnings not yet handed on would be lost if reading stopped here.
        if flushWarningsSoon {
            halves.missed()
        } else {
            try halves.reached(self)
        }
    }

    /// Whether ``TrackPointScanner`` reads the points of segments (the general path does when
    /// it is off; tests compare the two).
    /// (Also for the fuzz target, which checks that it changes nothing.)
    @exclusivity(unchecked) @_spi(Testing) public var usesTrackPointScanner = true
    /// Points the scanner read, and the times it tried (tests check that it is used, and that
    /// it rests when it keeps failing).
    @exclusivity(unchecked) private(set) var scannedPoints = 0
    @exclusivity(unchecked) private(set) var scannerAttempts = 0
    /// Points the scanner read from its template of the previous point's layout.
    var templatedPoints: Int { scanner.templatedPoints }
    /// Whether the scanner only checks the numbers of the points it reads, for a census that
    /// counts points and their times (``TrackPointScanner/countsOnly``): the same points are
    /// accepted, with the same warnings and errors, but the coordinate and the other decimal
    /// numbers of a point it read are not the file's.
    var countsOnly: Bool {
        get { scanner.countsOnly }
        set { scanner.countsOnly = newValue }
    }
    /// A file whose points all take the general path (each with a <sat>, say) should not pay for
    /// a scan that fails every time: after 8 misses in a row the scanner leaves the next 1 024
    /// children of segments alone.
    @exclusivity(unchecked) private var scannerBackoff = MissBackoff(limit: 8, rest: 1024)

    /// How far ahead the scanner looks: a point longer than this takes the general path.
    private static let scannerWindow = 4096

    /// Reads the next child of a `<trkseg>` with ``TrackPointScanner`` if it is a track point of
    /// the common shape, and hands it on. False, with nothing consumed, when it is anything else.
    private func readSimpleTrackPoint() throws -> Bool {
        guard usesTrackPointScanner, scannerBackoff.shouldTry() else { return false }
        guard tokenizer.depth + 3 < tokenizer.maxDepth,
            let window = try tokenizer.rawWindow(minimum: Self.scannerWindow)
        else { return false }
        scannerAttempts += 1
        if scannerBindingsVersion != tokenizer.bindingsVersion {
            scannerBindingsVersion = tokenizer.bindingsVersion
            let defaultBinding = tokenizer.bindingIndex(forPrefix: .empty)
            scanner.defaultIsGPX = isGPXBinding(defaultBinding)
            scanner.defaultIsEmpty = defaultBinding == -1
            scanner.forgetPrefixes()
        }
        // Elements inside <extensions> may nest as deep as the tokenizer allows (less a margin).
        scanner.extensionLevels = min(4, tokenizer.maxDepth - tokenizer.depth - 4)
        // The point is read where it goes: the batch's next slot when reading ahead, else here.
        if let pointSink {
            let slot = pointSink.pointSlot()
            slot.initialize(to: GPXPoint(coordinate: Coordinate(latitude: 0, longitude: 0)))
            guard let length = scanPoint(window, into: slot) else {
                slot.deinitialize(count: 1)
                scannerBackoff.miss()
                return false
            }
            scannerBackoff.hit()
            tokenizer.consumeRaw(length)
            scannedPoints += 1
            delivered += 1
            if !flushWarningsSoon {
                try pointSink.commitPoint()
            } else {
                // Warnings go out before the point.
                let point = slot.move()
                try flushWarnings()
                try handler(.trackPoint(point))
            }
            return true
        }
        var point = GPXPoint(coordinate: Coordinate(latitude: 0, longitude: 0))
        guard let length = withUnsafeMutablePointer(to: &point, { scanPoint(window, into: $0) }) else {
            scannerBackoff.miss()
            return false
        }
        scannerBackoff.hit()
        tokenizer.consumeRaw(length)
        scannedPoints += 1
        try flushWarnings()
        delivered += 1
        try handler(.trackPoint(consume point))
        return true
    }

    /// Scans the point at the start of `window` into `slot` (initialised, fresh), learning the
    /// prefixes its extensions use; its length, or nil when it is not for the scanner.
    @inline(__always)
    private func scanPoint(_ window: UnsafeBufferPointer<UInt8>, into slot: UnsafeMutablePointer<GPXPoint>) -> Int? {
        var outcome = scanner.scan(window, into: &slot.pointee)
        // A point's extensions may use a few prefixes the scanner has not been told about.
        var lookups = 0
        while case .unknownPrefix(let prefix) = outcome, lookups < 4 {
            lookups += 1
            let namespace = tokenizer.bindingIndex(forPrefix: prefix).map {
                ExtensionNamespace(uri: tokenizer.namespaceURI(ofBinding: $0))
            }
            scanner.learn(prefix: prefix, namespace: namespace)
            slot.pointee = GPXPoint(coordinate: Coordinate(latitude: 0, longitude: 0))
            outcome = scanner.scan(window, into: &slot.pointee)
        }
        guard case .point(let length) = outcome else { return nil }
        return length
    }

    /// Where the scanner puts track points when ``readAhead(batchSize:batches:_:)`` reads: the
    /// next slot of the batch being filled, so that a point is not copied on its way there.
    @exclusivity(unchecked) var pointSink: EventSender?

    @exclusivity(unchecked) private var scanner: TrackPointScanner
    @exclusivity(unchecked) private var scannerBindingsVersion = -1

    private func isGPXBinding(_ index: Int?) -> Bool {
        guard let index else { return false }
        return index < 0 || isGPXURI(tokenizer.namespaceURI(ofBinding: index))
    }

    /// The root's namespace when it is not GPX's (nil when it is, or has none): read as GPX's.
    @exclusivity(unchecked) private var rootNamespace: [UInt8]?

    /// GPX 1.0's or 1.1's namespace, or the root's unknown one.
    private func isGPXURI(_ ns: ByteSpan) -> Bool {
        if Self.isGPXURI(ns) { return true }
        guard let root = rootNamespace, root.count == ns.count else { return false }
        return root.withUnsafeBufferPointer { ByteSpan.bytesEqual(ns.start, $0.baseAddress!, ns.count) }
    }

    private static func isGPXURI(_ ns: ByteSpan) -> Bool {
        ns.equals("http://www.topografix.com/GPX/1/1") || ns.equals("http://www.topografix.com/GPX/1/0")
    }

    // MARK: - Metadata

    private func readMetadata() throws {
        if tokenizer.isEmptyElement {
            _ = try next()
            return
        }
        try forEachChild { name in
            guard isGPXNamespace else {
                try keepForeign(in: &metadata.extensions)
                return
            }
            if name.equals("name") {
                metadata.name = try readString()
            } else if name.equals("desc") {
                metadata.description = try readString()
            } else if name.equals("author") {
                try forEachChildOrEmpty { child in
                    if child.equals("name") {
                        metadata.authorName = try readString()
                    } else if child.equals("email") {
                        if let id = tokenizer.attribute("id"), let domain = tokenizer.attribute("domain") {
                            metadata.authorEmail = id.string + "@" + domain.string
                        }
                        try skipElementOrEmpty()
                    } else if child.equals("link") {
                        var links: [GPXLink] = []
                        try readLink(into: &links)
                        metadata.authorLink = links.first
                    } else {
                        try skipElementOrEmpty()
                    }
                }
            } else if name.equals("copyright") {
                metadata.copyrightHolder = tokenizer.attribute("author")?.string
                try forEachChildOrEmpty { child in
                    if child.equals("year") {
                        let start = tokenizer.absoluteTokenStart
                        let text = try readLeaf().trimmed
                        if text.count > 0 {
                            if let year = ValueParsing.integer(text) {
                                metadata.copyrightYear = year
                            } else {
                                try warnNow(
                                    "<year> '\(text.string.prefix(20))' is not a year; it is ignored", atAbsolute: start
                                )
                            }
                        }
                    } else if child.equals("license") {
                        metadata.copyrightLicense = try readString()
                    } else {
                        try skipElementOrEmpty()
                    }
                }
            } else if name.equals("link") {
                try readLink(into: &metadata.links)
            } else if name.equals("time") {
                var issue: PointProblem?
                metadata.time = try readTime(point: &issue)
            } else if name.equals("keywords") {
                metadata.keywords = try readString()
            } else if name.equals("bounds") {
                metadata.bounds = readBoundsAttributes()
                try skipElementOrEmpty()
            } else if name.equals("extensions") {
                metadata.extensions.merge(try readExtensions())
            } else {
                try skipUnknown(name)
            }
        }
        try flushWarnings()
    }

    private func forEachChildOrEmpty(_ body: (ByteSpan) throws -> Void) throws {
        if tokenizer.isEmptyElement {
            _ = try next()
        } else {
            try forEachChild(body)
        }
    }

    private func skipElementOrEmpty() throws {
        if tokenizer.isEmptyElement { _ = try next() } else { try skipElement() }
    }

    private func readBoundsAttributes() -> Bounds? {
        guard let a = tokenizer.attribute("minlat").flatMap(ValueParsing.decimal),
            let b = tokenizer.attribute("minlon").flatMap(ValueParsing.decimal),
            let c = tokenizer.attribute("maxlat").flatMap(ValueParsing.decimal),
            let d = tokenizer.attribute("maxlon").flatMap(ValueParsing.decimal)
        else { return nil }
        return Bounds(minLatitude: a, minLongitude: b, maxLatitude: c, maxLongitude: d)
    }

    /// GPX 1.0 keeps metadata at the top level; Waymark moves it into ``GPXMetadata``.
    private func readGPX10Metadata(_ name: ByteSpan) throws -> Bool {
        if name.equals("name") {
            metadata.name = try readString()
        } else if name.equals("desc") {
            metadata.description = try readString()
        } else if name.equals("author") {
            metadata.authorName = try readString()
        } else if name.equals("email") {
            metadata.authorEmail = try readString()?.trimmingWhitespace
        } else if name.equals("url") {
            if let href = try readString() { metadata.links.append(GPXLink(href: href)) }
        } else if name.equals("urlname") {
            let text = try readString()
            if !metadata.links.isEmpty { metadata.links[metadata.links.count - 1].text = text }
        } else if name.equals("time") {
            var issue: PointProblem?
            metadata.time = try readTime(point: &issue)
        } else if name.equals("keywords") {
            metadata.keywords = try readString()
        } else if name.equals("bounds") {
            metadata.bounds = readBoundsAttributes()
            try skipElementOrEmpty()
        } else {
            return false
        }
        return true
    }

    // MARK: - Extensions

    /// Reads `<extensions>`: every child is kept verbatim, and known values are picked out.
    private func readExtensions() throws -> GPXExtensions {
        var result = GPXExtensions()
        if tokenizer.isEmptyElement {
            _ = try next()
            return result
        }
        guard options.keepsExtensionElements else {
            try readExtensionValues(into: &result)
            return result
        }
        while true {
            switch try next() {
            case .startElement:
                result.elements.append(try captureFragment(into: &result))
            case .endElement, .endOfDocument:
                return result
            case .text:
                continue
            }
        }
    }

    /// The namespace of the current element, as ``ExtensionTarget`` needs it (cached by binding).
    private var extensionNamespace: ExtensionNamespace {
        let binding = tokenizer.elementBindingIndex
        if binding < 0 { return .none }
        refreshBindingCache()
        if binding == extensionNamespaceBinding { return extensionNamespaceKind }
        let kind = ExtensionNamespace(uri: tokenizer.namespaceURI)
        extensionNamespaceBinding = binding
        extensionNamespaceKind = kind
        return kind
    }

    /// The value the current element carries, if Waymark knows it.
    private func knownExtensionTarget() -> ExtensionTarget? {
        ExtensionTarget(local: tokenizer.localName, namespace: extensionNamespace)
    }

    /// Picks known values out of extension elements as their tokens go by: `start()` at each
    /// start tag, `text()` for text, `end(into:)` at each end tag.
    private struct ExtensionValueCollector {
        var target: ExtensionTarget?
        /// Scratch for the value's text (the reader's own, to allocate nothing per point).
        let value: ByteStore
        /// Where accuracies go (the reader's, read by the point being read).
        let accuracy: AccuracyScratch

        mutating func start(_ field: ExtensionTarget?) {
            target = field
            value.count = 0
        }

        func text(_ span: ByteSpan) {
            if target != nil { value.append(span) }
        }

        mutating func end(into ext: inout GPXExtensions) {
            guard let t = target else { return }
            if let v = ValueParsing.decimal(value.span) {
                switch t {
                case .value(let field): ext.set(field, v)
                case .horizontalAccuracy: accuracy.horizontal = v
                case .verticalAccuracy: accuracy.vertical = v
                }
            }
            target = nil
        }
    }

    /// The accuracies the extensions of the point being read gave (NaN: none).
    final class AccuracyScratch {
        var horizontal = Double.nan
        var vertical = Double.nan
    }
    private let accuracyScratch = AccuracyScratch()

    /// Reads only the known values of `<extensions>` (the tokenizer is inside it).
    private func readExtensionValues(into ext: inout GPXExtensions) throws {
        var depth = 1
        var values = ExtensionValueCollector(value: leaf, accuracy: accuracyScratch)
        while depth > 0 {
            switch try next() {
            case .startElement:
                if tokenizer.isEmptyElement {
                    _ = try next()
                } else {
                    depth += 1
                    values.start(knownExtensionTarget())
                }
            case .endElement:
                depth -= 1
                values.end(into: &ext)
            case .text:
                values.text(tokenizer.text)
            case .endOfDocument:
                return
            }
        }
    }

    /// The most bytes one extension element may hold when it is kept whole (for GPX output):
    /// real ones hold bytes to kilobytes; a larger one is refused rather than held three times
    /// over in memory (its text, the element, the string).
    static let maximumExtensionElementBytes = 16 << 20

    /// Serialises the element at the tokenizer (and its subtree) as standalone XML, declaring the
    /// namespaces it uses that were declared outside it. Picks out known extension values.
    /// - Throws: a `limitExceeded` ``GPXError`` at the element's start past
    ///   ``maximumExtensionElementBytes``.
    private func captureFragment(into ext: inout GPXExtensions) throws -> String {
        let outerBindings = tokenizer.bindingCountBeforeElement
        let (startLine, startColumn) = tokenizer.tokenLocation
        var used = Set<Int>()  // binding indices from outside the fragment
        let body = ByteStore(capacity: 256)
        let rootName = tokenizer.qualifiedName.string
        let rootAttributes = ByteStore(capacity: 64)
        var depth = 0
        var values = ExtensionValueCollector(value: leaf, accuracy: accuracyScratch)

        func noteStart(_ out: ByteStore, includeName: Bool, dropDefaultDeclaration: Bool = false) {
            let b = tokenizer.elementBindingIndex
            if b >= 0 && b < outerBindings { used.insert(b) }
            if includeName {
                out.append(UInt8(ascii: "<"))
                out.append(tokenizer.qualifiedName)
            }
            for i in tokenizer.attributes.indices {
                if dropDefaultDeclaration && tokenizer.attributeQualifiedName(i).equals("xmlns") { continue }
                let ab = tokenizer.attributeBindingIndex(i)
                if ab >= 0 && ab < outerBindings { used.insert(ab) }
                out.append(UInt8(ascii: " "))
                out.append(tokenizer.attributeQualifiedName(i))
                out.append("=\"")
                XMLEscaping.appendEscaped(tokenizer.attributeValue(i), attribute: true, to: out)
                out.append(UInt8(ascii: "\""))
            }
        }
        // GPX 1.1 allows only elements of other namespaces in <extensions>. An extension element
        // in GPX's own namespace or in none (common: unprefixed children under a default GPX
        // namespace) is kept in ``GPXExtensions/unqualifiedNamespace`` instead, so that written
        // files validate; its names, attributes and content are unchanged.
        let rootURI = tokenizer.namespaceURI
        let rehome =
            tokenizer.qualifiedName.count == tokenizer.localName.count
            && (rootURI.count == 0 || isGPXURI(rootURI))
        noteStart(rootAttributes, includeName: false, dropDefaultDeclaration: rehome)
        values.start(knownExtensionTarget())
        let rootEmpty = tokenizer.isEmptyElement
        if rootEmpty {
            _ = try next()
        } else {
            depth = 1
            while depth > 0 {
                switch try next() {
                case .startElement:
                    noteStart(body, includeName: true)
                    if tokenizer.isEmptyElement {
                        body.append("/>")
                        _ = try next()
                    } else {
                        body.append(UInt8(ascii: ">"))
                        depth += 1
                        values.start(knownExtensionTarget())
                    }
                case .endElement:
                    depth -= 1
                    values.end(into: &ext)
                    if depth > 0 {
                        body.append("</")
                        body.append(tokenizer.qualifiedName)
                        body.append(UInt8(ascii: ">"))
                    }
                case .text:
                    values.text(tokenizer.text)
                    XMLEscaping.appendEscaped(tokenizer.text, attribute: false, to: body)
                case .endOfDocument:
                    depth = 0
                }
                if body.count > Self.maximumExtensionElementBytes {
                    throw GPXError(
                        code: .limitExceeded, file: fileName, line: startLine, column: startColumn,
                        message:
                            "the extension element <\(rootName)> holds more than \(Self.maximumExtensionElementBytes >> 20) MiB; Waymark keeps at most that of one element"
                    )
                }
            }
        }
        let out = ByteStore(capacity: body.count + rootAttributes.count + 64)
        out.append(UInt8(ascii: "<"))
        out.append(rootName)
        if rehome {
            out.append(" xmlns=\"")
            out.append(GPXExtensions.unqualifiedNamespace)
            out.append(UInt8(ascii: "\""))
        }
        for index in used.sorted() {
            let (prefix, uri) = tokenizer.binding(index)
            if prefix.equals("xml") || (rehome && prefix.count == 0) { continue }
            out.append(prefix.count == 0 ? " xmlns=\"" : " xmlns:")
            if prefix.count > 0 {
                out.append(prefix)
                out.append("=\"")
            }
            XMLEscaping.appendEscaped(uri, attribute: true, to: out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(rootAttributes.span)
        if body.count == 0 && rootEmpty {
            out.append("/>")
        } else {
            out.append(UInt8(ascii: ">"))
            out.append(body.span)
            out.append("</")
            out.append(rootName)
            out.append(UInt8(ascii: ">"))
        }
        return out.string
    }
}

extension GPXDocument {
    /// Hands the document to `body` as the events a ``GPXReader`` would deliver for it.
    public func forEachEvent(_ body: (GPXEvent) throws -> Void) rethrows {
        try body(.header(header))
        if !metadata.isEmpty { try body(.metadata(metadata)) }
        for w in waypoints { try body(.waypoint(w)) }
        for r in routes {
            try body(.routeStart(r.info))
            for p in r.points { try body(.routePoint(p)) }
            try body(.routeEnd(r.info))
        }
        for t in tracks {
            try body(.trackStart(t.info))
            for segment in t.segments {
                try body(.segmentStart)
                for p in segment.points { try body(.trackPoint(p)) }
                try body(.segmentEnd(segment.extensions))
            }
            try body(.trackEnd(t.info))
        }
        if !extensions.isEmpty { try body(.documentExtensions(extensions)) }
    }

    /// Reads a whole GPX file into memory. For large files prefer ``GPXReader``.
    ///
    /// - Parameters:
    ///   - path: the file to read.
    ///   - options: how strictly to read, and what to keep.
    ///   - warnings: receives what was wrong but did not stop reading.
    public init(
        contentsOf path: String, options: GPXReadOptions = GPXReadOptions(),
        warnings: ((GPXWarning) -> Void)? = nil
    ) throws {
        try self.init(reader: GPXReader(contentsOf: path, options: options), warnings: warnings)
    }

    /// Parses a GPX document held in memory; `name` appears in messages.
    public init(
        data: [UInt8], name: String = "<memory>", options: GPXReadOptions = GPXReadOptions(),
        warnings: ((GPXWarning) -> Void)? = nil
    ) throws {
        try self.init(
            reader: GPXReader(source: MemoryByteSource(data), name: name, options: options), warnings: warnings)
    }

    /// Reads everything a reader of any format delivers into a document: a TCX, KML, GeoJSON,
    /// FIT or CSV file, an NMEA log, from ``TraceFormat/reader(for:name:options:readers:)``.
    public init(reading reader: any TraceEventReader, warnings: ((GPXWarning) -> Void)? = nil) throws {
        let builder = GPXDocumentBuilder()
        try reader.readEvents { event in
            if case .warning(let w) = event { warnings?(w) }
            builder.handle(event)
        }
        self = builder.document
    }

    /// Reads everything `reader` delivers into a document.
    public init(reader: GPXReader, warnings: ((GPXWarning) -> Void)? = nil) throws {
        let builder = GPXDocumentBuilder()
        try reader.read { event in
            if case .warning(let w) = event { warnings?(w) }
            builder.handle(event)
        }
        self = builder.document
    }
}

extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// Assembles events into a ``GPXDocument``.
final class GPXDocumentBuilder {
    var document = GPXDocument()

    func handle(_ event: GPXEvent) {
        switch event {
        case .header(let h): document.header = h
        case .metadata(let m): document.metadata = m
        case .waypoint(let p): document.waypoints.append(p)
        case .routeStart(let info): document.routes.append(GPXRoute(info: info))
        case .routePoint(let p): document.routes[document.routes.count - 1].points.append(p)
        case .routeEnd(let info): document.routes[document.routes.count - 1].info = info
        case .trackStart(let info): document.tracks.append(GPXTrack(info: info))
        case .segmentStart: document.tracks[document.tracks.count - 1].segments.append(GPXSegment())
        case .trackPoint(let p):
            let t = document.tracks.count - 1
            document.tracks[t].segments[document.tracks[t].segments.count - 1].points.append(p)
        case .segmentEnd(let e):
            let t = document.tracks.count - 1
            document.tracks[t].segments[document.tracks[t].segments.count - 1].extensions = e
        case .trackEnd(let info): document.tracks[document.tracks.count - 1].info = info
        case .documentExtensions(let e): document.extensions.merge(e)
        case .warning: break
        }
    }
}
