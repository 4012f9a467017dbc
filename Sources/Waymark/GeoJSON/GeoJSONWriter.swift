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

/// Writes RFC 7946 GeoJSON from reader events, streaming, in bounded memory.
///
/// The output is one FeatureCollection:
/// - a waypoint becomes a Point;
/// - a route becomes a LineString;
/// - a track becomes a LineString (one segment) or a MultiLineString (one line per segment).
///   Empty segments are left out; a segment of one point becomes a two-position line on that
///   point, since RFC 7946 needs two positions per line.
/// - Lines that cross the antimeridian are split there (RFC 7946 §3.1.9), at the latitude
///   interpolated between the two points; the two positions added on the meridian carry `null`
///   per-point values.
/// - Positions are `[longitude, latitude]` with at most 7 decimals, plus the elevation in metres
///   when the point has one.
/// - Per-point values go in `properties.coordinateProperties`, index-aligned with the coordinates
///   (an array per line for a MultiLineString), `null` where a point lacks the value. The keys
///   follow togeojson: `times`, `heart`, `cads`, `atemps`, `powers`, `speeds`, `courses`;
///   Waymark adds `hdops`, `vdops` and `sats`.
/// - Every line feature and the collection carry a `bbox`. There is no `crs` and no NaN.
///
/// A line's coordinates and each per-point array are held in spill buffers (memory up to 256 KiB,
/// then an unlinked temporary file) until the line's feature is complete.
public final class GeoJSONWriter {
    private let sink: FileSink
    private let out: ByteStore
    // The writer belongs to one thread; its fields skip Swift's dynamic exclusivity checks.
    @exclusivity(unchecked) private var featureCount = 0
    @exclusivity(unchecked) private var collectionBounds: Bounds?
    @exclusivity(unchecked) private var finished = false

    // The feature being built.
    private let coordinates = SpillBuffer(threshold: 1 << 18)
    private let coordinateBytes: ByteStore
    /// The per-point arrays, `ColumnID.count` of them, in `ColumnID` order.
    private let columns: UnsafeMutablePointer<Column>
    @exclusivity(unchecked) private var lineLengths: [Int] = []
    @exclusivity(unchecked) private var pointsInLine = 0
    @exclusivity(unchecked) private var lineOpen = false
    /// The line's first point, written again if it stays the only one.
    @exclusivity(unchecked) private var lineFirst: GPXPoint?
    /// The previous point of the line, to split the line where it crosses the antimeridian.
    @exclusivity(unchecked) private var previousCoordinate: Coordinate?
    @exclusivity(unchecked) private var previousElevation: Double?
    @exclusivity(unchecked) private var featureBounds: Bounds?
    /// The longitudes of the feature's points by hemisphere, and whether its line crossed the
    /// antimeridian: the bbox is then written west > east when that is the smaller box.
    @exclusivity(unchecked) private var featureLongitudes = LongitudeExtent()
    @exclusivity(unchecked) private var featureCrossed = false
    @exclusivity(unchecked) private var collectionLongitudes = LongitudeExtent()
    @exclusivity(unchecked) private var collectionCrossed = false
    @exclusivity(unchecked) private var inPath = false
    @exclusivity(unchecked) private var firstTime: Date?
    @exclusivity(unchecked) private var dayCache = ValueFormatting.DayCache()
    /// Points since the spill buffers were last checked (every 256 points).
    @exclusivity(unchecked) private var pointsSinceSpillCheck = 0

    /// One array of `coordinateProperties`, built in its own spill buffer: `line` and `items`
    /// say how far it has got (it catches up with nulls when values are missing).
    private struct Column {
        let key: StaticString
        let spool: SpillBuffer
        /// `spool.memory`, for the per-point path to borrow without a reference count.
        let bytes: Unmanaged<ByteStore>
        var line = 0
        var items = 0
        var used = false
    }

