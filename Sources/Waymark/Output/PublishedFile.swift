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

/// A document at a path that a reader opening it at any moment finds complete, while a writer
/// keeps adding to it: the live GPX of a recording.
///
/// The document is a body that only grows, then a tail (the closing tags). Two files take turns
/// at the path. One is the document as last published. The other, under a hidden name beside it
/// (`.NAME.waymark-XXXXXX`), is brought up to date in place (the body it lacks, then the tail)
/// and the two names are swapped in one `renameat2(RENAME_EXCHANGE)`. So a point costs the
/// bytes of a point or two, not a copy of the file.
///
/// A reader keeps the file it opened, and that file is never written while the reader has it
/// open. Before writing the hidden file in place, the writer takes a write lease on it
/// (`fcntl(F_SETLEASE, F_WRLCK)`), which Linux grants only when no one else has the file open.
/// A reader that opened the path before the last swap and is still reading holds it, so the
/// lease is refused; the reader is then left that file (unlinked, but whole) and a fresh copy of
/// the document takes its place.
///
/// Where the file system has no leases or cannot swap two names (NFS and some FUSE file systems;
/// Darwin), each publication writes the whole document to a new file and renames it over the
/// path: still complete at every moment, at the cost of a copy each time. ``strategy`` says
/// which is in use.
///
/// Nothing is synced until ``close()``, which syncs the file and its directory. After a crash,
/// even a `kill -9`, the path holds the document as last published; a hidden file may be left
/// beside it, which a later run writing the same path removes once it is a day old.
final class PublishedFile {
    enum Strategy: Sendable, Equatable {
        /// Two files whose names are swapped, each written in place while no one else has it open.
        case swapping
        /// A whole new file renamed over the path at each publication.
        case copying
    }

    let path: String
    private(set) var strategy: Strategy
    /// How many times the whole document was copied into a new file: at every publication when
    /// ``strategy`` is `.copying`, else only when a reader held the file to be written.
    private(set) var copies = 0

    private let directory: String
    private let base: String
    private let mode: mode_t
    /// The file at `path`, and where its tail begins.
    private var published: Int32
    private var publishedBodyEnd: off_t
    private var publishedLength: off_t
    /// The other file (`.swapping` only), its hidden name, where its tail begins and its length.
    private var spare: Int32 = -1
    private var spareName: String?
    private var spareBodyEnd: off_t = 0
    private var spareLength: off_t = 0
    /// The body bytes the published file has and the spare lacks (the last publication's).
    private let lag = ByteStore(capacity: 1024)
    private var isOpen = true
    /// A failure that left the two files out of step: every later publication throws it.
    private var broken: OutputError?

    /// Publishes `document` at `path`, replacing whatever file is there; its first `bodyCount`
    /// bytes are the body, the rest its tail. `strategy` forces one (tests); by default the
    /// file system decides.
    init(path: String, document: UnsafeRawBufferPointer, bodyCount: Int, strategy: Strategy? = nil) throws {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        directory = folder.isEmpty ? "/" : folder
        base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var existing = stat()
        // A file it replaces keeps its mode (a private trace stays private).
        mode = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o666 & ~FileSink.processUmask()
        self.strategy = strategy ?? .swapping
        #if !os(Linux)
            self.strategy = .copying
        #endif
        published = -1
        publishedBodyEnd = 0
        publishedLength = 0
        let (first, firstName) = try createHidden()
        do {
            try writeAll(first, document, at: 0)
            try renameOrThrow(firstName, path)
        } catch {
            _ = unlink(firstName)
            closeDescriptor(first)
            throw error
        }
        published = first
        publishedBodyEnd = off_t(bodyCount)
        publishedLength = off_t(document.count)
        var created = stat()
        if fstat(first, &created) == 0 {
            FileSink.removeStaleTemporaryFiles(
                in: directory, of: base, olderThan: 86_400, now: Double(modificationTime(created)))
        }
        guard self.strategy == .swapping else { return }
        // The second file, and one swap of the two equal documents: a file system that cannot
        // lease or swap says so now, and the run copies instead.
        let (second, secondName) = try createHidden()
        spare = second
        spareName = secondName
        spareBodyEnd = off_t(bodyCount)
        spareLength = off_t(document.count)
        try writeAll(second, document, at: 0)
        guard Self.takeLease(second) else {
            useCopying()
            return
        }
        Self.releaseLease(second)
        guard Self.exchange(secondName, path) == 0 else {
            useCopying()
            return
        }
        swapRoles()
    }

