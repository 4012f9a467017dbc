import Foundation
import Testing
import Waymark
import WaymarkStore

@testable import WaymarkPostGIS

/// The fleet's queries (`--device`, `--since`, `--until`, `--near`, `--within`) answer alike on
/// both stores, and as a brute-force reading of every location says.
@Suite(.serialized) struct FleetQueryTests {
    /// A location row of `StoreSchema.transferLocationColumns`, as Waymark writes one.
    static func row(sequence: Int64, offset: Double, time: Double, latitude: Double, longitude: Double)
        -> TransferLocation
    {
        let values: [String: TransferValue] = [
            "offset": .real(offset), "time": .real(time), "latitude": .real(latitude), "longitude": .real(longitude),
            "horizontal_accuracy": .real(5), "fix_mode": .integer(2), "differential": .integer(0),
            "flags": .integer(0), "fix_index": .integer(sequence), "segment": .integer(0), "app_state": .integer(1),
            "reason": .integer(0), "authorization": .integer(4), "accuracy_authorization": .integer(0),
        ]
        return TransferLocation(
            sequence: sequence, originKind: "file", originName: "generated.gpx",
            values: StoreSchema.transferLocationColumns.map { values[$0.name] ?? .null })
    }

    struct Generated {
        var uuid: String
        var device: String
        var created: Double
        var points: [(latitude: Double, longitude: Double)]
    }

    /// Sessions scattered near some centres (one on the antimeridian, one near a pole), each a
    /// short wandering path.
    static func generate(seed: UInt64, count: Int) -> [Generated] {
        var random = SplitMix(seed: seed)
        let centres: [(Double, Double)] = [(48.2, 16.37), (-33.9, 151.2), (0.5, 179.9), (-17.0, -179.95), (88.5, 40)]
        return (0..<count).map { i in
            let centre = centres[Int(random.next() % UInt64(centres.count))]
            var lat = centre.0 + random.unit(-0.05, 0.05)
            var lon = centre.1 + random.unit(-0.08, 0.08)
            var points: [(Double, Double)] = []
            for _ in 0..<(3 + Int(random.next() % 20)) {
                lat = min(89.9, max(-89.9, lat + random.unit(-0.002, 0.002)))
                lon = remainder(lon + random.unit(-0.003, 0.003), 360)
                points.append((lat, lon))
            }
            return Generated(
                uuid: UUID().uuidString.lowercased(), device: "unit-\(i % 4)",
                created: 1_780_000_000 + Double(i) * 3600, points: points.map { (latitude: $0.0, longitude: $0.1) })
        }
    }

    static func store(_ sessions: [Generated]) throws -> (path: String, SessionStore) {
        let path = temporaryPath("-fleet.sqlite")
        let store = try SessionStore(path: path, mode: .create)
        for s in sessions {
            let id = try store.importSession(
                TransferSession(
                    id: 0, uuid: s.uuid, device: s.device, kind: "record", source: "generated", settings: "{}",
                    scenario: nil, createdAt: s.created, epoch: s.created, endedAt: s.created + 60, duration: 60,
                    outcome: "completed", outcomeDetail: nil, pid: nil, host: "elsewhere", label: nil))
            var page = TransferPage()
            page.locations = s.points.enumerated().map { i, p in
                row(
                    sequence: Int64(i), offset: Double(i), time: s.created + Double(i), latitude: p.latitude,
                    longitude: p.longitude)
            }
            page.last = Int64(s.points.count - 1)
            try store.importRows(session: id, page)
        }
        return (path, store)
    }

    /// What the filter should give, by every point; nil when a point is within a centimetre of
    /// the circle's edge (where two correct geodesic codes may round apart).
    static func expected(_ sessions: [Generated], _ filter: SessionFilter) -> Set<String>? {
        var result = Set<String>()
        for s in sessions {
            if let device = filter.device, s.device != device { continue }
            if let since = filter.since, s.created < since.timeIntervalSince1970 { continue }
            if let until = filter.until, s.created >= until.timeIntervalSince1970 { continue }
            var hit = !filter.isSpatial
            for p in s.points where filter.isSpatial {
                var inside = true
                if let near = filter.near {
                    let d = Geodesic.distance(
                        Coordinate(latitude: near.latitude, longitude: near.longitude),
                        Coordinate(latitude: p.latitude, longitude: p.longitude))
                    if abs(d - near.radius) < 0.01 { return nil }
                    inside = d <= near.radius
                }
                if let within = filter.within, !within.contains(latitude: p.latitude, longitude: p.longitude) {
                    inside = false
                }
                if inside { hit = true }
            }
            if hit { result.insert(s.uuid) }
        }
        return result
    }

