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
/// point, and a reader opening it at any moment finds a complete document.
///
/// A path is published whole after each point (by the internal `PublishedFile`): each point
/// goes into a second file beside it, which then takes the path's name in one atomic swap, and a
/// file a reader has open is never written. After a crash, even a `kill -9`, the path holds
/// valid GPX with every point published before it.
/// Points are not synced one by one; ``close()`` syncs. The durable record of a live session is
/// the store, which commits every fix.
///
/// Standard output has no name to swap. A regular file there (`> walk.gpx`) always ends with the
/// closing tags too: each point is written over them together with a fresh copy, in one
/// `pwrite(2)`, so the file is complete between points, but a reader in the middle of reading
/// its end as a point arrives can see a mixture. A pipe or a terminal gets each point as it
/// comes and the closing tags at ``close()``; so does a path that names a FIFO or a device.
public final class LiveGPXWriter {
    public let path: String
    private let mapping: GPXLocationMapping
    private let buffer = ByteStore(capacity: 1024)
    private static let tail: StaticString = "    </trkseg>\n  </trk>\n</gpx>\n"
    private var segment: Int?
    private var isOpen = true
    /// Points written.
    public private(set) var count = 0
    /// Points are published once this many bytes of them wait (0: every point, as a live
    /// recording wants); ``publishPending()`` and ``close()`` publish the rest. A replay in
    /// virtual time publishes in large blocks, and before it shows what they hold.
    public var publishThreshold = 0

    private enum Target {
        /// A file at a path, published whole after every point.
        case published(PublishedFile)
        /// A regular file by its descriptor (standard output): the closing tags, which begin at
        /// `bodyEnd`, are written over by each point.
        case overwritten(descriptor: Int32, bodyEnd: off_t)
        /// A pipe, a terminal, a FIFO or a device: appended to, the closing tags at the end.
        case appended(descriptor: Int32, borrowed: Bool)
    }
    private var target: Target?

    /// Creates (or replaces) `path` and writes an empty track named `name`.
    public convenience init(
        path: String, name: String?, creator: String = "Waymark", mapping: GPXLocationMapping = .default
    ) throws {
        try self.init(path: path, name: name, creator: creator, mapping: mapping, strategy: nil)
    }

    /// As the public initialiser, with the ``PublishedFile`` strategy forced (tests).
    init(
        path: String, name: String?, creator: String = "Waymark", mapping: GPXLocationMapping = .default,
        strategy: PublishedFile.Strategy?
    ) throws {
        self.path = path
        self.mapping = mapping
        writeHeader(name: name, creator: creator)
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw OutputError(path: path, message: "is a directory; name a file to write")
            }
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
            target = .appended(descriptor: descriptor, borrowed: false)
        } else {
            // A link to a file: the file it names is the one replaced, and the link stays.
            var link = stat()
            var resolved = path
            if lstat(path, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK, let real = realpath(path, nil) {
                resolved = String(cString: real)
                free(real)
            }
            let body = buffer.count
            buffer.append(Self.tail)
            defer { buffer.count = 0 }
            target = .published(
                try PublishedFile(
                    path: resolved, document: UnsafeRawBufferPointer(start: buffer.base, count: buffer.count),
                    bodyCount: body, strategy: strategy))
            return
        }
        try writeBufferAndTail()
    }

    /// Writes the track to standard output as fixes arrive: a regular file there (`> walk.gpx`)
    /// ends with the closing tags after every point; a pipe or a terminal gets each point as it
    /// comes and the closing tags at ``close()``.
    public static func standardOutput(
        name: String?, creator: String = "Waymark", mapping: GPXLocationMapping = .default
    ) throws -> LiveGPXWriter {
        try LiveGPXWriter(standardOutputNamed: name, creator: creator, mapping: mapping)
    }

    private init(standardOutputNamed name: String?, creator: String, mapping: GPXLocationMapping) throws {
        path = "<standard output>"
        self.mapping = mapping
        var info = stat()
        if fstat(STDOUT_FILENO, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
            target = .overwritten(descriptor: STDOUT_FILENO, bodyEnd: lseek(STDOUT_FILENO, 0, SEEK_CUR))
        } else {
            target = .appended(descriptor: STDOUT_FILENO, borrowed: true)
        }
        writeHeader(name: name, creator: creator)
        try writeBufferAndTail()
    }

    deinit {
        if isOpen, case .appended(let descriptor, false) = target { closeDescriptor(descriptor) }
    }

    /// The file's strategy (tests).
    var publishedFile: PublishedFile? {
        if case .published(let file) = target { file } else { nil }
    }

    private func writeHeader(name: String?, creator: String) {
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
    }

    /// Appends `location` to the track; a new `segment` number starts a new `<trkseg>`.
    public func append(_ location: Location, segment: Int) throws {
        precondition(isOpen, "append after close")
        if let current = self.segment, current != segment, count > 0 {
            buffer.append("    </trkseg>\n    <trkseg>\n")
        }
        self.segment = segment
        GPXWriter.writePoint(mapping.point(for: location), tag: "trkpt", indent: "      ", to: buffer)
        count += 1
        if buffer.count >= publishThreshold { try writeBufferAndTail() }
    }

    /// Publishes the points that wait (see ``publishThreshold``).
    public func publishPending() throws {
        guard isOpen, buffer.count > 0 else { return }
        try writeBufferAndTail()
    }

    /// Syncs the file to disk and closes it.
    public func close() throws {
        guard isOpen else { return }
        if case .appended = target {} else { try publishPending() }
        isOpen = false
        switch target {
        case .published(let file):
            try file.close()
        case .overwritten:
            break  // standard output: the caller's to sync
        case .appended(let descriptor, let borrowed):
            defer { if !borrowed { closeDescriptor(descriptor) } }
            buffer.append(Self.tail)
            defer { buffer.count = 0 }
            try writeAll(descriptor, at: nil)
        case nil:
            break
        }
    }

    /// Writes the buffer at the end of the body, followed by the closing tags.
    private func writeBufferAndTail() throws {
        defer { buffer.count = 0 }
        switch target {
        case .published(let file):
            let body = buffer.count
            buffer.append(Self.tail)
            try file.publish(UnsafeRawBufferPointer(start: buffer.base, count: buffer.count), bodyCount: body)
        case .overwritten(let descriptor, let bodyEnd):
            let body = buffer.count
            buffer.append(Self.tail)
            try writeAll(descriptor, at: bodyEnd)
            target = .overwritten(descriptor: descriptor, bodyEnd: bodyEnd + off_t(body))
        case .appended(let descriptor, _):
            try writeAll(descriptor, at: nil)
        case nil:
            break
        }
    }

    /// Writes the whole buffer at `offset` (pwrite), or where the descriptor is (write).
    private func writeAll(_ descriptor: Int32, at offset: off_t?) throws {
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
func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
    #endif
}
