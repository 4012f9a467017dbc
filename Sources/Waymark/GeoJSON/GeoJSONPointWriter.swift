#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes RFC 7946 GeoJSON with one Point feature per fix, streaming: what QGIS's temporal
/// controller and Kepler.gl animate.
///
/// Each point's values are plain properties, the same keys in every feature that has them (GDAL
/// makes one field of each; an ISO 8601 `time` becomes a DateTime field):
/// - `_gpxType`: `trkpt`, `rtept`, `wpt`, or `delivered` for a location an app received;
/// - where it sits, with GDAL's GPX driver's names (0-based): `track_fid`, `track_seg_id` and
///   `track_seg_point_id` for track points, `route_fid` and `route_point_id` for route points,
///   `wpt_fid` for waypoints (a path's name comes at its end in GPX, after its points have gone
///   out: it is not repeated on them);
/// - `time` (ISO 8601, UTC, milliseconds), `ele` (metres, as the file gives it);
/// - `speed` (m/s) and `course` (degrees), given or from the extensions; `hdop`, `vdop`, `pdop`,
///   `sat`, `fix`; `heart`, `cad`, `atemp`, `power` from the known extensions;
/// - `horizontalAccuracy` and `verticalAccuracy` (metres): a point's own accuracy, where its
///   source gives one (a gpsd capture's `eph` and `epv`, an NMEA log's GST, Apple Health's
///   `hAcc` and `vAcc`), and `speedAccuracy` (m/s) and `courseAccuracy` (degrees) where it gives
///   them (a gpsd capture's `eps` and `epd`);
/// - a waypoint's `name`, `cmt`, `desc`, `sym` and `type`;
/// - for a delivered location (``beginDelivered()``): `index` (the fix's number in its source),
///   `segment`, `appState`, `reason`, `horizontalAccuracy`, and where valid `verticalAccuracy`,
///   `speedAccuracy` and `courseAccuracy` (metres, m/s, degrees), `ele` as its altitude above
///   mean sea level.
///
/// Positions are `[longitude, latitude]` with 7 decimals, plus the elevation when there is one.
/// The collection has a `bbox`; points need no antimeridian split.
public final class GeoJSONPointWriter {
    private let sink: FileSink
    private let out: ByteStore
    private var featureCount = 0
    private var bounds: Bounds?
    private var longitudes = LongitudeExtent()
    private var finished = false
    private var cache = ValueFormatting.DayCache()

    // Where the reader is: counts of tracks, routes, waypoints, and positions within them.
    private var trackCount = 0
    private var routeCount = 0
    private var waypointCount = 0
    private var segment = -1
    private var pointInSegment = 0
    private var pointInRoute = 0

    /// How positions and the box are written: decimals, and whether elevations are.
    public var positions = GeoJSONPositionFormat()
    /// Whether the output is a GeoJSON text sequence (RFC 8142), as ``GeoJSONWriter/isSequence``.
    public var isSequence = false

    public init(sink: FileSink) {
        self.sink = sink
        out = sink.buffer
    }

    /// Writes one event.
    public func write(_ event: GPXEvent) throws {
        switch event {
        case .waypoint(let p):
            try writeFeature(p, kind: "wpt") { o in
                self.appendInt("wpt_fid", self.waypointCount, to: o)
                self.appendString("name", p.name, to: o)
                self.appendString("cmt", p.comment, to: o)
                self.appendString("desc", p.description, to: o)
                self.appendString("sym", p.symbol, to: o)
                self.appendString("type", p.type, to: o)
            }
            waypointCount += 1
        case .trackStart:
            segment = -1
            pointInSegment = 0
        case .segmentStart:
            segment += 1
            pointInSegment = 0
        case .segmentEnd:
            break
        case .trackPoint(let p):
            if segment < 0 { segment = 0 }
            let (track, seg, index) = (trackCount, segment, pointInSegment)
            try writePathPoint(p, kind: "trkpt") { o in
                self.appendInt("track_fid", track, to: o)
                self.appendInt("track_seg_id", seg, to: o)
                self.appendInt("track_seg_point_id", index, to: o)
            }
            pointInSegment += 1
        case .trackEnd:
            trackCount += 1
        case .routeStart:
            pointInRoute = 0
        case .routePoint(let p):
            let (route, index) = (routeCount, pointInRoute)
            try writePathPoint(p, kind: "rtept") { o in
                self.appendInt("route_fid", route, to: o)
                self.appendInt("route_point_id", index, to: o)
            }
            pointInRoute += 1
        case .routeEnd:
            routeCount += 1
        case .header, .metadata, .documentExtensions, .warning:
            break
        }
    }

    // MARK: - Delivered locations

    /// Begins the locations a simulated app received, one Point each (``addDelivered(_:)``, then
    /// ``endDelivered(name:)``).
    public func beginDelivered() {}

    /// Adds one delivered location.
    public func addDelivered(_ stored: StoredLocation) throws {
        let l = stored.location
        var p = GPXPoint(
            latitude: l.coordinate.latitude, longitude: l.coordinate.longitude,
            elevation: l.hasValidAltitude ? l.altitude : nil, time: l.timestamp)
        if l.speed >= 0 { p.speed = l.speed }
        if l.course >= 0 { p.course = l.course }
        p.hdop = l.provenance.hdop
        p.vdop = l.provenance.vdop
        p.pdop = l.provenance.pdop
        p.satellites = l.provenance.satellitesUsed
        try writePathPoint(p, kind: "delivered") { o in
            self.appendInt("index", stored.index, to: o)
            self.appendInt("segment", stored.segment, to: o)
            self.appendString("appState", stored.appState.rawValue, to: o)
            self.appendString("reason", stored.reason.rawValue, to: o)
            self.appendAccuracy("horizontalAccuracy", l.horizontalAccuracy, to: o)
            if l.hasValidAltitude { self.appendAccuracy("verticalAccuracy", l.verticalAccuracy, to: o) }
            if l.speed >= 0 && l.speedAccuracy >= 0 { self.appendAccuracy("speedAccuracy", l.speedAccuracy, to: o) }
            if l.course >= 0 && l.courseAccuracy >= 0 {
                self.appendAccuracy("courseAccuracy", l.courseAccuracy, to: o)
            }
        }
    }

