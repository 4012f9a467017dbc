import Foundation
import Testing

@testable import Waymark

/// The device's invariants over generated runs, and metamorphic relations: changes to the input
/// that must leave every decision as it was.
///
/// A run is a generated app (its Info.plist's background modes, its authorization, its requests,
/// its manager's settings, an iOS release) and a generated script of up to 24 user and system
/// actions (the app sent away and back, swiped away or ended by the system, authorization,
/// Precise Location and Location Services changed in Settings, Low Power Mode, Background App
/// Refresh, updates stopped and started, background tasks, the significant-change service), on a
/// walk of a fix every 5 s for ten minutes. Each invariant is read off the audit log, so it holds
/// for what a user sees, whatever the order of events.
@Suite struct DevicePropertyTests {
    struct Run: Sendable, CustomStringConvertible {
        var scenario: Scenario
        var fixes = 120
        /// Metres between fixes, north-east.
        var step = 7.0
        var description: String {
            let s = scenario
            return """
                iOS \(s.system.iosVersion), modes \(s.info.backgroundModes), \(s.device.authorization), \
                request \(s.app.request.map { "\($0)" } ?? "none"), answers \(s.user.whenInUse.map { "\($0)" } ?? "-")/\
                \(s.user.always.map { "\($0)" } ?? "-"), allows \(s.manager.allowsBackgroundLocationUpdates), \
                filter \(s.manager.distanceFilter), significant \(s.app.monitorsSignificantChanges); \
                timeline: \(s.timeline.map { "\($0.at) \($0.action)" }.joined(separator: ", "))
                """
        }
    }

    /// The actions a script draws from, the common ones (the app sent away and back) several
    /// times over, so that most runs reach the background, the suspension and the return.
    static let actions: [Scenario.Action] =
        Array(repeating: [Scenario.Action.background, .foreground], count: 5).flatMap { $0 } + [
            .deactivate, .activate, .terminate, .systemTerminate,
            .setAuthorization(.denied), .setAuthorization(.authorizedWhenInUse), .setAuthorization(.authorizedAlways),
            .setAuthorization(.denied), .setAuthorization(.authorizedAlways), .setPreciseLocation(false),
            .setPreciseLocation(false), .setPreciseLocation(true), .setLocationServices(false),
            .setLocationServices(true), .setLowPowerMode(true), .setLowPowerMode(false),
            .setBackgroundAppRefresh(false),
            .setBackgroundAppRefresh(true), .stopUpdates, .startUpdates, .beginBackgroundTask, .endBackgroundTask,
            .startMonitoringSignificantLocationChanges, .setAllowsBackgroundLocationUpdates(true),
            .setAllowsBackgroundLocationUpdates(false), .requestAuthorization(.always), .setDistanceFilter(20),
        ]

    static func generate(_ r: inout PropertyRandom) -> Run {
        var s = Scenario()
        let modes: [BackgroundModes] = [.location, .fetch, .remoteNotification, .audio, .processing]
        s.info.backgroundModes = modes.reduce(into: BackgroundModes()) { set, mode in
            if r.bool(mode == .location ? 0.5 : 0.3) { set.insert(mode) }
        }
        s.system.iosVersion = r.pick(IOSVersion.supported.compactMap { IOSVersion(major: $0) })
        s.device.authorization = r.pick([
            .notDetermined, .authorizedWhenInUse, .authorizedWhenInUse, .authorizedAlways, .authorizedAlways, .denied,
        ])
        if r.bool(0.3) { s.device.preciseLocation = false }
        s.app.request = r.bool(0.5) ? r.pick([.whenInUse, .always]) : nil
        s.user.whenInUse = r.bool(0.8) ? r.pick(WhenInUseAnswer.allCases) : nil
        s.user.always = r.bool(0.6) ? r.pick(AlwaysAnswer.allCases) : nil
        s.manager.allowsBackgroundLocationUpdates = s.info.backgroundModes.contains(.location) && r.bool(0.6)
        s.manager.distanceFilter = r.pick([-1, -1, 0, 10, 40])
        s.manager.pausesLocationUpdatesAutomatically = r.bool(0.3)
        s.app.monitorsSignificantChanges = r.bool(0.3)
        s.app.beginsBackgroundTask = r.bool(0.3)
        var at = 0
        s.timeline = r.array(0...24) { r in
            at += r.int(0...60)
            return Scenario.TimedAction(at: .seconds(at), r.pick(actions))
        }
        s.end = .seconds(660)
        return Run(scenario: s, step: r.pick([0.5, 3, 7, 30]))
    }

