#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a trace file holds, told by its first bytes and not by its name.
public enum TraceFormat: String, Sendable, Hashable, CaseIterable {
    /// GPX (or any XML whose root is not one of the others: the GPX reader says what it is).
    case gpx
    /// An NMEA 0183 log.
    case nmea
    /// gpsd's JSON reports (`gpspipe -w`).
    case gpsdJSON
    /// Garmin's Training Center XML (`.tcx`): activities and courses.
    case tcx
    /// KML (Google Earth), with its `gx:Track`s.
    case kml
    /// GeoJSON (RFC 7946), or a GeoJSON text sequence (RFC 8142).
    case geoJSON
    /// A FIT file (Garmin's binary activity format).
    case fit
    /// Comma-separated values with a header line that names a latitude and a longitude column.
    case csv

    /// The format of a file that begins with `prefix` (its first few KiB):
    /// - FIT's 12- or 14-byte header, with `.FIT` at byte 8, is FIT;
    /// - XML is told by its root element: `<kml>` KML, `<TrainingCenterDatabase>` TCX, anything
    ///   else GPX (whose reader names what it is when it is not GPX);
    /// - a JSON object with a `"class"` member on its first line is gpsd JSON, and a JSON text
    ///   (or an RFC 8142 record separator) that names a GeoJSON `"type"`, or has `"features"`,
    ///   `"geometry"` or `"coordinates"`, is GeoJSON;
    /// - a line that begins as an NMEA sentence does (`$GPGGA,`, `!AIVDM,`: `$` or `!`, letters
    ///   and digits, a comma or `*`) is NMEA;
    /// - a first line that is a header naming a latitude and a longitude column (by the names
    ///   ``CSVColumn`` lists) is CSV. (``reader(for:name:options:readers:)`` also reads a file
    ///   named `.csv` or `.tsv` whose first line is delimited as CSV, so that its reader says
    ///   which column is missing.)
    ///
    /// Comment lines (`#`), blank lines and a byte-order mark are passed over. A log may begin in
    /// the middle of a line: `cat /dev/ttyUSB0 > log` starts wherever the receiver is, a rotated
    /// log or a capture cut with `tail -c` wherever the cut falls. When the first line is none of
    /// these, the lines that follow it (in `prefix`) tell: the first of them that is NMEA or gpsd
    /// JSON gives the format, and the reader then counts the lines before it as bad lines.
    /// Anything else is read as GPX, whose reader says what it is when it is not GPX (gzip, ZIP…).
    public static func detect(_ prefix: some Collection<UInt8>) -> TraceFormat {
        let bytes = Array(prefix)
        if bytes.count >= 12, bytes[0] == 12 || bytes[0] == 14, bytes[8..<12].elementsEqual(Array(".FIT".utf8)) {
            return .fit
        }
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        var firstLine = true
        while i < bytes.count {
            let b = bytes[i]
            if b == 10 || b == 13 || b == 32 || b == 9 || b == 0 {
                i += 1
                continue
            }
            var end = i
            while end < bytes.count, bytes[end] != 10, bytes[end] != 13 { end += 1 }
            if b == UInt8(ascii: "#") {
                i = end
                continue
            }
            if let format = lineFormat(bytes[i..<end]) { return format }
            if firstLine {
                if b == UInt8(ascii: "<") { return xmlFormat(bytes[i...]) }
                if b == 0x1E || b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
                    if namesGeoJSONType(bytes[i...]) { return .geoJSON }
                } else if isCSVHeader(bytes[i..<end]) {
                    return .csv
                }
                // What only the GPX reader can name: gzip and ZIP begin with binary bytes that
                // are no line of text, and are not taken for a log cut short.
                if b == 0x1F || bytes[i...].starts(with: [0x50, 0x4B, 3, 4]) { return .gpx }
            }
            firstLine = false
            i = end
        }
        return .gpx
    }

    /// Whether the first line of `prefix` (past comments, blank lines and a byte-order mark) is
    /// delimited text: what a CSV file whose header names no position begins with.
    static func beginsWithDelimitedLine(_ prefix: some Collection<UInt8>) -> Bool {
        let bytes = Array(prefix)
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while i < bytes.count {
            if bytes[i] == 10 || bytes[i] == 13 || bytes[i] == 32 || bytes[i] == 9 {
                i += 1
                continue
            }
            var end = i
            while end < bytes.count, bytes[end] != 10, bytes[end] != 13 { end += 1 }
            if bytes[i] == UInt8(ascii: "#") {
                i = end
                continue
            }
            return bytes[i] != UInt8(ascii: "<") && isDelimited(bytes[i..<end])
        }
        return false
    }

    /// The format of XML whose first `<` is at the start of `bytes`: its root element's local
    /// name, past the declaration, comments and processing instructions.
    private static func xmlFormat(_ bytes: ArraySlice<UInt8>) -> TraceFormat {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            guard bytes[i] == UInt8(ascii: "<") else {
                i += 1
                continue
            }
            let next = i + 1 < bytes.endIndex ? bytes[i + 1] : 0
            if next == UInt8(ascii: "?") || next == UInt8(ascii: "!") {
                // A declaration, comment or processing instruction: past its end.
                let close: [UInt8] =
                    bytes[i...].starts(with: Array("<!--".utf8)) ? Array("-->".utf8) : [UInt8(ascii: ">")]
                var j = i + 2
                while j + close.count <= bytes.endIndex, !bytes[j..<(j + close.count)].elementsEqual(close) { j += 1 }
                i = j + close.count
                continue
            }
            var j = i + 1
            while j < bytes.endIndex, !ByteSpan.isSpace(bytes[j]), bytes[j] != UInt8(ascii: ">"),
                bytes[j] != UInt8(ascii: "/")
            {
                j += 1
            }
            var name = bytes[(i + 1)..<j]
            if let colon = name.lastIndex(of: UInt8(ascii: ":")) { name = name[(colon + 1)...] }
            if name.elementsEqual(Array("kml".utf8)) { return .kml }
            if name.elementsEqual(Array("TrainingCenterDatabase".utf8)) { return .tcx }
            return .gpx
        }
        return .gpx
    }

    /// Whether JSON text is GeoJSON: it names one of GeoJSON's types as a `"type"` member's value,
    /// or has a member only GeoJSON has (`"features"`, `"geometry"`, `"coordinates"`): writers that
    /// sort their keys (GPSBabel, jq -S) put `"type"` last, after a feature that may fill the
    /// first kilobytes.
    private static func namesGeoJSONType(_ bytes: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        if ["\"features\"", "\"geometry\"", "\"coordinates\""].contains(where: { text.contains($0) }) { return true }
        guard text.contains("\"type\"") else { return false }
        let types = [
            "FeatureCollection", "Feature", "LineString", "MultiLineString", "Point", "MultiPoint",
            "GeometryCollection", "Polygon", "MultiPolygon",
        ]
        return types.contains { text.contains("\"\($0)\"") }
    }

    private static let delimiters: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: ";"), 9, UInt8(ascii: "|")]

    /// Whether a line is text split by a CSV delimiter into names (no control bytes).
    private static func isDelimited(_ line: ArraySlice<UInt8>) -> Bool {
        line.contains { delimiters.contains($0) } && !line.contains { $0 < 0x20 && $0 != 9 }
    }

    /// Whether a line is a CSV header that names a latitude and a longitude column.
    private static func isCSVHeader(_ line: ArraySlice<UInt8>) -> Bool {
        func count(_ d: UInt8) -> Int { line.count { $0 == d } }
        guard let delimiter = delimiters.max(by: { count($0) < count($1) }), count(delimiter) > 0
        else { return false }
        let names = line.split(separator: delimiter, omittingEmptySubsequences: false).map {
            String(decoding: $0.filter { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
        }
        return (try? CSVLayout(names: names, file: "", line: 1)) != nil
    }

    /// The format a line tells (without its line break), or nil when it is neither an NMEA
    /// sentence nor a gpsd report.
    private static func lineFormat(_ line: ArraySlice<UInt8>) -> TraceFormat? {
        guard let b = line.first else { return nil }
        if b == UInt8(ascii: "$") || b == UInt8(ascii: "!") {
            var j = line.startIndex + 1
            while j < line.endIndex, j - line.startIndex <= 17,
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(line[j])
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[j])
            {
                j += 1
            }
            let address = j - line.startIndex - 1
            if address >= 2, j < line.endIndex, line[j] == UInt8(ascii: ",") || line[j] == UInt8(ascii: "*") {
                return .nmea
            }
            return nil
        }
        if b == UInt8(ascii: "{") {
            // gpsd's reports begin {"class":"…"; look for the member in the line.
            let key = Array("\"class\"".utf8)
            if line.count >= key.count,
                (line.startIndex...(line.endIndex - key.count)).contains(where: {
                    line[$0..<($0 + key.count)].elementsEqual(key)
                })
            {
                return .gpsdJSON
            }
        }
        return nil
    }
}

