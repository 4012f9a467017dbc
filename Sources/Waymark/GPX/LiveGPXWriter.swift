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

/// Writes a GPX 1.1 track as fixes arrive, so that the file on disk is complete GPX after every
/// point.
///
/// The file always ends with the closing tags (`</trkseg></trk></gpx>`). Each new point is
/// written over them together with a fresh copy, in one `pwrite(2)`: after a crash, even a
/// `kill -9`, the file is either valid GPX holding every point written so far or, if the
/// process died inside that single write, a file that `waymark repair` cuts back to its last
/// complete point. Points are written with `write(2)`, not synced one by one; ``close()``
/// syncs. The durable record of a live session is the store, which commits every fix.
public final class LiveGPXWriter {
    public let path: String
    private let descriptor: Int32
    private let mapping: GPXLocationMapping
    private let buffer = ByteStore(capacity: 1024)
    private static let tail: StaticString = "    </trkseg>\n  </trk>\n</gpx>\n"
    /// Where the closing tags begin.
    private var bodyEnd: off_t = 0
    private var segment: Int?
    private var isOpen = true
    /// Points written.
    public private(set) var count = 0

    /// Whether the output can be written over (a file); standard output to a pipe or a terminal
    /// cannot, so there each point is appended and the closing tags come at ``close()``.
    private let rewrites: Bool
    /// Whether the descriptor is the process's (standard output), not to be closed.
    private let borrowed: Bool

    /// Creates (or truncates) `path` and writes an empty track named `name`.
    public convenience init(
        path: String, name: String?, creator: String = "Waymark", mapping: GPXLocationMapping = .default
    ) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
        try self.init(
            descriptor: descriptor, path: path, borrowed: false, name: name, creator: creator, mapping: mapping)
    }

    /// Writes the track to standard output as fixes arrive: a regular file there (`> walk.gpx`)
    /// is complete GPX after every point, as with a path; a pipe or a terminal gets each point
    /// as it comes and the closing tags at ``close()``.
    public static func standardOutput(
        name: String?, creator: String = "Waymark", mapping: GPXLocationMapping = .default
    ) throws -> LiveGPXWriter {
        try LiveGPXWriter(
            descriptor: STDOUT_FILENO, path: "<standard output>", borrowed: true, name: name, creator: creator,
            mapping: mapping)
    }

    private init(
        descriptor: Int32, path: String, borrowed: Bool, name: String?, creator: String, mapping: GPXLocationMapping
    ) throws {
        self.path = path
        self.mapping = mapping
        self.descriptor = descriptor
        self.borrowed = borrowed
        var info = stat()
        rewrites = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        if rewrites, borrowed { bodyEnd = lseek(descriptor, 0, SEEK_CUR) }
        let out = buffer
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        out.append("<gpx xmlns=\"http://www.topografix.com/GPX/1/1\" version=\"1.1\" creator=\"")
        XMLEscaping.appendEscaped(creator, attribute: true, to: out)
        out.append("\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"")
        out.append(
            " xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd\">\n")
        out.append("  <trk>\n")
        GPXWriter.element("name", name, indent: "    ", to: out)
        out.append("    <trkseg>\n")
        do {
            try writeBufferAndTail()
        } catch {
            if !borrowed { closeDescriptor(descriptor) }
            throw error
        }
    }

    deinit {
        if isOpen && !borrowed { closeDescriptor(descriptor) }
    }

    /// Appends `location` to the track; a new `segment` number starts a new `<trkseg>`.
    public func append(_ location: Location, segment: Int) throws {
        precondition(isOpen, "append after close")
        if let current = self.segment, current != segment, count > 0 {
            buffer.append("    </trkseg>\n    <trkseg>\n")
        }
        self.segment = segment
        GPXWriter.writePoint(mapping.point(for: location), tag: "trkpt", indent: "      ", to: buffer)
        try writeBufferAndTail()
        count += 1
    }

    /// Syncs the file to disk and closes it.
    public func close() throws {
        guard isOpen else { return }
        isOpen = false
        defer { if !borrowed { closeDescriptor(descriptor) } }
        if !rewrites {
            buffer.append(Self.tail)
            defer { buffer.count = 0 }
            try writeAll(at: nil)
            return
        }
        guard borrowed || fsync(descriptor) == 0 else {
            throw OutputError(path: path, message: "fsync failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes the buffer at the end of the body, followed by the closing tags, in one call.
    private func writeBufferAndTail() throws {
        defer { buffer.count = 0 }
        guard rewrites else {
            try writeAll(at: nil)
            return
        }
        let bodyCount = buffer.count
        buffer.append(Self.tail)
        try writeAll(at: bodyEnd)
        bodyEnd += off_t(bodyCount)
    }

    /// Writes the whole buffer at `offset` (pwrite), or where the descriptor is (write).
    private func writeAll(at offset: off_t?) throws {
        var written = 0
        while written < buffer.count {
            let n =
                if let offset {
                    pwrite(descriptor, buffer.base + written, buffer.count - written, offset + off_t(written))
                } else {
                    write(descriptor, buffer.base + written, buffer.count - written)
                }
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(path: path, message: "write failed: \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }
}

/// `close(2)`, named apart from ``LiveGPXWriter/close()``: Glibc's on Linux, Darwin's on Apple
/// systems.
private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
    #endif
}
