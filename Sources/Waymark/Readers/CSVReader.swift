#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streaming reader of comma-separated values with a header line (GPSLogger's CSV, GPSBabel's
/// `unicsv`, GPS Visualizer's, spreadsheets' exports), giving the same events as ``GPXReader``.
///
/// **Columns are found by their names** in the header, in any case and with spaces, dashes or
/// underscores (`Latitude`, `lat`, `position_lat`…); see ``CSVColumn`` for every name. A unit in
/// the name converts the column: `speed (km/h)`, `speed_mph`, `speed [kn]`, `altitude (ft)`.
/// Latitude and longitude columns are required; a header without them is an error that names
/// the columns it has.
///
/// **Rows are track points** of one track, in the file's order. A `segment` column starts a new
/// segment where its value changes, a `track` column a new track (named by the value); a `type`
/// column whose value begins with `W` makes the row a waypoint (GPS Visualizer's `type`).
///
/// **Times** are ISO 8601 (`2024-05-01T08:00:00Z`, or with a space for the `T`), a `date` and a
/// `time` column (`2024/05/01` and `08:00:00`, GPSBabel's `unicsv`), or Unix time in seconds,
/// or in milliseconds when the column says `ms` or the number is too large for seconds.
///
/// The delimiter is the comma, the semicolon, the tab or the bar, whichever the header holds
/// most of. Fields may be quoted (RFC 4180: `"a ""quoted"", field"`, line breaks inside quotes).
/// Lines that begin with `#` before the header are comments.
///
/// A bad value is an error at its line and column; lenient, it is left out with a warning, and
/// a row with a bad position is dropped.
public final class CSVReader: TraceEventReader {
    public let fileName: String
    private let lenient: Bool
    private let lines: CSVRecordSource
    /// Bad rows left out (lenient reading only).
    public private(set) var droppedPoints = 0

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        self.init(source: try FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        fileName = name
        lenient = options.lenient
        lines = CSVRecordSource(source: source, fileName: name)
    }

    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        guard let header = try lines.nextRecord(skippingComments: true) else {
            throw GPXError(
                code: .notGPX, file: fileName, line: 1, column: 1,
                message: "the file is empty: a CSV trace needs a header line")
        }
        let names = header.fields.map { lines.text(of: $0) }
        let layout = try CSVLayout(names: names, file: fileName, line: header.line)
        try handle(.header(GPXHeader(version: "1.1", creator: nil)))

        var track: GPXPathInfo?
        var segmentOpen = false
        var lastSegment: String?
        // Waypoint rows among a track's rows wait for its end: a waypoint is never inside a track.
        var waiting: [GPXPoint] = []
        func close() throws {
            if segmentOpen { try handle(.segmentEnd(GPXExtensions())) }
            segmentOpen = false
            if let track { try handle(.trackEnd(track)) }
            track = nil
            for point in waiting { try handle(.waypoint(point)) }
            waiting.removeAll()
        }
        while let record = try lines.nextRecord(skippingComments: false) {
            if record.fields.count == 1 && record.fields[0].count == 0 { continue }  // a blank line
            var row = CSVRow(reader: lines, record: record, file: fileName, lenient: lenient)
            let point = try row.point(layout)
            for w in row.warnings { try handle(.warning(w)) }
            guard let point else {
                droppedPoints += 1
                continue
            }
            if let column = layout.type, row.text(column).first.map({ $0 == "W" || $0 == "w" }) == true {
                if track == nil { try handle(.waypoint(point)) } else { waiting.append(point) }
                continue
            }
            let trackName = layout.track.map { row.text($0) }
            if track == nil || (trackName != nil && trackName != track?.name) {
                try close()
                track = GPXPathInfo(name: trackName)
                try handle(.trackStart(track!))
                lastSegment = nil
            }
            let segment = layout.segment.map { row.text($0) }
            if segmentOpen, let segment, segment != lastSegment {
                try handle(.segmentEnd(GPXExtensions()))
                segmentOpen = false
            }
            lastSegment = segment
            if !segmentOpen {
                segmentOpen = true
                try handle(.segmentStart)
            }
            try handle(.trackPoint(point))
        }
        try close()
    }
}