/// A reader of a trace file that gives the events of a GPX document: ``GPXReader``, or
/// ``NMEAReader`` for an NMEA log.
public protocol TraceEventReader: AnyObject {
    /// The file, as the user named it.
    var fileName: String { get }
    /// Bad points a lenient reader left out.
    var droppedPoints: Int { get }
    /// Reads everything, handing each event to `handle` in order.
    func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws
}

extension GPXReader: TraceEventReader {
    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try withoutActuallyEscaping(handle) { try read($0) }
    }
}

extension NMEAReader: TraceEventReader {
    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws { try read(handle) }
}

/// A byte source whose first bytes were read ahead to tell its format; it gives them again.
public final class PeekedByteSource: ByteSource {
    private let inner: ByteSource
    /// The first bytes, given before the rest.
    public let prefix: [UInt8]
    private var offset = 0

    /// Reads up to `count` bytes of `inner` ahead.
    public init(_ inner: ByteSource, count: Int = 4096) throws {
        self.inner = inner
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try bytes.withUnsafeMutableBufferPointer { b in
                try inner.read(into: b.baseAddress! + filled, capacity: count - filled)
            }
            if n == 0 { break }
            filled += n
        }
        prefix = Array(bytes[0..<filled])
    }

    /// Gives `prefix`, then `inner` (a document made of a head and the rest of a file).
    init(prefix: [UInt8], then inner: ByteSource) {
        self.inner = inner
        self.prefix = prefix
    }

    public func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
        if offset < prefix.count {
            let n = min(capacity, prefix.count - offset)
            prefix.withUnsafeBufferPointer { b in buffer.update(from: b.baseAddress! + offset, count: n) }
            offset += n
            return n
        }
        return try inner.read(into: buffer, capacity: capacity)
    }

    /// The format its first bytes tell.
    public var format: TraceFormat { TraceFormat.detect(prefix) }
}

