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

    @Test func reportsWithoutAFixPassThroughAsNoFix() {
        var c = FixCoalescer()
        #expect(c.add(Self.report(mode: 1)) == [.noFix(Self.report(mode: 1))])
    }
}