/// A value a CSV column can hold, and the header names that say so.
public enum CSVColumn: String, Sendable, CaseIterable {
    case latitude, longitude, elevation, time, date, unixTime, speed, course, hdop, vdop, pdop
    case satellites, fix, horizontalAccuracy, verticalAccuracy
    case heartRate, cadence, power, temperature, name, description, comment, symbol
    case segment, track, type

    /// The names, lower case and without spaces, dashes, underscores or a unit, that mean this
    /// column.
    public var names: [String] {
        switch self {
        case .latitude: ["lat", "latitude", "latitudedegrees", "positionlat", "latdeg", "latitudedeg"]
        case .longitude:
            ["lon", "lng", "long", "longitude", "longitudedegrees", "positionlong", "londeg", "longitudedeg"]
        case .elevation: ["ele", "elevation", "alt", "altitude", "altitudemeters", "height", "enhancedaltitude"]
        case .time: ["time", "datetime", "timeutc", "utc", "utctime", "isotime", "recordedat", "gpstime"]
        case .date: ["date", "utcdate"]
        case .unixTime: ["timestamp", "unixtime", "epoch", "timestampms", "unixtimems", "epochms"]
        case .speed: ["speed", "velocity", "sog", "enhancedspeed", "groundspeed"]
        case .course: ["course", "bearing", "heading", "cog", "direction"]
        case .hdop: ["hdop"]
        case .vdop: ["vdop"]
        case .pdop: ["pdop"]
        case .satellites: ["sat", "sats", "satellites", "numsats", "satellitesused", "nsat"]
        case .fix: ["fix", "fixtype"]
        case .horizontalAccuracy: ["accuracy", "hacc", "horizontalaccuracy", "haccuracy", "hacc", "eph"]
        case .verticalAccuracy: ["vacc", "verticalaccuracy", "vaccuracy", "epv"]
        case .heartRate: ["hr", "heartrate", "heartratebpm", "bpm", "pulse"]
        case .cadence: ["cad", "cadence", "runcadence"]
        case .power: ["power", "watts"]
        case .temperature: ["temp", "temperature", "atemp", "airtemperature"]
        case .name: ["name", "title"]
        case .description: ["desc", "description", "notes"]
        case .comment: ["cmt", "comment"]
        case .symbol: ["sym", "symbol"]
        case .segment: ["segment", "seg", "segmentid", "trkseg"]
        case .track: ["track", "trk", "trackname", "trackid"]
        case .type: ["type", "kind"]
        }
    }
}

/// Which field of a row holds which value, and the factor its unit asks for.
struct CSVLayout {
    var columns: [CSVColumn: (index: Int, factor: Double)] = [:]
    var unixMilliseconds = false

    var type: Int? { columns[.type]?.index }
    var track: Int? { columns[.track]?.index }
    var segment: Int? { columns[.segment]?.index }

    init(names: [String], file: String, line: Int) throws {
        var byName: [String: CSVColumn] = [:]
        for column in CSVColumn.allCases {
            for name in column.names { byName[name] = column }
        }
        for (i, raw) in names.enumerated() {
            let (key, unit) = Self.split(raw)
            guard var column = byName[key] else { continue }
            // Unix time in milliseconds: `timestamp_ms`, `epoch (ms)`, `time_ms`.
            if (column == .unixTime || column == .time) && (unit == "ms" || key.hasSuffix("ms")) {
                column = .unixTime
                unixMilliseconds = true
            }
            guard columns[column] == nil else { continue }  // the first column of a kind wins
            columns[column] = (i, Self.factor(column, unit: unit))
        }
        if columns[.latitude] == nil || columns[.longitude] == nil {
            let missing = columns[.latitude] == nil ? "latitude" : "longitude"
            let had = names.map { "'\($0)'" }.joined(separator: ", ")
            throw GPXError(
                code: .notGPX, file: file, line: line, column: 1,
                message:
                    "the header line names no \(missing) column (it has \(had.isEmpty ? "nothing" : had)); name one \(CSVColumn(rawValue: missing)!.names.prefix(2).map { "'\($0)'" }.joined(separator: " or ")), as a CSV trace needs a latitude and a longitude column"
            )
        }
    }