/// Which readers a trace may be read with, beyond GPX and NMEA (which the core library reads
/// itself): gpsd JSON needs libgps, so `WaymarkGPSD` supplies its reader
/// (`TraceReaders.withGPSDCaptures`).
public struct TraceReaders: Sendable {
    /// Makes a reader of a gpsd JSON capture from its bytes and its name.
    public typealias Make = @Sendable (ByteSource, String) throws -> any TraceEventReader
    public var gpsdJSON: Make?

    public init(gpsdJSON: Make? = nil) {
        self.gpsdJSON = gpsdJSON
    }
}

extension TraceFormat {
    /// A reader of `source` for the format its first bytes tell (``detect(_:)``): GPX, TCX, KML,
    /// GeoJSON, FIT or CSV (read with `options`), an NMEA log, or a gpsd JSON capture when
    /// `readers` can read one.
    ///
    /// - Throws: ``GPXError`` (`notGPX`) for gpsd JSON when `readers` has no reader for it: the
    ///   error says so rather than reading it as something else (in words for the program's
    ///   user; a developer passes `WaymarkGPSD`'s `TraceReaders.withGPSDCaptures`).
    public static func reader(
        for source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions(),
        readers: TraceReaders = TraceReaders()
    ) throws -> any TraceEventReader {
        let peeked = try PeekedByteSource(source)
        var format = peeked.format
        // A file named as CSV whose header names no position: the CSV reader says which column
        // is missing (its content alone does not say it is CSV rather than broken text).
        let lower = name.lowercased()
        if format == .gpx, lower.hasSuffix(".csv") || lower.hasSuffix(".tsv"),
            beginsWithDelimitedLine(peeked.prefix)
        {
            format = .csv
        }
        switch format {
        case .gpx: return GPXReader(source: peeked, name: name, options: options)
        case .nmea: return NMEAReader(source: peeked, name: name)
        case .tcx: return TCXReader(source: peeked, name: name, options: options)
        case .kml: return KMLReader(source: peeked, name: name, options: options)
        case .csv: return CSVReader(source: peeked, name: name, options: options)
        case .geoJSON: return GeoJSONReader(source: peeked, name: name, options: options)
        case .fit: return FITReader(source: peeked, name: name, options: options)
        case .gpsdJSON:
            if let make = readers.gpsdJSON { return try make(peeked, name) }
            throw GPXError(
                code: .notGPX, file: name, line: 1, column: 1,
                message:
                    "this is a capture of gpsd's JSON reports (gpspipe -w), which this program cannot read: reading one needs libgps"
            )
        }
    }
}