    @Test func bothStoresAnswerEveryQueryAsTheLocationsSay() async throws {
        let cluster = try PostgresCluster.start()
        let sessions = Self.generate(seed: 2026, count: 60)
        let (_, local) = try Self.store(sessions)
        let server = try await PostGISStore.open(
            try PostGISAddress(cluster.address(database: try cluster.newDatabase())))
        _ = try await Forwarding.push(from: local, to: server, now: { Date(timeIntervalSince1970: 0) })
        var random = SplitMix(seed: 7)
        var checked = 0
        var nonEmpty = 0
        for round in 0..<150 {
            var filter = SessionFilter()
            let anchor = sessions[Int(random.next() % UInt64(sessions.count))]
            let p = anchor.points[Int(random.next() % UInt64(anchor.points.count))]
            switch round % 5 {
            case 4:
                // The edge a fraction of a metre from a location, inside or out: a wrong
                // radius, unit or formula shows here.
                let q = anchor.points[Int(random.next() % UInt64(anchor.points.count))]
                let centre = (latitude: p.latitude + 0.004, longitude: remainder(p.longitude + 0.003, 360))
                let d = Geodesic.distance(
                    Coordinate(latitude: centre.latitude, longitude: centre.longitude),
                    Coordinate(latitude: q.latitude, longitude: q.longitude))
                let side = round % 10 == 4 ? 1.0 : -1.0
                filter.near = SessionFilter.Near(
                    latitude: centre.latitude, longitude: centre.longitude, radius: d + side * random.unit(0.05, 0.5))
            case 0:
                filter.near = SessionFilter.Near(
                    latitude: p.latitude + random.unit(-0.01, 0.01),
                    longitude: remainder(p.longitude + random.unit(-0.01, 0.01), 360),
                    radius: random.unit(10, 3000))
            case 1:
                let w = remainder(p.longitude - random.unit(0, 0.05), 360)
                let e = remainder(p.longitude + random.unit(0, 0.05), 360)
                filter.within = SessionFilter.Box(
                    west: w, south: max(-90, p.latitude - random.unit(0, 0.03)), east: e,
                    north: min(90, p.latitude + random.unit(0, 0.03)))
            case 2:
                filter.device = "unit-\(random.next() % 5)"
                filter.since = Date(timeIntervalSince1970: 1_780_000_000 + Double(random.next() % 40) * 3600)
                filter.until = filter.since.map { $0.addingTimeInterval(Double(1 + random.next() % 30) * 3600) }
            default:
                filter.near = SessionFilter.Near(
                    latitude: p.latitude, longitude: p.longitude, radius: random.unit(100, 20_000))
                filter.within = SessionFilter.Box(
                    west: remainder(p.longitude - 0.02, 360), south: p.latitude - 0.01,
                    east: remainder(p.longitude + 0.02, 360), north: min(90, p.latitude + 0.01))
                filter.device = anchor.device
            }
            guard let expected = Self.expected(sessions, filter) else { continue }
            let fromSQLite = Set(try local.sessions(matching: filter).compactMap(\.uuid))
            let fromPostGIS = Set(try await server.sessions(matching: filter).compactMap(\.uuid))
            #expect(fromSQLite == expected, "SQLite, \(filter)")
            #expect(fromPostGIS == expected, "PostGIS, \(filter)")
            checked += 1
            if !expected.isEmpty { nonEmpty += 1 }
        }
        await server.close()
        #expect(checked > 100 && nonEmpty > 40, "\(checked) queries checked, \(nonEmpty) with sessions")
    }

    /// The command line's options reach the filter: the same answer as the library's.
    @Test func theCommandLineFiltersAsTheLibraryDoes() throws {
        let sessions = Self.generate(seed: 99, count: 20)
        let (path, local) = try Self.store(sessions)
        let vienna = SessionFilter.Near(latitude: 48.2, longitude: 16.37, radius: 15_000)
        let want = try local.sessions(matching: SessionFilter(near: vienna)).map(\.id)
        let r = try run(
            Paths.waymark.path, ["sessions", "list", "--store", path, "--near", "48.2,16.37,15000", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]).compactMap {
            $0["id"] as? Int
        }
        #expect(got.map(Int64.init) == want && !want.isEmpty)
        let across = try run(
            Paths.waymark.path, ["sessions", "list", "--store", path, "--within", "179.5,-20,-179.5,5", "--json"])
        let crossing = try local.sessions(
            matching: SessionFilter(within: SessionFilter.Box(west: 179.5, south: -20, east: -179.5, north: 5)))
        #expect(across.stdoutText.components(separatedBy: "\"id\":").count - 1 == crossing.count)
        for bad in [
            ["--near", "91,0,5"], ["--within", "1,2,3"], ["--since", "yesterday"], ["--since", "2026-02-30"],
        ] {
            let refused = try run(Paths.waymark.path, ["sessions", "list", "--store", path] + bad)
            #expect(refused.status == 64, "\(bad): \(refused.stderr)")
        }
    }