    private enum ColumnID: Int, CaseIterable {
        case times, heart, cads, atemps, powers, speeds, courses, hdops, vdops, sats
        case appStates, reasons, horizontalAccuracies

        var key: StaticString {
            switch self {
            case .times: "times"
            case .heart: "heart"
            case .cads: "cads"
            case .atemps: "atemps"
            case .powers: "powers"
            case .speeds: "speeds"
            case .courses: "courses"
            case .hdops: "hdops"
            case .vdops: "vdops"
            case .sats: "sats"
            case .appStates: "appStates"
            case .reasons: "reasons"
            case .horizontalAccuracies: "horizontalAccuracies"
            }
        }
    }

    /// Whether lines carry `properties.coordinateProperties` (default true). Without them the
    /// arrays are still gathered (the per-point path stays as it is) and dropped at the end of
    /// each feature.
    public var writesCoordinateProperties = true
    /// Whether every line feature is a MultiLineString, one of a single segment too (default
    /// false: a LineString then), so that a file holds one geometry type (``GeoJSONOptions/only``).
    public var writesMultiLineStrings = false
    /// How positions and boxes are written: decimals, and whether elevations are.
    public var positions = GeoJSONPositionFormat()
    /// Whether the output is a GeoJSON text sequence (RFC 8142): each feature a text of its own,
    /// after a record separator (U+001E) and ending with a line feed, and no collection around
    /// them (so no collection bbox). Tools read it a feature at a time: GDAL's GeoJSONSeq driver,
    /// `jq --seq`, tippecanoe.
    public var isSequence = false
    /// Properties the next feature gets after its own (``GeoJSONOptionsWriter``'s summary and
    /// style), then forgotten.
    var extraProperties: [(key: String, value: GeoJSONPropertyValue)] = []

    /// Gives the next feature these properties after its own, then forgets them: text, or a
    /// whole number, per key; a nil value is left out. For a writer of many features of one
    /// kind, such as `sessions export` of a fleet's sessions (a feature per session).
    public func addNextFeatureProperties(_ properties: [(key: String, text: String?, number: Int64?)]) {
        for p in properties {
            if let text = p.text {
                extraProperties.append((p.key, .string(text)))
            } else if let number = p.number {
                extraProperties.append((p.key, .number(Double(number), decimals: 0)))
            }
        }
    }

    /// Values a simulation adds to each delivered location.
    @exclusivity(unchecked) private var pendingDelivery: StoredLocation?
    /// Whether `pendingDelivery` is set: tested per point instead of copying the optional.
    @exclusivity(unchecked) private var delivering = false
    /// The segment of the last location of ``addDelivered(_:)``.
    private var deliveredSegment: Int?

    public init(sink: FileSink) {
        self.sink = sink
        out = sink.buffer
        coordinateBytes = coordinates.memory
        let ids = ColumnID.allCases
        columns = .allocate(capacity: ids.count)
        for id in ids {
            let spool = SpillBuffer(threshold: 1 << 18)
            (columns + id.rawValue).initialize(
                to: Column(key: id.key, spool: spool, bytes: .passUnretained(spool.memory)))
        }
    }

    deinit {
        columns.deinitialize(count: ColumnID.allCases.count)
        columns.deallocate()
    }

    /// Column `id`, in place.
    @inline(__always)
    private func column(_ id: ColumnID) -> UnsafeMutablePointer<Column> { columns + id.rawValue }

    /// Every column, in place.
    private var allColumns: UnsafeMutableBufferPointer<Column> {
        UnsafeMutableBufferPointer(start: columns, count: ColumnID.allCases.count)
    }

    /// Writes a whole document.
    public static func write(_ document: GPXDocument, to sink: FileSink) throws {
        let writer = GeoJSONWriter(sink: sink)
        try document.forEachEvent { try writer.write($0) }
        try writer.finish()
    }

