import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Refuses an output that would replace what the run reads or keeps: the session store (and
/// SQLite's `-wal`, `-shm` and `-journal` files and its `-lock` file beside it), an input, or
/// another output.
///
/// Files are the same when they are one file on disk (device and inode, through any link or
/// spelling), or, for one not created yet, when their paths resolve to the same place. An output
/// that is a FIFO or a device (`/dev/stdout`) is written in place and never compared.
enum OutputSafety {
    /// One file, as the kernel knows it.
    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// A file a run must not overwrite, and what it is, for the message.
    struct Protected {
        var path: String
        var role: String
    }

    /// The store at `path` and the files SQLite keeps beside it.
    static func store(_ path: String) -> [Protected] {
        [Protected(path: path, role: "the session store")]
            + ["-wal", "-shm", "-journal", "-lock"].map {
                Protected(path: path + $0, role: "the session store's \($0) file")
            }
    }

    /// Inputs the run reads (`-` for standard input is skipped).
    static func inputs(_ paths: [String]) -> [Protected] {
        paths.filter { $0 != "-" }.map { Protected(path: $0, role: "an input") }
    }

    /// Throws a usage error naming the option when an output is one of `protected` or another
    /// output. `outputs` pairs each option (`-o`, `--audit`) with its path.
    static func check(outputs: [(option: String, path: String)], protected: [Protected]) throws {
        var seen: [(option: String, path: String, key: Key)] = []
        for output in outputs {
            // `-o -` is standard output (and `--gpx -` with --format gpx, which liveGPX checks);
            // the other outputs are files of their own, and a file named `-` is never what was
            // meant.
            if output.path == "-" && output.option != "-o" && output.option != "--gpx" {
                throw ValidationError(
                    "\(output.option) writes a file of its own: give its name, not - (only -o - means standard output)")
            }
            let key = key(output.path)
            guard !key.isSpecial else { continue }
            for p in protected where key.matches(Self.key(p.path)) {
                throw ValidationError(
                    "\(output.option) \(output.path) is \(p.role) (\(p.path)); writing there would replace it. Choose another file"
                )
            }
            if let other = seen.first(where: { $0.key.matches(key) }) {
                throw ValidationError(
                    "\(output.option) \(output.path) and \(other.option) \(other.path) are the same file; one would replace the other"
                )
            }
            seen.append((output.option, output.path, key))
        }
    }

    /// What identifies a path: the file it names, if it exists, and where it resolves to.
    private struct Key {
        var identity: Identity?
        var resolved: String
        var isSpecial: Bool

        func matches(_ other: Key) -> Bool {
            if let identity, let o = other.identity { return identity == o }
            return resolved == other.resolved
        }
    }

    private static func key(_ path: String) -> Key {
        var info = stat()
        let exists = stat(path, &info) == 0
        let identity = exists ? Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) : nil
        let special = exists && (info.st_mode & S_IFMT) != S_IFREG
        return Key(identity: identity, resolved: resolve(path), isSpecial: special)
    }

    /// `path` made absolute with its directory's links resolved (the file itself may not exist).
    private static func resolve(_ path: String) -> String {
        let absolute =
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let slash = absolute.lastIndex(of: "/")!
        let directory = String(absolute[..<slash])
        let name = String(absolute[absolute.index(after: slash)...])
        guard let real = realpath(directory.isEmpty ? "/" : directory, nil) else { return absolute }
        defer { free(real) }
        let resolvedDirectory = String(cString: real)
        return (resolvedDirectory == "/" ? "" : resolvedDirectory) + "/" + name
    }
}