    deinit {
        if isOpen {
            if let spareName { _ = unlink(spareName) }
            if spare >= 0 { closeDescriptor(spare) }
            closeDescriptor(published)
        }
    }

    /// Publishes the document grown by `bytes`: its first `bodyCount` bytes add to the body,
    /// the rest is the new tail.
    func publish(_ bytes: UnsafeRawBufferPointer, bodyCount: Int) throws {
        precondition(isOpen, "publish after close")
        if let broken { throw broken }
        switch strategy {
        case .copying:
            let (file, name) = try createHidden()
            do {
                try copyPublishedBody(into: file)
                try writeAll(file, bytes, at: publishedBodyEnd)
                try renameOrThrow(name, path)
            } catch {
                _ = unlink(name)
                closeDescriptor(file)
                throw error
            }
            copies += 1
            closeDescriptor(published)
            published = file
            publishedBodyEnd += off_t(bodyCount)
            publishedLength = publishedBodyEnd + off_t(bytes.count - bodyCount)
        case .swapping:
            if !Self.takeLease(spare) {
                // Someone has it open: a reader of an earlier publication. It keeps that file.
                guard try replaceSpare() else {
                    // Not even a new file of ours can be leased: copy from now on.
                    useCopying()
                    try publish(bytes, bodyCount: bodyCount)
                    return
                }
            }
            guard let name = spareName else { preconditionFailure("a swapping file has a spare") }
            let start = spareBodyEnd
            let lagCount = lag.count
            if let bytesStart = bytes.baseAddress {
                lag.append(bytesStart.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            }
            do {
                try writeAll(spare, UnsafeRawBufferPointer(start: lag.base, count: lag.count), at: start)
                let end = start + off_t(lag.count)
                if end < spareLength, ftruncate(spare, end) != 0 { throw failure("cannot shorten the file") }
                spareLength = end
            } catch {
                Self.releaseLease(spare)
                lag.count = lagCount
                spareLength = .max  // its end is unknown: the next write cuts it to length
                throw error
            }
            Self.releaseLease(spare)
            guard Self.exchange(name, path) == 0 else {
                let error = failure("cannot swap the new version into place")
                broken = error
                throw error
            }
            spareBodyEnd = start + off_t(lagCount + bodyCount)
            swapRoles()
            // What the new spare lacks is this publication's body: move it to the front.
            memmove(lag.base, lag.base + lagCount, bodyCount)
            lag.count = bodyCount
        }
    }

    /// Syncs the published file and its directory, removes the hidden file and closes both.
    func close() throws {
        guard isOpen else { return }
        isOpen = false
        defer {
            if spare >= 0 { closeDescriptor(spare) }
            closeDescriptor(published)
        }
        if let spareName { _ = unlink(spareName) }
        guard fsync(published) == 0 else { throw failure("fsync failed") }
        let folder = open(directory, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            closeDescriptor(folder)
        }
    }

    // MARK: - Steps

    private func swapRoles() {
        swap(&published, &spare)
        swap(&publishedBodyEnd, &spareBodyEnd)
        swap(&publishedLength, &spareLength)
    }

    /// Gives up the second file: every publication from now on is a copy.
    private func useCopying() {
        strategy = .copying
        if let spareName { _ = unlink(spareName) }
        closeDescriptor(spare)
        spare = -1
        spareName = nil
        lag.count = 0
    }

    /// A new hidden file holding the published document, in place of the spare (which is
    /// unlinked and left to whoever has it open), leased for writing; false, with nothing
    /// changed, when the new file cannot be leased either.
    private func replaceSpare() throws -> Bool {
        let (file, name) = try createHidden()
        do {
            try copyPublishedBody(into: file)
        } catch {
            _ = unlink(name)
            closeDescriptor(file)
            throw error
        }
        guard Self.takeLease(file) else {
            _ = unlink(name)
            closeDescriptor(file)
            return false
        }
        copies += 1
        if let spareName { _ = unlink(spareName) }
        closeDescriptor(spare)
        spare = file
        spareName = name
        spareBodyEnd = publishedBodyEnd
        spareLength = publishedBodyEnd
        lag.count = 0
        return true
    }

    /// Copies the published file's body (not its tail) to the start of `file`.
    private func copyPublishedBody(into file: Int32) throws {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: off_t = 0
        while offset < publishedBodyEnd {
            let n = pread(published, buffer, min(chunk, Int(publishedBodyEnd - offset)), offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read the published file")
            }
            if n == 0 { throw OutputError(path: path, message: "the published file is shorter than written") }
            try writeAll(file, UnsafeRawBufferPointer(start: buffer, count: n), at: offset)
            offset += off_t(n)
        }
    }

    /// Creates a new hidden file beside `path` (`open(2)` with `O_EXCL` through `mkstemp(3)`),
    /// locked as a run's own so that no clean-up of stale files removes it, with the path's mode.
    private func createHidden() throws -> (Int32, String) {
        var template = Array((directory + "/.\(base).waymark-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("cannot create a file beside it") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = flock(fd, LOCK_EX | LOCK_NB)
        _ = fchmod(fd, mode)
        #if os(Linux)
            // A lease broken by someone opening the file is signalled to its holder, by default
            // with SIGIO, which ends a process. SIGURG is ignored unless handled: the opener
            // just waits the few microseconds until the lease is released.
            _ = fcntl(fd, linuxSetSignal, SIGURG)
        #endif
        let name = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (fd, name)
    }

    private func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: off_t) throws {
        var written = 0
        while written < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + written, bytes.count - written, offset + off_t(written))
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("write failed")
            }
            written += n
        }
    }

    private func renameOrThrow(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else { throw failure("cannot rename the new version into place") }
    }

    private func failure(_ what: String) -> OutputError {
        OutputError(path: path, message: "\(what): \(String(cString: strerror(errno)))")
    }

    // MARK: - Leases and swaps (Linux)

    /// `fcntl(fd, F_SETLEASE, F_WRLCK)`: whether the write lease was granted, which Linux does
    /// only when no other open file refers to the file.
    private static func takeLease(_ fd: Int32) -> Bool {
        #if os(Linux)
            return fcntl(fd, linuxSetLease, Int32(F_WRLCK)) == 0
        #else
            return false
        #endif
    }

    /// `fcntl(fd, F_SETLEASE, F_UNLCK)`.
    private static func releaseLease(_ fd: Int32) {
        #if os(Linux)
            _ = fcntl(fd, linuxSetLease, Int32(F_UNLCK))
        #endif
    }

    /// `renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)`: 0, or -1 with `errno` set.
    private static func exchange(_ a: String, _ b: String) -> Int32 {
        #if os(Linux)
            guard let renameat2 = linuxRenameAt2 else {
                errno = ENOSYS
                return -1
            }
            return renameat2(AT_FDCWD, a, AT_FDCWD, b, linuxRenameExchange)
        #else
            errno = ENOSYS
            return -1
        #endif
    }
}

#if os(Linux)
    // Linux's values, the same on every architecture; Swift's Glibc module leaves them out
    // (they are _GNU_SOURCE).
    /// `F_SETLEASE` (`F_LINUX_SPECIFIC_BASE + 0`).
    private let linuxSetLease: Int32 = 1024
    /// `F_SETSIG`.
    private let linuxSetSignal: Int32 = 10
    /// `RENAME_EXCHANGE`.
    private let linuxRenameExchange: UInt32 = 1 << 1

    /// glibc's `renameat2` (2.28 and later), which Swift's Glibc module does not import: looked
    /// up once, by name.
    private let linuxRenameAt2:
        (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? = {
            guard let symbol = dlsym(nil, "renameat2") else { return nil }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
        }()
#endif
