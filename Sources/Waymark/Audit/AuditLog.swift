#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes a simulation's audit log as NDJSON: one ``AuditEvent`` per line.
///
/// Add it to a ``Simulation`` as an observer; call ``finish()`` after the run, which reports the
/// first write error, if any (an observer cannot throw mid-run, so writing stops at the first
/// error and the run goes on).
public final class AuditLogWriter: SimulationObserver {
    private let sink: FileSink
    private let epoch: Date
    private var cache = ValueFormatting.DayCache()
    private var failure: (any Error)?

    public init(sink: FileSink, epoch: Date) {
        self.sink = sink
        self.epoch = epoch
    }

    public func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard failure == nil else { return }
        event.append(to: sink.buffer, epoch: epoch, cache: &cache)
        do { try sink.flushIfNeeded() } catch { failure = error }
    }

    /// Flushes and commits the log; throws the first write error.
    public func finish() throws {
        if let failure { throw failure }
        try sink.flush()
        try sink.commit()
    }
}

/// Keeps a simulation's events in memory (for tests and tools).
public final class AuditRecorder: SimulationObserver {
    public private(set) var events: [AuditEvent] = []
    public init() {}
    public func simulation(_ simulation: Simulation, didRecord event: AuditEvent) { events.append(event) }

    /// The events as NDJSON.
    public func ndjson(epoch: Date) -> String {
        let out = ByteStore(capacity: 4096)
        var cache = ValueFormatting.DayCache()
        for e in events { e.append(to: out, epoch: epoch, cache: &cache) }
        return out.string
    }
}

extension StoredLocation {
    /// The location as one NDJSON line (with its newline): time, index, segment, app state, reason,
    /// position, and the values that are valid (altitude and vertical accuracy, speed and course
    /// with their accuracies).
    public func ndjson() -> String {
        let out = ByteStore(capacity: 256)
        var cache = ValueFormatting.DayCache()
        append(to: out, cache: &cache)
        return out.string
    }

    func append(to out: ByteStore, cache: inout ValueFormatting.DayCache) {
        Self.append(
            location, index: index, segment: segment, appState: appState, reason: reason, to: out, cache: &cache)
    }

    /// The NDJSON line of a delivered location, from its parts (no ``StoredLocation`` needed).
    static func append(
        _ l: borrowing Location, index: Int, segment: Int, appState: AppState, reason: FixReason, to out: ByteStore,
        cache: inout ValueFormatting.DayCache
    ) {
        out.append("{\"time\":\"")
        ValueFormatting.appendISO8601(l.timestamp, to: out, cache: &cache)
        out.append(UInt8(ascii: "\""))
        let w = JSONFields(out: out)
        w.int("index", index)
        w.int("segment", segment)
        w.string("appState", appState.rawValue)
        w.string("reason", reason.rawValue)
        w.number("latitude", l.coordinate.latitude, decimals: 7)
        w.number("longitude", l.coordinate.longitude, decimals: 7)
        w.accuracy("horizontalAccuracy", l.horizontalAccuracy)
        if l.hasValidAltitude {
            w.number("altitude", l.altitude, decimals: 2)
            w.accuracy("verticalAccuracy", l.verticalAccuracy)
        }
        if l.speed >= 0 { w.number("speed", l.speed, decimals: 2) }
        if l.speed >= 0 && l.speedAccuracy >= 0 { w.accuracy("speedAccuracy", l.speedAccuracy) }
        if l.course >= 0 { w.number("course", l.course, decimals: 1) }
        if l.course >= 0 && l.courseAccuracy >= 0 { w.accuracy("courseAccuracy", l.courseAccuracy) }
        out.append("}\n")
    }
}

/// Writes delivered locations as NDJSON, one per line, through a ``FileSink``: the lines of
/// ``StoredLocation/ndjson()``, written by its hot path (`LocationNDJSONLine`).
public final class LocationNDJSONWriter {
    private let sink: FileSink
    // Written once per delivered fix; only the line being written uses it.
    @exclusivity(unchecked) private var cache = ValueFormatting.DayCache()
    /// The thread that writes the lines, for a writer made by ``writingAhead(to:)``.
    let ahead: LineThread?

    public init(sink: FileSink) {
        self.sink = sink
        ahead = nil
    }

    init(sink: FileSink, ahead: LineThread) {
        self.sink = sink
        self.ahead = ahead
    }

    public func write(_ location: StoredLocation) throws {
        // `ahead` is called through the constant, not bound to a name: a binding counts a
        // reference to the thread around the call, for every line.
        if ahead != nil {
            ahead?.add(
                LineThread.Line(
                    fields: LocationNDJSONLine.Fields(location.location), index: location.index,
                    segment: location.segment, appState: location.appState, reason: location.reason))
            return
        }
        LocationNDJSONLine.append(
            location.location, index: location.index, segment: location.segment, appState: location.appState,
            reason: location.reason, to: sink.buffer, cache: &cache)
        try sink.flushIfNeeded()
    }

    /// Writes the location a fix record says was delivered, if any: the same line as
    /// ``write(_:)`` of its ``StoredLocation``.
    public func write(delivered record: borrowing AuditEvent.FixRecord) throws {
        // The location is read where it lies, not bound to a name (which counts a reference).
        guard record.delivered != nil else { return }
        if ahead != nil {
            ahead?.add(
                LineThread.Line(
                    fields: LocationNDJSONLine.Fields(record.delivered!), index: record.index, segment: record.segment,
                    appState: record.appState, reason: record.reason))
            return
        }
        LocationNDJSONLine.append(
            record.delivered!, index: record.index, segment: record.segment, appState: record.appState,
            reason: record.reason,
            to: sink.buffer, cache: &cache)
        try sink.flushIfNeeded()
    }

    /// Writes out what is buffered (waiting for a writing thread first); throws the first write
    /// error.
    public func finish() throws {
        if let ahead {
            ahead.end()
            if let failure = ahead.failure { throw failure }
        }
        try sink.flush()
    }
}
