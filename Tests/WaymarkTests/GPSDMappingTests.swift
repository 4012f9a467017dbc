import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// TPV reports to locations, and one location per fix time (no daemon needed).
@Suite struct GPSDMappingTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func report(
        mode: Int = 3, time: Date? = t0, alt: Double? = 250, eph: Double? = 4, epv: Double? = 6,
        speed: Double? = 1.5, track: Double? = 90, status: Int = 1
    ) -> GPSDReport {
        GPSDReport(
            device: "/dev/ttyUSB0", mode: mode, status: status, time: time, latitude: 48.137, longitude: 11.575,
            altitudeHAE: alt.map { $0 + 47 }, altitudeMSL: alt, eph: eph, epv: epv, speed: speed, eps: 0.2,
            track: track, epd: 3)
    }

    @Test func aThreeDimensionalFixMapsEveryField() throws {
        let l = try #require(GPSDMapping().location(for: Self.report(status: 2)))
        #expect(l.coordinate == Coordinate(latitude: 48.137, longitude: 11.575))
        #expect(l.altitude == 250 && l.ellipsoidalAltitude == 297)
        #expect(l.horizontalAccuracy == 4 && l.verticalAccuracy == 6)
        #expect(l.speed == 1.5 && l.speedAccuracy == 0.2 && l.course == 90 && l.courseAccuracy == 3)
        #expect(l.timestamp == Self.t0)
        #expect(l.provenance.source == .gpsd(device: "/dev/ttyUSB0"))
        #expect(l.provenance.fixMode == .threeD && l.provenance.differential == .dgps)
        #expect(!l.provenance.isSimulatedBySoftware)
    }

    @Test func aTwoDimensionalFixHasNoValidAltitude() throws {
        let l = try #require(GPSDMapping().location(for: Self.report(mode: 2)))
        #expect(!l.hasValidAltitude && l.ellipsoidalAltitude == nil)
        #expect(l.provenance.fixMode == .twoD)
    }

    /// Values a store cannot hold (its columns are checked, schema v4) never make a location:
    /// errors whose root sum square overflows fall back to the next source, and a time outside
    /// the years −9999 to 9999 is no fix.
    @Test func valuesTheStoreCannotHoldMakeNoLocation() throws {
        var r = Self.report(eph: nil)
        r.epx = 1e200
        r.epy = 1e200
        let l = try #require(GPSDMapping().location(for: r))
        #expect(l.horizontalAccuracy == GPSDMapping().defaultHorizontalAccuracy, "\(l.horizontalAccuracy)")
        #expect(GPSDMapping().location(for: Self.report(time: Date(timeIntervalSince1970: 3e12))) == nil)
        #expect(GPSDMapping().location(for: Self.report(time: Date(timeIntervalSince1970: -4e11))) == nil)
    }

    @Test func missingValuesAreInvalidNotZero() throws {
        var r = Self.report(eph: nil, epv: nil, speed: nil, track: nil)
        r.epx = 3
        r.epy = 4
        let l = try #require(GPSDMapping().location(for: r))
        #expect(l.horizontalAccuracy == 5)  // the root sum square of epx and epy
        #expect(l.verticalAccuracy == 15)  // an altitude without epv or VDOP: the default
        #expect(l.speed == -1 && l.speedAccuracy == -1 && l.course == -1 && l.courseAccuracy == -1)
        r.epx = nil
        r.hdop = 1.2
        #expect(GPSDMapping().location(for: r)?.horizontalAccuracy == 6)  // HDOP × 5 m
    }

    @Test func noModeNoPositionOrNoTimeIsNoFix() {
        #expect(GPSDMapping().location(for: Self.report(mode: 1)) == nil)
        #expect(GPSDMapping().location(for: Self.report(mode: 0)) == nil)
        #expect(GPSDMapping().location(for: Self.report(time: nil)) == nil)
        var r = Self.report()
        r.latitude = 95
        #expect(GPSDMapping().location(for: r) == nil)
    }

    @Test func aCompleteReportGoesOutAtOnceAndRepeatsOfItsTimeAreDropped() {
        var c = FixCoalescer()
        #expect(c.add(Self.report()) == [.fix(Self.report())])
        #expect(c.add(Self.report(speed: 9)) == [])
        #expect(c.duplicates == 1)
        let older = Self.report(time: Self.t0.addingTimeInterval(-1))
        #expect(c.add(older) == [])
    }

    @Test func anIncompleteReportWaitsForTheRestOfItsEpoch() {
        var c = FixCoalescer()
        _ = c.add(Self.report())  // learns that this receiver sends speed and track
        let t1 = Self.t0.addingTimeInterval(1)
        let partial = Self.report(time: t1, speed: nil, track: nil)
        #expect(c.add(partial) == [])
        #expect(c.isHolding)
        let rest = Self.report(time: t1, speed: 2, track: 91)
        let out = c.add(rest)
        #expect(out.count == 1)
        if case .fix(let merged)? = out.first {
            #expect(merged.speed == 2 && merged.track == 91 && merged.altitudeMSL == 250)
        }
        // One that never completes goes out on flush, or when the next epoch begins.
        let t2 = Self.t0.addingTimeInterval(2)
        #expect(c.add(Self.report(time: t2, speed: nil)) == [])
        #expect(c.flush() == [.fix(Self.report(time: t2, speed: nil))])
        let t3 = Self.t0.addingTimeInterval(3)
        let t4 = Self.t0.addingTimeInterval(4)
        _ = c.add(Self.report(time: t3, track: nil))
        #expect(c.add(Self.report(time: t4)) == [.fix(Self.report(time: t3, track: nil)), .fix(Self.report(time: t4))])
    }

    @Test func aValueTheReceiverStopsSendingIsNoLongerAwaited() {
        var c = FixCoalescer()
        _ = c.add(Self.report())
        var sentAtOnce = 0
        for i in 1...10 {
            let out = c.add(Self.report(time: Self.t0.addingTimeInterval(Double(i)), track: nil))
            if !out.isEmpty { sentAtOnce += 1 }
        }
        // Held while track was still expected, then sent at once.
        #expect(sentAtOnce >= 5 && c.forgetAfter == 5)
        #expect(c.add(Self.report(time: Self.t0.addingTimeInterval(20), track: nil)).count >= 1)
    }

    /// A value seen only in a late repeat of an epoch is waited for from the next epoch on.
    @Test func aLateRepeatTeachesWhatTheReceiverSends() {
        var c = FixCoalescer()
        _ = c.add(Self.report(track: nil))  // complete as far as is known: sent
        _ = c.add(Self.report(speed: 1, track: 135))  // the same time, with a track: too late
        let t1 = Self.t0.addingTimeInterval(1)
        #expect(c.add(Self.report(time: t1, track: nil)) == [])  // now it waits for the track
        let out = c.add(Self.report(time: t1, speed: 1, track: 140))
        if case .fix(let r)? = out.first { #expect(r.track == 140) } else { Issue.record("\(out)") }
    }

    /// Fixes one second apart, arriving one second apart, with `times` in place of some.
    static func run(
        _ c: inout FixCoalescer, count: Int, arrivalStep: Double = 1, time: (Int) -> Date
    ) -> [FixCoalescer.Output] {
        var out: [FixCoalescer.Output] = []
        for i in 0..<count {
            out += c.add(Self.report(time: time(i)), arrival: .seconds(Double(i) * arrivalStep))
        }
        return out + c.finish()
    }

    static func fixTimes(_ out: [FixCoalescer.Output]) -> [Date] {
        out.compactMap { if case .fix(let r) = $0 { return r.time } else { return nil } }
    }

    /// Issue 15, item 9: one fix with a future time made every later fix look like a repeat and
    /// vanish. Only that fix is dropped now, with a notice.
    @Test func aFixFromTheFutureIsDroppedAndTheRestKept() {
        var c = FixCoalescer()
        let glitch = Self.t0.addingTimeInterval(86_400 * 365 * 3)  // three years ahead
        let out = Self.run(&c, count: 20) { $0 == 5 ? glitch : Self.t0.addingTimeInterval(Double($0)) }
        let expected = (0..<20).filter { $0 != 5 }.map { Self.t0.addingTimeInterval(Double($0)) }
        #expect(Self.fixTimes(out) == expected)
        #expect(c.implausible == 1)
        #expect(out.contains(.implausibleTime(Self.report(time: glitch), expected: Self.t0.addingTimeInterval(5))))
    }

    /// A single time far in the past is dropped the same way.
    @Test func aFixFromThePastIsDroppedAndTheRestKept() {
        var c = FixCoalescer()
        let out = Self.run(&c, count: 10) { i in
            i == 4 ? Self.t0.addingTimeInterval(-7200) : Self.t0.addingTimeInterval(Double(i))
        }
        #expect(Self.fixTimes(out).count == 9 && c.implausible == 1)
        // The last fix is in doubt at the end: nothing came after it to confirm its time.
        var d = FixCoalescer()
        let end = Self.run(&d, count: 5) { i in Self.t0.addingTimeInterval(i == 4 ? 86_400 : Double(i)) }
        #expect(Self.fixTimes(end).count == 4 && d.implausible == 1)
    }

    /// A receiver whose clock jumps and stays there (a reset, gpsd's 1024-week rollover) goes on
    /// being recorded from its new time: nothing is lost, and the jump is reported.
    @Test func aClockThatJumpsAndStaysIsFollowed() {
        let weeks1024 = 1024.0 * 7 * 86_400
        for jump in [-weeks1024, weeks1024, -7200, 7200, -120] {
            var c = FixCoalescer()
            let out = Self.run(&c, count: 20) { i in
                Self.t0.addingTimeInterval(Double(i) + (i >= 8 ? jump : 0))
            }
            #expect(Self.fixTimes(out).count == 20, "jump \(jump)")
            #expect(c.implausible == 0, "jump \(jump)")
            #expect(
                out.contains(.timeJump(seconds: jump)),
                "jump \(jump): \(out.filter { if case .fix = $0 { false } else { true } })")
        }
    }

    /// A log replayed as fast as it is read (gpsfake -c 0) arrives at once: its time gaps, an
    /// hour's pause say, are not taken for a clock gone wrong, and late parts of an epoch are
    /// still dropped quietly.
    @Test func aLogReplayedAtOnceKeepsEveryEpoch() {
        var c = FixCoalescer()
        let out = Self.run(&c, count: 30, arrivalStep: 0) { i in
            Self.t0.addingTimeInterval(Double(i) + (i >= 10 ? 3000 : 0) + (i >= 20 ? 9000 : 0))
        }
        #expect(Self.fixTimes(out).count == 30 && c.implausible == 0)
        var d = FixCoalescer()
        _ = d.add(Self.report(time: Self.t0), arrival: .zero)
        _ = d.add(Self.report(time: Self.t0.addingTimeInterval(1)), arrival: .seconds(1))
        #expect(d.add(Self.report(time: Self.t0.addingTimeInterval(0.5)), arrival: .seconds(1)) == [])
        #expect(d.duplicates == 1 && d.implausible == 0)
        // Older than that is a time gone backwards: in doubt until the next epoch, which follows
        // the last one sent, so it alone is dropped.
        #expect(d.add(Self.report(time: Self.t0.addingTimeInterval(-3)), arrival: .seconds(1)) == [])
        let next = d.add(Self.report(time: Self.t0.addingTimeInterval(2)), arrival: .seconds(2))
        #expect(Self.fixTimes(next) == [Self.t0.addingTimeInterval(2)] && d.implausible == 1)
    }

    /// Every NMEA log of gpsd 3.22's regression corpus, as gpsd itself decoded it (the TPVs of
    /// its `.chk` files): every epoch goes out once, in order, whether the log arrives at once or
    /// one epoch a second, but for the ones explained here.
    /// The fixes of gpsd's regression corpus that Waymark does not record, by log: their time
    /// as gpsd gives it, and whether it is judged implausible (or dropped quietly as a late part
    /// of an epoch already sent).
    static let corpusDrops: [String: [(time: String, implausible: Bool)]] = [
        // 15:25:08, then one fix dated the next day (2029-07-26T14:33:06), then the 25th again
        // at 14:33:06.5: the odd date is dropped, and the step back of 52 minutes after it is
        // followed.
        "bt451.log": [("2029-07-26T14:33:06.000Z", true)],
        // 10:51:53.710, then 10:51:53.408: an epoch 0.3 s older than the one before it.
        "telit-he910.log": [("2019-03-12T10:51:53.408Z", false)],
    ]

    @Test(.enabled(if: Paths.sharedAvailable, "needs ../shared/corpus"))
    func everyEpochOfGpsdsCorpusGoesOutOnce() throws {
        let dir = Paths.corpus.appendingPathComponent("gpsd/release-3.22")
        let files = Paths.files(under: dir, suffix: ".chk")
        #expect(files.count >= 20)
        var epochs = 0
        var jumps = 0
        for file in files {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            let reports = text.split(whereSeparator: \.isNewline).compactMap { Self.tpv(String($0)) }
            // gpsd's epochs: its fixes' times, each run of one time once.
            var times: [Date] = []
            for r in reports where r.isFix {
                if let t = r.time, times.last != t { times.append(t) }
            }
            epochs += times.count
            for paced in [false, true] {
                var c = FixCoalescer()
                var out: [FixCoalescer.Output] = []
                var arrival = 0.0
                var previous: Date?
                for r in reports {
                    if paced, let t = r.time, t != previous {
                        arrival += 1
                        previous = t
                    }
                    out += c.add(r, arrival: .seconds(arrival))
                }
                out += c.finish()
                let sent = Self.fixTimes(out)
                let drops = Self.corpusDrops[String(file.dropLast(4))] ?? []
                #expect(c.implausible == drops.filter(\.implausible).count, "\(file), paced \(paced)")
                #expect(sent.count == times.count - drops.count, "\(file), paced \(paced)")
                // What goes out is gpsd's epochs in gpsd's order, less the ones dropped.
                var rest = sent[...]
                for t in times where rest.first == t { rest = rest.dropFirst() }
                #expect(rest.isEmpty, "\(file), paced \(paced): \(rest.prefix(3)) out of gpsd's order")
                jumps += out.filter { if case .timeJump = $0 { true } else { false } }.count
            }
        }
        #expect(epochs > 700)
        #expect(jumps >= 4)  // bt451 and humminbird-M37, at both paces
    }

    /// A TPV line of gpsd's JSON as a report.
    static func tpv(_ line: String) -> GPSDReport? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["class"] as? String == "TPV"
        else { return nil }
        func number(_ key: String) -> Double? {
            switch object[key] {
            case let d as Double: d
            case let i as Int: Double(i)
            case let n as NSNumber: n.doubleValue
            default: nil
            }
        }
        var time: Date?
        if let text = object["time"] as? String {
            time = Array(text.utf8).withUnsafeBufferPointer { b -> Date? in
                guard case .success(let t) = ValueParsing.dateTime(ByteSpan(start: b.baseAddress!, count: b.count))
                else { return nil }
                return t.date
            }
        }
        return GPSDReport(
            device: object["device"] as? String ?? "", mode: Int(number("mode") ?? 0),
            status: Int(number("status") ?? 0),
            time: time, latitude: number("lat"), longitude: number("lon"), altitudeHAE: number("altHAE"),
            altitudeMSL: number("altMSL"), eph: number("eph"), epx: number("epx"), epy: number("epy"),
            epv: number("epv"), speed: number("speed"), eps: number("eps"), track: number("track"),
            epd: number("epd"))
    }

    @Test func reportsWithoutAFixPassThroughAsNoFix() {
        var c = FixCoalescer()
        #expect(c.add(Self.report(mode: 1)) == [.noFix(Self.report(mode: 1))])
    }
}
