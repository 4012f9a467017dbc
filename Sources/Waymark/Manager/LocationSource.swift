#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that happens at a location source: a fix, or a moment without one.
public struct SourceEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A position fix.
        case fix(Location)
        /// The receiver reports no fix (gpsd mode < 2, a GPX point with `<fix>none</fix>`):
        /// the manager reports `locationUnknown`.
        case noFix
    }

    /// Time since the start of the run, on the simulation's timeline.
    public var offset: Duration
    public var kind: Kind
    /// The point's index in its file (0-based, document order), or the fix's sequence number.
    public var index: Int
    /// The track segment; a new segment follows a loss of signal.
    public var segment: Int

    public init(offset: Duration, kind: Kind, index: Int, segment: Int) {
        self.offset = offset
        self.kind = kind
        self.index = index
        self.segment = segment
    }
}

/// Where fixes come from: a replayed trace or a live receiver.
///
/// A source yields its events in time order. A replay source knows every offset ahead of time;
/// a live source learns them as fixes arrive.
public protocol LocationSource {
    /// What to call the source in logs: a file name, a gpsd address.
    var name: String { get }
    /// The next event, or nil when the source has ended.
    ///
    /// It runs on the caller's isolation (the simulation's), so a source need not be `Sendable`.
    nonisolated(nonsending) mutating func next() async throws -> SourceEvent?
}

/// A source that has its next event at hand without waiting: a replayed trace.
///
/// A simulation in virtual time takes events from it without suspending between them.
public protocol SynchronousLocationSource: LocationSource {
    /// The next event, or nil when the source has ended.
    mutating func nextEvent() throws -> SourceEvent?
}

/// Replays a ``ReplaySchedule``: the trace's fixes at their offsets, optionally looped.
///
/// Each loop starts one second after the previous one's last fix, with timestamps moved on by
/// the same amount, so time never goes backwards; its segments are numbered on from the last
/// loop's.
public struct GPXReplaySource: SynchronousLocationSource, Sendable {
    public let schedule: ReplaySchedule
    public let name: String
    /// How many times to play the trace; nil plays it until the run ends.
    public let loops: Int?
    private var position = 0
    private var loop = 0
    private let period: Duration
    private let segmentsPerLoop: Int

    /// Replays `schedule`; `name` names it in logs (the file's path, say).
    public init(schedule: ReplaySchedule, name: String = "replay", loops: Int? = 1) {
        self.schedule = schedule
        self.name = name
        self.loops = loops
        period = (schedule.fixes.last?.offset ?? .zero) + .seconds(1)
        segmentsPerLoop = (schedule.fixes.last?.segment ?? 0) + 1
    }

    /// The events as an array, for tests and benchmarks (a finite number of loops only).
    public var allEvents: [SourceEvent] {
        precondition(loops != nil, "an endless source has no end")
        var copy = self
        var events: [SourceEvent] = []
        while let e = copy.nextEvent() { events.append(e) }
        return events
    }

    public mutating func next() async throws -> SourceEvent? { nextEvent() }

    /// The next event, synchronously.
    public mutating func nextEvent() -> SourceEvent? {
        guard !schedule.fixes.isEmpty else { return nil }
        if position == schedule.fixes.count {
            loop += 1
            position = 0
        }
        if let loops, loop >= loops { return nil }
        let fix = schedule.fixes[position]
        position += 1
        let index: Int
        let origin = fix.location.provenance.origin
        index = origin.isFile ? origin.index : position - 1
        var location = fix.location
        var offset = fix.offset
        if loop > 0 {
            let shift = period * loop
            offset += shift
            location.timestamp = location.timestamp.addingTimeInterval(
                Double(shift.components.seconds) + Double(shift.components.attoseconds) / 1e18)
        }
        let kind: SourceEvent.Kind = location.provenance.fixMode == .none ? .noFix : .fix(location)
        return SourceEvent(offset: offset, kind: kind, index: index, segment: fix.segment + loop * segmentsPerLoop)
    }
}
