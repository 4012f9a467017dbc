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

/// A GPX file held open so that it can be read from the start any number of times: once to
/// count, then once per play of a streaming replay.
///
/// A regular file is read in place with `pread(2)`. Anything else (standard input as `-`, a
/// pipe, a FIFO, a character device) is first copied to a private temporary file, made with
/// `mkstemp(3)` in `$TMPDIR` (else `/tmp`) and unlinked at once, so that nothing is left behind
/// however the process ends; the space is returned when the descriptor is closed.
///
/// `@unchecked Sendable`: every stored property is immutable; `pread(2)` has no shared offset.
final class ReplayFile: @unchecked Sendable {
    /// The path as the user named it (`-` for standard input); it names the file in messages.
    let path: String
    private let descriptor: Int32
    /// Where the document starts (standard input may have been read from before).
    private let start: off_t

    /// Opens `path` (`-` for standard input), spooling it when it cannot be read twice.
    ///
    /// - Throws: ``GPXError`` with ``GPXError/Code/fileNotFound`` or ``GPXError/Code/io``, with
    ///   the messages ``FileByteSource`` gives.
    init(path: String) throws {
        self.path = path
        var fd: Int32 = 0
        var owned = false
        if path != "-" {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw GPXError(
                    code: code == ENOENT ? .fileNotFound : .io, file: path, line: 0, column: 0,
                    message: "cannot open: \(String(cString: strerror(code)))")
            }
            owned = true
        }
        var info = stat()
        let known = fstat(fd, &info) == 0
        if known && (info.st_mode & S_IFMT) == S_IFDIR {
            if owned { close(fd) }
            throw GPXError(code: .io, file: path, line: 0, column: 0, message: "is a directory, not a GPX file")
        }
        var kept: (descriptor: Int32, start: off_t)?
        if known && (info.st_mode & S_IFMT) == S_IFREG {
            let here = owned ? 0 : lseek(fd, 0, SEEK_CUR)
            let readable = here >= 0 ? (owned ? fd : dup(fd)) : -1
            if readable >= 0 { kept = (readable, here) }
        }
        if let kept {
            descriptor = kept.descriptor
            start = kept.start
        } else {
            defer { if owned { close(fd) } }
            descriptor = try Self.spool(fd, path: path)
            start = 0
        }
    }

    deinit {
        close(descriptor)
    }

    /// A new byte source that reads the file from its start.
    func bytes() -> ByteSource {
        Reader(file: self, descriptor: descriptor, offset: start)
    }

    /// A new byte source that gives `head`, then the file from `offset` (counted from the
    /// document's start) to its end.
    func bytes(after head: [UInt8], from offset: Int) -> ByteSource {
        PeekedByteSource(prefix: head, then: Reader(file: self, descriptor: descriptor, offset: start + off_t(offset)))
    }

    /// The document's length in bytes, as the file is now.
    var byteCount: Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return 0 }
        return max(0, Int(info.st_size) - Int(start))
    }

    /// Up to `count` bytes from `offset` (counted from the document's start); fewer at the end
    /// of the file, none when it cannot be read.
    func contents(from offset: Int, count: Int) -> [UInt8] {
        let reader = Reader(file: self, descriptor: descriptor, offset: start + off_t(offset))
        return (try? PeekedByteSource(reader, count: count))?.prefix ?? []
    }

    /// Copies everything `input` gives to an unlinked temporary file; returns its descriptor.
    private static func spool(_ input: Int32, path: String) throws -> Int32 {
        func failure(_ what: String) -> GPXError {
            GPXError(
                code: .io, file: path, line: 0, column: 0,
                message: "\(what): \(String(cString: strerror(errno))); give the file's path instead")
        }
        var directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if directory.isEmpty { directory = "/tmp" }
        var template = Array("\(directory)/waymark-replay-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("cannot make a temporary file in \(directory) to hold the input") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let chunk = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                let error = failure("read failed")
                close(fd)
                throw error
            }
            if n == 0 { return fd }
            var written = 0
            while written < n {
                let w = write(fd, buffer + written, n - written)
                if w < 0 {
                    if errno == EINTR { continue }
                    let error = failure("cannot write the temporary copy of the input")
                    close(fd)
                    throw error
                }
                written += w
            }
        }
    }

    /// Reads the file from an offset of its own (`pread(2)`); it keeps the file open.
    private final class Reader: ByteSource {
        private let file: ReplayFile
        private let descriptor: Int32
        private var offset: off_t

        init(file: ReplayFile, descriptor: Int32, offset: off_t) {
            self.file = file
            self.descriptor = descriptor
            self.offset = offset
        }

        /// Calls `pread(2)`, retrying on `EINTR`.
        func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
            while true {
                let n = pread(descriptor, buffer, capacity, offset)
                if n >= 0 {
                    offset += off_t(n)
                    return n
                }
                if errno == EINTR { continue }
                throw GPXError(
                    code: .io, file: file.path, line: 0, column: 0,
                    message: "read failed: \(String(cString: strerror(errno)))")
            }
        }
    }
}