    /// Writes the locations a simulated app received as one feature: a LineString, or a
    /// MultiLineString with a line per segment. Besides `times`, `speeds` and `courses`,
    /// `coordinateProperties` holds each location's `appStates`, delivery `reasons` and
    /// `horizontalAccuracies` (metres).
    public func writeDelivered(_ locations: some Sequence<StoredLocation>, name: String) throws {
        beginDelivered()
        for stored in locations { try addDelivered(stored) }
        try endDelivered(name: name)
    }

    /// Begins the feature of ``writeDelivered(_:name:)`` for locations that come one at a time
    /// (``addDelivered(_:)``, then ``endDelivered(name:)``), as a run delivers them: nothing
    /// but the writer's bounded spill buffers holds them.
    public func beginDelivered() {
        beginPath()
        deliveredSegment = nil
    }

    /// Adds one location to the feature begun by ``beginDelivered()``.
    public func addDelivered(_ stored: StoredLocation) throws {
        if stored.segment != deliveredSegment {
            endLine()
            deliveredSegment = stored.segment
        }
        let p = Self.point(of: stored.location)
        pendingDelivery = stored
        delivering = true
        defer {
            pendingDelivery = nil
            delivering = false
        }
        try addPoint(p)
    }

    /// A delivered location as a track point: its position, valid altitude, time, speed and course.
    static func point(of l: Location) -> GPXPoint {
        var p = GPXPoint(
            latitude: l.coordinate.latitude, longitude: l.coordinate.longitude,
            elevation: l.hasValidAltitude ? l.altitude : nil, time: l.timestamp)
        if l.speed >= 0 { p.speed = l.speed }
        if l.course >= 0 { p.course = l.course }
        return p
    }

    /// Ends the feature begun by ``beginDelivered()``, named `name`.
    public func endDelivered(name: String) throws {
        try endPath(GPXPathInfo(name: name), type: "delivered")
    }

    /// Writes one event.
    public func write(_ event: consuming GPXEvent) throws {
        switch consume event {
        case .waypoint(let p):
            try writeWaypoint(p)
        case .routeStart, .trackStart:
            beginPath()
        case .segmentStart:
            endLine()
        case .routePoint(let p), .trackPoint(let p):
            try addPoint(p)
        case .segmentEnd:
            endLine()
        case .routeEnd(let info):
            try endPath(info, type: "rte")
        case .trackEnd(let info):
            try endPath(info, type: "trk")
        case .header, .metadata, .documentExtensions, .warning:
            break
        }
    }

    /// Writes every event `reader` reads, parsing on a second thread while this one writes
    /// (``GPXReader/readAhead(batchSize:batches:_:)``), and hands each warning to `warning` as
    /// it comes. The same output as writing each event of ``GPXReader/read(_:)``, in one call
    /// that passes the events straight from the reader's batches to the writer.
    public func write(readingAhead reader: any TraceEventReader, warning: (GPXWarning) -> Void = { _ in }) throws {
        try reader.readEventsAhead(
            points: { point, _ in try addPoint(point) },
            others: { event in
                if event.isWarning, case .warning(let w) = event { warning(w) }
                try write(event)
            })
    }

