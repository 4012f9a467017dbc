import GRDB
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One `location` row: the location as the app stored it, and the `fix` audit event it came with.
struct LocationRow {
    var sequence: Int64
    var offset: Duration
    var stored: StoredLocation
    var fix: AuditEvent.FixRecord

    var event: AuditEvent { AuditEvent(offset: offset, kind: .fix(fix)) }

    /// Up to `limit` rows of `session` after the sequence number `sequence` (−1: from the
    /// start), in order; NULL becomes CoreLocation's "invalid" (−1), as ``SessionRecorder``
    /// wrote it. A row that cannot be read as Waymark writes it is left out and named in
    /// ``Page/bad``; ``Page/scanned`` and ``Page/lastSequence`` count it, for paging.
    static func fetch(_ db: Database, session: Int64, after sequence: Int64, limit: Int) throws -> Page {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT l.id, l.offset, l.time, l.latitude, l.longitude, l.altitude, l.ellipsoidal_altitude,
                  l.horizontal_accuracy, l.vertical_accuracy, l.speed, l.speed_accuracy, l.course, l.course_accuracy,
                  l.fix_mode, l.satellites, l.hdop, l.vdop, l.pdop, l.differential, l.flags, l.origin_index, o.kind,
                  o.name, l.fix_index, l.segment, l.app_state, l.reason, l.authorization, l.accuracy_authorization,
                  l.source_latitude, l.source_longitude, l.background_time_remaining
                FROM location l LEFT JOIN origin o ON o.id = l.origin_id
                WHERE l.id > ? AND l.id <= ? ORDER BY l.id LIMIT ?
                """,
            arguments: [StoreSchema.key(session, max(-1, sequence)), StoreSchema.lastKey(session), limit])
        var page = Page()
        page.rows.reserveCapacity(min(limit, 4096))
        while let row = try rows.next() {
            var r = ColumnReader(row)
            let id = r.requiredInt64(0, "id")
            page.scanned += 1
            page.lastSequence = id & (1 << 40 - 1)
            let flags = r.int64(19, "flags") ?? 0
            let originKind = r.string(21, "origin kind")
            let origin = r.string(22, "origin name")
            if originKind == nil || origin == nil { r.note("its origin (trace or device) is missing") }
            let source: Provenance.Source =
                originKind == "gpsd"
                ? .gpsd(device: origin ?? "") : .file(path: origin ?? "", index: r.int(20, "origin index") ?? 0)
            let provenance = Provenance(
                source: source, isSimulatedBySoftware: flags & 1 != 0,
                fixMode: StoreCodes.value(r.int64(13, "fix mode") ?? -1, in: StoreCodes.fixMode, default: .none),
                satellitesUsed: r.int(14, "satellites"), hdop: r.double(15, "hdop"), vdop: r.double(16, "vdop"),
                pdop: r.double(17, "pdop"),
                differential: StoreCodes.value(
                    r.int64(18, "differential") ?? -1, in: StoreCodes.differential, default: .none),
                speedIsDerived: flags & 2 != 0, courseIsDerived: flags & 4 != 0)
            let location = Location(
                coordinate: r.coordinate(3, 4), altitude: r.double(5, "altitude") ?? 0,
                ellipsoidalAltitude: r.double(6, "ellipsoidal altitude"),
                horizontalAccuracy: r.requiredDouble(7, "horizontal accuracy"),
                verticalAccuracy: r.double(8, "vertical accuracy") ?? -1, speed: r.double(9, "speed") ?? -1,
                speedAccuracy: r.double(10, "speed accuracy") ?? -1, course: r.double(11, "course") ?? -1,
                courseAccuracy: r.double(12, "course accuracy") ?? -1,
                timestamp: Date(timeIntervalSince1970: r.requiredDouble(2, "time")), provenance: provenance)
            // Years −9999 to 9999, the times Waymark reads and writes.
            let time = location.timestamp.timeIntervalSince1970
            if !ValueFormatting.readableSeconds.contains(time) {
                r.note("time \(time) is outside the years −9999 to 9999")
            }
            let offset = duration(r.requiredDouble(1, "offset"))
            let appState = StoreCodes.value(r.requiredInt64(25, "app state"), in: StoreCodes.appState, default: .active)
            let reason = StoreCodes.value(r.requiredInt64(26, "reason"), in: StoreCodes.reason, default: .foreground)
            let index = r.requiredInt(23, "fix index")
            let segment = r.requiredInt(24, "segment")
            let sourceLatitude = r.double(29, "source latitude")
            let sourceLongitude = r.double(30, "source longitude")
            let remaining = r.double(31, "background time remaining")
            let fix = AuditEvent.FixRecord(
                index: index, segment: segment, decision: .delivered, reason: reason, appState: appState,
                authorization: StoreCodes.value(
                    r.requiredInt64(27, "authorization"), in: StoreCodes.authorization, default: .notDetermined),
                accuracy: StoreCodes.value(
                    r.requiredInt64(28, "accuracy authorization"), in: StoreCodes.accuracy, default: .fullAccuracy),
                coordinate: sourceLatitude.flatMap { lat in
                    sourceLongitude.map { Coordinate(latitude: lat, longitude: $0) }
                }
                    ?? location.coordinate,
                delivered: location, backgroundTimeRemaining: remaining.map(duration), indicator: flags & 8 != 0,
                positioning: StoreCodes.value((flags >> 4) & 3, in: StoreCodes.positioning, default: .satellite))
            if let problem = r.problem {
                page.bad.append(BadRow(table: "location", session: session, row: page.lastSequence, problem: problem))
                continue
            }
            page.rows.append(
                LocationRow(
                    sequence: page.lastSequence, offset: offset,
                    stored: StoredLocation(
                        location: location, appState: appState, reason: reason, index: index, segment: segment,
                        offset: offset),
                    fix: fix))
        }
        return page
    }

    /// One page of ``fetch(_:session:after:limit:)``.
    struct Page {
        var rows: [LocationRow] = []
        /// Rows read, the bad ones included, and the sequence number of the last.
        var scanned = 0
        var lastSequence: Int64 = -1
        var bad: [BadRow] = []
    }

    /// A stored offset or time remaining; beyond what a duration holds (a row Waymark never
    /// wrote, from `sqlite3 .recover` say) it is held at the longest one rather than trap.
    static func duration(_ seconds: Double) -> Duration { Duration.saturating(seconds: seconds) }
}
