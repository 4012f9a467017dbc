#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streaming reader of GeoJSON (RFC 7946) and GeoJSON text sequences (RFC 8142), giving the
/// same events as ``GPXReader``: Waymark's own output, GPSBabel's, GDAL's, togeojson's and web
/// maps'.
///
/// - A `LineString` or `MultiLineString` feature is a track with a segment per line, or a route
///   when its `_gpxType` property is `rte`. Its per-point values come from
///   `properties.coordinateProperties` (togeojson's convention, which Waymark writes): `times`
///   (or togeojson's older `coordTimes`), `heart`, `cads`, `atemps`, `powers`, `speeds`,
///   `courses`, `hdops`, `vdops`, `sats`, index-aligned with the positions, `null` where a point
///   has none.
/// - A `Point` feature is a waypoint, unless it says where it sits in a track or a route, as
///   Waymark's `--geojson-points` and GDAL's GPX layers do (`track_fid`, `track_seg_id`,
///   `route_fid`, or `_gpxType` `trkpt`/`rtept`): then consecutive such points are that track's
///   segments, or that route.
/// - A `MultiPoint`'s points are waypoints; a `GeometryCollection` gives each of its parts.
/// - Properties keep their GPX names: `name`, `cmt`, `desc`, `src`, `type`, `sym`, `time`,
///   `links`, and a point's `ele`, `fix`, `sat`, `hdop`, `speed`, `heart`, `cad`…
///
/// What Waymark's writer adds to stay valid RFC 7946 is taken back out, so that GPX → GeoJSON →
/// GPX keeps every point: a line split at the antimeridian (§3.1.9) is joined again without the
/// two positions on the meridian, and a one-point segment written as a two-position line is
/// one point again.
///
/// Memory: members of a JSON object come in any order, and a line's times may come before or
/// after its positions, so one feature is held until its end (32 bytes a position, 8 a value);
/// the file's other features are not.
public final class GeoJSONReader: TraceEventReader {
    private let tokens: JSONTokenizer
    private let lenient: Bool
    private var handle: (consuming GPXEvent) throws -> Void = { _ in }
    /// Bad points left out (lenient reading only).
    public private(set) var droppedPoints = 0
    private var warned = Set<String>()
    /// Track or route points spread over Point features: where the current one is.
    private var open: OpenPath?

    private struct OpenPath {
        var isRoute: Bool
        var fid: Double
        var segment: Double?
        var segmentOpen: Bool
    }

