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
    /// wrote it.
    static func fetch(_ db: Database, session: Int64, after sequence: Int64, limit: Int) throws -> [LocationRow] {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT l.id, l.offset, l.time, l.latitude, l.longitude, l.altitude, l.ellipsoidal_altitude,
                  l.horizontal_accuracy, l.vertical_accuracy, l.speed, l.speed_accuracy, l.course, l.course_accuracy,
                  l.fix_mode, l.satellites, l.hdop, l.vdop, l.pdop, l.differential, l.flags, l.origin_index, o.kind,
                  o.name, l.fix_index, l.segment, l.app_state, l.reason, l.authorization, l.accuracy_authorization,
                  l.source_latitude, l.source_longitude, l.background_time_remaining
                FROM location l JOIN origin o ON o.id = l.origin_id
                WHERE l.id > ? AND l.id <= ? ORDER BY l.id LIMIT ?
                """,
            arguments: [StoreSchema.key(session, max(-1, sequence)), StoreSchema.lastKey(session), limit])
        var result: [LocationRow] = []
        result.reserveCapacity(min(limit, 4096))
        while let row = try rows.next() {
            let flags: Int64 = row[19]
            let originKind: String = row[21]
            let origin: String = row[22]
            let source: Provenance.Source =
                originKind == "gpsd" ? .gpsd(device: origin) : .file(path: origin, index: row[20] ?? 0)
            let provenance = Provenance(
                source: source, isSimulatedBySoftware: flags & 1 != 0,
                fixMode: StoreCodes.value(row[13], in: StoreCodes.fixMode, default: .none),
                satellitesUsed: row[14], hdop: row[15], vdop: row[16], pdop: row[17],
                differential: StoreCodes.value(row[18], in: StoreCodes.differential, default: .none),
                speedIsDerived: flags & 2 != 0, courseIsDerived: flags & 4 != 0)
            let altitude: Double? = row[5]
            let location = Location(
                coordinate: Coordinate(latitude: row[3], longitude: row[4]), altitude: altitude ?? 0,
                ellipsoidalAltitude: row[6], horizontalAccuracy: row[7], verticalAccuracy: row[8] ?? -1,
                speed: row[9] ?? -1, speedAccuracy: row[10] ?? -1, course: row[11] ?? -1, courseAccuracy: row[12] ?? -1,
                timestamp: Date(timeIntervalSince1970: row[2]), provenance: provenance)
            let offset = duration(row[1])
            let appState = StoreCodes.value(row[25], in: StoreCodes.appState, default: .active)
            let reason = StoreCodes.value(row[26], in: StoreCodes.reason, default: .foreground)
            let index: Int = row[23]
            let segment: Int = row[24]
            let sourceLatitude: Double? = row[29]
            let sourceLongitude: Double? = row[30]
            let remaining: Double? = row[31]
            let fix = AuditEvent.FixRecord(
                index: index, segment: segment, decision: .delivered, reason: reason, appState: appState,
                authorization: StoreCodes.value(row[27], in: StoreCodes.authorization, default: .notDetermined),
                accuracy: StoreCodes.value(row[28], in: StoreCodes.accuracy, default: .fullAccuracy),
                coordinate: sourceLatitude.flatMap { lat in
                    sourceLongitude.map { Coordinate(latitude: lat, longitude: $0) }
                }
                    ?? location.coordinate,
                delivered: location, backgroundTimeRemaining: remaining.map(duration), indicator: flags & 8 != 0,
                positioning: StoreCodes.value((flags >> 4) & 3, in: StoreCodes.positioning, default: .satellite))
            let id: Int64 = row[0]
            result.append(
                LocationRow(
                    sequence: id & (1 << 40 - 1), offset: offset,
                    stored: StoredLocation(
                        location: location, appState: appState, reason: reason, index: index, segment: segment,
                        offset: offset),
                    fix: fix))
        }
        return result
    }

    /// A stored offset or time remaining; beyond what a duration holds (a row Waymark never
    /// wrote, from `sqlite3 .recover` say) it is held at the longest one rather than trap.
    static func duration(_ seconds: Double) -> Duration { Duration.saturating(seconds: seconds) }
}
