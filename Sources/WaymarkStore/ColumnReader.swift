import GRDB
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A row the store holds that cannot be read as Waymark writes it: a NULL where a value must
/// be, text in a number column, bytes that are not UTF-8, a latitude of 200. Such rows come from
/// `sqlite3 .recover` or from other programs; they are left out and reported, never trapped on,
/// and the rest of the session is still listed or exported.
public struct BadRow: Sendable, Hashable, CustomStringConvertible {
    /// `session`, `location` or `event`.
    public var table: String
    public var session: Int64
    /// The row's number within its session (its id for a session row).
    public var row: Int64
    public var problem: String

    public var description: String {
        table == "session"
            ? "session \(session): its row cannot be read (\(problem)); it is left out"
            : "session \(session), \(table) row \(row): \(problem); the row is left out"
    }
}

/// Reads a row's columns by type without trapping: GRDB's typed subscripts stop the process on
/// a NULL or a value of another type. The first problem is kept, and the caller leaves the row
/// out.
struct ColumnReader {
    let row: Row
    private(set) var problem: String?

    init(_ row: Row) { self.row = row }

    private mutating func fail(_ name: String, _ what: String) {
        if problem == nil { problem = "\(name) \(what)" }
    }

    /// Notes a problem the caller found.
    mutating func note(_ what: String) {
        if problem == nil { problem = what }
    }

    private func value(_ i: Int) -> DatabaseValue { row[i] }

    /// A number; NULL is nil.
    mutating func double(_ i: Int, _ name: String) -> Double? {
        switch value(i).storage {
        case .null: return nil
        case .int64(let v): return Double(v)
        case .double(let v):
            guard v.isFinite else {
                fail(name, "is not a finite number")
                return nil
            }
            return v
        case .string(let s):
            fail(name, "holds the text '\(s.prefix(24))', not a number")
            return nil
        case .blob:
            fail(name, "holds bytes, not a number")
            return nil
        }
    }

    mutating func requiredDouble(_ i: Int, _ name: String) -> Double {
        if let v = double(i, name) { return v }
        fail(name, "is NULL")
        return 0
    }

    /// A whole number; NULL is nil.
    mutating func int64(_ i: Int, _ name: String) -> Int64? {
        switch value(i).storage {
        case .null: return nil
        case .int64(let v): return v
        case .double(let v):
            guard v == v.rounded(), abs(v) < 9.2e18 else {
                fail(name, "holds \(v), not a whole number")
                return nil
            }
            return Int64(v)
        case .string(let s):
            fail(name, "holds the text '\(s.prefix(24))', not a whole number")
            return nil
        case .blob:
            fail(name, "holds bytes, not a whole number")
            return nil
        }
    }

    mutating func requiredInt64(_ i: Int, _ name: String) -> Int64 {
        if let v = int64(i, name) { return v }
        fail(name, "is NULL")
        return 0
    }

    mutating func int(_ i: Int, _ name: String) -> Int? { int64(i, name).map { Int(truncatingIfNeeded: $0) } }

    mutating func requiredInt(_ i: Int, _ name: String) -> Int { Int(truncatingIfNeeded: requiredInt64(i, name)) }

    /// Text; NULL is nil. Bytes are taken when they are UTF-8.
    mutating func string(_ i: Int, _ name: String) -> String? {
        switch value(i).storage {
        case .null: return nil
        case .string(let s): return s
        case .blob(let data):
            guard let s = String(bytes: data, encoding: .utf8) else {
                fail(name, "holds bytes that are not UTF-8 text")
                return nil
            }
            return s
        case .int64, .double:
            fail(name, "holds a number, not text")
            return nil
        }
    }

    mutating func requiredString(_ i: Int, _ name: String) -> String {
        if let v = string(i, name) { return v }
        fail(name, "is NULL")
        return ""
    }

    /// The column called `name` (a problem when there is none).
    private mutating func index(_ name: String) -> Int? {
        if let i = row.columnNames.firstIndex(of: name) {
            return row.columnNames.distance(from: row.columnNames.startIndex, to: i)
        }
        fail(name, "is not a column")
        return nil
    }

    mutating func double(named name: String) -> Double? { index(name).flatMap { double($0, name) } }
    mutating func requiredDouble(named name: String) -> Double { index(name).map { requiredDouble($0, name) } ?? 0 }
    mutating func int(named name: String) -> Int? { index(name).flatMap { int($0, name) } }
    mutating func requiredInt(named name: String) -> Int { index(name).map { requiredInt($0, name) } ?? 0 }
    mutating func requiredInt64(named name: String) -> Int64 { index(name).map { requiredInt64($0, name) } ?? 0 }
    mutating func string(named name: String) -> String? { index(name).flatMap { string($0, name) } }
    mutating func requiredString(named name: String) -> String {
        index(name).map { requiredString($0, name) } ?? ""
    }

    /// A latitude and longitude, both there and in range.
    mutating func coordinate(_ latitude: Int, _ longitude: Int) -> Coordinate {
        let lat = requiredDouble(latitude, "latitude")
        let lon = requiredDouble(longitude, "longitude")
        if abs(lat) > 90 { fail("latitude", "is \(lat), outside -90...90") }
        if abs(lon) > 180 { fail("longitude", "is \(lon), outside -180...180") }
        return Coordinate(latitude: lat, longitude: lon)
    }
}
