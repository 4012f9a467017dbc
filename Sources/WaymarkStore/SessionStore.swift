import GRDB
import Waymark

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

/// The database of sessions: every replay and recording, its delivered locations and its audit
/// events, in one SQLite file.
///
/// The file is in WAL mode, so a reader (`waymark sessions list`, the `sqlite3` shell) never
/// blocks a recording, and a crash at any moment leaves it consistent. Its schema is versioned
/// by migrations and described in ``StoreSchema``. A file that is not a database, or is another
/// program's database, is refused with a ``StoreError`` before anything is written to it.
public final class SessionStore: Sendable {
    public let path: String
    let queue: DatabaseQueue
    /// Whether the store was opened only to read, because the user may not write it or its
    /// directory (issue 15, item 17): sessions can be listed, shown and exported, not recorded.
    public let isReadOnly: Bool
    /// Set when the store was read as it is on disk and its `-wal` file, which this user can
    /// neither read through SQLite nor fold in, holds changes that are then not shown.
    public let unreadChanges: Bool
    /// How this store's connection waits for another process's write lock: 5 s, or, once a
    /// recording asks, until the lock is released (``LockWaiting``).
    public let lockWaiting: LockWaiting
    /// What bringing the store up to schema v4 set aside when this open did it (its rows that do
    /// not pass v4's checks); nil when it set aside nothing, or the store was up to date
    /// already. The caller says so: nothing set aside is hidden without a word (issue 27, item
    /// 9). ``setAside()`` tells what is set aside at any time.
    public let setAsideByUpgrade: SetAsideRows?

    /// How to treat a missing file.
    public enum OpenMode: Sendable {
        /// Create the file (and its directory) when it does not exist: for commands that record.
        case create
        /// Fail with ``StoreError/Kind-swift.enum/missing`` when it does not exist: for commands that read.
        case existing
    }

    /// The default store: `$XDG_DATA_HOME/waymark/waymark.sqlite`, or
    /// `~/.local/share/waymark/waymark.sqlite` when `XDG_DATA_HOME` is unset or not absolute (as
    /// the XDG Base Directory specification says).
    public static func defaultPath(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return data + "/waymark/waymark.sqlite"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "."
        return home + "/.local/share/waymark/waymark.sqlite"
    }

    /// Opens the store at `path`, creating it when `mode` allows, and brings its schema up to date.
    public convenience init(path: String, mode: OpenMode = .create) throws {
        try self.init(path: path, mode: mode, lockAttempts: 200)
    }

