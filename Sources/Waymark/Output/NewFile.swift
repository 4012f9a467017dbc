#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files a run adds to a directory it shares with others (the uploads a replay's background
/// transfers deliver): each one new, never one that exists.
///
/// A name is taken only by creating it (`O_CREAT | O_EXCL | O_NOFOLLOW`): a file, a directory or
/// a link already there, even one pointing nowhere, is never opened, followed or replaced; the
/// next number is tried instead. So another user who can write to the directory cannot choose
/// what a run overwrites, and an earlier run's files stay as they were.
public enum NewFile {
    /// The outcome: the path written, or why nothing was.
    public enum Outcome: Sendable, Hashable {
        case written(path: String, number: Int)
        case failed(String)
    }

    /// Creates the first of `name(number)`, `name(number + 1)`, … in `directory` that does not
    /// exist, writes `bytes` to it and closes it. A partly written file is removed.
    public static func create(
        in directory: String, numberedFrom number: Int, name: (Int) -> String, bytes: [UInt8]
    ) -> Outcome {
        let first = max(number, 1)
        var number = first
        // Far more names than any directory holds in practice: past them, say so.
        for _ in 0..<100_000 {
            let path = directory + "/" + name(number)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd < 0 {
                let error = errno
                if error == EEXIST {
                    number += 1
                    continue
                }
                return .failed("cannot create \(path): \(String(cString: strerror(error)))")
            }
            if let problem = writeAll(fd, bytes) {
                close(fd)
                unlink(path)
                return .failed("cannot write \(path): \(problem)")
            }
            if close(fd) != 0 {
                let problem = String(cString: strerror(errno))
                unlink(path)
                return .failed("cannot write \(path): \(problem)")
            }
            return .written(path: path, number: number)
        }
        return .failed("cannot create a new file in \(directory): every name from \(name(first)) on is taken")
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }
}