    /// A header name as a key (lower case, letters and digits only) and its unit, if it gives
    /// one in brackets (`speed (km/h)`) or as its last word (`speed_kmh`, `ele ft`).
    static func split(_ raw: String) -> (key: String, unit: String?) {
        var name = Array(raw.lowercased())
        var unit: String?
        if let open = name.firstIndex(where: { $0 == "(" || $0 == "[" }) {
            let inside: [Character] = name[(open + 1)...].filter { $0 != ")" && $0 != "]" && $0 != " " }
            unit = String(inside)
            name = Array(name[..<open])
        }
        var words: [String] = []
        var word = ""
        for c in name {
            if c == "_" || c == " " || c == "-" || c == "." || c == "\t" {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(c)
            }
        }
        if !word.isEmpty { words.append(word) }
        if unit == nil, words.count > 1, let last = words.last, Self.units.contains(last) {
            unit = last
            words.removeLast()
        }
        let key = String(words.joined().filter { $0.isLetter || $0.isNumber })
        return (key, unit)
    }

    private static let units: Set<String> = [
        "kmh", "km/h", "kph", "mph", "kn", "kt", "kts", "knots", "ms", "m/s", "mps", "m", "ft", "feet", "meters",
        "metres", "deg", "bpm", "rpm", "w", "c",
    ]

    static func factor(_ column: CSVColumn, unit: String?) -> Double {
        guard let unit else { return 1 }
        switch column {
        case .speed:
            switch unit {
            case "kmh", "km/h", "kph": return 1 / 3.6
            case "mph": return 0.44704
            case "kn", "kt", "kts", "knots": return 1852.0 / 3600
            default: return 1
            }
        case .elevation, .horizontalAccuracy, .verticalAccuracy:
            return unit == "ft" || unit == "feet" ? 0.3048 : 1
        default: return 1
        }
    }
}

/// One record's fields, read for a point.
private struct CSVRow {
    let reader: CSVRecordSource
    let record: CSVRecord
    let file: String
    let lenient: Bool
    /// What was wrong but let reading go on, for the reader to hand out.
    var warnings: [GPXWarning] = []

    func span(_ index: Int) -> ByteSpan? {
        guard index < record.fields.count else { return nil }
        let span = reader.span(of: record.fields[index]).trimmed
        return span.count == 0 ? nil : span
    }

    func text(_ index: Int) -> String { span(index)?.string ?? "" }

    func fail(_ index: Int, _ code: GPXError.Code, _ message: String) -> GPXError {
        let column = index < record.fields.count ? record.fields[index].column : 1
        return GPXError(code: code, file: file, line: record.line, column: column, message: message)
    }

    mutating func warn(_ index: Int, _ message: String) {
        let column = index < record.fields.count ? record.fields[index].column : 1
        warnings.append(GPXWarning(file: file, line: record.line, column: column, message: message))
    }

    /// A bad value: strict, an error; lenient, a warning (the value is left out).
    mutating func bad(_ index: Int, _ message: String) throws {
        guard lenient else { throw fail(index, .invalidValue, message) }
        warn(index, message + "; the value is left out")
    }

    mutating func number(_ layout: CSVLayout, _ column: CSVColumn) throws -> Double? {
        guard let (index, factor) = layout.columns[column], let s = span(index) else { return nil }
        guard let v = ValueParsing.decimal(s) ?? Double(s.string), v.isFinite else {
            try bad(index, "\(column.rawValue) '\(s.string.prefix(40))' is not a number")
            return nil
        }
        return v * factor
    }