    public var fileName: String { tokens.fileName }

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        self.init(source: try FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        tokens = JSONTokenizer(source: source, fileName: name, allowsSequence: true)
        lenient = options.lenient
    }

    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try withoutActuallyEscaping(handle) { handle in
            self.handle = handle
            defer { self.handle = { _ in } }
            try handle(.header(GPXHeader(version: "1.1", creator: nil)))
            var any = false
            while true {
                let token = try tokens.next()
                if token == .end { break }
                any = true
                try readTopLevel(token)
            }
            if !any { throw tokens.error("the file holds no JSON value", code: .truncated) }
            try closePath()
        }
    }

    // MARK: - Structure

    private func warnOnce(_ message: String) throws {
        guard warned.insert(message).inserted else { return }
        try handle(.warning(tokens.warning(message + " (further ones are not reported)")))
    }

    /// A top-level value: a FeatureCollection, a Feature, a bare geometry, or (in a sequence)
    /// any of them one after another.
    private func readTopLevel(_ first: JSONToken) throws {
        guard first == .beginObject else {
            throw tokens.error("expected a GeoJSON object, found \(first.description)")
        }
        let object = try readObject(top: true)
        try emit(object)
    }

    /// What one GeoJSON object holds, once read: its type, geometry, properties and, for a
    /// collection, nothing (its features were emitted as they came).
    private struct Object {
        var type: String?
        var geometry: Geometry?
        var properties = Properties()
        var hadFeatures = false
        /// A bare geometry's own parts, when the object is itself a geometry.
        var own: Geometry?
    }

    /// Reads an object's members (the `{` is consumed). Features of a `features` array are read
    /// and emitted one by one, so that a collection is never held.
    private func readObject(top: Bool) throws -> Object {
        var object = Object()
        var coordinates: Coordinates?
        var geometries: [Geometry]?
        while true {
            let token = try tokens.next()
            if token == .endObject { break }
            guard case .key(let key) = token else {
                throw tokens.error("expected a member name or '}', found \(token.description)")
            }
            switch key {
            case "type":
                guard case .string(let s) = try tokens.next() else {
                    throw tokens.error("\"type\" must be a string")
                }
                object.type = s
            case "features":
                object.hadFeatures = true
                try expect(.beginArray, "\"features\" must be an array")
                while true {
                    let t = try tokens.next()
                    if t == .endArray { break }
                    guard t == .beginObject else {
                        throw tokens.error("a feature must be an object, found \(t.description)")
                    }
                    let feature = try readObject(top: false)
                    try emit(feature)
                }
            case "geometry":
                let t = try tokens.next()
                if t == .null { continue }
                guard t == .beginObject else { throw tokens.error("\"geometry\" must be an object or null") }
                let g = try readObject(top: false)
                object.geometry = g.own
            case "properties":
                let t = try tokens.next()
                if t == .null { continue }
                guard t == .beginObject else { throw tokens.error("\"properties\" must be an object or null") }
                object.properties = try readProperties()
            case "coordinates":
                coordinates = try readCoordinates()
            case "geometries":
                try expect(.beginArray, "\"geometries\" must be an array")
                var list: [Geometry] = []
                while true {
                    let t = try tokens.next()
                    if t == .endArray { break }
                    guard t == .beginObject else { throw tokens.error("a geometry must be an object") }
                    if let g = try readObject(top: false).own { list.append(g) }
                }
                geometries = list
            default:
                try tokens.skipValue()
            }
        }
        if let type = object.type {
            switch type {
            case "Point", "MultiPoint", "LineString", "MultiLineString":
                object.own = try Geometry(type: type, coordinates: coordinates, reader: self)
            case "GeometryCollection":
                object.own = .collection(geometries ?? [])
            case "Polygon", "MultiPolygon":
                try warnOnce("a \(type) holds no trace; it is skipped")
                object.own = .collection([])
            case "Feature", "FeatureCollection":
                break
            default:
                try warnOnce("\"type\": \"\(type)\" is not a GeoJSON type; the object is skipped")
            }
        } else if object.geometry != nil || object.hadFeatures {
            try warnOnce("an object has no \"type\" member; it is read as a feature (or a collection)")
        } else if top {
            throw tokens.error(
                "the JSON object has no \"type\", \"features\" or \"geometry\": it is not GeoJSON", code: .notGPX)
        }
        return object
    }

    private func expect(_ token: JSONToken, _ message: String) throws {
        let t = try tokens.next()
        guard t == token else { throw tokens.error(message + ", found \(t.description)") }
    }

    /// A GeoJSON position array, at any depth: a position, a list of them, or a list of lists.
    indirect enum Coordinates {
        case position([Double])
        case list([Coordinates])
    }

    private func readCoordinates() throws -> Coordinates {
        let t = try tokens.next()
        guard t == .beginArray else { throw tokens.error("\"coordinates\" must be an array, found \(t.description)") }
        return try readCoordinateArray()
    }

    private func readCoordinateArray() throws -> Coordinates {
        var numbers: [Double] = []
        var list: [Coordinates] = []
        while true {
            let t = try tokens.next()
            switch t {
            case .endArray:
                return list.isEmpty && !numbers.isEmpty ? .position(numbers) : .list(list)
            case .number(let v):
                guard list.isEmpty else { throw tokens.error("a number among positions in \"coordinates\"") }
                numbers.append(v)
            case .beginArray:
                guard numbers.isEmpty else { throw tokens.error("an array inside a position in \"coordinates\"") }
                list.append(try readCoordinateArray())
            case .null:
                throw tokens.error("null in \"coordinates\": a position is two or three numbers")
            default:
                throw tokens.error("\(t.description) in \"coordinates\": a position is two or three numbers")
            }
        }
    }

    /// A geometry, with its positions flattened: each line as longitude, latitude and elevation
    /// (NaN when it has none), three numbers a position.
    enum Geometry {
        case points([Double])
        case lines([[Double]])
        indirect case collection([Geometry])

        init(type: String, coordinates: Coordinates?, reader: GeoJSONReader) throws {
            func flat(_ c: Coordinates) throws -> [Double] {
                switch c {
                case .position(let p): return try Self.position(p, reader)
                case .list(let list):
                    var out: [Double] = []
                    out.reserveCapacity(list.count * 3)
                    for item in list {
                        guard case .position(let p) = item else {
                            throw reader.tokens.error("\(type) positions nest too deep")
                        }
                        out += try Self.position(p, reader)
                    }
                    return out
                }
            }
            guard let coordinates else { throw reader.tokens.error("a \(type) has no \"coordinates\"") }
            switch type {
            case "Point":
                guard case .position = coordinates else {
                    throw reader.tokens.error("a Point's coordinates are one position")
                }
                self = .points(try flat(coordinates))
            case "MultiPoint":
                self = .points(try flat(coordinates))
            case "LineString":
                self = .lines([try flat(coordinates)])
            default:  // MultiLineString
                guard case .list(let lines) = coordinates else {
                    throw reader.tokens.error("a MultiLineString's coordinates are a list of lines")
                }
                self = .lines(try lines.map(flat))
            }
        }

        static func position(_ p: [Double], _ reader: GeoJSONReader) throws -> [Double] {
            guard p.count >= 2 else { throw reader.tokens.error("a position needs a longitude and a latitude") }
            return [p[0], p[1], p.count > 2 ? p[2] : .nan]
        }
    }

    // MARK: - Properties

    /// What a feature's properties say, in the forms the events need.
    struct Properties {
        var strings: [String: String] = [:]
        var numbers: [String: Double] = [:]
        var links: [GPXLink] = []
        /// Per-point arrays by key: one list per line, NaN for null; times as Unix seconds.
        var columns: [String: [[Double]]] = [:]
    }

    private static let columnKeys: Set<String> = [
        "times", "coordTimes", "heart", "heartRates", "cads", "atemps", "powers", "speeds", "courses", "hdops", "vdops",
        "sats",
    ]

    private func readProperties() throws -> Properties {
        var p = Properties()
        while true {
            let token = try tokens.next()
            if token == .endObject { break }
            guard case .key(let key) = token else {
                throw tokens.error("expected a property name, found \(token.description)")
            }
            if key == "coordinateProperties" {
                let t = try tokens.next()
                guard t == .beginObject else {
                    if t == .beginArray { try tokens.skipContainer() }
                    continue
                }
                while true {
                    let t = try tokens.next()
                    if t == .endObject { break }
                    guard case .key(let column) = t else {
                        throw tokens.error("expected a name, found \(t.description)")
                    }
                    if Self.columnKeys.contains(column) {
                        p.columns[column] = try readColumn(isTime: column == "times" || column == "coordTimes")
                    } else {
                        try tokens.skipValue()
                    }
                }
                continue
            }
            if key == "coordTimes" {
                p.columns["coordTimes"] = try readColumn(isTime: true)
                continue
            }
            if key == "links" {
                p.links = try readLinks()
                continue
            }
            switch try tokens.next() {
            case .string(let s): p.strings[key] = s
            case .number(let v): p.numbers[key] = v
            case .bool, .null: continue
            case .beginObject: try tokens.skipContainer()
            case .beginArray: try tokens.skipContainer()
            default: throw tokens.error("expected a property value")
            }
        }
        return p
    }

    /// A per-point array: one line's values, or (for a MultiLineString) a list of lines'.
    private func readColumn(isTime: Bool) throws -> [[Double]] {
        let t = try tokens.next()
        guard t == .beginArray else {
            if t == .beginObject { try tokens.skipContainer() }
            return []
        }
        var lines: [[Double]] = []
        var flat: [Double] = []
        var nested = false
        while true {
            let t = try tokens.next()
            switch t {
            case .endArray:
                return nested ? lines : [flat]
            case .beginArray:
                nested = true
                var line: [Double] = []
                while true {
                    let u = try tokens.next()
                    if u == .endArray { break }
                    line.append(try value(u, isTime: isTime))
                }
                lines.append(line)
            default:
                flat.append(try value(t, isTime: isTime))
            }
        }
    }

    private func value(_ t: JSONToken, isTime: Bool) throws -> Double {
        switch t {
        case .number(let v) where isTime:
            // Unix seconds, or milliseconds when too large for seconds (Strava's streams).
            let seconds = abs(v) >= 1e11 ? v / 1000 : v
            return ValueFormatting.readableSeconds.contains(seconds) ? seconds : .nan
        case .number(let v): return v
        case .string(let s) where isTime: return try time(s)?.timeIntervalSince1970 ?? .nan
        case .string(let s): return Double(s) ?? .nan
        case .beginObject:
            try tokens.skipContainer()
            return .nan
        case .beginArray:
            try tokens.skipContainer()
            return .nan
        default: return .nan
        }
    }

    private func readLinks() throws -> [GPXLink] {
        let t = try tokens.next()
        guard t == .beginArray else {
            if t == .beginObject { try tokens.skipContainer() }
            return []
        }
        var links: [GPXLink] = []
        while true {
            let t = try tokens.next()
            if t == .endArray { break }
            guard t == .beginObject else {
                if t == .beginArray { try tokens.skipContainer() }
                continue
            }
            var fields: [String: String] = [:]
            while true {
                let u = try tokens.next()
                if u == .endObject { break }
                guard case .key(let key) = u else { throw tokens.error("expected a name in a link") }
                switch try tokens.next() {
                case .string(let s): fields[key] = s
                case .beginObject, .beginArray: try tokens.skipContainer()
                default: break
                }
            }
            if let href = fields["href"] {
                links.append(GPXLink(href: href, text: fields["text"], type: fields["type"]))
            }
        }
        return links
    }

    /// An ISO 8601 time; a bad one is an error (strict) or left out with a warning (lenient).
    private func time(_ s: String) throws -> Date? {
        var bytes = Array(s.utf8)
        let result = bytes.withUnsafeMutableBufferPointer {
            b -> Result<ValueParsing.DateTime, ValueParsing.DateTimeFailure>? in
            guard let base = b.baseAddress else { return nil }
            return ValueParsing.dateTime(ByteSpan(start: UnsafePointer(base), count: b.count))
        }
        switch result {
        case .success(let t)?: return t.date
        case .failure(let failure)?:
            let message = "time '\(s.prefix(40))' is not an ISO 8601 date and time: \(failure.message)"
            guard lenient else { throw tokens.error(message) }
            try warnOnce(message + "; the time is left out")
            return nil
        case nil: return nil
        }
    }

    // MARK: - Events

    private func emit(_ object: Object) throws {
        if object.hadFeatures { return }
        let geometry: Geometry? = object.geometry ?? object.own
        guard let geometry else { return }
        try emit(geometry, object.properties)
    }

    private func emit(_ geometry: Geometry, _ p: Properties) throws {
        switch geometry {
        case .collection(let parts):
            for part in parts { try emit(part, p) }
        case .points(let flat):
            let onePoint = flat.count == 3
            for i in stride(from: 0, to: flat.count, by: 3) {
                guard var point = try makePoint(flat, i) else { continue }
                if onePoint { apply(p, to: &point) }
                if onePoint, let place = pathPlace(p) {
                    try addPathPoint(point, place)
                } else {
                    try closePath()
                    if !onePoint { point.name = p.strings["name"] }
                    try handle(.waypoint(point))
                }
            }
        case .lines(let lines):
            try closePath()
            try emitLines(joined(lines, p), p)
        }
    }

    /// Where a Point feature sits in a path, when it says so.
    private func pathPlace(_ p: Properties) -> (isRoute: Bool, fid: Double, segment: Double?)? {
        let kind = p.strings["_gpxType"]
        if let fid = p.numbers["track_fid"] ?? (kind == "trkpt" ? -1 : nil) {
            return (false, fid, p.numbers["track_seg_id"])
        }
        if let fid = p.numbers["route_fid"] ?? (kind == "rtept" ? -1 : nil) {
            return (true, fid, nil)
        }
        return nil
    }

    private func addPathPoint(_ point: GPXPoint, _ place: (isRoute: Bool, fid: Double, segment: Double?)) throws {
        if let o = open, o.isRoute != place.isRoute || o.fid != place.fid { try closePath() }
        if open == nil {
            open = OpenPath(isRoute: place.isRoute, fid: place.fid, segment: place.segment, segmentOpen: false)
            try handle(place.isRoute ? .routeStart(GPXPathInfo()) : .trackStart(GPXPathInfo()))
        }
        if place.isRoute {
            try handle(.routePoint(point))
            return
        }
        if open!.segmentOpen && open!.segment != place.segment {
            try handle(.segmentEnd(GPXExtensions()))
            open!.segmentOpen = false
        }
        open!.segment = place.segment
        if !open!.segmentOpen {
            open!.segmentOpen = true
            try handle(.segmentStart)
        }
        try handle(.trackPoint(point))
    }

    private func closePath() throws {
        guard let o = open else { return }
        open = nil
        if o.isRoute {
            try handle(.routeEnd(GPXPathInfo()))
        } else {
            if o.segmentOpen { try handle(.segmentEnd(GPXExtensions())) }
            try handle(.trackEnd(GPXPathInfo()))
        }
    }

    /// A point from the position at `i` (three numbers) of `flat`; nil (lenient) when it is not
    /// a position on the Earth.
    private func makePoint(_ flat: [Double], _ i: Int) throws -> GPXPoint? {
        let longitude = flat[i]
        let latitude = flat[i + 1]
        if let problem = XMLTraceWalker.problem(latitude: latitude, longitude: longitude) {
            let message = "a position's \(problem) (GeoJSON gives longitude first, then latitude)"
            guard lenient else { throw tokens.error(message, code: .invalidCoordinate) }
            droppedPoints += 1
            try handle(.warning(tokens.warning(message + "; the point is dropped")))
            return nil
        }
        var point = GPXPoint(coordinate: Coordinate(latitude: latitude, longitude: longitude))
        if !flat[i + 2].isNaN { point.elevation = flat[i + 2] }
        return point
    }

    /// A Point feature's properties, as the point's fields.
    private func apply(_ p: Properties, to point: inout GPXPoint) {
        let s = p.strings
        let n = p.numbers
        point.name = s["name"]
        point.comment = s["cmt"]
        point.description = s["desc"] ?? s["description"]
        point.symbol = s["sym"]
        point.type = s["type"]
        point.source = s["src"]
        if !p.links.isEmpty { point.links = p.links }
        if let t = s["time"] { point.time = (try? time(t)) ?? nil }
        if point.elevation == nil, let e = n["ele"] { point.elevation = e }
        if let f = s["fix"] { point.fix = GPXFix(rawValue: f) }
        if let v = n["sat"] { point.satellites = Int(exactly: v) }
        point.hdop = n["hdop"]
        point.vdop = n["vdop"]
        point.pdop = n["pdop"]
        point.magneticVariation = n["magvar"]
        point.geoidHeight = n["geoidheight"]
        point.ageOfDGPSData = n["ageofdgpsdata"]
        if let v = n["dgpsid"] { point.dgpsStation = Int(exactly: v) }
        point.speed = n["speed"]
        point.course = n["course"]
        if let v = n["horizontalAccuracy"] { point.horizontalAccuracy = v }
        if let v = n["verticalAccuracy"] { point.verticalAccuracy = v }
        if let v = n["speedAccuracy"] { point.speedAccuracy = v }
        if let v = n["courseAccuracy"] { point.courseAccuracy = v }
        point.extensions.heartRate = n["heart"]
        point.extensions.cadence = n["cad"]
        point.extensions.airTemperature = n["atemp"]
        point.extensions.waterTemperature = n["wtemp"]
        point.extensions.depth = n["depth"]
        point.extensions.power = n["power"]
    }

    /// The lines of a line feature with their per-point values, with Waymark's additions for
    /// RFC 7946 taken out: lines split at the antimeridian joined again without the positions
    /// on the meridian, and a one-point line written twice made one point again.
    private func joined(_ lines: [[Double]], _ p: Properties) -> [(positions: [Double], values: [String: [Double]])] {
        var out: [(positions: [Double], values: [String: [Double]])] = []
        for (index, line) in lines.enumerated() {
            let count = line.count / 3
            // Each column of this line, exactly as long as the line (NaN where it has no value).
            var values: [String: [Double]] = [:]
            for (key, columns) in p.columns {
                var column = columns.count == lines.count ? columns[index] : []
                column += [Double](repeating: .nan, count: max(0, count - column.count))
                values[key] = Array(column.prefix(count))
            }
            func time(_ v: [String: [Double]], _ i: Int) -> Double { (v["times"] ?? v["coordTimes"])?[i] ?? .nan }
            if let last = out.last, last.positions.count >= 6, count >= 2 {
                // The previous line ends on the antimeridian where this one begins, at the same
                // latitude, and neither position has a time: one line, cut there by the writer.
                let end = last.positions.count - 3
                if abs(last.positions[end]) == 180, line[0] == -last.positions[end],
                    abs(line[1] - last.positions[end + 1]) < 1e-9,
                    time(last.values, end / 3).isNaN, time(values, 0).isNaN
                {
                    var merged = last
                    merged.positions.removeLast(3)
                    merged.positions += line.dropFirst(3)
                    for key in Set(last.values.keys).union(values.keys) {
                        let before = last.values[key] ?? [Double](repeating: .nan, count: end / 3 + 1)
                        let after = values[key] ?? [Double](repeating: .nan, count: count)
                        merged.values[key] = Array(before.dropLast()) + after.dropFirst()
                    }
                    out[out.count - 1] = merged
                    continue
                }
            }
            var positions = line
            // A one-point segment, written as a line of two equal positions with equal values.
            if count == 2, positions[0] == positions[3], positions[1] == positions[4],
                positions[2] == positions[5] || (positions[2].isNaN && positions[5].isNaN),
                values.values.allSatisfy({ $0[0] == $0[1] || ($0[0].isNaN && $0[1].isNaN) })
            {
                positions.removeLast(3)
                for key in values.keys { values[key]!.removeLast() }
            }
            out.append((positions, values))
        }
        return out
    }

    private func emitLines(_ lines: [(positions: [Double], values: [String: [Double]])], _ p: Properties) throws {
        var info = GPXPathInfo(name: p.strings["name"])
        info.comment = p.strings["cmt"]
        info.description = p.strings["desc"] ?? p.strings["description"]
        info.source = p.strings["src"]
        info.type = p.strings["type"]
        info.links = p.links
        if let n = p.numbers["number"] { info.number = Int(exactly: n) }
        let isRoute = p.strings["_gpxType"] == "rte"
        try handle(isRoute ? .routeStart(info) : .trackStart(info))
        for (index, line) in lines.enumerated() where !line.positions.isEmpty {
            if isRoute && index > 0 {
                try warnOnce("a route is one line; the further lines of a multi-line route are joined to it")
            }
            if !isRoute { try handle(.segmentStart) }
            for i in stride(from: 0, to: line.positions.count, by: 3) {
                guard var point = try makePoint(line.positions, i) else { continue }
                let k = i / 3
                func at(_ key: String) -> Double? {
                    guard let a = line.values[key], k < a.count, !a[k].isNaN else { return nil }
                    return a[k]
                }
                if let t = at("times") ?? at("coordTimes") { point.time = Date(timeIntervalSince1970: t) }
                point.extensions.heartRate = at("heart") ?? at("heartRates")
                point.extensions.cadence = at("cads")
                point.extensions.airTemperature = at("atemps")
                point.extensions.power = at("powers")
                point.extensions.speed = at("speeds")
                point.extensions.course = at("courses")
                point.hdop = at("hdops")
                point.vdop = at("vdops")
                if let v = at("sats") { point.satellites = Int(exactly: v) }
                try handle(isRoute ? .routePoint(point) : .trackPoint(point))
            }
            if !isRoute { try handle(.segmentEnd(GPXExtensions())) }
        }
        try handle(isRoute ? .routeEnd(info) : .trackEnd(info))
    }
}

extension JSONTokenizer {
    /// An error at the most recent token, of the kind `code` names.
    func error(_ message: String, code: GPXError.Code) -> GPXError {
        GPXError(code: code, file: fileName, line: line, column: column, message: message)
    }

    /// A warning at the most recent token.
    func warning(_ message: String) -> GPXWarning {
        GPXWarning(file: fileName, line: line, column: column, message: message)
    }
}

extension JSONToken: CustomStringConvertible {
    /// The token as a message names it: `'{'`, `a string`, `the number 3`…
    var description: String {
        switch self {
        case .beginObject: "'{'"
        case .endObject: "'}'"
        case .beginArray: "'['"
        case .endArray: "']'"
        case .key(let k): "the member name \"\(k.prefix(40))\""
        case .string(let s): "the string \"\(s.prefix(40))\""
        case .number(let v): "the number \(v)"
        case .bool(let b): "\(b)"
        case .null: "null"
        case .end: "the end of the file"
        }
    }
}