    // MARK: - Parts

    /// The month a push makes sure of a partition for is the calendar's (UTC), on every side of
    /// every boundary from 1901 to 2100.
    @Test func partitionMonthsAreTheCalendars() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var random = SplitMix(seed: 11)
        var times: [Double] = (0..<3000).map { _ in random.unit(-2_177_452_800, 4_133_980_799) }
        for year in [1901, 1969, 1970, 2000, 2024, 2100] {
            for month in 1...12 {
                let start = calendar.date(from: DateComponents(year: year, month: month, day: 1))!.timeIntervalSince1970
                times += [start, start - 0.001, start + 0.5]
            }
        }
        for t in times {
            let c = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: t))
            #expect(PostGISStore.month(of: t) == (c.year! - 1970) * 12 + c.month! - 1, "\(t)")
        }
    }

    @Test(
        arguments: [
            ("postgresql://fleet@db.example:6543/waymark", "fleet", "db.example", 6543, "waymark", "prefer"),
            ("postgres://u:p%40ss@10.0.0.2/d?sslmode=require", "u", "10.0.0.2", 5432, "d", "require"),
            ("postgresql://u@[::1]:5433/d", "u", "::1", 5433, "d", "prefer"),
            ("postgresql://u@/d?host=/run/pg&port=5499", "u", nil, 5499, "d", "disable"),
            ("postgresql:///only?user=me&host=db", "me", "db", 5432, "only", "prefer"),
        ] as [(String, String, String?, Int, String, String)])
    func addressesAreReadAsLibpqReadsThem(
        text: String, user: String, host: String?, port: Int, database: String, tls: String
    ) throws {
        let a = try PostGISAddress(text, environment: ["USER": "nobody"])
        #expect(a.user == user && a.host == host && a.port == port && a.database == database)
        #expect(a.tls.rawValue == tls)
        #expect(!a.description.contains("p@ss") && !a.description.contains("p%40ss"))
        if host == nil { #expect(a.socketPath == "/run/pg/.s.PGSQL.5499") }
    }

    @Test(arguments: ["postgresql://u@h:0/d", "postgresql://u@h/d?frobnicate=1", "http://h/d", "postgresql://u@[::1/d"])
    func badAddressesAreRefusedWithAReason(text: String) {
        #expect(throws: PostGISError.self) { try PostGISAddress(text, environment: [:]) }
    }

    /// `--since` and `--until` read the whole time, date and all: a session made at exactly
    /// the time given is listed by `--since` and not by `--until`, one made half a second
    /// before by `--until` only.
    @Test(arguments: [
        ("1970-01-01", 0.0), ("2024-02-29T12:00:00Z", 1_709_208_000), ("2024-02-29T13:30:00+01:30", 1_709_208_000),
        ("2024-03-01 00:00", 1_709_251_200), ("1969-12-31T23:59:59.5Z", -0.5), ("2100-03-01", 4_107_542_400),
    ])
    func timesAreReadWholeWithTheirDates(text: String, seconds: Double) throws {
        let path = temporaryPath("-time.sqlite")
        let store = try SessionStore(path: path, mode: .create)
        for (source, at) in [("at", seconds), ("before", seconds - 0.5)] {
            try store.importSession(
                TransferSession(
                    id: 0, uuid: UUID().uuidString.lowercased(), device: nil, kind: "record", source: source,
                    settings: "{}", scenario: nil, createdAt: at, epoch: 0, endedAt: nil, duration: 0,
                    outcome: "completed", outcomeDetail: nil, pid: nil, host: nil, label: nil))
        }
        func sources(_ option: String) throws -> [String] {
            let r = try run(Paths.waymark.path, ["sessions", "list", "--store", path, option, text, "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]).compactMap {
                $0["source"] as? String
            }
        }
        #expect(try sources("--since") == ["at"])
        #expect(try sources("--until") == ["before"])
    }

    @Test(arguments: ["2023-02-29", "2024-13-01", "2024-01-01T24:00Z", "2024-01-01T10:00+1", "soon", "2024-1-01"])
    func badTimesAreUsageErrors(text: String) throws {
        let path = temporaryPath("-time.sqlite")
        _ = try SessionStore(path: path, mode: .create)
        let r = try run(Paths.waymark.path, ["sessions", "list", "--store", path, "--since", text])
        #expect(r.status == 64 && r.stderr.contains("is not a time"), "\(r.stderr)")
    }
}

/// A seeded generator for the tests' own data.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * Double(next() >> 11) / Double(1 << 53)
    }
}

