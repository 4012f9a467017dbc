import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// gpsd's protocol as `waymark serve` speaks it, without sockets: the replies of gpsd 3.22 (taken
/// from a real one) for each request, WATCH's options, POLL, and the sentences of an epoch.
@Suite struct GPSDServeProtocolTests {
    static let device = GPSDServedDevice(path: "/tmp/walk.gpx", activated: Date(timeIntervalSince1970: 1_714_550_400))
    static let context = GPSDServeSession.Context(device: device)

    /// The replies as decoded JSON objects, one per CR LF line.
    func objects(_ bytes: [UInt8]) throws -> [[String: Any]] {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.isEmpty || text.hasSuffix("\r\n"), "gpsd ends every line with CR LF")
        return try text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func reply(_ text: String, _ session: inout GPSDServeSession, context: GPSDServeSession.Context = context)
        throws -> [[String: Any]]
    {
        try objects(session.received(Array(text.utf8), context: context).reply)
    }

    @Test func versionIsGpsd322sShape() throws {
        let version = try #require(try objects(GPSDServeSession.version()).first)
        #expect(version["class"] as? String == "VERSION")
        #expect(version["release"] as? String == "3.22")
        #expect(version["rev"] as? String == "3.22")
        #expect(version["proto_major"] as? Int == 3)
        #expect(version["proto_minor"] as? Int == 14)
        #expect(
            String(decoding: GPSDServeSession.version(), as: UTF8.self)
                == "{\"class\":\"VERSION\",\"release\":\"3.22\",\"rev\":\"3.22\",\"proto_major\":3,\"proto_minor\":14}\r\n"
        )
    }

    @Test func watchAnswersDevicesAndWatchAndChangesOnlyTheOptionsItNames() throws {
        var s = GPSDServeSession()
        let first = s.received(Array("?WATCH={\"enable\":true,\"json\":true};".utf8), context: Self.context)
        #expect(first.startedWatching)
        let replies = try objects(first.reply)
        #expect(replies.map { $0["class"] as? String } == ["DEVICES", "WATCH"])
        let devices = try #require(replies[0]["devices"] as? [[String: Any]])
        #expect(devices.map { $0["path"] as? String } == ["/tmp/walk.gpx"])
        #expect(replies[1]["enable"] as? Bool == true && replies[1]["json"] as? Bool == true)
        #expect(replies[1]["nmea"] as? Bool == false && replies[1]["raw"] as? Int == 0)
        // gpsd keeps json on when a later WATCH names only enable.
        let second = s.received(Array("?WATCH={\"enable\":false}\n".utf8), context: Self.context)
        #expect(!second.startedWatching)
        let watch = try #require(try objects(second.reply).last)
        #expect(watch["enable"] as? Bool == false && watch["json"] as? Bool == true)
        #expect(s.policy.json && !s.policy.enable)
        // nmea and raw; options gpsd does not know are ignored, as gpsd 3.22 does.
        _ = try reply("?WATCH={\"enable\":true,\"nmea\":true,\"raw\":1,\"remote\":\"x\",\"bogus\":true};", &s)
        #expect(s.policy.enable && s.policy.nmea && s.policy.raw == 1)
        // ?WATCH; reports without changing anything.
        let plain = try reply("?WATCH;", &s)
        #expect(plain.map { $0["class"] as? String } == ["DEVICES", "WATCH"])
        #expect(plain[1]["nmea"] as? Bool == true)
    }

    @Test func anEpochGoesToEachClientAsItsPolicyAsks() {
        let epoch = GPSDServeEncoding.epoch(.fix(Self.location), time: Self.location.timestamp, device: Self.device)
        var p = GPSDWatchPolicy()
        #expect(epoch.bytes(for: p).isEmpty)
        p.enable = true
        #expect(epoch.bytes(for: p).isEmpty)
        p.json = true
        #expect(epoch.bytes(for: p) == epoch.sky + epoch.tpv)
        p.raw = 1
        #expect(epoch.bytes(for: p) == epoch.nmea + epoch.sky + epoch.tpv)
        p.json = false
        #expect(epoch.bytes(for: p) == epoch.nmea)
    }

    @Test(arguments: [
        ("?FOO;", ["Unrecognized request '?FOO;\n'"]),
        ("?FOO\n", ["Unrecognized request '?FOO\n'"]),
        ("?devices;\r\n", ["Unrecognized request '?devices;\n'"]),
        ("?POLL={};", ["Unrecognized request '?POLL={};\n'"]),
        ("?\"a\\\"b;", ["Unrecognized request '?\"a\\\"b;\n'"]),
        ("?WATCH={\"device\":\"/dev/ttyUSB0\",\"enable\":true};", ["No such device as /dev/ttyUSB0"]),
        ("?WATCH={bad json;", ["Invalid WATCH: non-whitespace when expecting attribute start"]),
        ("?WATCH=[];", ["Invalid WATCH: non-whitespace when expecting object start"]),
        ("?WATCH={\"enable\":\"yes\"};", ["Invalid WATCH: saw quoted value when expecting non-string"]),
    ])
    func malformedRequestsGetGpsdsErrors(request: String, messages: [String]) throws {
        var s = GPSDServeSession()
        let errors = try reply(request, &s).filter { $0["class"] as? String == "ERROR" }
        #expect(errors.map { $0["message"] as? String } == messages)
        #expect(!s.policy.enable, "a bad WATCH enables nothing")
    }

    @Test func severalCommandsInOneRequestAreAnsweredInOrderUpToTheFirstUnknownOne() throws {
        var s = GPSDServeSession()
        let replies = try reply("?VERSION;?DEVICES;\n?VERSION;junk;\n", &s)
        #expect(replies.map { $0["class"] as? String } == ["VERSION", "DEVICES", "VERSION", "ERROR"])
        #expect(replies.last?["message"] as? String == "Unrecognized request 'junk;\n'")
    }

    @Test func aRequestSplitAcrossReadsWaitsForItsEndAndOtherLinesAreIgnored() throws {
        var s = GPSDServeSession()
        #expect(try reply("?WATCH={\"enable\":tr", &s).isEmpty)
        #expect(try reply("ue,\"json\":true}", &s).isEmpty)
        #expect(try reply(";", &s).map { $0["class"] as? String } == ["DEVICES", "WATCH"])
        #expect(s.policy.enable && s.policy.json)
        #expect(try reply("hello gpsd\n", &s).isEmpty, "gpsd 3.22 ignores lines that do not start with ?")
        let flood = s.received(
            Array(repeating: UInt8(ascii: "x"), count: GPSDServeSession.requestLimit + 1), context: Self.context)
        #expect(flood.close)
    }

    static let location = Location(
        coordinate: Coordinate(latitude: -33.8688, longitude: 151.2093), altitude: 58, ellipsoidalAltitude: 80.5,
        horizontalAccuracy: 4.5, verticalAccuracy: 7.25, speed: 1.5, speedAccuracy: 0.25, course: 270.5,
        timestamp: Date(timeIntervalSince1970: 1_714_550_401.25),
        provenance: Provenance(
            source: .file(path: "walk.gpx", index: 0), isSimulatedBySoftware: true, fixMode: .threeD,
            satellitesUsed: 9, hdop: 0.9, vdop: 1.45, pdop: 1.7))

    @Test func pollGivesTheLastEpochsTPVAndSKYOnTheTracesClock() throws {
        var s = GPSDServeSession()
        let before = try #require(try reply("?POLL;", &s).first)
        #expect(before["class"] as? String == "POLL")
        #expect(before["active"] as? Int == 0)
        #expect((before["tpv"] as? [Any])?.isEmpty == true)
        #expect(before["time"] as? String == "2024-05-01T08:00:00.000Z")
        let epoch = GPSDServeEncoding.epoch(.fix(Self.location), time: Self.location.timestamp, device: Self.device)
        let after = try #require(
            try reply("?POLL;", &s, context: GPSDServeSession.Context(device: Self.device, last: epoch)).first)
        #expect(after["active"] as? Int == 1)
        #expect(after["time"] as? String == "2024-05-01T08:00:01.250Z")
        let tpv = try #require((after["tpv"] as? [[String: Any]])?.first)
        #expect(tpv["lat"] as? Double == -33.8688 && tpv["lon"] as? Double == 151.2093)
        let sky = try #require((after["sky"] as? [[String: Any]])?.first)
        #expect(sky["hdop"] as? Double == 0.9)
    }

    /// The TPV carries what GPSDMapping reads back: the same location, as `waymark record` maps it.
    @Test func aTPVMapsBackToTheSameLocation() throws {
        let epoch = GPSDServeEncoding.epoch(.fix(Self.location), time: Self.location.timestamp, device: Self.device)
        let tpv = try #require(try objects(Array(epoch.tpv)).first)
        #expect(tpv["class"] as? String == "TPV" && tpv["mode"] as? Int == 3)
        #expect(tpv["device"] as? String == "/tmp/walk.gpx")
        #expect(tpv["time"] as? String == "2024-05-01T08:00:01.250Z")
        let report = GPSDReport(
            device: "d", mode: 3, time: Self.location.timestamp, latitude: tpv["lat"] as? Double,
            longitude: tpv["lon"] as? Double, altitudeHAE: tpv["altHAE"] as? Double,
            altitudeMSL: tpv["altMSL"] as? Double, eph: tpv["eph"] as? Double, epv: tpv["epv"] as? Double,
            speed: tpv["speed"] as? Double, eps: tpv["eps"] as? Double, track: tpv["track"] as? Double,
            epd: tpv["epd"] as? Double)
        let back = try #require(GPSDMapping().location(for: report))
        #expect(back.coordinate == Self.location.coordinate)
        #expect(back.altitude == 58 && back.ellipsoidalAltitude == 80.5)
        #expect(back.horizontalAccuracy == 4.5 && back.verticalAccuracy == 7.25)
        #expect(back.speed == 1.5 && back.speedAccuracy == 0.25 && back.course == 270.5)
        let noFix = GPSDServeEncoding.epoch(.noFix, time: Self.location.timestamp, device: Self.device)
        let mode1 = try #require(try objects(Array(noFix.tpv)).first)
        #expect(mode1["mode"] as? Int == 1 && mode1["lat"] == nil)
    }

    /// GGA, GSA and RMC with valid checksums, read back by Waymark's own NMEA reader.
    @Test func theSentencesReadBackAsTheFix() throws {
        let epoch = GPSDServeEncoding.epoch(.fix(Self.location), time: Self.location.timestamp, device: Self.device)
        let lines = String(decoding: epoch.nmea, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.map { String($0.prefix(6)) } == ["$GPGGA", "$GPGSA", "$GPRMC"])
        for line in lines {
            let parts = line.dropFirst().split(separator: "*")
            let sum = parts[0].utf8.reduce(UInt8(0), ^)
            #expect(String(parts[1]) == String(format: "%02X", sum), "\(line)")
        }
        #expect(lines[0].hasPrefix("$GPGGA,080001.25,3352.128000,S,15112.558000,E,1,09,0.9,58.0,M,22.5,M,,*"))
        let reader = NMEAReader(source: MemoryByteSource(Array(epoch.nmea)), name: "served.nmea")
        var points: [GPXPoint] = []
        try reader.read { event in
            if case .trackPoint(let p) = event { points.append(p) }
        }
        let point = try #require(points.first)
        #expect(points.count == 1)
        #expect(abs(point.coordinate.latitude - -33.8688) < 1e-9 && abs(point.coordinate.longitude - 151.2093) < 1e-9)
        #expect(point.time == Self.location.timestamp)
        #expect(point.elevation == 58)
    }
}

