#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The hot path of ``LocationNDJSONWriter``: a delivered location's NDJSON line, the same bytes
/// as ``StoredLocation/ndjson()`` writes (`StoredLocation.append`, the readable form, which the
/// tests hold this to), written with fewer calls.
///
/// Replay writes one line per delivered fix, so the line's cost is part of every fix's. Here the
/// keys and punctuation between two values go in as one literal, copied inline, and the app
/// state and reason are written without the escaping loop: their raw values are camelCase words
/// (`LocationNDJSONLineTests` checks that none needs escaping).
enum LocationNDJSONLine {
    /// The values of a location that its line shows, copied out of it: a line formatted on
    /// another thread reads these, so that the location's box is counted and freed on the
    /// thread that delivered it alone (a count changed from two threads costs every change).
    struct Fields: Sendable {
        var timestamp: Date
        var latitude: Double
        var longitude: Double
        var horizontalAccuracy: Double
        var hasValidAltitude: Bool
        var altitude: Double
        var verticalAccuracy: Double
        var speed: Double
        var speedAccuracy: Double
        var course: Double
        var courseAccuracy: Double

        @inline(__always)
        init(_ l: borrowing Location) {
            timestamp = l.timestamp
            latitude = l.coordinate.latitude
            longitude = l.coordinate.longitude
            horizontalAccuracy = l.horizontalAccuracy
            hasValidAltitude = l.hasValidAltitude
            altitude = l.altitude
            verticalAccuracy = l.verticalAccuracy
            speed = l.speed
            speedAccuracy = l.speedAccuracy
            course = l.course
            courseAccuracy = l.courseAccuracy
        }
    }

    /// Appends the line of `l`, delivered as the `index`-th point of segment `segment`, to `out`.
    @inline(__always)
    static func append(
        _ l: borrowing Location, index: Int, segment: Int, appState: AppState, reason: FixReason, to out: ByteStore,
        cache: inout ValueFormatting.DayCache
    ) {
        append(Fields(l), index: index, segment: segment, appState: appState, reason: reason, to: out, cache: &cache)
    }

    /// Appends the line of the location whose values are `l`.
    static func append(
        _ l: borrowing Fields, index: Int, segment: Int, appState: AppState, reason: FixReason, to out: ByteStore,
        cache: inout ValueFormatting.DayCache
    ) {
        put("{\"time\":\"", out)
        ValueFormatting.appendISO8601(l.timestamp, to: out, cache: &cache)
        put("\",\"index\":", out)
        ValueFormatting.appendInteger(Int64(index), to: out)
        put(",\"segment\":", out)
        ValueFormatting.appendInteger(Int64(segment), to: out)
        put(",\"appState\":\"", out)
        word(appState.rawValue, out)
        put("\",\"reason\":\"", out)
        word(reason.rawValue, out)
        put("\",\"latitude\":", out)
        number(l.latitude, decimals: 7, out)
        put(",\"longitude\":", out)
        number(l.longitude, decimals: 7, out)
        put(",\"horizontalAccuracy\":", out)
        accuracy(l.horizontalAccuracy, out)
        if l.hasValidAltitude {
            put(",\"altitude\":", out)
            number(l.altitude, decimals: 2, out)
            put(",\"verticalAccuracy\":", out)
            accuracy(l.verticalAccuracy, out)
        }
        if l.speed >= 0 {
            put(",\"speed\":", out)
            number(l.speed, decimals: 2, out)
            if l.speedAccuracy >= 0 {
                put(",\"speedAccuracy\":", out)
                accuracy(l.speedAccuracy, out)
            }
        }
        if l.course >= 0 {
            put(",\"course\":", out)
            number(l.course, decimals: 1, out)
            if l.courseAccuracy >= 0 {
                put(",\"courseAccuracy\":", out)
                accuracy(l.courseAccuracy, out)
            }
        }
        put("}\n", out)
    }

    /// A literal, copied inline (its length is a constant where it is called).
    @inline(__always)
    private static func put(_ literal: StaticString, _ out: ByteStore) {
        out.append(literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// A raw value that needs no escaping, without its quotes.
    @inline(__always)
    private static func word(_ text: String, _ out: ByteStore) {
        var text = text
        text.withUTF8 { out.append($0.baseAddress!, count: $0.count) }
    }

    /// `JSONFields.number`'s value: fixed decimals, or `null` when it is not a number.
    @inline(__always)
    private static func number(_ value: Double, decimals: Int, _ out: ByteStore) {
        if value.isFinite {
            ValueFormatting.appendFixed(value, decimals: decimals, to: out)
        } else {
            put("null", out)
        }
    }

    /// `JSONFields.accuracy`'s value.
    @inline(__always)
    private static func accuracy(_ value: Double, _ out: ByteStore) {
        if value.isFinite {
            ValueFormatting.appendAccuracy(value, to: out)
        } else {
            put("null", out)
        }
    }
}
