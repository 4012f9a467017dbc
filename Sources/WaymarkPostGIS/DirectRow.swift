import NIOCore
import Waymark
import WaymarkStore

/// A `location` row of the PostGIS store in `COPY`'s text format, made on the client: the hot
/// path of a push (``PostGISStore`` sends pages this way first).
///
/// The server's other way in, through a temporary table, computes two columns itself:
/// `at = to_timestamp(epoch + offset)` and `geom = ST_SetSRID(ST_MakePoint(longitude,
/// latitude, coalesce(altitude, 'NaN'), coalesce(time, 'NaN')), 4326)`. Here they are made as
/// PostgreSQL makes them, to the microsecond and the bit, so that a row has the same key and
/// the same values whichever way it came (`DirectRowTests` compares both ways on a server):
/// - `at`: `float8_timestamptz` subtracts the seconds from 1970 to 2000 and rounds the
///   microseconds half to even (`rint`); written as `YYYY-MM-DD HH:MM:SS.ffffff+00`.
/// - `geom`: extended WKB, little-endian, type PointZM with SRID 4326, in hexadecimal, which
///   PostGIS reads as its own text form.
enum DirectRow {
    /// Where the columns a row needs are among ``StoreSchema/transferLocationColumns``.
    struct Layout: Sendable {
        var offset: Int
        var time: Int
        var latitude: Int
        var longitude: Int
        var altitude: Int

        /// The store's transfer columns.
        static let transfer: Layout? = {
            let names = StoreSchema.transferLocationColumns.map(\.name)
            guard let offset = names.firstIndex(of: "offset"), let time = names.firstIndex(of: "time"),
                let latitude = names.firstIndex(of: "latitude"), let longitude = names.firstIndex(of: "longitude"),
                let altitude = names.firstIndex(of: "altitude")
            else { return nil }
            return Layout(offset: offset, time: time, latitude: latitude, longitude: longitude, altitude: altitude)
        }()

        /// Whether every row of `locations` can be made here: a point with both coordinates
        /// and a delivery time within the years 1 to 9999 (anything else goes the server's
        /// way, which accepts or refuses it itself).
        func fits(_ locations: [TransferLocation], epoch: Double) -> Bool {
            for location in locations {
                let values = location.values
                guard values.count > max(offset, time, latitude, longitude, altitude),
                    DirectRow.number(values[latitude]) != nil, DirectRow.number(values[longitude]) != nil,
                    let offset = DirectRow.number(values[offset]),
                    let micros = DirectRow.microsecondsSince2000(epoch + offset),
                    DirectRow.civil(micros) != nil
                else { return false }
            }
            return true
        }