/// The server's pure parts: which client events it reports one by one, and the epochs it keeps.
@Suite struct GPSDServeServerPartsTests {
    @Test func clientEventsPastTheLimitAreCountedAndSummarisedAtTheIntervalsEnd() throws {
        var throttle = ClientEventThrottle(limit: 3, interval: .seconds(1))
        func admit(_ events: [(ClientEventThrottle.Kind, Int)]) -> [Bool] {
            events.map { throttle.admit($0.0, at: .milliseconds($0.1)) }
        }
        // A storm: three reported, the rest counted.
        let storm = admit([
            (.connected, 0), (.watching, 10), (.connected, 20), (.connected, 30), (.closed, 40), (.rejected, 50),
            (.closed, 60),
        ])
        #expect(storm == [true, true, true, false, false, false, false])
        #expect(throttle.deadline == .milliseconds(1000))
        let early = throttle.summary(at: .milliseconds(999))
        #expect(early == nil, "not before the interval ends")
        let due = throttle.summary(at: .milliseconds(1000))
        let (counts, over) = try #require(due)
        #expect(over == .seconds(1))
        #expect(counts.connected == 1 && counts.closed == 2 && counts.rejected == 1 && counts.total == 4)
        #expect(throttle.deadline == nil, "nothing is counted after a summary")
        // The next interval starts at the summary: three more one by one, then counted again.
        let next = admit([(.closed, 1100), (.closed, 1200), (.closed, 1300), (.lagging, 1400)])
        #expect(next == [true, true, true, false])
        let remaining = throttle.remaining()
        #expect(remaining?.0.lagging == 1 && remaining?.0.total == 1, "what is counted at the end of a run")
        // A quiet while later, a lone event is reported at once.
        #expect(admit([(.connected, 5000)]) == [true])
        #expect(throttle.deadline == nil)
    }