    /// `lockAttempts`: how many times, 50 ms apart, opening waits for another process's lock on
    /// the store (200: about 10 s). `lockWaiting`: how statements wait for SQLite's write lock.
    init(path: String, mode: OpenMode, lockAttempts: Int, lockWaiting: LockWaiting = LockWaiting()) throws {
        self.lockWaiting = lockWaiting
        self.path = path
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists && (info.st_mode & S_IFMT) == S_IFDIR {
            throw StoreError(.notADatabase, path: path, message: "is a directory, not a store")
        }
        if !exists {
            guard mode == .create else {
                throw StoreError(
                    .missing, path: path,
                    message: "no store here yet; `waymark replay` or `waymark record` creates it")
            }
            try Self.makeDirectory(containing: path)
        }
        // A store this user may not write (or whose directory it may not write, where SQLite
        // keeps its -wal and -shm files) is read as it is, when only reading is asked for.
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if mode == .existing
            && (access(directory.isEmpty ? "/" : directory, W_OK) != 0 || access(path, W_OK) != 0)
        {
            isReadOnly = true
            setAsideByUpgrade = nil
            (queue, unreadChanges) = try Self.openReadOnly(path: path)
            return
        }
        isReadOnly = false
        unreadChanges = false
        var configuration = Configuration()
        configuration.busyMode = .callback { tries in lockWaiting.shouldRetry(tries: tries) }
        // Rows name their session; deleting a session deletes its rows explicitly. Checking the
        // key on every insert would cost a lookup per location.
        configuration.foreignKeysEnabled = false
        configuration.label = "waymark-store"
        // Processes that open a store at the same moment take turns: one creating it while
        // another checks it would see a half-made schema ("not a Waymark store", or "no such
        // table: grdb_migrations").
        let lock = try Self.lockStore(at: path, attempts: lockAttempts)
        defer { Self.unlock(lock) }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try Self.checkOwnership(db, path: path)
                // WAL before the first write: every transaction after this one is crash-safe.
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            let migrator = StoreSchema.migrator
            try queue.read { db in
                if try migrator.hasBeenSuperseded(db) {
                    throw StoreError(
                        .newer, path: path,
                        message: "was written by a newer Waymark (its schema has migrations this version does not know)"
                    )
                }
            }
            let checkedBefore = try queue.read { try migrator.appliedIdentifiers($0).contains(Self.checkedColumns) }
            try migrator.migrate(queue)
            let aside = checkedBefore ? nil : try queue.read { try Self.setAside($0) }
            setAsideByUpgrade = aside?.isEmpty == false ? aside : nil
        } catch let error as StoreSchema.CannotKeepUsersSchema {
            let o = error.object
            throw StoreError(
                .cannotUpgrade, path: path,
                message:
                    "cannot be brought up to date: the \(o.type) \(o.name) on \(o.table), which the upgrade must rebuild, "
                    + "cannot be made again (SQLite: \(error.reason)); nothing was changed. Drop it (sqlite3 \(path) "
                    + "'DROP \(o.type.uppercased()) \(o.name)'), run waymark again, then make it again")
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Opens a store only to read it: through SQLite's read-only mode, which reads a `-wal` file
    /// that is there; failing that (SQLite cannot make the `-shm` file where it may not write),
    /// as an immutable file (`immutable=1`), whose `-wal`, if any, is then left unread. The
    /// schema must be current: an older one needs writing to be brought up to date.
    private static func openReadOnly(path: String) throws -> (DatabaseQueue, Bool) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.foreignKeysEnabled = false
        configuration.label = "waymark-store"
        func check(_ queue: DatabaseQueue) throws {
            try queue.read { db in
                try checkOwnership(db, path: path)
                let migrator = StoreSchema.migrator
                if try migrator.hasBeenSuperseded(db) {
                    throw StoreError(
                        .newer, path: path,
                        message: "was written by a newer Waymark (its schema has migrations this version does not know)"
                    )
                }
                if try !migrator.hasCompletedMigrations(db) {
                    throw StoreError(
                        .readOnly, path: path,
                        message: "was written by an older Waymark and is read-only here; open it once where it "
                            + "can be written (as its owner) to bring it up to date")
                }
            }
        }
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try check(queue)
            return (queue, false)
        } catch let error as StoreError {
            throw error
        } catch {
            // Not openable read-only in place: read the file as it is.
        }
        do {
            let uri =
                "file:"
                + path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
                .replacingOccurrences(of: "#", with: "%23") + "?immutable=1"
            let queue = try DatabaseQueue(path: uri, configuration: configuration)
            try check(queue)
            var info = stat()
            let walHasChanges = stat(path + "-wal", &info) == 0 && info.st_size > 0
            return (queue, walHasChanges)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Refuses a file that is not a Waymark store: not SQLite at all, or SQLite that belongs to
    /// another program (it has tables but not Waymark's application id).
    private static func checkOwnership(_ db: Database, path: String) throws {
        let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        if application == StoreSchema.applicationID { return }
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        if application == 0 && tables.isEmpty { return }
        let what =
            tables.isEmpty
            ? "its application id is \(application)"
            : "it has tables \(tables.prefix(5).joined(separator: ", "))\(tables.count > 5 ? ", …" : "")"
        throw StoreError(
            .foreign, path: path,
            message: "is an SQLite database but not a Waymark store (\(what)); choose another --store path")
    }

    /// The migration that checks every column (v4), which sets aside the rows that fail.
    static let checkedColumns = "v4: checked columns"

    /// The file beside the store whose lock makes processes that open the store take turns.
    public static func lockPath(of path: String) -> String { path + "-lock" }

    /// Takes an exclusive flock(2) on the store's lock file (``lockPath(of:)``, created when
    /// missing). Not on the store: SQLite's locks on it are POSIX record locks, which a process
    /// loses on every file it has open when it closes any descriptor of that file, so a
    /// descriptor of ours opened and closed beside SQLite's would drop SQLite's locks (and let
    /// another process damage the store). Not on the store's directory either: anyone who can
    /// read a shared directory (/tmp) could lock it and block every store command in it.
    ///
    /// Waits about `attempts` × 50 ms for another process that holds the lock, then fails
    /// naming it (from /proc/locks). -1 when the lock file cannot be opened (a store read where
    /// it cannot be written, say): opening goes on without it.
    private static func lockStore(at path: String, attempts: Int) throws -> Int32 {
        let fd = open(lockPath(of: path), O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return -1 }
        var attempt = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK, attempt < attempts else {
                var info = stat()
                let holder = fstat(fd, &info) == 0 ? lockHolder(inode: UInt64(info.st_ino)) : nil
                close(fd)
                if code != EWOULDBLOCK { return -1 }
                throw StoreError(
                    .busy, path: path,
                    message: "is being opened by \(holder ?? "another process"), which has held "
                        + "\(lockPath(of: path)) for more than \(max(1, attempts / 20)) s; try again when it has finished"
                )
            }
            attempt += 1
            usleep(50_000)
        }
        return fd
    }

