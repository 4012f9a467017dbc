import Foundation
import Testing
import Waymark
import WaymarkStore

@testable import WaymarkPostGIS

/// A push's rows made on the client (`DirectRow`) are the rows the server makes itself: the
/// same delivery time to the microsecond, the same point to the bit, on a real server.
@Suite(.serialized) struct DirectRowTests {
    /// Shortest round-trip digits, which PostgreSQL's `float8in` reads back exactly.
    static func literal(_ v: Double?) -> String {
        guard let v else { return "NULL::float8" }
        return "'\(v.isNaN ? "NaN" : "\(v)")'::float8"
    }

    /// Random times over the years PostgreSQL and Waymark share (with fractions that land on
    /// half a microsecond), places over the globe, altitudes and times that may be missing:
    /// the server's `to_timestamp` and `ST_MakePoint` agree with every row.
    @Test func theServerMakesTheSameTimeAndPoint() throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        _ = try cluster.psql("CREATE EXTENSION postgis", database: name)
        var random = SplitMix(seed: 0xD1EC7)
        var rows: [String] = []
        let epochs: [Double] = [0, -2_208_988_800, 946_684_800, 1_714_550_400.25, 4_102_444_800, 253_402_300_000]
        for i in 0..<3000 {
            let epoch: Double
            switch i % 4 {
            case 0: epoch = epochs[i / 4 % epochs.count]
            case 1: epoch = random.unit(-62_000_000_000, 253_000_000_000).rounded()
            case 2: epoch = 1_700_000_000 + random.unit(0, 100_000_000)
            default: epoch = 1_714_550_400
            }
            let offset: Double
            switch i % 3 {
            case 0: offset = Double(i) + 0.000_000_5 * Double(i % 7)
            case 1: offset = random.unit(0, 86_400 * 400)
            default: offset = Double(i) * 0.1
            }
            let longitude = random.unit(-180, 180)
            let latitude = random.unit(-90, 90)
            let altitude: Double? = i % 5 == 0 ? nil : random.unit(-400, 9000)
            let time: Double? = i % 11 == 0 ? nil : epoch + offset + random.unit(-2, 0)
            guard let micros = DirectRow.microsecondsSince2000(epoch + offset), DirectRow.civil(micros) != nil else {
                continue
            }
            let atText = DirectRow.string { DirectRow.timestamp(micros, into: &$0) }
            let pointText = DirectRow.string {
                DirectRow.point(x: longitude, y: latitude, z: altitude ?? .nan, m: time ?? .nan, into: &$0)
            }
            rows.append(
                "(\(i), \(Self.literal(epoch)), \(Self.literal(offset)), '\(atText)', \(Self.literal(longitude)), "
                    + "\(Self.literal(latitude)), \(Self.literal(altitude)), \(Self.literal(time)), '\(pointText)')")
        }
        #expect(rows.count > 2500)
        // A few hundred rows per statement: an argument of psql's stays well under Linux's 128 KiB.
        for start in stride(from: 0, to: rows.count, by: 250) {
            let batch = rows[start..<min(rows.count, start + 250)]
            let disagreements = try cluster.psql(
                """
                SELECT coalesce(string_agg(i::text || ': ' || at || ' / ' || to_timestamp(e + o)::text, '; '), 'none')
                FROM (VALUES \(batch.joined(separator: ", "))) v(i, e, o, at, lon, lat, alt, t, g)
                WHERE to_timestamp(e + o) <> at::timestamptz
                  OR upper(encode(ST_AsEWKB(ST_SetSRID(ST_MakePoint(lon, lat, coalesce(alt, 'NaN'),
                     coalesce(t, 'NaN')), 4326), 'NDR'), 'hex')) <> g
                """, database: name)
            #expect(disagreements == "none")
        }
    }

    /// A row written in one piece is its fields joined by tabs, each as ``CopyText`` writes it
    /// alone; a row with a text value (which SQLite may keep in a REAL column) is written a
    /// value at a time instead, and reads the same. Rows follow one another in one buffer.
    @Test func aRowIsItsFieldsJoinedByTabs() throws {
        let layout = try #require(DirectRow.Layout.transfer)
        let columns = StoreSchema.transferLocationColumns.count
        var random = SplitMix(seed: 0x7AB5)
        let extremes: [TransferValue] = [
            .integer(.min), .integer(.max), .real(-2.2250738585072014e-308), .real(-.greatestFiniteMagnitude),
            .real(-.infinity), .real(.nan), .real(-0.0), .real(-8_999_999.999_999_999), .null,
        ]
        var rows: [(session: Int64, sequence: Int64, origin: Int32, values: [TransferValue])] = []
        var expected = ""
        for i in 0..<2000 {
            var values: [TransferValue] = (0..<columns).map { c in
                switch random.next() % 6 {
                case 0: .null
                case 1: .integer(Int64(bitPattern: random.next()) >> (random.next() % 64))
                case 2: .real(Double(bitPattern: random.next()))
                case 3: .real(Double(Int64(random.next() % 2_000_000_000) - 1_000_000_000) / 10_000_000)
                case 4: extremes[(c + i) % extremes.count]
                default: .real(random.unit(-1000, 1000))
                }
            }
            if i % 7 == 0 { values[(i / 7) % columns] = .text("a\tb\\c\nd \(i)") }
            values[layout.offset] = .real(Double(i) * 0.25)
            let epoch = 1_714_550_400.0  // as written below
            let session = Int64(bitPattern: random.next())
            let sequence = Int64(i)
            rows.append((session, sequence, Int32(i), values))
            let micros = try #require(DirectRow.microsecondsSince2000(epoch + Double(i) * 0.25))
            let fixed = [
                "\(session)", "\(sequence)", DirectRow.string { DirectRow.timestamp(micros, into: &$0) },
                DirectRow.string {
                    DirectRow.point(
                        x: DirectRow.number(values[layout.longitude]) ?? .nan,
                        y: DirectRow.number(values[layout.latitude]) ?? .nan,
                        z: DirectRow.number(values[layout.altitude]) ?? .nan,
                        m: DirectRow.number(values[layout.time]) ?? .nan, into: &$0)
                },
                "\(i)",
            ]
            expected += (fixed + values.map { CopyText.field($0) }).joined(separator: "\t") + "\n"
        }
        // The longest row there is: every number at its longest (the offset too, near 0).
        do {
            let longest = -2.2250738585072014e-308
            var values = [TransferValue](repeating: .real(longest), count: columns)
            values[layout.offset] = .real(-1.2345678901234567e-300)
            rows.append((.min, .min, .min, values))
            let micros = try #require(DirectRow.microsecondsSince2000(1_714_550_400))
            let fixed = [
                "\(Int64.min)", "\(Int64.min)", DirectRow.string { DirectRow.timestamp(micros, into: &$0) },
                DirectRow.string { DirectRow.point(x: longest, y: longest, z: longest, m: longest, into: &$0) },
                "\(Int32.min)",
            ]
            let line = (fixed + values.map { CopyText.field($0) }).joined(separator: "\t") + "\n"
            // Two 20-digit integers, the time, the point, an 11-byte origin, four tabs; then a tab
            // and 24 bytes per value, and the line's end.
            #expect(line.utf8.count == 20 + 20 + 29 + 82 + 11 + 4 + columns * 25 + 1)
            expected += line
        }
        let written = DirectRow.string { buffer in
            for row in rows {
                layout.row(
                    session: row.session, epoch: 1_714_550_400, sequence: row.sequence, origin: row.origin,
                    row.values, into: &buffer)
            }
        }
        #expect(written == expected)
    }

    /// A page goes straight into `location`; sent again after a lost acknowledgement, it breaks
    /// the key, is written through the temporary table instead, and every row is there once,
    /// with the time and the point the server's own way gives.
    @Test func pagesGoStraightInAndASecondSendingIsKeptOnce() async throws {
        let cluster = try PostgresCluster.start()
        let name = try cluster.newDatabase()
        let local = try PostGISTests.localStore(runs: 2)
        let store = try SessionStore(path: local, mode: .existing)
        let address = try PostGISAddress(cluster.address(database: name))
        let first = try await PostGISStore.open(address)
        for session in try store.transferSessions() {
            _ = try await first.push(session, from: store, pageSize: 50)
        }
        #expect(await first.directPages > 2)
        #expect(await first.resentPages == 0)
        await first.close()

        _ = try cluster.psql("UPDATE waymark.session SET last_seq = -1", database: name)
        let second = try await PostGISStore.open(address)
        for session in try store.transferSessions() {
            _ = try await second.push(session, from: store, pageSize: 50)
        }
        #expect(await second.resentPages > 2)
        await second.close()

        #expect(
            try cluster.psql(
                "SELECT count(*) = count(DISTINCT (session_id, seq)) FROM waymark.location", database: name) == "t")
        #expect(
            try cluster.psql(
                """
                SELECT count(*) FROM waymark.location l JOIN waymark.session s ON s.id = l.session_id
                WHERE l.at <> to_timestamp(s.epoch + l."offset")
                  OR ST_AsEWKB(l.geom) <> ST_AsEWKB(ST_SetSRID(ST_MakePoint(l.longitude, l.latitude,
                     coalesce(l.altitude, 'NaN'), coalesce(l."time", 'NaN')), 4326))
                """, database: name) == "0")
        try PostGISTests.expectSameSessions(local: local, server: cluster.address(database: name))
    }
}