    @Test func theEpochQueueKeepsFromTheOldestNeededToTheNewest() {
        let device = GPSDServeProtocolTests.device
        func epoch(_ n: Int) -> GPSDEpoch {
            GPSDServeEncoding.epoch(.noFix, time: Date(timeIntervalSince1970: Double(n)), device: device)
        }
        var queue = EpochQueue()
        for n in 0..<1000 { queue.append(epoch(n)) }
        #expect(queue.base == 0 && queue.head == 1000 && queue.count == 1000)
        queue.forget(before: 600)
        #expect(queue.base == 600 && queue.count == 400)
        #expect(queue[600].time == Date(timeIntervalSince1970: 600))
        #expect(queue[999].time == Date(timeIntervalSince1970: 999))
        queue.forget(before: 500)
        #expect(queue.base == 600, "what is forgotten stays forgotten")
        queue.append(epoch(1000))
        queue.forget(before: 2000)
        let emptied = (queue.count, queue.base, queue.head)
        #expect(emptied == (0, 1001, 1001))
        #expect(queue.last?.time == Date(timeIntervalSince1970: 1000), "the last epoch stays, for POLL")
    }

    /// Each encoding is a slice of one buffer: NMEA a prefix, JSON a suffix, both the whole.
    @Test func anEpochKeepsItsBytesOnce() {
        let epoch = GPSDServeEncoding.epoch(
            .fix(GPSDServeProtocolTests.location), time: GPSDServeProtocolTests.location.timestamp,
            device: GPSDServeProtocolTests.device)
        #expect(Array(epoch.both) == Array(epoch.nmea) + Array(epoch.sky) + Array(epoch.tpv))
        #expect(Array(epoch.json) == Array(epoch.sky) + Array(epoch.tpv))
        #expect(epoch.nmea.startIndex == epoch.both.startIndex && epoch.json.endIndex == epoch.both.endIndex)
        #expect(!epoch.sky.isEmpty && !epoch.nmea.isEmpty)
    }
}