    /// The row's point; nil when its position is missing or bad (lenient; strict, an error).
    mutating func point(_ layout: CSVLayout) throws -> GPXPoint? {
        let latIndex = layout.columns[.latitude]!.index
        let lonIndex = layout.columns[.longitude]!.index
        var problem: (Int, String)?
        var latitude: Double?
        var longitude: Double?
        if let s = span(latIndex) {
            latitude = ValueParsing.decimal(s) ?? Double(s.string)
            if latitude == nil || !latitude!.isFinite || abs(latitude!) > 90 {
                problem = (latIndex, "latitude '\(s.string.prefix(40))' is not a number in -90...90")
            }
        } else {
            problem = (latIndex, "the row has no latitude")
        }
        if problem == nil {
            if let s = span(lonIndex) {
                longitude = ValueParsing.decimal(s) ?? Double(s.string)
                if longitude == nil || !longitude!.isFinite || abs(longitude!) > 180 {
                    problem = (lonIndex, "longitude '\(s.string.prefix(40))' is not a number in -180...180")
                }
            } else {
                problem = (lonIndex, "the row has no longitude")
            }
        }
        if let (index, message) = problem {
            guard lenient else { throw fail(index, .invalidCoordinate, message) }
            warn(index, message + "; the row is dropped")
            return nil
        }
        var point = GPXPoint(coordinate: Coordinate(latitude: latitude!, longitude: longitude!))
        point.elevation = try number(layout, .elevation)
        point.time = try time(layout)
        point.speed = try number(layout, .speed)
        point.course = try number(layout, .course)
        point.hdop = try number(layout, .hdop)
        point.vdop = try number(layout, .vdop)
        point.pdop = try number(layout, .pdop)
        if let v = try number(layout, .satellites) { point.satellites = Int(exactly: v.rounded()) }
        if let v = try number(layout, .horizontalAccuracy) { point.horizontalAccuracy = v }
        if let v = try number(layout, .verticalAccuracy) { point.verticalAccuracy = v }
        if let v = try number(layout, .heartRate) { point.extensions.heartRate = v }
        if let v = try number(layout, .cadence) { point.extensions.cadence = v }
        if let v = try number(layout, .power) { point.extensions.power = v }
        if let v = try number(layout, .temperature) { point.extensions.airTemperature = v }
        if let index = layout.columns[.fix]?.index, let s = span(index) {
            let text = s.string.lowercased()
            if let fix = GPXFix(rawValue: text) {
                point.fix = fix
            } else if let n = Int(text) {
                // gpsd's and NMEA's numbers: 1 no fix, 2 two dimensions, 3 three.
                point.fix = n <= 1 ? GPXFix.none : n == 2 ? .twoD : .threeD
            }
        }
        if let index = layout.columns[.name]?.index, let s = span(index) { point.name = s.string }
        if let index = layout.columns[.description]?.index, let s = span(index) { point.description = s.string }
        if let index = layout.columns[.comment]?.index, let s = span(index) { point.comment = s.string }
        if let index = layout.columns[.symbol]?.index, let s = span(index) { point.symbol = s.string }
        return point
    }

    mutating func time(_ layout: CSVLayout) throws -> Date? {
        if let index = layout.columns[.time]?.index, let s = span(index) {
            // A time of day beside a date column: GPSBabel's unicsv.
            if let dateIndex = layout.columns[.date]?.index, let day = span(dateIndex), !Self.hasDate(s) {
                let joined = Self.iso(day.string) + "T" + s.string
                return try parse(joined, index: index, original: day.string + " " + s.string)
            }
            if Self.isNumber(s) { return try unix(s, index: index, milliseconds: layout.unixMilliseconds) }
            return try parse(Self.iso(s.string), index: index, original: s.string)
        }
        if let index = layout.columns[.unixTime]?.index, let s = span(index) {
            if !Self.isNumber(s) { return try parse(Self.iso(s.string), index: index, original: s.string) }
            return try unix(s, index: index, milliseconds: layout.unixMilliseconds)
        }
        return nil
    }

