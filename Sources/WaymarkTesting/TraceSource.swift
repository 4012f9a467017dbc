import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Replay sources for tests: a GPX file, GPX text, or a list of coordinates.
///
/// Each one lays the trace out with ``Waymark/ReplaySchedule`` and replays it once with
/// ``Waymark/GPXReplaySource``, so a test sees exactly what `waymark replay` would.
///
/// ```swift
/// let walk = try TraceSource.gpx(contentsOf: "traces/city-walk.gpx")
/// let line = try TraceSource.coordinates(
///     [Coordinate(latitude: 48.1372, longitude: 11.5755), Coordinate(latitude: 48.1380, longitude: 11.5755)],
///     every: .seconds(1))
/// ```
public enum TraceSource {
    /// The time of the first fix of a trace built from coordinates, unless a test gives one:
    /// 2024-05-01 08:00:00 UTC.
    public static let defaultStart = Date(timeIntervalSince1970: 1_714_550_400)

    /// Replays the GPX file at `path`.
    ///
    /// - Throws: ``Waymark/GPXError`` when the file cannot be read or is not GPX, and
    ///   ``Waymark/ReplaySchedule/ScheduleError`` when `options` are invalid.
    public static func gpx(
        contentsOf path: String, options: ReplaySchedule.Options = ReplaySchedule.Options(), loops: Int? = 1
    ) throws -> GPXReplaySource {
        let document = try GPXDocument(contentsOf: path)
        let schedule = try ReplaySchedule(document: document, file: path, options: options)
        return GPXReplaySource(schedule: schedule, name: path, loops: loops)
    }

    /// Replays the trace at `path` in whatever format its content tells (GPX, TCX, KML, GeoJSON,
    /// FIT, CSV or an NMEA log), as `waymark replay` reads it.
    ///
    /// - Throws: ``Waymark/GPXError`` when the file cannot be read, and
    ///   ``Waymark/ReplaySchedule/ScheduleError`` when `options` are invalid.
    public static func trace(
        contentsOf path: String, options: ReplaySchedule.Options = ReplaySchedule.Options(), loops: Int? = 1
    ) throws -> GPXReplaySource {
        let reader = try TraceFormat.reader(for: FileByteSource(path: path), name: path)
        let document = try GPXDocument(reading: reader)
        let schedule = try ReplaySchedule(document: document, file: path, options: options)
        return GPXReplaySource(schedule: schedule, name: path, loops: loops)
    }

    /// Replays the trace at `path` made bad on purpose: its track points degraded by `profile`
    /// with `seed` (``Waymark/TraceDegrader``), as `waymark replay --degrade` plays it. The truth
    /// to measure an app against is ``Waymark/DegradeEvaluation`` of the trace itself.
    ///
    /// ```swift
    /// var canyon = DegradeProfile(name: "canyon")
    /// canyon.noise = .init(sigma: 5, tau: 30)
    /// canyon.jumps = .init(every: 300, distance: 150, lasting: 5, reportedAccuracy: 12)
    /// let bad = try TraceSource.degraded(contentsOf: "traces/city-walk.gpx", profile: canyon, seed: 7)
    /// ```
    public static func degraded(
        contentsOf path: String, profile: DegradeProfile, seed: UInt64,
        options: ReplaySchedule.Options = ReplaySchedule.Options(), loops: Int? = 1
    ) throws -> GPXReplaySource {
        let reader = DegradingReader(
            try TraceFormat.reader(for: FileByteSource(path: path), name: path), profile: profile, seed: seed)
        let document = try GPXDocument(reading: reader)
        let schedule = try ReplaySchedule(document: document, file: path, options: options)
        return GPXReplaySource(schedule: schedule, name: path, loops: loops)
    }

    /// Replays a GPX document given as text; `name` names it in messages and in the audit log.
    ///
    /// - Throws: ``Waymark/GPXError`` when the text is not GPX, and
    ///   ``Waymark/ReplaySchedule/ScheduleError`` when `options` are invalid.
    public static func gpx(
        _ text: String, name: String = "trace.gpx", options: ReplaySchedule.Options = ReplaySchedule.Options(),
        loops: Int? = 1
    ) throws -> GPXReplaySource {
        let document = try GPXDocument(data: Array(text.utf8), name: name)
        let schedule = try ReplaySchedule(document: document, file: name, options: options)
        return GPXReplaySource(schedule: schedule, name: name, loops: loops)
    }

    /// Replays `coordinates` as one track segment, a fix every `interval`.
    ///
    /// Without `speed`, each coordinate is one fix, `interval` after the one before. With
    /// `speed` (metres per second), the device moves along the geodesic between the coordinates
    /// at that speed, and a fix, interpolated, comes every `interval`. The first fix is at
    /// offset zero and carries the timestamp `start`. Speed and course are derived from the
    /// neighbouring fixes.
    ///
    /// - Throws: ``Waymark/ReplaySchedule/ScheduleError`` when `interval` or `speed` is not
    ///   above zero.
    public static func coordinates(
        _ coordinates: [Coordinate], every interval: Duration = .seconds(1), speed: Double? = nil,
        start: Date = defaultStart, name: String = "coordinates"
    ) throws -> GPXReplaySource {
        let step = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let points = coordinates.enumerated().map { i, c in
            GPXPoint(
                latitude: c.latitude, longitude: c.longitude,
                time: speed == nil ? start.addingTimeInterval(Double(i) * step) : nil)
        }
        let document = GPXDocument(tracks: [GPXTrack(segments: [GPXSegment(points: points)])])
        let options = ReplaySchedule.Options(
            untimedSpeed: speed ?? 1.4, interval: interval, untimedStart: start)
        let schedule = try ReplaySchedule(document: document, file: name, options: options)
        return GPXReplaySource(schedule: schedule, name: name)
    }
}