/// A later `?WATCH` changes only the options it names, for every option (gpsd 3.22): nmea stays
/// on through a WATCH that names only enable or json, and so do json and raw (the survivor m46
/// of scripts/mutations.tsv, a second WATCH turning NMEA off).
@Suite struct GPSDServeWatchOptionsTests {
    @Test func aLaterWatchKeepsTheOptionsItDoesNotName() {
        let context = GPSDServeSession.Context(
            device: GPSDServedDevice(path: "/tmp/walk.gpx", activated: Date(timeIntervalSince1970: 1_714_550_400)))
        var s = GPSDServeSession()
        _ = s.received(Array("?WATCH={\"enable\":true,\"nmea\":true,\"raw\":1};\n".utf8), context: context)
        #expect(s.policy.nmea && s.policy.raw == 1)
        _ = s.received(Array("?WATCH={\"enable\":true};\n".utf8), context: context)
        #expect(s.policy.nmea && s.policy.raw == 1, "a WATCH naming enable alone keeps nmea and raw")
        _ = s.received(Array("?WATCH={\"json\":true};\n".utf8), context: context)
        #expect(s.policy.nmea && s.policy.json && s.policy.enable, "naming json keeps nmea and enable")
        _ = s.received(Array("?WATCH={\"nmea\":false};\n".utf8), context: context)
        #expect(!s.policy.nmea && s.policy.json && s.policy.raw == 1, "naming nmea changes nmea only")
    }
}

