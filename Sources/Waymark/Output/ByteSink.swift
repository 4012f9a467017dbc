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

/// A buffered byte output: the writers render into its buffer and the sink flushes it.
public protocol ByteSink: AnyObject {
    /// Writes out whatever is buffered.
    func flush() throws
}

/// An error while writing output.
public struct OutputError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// Writes to a file descriptor in large blocks with `write(2)`.
///
/// With ``init(atomicPath:)`` the output goes to a temporary file beside the target that is
/// renamed over it by ``commit()``, so an interrupted or failed run never leaves a half-written
/// file under the target's name.
public final class FileSink: ByteSink {
    let buffer = ByteStore(capacity: 1 << 17)
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    let path: String
    private var temporaryPath: String?
    private var isOpen = true
    /// ``flushIfNeeded()`` writes once this many bytes are buffered.
    public var flushThreshold = 1 << 16
    /// Runs before buffered bytes are written; if it throws, nothing is written and the flush
    /// throws. A recorder uses it to commit a store before the output that reports it appears.
    public var beforeWrite: (() throws -> Void)?

    /// Standard output.
    public static func standardOutput() -> FileSink { FileSink(descriptor: 1, path: "<stdout>") }

    /// Standard error.
    public static func standardError() -> FileSink { FileSink(descriptor: 2, path: "<stderr>") }

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        ownsDescriptor = false
        temporaryPath = nil
    }

    /// Creates `path` atomically: the data appears under that name only on ``commit()``.
    ///
    /// A path that names something other than a regular file (a FIFO, `/dev/stdout`, a device)
    /// is written in place instead: renaming over it would replace it.
    public init(atomicPath path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw OutputError(path: path, message: "is a directory; name a file to write")
            }
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw OutputError(path: path, message: "cannot open for writing: \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            ownsDescriptor = true
            self.path = path
            temporaryPath = nil
            return
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let folder = directory.isEmpty ? "/" : directory
        var template = Array((folder + "/.\(base).waymark-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw OutputError(path: path, message: "cannot create the output file: \(String(cString: strerror(errno)))")
        }
        // Held while the run writes it: a later run's clean-up of stale files leaves it alone.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        // A file it replaces keeps its mode (a private trace stays private); a new file gets
        // what the umask allows of rw-rw-rw-, as any program's new file does.
        var existing = stat()
        if stat(path, &existing) == 0 {
            _ = fchmod(fd, existing.st_mode & 0o7777)
        } else {
            _ = fchmod(fd, 0o666 & ~Self.processUmask())
        }
        // The new file's time is the file system's "now", so no clock is read here.
        var created = stat()
        if fstat(fd, &created) == 0 {
            Self.removeStaleTemporaryFiles(
                in: folder, of: base, olderThan: 86_400, now: Double(modificationTime(created)))
        }
        descriptor = fd
        ownsDescriptor = true
        self.path = path
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit {
        if ownsDescriptor && isOpen { close(descriptor) }
        if let temporaryPath { unlink(temporaryPath) }
    }

    /// The temporary file the output goes to until ``commit()``, if any: a program that can be
    /// stopped by a signal removes it then.
    public var uncommittedPath: String? { temporaryPath }

    /// Removes `.NAME.waymark-XXXXXX` files of `base` in `directory` last modified more than
    /// `age` seconds before `now` (seconds since 1970, the file system's time): what an earlier
    /// run left when it was killed. Files of other names and recent ones (a run in progress) are
    /// left alone.
    static func removeStaleTemporaryFiles(in directory: String, of base: String, olderThan age: Double, now: Double) {
        let prefix = ".\(base).waymark-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.utf8.count == prefix.utf8.count + 6 {
            let candidate = directory + "/" + name
            var info = stat()
            guard lstat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                now - Double(modificationTime(info)) > age
            else { continue }
            // A run still writing it holds its lock (a slow recording may not touch it for a day).
            let fd = open(candidate, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(candidate) }
            close(fd)
        }
    }

    /// The process's umask, read without changing it (`umask(2)` can only set it, and setting
    /// it back races with other threads creating files): from `/proc/self/status` on Linux.
    static func processUmask() -> mode_t {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(String(line.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }), radix: 8)
        {
            return mask
        }
        return 0o022
    }

    /// Buffers `text`; it is written by the next flush.
    public func write(_ text: String) {
        buffer.append(text)
    }

    /// Flushes when enough is buffered for a large write.
    @inline(__always)
    public func flushIfNeeded() throws {
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Drops what is buffered without writing it.
    public func discardBuffered() {
        buffer.count = 0
    }

    public func flush() throws {
        if buffer.count > 0, let beforeWrite {
            do {
                try beforeWrite()
            } catch {
                buffer.count = 0
                throw error
            }
        }
        var offset = 0
        while offset < buffer.count {
            #if canImport(Glibc)
                let n = Glibc.write(descriptor, buffer.base + offset, buffer.count - offset)
            #else
                let n = Darwin.write(descriptor, buffer.base + offset, buffer.count - offset)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                buffer.count = 0
                throw OutputError(path: path, message: "write failed: \(String(cString: strerror(code)))")
            }
            offset += n
        }
        buffer.count = 0
        startWriteback(after: offset)
    }

    #if os(Linux)
        /// How much of an atomic output is written, and how much of it the disk has been asked
        /// to take so far (``startWriteback(after:)``).
        private var written = 0
        private var writebackStarted = 0
    #endif
    /// How many times the kernel was asked to start writing (for tests).
    private(set) var writebackRequests = 0
    /// Every 16 MiB written to an atomic output, the kernel is asked to start writing them to
    /// the disk, so that ``commit()``'s `fsync` waits only for the last few: it took a tenth of a
    /// second after 120 MB of NDJSON, every byte of it still in memory. `posix_fadvise`'s
    /// `DONTNEED` does that on Linux without waiting: it starts the write-back of dirty pages,
    /// then lets go of the clean ones (read again, they come from the disk). The bytes written
    /// stay the same, and a failure to write them still shows in `fsync`.
    private func startWriteback(after count: Int) {
        #if os(Linux)
            guard temporaryPath != nil else { return }
            written += count
            guard written - writebackStarted >= 1 << 24 else { return }
            _ = posix_fadvise(
                descriptor, off_t(writebackStarted), off_t(written - writebackStarted), POSIX_FADV_DONTNEED)
            writebackStarted = written
            writebackRequests += 1
        #endif
    }

    /// Appends the first `count` bytes of the file open at `source`, after what is buffered.
    ///
    /// The kernel copies them (`sendfile(2)`) when it can, so they do not pass through this
    /// process; otherwise, say to a file opened for appending, they are read into the buffer.
    func append(contentsOf source: Int32, count: Int) throws {
        try flush()
        var offset: off_t = 0
        #if os(Linux)
            // Linux's sendfile(2) copies between any two files; Darwin's sends only to a socket.
            if beforeWrite == nil {
                while offset < count {
                    let n = sendfile(descriptor, source, &offset, count - Int(offset))
                    if n > 0 { continue }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP {
                        throw OutputError(path: path, message: "write failed: \(String(cString: strerror(errno)))")
                    }
                    break
                }
                startWriteback(after: Int(offset))
            }
        #endif
        let chunk = 1 << 16
        while offset < count {
            buffer.reserve(chunk)
            let n = pread(source, buffer.base + buffer.count, min(chunk, count - Int(offset)), offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(
                    path: "temporary file", message: "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 {
                throw OutputError(path: "temporary file", message: "read failed: the file is shorter than written")
            }
            buffer.count += n
            offset += off_t(n)
            try flushIfNeeded()
        }
    }

    /// Flushes, syncs and renames the temporary file over the target.
    public func commit() throws {
        try flush()
        guard let temporaryPath else { return }
        guard fsync(descriptor) == 0 else {
            throw OutputError(path: path, message: "fsync failed: \(String(cString: strerror(errno)))")
        }
        guard rename(temporaryPath, path) == 0 else {
            throw OutputError(path: path, message: "cannot rename into place: \(String(cString: strerror(errno)))")
        }
        self.temporaryPath = nil
        if ownsDescriptor {
            close(descriptor)
            isOpen = false
        }
    }
}