/// `last_seq` over pages that commit out of order: never past a page that has not committed,
/// and, in order, each page's own end at once.
@Suite struct PageLedgerTests {
    @Test func lastSeqNeverPassesAPageThatHasNotCommitted() {
        var random = SplitMix(seed: 0x1ED6E5)
        for _ in 0..<300 {
            let pages = 1 + Int(random.next() % 40)
            let lanes = 1 + Int(random.next() % 4)
            let ledger = PageLedger()
            var ends: [Int64] = []
            var end: Int64 = -1
            for _ in 0..<pages {
                end += 1 + Int64(random.next() % 50)
                ends.append(end)
            }
            var committed = Set<Int>()
            var inFlight: [Int] = []
            var nextPage = 0
            var lastSeq: Int64 = -1
            while committed.count < pages {
                // Up to `lanes` pages in flight; one of them, at random, commits.
                while inFlight.count < lanes, nextPage < pages {
                    ledger.add(nextPage, last: ends[nextPage])
                    inFlight.append(nextPage)
                    nextPage += 1
                }
                let page = inFlight.remove(at: Int(random.next() % UInt64(inFlight.count)))
                if let mark = ledger.mark(for: page) { lastSeq = max(lastSeq, mark) }
                committed.insert(page)
                ledger.committed(page)
                for (number, pageEnd) in ends.enumerated() where pageEnd <= lastSeq {
                    #expect(committed.contains(number), "last_seq \(lastSeq) passed page \(number)")
                }
            }
            // The last page to commit brings last_seq to the end unless it committed early.
            if lanes == 1 { #expect(lastSeq == ends.last) }
        }
    }

    @Test func inOrderEachPageMovesItToItsOwnEnd() {
        let ledger = PageLedger()
        for page in 0..<10 {
            ledger.add(page, last: Int64(page * 10 + 9))
            #expect(ledger.mark(for: page) == Int64(page * 10 + 9))
            ledger.committed(page)
        }
    }
}