/// The text a push sends in `COPY` reads back to the very value: integers as their digits,
/// whole doubles as integers, the rest as Swift's shortest round-trip digits.
@Suite struct CopyTextTests {
    static func text(_ value: TransferValue) -> String { CopyText.field(value) }

    /// What PostgreSQL's `float8in` makes of it.
    static func double(_ text: String) -> Double? {
        switch text {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: Double(text)
        }
    }

    /// NULL is `\N`, COPY's text marker for it (PostgreSQL's `COPY`, "Text Format"); text is
    /// escaped so that no tab, line end or backslash of its own ends or changes a field.
    @Test func nullIsBackslashNAndTextIsEscaped() {
        #expect(Self.text(.null) == "\\N")
        #expect(Self.text(.text("a\tb\\c\nd\re")) == "a\\tb\\\\c\\nd\\re")
    }

    @Test func integersAreTheirDigits() {
        var random = SplitMix(seed: 7)
        let edges: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_234_567_890_123, .max, .min, .max - 1, .min + 1]
        for v in edges + (0..<5000).map({ _ in Int64(bitPattern: random.next()) >> (random.next() % 64) }) {
            #expect(Self.text(.integer(v)) == String(v))
        }
    }

    @Test func doublesReadBackBitForBit() {
        var random = SplitMix(seed: 11)
        let edges: [Double] = [
            0, -0.0, 1, -1, 1_714_550_401, 0.1, 47.376935, 4.174086682483726, 9_007_199_254_740_992,
            9_007_199_254_740_994, -9_007_199_254_740_991, 1e300, -1e-300, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, .infinity, -.infinity, .nan, 0.5, -0.5, 2.5e15, 1e22,
        ]
        let randomBits = (0..<5000).map { _ in Double(bitPattern: random.next()) }
        let wholes = (0..<2000).map { _ in Double(Int64(bitPattern: random.next()) >> (random.next() % 64)) }
        for v in edges + randomBits + wholes {
            let text = Self.text(.real(v))
            let back = Self.double(text)
            if v.isNaN {
                #expect(back?.isNaN == true, "\(text)")
            } else {
                #expect(back?.bitPattern == v.bitPattern, "\(v) was written \(text)")
            }
        }
    }

    /// A decimal of up to nine places, as a GPX file gives coordinates, is written as its own
    /// digits (no exponent, no more places), and reads back bit for bit; so do the doubles on
    /// either side of it, which are not such decimals.
    @Test func decimalsAreWrittenAsTheirOwnDigits() {
        var random = SplitMix(seed: 0xDEC1)
        var cases: [(value: Double, places: Int)] = [
            (0.05, 2), (-0.5, 1), (0.000_000_001, 9), (-0.000_000_001, 9), (48.214_563_7, 7), (-122.419_415_5, 7),
            (8_999_999.999_999_999, 9), (123_456.123_456_789, 9), (90.000_000_1, 7), (179.999_999_999, 9), (0.1, 1),
        ]
        for _ in 0..<20_000 {
            let places = Int(random.next() % 9) + 1
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            // At most 15 digits: each is then an exact double, far from 2^53.
            let digits = Double((random.next() % 1_000_000_000_000_000) >> (random.next() % 40))
            let v = (random.next() % 2 == 0 ? 1 : -1) * digits / scale
            if v != v.rounded(.towardZero) { cases.append((v, places)) }
        }
        for (v, places) in cases {
            let text = Self.text(.real(v))
            #expect(Self.double(text)?.bitPattern == v.bitPattern, "\(v) was written \(text)")
            let fraction = text.split(separator: ".").dropFirst().first ?? ""
            #expect(
                !text.contains("e") && fraction.count <= places && fraction.allSatisfy(\.isNumber),
                "\(v), a decimal of \(places) places, was written \(text)")
            for neighbour in [v.nextUp, v.nextDown] {
                let text = Self.text(.real(neighbour))
                #expect(Self.double(text)?.bitPattern == neighbour.bitPattern, "\(neighbour) was written \(text)")
            }
        }
    }
}
