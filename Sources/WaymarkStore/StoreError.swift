import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the store cannot be used; its description names the file.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// No store at the path, for a command that only reads.
        case missing
        /// The file is not an SQLite database.
        case notADatabase
        /// An SQLite database, but another program's.
        case foreign
        /// Written by a newer Waymark.
        case newer
        /// The file or its directory cannot be written.
        case readOnly
        /// The disk (or the file system's quota) is full.
        case full
        /// The database file is damaged.
        case corrupt
        /// Another process holds the database locked for longer than the wait.
        case busy
        /// No session with that id.
        case sessionNotFound
        /// An older store that cannot be brought up to date (a trigger or index of the user's
        /// that its upgrade cannot keep); it is left as it was.
        case cannotUpgrade
        /// Any other failure to read or write.
        case io
    }

    public var kind: Kind
    public var path: String
    public var message: String

    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// Wraps any error from the database layer with the store's path and a plain explanation.
    init(_ error: any Error, path: String) {
        if let error = error as? StoreError {
            self = error
            return
        }
        guard let error = error as? DatabaseError else {
            self.init(.io, path: path, message: "\(error)")
            return
        }
        let sqlite = error.message ?? error.resultCode.description
        switch error.resultCode {
        case .SQLITE_FULL:
            self.init(
                .full, path: path,
                message:
                    "the disk is full, or the file may grow no larger (SQLite: \(sqlite)); everything stored before this point is kept"
            )
        case .SQLITE_IOERR:
            if let reason = Self.whyNoRoom(path) {
                self.init(
                    .full, path: path,
                    message:
                        "the disk is full, or the file may grow no larger: \(reason) (SQLite: \(sqlite)); everything stored before this point is kept"
                )
            } else {
                self.init(.io, path: path, message: "SQLite: \(sqlite)")
            }
        case .SQLITE_READONLY:
            self.init(
                .readOnly, path: path,
                message:
                    "cannot write the store: \(Self.whyNotWritable(path) ?? "it is read-only") (SQLite: \(sqlite)); "
                    + "choose another --store path or fix the permissions")
        case .SQLITE_NOTADB:
            self.init(
                .notADatabase, path: path,
                message: "is not an SQLite database (SQLite: \(sqlite)); choose another --store path")
        case .SQLITE_CORRUPT:
            self.init(
                .corrupt, path: path,
                message:
                    "the database is damaged (SQLite: \(sqlite)); `sqlite3 \(path) .recover` may save what is in it")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            self.init(.busy, path: path, message: "the store is locked by another process (SQLite: \(sqlite))")
        case .SQLITE_CANTOPEN:
            if let reason = Self.whyNotWritable(path) {
                self.init(
                    .readOnly, path: path,
                    message: "cannot open the store: \(reason) (SQLite: \(sqlite)); "
                        + "choose another --store path or fix the permissions")
            } else {
                self.init(.io, path: path, message: "cannot open the store (SQLite: \(sqlite))")
            }
        default:
            self.init(.io, path: path, message: "SQLite: \(sqlite)")
        }
    }

    public var description: String { "\(path): \(message)" }

    /// Why a write may have failed for want of room, if it looks so: the file system has
    /// (almost) no space left, or the store or its WAL has reached the file size limit.
    static func whyNoRoom(_ path: String) -> String? {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        var fs = statvfs()
        if statvfs(directory, &fs) == 0, UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < 1 << 20 {
            return "no space left on the file system"
        }
        var limit = rlimit()
        #if os(Linux)
            let got = getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0  // glibc: an enum
        #else
            let got = getrlimit(RLIMIT_FSIZE, &limit) == 0
        #endif
        if got, limit.rlim_cur != rlim_t.max {
            for file in [path, path + "-wal"] {
                var info = stat()
                if stat(file, &info) == 0, UInt64(info.st_size) + (1 << 16) >= UInt64(limit.rlim_cur) {
                    return "the file size limit (ulimit -f) of \(limit.rlim_cur) bytes is reached"
                }
            }
        }
        return nil
    }

    /// Why the store cannot be written, in words, if that is the trouble: SQLite needs to write
    /// the file and to create `-wal` and `-shm` files beside it.
    static func whyNotWritable(_ path: String) -> String? {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        for (target, what) in [(path, "the file"), (directory, "its directory")] {
            if access(target, F_OK) != 0 { continue }
            if access(target, W_OK) != 0 {
                switch errno {
                case EROFS: return "it is on a read-only file system"
                case EACCES, EPERM: return "\(what) is not writable (permission denied)"
                default: return "\(what) is not writable (\(String(cString: strerror(errno))))"
                }
            }
        }
        return nil
    }
}
