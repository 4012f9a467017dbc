import GRDB
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads `location` rows back into ``Waymark/StoredLocation``s: NULL becomes CoreLocation's
/// "invalid" (−1), as ``SessionRecorder`` wrote it.
enum LocationRows {
    static func fetch(_ db: Database, session: Int64, fromSequence: Int64, limit: Int) throws -> [StoredLocation] {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT offset, time, latitude, longitude, altitude, ellipsoidal_altitude, horizontal_accuracy,
                  vertical_accuracy, speed, speed_accuracy, course, course_accuracy, fix_mode, satellites, hdop, vdop,
                  pdop, differential, simulated, speed_derived, course_derived, origin_kind, origin, origin_index,
                  fix_index, segment, app_state, reason
                FROM location WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?
                """, arguments: [session, fromSequence, limit])
        var result: [StoredLocation] = []
        result.reserveCapacity(limit)
        while let row = try rows.next() {
            let originKind: String = row[21]
            let origin: String = row[22]
            let source: Provenance.Source =
                originKind == "gpsd" ? .gpsd(device: origin) : .file(path: origin, index: row[23] ?? 0)
            let provenance = Provenance(
                source: source, isSimulatedBySoftware: row[18], fixMode: Provenance.FixMode(rawValue: row[12]) ?? .none,
                satellitesUsed: row[13], hdop: row[14], vdop: row[15], pdop: row[16],
                differential: Provenance.Differential(rawValue: row[17]) ?? .none, speedIsDerived: row[19],
                courseIsDerived: row[20])
            let altitude: Double? = row[4]
            let location = Location(
                coordinate: Coordinate(latitude: row[2], longitude: row[3]), altitude: altitude ?? 0,
                ellipsoidalAltitude: row[5], horizontalAccuracy: row[6], verticalAccuracy: row[7] ?? -1,
                speed: row[8] ?? -1, speedAccuracy: row[9] ?? -1, course: row[10] ?? -1, courseAccuracy: row[11] ?? -1,
                timestamp: Date(timeIntervalSince1970: row[1]), provenance: provenance)
            let offset: Double = row[0]
            result.append(
                StoredLocation(
                    location: location, appState: AppState(rawValue: row[26]) ?? .active,
                    reason: FixReason(rawValue: row[27]) ?? .foreground, index: row[24], segment: row[25],
                    offset: .nanoseconds(Int64((offset * 1e9).rounded()))))
        }
        return result
    }
}