/// Bytes that stay in memory up to a threshold and then spill to an unlinked temporary file,
/// so that output which must be reordered (GeoJSON's per-property arrays, GPX's element order)
/// still takes bounded memory.
final class SpillBuffer {
    let memory = ByteStore(capacity: 4096)
    private var descriptor: Int32 = -1
    private let threshold: Int
    private(set) var totalCount = 0

    init(threshold: Int = 1 << 20) {
        self.threshold = threshold
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Call after appending to ``memory``.
    @inline(__always)
    func spillIfNeeded() throws {
        if memory.count >= threshold { try spill() }
    }

    private func spill() throws {
        if descriptor < 0 {
            let dir = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
            var template = Array((dir + "/waymark-spill-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else {
                throw OutputError(
                    path: dir, message: "cannot create a temporary file: \(String(cString: strerror(errno)))")
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            descriptor = fd
        }
        var offset = 0
        while offset < memory.count {
            let n = write(descriptor, memory.base + offset, memory.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(path: "temporary file", message: "write failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        totalCount += memory.count
        memory.count = 0
    }

    var isEmpty: Bool { totalCount == 0 && memory.count == 0 }

    /// Empties this buffer, writing nothing.
    func discard() {
        if descriptor >= 0 {
            _ = ftruncate(descriptor, 0)
            _ = lseek(descriptor, 0, SEEK_SET)
            totalCount = 0
        }
        memory.count = 0
    }

    /// Appends everything to `sink`'s buffer and empties this buffer.
    func drain(into sink: FileSink) throws {
        if descriptor >= 0 {
            try spill()
            try sink.append(contentsOf: descriptor, count: totalCount)
            _ = ftruncate(descriptor, 0)
            // The next spill writes from the start again: `write` goes on at the file offset,
            // which ftruncate leaves where it was (a second large line read back as zeros).
            _ = lseek(descriptor, 0, SEEK_SET)
            totalCount = 0
        } else {
            sink.buffer.append(memory.span)
            memory.count = 0
            try sink.flushIfNeeded()
        }
    }
}

/// A file's modification time in whole seconds since 1970: `st_mtim` on Linux, `st_mtimespec`
/// on Darwin.
/// A file's last modification, in whole seconds since 1970 (`st_mtim` on Linux, `st_mtimespec`
/// on Darwin).
func modificationTime(_ info: stat) -> Int {
    #if canImport(Darwin)
        Int(info.st_mtimespec.tv_sec)
    #else
        Int(info.st_mtim.tv_sec)
    #endif
}