    /// Closes the collection and flushes.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        if isSequence {
            if featureCount > 0 { out.append(UInt8(ascii: "\n")) }
            try sink.flush()
            return
        }
        if featureCount == 0 { out.append("{\"type\":\"FeatureCollection\",\"features\":[") }
        out.append("\n]")
        if let b = collectionBounds {
            out.append(",\"bbox\":")
            Self.appendBBox(
                b, collectionLongitudes.interval(crossed: collectionCrossed), decimals: positions.decimals, to: out)
        }
        out.append("}\n")
        try sink.flush()
    }

    // MARK: - Features

    private func beginFeature() {
        if isSequence {
            if featureCount > 0 { out.append(UInt8(ascii: "\n")) }
            out.append(0x1E)
        } else if featureCount == 0 {
            out.append("{\"type\":\"FeatureCollection\",\"features\":[\n")
        } else {
            out.append(",\n")
        }
        featureCount += 1
    }

    private func writeWaypoint(_ p: GPXPoint) throws {
        beginFeature()
        out.append("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":")
        appendPosition(
            longitude: p.coordinate.longitude, latitude: p.coordinate.latitude, elevation: p.elevation, to: out)
        out.append("},\"properties\":{\"_gpxType\":\"wpt\"")
        appendExtraProperties()
        appendProperty("name", p.name)
        appendProperty("cmt", p.comment)
        appendProperty("desc", p.description)
        appendProperty("sym", p.symbol)
        appendProperty("type", p.type)
        if let t = p.time {
            out.append(",\"time\":\"")
            ValueFormatting.appendISO8601(t, to: out)
            out.append("\"")
        }
        appendLinks(p.links)
        // Every other field of the waypoint, under its GPX element's name (as togeojson names the
        // ones it keeps): nothing the file said is lost.
        if p.hasDetails {
            let d = p.details
            appendProperty("src", d.source)
            appendNumberProperty("magvar", d.magneticVariation, decimals: 6)
            appendNumberProperty("geoidheight", d.geoidHeight, decimals: 3)
            appendProperty("fix", d.fix?.rawValue)
            appendNumberProperty("sat", d.satellites.map(Double.init), decimals: 0)
            appendNumberProperty("hdop", d.hdop, decimals: 2)
            appendNumberProperty("vdop", d.vdop, decimals: 2)
            appendNumberProperty("pdop", d.pdop, decimals: 2)
            appendNumberProperty("ageofdgpsdata", d.ageOfDGPSData, decimals: 3)
            appendNumberProperty("dgpsid", d.dgpsStation.map(Double.init), decimals: 0)
            appendNumberProperty("speed", d.speed ?? p.extensions.speed, decimals: 3)
            appendNumberProperty("course", d.course ?? p.extensions.course, decimals: 2)
        } else {
            appendNumberProperty("speed", p.extensions.speed, decimals: 3)
            appendNumberProperty("course", p.extensions.course, decimals: 2)
        }
        let e = p.extensions
        appendNumberProperty("heart", e.heartRate, decimals: 0)
        appendNumberProperty("cad", e.cadence, decimals: 0)
        appendNumberProperty("atemp", e.airTemperature, decimals: 2)
        appendNumberProperty("wtemp", e.waterTemperature, decimals: 2)
        appendNumberProperty("depth", e.depth, decimals: 2)
        appendNumberProperty("power", e.power, decimals: 1)
        out.append("}}")
        collectionBounds.extend(p.coordinate)
        collectionLongitudes.add(p.coordinate.longitude)
        try sink.flushIfNeeded()
    }

    private func beginPath() {
        inPath = true
        lineLengths.removeAll(keepingCapacity: true)
        pointsInLine = 0
        lineOpen = false
        lineFirst = nil
        previousCoordinate = nil
        featureBounds = nil
        featureLongitudes = LongitudeExtent()
        featureCrossed = false
        firstTime = nil
        for i in allColumns.indices {
            allColumns[i].line = 0
            allColumns[i].items = 0
            allColumns[i].used = false
        }
    }

    private func startLine() {
        if !lineLengths.isEmpty {
            coordinateBytes.append("],[")
        }
        lineOpen = true
        pointsInLine = 0
    }

    /// Ends the open line, if any; a line of one point gets that point again.
    private func endLine() {
        previousCoordinate = nil
        guard lineOpen else { return }
        if pointsInLine == 1, let p = lineFirst {
            writePosition(p)
        }
        lineFirst = nil
        lineLengths.append(pointsInLine)
        lineOpen = false
    }

    @inline(__always)
    private func addPoint(_ p: GPXPoint) throws {
        try withUnsafePointer(to: p) { try addPoint($0) }
    }

    /// Adds the point at `p`, read where it lies (a point of a read-ahead batch, which stays put
    /// until the batch is recycled, after this returns): borrowed as a value, each point was
    /// copied whole first, a seventh of the writing on a log of RMC alone.
    @inline(__always)
    private func addPoint(_ p: UnsafePointer<GPXPoint>) throws {
        if !inPath { beginPath() }
        let coordinate = p.pointee.coordinate
        if lineOpen, let q = previousCoordinate {
            let delta = coordinate.longitude - q.longitude
            if abs(delta) > 180 { splitAtAntimeridian(from: q, elevation: previousElevation, to: p.pointee) }
        }
        if !lineOpen { startLine() }
        if pointsInLine == 0 { lineFirst = p.pointee }
        writePosition(p)
        previousCoordinate = coordinate
        previousElevation = p.pointee.elevation
        if firstTime == nil { firstTime = p.pointee.time }
        pointsSinceSpillCheck += 1
        if pointsSinceSpillCheck >= 256 {
            pointsSinceSpillCheck = 0
            try coordinates.spillIfNeeded()
            for c in allColumns where c.used { try c.spool.spillIfNeeded() }
        }
    }

    @inline(__always)
    private func writePosition(_ p: GPXPoint) {
        withUnsafePointer(to: p) { writePosition($0) }
    }

    @inline(__always)
    private func writePosition(_ p: UnsafePointer<GPXPoint>) {
        let o = coordinateBytes
        if pointsInLine > 0 { o.append(UInt8(ascii: ",")) }
        let coordinate = p.pointee.coordinate
        appendPosition(
            longitude: coordinate.longitude, latitude: coordinate.latitude, elevation: p.pointee.elevation, to: o)
        featureBounds.extend(coordinate)
        featureLongitudes.add(coordinate.longitude)
        let line = lineLengths.count
        if let t = p.pointee.time {
            put(.times, line: line) { c in
                c.append(UInt8(ascii: "\""))
                ValueFormatting.appendISO8601(t, to: c, cache: &dayCache)
                c.append(UInt8(ascii: "\""))
            }
        }
        if p.pointee.extensions.hasKnownValues || p.pointee.hasDetails {
            writeValues(p, line: line)
        }
        if delivering, let d = pendingDelivery {
            put(.appStates, line: line) { JSONEscaping.appendString(d.appState.rawValue, to: $0) }
            put(.reasons, line: line) { JSONEscaping.appendString(d.reason.rawValue, to: $0) }
            let accuracy = d.location.horizontalAccuracy
            if accuracy.isFinite {
                put(.horizontalAccuracies, line: line) { ValueFormatting.appendAccuracy(accuracy, to: $0) }
            }
        }
        pointsInLine += 1
    }

    @inline(__always)
    private func writeValues(_ p: UnsafePointer<GPXPoint>, line: Int) {
        putNumber(.heart, p.pointee.extensions.heartRate, decimals: 0, line: line)
        putNumber(.cads, p.pointee.extensions.cadence, decimals: 0, line: line)
        putNumber(.atemps, p.pointee.extensions.airTemperature, decimals: 2, line: line)
        putNumber(.powers, p.pointee.extensions.power, decimals: 1, line: line)
        putNumber(.speeds, p.pointee.speed ?? p.pointee.extensions.speed, decimals: 3, line: line)
        putNumber(.courses, p.pointee.course ?? p.pointee.extensions.course, decimals: 2, line: line)
        putNumber(.hdops, p.pointee.hdop, decimals: 2, line: line)
        putNumber(.vdops, p.pointee.vdop, decimals: 2, line: line)
        if let s = p.pointee.satellites {
            put(.sats, line: line) { ValueFormatting.appendInteger(Int64(s), to: $0) }
        }
    }

    /// Ends the line on the meridian and starts the next one on its other side. A point that lies
    /// on the meridian itself is that end (or start): no vertex is repeated, and two points on it
    /// (180 then −180) only split the line.
    private func splitAtAntimeridian(from q: Coordinate, elevation qElevation: Double?, to p: GPXPoint) {
        featureCrossed = true
        collectionCrossed = true
        let lon0 = q.longitude
        var lon1 = p.coordinate.longitude
        let eastward = lon1 - lon0 < -180  // e.g. 179 → -179
        lon1 += eastward ? 360 : -360
        let meridian = eastward ? 180.0 : -180.0
        let qOnMeridian = abs(lon0) == 180
        let pOnMeridian = abs(p.coordinate.longitude) == 180
        var lat = q.latitude
        var elevation = qElevation
        if qOnMeridian {
            // q ends the line where it is.
        } else if pOnMeridian {
            lat = p.coordinate.latitude
            elevation = p.elevation
        } else {
            let t = (meridian - lon0) / (lon1 - lon0)
            lat = q.latitude + t * (p.coordinate.latitude - q.latitude)
            if let e0 = qElevation, let e1 = p.elevation { elevation = e0 + t * (e1 - e0) } else { elevation = nil }
        }
        if !qOnMeridian { appendBoundaryPosition(longitude: meridian, latitude: lat, elevation: elevation) }
        lineLengths.append(pointsInLine)
        lineOpen = false
        startLine()
        if !pOnMeridian { appendBoundaryPosition(longitude: -meridian, latitude: lat, elevation: elevation) }
    }

    private func appendBoundaryPosition(longitude: Double, latitude: Double, elevation: Double?) {
        let o = coordinateBytes
        if pointsInLine > 0 { o.append(UInt8(ascii: ",")) }
        appendPosition(longitude: longitude, latitude: latitude, elevation: elevation, to: o)
        featureBounds.extend(Coordinate(latitude: latitude, longitude: longitude))
        pointsInLine += 1
    }

    /// Brings column `id` up to the current position with nulls and returns its buffer, ready
    /// for one value.
    @inline(__always)
    private func put(_ id: ColumnID, line: Int, _ body: (ByteStore) -> Void) {
        let c = column(id)
        catchUp(c, line: line, items: pointsInLine)
        c.pointee.used = true
        let first = c.pointee.items == 0
        c.pointee.items += 1
        // The store is borrowed, not retained: the writer owns it through `spools`.
        c.pointee.bytes._withUnsafeGuaranteedRef { o in
            if !first { o.append(UInt8(ascii: ",")) }
            body(o)
        }
    }

    @inline(__always)
    private func putNumber(_ id: ColumnID, _ value: Double?, decimals: Int, line: Int) {
        guard let value, value.isFinite else { return }
        put(id, line: line) { ValueFormatting.appendFixed(value, decimals: decimals, to: $0) }
    }

    @inline(__always)
    private func catchUp(_ c: UnsafeMutablePointer<Column>, line: Int, items: Int) {
        guard c.pointee.line < line || c.pointee.items < items else { return }
        let o = c.pointee.spool.memory
        while c.pointee.line < line {
            while c.pointee.items < lineLengths[c.pointee.line] {
                o.append(c.pointee.items > 0 ? ",null" : "null")
                c.pointee.items += 1
            }
            o.append("],[")
            c.pointee.line += 1
            c.pointee.items = 0
        }
        while c.pointee.items < items {
            o.append(c.pointee.items > 0 ? ",null" : "null")
            c.pointee.items += 1
        }
    }

    private func endPath(_ info: GPXPathInfo, type: StaticString) throws {
        endLine()
        inPath = false
        beginFeature()
        let multi = lineLengths.count > 1 || (writesMultiLineStrings && !lineLengths.isEmpty)
        out.append("{\"type\":\"Feature\",\"geometry\":")
        if lineLengths.isEmpty {
            out.append("null")
        } else {
            out.append(
                multi
                    ? "{\"type\":\"MultiLineString\",\"coordinates\":[[" : "{\"type\":\"LineString\",\"coordinates\":[")
            try coordinates.drain(into: sink)
            out.append(multi ? "]]}" : "]}")
        }
        out.append(",\"properties\":{\"_gpxType\":\"")
        out.append(type)
        out.append("\"")
        appendProperty("name", info.name)
        appendProperty("cmt", info.comment)
        appendProperty("desc", info.description)
        appendProperty("src", info.source)
        appendProperty("type", info.type)
        if let n = info.number {
            out.append(",\"number\":")
            ValueFormatting.appendInteger(Int64(n), to: out)
        }
        appendLinks(info.links)
        if let t = firstTime {
            out.append(",\"time\":\"")
            ValueFormatting.appendISO8601(t, to: out)
            out.append("\"")
        }
        appendExtraProperties()
        let used = ColumnID.allCases.filter { column($0).pointee.used }
        if writesCoordinateProperties && !used.isEmpty && !lineLengths.isEmpty {
            out.append(",\"coordinateProperties\":{")
            for (i, id) in used.enumerated() {
                let c = column(id)
                catchUp(c, line: lineLengths.count - 1, items: lineLengths[lineLengths.count - 1])
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                out.append(c.pointee.key)
                out.append(multi ? "\":[[" : "\":[")
                try c.pointee.spool.drain(into: sink)
                out.append(multi ? "]]" : "]")
            }
            out.append("}")
        } else {
            for id in used { column(id).pointee.spool.discard() }
        }
        out.append("}")
        if let b = featureBounds {
            out.append(",\"bbox\":")
            Self.appendBBox(
                b, featureLongitudes.interval(crossed: featureCrossed), decimals: positions.decimals, to: out)
            collectionBounds.extend(Coordinate(latitude: b.minLatitude, longitude: b.minLongitude))
            collectionBounds.extend(Coordinate(latitude: b.maxLatitude, longitude: b.maxLongitude))
            collectionLongitudes.merge(featureLongitudes)
        }
        out.append("}")
        try sink.flushIfNeeded()
    }

    // MARK: - Values

    @inline(__always)
    private func appendPosition(longitude: Double, latitude: Double, elevation: Double?, to o: ByteStore) {
        positions.append(longitude: longitude, latitude: latitude, elevation: elevation, to: o)
    }

    /// `[west, south, east, north]` with `decimals`: the longitudes from `longitudes` when it
    /// has them (west > east across the antimeridian, RFC 7946 §5.2), else the bounds'. Rounded
    /// as the positions are, so that the box still holds them.
    static func appendBBox(
        _ b: Bounds, _ longitudes: (west: Double, east: Double)?, decimals: Int = 7, to o: ByteStore
    ) {
        var west = longitudes?.west ?? b.minLongitude
        var east = longitudes?.east ?? b.maxLongitude
        if west > east {
            // Across the antimeridian. A box that leaves out less than the last decimal written
            // would read west ≤ east once rounded, a sliver instead of nearly the whole world:
            // it is the whole world.
            let scale = ValueParsing.exactPower(decimals)
            if (west * scale).rounded(.toNearestOrAwayFromZero) <= (east * scale).rounded(.toNearestOrAwayFromZero) {
                (west, east) = (-180, 180)
            }
        }
        o.append(UInt8(ascii: "["))
        ValueFormatting.appendFixed(west, decimals: decimals, to: o)
        o.append(UInt8(ascii: ","))
        ValueFormatting.appendFixed(b.minLatitude, decimals: decimals, to: o)
        o.append(UInt8(ascii: ","))
        ValueFormatting.appendFixed(east, decimals: decimals, to: o)
        o.append(UInt8(ascii: ","))
        ValueFormatting.appendFixed(b.maxLatitude, decimals: decimals, to: o)
        o.append(UInt8(ascii: "]"))
    }

    private func appendExtraProperties() {
        guard !extraProperties.isEmpty else { return }
        for (key, value) in extraProperties {
            out.append(UInt8(ascii: ","))
            JSONEscaping.appendString(key, to: out)
            out.append(UInt8(ascii: ":"))
            value.append(to: out)
        }
        extraProperties.removeAll(keepingCapacity: true)
    }

    private func appendProperty(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        out.append(",\"")
        out.append(key)
        out.append("\":")
        JSONEscaping.appendString(value, to: out)
    }

    private func appendNumberProperty(_ key: StaticString, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        out.append(",\"")
        out.append(key)
        out.append("\":")
        ValueFormatting.appendFixed(value, decimals: decimals, to: out)
    }

    private func appendLinks(_ links: [GPXLink]) {
        guard !links.isEmpty else { return }
        out.append(",\"links\":[")
        for (i, link) in links.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"href\":")
            JSONEscaping.appendString(link.href, to: out)
            if let text = link.text {
                out.append(",\"text\":")
                JSONEscaping.appendString(text, to: out)
            }
            if let type = link.type {
                out.append(",\"type\":")
                JSONEscaping.appendString(type, to: out)
            }
            out.append("}")
        }
        out.append("]")
    }
}

