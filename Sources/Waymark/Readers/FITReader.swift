#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streaming reader of FIT activity and course files (Garmin's binary format: watches, bike
/// computers, and the originals Garmin Connect and Strava export), giving the same events as
/// ``GPXReader``.
///
/// - The `record` messages are the points of one track: time, position, altitude (enhanced
///   when present), heart rate, cadence, power, temperature and speed.
/// - A timer stop (`event` timer, stop or stop_all) ends the segment: the next record starts a
///   new one, so a pause stays a gap.
/// - The `session`'s sport is the track's type.
/// - A course file's `course_point`s are waypoints (name, position, time).
/// - Laps are summaries, not points: they are not kept.
/// - Records without a position (indoor, or no fix yet) hold sensor values only; GPX has no
///   point without a position, so they are left out, counted in one warning.
///
/// The protocol is read by `FITDecoder`, the messages' meaning taken from `FITProfile`. Errors name
/// the byte offset. Lenient, a file damaged part-way is read up to the damage.
public final class FITReader: TraceEventReader {
    public let fileName: String
    private let decoder: FITDecoder
    private let lenient: Bool
    /// Bad points left out (lenient reading only).
    public private(set) var droppedPoints = 0

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        self.init(source: try FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        fileName = name
        lenient = options.lenient
        decoder = FITDecoder(source: source, fileName: name)
    }

    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try handle(.header(GPXHeader(version: "1.1", creator: nil)))
        var trackOpen = false
        var segmentOpen = false
        var paused = false
        var delivered = 0
        var positionless = 0
        var firstPositionless = 0
        var info = GPXPathInfo()
        // Course points that come while the track is open wait for its end: a waypoint is never
        // inside a track.
        var waiting: [GPXPoint] = []
        func close() throws {
            if segmentOpen { try handle(.segmentEnd(GPXExtensions())) }
            segmentOpen = false
            if trackOpen { try handle(.trackEnd(info)) }
            trackOpen = false
            for point in waiting { try handle(.waypoint(point)) }
            waiting.removeAll()
        }
        do {
            while let message = try decoder.next() {
                switch message.global {
                case FITProfile.MessageNumber.record:
                    let record = FITRecord(message)
                    guard let coordinate = try position(message, latitudeField: 0, longitudeField: 1, handle) else {
                        if message.int(0) == nil || message.int(1) == nil {
                            if positionless == 0 { firstPositionless = message.offset }
                            positionless += 1
                        }
                        continue
                    }
                    var point = GPXPoint(coordinate: coordinate)
                    point.time = record.timestamp
                    point.elevation = record.altitude
                    point.extensions.heartRate = record.heartRate.map(Double.init)
                    point.extensions.cadence = record.cadence
                    point.extensions.power = record.power.map(Double.init)
                    point.extensions.airTemperature = record.temperature.map(Double.init)
                    point.extensions.speed = record.speed
                    if !trackOpen {
                        trackOpen = true
                        try handle(.trackStart(GPXPathInfo()))
                    }
                    if paused && segmentOpen {
                        try handle(.segmentEnd(GPXExtensions()))
                        segmentOpen = false
                    }
                    paused = false
                    if !segmentOpen {
                        segmentOpen = true
                        try handle(.segmentStart)
                    }
                    delivered += 1
                    try handle(.trackPoint(point))
                case FITProfile.MessageNumber.event:
                    if FITEvent(message).isTimerStop { paused = true }
                case FITProfile.MessageNumber.session:
                    if let sport = FITSession(message).sport { info.type = Self.sportName(sport) }
                case Self.coursePoint:
                    guard let coordinate = try position(message, latitudeField: 2, longitudeField: 3, handle) else {
                        continue
                    }
                    var point = GPXPoint(coordinate: coordinate)
                    point.time = FITProfile.date(message, 1)
                    point.name = message.string(6)
                    if let type = message.uint(5) { point.type = Self.coursePointTypes[Int(type)] ?? "type \(type)" }
                    delivered += 1
                    if trackOpen { waiting.append(point) } else { try handle(.waypoint(point)) }
                default:
                    continue
                }
            }
        } catch let error as GPXError where lenient && delivered > 0 && error.code != .io {
            try handle(
                .warning(
                    GPXWarning(
                        file: error.file, line: error.line, column: error.column,
                        message:
                            "\(error.message); kept the \(delivered) point(s) read before this, dropped the rest of the file"
                    )))
        }
        try close()
        if positionless > 0 {
            try handle(
                .warning(
                    GPXWarning(
                        file: fileName, line: 0, column: 0,
                        message:
                            "\(positionless) record(s) have no position (sensor values only, the first at byte \(firstPositionless)); GPX has no point without a position, so they are left out"
                    )))
        }
    }

    /// The position in two semicircle fields; nil when the message has none, or (lenient) a bad
    /// one, dropped with a warning. Strict, a bad one is an error.
    private func position(
        _ message: FITMessage, latitudeField: UInt8, longitudeField: UInt8,
        _ handle: (consuming GPXEvent) throws -> Void
    ) throws -> Coordinate? {
        guard let lat = message.int(latitudeField), let lon = message.int(longitudeField) else { return nil }
        let coordinate = Coordinate(
            latitude: FITProfile.degrees(semicircles: lat), longitude: FITProfile.degrees(semicircles: lon))
        if let problem = XMLTraceWalker.problem(latitude: coordinate.latitude, longitude: coordinate.longitude) {
            let message = "at byte \(message.offset): a position's \(problem)"
            guard lenient else {
                throw GPXError(code: .invalidCoordinate, file: fileName, line: 0, column: 0, message: message)
            }
            droppedPoints += 1
            try handle(
                .warning(GPXWarning(file: fileName, line: 0, column: 0, message: message + "; the point is dropped")))
            return nil
        }
        return coordinate
    }

    /// `course_point`, global message 32.
    static let coursePoint: UInt16 = 32

    /// The profile's `course_point` type values.
    static let coursePointTypes: [Int: String] = [
        0: "generic", 1: "summit", 2: "valley", 3: "water", 4: "food", 5: "danger", 6: "left", 7: "right",
        8: "straight", 9: "first_aid", 10: "fourth_category", 11: "third_category", 12: "second_category",
        13: "first_category", 14: "hors_category", 15: "sprint", 16: "left_fork", 17: "right_fork",
        18: "middle_fork", 19: "slight_left", 20: "sharp_left", 21: "slight_right", 22: "sharp_right",
        23: "u_turn", 24: "segment_start", 25: "segment_end",
    ]

    /// The profile's `sport` type, as its name (`running`, `cycling`…).
    static func sportName(_ sport: UInt8) -> String {
        let names = [
            "generic", "running", "cycling", "transition", "fitness_equipment", "swimming", "basketball", "soccer",
            "tennis", "american_football", "training", "walking", "cross_country_skiing", "alpine_skiing",
            "snowboarding", "rowing", "mountaineering", "hiking", "multisport", "paddling", "flying", "e_biking",
            "motorcycling", "boating", "driving", "golf", "hang_gliding", "horseback_riding", "hunting", "fishing",
            "inline_skating", "rock_climbing", "sailing", "ice_skating", "sky_diving", "snowshoeing",
            "snowmobiling", "stand_up_paddleboarding", "surfing", "wakeboarding", "water_skiing", "kayaking",
            "rafting", "windsurfing", "kitesurfing", "tactical", "jumpmaster", "boxing", "floor_climbing",
        ]
        return Int(sport) < names.count ? names[Int(sport)] : "sport \(sport)"
    }
}