    static func shrink(_ run: Run) -> [Run] {
        shrinkArray(run.scenario.timeline, minimum: 0).map { timeline in
            var smaller = run
            smaller.scenario.timeline = timeline
            return smaller
        }
    }

    static let runs = Property<Run>(name: "device", generate: generate, shrink: shrink)

    /// What a run wrote: the audit events and the summary.
    static func play(
        _ run: Run, epoch: Date = Date(timeIntervalSince1970: 1_714_550_400), latitudeSign: Double = 1,
        longitudeSign: Double = 1, alsoTelling others: [any SimulationObserver] = []
    ) -> (events: [AuditEvent], summary: RunSummary) {
        let simulation = Simulation(scenario: run.scenario, epoch: epoch)
        let recorder = AuditRecorder()
        simulation.addObserver(recorder)
        for other in others { simulation.addObserver(other) }
        simulation.start(source: "property")
        let metresPerDegree = 111_320.0
        for i in 0..<run.fixes {
            let d = Double(i) * run.step / metresPerDegree
            let location = Location(
                coordinate: Coordinate(latitude: latitudeSign * (51.5 + d), longitude: longitudeSign * (0.12 + d)),
                altitude: 40, horizontalAccuracy: 5, verticalAccuracy: 8, speed: run.step / 5, course: 45,
                timestamp: epoch.addingTimeInterval(Double(i) * 5),
                provenance: Provenance(
                    source: .file(path: "property.gpx", index: i), isSimulatedBySoftware: false, fixMode: .threeD))
            simulation.receive(SourceEvent(offset: .seconds(i * 5), kind: .fix(location), index: i, segment: 0))
        }
        simulation.advance(to: .seconds(660))
        let summary = simulation.finish(at: .seconds(660))
        return (recorder.events, summary)
    }

    // MARK: - Invariants

    /// What the audit log says about every fix, checked against the state the log itself gives
    /// at that moment.
    static func invariants(_ run: Run) -> [String] {
        let (events, summary) = play(run)
        var problems = Problems()
        var services = run.scenario.device.locationServices
        var alive = false
        var last = Duration.zero
        var records: [String: [AuditEvent.FixRecord]] = [:]
        var discarded = 0
        for event in events {
            problems.expect(event.offset >= last, "time went back at \(event.offset)")
            last = event.offset
            switch event.kind {
            case .locationServicesChanged(let enabled): services = enabled
            case .terminated: alive = false
            case .stateChanged(let from, let to, _):
                problems.expect(from != to, "\(event.offset): a state change to the same state \(to)")
                if from == .notRunning { alive = true }
                if to == .notRunning { alive = false }
            case .heldDiscarded(let count, _, _): discarded += count
            case .locationsDelivered:
                problems.expect(alive, "\(event.offset): locations delivered to an app that is not running")
            case .fix(let record):
                records["\(record.manager)/\(record.index)", default: []].append(record)
                guard record.decision == .delivered else { break }
                problems.expect(alive, "\(event.offset): fix \(record.index) delivered to an ended process")
                problems.expect(services, "\(event.offset): fix \(record.index) delivered with Location Services off")
                problems.expect(
                    [.authorizedWhenInUse, .authorizedAlways].contains(record.authorization),
                    "\(event.offset): fix \(record.index) delivered while \(record.authorization)")
                problems.expect(
                    ![.suspended, .notRunning].contains(record.appState),
                    "\(event.offset): fix \(record.index) delivered to a \(record.appState) app")
                if record.accuracy == .reducedAccuracy, let delivered = record.delivered {
                    problems.expect(
                        delivered.horizontalAccuracy >= 1_000,
                        "\(event.offset): fix \(record.index) delivered precise (±\(delivered.horizontalAccuracy) m) under reduced accuracy"
                    )
                }
            default: break
            }
        }
        // Each fix is decided once at its arrival; a held fix may be delivered once more, later.
        for (key, list) in records {
            problems.expect(list.count <= 2, "fix \(key) has \(list.count) records")
            if list.count == 2 {
                problems.expect(
                    list[0].decision == .held && list[1].decision == .delivered,
                    "fix \(key): \(list[0].decision) then \(list[1].decision)")
            }
        }
        problems.expect(records.count == run.fixes, "\(records.count) of \(run.fixes) fixes decided")
        problems.expect(summary.fixes == run.fixes, "the summary counts \(summary.fixes) fixes")
        // Every held fix ends delivered later or discarded, and the summary adds up.
        problems.expect(
            summary.count(.held) == summary.resumedDeliveries + discarded,
            "held \(summary.count(.held)) ≠ delivered later \(summary.resumedDeliveries) + discarded \(discarded)")
        return problems.list
    }

