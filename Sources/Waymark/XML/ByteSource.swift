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

/// A stream of raw bytes that the XML tokenizer pulls from, one chunk at a time.
///
/// Implementations are read by one tokenizer on one thread; they need not be thread-safe.
public protocol ByteSource: AnyObject {
    /// Reads up to `capacity` bytes into `buffer`.
    ///
    /// - Returns: the number of bytes read; 0 means the end of the stream.
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int
}

/// Reads a file (or standard input) through a POSIX file descriptor with `read(2)`.
public final class FileByteSource: ByteSource {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// The path used in error messages.
    public let path: String

    /// Opens `path` for reading; `-` means standard input.
    ///
    /// Calls `open(2)`.
    public init(path: String) throws {
        self.path = path
        if path == "-" {
            descriptor = 0
            ownsDescriptor = false
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw GPXError(
                code: code == ENOENT ? .fileNotFound : .io, file: path, line: 0, column: 0,
                message: "cannot open: \(String(cString: strerror(code)))")
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw GPXError(code: .io, file: path, line: 0, column: 0, message: "is a directory, not a GPX file")
        }
        descriptor = fd
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Calls `read(2)`, retrying on `EINTR`.
    public func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
        while true {
            #if canImport(Glibc)
                let n = Glibc.read(descriptor, buffer, capacity)
            #else
                let n = Darwin.read(descriptor, buffer, capacity)
            #endif
            if n >= 0 { return n }
            if errno == EINTR { continue }
            let code = errno
            throw GPXError(
                code: .io, file: path, line: 0, column: 0,
                message: "read failed: \(String(cString: strerror(code)))")
        }
    }
}

/// Serves bytes from memory, optionally in small pieces (useful to test chunk boundaries).
public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private let pieceSize: Int

    /// - Parameters:
    ///   - bytes: the bytes to serve.
    ///   - pieceSize: the most bytes one `read` returns.
    public init(_ bytes: [UInt8], pieceSize: Int = .max) {
        self.bytes = bytes
        self.pieceSize = max(1, pieceSize)
    }

    public convenience init(_ data: Data, pieceSize: Int = .max) {
        self.init([UInt8](data), pieceSize: pieceSize)
    }

    public convenience init(_ text: String, pieceSize: Int = .max) {
        self.init(Array(text.utf8), pieceSize: pieceSize)
    }

    public func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
        let n = min(capacity, pieceSize, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + offset, count: n)
        }
        offset += n
        return n
    }
}