    /// The process that holds a flock on the file with `inode`, as `process N (command)`, from
    /// /proc/locks; nil when it cannot be told.
    static func lockHolder(inode: UInt64) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 4242 08:01:123456 0 EOF"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int(fields[4]),
                fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) == inode
            else { continue }
            let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return "process \(pid)" + (command.map { " (\($0))" } ?? "")
        }
        return nil
    }

    private static func unlock(_ fd: Int32) {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }

    private static func makeDirectory(containing path: String) throws {
        guard let slash = path.lastIndex(of: "/") else { return }
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path[..<slash].split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw StoreError(
                    .io, path: path,
                    message: "cannot create the directory \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }

    // MARK: - Sessions

    /// Starts a session: its row is written at once, with outcome `running`.
    ///
    /// Sessions that an earlier process left `running` and whose process is gone are marked
    /// `interrupted` first.
    ///
    /// The store is first read as `waymark sessions list` reads it (every session with its
    /// counts, which reads every page of its tables): a store that command would refuse as
    /// damaged is refused here, with the same error, before anything is written into it.
    public func beginSession(_ session: NewSession, mode: SessionRecorder.Mode) throws -> SessionRecorder {
        do {
            // A read, outside the write lock: a recording on the same store keeps committing.
            _ = try queue.read { db in try SessionInfo.fetch(db, where: "1", arguments: []) { _ in } }
            let id = try queue.write { db -> Int64 in
                try markInterrupted(db)
                try db.execute(
                    sql: """
                        INSERT INTO session (kind, source, settings, scenario, created_at, epoch, outcome, pid, host, label,
                          uuid, device)
                        VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        session.kind.rawValue, session.source, session.settings, session.scenario,
                        session.createdAt.timeIntervalSince1970, session.epoch.timeIntervalSince1970,
                        Int(session.processID), session.host, session.label, session.uuid.uuidString.lowercased(),
                        session.device,
                    ])
                return db.lastInsertedRowID
            }
            return SessionRecorder(store: self, id: id, mode: mode)
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Marks `running` sessions whose process no longer exists as `interrupted`.
    private func markInterrupted(_ db: Database) throws {
        let running = try Row.fetchAll(db, sql: "SELECT id, pid, host FROM session WHERE outcome = 'running'")
        let host = Self.hostName
        for row in running {
            let id: Int64 = row["id"]
            let pid: Int? = row["pid"]
            let rowHost: String? = row["host"]
            guard rowHost == host, let pid, !Self.processExists(pid) else { continue }
            try db.execute(
                sql: """
                    UPDATE session SET outcome = 'interrupted',
                      outcome_detail = 'the process ended without closing the session (killed or crashed)',
                      duration = max(
                        coalesce((SELECT offset FROM event WHERE id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 ORDER BY id DESC LIMIT 1), 0),
                        coalesce((SELECT offset FROM location WHERE id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 ORDER BY id DESC LIMIT 1), 0))
                    WHERE id = ?1
                    """, arguments: [id])
        }
    }

    static func processExists(_ pid: Int) -> Bool {
        kill(pid_t(pid), 0) == 0 || errno == EPERM
    }

    /// This machine's name, to tell whose process a `running` session belongs to.
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every session, newest first; with `label`, only the sessions labelled exactly so.
    public func sessions(label: String? = nil, badRow: (BadRow) -> Void = { _ in }) throws -> [SessionInfo] {
        do {
            var bad: [BadRow] = []
            let all = try queue.read { db in
                if let label {
                    return try SessionInfo.fetch(db, where: "s.label = ?", arguments: [label]) { bad.append($0) }
                }
                return try SessionInfo.fetch(db, where: "1", arguments: []) { bad.append($0) }
            }
            for row in bad { badRow(row) }
            return all
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// One session, or a ``StoreError/Kind-swift.enum/sessionNotFound`` error.
    public func session(_ id: Int64) throws -> SessionInfo {
        do {
            var bad: BadRow?
            let found = try queue.read { db in
                try SessionInfo.fetch(db, where: "s.id = ?", arguments: [id]) { bad = $0 }
            }
            if let bad {
                throw StoreError(.corrupt, path: path, message: "has a session \(id) it cannot read: \(bad.problem)")
            }
            guard let session = found.first else {
                // A session an upgrade set aside is there, out of reach: say so, and how to get it back.
                if let aside = try? setAside().sessions.first(where: { $0.id == id }) {
                    throw StoreError(
                        .sessionNotFound, path: path,
                        message: "has session \(id) only set aside, in table rejected_session ("
                            + aside.problems.joined(separator: ", ")
                            + "); `waymark sessions restore \(id)` brings it back")
                }
                throw StoreError(
                    .sessionNotFound, path: path, message: "has no session \(id); `waymark sessions list` shows them")
            }
            return session
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Counts of a session's locations by app state and by reason, and its segments.
    public func breakdown(of id: Int64) throws -> SessionBreakdown {
        do {
            return try queue.read { db in
                var b = SessionBreakdown()
                for row in try Row.fetchAll(
                    db,
                    sql:
                        "SELECT c.name AS app_state, count(*) AS n FROM location l JOIN code c ON c.kind = 'app_state' AND c.code = l.app_state WHERE l.id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 GROUP BY 1 ORDER BY 1",
                    arguments: [id])
                {
                    b.byAppState.append((row["app_state"], row["n"]))
                }
                for row in try Row.fetchAll(
                    db,
                    sql:
                        "SELECT c.name AS reason, count(*) AS n FROM location l JOIN code c ON c.kind = 'reason' AND c.code = l.reason WHERE l.id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 GROUP BY 1 ORDER BY 1",
                    arguments: [id])
                {
                    b.byReason.append((row["reason"], row["n"]))
                }
                // Delivered fixes are `location` rows; the rest are `event` rows.
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT name, sum(n) AS n FROM (
                          SELECT name, count(*) AS n FROM event WHERE id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 GROUP BY 1
                          UNION ALL SELECT 'fix', count(*) FROM location WHERE id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775)
                        GROUP BY 1 HAVING sum(n) > 0 ORDER BY 1
                        """,
                    arguments: [id])
                {
                    b.eventsByName.append((row["name"], row["n"]))
                }
                for row in try Row.fetchAll(
                    db,
                    sql:
                        "SELECT offset, data FROM event WHERE name = 'source' AND id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775 ORDER BY id LIMIT ?2",
                    arguments: [id, SessionBreakdown.sourceEventLimit + 1])
                {
                    let data: String = row["data"] ?? ""
                    struct Keys: Decodable {
                        var action: String?
                        var detail: String?
                    }
                    let keys = try? JSONDecoder().decode(Keys.self, from: Data(data.utf8))
                    b.sourceEvents.append(
                        SessionBreakdown.SourceEvent(
                            offset: row["offset"] ?? 0, action: keys?.action ?? "?", detail: keys?.detail))
                }
                b.segments =
                    try Int.fetchOne(
                        db,
                        sql:
                            "SELECT count(DISTINCT segment) FROM location WHERE id BETWEEN ?1 * 1099511627776 AND ?1 * 1099511627776 + 1099511627775",
                        arguments: [id])
                    ?? 0
                return b
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Calls `body` with each of a session's delivered locations, in delivery order, reading in
    /// pages so that memory stays bounded. A row that cannot be read as Waymark writes it is
    /// left out and handed to `badRow`.
    public func forEachLocation(
        of id: Int64, badRow: (BadRow) -> Void = { _ in }, _ body: (StoredLocation) throws -> Void
    ) throws {
        let locations = try locationSequence(of: id)
        for location in locations { try body(location) }
        for bad in locations.badRows { badRow(bad) }
        if let failure = locations.failure { throw failure }
    }

    /// A session's delivered locations, in delivery order, read a page at a time as the
    /// sequence is iterated: for writers that take a `Sequence` (``GeoJSONWriter``,
    /// `forEachGPXEvent`) in bounded memory. An error while reading ends the sequence early and
    /// is kept in ``LocationSequence/failure``: check it after iterating.
    public func locationSequence(of id: Int64) throws -> LocationSequence {
        _ = try session(id)
        return LocationSequence(store: self, session: id)
    }

    /// A session's delivered locations, in delivery order.
    public func locations(of id: Int64) throws -> [StoredLocation] {
        var all: [StoredLocation] = []
        try forEachLocation(of: id) { all.append($0) }
        return all
    }

    /// A session's audit log as NDJSON lines, in order: the same bytes `--audit` writes. A row
    /// that cannot be read as Waymark writes it is left out and handed to `badRow`.
    public func forEachEventLine(
        of id: Int64, badRow: (BadRow) -> Void = { _ in }, _ body: (String) throws -> Void
    ) throws {
        let session = try session(id)
        let page = 4096
        var last: Int64 = -1
        while true {
            let (events, eventsScanned, lastEvent, locations):
                ([(Int64, Double, String, String)], Int, Int64, LocationRow.Page)
            do {
                (events, eventsScanned, lastEvent, locations) = try queue.read { db in
                    let rows = try Row.fetchAll(
                        db,
                        sql:
                            "SELECT id & 1099511627775, offset, name, data FROM event WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                        arguments: [StoreSchema.key(id, last), StoreSchema.lastKey(id), page])
                    var events: [(Int64, Double, String, String)] = []
                    var lastEvent: Int64 = -1
                    for row in rows {
                        var r = ColumnReader(row)
                        let sequence = r.requiredInt64(0, "id")
                        lastEvent = sequence
                        let event = (
                            sequence, r.requiredDouble(1, "offset"), r.requiredString(2, "name"),
                            r.requiredString(3, "data")
                        )
                        if !event.3.hasPrefix("{") || !event.3.hasSuffix("}") {
                            r.note("its data is not a JSON object")
                        }
                        if let problem = r.problem {
                            badRow(BadRow(table: "event", session: id, row: sequence, problem: problem))
                        } else {
                            events.append(event)
                        }
                    }
                    return (
                        events, rows.count, lastEvent, try LocationRow.fetch(db, session: id, after: last, limit: page)
                    )
                }
            } catch {
                throw StoreError(error, path: path)
            }
            for bad in locations.bad { badRow(bad) }
            // Both pages are complete up to the smaller of their last numbers.
            let boundary = min(
                eventsScanned == page ? lastEvent : .max, locations.scanned == page ? locations.lastSequence : .max)
            var e = events.makeIterator()
            var l = locations.rows.makeIterator()
            var nextEvent = e.next()
            var nextLocation = l.next()
            while true {
                if let event = nextEvent, event.0 <= boundary, nextLocation.map({ event.0 < $0.sequence }) ?? true {
                    let (_, offset, name, data) = event
                    let time = ValueFormatting.iso8601(session.epoch.addingTimeInterval(offset))
                    let fields = data.count > 2 ? "," + data.dropFirst() : "}"
                    try body("{\"time\":\"\(time)\",\"event\":\"\(name)\"\(fields)\n")
                    nextEvent = e.next()
                } else if let row = nextLocation, row.sequence <= boundary {
                    try body(row.event.ndjson(epoch: session.epoch))
                    nextLocation = l.next()
                } else {
                    break
                }
            }
            guard boundary != .max else { return }
            last = boundary
        }
    }

    /// Deletes a session with its locations and events; false when there is no such session.
    @discardableResult
    public func deleteSession(_ id: Int64) throws -> Bool {
        do {
            return try queue.write { db in
                try db.execute(
                    sql: "DELETE FROM location WHERE id BETWEEN ? AND ?",
                    arguments: [StoreSchema.key(id), StoreSchema.lastKey(id)])
                try db.execute(
                    sql: "DELETE FROM event WHERE id BETWEEN ? AND ?",
                    arguments: [StoreSchema.key(id), StoreSchema.lastKey(id)])
                try db.execute(sql: "DELETE FROM forwarded WHERE session_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [id])
                return db.changesCount > 0
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Deletes the sessions that began before `cutoff` (by their wall-clock `created_at`), with
    /// their locations and events, in one transaction; sessions still `running` with a live
    /// process are kept. Returns the sessions deleted (as they were), or, with `dryRun`, the
    /// sessions that would be, deleting nothing.
    ///
    /// The caller says what "now" is: `cutoff` is its now less the age, so that tests need no
    /// wall clock.
    public func deleteSessions(createdBefore cutoff: Date, dryRun: Bool = false) throws -> [SessionInfo] {
        func older(_ db: Database) throws -> [SessionInfo] {
            try SessionInfo.fetch(
                db, where: "s.created_at < ?", arguments: [cutoff.timeIntervalSince1970], badRow: { _ in }
            ).filter { $0.outcome != .running }
        }
        do {
            if dryRun { return try queue.read(older) }
            return try queue.write { db in
                let old = try older(db)
                for s in old {
                    try db.execute(
                        sql: "DELETE FROM location WHERE id BETWEEN ? AND ?",
                        arguments: [StoreSchema.key(s.id), StoreSchema.lastKey(s.id)])
                    try db.execute(
                        sql: "DELETE FROM event WHERE id BETWEEN ? AND ?",
                        arguments: [StoreSchema.key(s.id), StoreSchema.lastKey(s.id)])
                    try db.execute(sql: "DELETE FROM forwarded WHERE session_id = ?", arguments: [s.id])
                    try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [s.id])
                }
                return old
            }
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Runs SQLite's integrity check; returns its messages (`["ok"]` when sound).
    public func integrityCheck() throws -> [String] {
        do {
            return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        } catch {
            throw StoreError(error, path: path)
        }
    }
}

/// What a new session records about itself.
public struct NewSession: Sendable {
    public enum Kind: String, Sendable {
        case replay, record
    }

    public var kind: Kind
    /// The trace's path, or gpsd's address.
    public var source: String
    /// The options the session ran with, as a JSON object.
    public var settings: String
    /// The scenario file's text, when one was given.
    public var scenario: String?
    /// The wall-clock time the session began.
    public var createdAt: Date
    /// The instant of offset zero (for replay, the trace's start).
    public var epoch: Date
    public var processID: Int32
    public var host: String
    /// The user's name for the session (`--label`), or nil; never empty.
    public var label: String?
    /// The receiver or machine that recorded it (`--device-name`; schema v6), or nil; never empty.
    public var device: String?
    /// The session's name in every store it reaches (schema v6).
    public var uuid: UUID

    public init(
        kind: Kind, source: String, settings: String, scenario: String?, createdAt: Date, epoch: Date,
        processID: Int32 = getpid(), host: String = SessionStore.hostName, label: String? = nil,
        device: String? = nil, uuid: UUID = UUID()
    ) {
        self.label = label?.isEmpty == true ? nil : label
        self.device = device?.isEmpty == true ? nil : device
        self.uuid = uuid
        self.kind = kind
        self.source = source
        self.settings = settings
        self.scenario = scenario
        self.createdAt = createdAt
        self.epoch = epoch
        self.processID = processID
        self.host = host
    }
}

/// How a session ended.
public enum SessionOutcome: String, Sendable, CaseIterable {
    /// Still recording (or, if its process is gone, shown as interrupted).
    case running
    /// The source ran out, or the duration or count was reached.
    case completed
    /// Stopped by a signal (Ctrl-C, SIGTERM).
    case stopped
    /// Stopped by an error, such as a full disk.
    case failed
    /// Its process ended without closing it: killed or crashed.
    case interrupted
}

/// A session as `waymark sessions list` shows it.
public struct SessionInfo: Sendable, Hashable {
    public var id: Int64
    public var kind: String
    public var source: String
    public var settings: String
    public var scenario: String?
    public var createdAt: Date
    public var epoch: Date
    public var endedAt: Date?
    /// Session time in seconds: at the end, or up to the last event.
    public var duration: Double?
    public var outcome: SessionOutcome
    public var outcomeDetail: String?
    /// The user's name for the session (`--label`; schema v5), or nil.
    public var label: String?
    /// The receiver or machine that recorded it (`--device-name`; schema v6), or nil.
    public var device: String?
    /// Its name in every store (schema v6): lower-case UUID text; nil only for a row restored
    /// from `rejected_session` before it is first forwarded.
    public var uuid: String?
    public var locationCount: Int
    public var eventCount: Int
    /// Fixes that arrived from the source (held fixes delivered later are not counted twice).
    public var fixCount: Int

    public init(
        id: Int64, kind: String, source: String, settings: String, scenario: String?, createdAt: Date, epoch: Date,
        endedAt: Date?, duration: Double?, outcome: SessionOutcome, outcomeDetail: String?, label: String?,
        device: String?, uuid: String?, locationCount: Int, eventCount: Int, fixCount: Int
    ) {
        self.id = id
        self.kind = kind
        self.source = source
        self.settings = settings
        self.scenario = scenario
        self.createdAt = createdAt
        self.epoch = epoch
        self.endedAt = endedAt
        self.duration = duration
        self.outcome = outcome
        self.outcomeDetail = outcomeDetail
        self.label = label
        self.device = device
        self.uuid = uuid
        self.locationCount = locationCount
        self.eventCount = eventCount
        self.fixCount = fixCount
    }

    /// The sessions that match, newest first; a row that cannot be read as Waymark writes it is
    /// left out and handed to `badRow`.
    static func fetch(
        _ db: Database, where condition: String, arguments: StatementArguments, badRow: (BadRow) -> Void
    ) throws -> [SessionInfo] {
        let host = SessionStore.hostName
        // Held fixes delivered later (on resume, or once the user changed to Always) were counted
        // when they arrived.
        let resumedCodes = [FixReason.resumed, .alwaysGranted].map {
            String(StoreCodes.code($0, in: StoreCodes.reason))
        }
        .joined(separator: ", ")
        return try Row.fetchAll(
            db,
            sql: """
                SELECT *, locations + other_events AS events, other_fixes + locations - resumed AS fixes FROM (
                  SELECT s.*,
                    (SELECT count(*) FROM location l WHERE l.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775) AS locations,
                    (SELECT count(*) FROM event e WHERE e.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775) AS other_events,
                    (SELECT count(*) FROM event e WHERE e.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775 AND e.name = 'fix') AS other_fixes,
                    (SELECT count(*) FROM location l WHERE l.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775 AND l.reason IN (\(resumedCodes))) AS resumed,
                    max(
                      coalesce((SELECT offset FROM event e WHERE e.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775 ORDER BY e.id DESC LIMIT 1), 0),
                      coalesce((SELECT offset FROM location l WHERE l.id BETWEEN s.id * 1099511627776 AND s.id * 1099511627776 + 1099511627775 ORDER BY l.id DESC LIMIT 1), 0))
                      AS last_offset
                  FROM session s WHERE \(condition))
                ORDER BY id DESC
                """, arguments: arguments
        ).compactMap { row in
            var r = ColumnReader(row)
            let id = r.requiredInt64(named: "id")
            var outcome = SessionOutcome(rawValue: r.string(named: "outcome") ?? "") ?? .failed
            var detail = r.string(named: "outcome_detail")
            let pid = r.int(named: "pid")
            let rowHost = r.string(named: "host")
            if outcome == .running, rowHost == host, let pid, !SessionStore.processExists(pid) {
                outcome = .interrupted
                detail = "the process ended without closing the session (killed or crashed)"
            }
            let ended = r.double(named: "ended_at")
            let duration = r.double(named: "duration")
            let lastOffset = r.double(named: "last_offset")
            let info = SessionInfo(
                id: id, kind: r.requiredString(named: "kind"), source: r.requiredString(named: "source"),
                settings: r.string(named: "settings") ?? "{}", scenario: r.string(named: "scenario"),
                createdAt: Date(timeIntervalSince1970: r.requiredDouble(named: "created_at")),
                epoch: Date(timeIntervalSince1970: r.requiredDouble(named: "epoch")),
                endedAt: ended.map(Date.init(timeIntervalSince1970:)), duration: duration ?? lastOffset,
                outcome: outcome, outcomeDetail: detail, label: r.string(named: "label"),
                device: r.string(named: "device"), uuid: r.string(named: "uuid"),
                locationCount: r.requiredInt(named: "locations"),
                eventCount: r.requiredInt(named: "events"), fixCount: r.requiredInt(named: "fixes"))
            if let problem = r.problem {
                badRow(BadRow(table: "session", session: id, row: id, problem: problem))
                return nil
            }
            return info
        }
    }
}

/// Counts within one session.
public struct SessionBreakdown: Sendable {
    public var byAppState: [(String, Int)] = []
    public var byReason: [(String, Int)] = []
    public var eventsByName: [(String, Int)] = []
    public var segments = 0
    /// The source's own events (format 4's `source`: gpsd connected, outages, a silent
    /// receiver…), in order, at most ``sourceEventLimit`` and one more to tell there are more.
    public var sourceEvents: [SourceEvent] = []
    public static let sourceEventLimit = 100

    public struct SourceEvent: Sendable {
        /// Seconds from the session's start.
        public var offset: Double
        public var action: String
        public var detail: String?
    }
}

/// A session's locations, read from the store a page at a time.
public struct LocationSequence: Sequence {
    let store: SessionStore
    let session: Int64
    private let box = FailureBox()

    init(store: SessionStore, session: Int64) {
        self.store = store
        self.session = session
    }

    /// The error that ended an iteration early, if any.
    public var failure: StoreError? { box.failure }

    /// The rows left out so far because they cannot be read as Waymark writes them.
    public var badRows: [BadRow] { box.badRows }

    public func makeIterator() -> Iterator { Iterator(sequence: self) }

    public struct Iterator: IteratorProtocol {
        let sequence: LocationSequence
        private var page: [LocationRow] = []
        private var index = 0
        private var last: Int64 = -1
        private var exhausted = false

        init(sequence: LocationSequence) { self.sequence = sequence }

        public mutating func next() -> StoredLocation? {
            if index == page.count {
                guard !exhausted else { return nil }
                let session = sequence.session
                var scanned = 0
                repeat {
                    do {
                        let after = last
                        let fetched = try sequence.store.queue.read { db in
                            try LocationRow.fetch(db, session: session, after: after, limit: 4096)
                        }
                        page = fetched.rows
                        scanned = fetched.scanned
                        if scanned > 0 { last = fetched.lastSequence }
                        sequence.box.badRows += fetched.bad
                    } catch {
                        sequence.box.failure = StoreError(error, path: sequence.store.path)
                        page = []
                        scanned = 0
                    }
                    exhausted = scanned < 4096
                    // A page of bad rows only: read on.
                } while page.isEmpty && !exhausted
                index = 0
                if page.isEmpty { return nil }
            }
            defer { index += 1 }
            return page[index].stored
        }
    }

    final class FailureBox {
        var failure: StoreError?
        var badRows: [BadRow] = []
    }
}