/// JSON string escaping (RFC 8259 §7).
enum JSONEscaping {
    /// `value` as a JSON string literal. `forScript` also writes `<`, `>` and `&` as `\u003c`,
    /// `\u003e` and `\u0026`, so that the literal can sit inside an HTML `<script>` element
    /// without a `</script>` in it ending the element.
    static func appendString(_ value: String, forScript: Bool = false, to out: ByteStore) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for i in 0..<bytes.count {
                let b = bytes[i]
                guard
                    b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
                        || (forScript && (b == UInt8(ascii: "<") || b == UInt8(ascii: ">") || b == UInt8(ascii: "&")))
                else { continue }
                out.append(bytes.baseAddress! + runStart, count: i - runStart)
                switch b {
                case UInt8(ascii: "\""): out.append("\\\"")
                case UInt8(ascii: "\\"): out.append("\\\\")
                case 0x0A: out.append("\\n")
                case 0x0D: out.append("\\r")
                case 0x09: out.append("\\t")
                default:
                    out.append("\\u00")
                    out.append(Self.hex[Int(b >> 4)])
                    out.append(Self.hex[Int(b & 0xF)])
                }
                runStart = i + 1
            }
            if bytes.count > runStart { out.append(bytes.baseAddress! + runStart, count: bytes.count - runStart) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}

/// The longitudes of a feature's (or a collection's) points, by hemisphere: enough for the box
/// across the antimeridian.
struct LongitudeExtent {
    /// The least and greatest longitude at or east of Greenwich (0…180).
    var eastMin = Double.infinity
    var eastMax = -Double.infinity
    /// The least and greatest longitude west of it (−180…0).
    var westMin = Double.infinity
    var westMax = -Double.infinity

    @inline(__always)
    mutating func add(_ longitude: Double) {
        if longitude >= 0 {
            if longitude < eastMin { eastMin = longitude }
            if longitude > eastMax { eastMax = longitude }
        } else {
            if longitude < westMin { westMin = longitude }
            if longitude > westMax { westMax = longitude }
        }
    }

    mutating func merge(_ other: LongitudeExtent) {
        eastMin = min(eastMin, other.eastMin)
        eastMax = max(eastMax, other.eastMax)
        westMin = min(westMin, other.westMin)
        westMax = max(westMax, other.westMax)
    }

    /// West and east of the bbox: across the antimeridian (west > east) when a line crossed it,
    /// as GDAL writes it; nil without points.
    func interval(crossed: Bool) -> (west: Double, east: Double)? {
        let hasEast = eastMin <= eastMax
        let hasWest = westMin <= westMax
        guard hasEast || hasWest else { return nil }
        let west = hasWest ? westMin : eastMin
        let east = hasEast ? eastMax : westMax
        // A line that crossed has positions on the meridian itself, ±180: the plain box would be
        // the whole world; the box across always holds them and every point.
        if crossed && hasEast && hasWest { return (eastMin, westMax) }
        return (west, east)
    }
}