    /// Ends the delivered locations. Their `name` is not written: each point is written as it
    /// comes, and its `_gpxType` says what it is.
    public func endDelivered(name: String) throws {}

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
        if let b = bounds {
            out.append(",\"bbox\":")
            GeoJSONWriter.appendBBox(b, longitudes.interval(crossed: false), decimals: positions.decimals, to: out)
        }
        out.append("}\n")
        try sink.flush()
    }

    // MARK: - Features

    /// A point of a track or route. The path's name is not a property: GPX readers give it at
    /// the path's end, and a point is written as it comes.
    private func writePathPoint(_ p: GPXPoint, kind: StaticString, _ place: (ByteStore) -> Void) throws {
        try writeFeature(p, kind: kind, place)
    }

    private func writeFeature(_ p: GPXPoint, kind: StaticString, _ place: (ByteStore) -> Void) throws {
        beginFeature()
        appendFeatureStart(p, kind: kind, to: out)
        place(out)
        appendValues(p, to: out)
        out.append("}}")
        try sink.flushIfNeeded()
    }

    private func beginFeature() {
        if isSequence {
            if featureCount > 0 { out.append(UInt8(ascii: "\n")) }
            out.append(0x1E)
        } else {
            out.append(featureCount == 0 ? "{\"type\":\"FeatureCollection\",\"features\":[\n" : ",\n")
        }
        featureCount += 1
    }

    private func appendFeatureStart(_ p: GPXPoint, kind: StaticString, to o: ByteStore) {
        o.append("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":")
        positions.append(
            longitude: p.coordinate.longitude, latitude: p.coordinate.latitude, elevation: p.elevation, to: o)
        o.append("},\"properties\":{\"_gpxType\":\"")
        o.append(kind)
        o.append(UInt8(ascii: "\""))
        bounds.extend(p.coordinate)
        longitudes.add(p.coordinate.longitude)
    }

    private func appendValues(_ p: GPXPoint, to o: ByteStore) {
        if let t = p.time {
            o.append(",\"time\":\"")
            ValueFormatting.appendISO8601(t, to: o, cache: &cache)
            o.append(UInt8(ascii: "\""))
        }
        appendNumber("ele", p.elevation, decimals: 3, to: o)
        let e = p.extensions
        appendNumber("speed", p.speed ?? e.speed, decimals: 3, to: o)
        appendNumber("course", p.course ?? e.course, decimals: 2, to: o)
        appendNumber("hdop", p.hdop, decimals: 2, to: o)
        appendNumber("vdop", p.vdop, decimals: 2, to: o)
        appendNumber("pdop", p.pdop, decimals: 2, to: o)
        // The point's own accuracy (a gpsd capture's eph and epv, an NMEA log's GST, Apple
        // Health's hAcc and vAcc), with the precision it came with: a delivered location's keys.
        if let h = p.horizontalAccuracy, h >= 0 { appendAccuracy("horizontalAccuracy", h, to: o) }
        if let v = p.verticalAccuracy, v > 0 { appendAccuracy("verticalAccuracy", v, to: o) }
        if let s = p.speedAccuracy, s >= 0 { appendAccuracy("speedAccuracy", s, to: o) }
        if let c = p.courseAccuracy, c >= 0 { appendAccuracy("courseAccuracy", c, to: o) }
        if let s = p.satellites { appendInt("sat", s, to: o) }
        appendString("fix", p.fix?.rawValue, to: o)
        appendNumber("heart", e.heartRate, decimals: 0, to: o)
        appendNumber("cad", e.cadence, decimals: 0, to: o)
        appendNumber("atemp", e.airTemperature, decimals: 2, to: o)
        appendNumber("power", e.power, decimals: 1, to: o)
    }

    private func appendKey(_ key: StaticString, to o: ByteStore) {
        o.append(",\"")
        o.append(key)
        o.append("\":")
    }

    private func appendString(_ key: StaticString, _ value: String?, to o: ByteStore) {
        guard let value else { return }
        appendKey(key, to: o)
        JSONEscaping.appendString(value, to: o)
    }

    private func appendInt(_ key: StaticString, _ value: Int, to o: ByteStore) {
        appendKey(key, to: o)
        ValueFormatting.appendInteger(Int64(value), to: o)
    }

    /// An accuracy, with the precision it came with (``ValueFormatting/appendAccuracy(_:to:)``).
    private func appendAccuracy(_ key: StaticString, _ value: Double, to o: ByteStore) {
        guard value.isFinite else { return }
        appendKey(key, to: o)
        ValueFormatting.appendAccuracy(value, to: o)
    }

    private func appendNumber(_ key: StaticString, _ value: Double?, decimals: Int, to o: ByteStore) {
        guard let value, value.isFinite else { return }
        appendKey(key, to: o)
        ValueFormatting.appendFixed(value, decimals: decimals, to: o)
    }
}