    @Test func theRulesHoldWhateverTheOrderOfEvents() {
        var property = Self.runs
        property.count = 500
        property.check(Self.invariants)
    }

    /// An observer that reads each fix's record where it lies
    /// (``SimulationObserver/simulation(_:didDecide:at:)``), and every other event as an event.
    final class RecordReader: SimulationObserver {
        var events: [AuditEvent] = []
        var records = 0
        func simulation(_ simulation: Simulation, didRecord event: AuditEvent) { events.append(event) }
        func simulation(
            _ simulation: Simulation, didDecide record: borrowing AuditEvent.FixRecord, at offset: Duration
        ) {
            records += 1
            events.append(AuditEvent(offset: offset, kind: .fix(copy record)))
        }
    }

    /// The join between the driver and its observers: an observer that reads fixes as records
    /// hears each one in its event's place (held fixes delivered on resume included), and so the
    /// same log as an observer that takes every event (the audit log's writers, by default).
    @Test func anObserverReadingRecordsHearsTheLogInOrder() {
        var property = Self.runs
        property.count = 150
        property.check { run in
            let reader = RecordReader()
            let (events, _) = Self.play(run, alsoTelling: [reader])
            var problems = Problems()
            let fixes = events.filter { if case .fix = $0.kind { true } else { false } }.count
            problems.expect(reader.records == fixes, "\(reader.records) records for \(fixes) fix events")
            problems.expect(
                reader.events == events,
                "the logs part at event \(zip(reader.events, events).prefix { $0 == $1 }.count) of \(events.count)")
            return problems.list
        }
    }

    // MARK: - Metamorphic relations

    /// A decision as the log gives it, without the absolute time.
    static func decisions(_ events: [AuditEvent], shiftedBy shift: TimeInterval = 0) -> [String] {
        events.compactMap { event in
            switch event.kind {
            case .started: return nil
            case .fix(let r):
                let delivered = r.delivered.map { "\($0.timestamp.timeIntervalSince1970 - shift)" } ?? "-"
                return
                    "\(event.offset) fix \(r.index) \(r.decision) \(r.reason) \(r.appState) \(r.authorization) \(r.accuracy) \(delivered)"
            default: return "\(event.offset) \(event.name)"
            }
        }
    }

    /// The same run a day, a year, 1024 GPS weeks (the week number's rollover) or 30 years later
    /// decides every fix the same way: nothing reads the date where it should read a duration.
    @Test func shiftingEveryTimeChangesNoDecision() {
        var property = Self.runs
        property.count = 40
        property.check { run in
            let epoch = Date(timeIntervalSince1970: 1_714_550_400)
            let original = Self.decisions(Self.play(run, epoch: epoch).events)
            var problems = Problems()
            let day: TimeInterval = 86_400
            let shifts: [TimeInterval] = [day, 365 * day, 1024 * 7 * day, 30 * 365.25 * day, 1 - day]
            for shift in shifts {
                let shifted = Self.decisions(
                    Self.play(run, epoch: epoch.addingTimeInterval(shift)).events, shiftedBy: shift)
                let first = zip(original, shifted).first { $0 != $1 }
                problems.expect(
                    shifted == original,
                    "shifted by \(shift) s: \(first.map { "\($0.0) became \($0.1)" } ?? "\(shifted.count) events, not \(original.count)")"
                )
            }
            return problems.list
        }
    }

    /// Mirrored across the equator, the prime meridian and the antimeridian together (every
    /// latitude and longitude negated), a walk has the same distances, so every decision (the
    /// distance filter, the significant-change service's 500 m) is the same.
    @Test func mirroringTheTraceChangesNoDecision() {
        var property = Self.runs
        property.count = 40
        property.check { run in
            func decisions(_ lat: Double, _ lon: Double) -> [String] {
                Self.play(run, latitudeSign: lat, longitudeSign: lon).events.compactMap { event in
                    if case .fix(let r) = event.kind { return "\(event.offset) \(r.index) \(r.decision) \(r.reason)" }
                    if case .serviceLocation(let r) = event.kind {
                        return
                            "\(event.offset) \(r.service) \(r.action) \(r.index ?? -1) \(r.reason.map { "\($0)" } ?? "-")"
                    }
                    return nil
                }
            }
            let original = decisions(1, 1)
            var problems = Problems()
            for (lat, lon) in [(-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)] {
                let mirrored = decisions(lat, lon)
                let first = zip(original, mirrored).first { $0 != $1 }
                problems.expect(
                    mirrored.count == original.count && first == nil,
                    "mirrored (\(lat), \(lon)): \(first.map { "\($0.0) became \($0.1)" } ?? "a different count")")
            }
            return problems.list
        }
    }
}
