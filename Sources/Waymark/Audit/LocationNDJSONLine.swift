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
    /// Appends the line of `l`, delivered as the `index`-th point of segment `segment`, to `out`.
    static func append(
        _ l: borrowing Location, index: Int, segment: Int, appState: AppState, reason: FixReason, to out: ByteStore,
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
        number(l.coordinate.latitude, decimals: 7, out)
        put(",\"longitude\":", out)
        number(l.coordinate.longitude, decimals: 7, out)
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
