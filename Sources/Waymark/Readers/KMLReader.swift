#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streaming reader of KML 2.2 (Google Earth, Google Takeout, GPSBabel's and many apps'
/// exports), giving the same events as ``GPXReader``.
///
/// Each `<Placemark>`, in any `<Document>` or `<Folder>`, gives what its geometry holds, named
/// by the placemark's `<name>`:
/// - a `<Point>` is a waypoint, with the placemark's `<description>` and `<TimeStamp>`;
/// - a `<LineString>` is a track of one segment (its points have no times: KML's lines have
///   none);
/// - a `<gx:Track>` is a track of one segment whose points have the `<when>` times, and the
///   sensor values of its `<gx:SimpleArrayData>` arrays (`heartrate`, `cadence`, `power`,
///   `temperature`, `speed`, `course`, spelled as GPSBabel, Garmin and Google write them);
/// - a `<gx:MultiTrack>`, or a `<MultiGeometry>` of lines, is one track with a segment per
///   part; a `<MultiGeometry>`'s points are waypoints.
///
/// Polygons, models, overlays and network links hold no trace and are skipped, with one warning.
///
/// Memory: a `<LineString>`'s coordinates are read as they come, however long. A `<gx:Track>`
/// gives all its times before its positions, so one track's times, positions and values are
/// held until its end (32 bytes a point and 8 per value); a file's other tracks are not.
public final class KMLReader: TraceEventReader {
    private let walker: XMLTraceWalker
    private var handle: (consuming GPXEvent) throws -> Void = { _ in }
    /// Bad points left out (lenient reading only).
    public private(set) var droppedPoints = 0

    public var fileName: String { walker.fileName }

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        self.init(source: try FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        walker = XMLTraceWalker(source: source, name: name, options: options)
    }