    private mutating func unix(_ s: ByteSpan, index: Int, milliseconds: Bool) throws -> Date? {
        guard let v = Double(s.string), v.isFinite else {
            try bad(index, "time '\(s.string.prefix(40))' is not a number of seconds")
            return nil
        }
        // Seconds reach 1e11 only in the year 5138: a larger number is milliseconds.
        let seconds = milliseconds || abs(v) >= 1e11 ? v / 1000 : v
        guard ValueFormatting.readableSeconds.contains(seconds) else {
            try bad(index, "time \(s.string.prefix(40)) is outside the years -9999...9999")
            return nil
        }
        return Date(timeIntervalSince1970: seconds)
    }

    private mutating func parse(_ text: String, index: Int, original: String) throws -> Date? {
        var bytes = Array(text.utf8)
        let result = bytes.withUnsafeMutableBufferPointer { b in
            ValueParsing.dateTime(ByteSpan(start: UnsafePointer(b.baseAddress!), count: b.count))
        }
        switch result {
        case .success(let t): return t.date
        case .failure(let failure):
            try bad(index, "time '\(original.prefix(40))' is not a date and time: \(failure.message)")
            return nil
        }
    }

    /// `2024/05/01 08:00:00` as `2024-05-01T08:00:00`: slashes for dashes, and a space for the `T`.
    static func iso(_ text: String) -> String {
        var bytes = Array(text.utf8)
        for i in bytes.indices {
            if bytes[i] == UInt8(ascii: "/") && i < 10 { bytes[i] = UInt8(ascii: "-") }
            if bytes[i] == UInt8(ascii: " ") && i == 10 { bytes[i] = UInt8(ascii: "T") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hasDate(_ s: ByteSpan) -> Bool {
        s.count >= 10 && (s[4] == UInt8(ascii: "-") || s[4] == UInt8(ascii: "/"))
    }

    static func isNumber(_ s: ByteSpan) -> Bool {
        var digits = 0
        for i in 0..<s.count {
            let b = s[i]
            if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
                digits += 1
            } else if b != UInt8(ascii: ".") && !(i == 0 && b == UInt8(ascii: "-")) {
                return false
            }
        }
        return digits > 0
    }
}

/// A field of a record: where its text sits in the record store, and the column of the file
/// where it starts.
struct CSVField {
    var offset: Int
    var count: Int
    var column: Int
}

struct CSVRecord {
    var fields: [CSVField]
    var line: Int
}

/// Splits a byte stream into CSV records (RFC 4180), a chunk at a time: quoted fields may hold
/// delimiters, quotes (doubled) and line breaks. The delimiter is chosen from the first record.
final class CSVRecordSource {
    private let source: ByteSource
    let fileName: String
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)
    private var position = 0
    private var filled = 0
    private var atEnd = false
    private var line = 1
    private var column = 1
    private var delimiter: UInt8?
    private let store = ByteStore(capacity: 1024)
    private var started = false

    init(source: ByteSource, fileName: String) {
        self.source = source
        self.fileName = fileName
    }

    /// The longest row read: a trace's rows are short, so a longer one is an error, not memory.
    static let maxRecordBytes = 1 << 20

    func span(of field: CSVField) -> ByteSpan { store.span(from: field.offset, count: field.count) }
    func text(of field: CSVField) -> String { span(of: field).string }

    private func nextByte() throws -> UInt8? {
        if position == filled {
            guard !atEnd else { return nil }
            filled = try buffer.withUnsafeMutableBufferPointer {
                try source.read(into: $0.baseAddress!, capacity: $0.count)
            }
            position = 0
            if filled == 0 {
                atEnd = true
                return nil
            }
        }
        let b = buffer[position]
        position += 1
        return b
    }

    private func peekByte() throws -> UInt8? {
        guard let b = try nextByte() else { return nil }
        position -= 1
        return b
    }

    /// The next record, or nil at the end. With `skippingComments`, lines that begin with `#`
    /// and blank lines are passed over (before the header only).
    func nextRecord(skippingComments: Bool) throws -> CSVRecord? {
        if !started {
            started = true
            // A UTF-8 byte-order mark.
            if try peekByte() == 0xEF {
                _ = try nextByte()
                if try nextByte() != 0xBB || nextByte() != 0xBF {
                    throw GPXError(
                        code: .invalidValue, file: fileName, line: 1, column: 1,
                        message: "the file begins with a broken byte-order mark")
                }
            }
        }
        while true {
            guard let first = try peekByte() else { return nil }
            if skippingComments && (first == UInt8(ascii: "#") || first == 10 || first == 13) {
                while let b = try nextByte(), b != 10 {}
                line += 1
                column = 1
                continue
            }
            break
        }
        store.count = 0
        var fields: [CSVField] = []
        let recordLine = line
        var fieldStart = 0
        var fieldColumn = column
        var quoted = false
        var inQuotes = false
        var sawAny = false
        let header = delimiter == nil
        var counts: [UInt8: Int] = [:]
        func endField() {
            fields.append(CSVField(offset: fieldStart, count: store.count - fieldStart, column: fieldColumn))
            fieldStart = store.count
            quoted = false
        }
        while let b = try nextByte() {
            sawAny = true
            if store.count > Self.maxRecordBytes {
                throw GPXError(
                    code: .limitExceeded, file: fileName, line: recordLine, column: 1,
                    message:
                        "a row longer than \(Self.maxRecordBytes >> 20) MiB\(inQuotes ? " (a quoted field that is never closed?)" : ""): this is no CSV trace Waymark reads"
                )
            }
            if inQuotes {
                if b == UInt8(ascii: "\"") {
                    if try peekByte() == UInt8(ascii: "\"") {
                        _ = try nextByte()
                        store.append(b)
                        column += 2
                        continue
                    }
                    inQuotes = false
                    column += 1
                    continue
                }
                if b == 10 {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                store.append(b)
                continue
            }
            if b == 10 || b == 13 {
                if b == 13, try peekByte() == 10 { _ = try nextByte() }
                line += 1
                column = 1
                break
            }
            if header {
                if b == UInt8(ascii: ",") || b == UInt8(ascii: ";") || b == 9 || b == UInt8(ascii: "|") {
                    counts[b, default: 0] += 1
                }
                // The header is split once its delimiter is known, below.
                store.append(b)
                column += 1
                continue
            }
            if b == delimiter {
                column += 1
                endField()
                fieldColumn = column
                continue
            }
            if b == UInt8(ascii: "\"") && store.count == fieldStart && !quoted {
                quoted = true
                inQuotes = true
                column += 1
                continue
            }
            store.append(b)
            column += 1
        }
        guard sawAny else { return nil }
        if inQuotes {
            throw GPXError(
                code: .truncated, file: fileName, line: recordLine, column: fieldColumn,
                message: "a quoted field is never closed: the file ends inside it")
        }
        if header {
            // Most of these in the header line is the delimiter; a header of one name has none.
            delimiter = counts.max { a, b in a.value < b.value || (a.value == b.value && a.key < b.key) }?.key ?? 0
            return splitHeader(line: recordLine)
        }
        endField()
        return CSVRecord(fields: fields, line: recordLine)
    }

    /// The header line, read whole, split at its delimiter (quotes around names are removed).
    private func splitHeader(line recordLine: Int) -> CSVRecord {
        let bytes = Array(UnsafeBufferPointer(start: store.base, count: store.count))
        store.count = 0
        var fields: [CSVField] = []
        var start = 0
        var fieldColumn = 1
        var col = 1
        var inQuotes = false
        for b in bytes {
            if b == UInt8(ascii: "\"") {
                inQuotes.toggle()
                col += 1
                continue
            }
            if b == delimiter && !inQuotes {
                fields.append(CSVField(offset: start, count: store.count - start, column: fieldColumn))
                start = store.count
                col += 1
                fieldColumn = col
                continue
            }
            store.append(b)
            col += 1
        }
        fields.append(CSVField(offset: start, count: store.count - start, column: fieldColumn))
        return CSVRecord(fields: fields, line: recordLine)
    }
}