        /// One row: `session_id`, `seq`, `at`, `geom`, `origin_id`, then the transfer columns.
        /// Written in one reservation of the buffer (``CopyBytes``) unless a value is text.
        func row(
            session: Int64, epoch: Double, sequence: Int64, origin: Int32, _ values: [TransferValue],
            into buffer: inout ByteBuffer
        ) {
            // The fixed columns, then each value and its tab, then the line's end.
            let bound = Self.fixedColumnsBound + values.count * (CopyBytes.numberBound + 1) + 1
            let start = buffer.writerIndex
            var hasText = false
            buffer.writeCopyBytes(bound: bound) { out in
                fixedColumns(session: session, epoch: epoch, sequence: sequence, origin: origin, values, into: &out)
                for value in values {
                    out.byte(UInt8(ascii: "\t"))
                    guard out.field(value) else {
                        hasText = true
                        return
                    }
                }
                out.byte(UInt8(ascii: "\n"))
            }
            guard hasText else { return }
            // A text value (SQLite keeps what it is given in a REAL column) has no bound on its
            // escaped length: the row is written again, a value at a time.
            buffer.moveWriterIndex(to: start)
            buffer.writeCopyBytes(bound: Self.fixedColumnsBound) { out in
                fixedColumns(session: session, epoch: epoch, sequence: sequence, origin: origin, values, into: &out)
            }
            for value in values {
                buffer.writeInteger(UInt8(ascii: "\t"))
                CopyText.value(value, into: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
        }

        /// The most bytes ``fixedColumns(session:epoch:sequence:origin:_:into:)`` writes: three
        /// integers, the time, the point and four tabs.
        static let fixedColumnsBound =
            3 * CopyBytes.numberBound + DirectRow.timestampLength + DirectRow.pointLength + 4

        /// `session_id`, `seq`, `at`, `geom` and `origin_id`, tab-separated.
        @inline(__always)
        private func fixedColumns(
            session: Int64, epoch: Double, sequence: Int64, origin: Int32, _ values: [TransferValue],
            into out: inout CopyBytes
        ) {
            out.integer(session)
            out.byte(UInt8(ascii: "\t"))
            out.integer(sequence)
            out.byte(UInt8(ascii: "\t"))
            let offset = DirectRow.number(values[offset]) ?? 0
            DirectRow.timestamp(DirectRow.microsecondsSince2000(epoch + offset) ?? 0, into: &out)
            out.byte(UInt8(ascii: "\t"))
            DirectRow.point(
                x: DirectRow.number(values[longitude]) ?? .nan, y: DirectRow.number(values[latitude]) ?? .nan,
                z: DirectRow.number(values[altitude]) ?? .nan, m: DirectRow.number(values[time]) ?? .nan,
                into: &out)
            out.byte(UInt8(ascii: "\t"))
            out.integer(Int64(origin))
        }
    }

    /// What `write` writes, as a string.
    static func string(_ write: (inout ByteBuffer) -> Void) -> String {
        var buffer = ByteBuffer()
        write(&buffer)
        return buffer.readString(length: buffer.readableBytes) ?? ""
    }

    @inline(__always)
    static func number(_ value: TransferValue) -> Double? {
        switch value {
        case .real(let v): v
        case .integer(let v): Double(v)
        case .null, .text: nil
        }
    }

    /// `to_timestamp(seconds)` as PostgreSQL's `float8_timestamptz` computes it: microseconds
    /// since 2000-01-01 UTC; nil where it would refuse (not finite, out of range).
    static func microsecondsSince2000(_ unixSeconds: Double) -> Int64? {
        guard unixSeconds.isFinite else { return nil }
        let seconds = unixSeconds - 946_684_800
        let micros = (seconds * 1_000_000).rounded(.toNearestOrEven)
        guard abs(micros) < 9.2e18 else { return nil }
        return Int64(micros)
    }

    /// The calendar date (UTC) and the microseconds into its day, for years 1 to 9999.
    static func civil(_ micros: Int64) -> (year: Int, month: Int, day: Int, micros: Int64)? {
        let perDay: Int64 = 86_400_000_000
        var days = micros / perDay
        var inDay = micros % perDay
        if inDay < 0 {
            inDay += perDay
            days -= 1
        }
        // From 1970-01-01, 10 957 days before 2000-01-01.
        let (year, month, day) = ValueParsing.civil(fromDays: Int(days) + 10_957)
        guard (1...9999).contains(year) else { return nil }
        return (year, month, day, inDay)
    }

    /// The length of ``timestamp(_:into:)``'s text, and of ``point(x:y:z:m:into:)``'s.
    static let timestampLength = 29
    static let pointLength = 82

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00` (``timestampLength`` bytes). The time must lie in the years 1–9999
    /// (``civil(_:)``): ``Layout/fits(_:epoch:)`` keeps a page with any other off the direct path.
    static func timestamp(_ micros: Int64, into out: inout CopyBytes) {
        guard let (year, month, day, inDay) = civil(micros) else {
            preconditionFailure("\(micros) µs after 2000 is outside the years 1–9999: the page should not go direct")
        }
        let seconds = Int(inDay / 1_000_000)
        out.digits(year, width: 4)
        out.byte(UInt8(ascii: "-"))
        out.digits(month, width: 2)
        out.byte(UInt8(ascii: "-"))
        out.digits(day, width: 2)
        out.byte(UInt8(ascii: " "))
        out.digits(seconds / 3600, width: 2)
        out.byte(UInt8(ascii: ":"))
        out.digits(seconds / 60 % 60, width: 2)
        out.byte(UInt8(ascii: ":"))
        out.digits(seconds % 60, width: 2)
        out.byte(UInt8(ascii: "."))
        out.digits(Int(inDay % 1_000_000), width: 6)
        out.bytes("+00")
    }

    /// The same time, at the end of `buffer`.
    static func timestamp(_ micros: Int64, into buffer: inout ByteBuffer) {
        buffer.writeCopyBytes(bound: timestampLength) { timestamp(micros, into: &$0) }
    }

    /// The point as hexadecimal extended WKB (``pointLength`` bytes): byte order 1 (little-endian), type
    /// 0xE0000001 (a point with Z, M and an SRID), SRID 4326, then x, y, z, m.
    static func point(x: Double, y: Double, z: Double, m: Double, into out: inout CopyBytes) {
        // 01, E0000001 and 4326 (0x10E6), each little-endian.
        out.bytes("01010000E0E6100000")
        out.hexadecimal(x)
        out.hexadecimal(y)
        out.hexadecimal(z)
        out.hexadecimal(m)
    }

    /// The same point, at the end of `buffer`.
    static func point(x: Double, y: Double, z: Double, m: Double, into buffer: inout ByteBuffer) {
        buffer.writeCopyBytes(bound: pointLength) { point(x: x, y: y, z: z, m: m, into: &$0) }
    }
}