    /// Reads the whole document, handing each event to `handle` as soon as it is complete.
    ///
    /// - Throws: ``GPXError`` for malformed input, or whatever `handle` throws.
    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try withoutActuallyEscaping(handle) { handle in
            self.handle = handle
            defer { self.handle = { _ in } }
            try readDocument()
        }
    }

    private var tokenizer: XMLTokenizer { walker.tokenizer }

    private func emit(_ event: consuming GPXEvent) throws {
        try walker.flush(handle)
        try handle(event)
    }

    private func readDocument() throws {
        guard try walker.moveToRoot() else {
            throw walker.error(.notGPX, at: 0, "the document has no root element")
        }
        guard tokenizer.localName.equals("kml") else {
            throw walker.error(
                .notGPX, at: tokenizer.absoluteTokenStart,
                "the root element is <\(tokenizer.qualifiedName.string)>, not <kml>: this is not a KML file")
        }
        try emit(.header(GPXHeader(version: "1.1", creator: nil)))
        try readContainer()
        try walker.flush(handle)
    }

    /// `<kml>`, `<Document>` or `<Folder>`: placemarks and more containers, at any depth.
    private func readContainer() throws {
        try walker.forEachChild { name in
            if name.equals("Placemark") {
                try readPlacemark()
            } else if name.equals("Document") || name.equals("Folder") {
                try readContainer()
            } else {
                if name.equals("GroundOverlay") || name.equals("PhotoOverlay") || name.equals("ScreenOverlay")
                    || name.equals("NetworkLink")
                {
                    walker.warnOnce("<\(tokenizer.qualifiedName.string)> holds no trace; it is skipped")
                }
                try walker.skipElement()
            }
        }
    }

    /// What a placemark says about itself, for the geometry that follows.
    private struct PlacemarkInfo {
        var name: String?
        var description: String?
        var time: Date?
    }

    private func readPlacemark() throws {
        var info = PlacemarkInfo()
        try walker.forEachChild { name in
            if name.equals("name") {
                info.name = try walker.readString()
            } else if name.equals("description") {
                info.description = try walker.readString()
            } else if name.equals("TimeStamp") {
                try walker.forEachChild { name in
                    if name.equals("when") { info.time = try walker.readTime("when") } else { try walker.skipElement() }
                }
            } else if name.equals("Point") {
                try readPoint(info)
            } else if name.equals("LineString") {
                try inTrack(info) { try readLineString() }
            } else if name.equals("Track") {
                try inTrack(info) { try readTrack() }
            } else if name.equals("MultiTrack") {
                try inTrack(info) {
                    try walker.forEachChild { name in
                        if name.equals("Track") { try readTrack() } else { try walker.skipElement() }
                    }
                }
            } else if name.equals("MultiGeometry") {
                try readMultiGeometry(info)
            } else {
                if name.equals("Polygon") || name.equals("Model") || name.equals("LinearRing") {
                    walker.warnOnce("<\(tokenizer.qualifiedName.string)> holds no trace; it is skipped")
                }
                try walker.skipElement()
            }
        }
    }

    /// A `<MultiGeometry>`: its lines and tracks are one track, its points waypoints.
    private func readMultiGeometry(_ info: PlacemarkInfo) throws {
        var trackOpen = false
        // Points after a line wait for the track's end: a waypoint is never inside a track.
        var waiting: [GPXPoint] = []
        func openTrack() throws {
            guard !trackOpen else { return }
            trackOpen = true
            var path = GPXPathInfo(name: info.name)
            path.description = info.description
            try emit(.trackStart(path))
        }
        try walker.forEachChild { name in
            if name.equals("Point") {
                if let point = try readPoint(info, emitting: !trackOpen) { waiting.append(point) }
            } else if name.equals("LineString") {
                try openTrack()
                try readLineString()
            } else if name.equals("Track") {
                try openTrack()
                try readTrack()
            } else if name.equals("MultiGeometry") {
                if trackOpen {
                    walker.warnOnce("a <MultiGeometry> inside another after its lines is skipped")
                    try walker.skipElement()
                } else {
                    try readMultiGeometry(info)
                }
            } else {
                try walker.skipElement()
            }
        }
        if trackOpen {
            var path = GPXPathInfo(name: info.name)
            path.description = info.description
            try emit(.trackEnd(path))
        }
        for point in waiting { try emit(.waypoint(point)) }
    }

    private func inTrack(_ info: PlacemarkInfo, _ body: () throws -> Void) throws {
        var path = GPXPathInfo(name: info.name)
        path.description = info.description
        try emit(.trackStart(path))
        try body()
        try emit(.trackEnd(path))
    }

    // MARK: - Geometries

    /// A `<Point>`: a waypoint at its first coordinate tuple, sent (`emitting`) or returned.
    @discardableResult
    private func readPoint(_ info: PlacemarkInfo, emitting: Bool = true) throws -> GPXPoint? {
        // Its position is judged at its end: its start is marked to be reported.
        let made = try walker.marking { start in
            var tuple: [Double]?
            try walker.forEachChild { name in
                guard name.equals("coordinates") else {
                    try walker.skipElement()
                    return
                }
                try readCoordinates { values, _ in
                    if tuple == nil { tuple = values }
                }
            }
            return try makePoint(tuple ?? [], at: walker.place(ofMark: start), kind: "Point")
        }
        guard var point = made else { return nil }
        point.name = info.name
        point.description = info.description
        point.time = info.time
        guard emitting else { return point }
        try emit(.waypoint(point))
        return nil
    }

    /// A `<LineString>`: one segment, its points sent as its coordinates are read.
    private func readLineString() throws {
        var open = false
        try walker.forEachChild { name in
            guard name.equals("coordinates") else {
                try walker.skipElement()
                return
            }
            try readCoordinates { values, start in
                guard let point = try makePoint(values, at: walker.place(ofMark: start), kind: "LineString") else {
                    return
                }
                if !open {
                    open = true
                    try emit(.segmentStart)
                }
                try emit(.trackPoint(point))
            }
        }
        if open { try emit(.segmentEnd(GPXExtensions())) }
    }

    /// A `<gx:Track>`: its times, positions and value arrays, paired by index at its end.
    ///
    /// Its points are made, and bad ones reported, at its end, when the text of its start and
    /// of a bad `<gx:coord>` may have left the tokenizer: both are marked as they are read (a
    /// bad coordinate only).
    private func readTrack() throws {
        try walker.marking { start in try readTrack(from: start) }
    }

    private func readTrack(from start: Int) throws {
        var times: [Date?] = []
        var positions: [(values: [Double], mark: Int?)] = []
        var arrays: [(field: GPXExtensions.Field, values: [Double?])] = []
        try walker.forEachChild { name in
            if name.equals("when") {
                let at = tokenizer.absoluteTokenStart
                let s = try walker.readLeaf()
                times.append(try walker.time(s, what: "when", at: at))
            } else if name.equals("coord") {
                let at = tokenizer.absoluteTokenStart
                let numbers = Self.numbers(try walker.readLeaf())
                if numbers.contains(nil) {
                    try walker.badValue(at: at, "<gx:coord> holds something that is not a number")
                }
                let values = numbers.map { $0 ?? .nan }
                positions.append((values, Self.problem(values) == nil ? nil : walker.mark(absolute: at)))
            } else if name.equals("ExtendedData") {
                try readArrays(into: &arrays)
            } else {
                try walker.skipElement()
            }
        }
        if !times.isEmpty && times.count != positions.count {
            let message =
                "<gx:Track> has \(times.count) <when> and \(positions.count) <gx:coord>; KML pairs them one to one"
            let place = walker.place(ofMark: start)
            guard walker.lenient else { throw walker.error(.invalidValue, at: place, message) }
            walker.warn(at: place, message + "; the first \(min(times.count, positions.count)) pairs are kept")
            positions.removeLast(max(0, positions.count - times.count))
        }
        var open = false
        for (i, position) in positions.enumerated() {
            // A bad position was marked as it was read (a good one has no mark).
            guard
                var point = try makePoint(
                    position.values, at: walker.place(ofMark: position.mark ?? start), kind: "gx:coord")
            else {
                continue
            }
            if i < times.count { point.time = times[i] }
            for (field, values) in arrays where i < values.count {
                if let v = values[i] { point.extensions.set(field, v) }
            }
            if !open {
                open = true
                try emit(.segmentStart)
            }
            try emit(.trackPoint(point))
        }
        if open { try emit(.segmentEnd(GPXExtensions())) }
    }

    /// `<ExtendedData>` of a track: each `<gx:SimpleArrayData>` whose name is a value Waymark
    /// knows.
    private func readArrays(into arrays: inout [(field: GPXExtensions.Field, values: [Double?])]) throws {
        try walker.forEachChild { name in
            if name.equals("SchemaData") {
                try readArrays(into: &arrays)
            } else if name.equals("SimpleArrayData") {
                let arrayName = tokenizer.attribute("name")?.trimmed.string ?? ""
                guard let field = Self.field(named: arrayName) else {
                    walker.warnOnce(
                        "<gx:SimpleArrayData name=\"\(arrayName)\"> is not a value Waymark knows; it is left out")
                    try walker.skipElement()
                    return
                }
                var values: [Double?] = []
                try walker.forEachChild { name in
                    guard name.equals("value") else {
                        try walker.skipElement()
                        return
                    }
                    values.append(try walker.readDouble("gx:value"))
                }
                arrays.append((field, values))
            } else {
                try walker.skipElement()
            }
        }
    }

    /// The value a `<gx:SimpleArrayData>` array holds, by its name in any case, with or without
    /// spaces, dashes or underscores.
    static func field(named name: String) -> GPXExtensions.Field? {
        let key = String(name.lowercased().filter { $0.isLetter })
        switch key {
        case "heartrate", "hr", "heartratebpm", "bpm": return .heartRate
        case "cadence", "cad", "runcadence": return .cadence
        case "power", "watts": return .power
        case "temperature", "temp", "atemp", "airtemperature": return .airTemperature
        case "speed": return .speed
        case "course", "bearing", "heading": return .course
        default: return nil
        }
    }

    /// What is wrong with a tuple of longitude, latitude and altitude as a position, if anything.
    static func problem(_ values: [Double]) -> String? {
        XMLTraceWalker.problem(latitude: values.count > 1 ? values[1] : nil, longitude: values.first)
    }

    /// A point from a tuple of longitude, latitude and altitude; nil (lenient) when the position
    /// is bad, reported at `place` (asked for only then).
    private func makePoint(
        _ values: [Double], at place: @autoclosure () -> (line: Int, column: Int), kind: String
    ) throws -> GPXPoint? {
        if let problem = Self.problem(values) {
            let message = "<\(kind)>'s coordinates: \(problem) (KML gives longitude first, then latitude)"
            let place = place()
            guard walker.lenient else { throw walker.error(.invalidCoordinate, at: place, message) }
            droppedPoints += 1
            walker.warn(at: place, message + "; the point is dropped")
            return nil
        }
        var point = GPXPoint(coordinate: Coordinate(latitude: values[1], longitude: values[0]))
        if values.count > 2, values[2].isFinite { point.elevation = values[2] }
        return point
    }

    /// The numbers of a `<gx:coord>` (`longitude latitude altitude`, separated by white space,
    /// or by commas as some writers do); nil for a piece that is not a number.
    static func numbers(_ s: ByteSpan) -> [Double?] {
        var out: [Double?] = []
        var i = 0
        while i < s.count {
            while i < s.count, ByteSpan.isSpace(s[i]) || s[i] == UInt8(ascii: ",") { i += 1 }
            let start = i
            while i < s.count, !ByteSpan.isSpace(s[i]), s[i] != UInt8(ascii: ",") { i += 1 }
            guard i > start else { break }
            let piece = ByteSpan(start: s.start + start, count: i - start)
            let v = ValueParsing.decimal(piece) ?? Double(piece.string)
            out.append(v.flatMap { $0.isFinite ? $0 : nil })
        }
        return out
    }

    /// Reads a `<coordinates>` element (the tokenizer is at its start tag), handing each tuple
    /// to `body` with a mark of the element's start (``XMLTraceWalker/place(ofMark:)``), as its
    /// text arrives: a line of a million points is never held whole.
    private func readCoordinates(_ body: ([Double], _ start: Int) throws -> Void) throws {
        if tokenizer.isEmptyElement {
            _ = try next()
            return
        }
        try walker.marking { start in try readCoordinates(from: start, body) }
    }

    private func readCoordinates(from start: Int, _ body: ([Double], Int) throws -> Void) throws {
        var scanner = CoordinateTupleScanner()
        var failure: Error?
        while true {
            switch try next() {
            case .text:
                scanner.feed(tokenizer.text) { tuple in
                    if failure == nil {
                        do { try body(tuple, start) } catch { failure = error }
                    }
                }
                if let failure { throw failure }
            case .startElement:
                try walker.skipElement()
            case .endElement, .endOfDocument:
                if let bad = scanner.bad {
                    try walker.badValue(
                        at: walker.place(ofMark: start), "<coordinates> holds '\(bad)', which is not a number")
                }
                scanner.finish { tuple in
                    if failure == nil {
                        do { try body(tuple, start) } catch { failure = error }
                    }
                }
                if let failure { throw failure }
                return
            }
        }
    }

    private func next() throws -> XMLTokenizer.Token { try walker.next() }
}