/// Issue 28, item 3: where a served trace has no fix, gpsd's epochs without one.
@Suite struct NoFixFillerTests {
    /// Fixes every second, a new segment 20 s later: 19 epochs without a fix, one a second, in
    /// between; a silence of more than 10 s within a segment too; 10 s exactly is no gap.
    @Test func aBreakOrASilenceIsFilledAtTheTracesRate() {
        var f = NoFixFiller()
        for s in 0...3 { #expect(f.fillers(before: .seconds(s), segment: 0, isFix: true).isEmpty) }
        #expect(f.fillers(before: .seconds(23), segment: 1, isFix: true) == (4...22).map { .seconds($0) })
        #expect(f.fillers(before: .seconds(24), segment: 1, isFix: true).isEmpty)
        #expect(f.fillers(before: .seconds(34), segment: 1, isFix: true).isEmpty, "10 s is no gap")
        #expect(f.fillers(before: .seconds(46), segment: 1, isFix: true) == (35...45).map { .seconds($0) })
    }

    /// The cadence is the trace's: fixes every 5 s fill every 5 s; the trace's own reports
    /// without a fix are not doubled; a gap longer than an hour is filled for an hour only.
    @Test func theCadenceIsTheTracesAndTheTracesOwnNoFixIsKept() {
        var f = NoFixFiller()
        _ = f.fillers(before: .seconds(0), segment: 0, isFix: true)
        _ = f.fillers(before: .seconds(5), segment: 0, isFix: true)
        #expect(f.fillers(before: .seconds(30), segment: 1, isFix: true) == [10, 15, 20, 25].map { .seconds($0) })
        var g = NoFixFiller()
        _ = g.fillers(before: .seconds(0), segment: 0, isFix: true)
        for s in 1...15 { #expect(g.fillers(before: .seconds(s), segment: 0, isFix: false).isEmpty) }
        #expect(g.fillers(before: .seconds(16), segment: 1, isFix: true).isEmpty, "the trace said it already")
        var h = NoFixFiller()
        _ = h.fillers(before: .seconds(0), segment: 0, isFix: true)
        _ = h.fillers(before: .seconds(1), segment: 0, isFix: true)
        #expect(h.fillers(before: .seconds(86_400), segment: 0, isFix: true).count == 3600)
    }
}

/// ``GPSDSkyView``'s rules, one by one (`GPSDServeLiveTests.skySatellitesAreGpsds` holds them to
/// gpsd's own output on its receiver logs).
@Suite struct GPSDSkyViewTests {
    static func sentence(_ body: String) -> [UInt8] {
        Array(("$" + body + "*" + String(format: "%02X", body.utf8.reduce(UInt8(0), ^))).utf8)
    }
    static func view(_ bodies: [String]) -> GPSDSkyView {
        var sky = GPSDSkyView()
        for body in bodies { sky.take(sentence(body)) }
        return sky
    }
    static func prns(_ sky: GPSDSkyView) -> [Int] { sky.satellites.map(\.prn) }

    @Test func aGroupIsReportedWhenCompleteWithUsedSatellitesThatAreHeard() {
        let gsa = "GPGSA,A,3,05,07,13,,,,,,,,,,1.5,0.9,1.2"
        let first = "GPGSV,2,1,05,05,45,120,40,07,30,200,,13,10,300,35,17,60,010,42"
        let second = "GPGSV,2,2,05,21,05,090,"
        #expect(Self.view([gsa, first]).satellites.isEmpty, "part 1 of 2 is no report")
        let sky = Self.view([gsa, first, second])
        #expect(Self.prns(sky) == [5, 7, 13, 17, 21])
        // 07 is named used but has no ratio: gpsd does not mark it.
        #expect(sky.satellites.map(\.used) == [true, false, true, false, false])
        #expect(sky.satellites.map(\.signalToNoise) == [40, 0, 35, 42, 0])
    }

    @Test func otherTalkersAddToGPSAndGPSStartsAgain() {
        let gp = "GPGSV,1,1,02,05,45,120,40,07,30,200,33"
        let gl = "GLGSV,1,1,02,66,18,048,,03,72,050,32"
        let sky = Self.view([gp, gl])
        #expect(Self.prns(sky) == [5, 7, 66, 67])
        #expect(sky.satellites.map(\.gnssID) == [0, 0, 6, 6])
        #expect(sky.satellites.map(\.svID) == [5, 7, 2, 3])
        // A new cycle: the GPS group alone is not reported while GLONASS's is still to come.
        let later = Self.view([gp, gl, "GPRMC,080001.00,V,,,,,,,010524,,,N", "GPGSV,1,1,01,09,10,100,20"])
        #expect(Self.prns(later) == [5, 7, 66, 67])
        let done = Self.view([
            gp, gl, "GPRMC,080001.00,V,,,,,,,010524,,,N", "GPGSV,1,1,01,09,10,100,20", "GLGSV,1,1,01,70,10,10,",
        ])
        #expect(Self.prns(done) == [9, 70])
    }

    @Test func badGroupsClearAndNumbersMapAsGpsdMapsThem() {
        #expect(Self.view(["GPGSV,1,1,02,05,45,000,40,07,30,000,33"]).satellites.isEmpty, "every azimuth 0")
        #expect(
            Self.view(["GPGSV,1,1,01,05,45,120,40", "GPGSV,1,1,01,05,45,120"]).satellites.map(\.prn) == [5],
            "a malformed group clears what is being filled, not what was reported")
        for (talker, number, expected) in [
            ("GA", 5, (305, 2, 5)), ("GB", 5, (405, 3, 5)), ("BD", 14, (414, 3, 14)), ("QZ", 2, (194, 5, 2)),
            ("GP", 40, (40, 1, 127)), ("GP", 70, (70, 6, 6)), ("GP", 205, (405, 3, 5)), ("GN", 12, (12, 0, 12)),
            ("GP", 100, (0, 0, 0)),
        ] {
            let got = GPSDSkyView.prn(talker: talker, number: number)
            #expect(got == expected, "\(talker) \(number)")
        }
    }
}
