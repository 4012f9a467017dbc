#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a trace file holds, told by its first bytes and not by its name.
public enum TraceFormat: String, Sendable, Hashable {
    /// GPX (or any XML: the GPX reader says what is wrong with it).
    case gpx
    /// An NMEA 0183 log.
    case nmea
    /// gpsd's JSON reports (`gpspipe -w`).
    case gpsdJSON

    /// The format of a file that begins with `prefix` (its first few KiB). Comment lines (`#`),
    /// blank lines and a byte-order mark are passed over; then a line that begins as an NMEA
    /// sentence does (`$GPGGA,`, `!AIVDM,`: `$` or `!`, letters and digits, a comma or `*`) is
    /// NMEA, and a JSON object with a `"class"` member is gpsd JSON.
    ///
    /// A log may begin in the middle of a line: `cat /dev/ttyUSB0 > log` starts wherever the
    /// receiver is, a rotated log or a capture cut with `tail -c` wherever the cut falls. When
    /// the first line is neither, the lines that follow it (in `prefix`) tell: the first of them
    /// that is NMEA or gpsd JSON gives the format, and the reader then counts the lines before
    /// it as bad lines. A file whose first line begins with `<` is XML, whatever follows.
    /// Anything else is read as GPX, whose reader says what it is when it is not GPX (GeoJSON,
    /// KML, gzip…).
    public static func detect(_ prefix: some Collection<UInt8>) -> TraceFormat {
        let bytes = Array(prefix)
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
            // XML (and what only the GPX reader can name: gzip and ZIP begin with binary
            // bytes that are no line of text) is not taken for a log cut short.
            if firstLine && (b == UInt8(ascii: "<") || b == 0x1F || bytes[i...].starts(with: [0x50, 0x4B, 3, 4])) {
                return .gpx
            }
            firstLine = false
            i = end
        }
        return .gpx
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
    /// A reader of `source` for the format its first bytes tell: GPX (read with `options`), an
    /// NMEA log, or a gpsd JSON capture when `readers` can read one.
    ///
    /// - Throws: ``GPXError`` (`notGPX`) for gpsd JSON when `readers` has no reader for it: the
    ///   error says so rather than reading it as something else (in words for the program's
    ///   user; a developer passes `WaymarkGPSD`'s `TraceReaders.withGPSDCaptures`).
    public static func reader(
        for source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions(),
        readers: TraceReaders = TraceReaders()
    ) throws -> any TraceEventReader {
        let peeked = try PeekedByteSource(source)
        switch peeked.format {
        case .gpx: return GPXReader(source: peeked, name: name, options: options)
        case .nmea: return NMEAReader(source: peeked, name: name)
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