/// Splits KML coordinate text into tuples as it arrives in pieces: numbers joined by commas are
/// one tuple (`lon,lat[,alt]`), white space between tuples separates them, and a stray space
/// after a comma (`lon, lat`) does not.
struct CoordinateTupleScanner {
    private var tuple: [Double] = []
    private var number: [UInt8] = []
    private var afterComma = false
    /// The first piece of text that was not a number, if any.
    private(set) var bad: String?

    mutating func feed(_ span: ByteSpan, _ emit: ([Double]) -> Void) {
        for i in 0..<span.count {
            let b = span.start[i]
            if b == UInt8(ascii: ",") {
                endNumber(emit)
                afterComma = true
            } else if ByteSpan.isSpace(b) {
                endNumber(emit)
            } else {
                number.append(b)
            }
        }
    }

    mutating func finish(_ emit: ([Double]) -> Void) {
        endNumber(emit)
        if !tuple.isEmpty { emit(tuple) }
        tuple.removeAll()
    }

    private mutating func endNumber(_ emit: ([Double]) -> Void) {
        guard !number.isEmpty else { return }
        let text = String(decoding: number, as: UTF8.self)
        number.removeAll(keepingCapacity: true)
        guard let v = Double(text), v.isFinite else {
            if bad == nil { bad = String(text.prefix(40)) }
            return
        }
        // A number after white space with no comma between starts the next tuple.
        if !tuple.isEmpty && !afterComma {
            emit(tuple)
            tuple.removeAll(keepingCapacity: true)
        }
        tuple.append(v)
        afterComma = false
    }
}
