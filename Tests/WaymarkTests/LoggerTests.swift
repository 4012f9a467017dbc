import Foundation
import Testing

@testable import Waymark
@testable import WaymarkGPSD

/// Issue 16, part 3: `record` is a logger first.
@Suite struct LoggerTests {
    static let epoch = Date(timeIntervalSince1970: 1_714_550_400)

    static func run(_ scenario: Scenario, _ source: ListSource) async throws -> [AuditEvent] {
        let simulation = Simulation(scenario: scenario, epoch: epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        try await simulation.run(source)
        return recorder.events
    }

    /// A receiver that stays still for 25 minutes, longer than any auto-pause delay (20 min for
    /// airborne): the logger keeps every fix, where the default app pauses.
    @Test func aLoggerKeepsEveryFixOfAStationaryReceiver() async throws {
        let still = ListSource.walk(for: 1500, every: 10, step: 0)
        for activity in ActivityType.allCases {
            var base = Scenario()
            base.manager.activityType = activity
            let logged = try await Self.run(Scenario.logger(base), still)
            let fixes = logged.compactMap { if case .fix(let f) = $0.kind { f } else { nil } }
            #expect(fixes.count == still.events.count)
            #expect(fixes.allSatisfy { $0.decision == .delivered }, "\(activity)")
            #expect(!logged.contains { if case .paused = $0.kind { true } else { false } })
            let app = try await Self.run(base, still)
            #expect(app.contains { if case .paused = $0.kind { true } else { false } }, "\(activity): the app pauses")
        }
    }

    @Test func theFilterKeepsFixesOfTheModeAndMoveAsked() {
        let start = Coordinate(latitude: 48.137, longitude: 11.575)
        func at(_ metres: Double) -> Coordinate { Geodesic.destination(from: start, bearing: 90, distance: metres) }
        var everything = LoggerFilter()
        #expect(everything.keepsEverything)
        #expect(everything.admit(mode: 2, at: start) == nil && everything.admit(mode: 3, at: start) == nil)

        var threeD = LoggerFilter(minimumMode: 3)
        #expect(threeD.admit(mode: 2, at: start) == .belowMinimumMode)
        #expect(threeD.admit(mode: 3, at: start) == nil)
        #expect(threeD.belowMode == 1)

        // gpxlogger -m 5: a fix closer than 5 m to the last kept is left out; the distance is
        // from the last kept, so a slow drift is kept once it adds up.
        var move = LoggerFilter(minimumMove: 5)
        #expect(move.admit(mode: 3, at: at(0)) == nil)
        #expect(move.admit(mode: 3, at: at(3)) == .belowMinimumMove)
        #expect(move.admit(mode: 3, at: at(4.9)) == .belowMinimumMove)
        #expect(move.admit(mode: 3, at: at(5.1)) == nil)
        #expect(move.admit(mode: 3, at: at(9)) == .belowMinimumMove)
        #expect(move.belowMove == 3)
        // After a loss of fix the next fix is kept wherever it is.
        move.restart()
        #expect(move.admit(mode: 3, at: at(5.2)) == nil)
    }

    /// GPX's `<ele>` is height above mean sea level; `--altitude hae` records gpxlogger's
    /// ellipsoidal height instead.
    @Test func theAltitudeIsMeanSeaLevelUnlessHAEIsAsked() throws {
        let report = GPSDReport(
            device: "/dev/ttyACM0", mode: 3, status: 1, time: Self.epoch, latitude: 48.1, longitude: 11.5,
            altitudeHAE: 567.5, altitudeMSL: 520.5, epv: 6)
        let msl = try #require(GPSDMapping().location(for: report))
        #expect(msl.altitude == 520.5 && msl.ellipsoidalAltitude == 567.5)
        #expect(GPXLocationMapping.default.point(for: msl).elevation == 520.5)
        let hae = try #require(GPSDMapping(altitude: .hae).location(for: report))
        #expect(hae.altitude == 567.5 && hae.verticalAccuracy == 6)
        let point = GPXLocationMapping.default.point(for: hae)
        #expect(point.elevation == 567.5 && point.geoidHeight == nil)
        // A receiver that gives no ellipsoidal height has no altitude to record then.
        var mslOnly = report
        mslOnly.altitudeHAE = nil
        #expect(try #require(GPSDMapping(altitude: .hae).location(for: mslOnly)).hasValidAltitude == false)
    }

    /// What gpsd did goes into the audit log as `source` events (format 4).
    @Test func gpsdsNoticesAreSourceEventsInTheAuditLog() throws {
        let simulation = Simulation(scenario: Scenario(), epoch: Self.epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        simulation.start(source: "gpsd://localhost:2947")
        simulation.advance(to: .seconds(5))
        let outage = LiveRecording<ContinuousClock>.Notice.outage(reason: "gpsd closed the connection")
        simulation.noteSource(outage.action, detail: outage.detail)
        let event = try #require(recorder.events.last)
        #expect(event.offset == .seconds(5))
        #expect(
            event.ndjson(epoch: Self.epoch)
                == #"{"time":"2024-05-01T08:00:05.000Z","event":"source","action":"outage","detail":"gpsd closed the connection"}"#
                + "\n"
        )
        #expect(recorder.events.first?.ndjson(epoch: Self.epoch).contains(#""format":5"#) == true)
    }
}
