#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streaming reader of Garmin's Training Center XML (TCX v2: Garmin Connect's and Strava's
/// activity exports, and courses), giving the same events as ``GPXReader``.
///
/// - Each `<Activity>` is a track, named by its `<Id>` (its start time, as GPSBabel names it),
///   with its `Sport` as the track's type and its `<Creator>`'s name as the track's source.
/// - Each `<Track>` of a lap is a segment: a watch starts a new one after a pause, so the pause
///   stays a gap. (GPSBabel joins them into one segment; the points are the same.)
/// - A `<Trackpoint>`'s `<Time>`, `<Position>`, `<AltitudeMeters>`, `<HeartRateBpm>`,
///   `<Cadence>`, and in its `ActivityExtension` `<Speed>`, `<Watts>` and `<RunCadence>`, become
///   the point's time, position, elevation and sensor values.
/// - A trackpoint without `<Position>` (the watch had no fix, or an indoor activity) holds
///   sensor values only; GPX has no point without a position, so it is left out and counted in
///   one warning.
/// - Each `<Course>` is a track named by its `<Name>`, and its `<CoursePoint>`s are waypoints
///   (their `<PointType>` is the waypoint's type).
/// - Laps are not points; their summaries (time, distance, calories) are not kept.
///
/// It reads the file once and holds one point at a time, whatever the file's size.
public final class TCXReader: TraceEventReader {
    private let walker: XMLTraceWalker
    private var handle: (consuming GPXEvent) throws -> Void = { _ in }
    /// Bad points left out (lenient reading only).
    public private(set) var droppedPoints = 0
    private var positionless = 0
    /// Where the first trackpoint without a position is, taken while it is in the window.
    private var firstPositionless = (line: 0, column: 0)
    private var segmentOpen = false

    public var fileName: String { walker.fileName }

    /// Reads `path` (`-` for standard input).
    public convenience init(contentsOf path: String, options: GPXReadOptions = GPXReadOptions()) throws {
        self.init(source: try FileByteSource(path: path), name: path, options: options)
    }

    /// Reads from any byte source; `name` appears in messages.
    public init(source: ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        walker = XMLTraceWalker(source: source, name: name, options: options)
    }

    /// Reads the whole document, handing each event to `handle` as soon as it is complete.
    ///
    /// - Throws: ``GPXError`` for malformed input, or whatever `handle` throws.
    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try withoutActuallyEscaping(handle) { handle in
            self.handle = handle
            defer { self.handle = { _ in } }
            try readDocument()
        }
    }

    private var tokenizer: XMLTokenizer { walker.tokenizer }

    private func emit(_ event: consuming GPXEvent) throws {
        try walker.flush(handle)
        try handle(event)
    }

    private func readDocument() throws {
        guard try walker.moveToRoot() else {
            throw walker.error(.notGPX, at: 0, "the document has no root element")
        }
        guard tokenizer.localName.equals("TrainingCenterDatabase") else {
            throw walker.error(
                .notGPX, at: tokenizer.absoluteTokenStart,
                "the root element is <\(tokenizer.qualifiedName.string)>, not <TrainingCenterDatabase>: this is not a TCX file"
            )
        }
        try emit(.header(GPXHeader(version: "1.1", creator: nil)))
        try walker.forEachChild { name in
            if name.equals("Activities") || name.equals("MultiSportSession") {
                try readActivities()
            } else if name.equals("Courses") {
                try walker.forEachChild { name in
                    if name.equals("Course") { try readCourse() } else { try walker.skipElement() }
                }
            } else {
                try walker.skipElement()
            }
        }
        try walker.flush(handle)
        if positionless > 0 {
            try handle(
                .warning(
                    GPXWarning(
                        file: fileName, line: firstPositionless.line, column: firstPositionless.column,
                        message:
                            "\(positionless) trackpoint(s) have no <Position> (sensor values only, the first here); GPX has no point without a position, so they are left out"
                    )))
        }
    }

    /// `<Activities>`, or a multisport session's sections: each `<Activity>` in it is a track.
    private func readActivities() throws {
        try walker.forEachChild { name in
            if name.equals("Activity") {
                try readActivity()
            } else if name.equals("FirstSport") || name.equals("NextSport") {
                try readActivities()
            } else {
                try walker.skipElement()
            }
        }
    }

    private func readActivity() throws {
        var info = GPXPathInfo()
        info.type = tokenizer.attribute("Sport")?.trimmed.string
        var started = false
        func start() throws {
            guard !started else { return }
            started = true
            try emit(.trackStart(info))
        }
        try walker.forEachChild { name in
            if name.equals("Id") {
                info.name = try walker.readString()
            } else if name.equals("Lap") {
                try start()
                try walker.forEachChild { name in
                    if name.equals("Track") { try readTrack() } else { try walker.skipElement() }
                }
            } else if name.equals("Notes") {
                info.description = try walker.readString()
            } else if name.equals("Creator") {
                try walker.forEachChild { name in
                    if name.equals("Name") { info.source = try walker.readString() } else { try walker.skipElement() }
                }
            } else {
                try walker.skipElement()
            }
        }
        try start()
        try emit(.trackEnd(info))
    }

    private func readCourse() throws {
        var info = GPXPathInfo()
        var started = false
        // Course points come after the course's track has begun: they wait for its end, since a
        // waypoint is never inside a track.
        var waiting: [GPXPoint] = []
        func start() throws {
            guard !started else { return }
            started = true
            try emit(.trackStart(info))
        }
        try walker.forEachChild { name in
            if name.equals("Name") {
                info.name = try walker.readString()
            } else if name.equals("Track") {
                try start()
                try readTrack()
            } else if name.equals("CoursePoint") {
                if let point = try readPoint(kind: "CoursePoint") {
                    if started { waiting.append(point) } else { try emit(.waypoint(point)) }
                }
            } else if name.equals("Notes") {
                info.description = try walker.readString()
            } else {
                try walker.skipElement()
            }
        }
        try start()
        try emit(.trackEnd(info))
        for point in waiting { try emit(.waypoint(point)) }
    }

    /// A `<Track>`: one segment, opened at its first point with a position.
    private func readTrack() throws {
        try walker.forEachChild { name in
            guard name.equals("Trackpoint") else {
                try walker.skipElement()
                return
            }
            guard let point = try readPoint(kind: "Trackpoint") else { return }
            if !segmentOpen {
                segmentOpen = true
                try emit(.segmentStart)
            }
            try emit(.trackPoint(point))
        }
        if segmentOpen {
            segmentOpen = false
            try emit(.segmentEnd(GPXExtensions()))
        }
    }

    /// A `<Trackpoint>` or `<CoursePoint>`; nil when it has no position (counted) or a bad one
    /// (lenient: dropped with a warning). Its position is judged at its end, and reported at its
    /// start, marked.
    private func readPoint(kind: String) throws -> GPXPoint? {
        try walker.marking { start in try readPoint(kind: kind, start: start) }
    }

    private func readPoint(kind: String, start: Int) throws -> GPXPoint? {
        var latitude: Double?
        var longitude: Double?
        var hasPosition = false
        var point = GPXPoint(coordinate: Coordinate(latitude: 0, longitude: 0))
        var runCadence: Double?
        try walker.forEachChild { name in
            switch name.count {
            case 4 where name.equals("Time"):
                point.time = try walker.readTime("Time")
            case 8 where name.equals("Position"):
                hasPosition = true
                try walker.forEachChild { name in
                    if name.equals("LatitudeDegrees") {
                        latitude = try walker.readDouble("LatitudeDegrees")
                    } else if name.equals("LongitudeDegrees") {
                        longitude = try walker.readDouble("LongitudeDegrees")
                    } else {
                        try walker.skipElement()
                    }
                }
            case 14 where name.equals("AltitudeMeters"):
                point.elevation = try walker.readDouble("AltitudeMeters")
            case 12 where name.equals("HeartRateBpm"):
                try walker.forEachChild { name in
                    if name.equals("Value") {
                        point.extensions.heartRate = try walker.readDouble("Value")
                    } else {
                        try walker.skipElement()
                    }
                }
            case 7 where name.equals("Cadence"):
                point.extensions.cadence = try walker.readDouble("Cadence")
            case 10 where name.equals("Extensions"):
                try readExtensions(into: &point, runCadence: &runCadence)
            case 4 where name.equals("Name"):
                point.name = try walker.readString()
            case 5 where name.equals("Notes"):
                point.description = try walker.readString()
            case 9 where name.equals("PointType"):
                point.type = try walker.readString()
            default:
                try walker.skipElement()
            }
        }
        if point.extensions.cadence == nil, let runCadence { point.extensions.cadence = runCadence }
        guard hasPosition else {
            if positionless == 0 { firstPositionless = walker.place(ofMark: start) }
            positionless += 1
            return nil
        }
        if let problem = XMLTraceWalker.problem(latitude: latitude, longitude: longitude) {
            let message = "<\(kind)>'s <Position>: \(problem)"
            let place = walker.place(ofMark: start)
            guard walker.lenient else { throw walker.error(.invalidCoordinate, at: place, message) }
            droppedPoints += 1
            walker.warn(at: place, message + "; the point is dropped")
            return nil
        }
        point.coordinate = Coordinate(latitude: latitude!, longitude: longitude!)
        return point
    }

    /// A trackpoint's `<Extensions>`: Garmin's ActivityExtension `<TPX>` holds `<Speed>` (metres
    /// per second), `<Watts>` and `<RunCadence>` (steps per minute of one foot, as Garmin's
    /// `cad`), at any depth and in any namespace.
    private func readExtensions(into point: inout GPXPoint, runCadence: inout Double?) throws {
        try walker.forEachChild { name in
            if name.equals("Speed") {
                point.extensions.speed = try walker.readDouble("Speed")
            } else if name.equals("Watts") {
                point.extensions.power = try walker.readDouble("Watts")
            } else if name.equals("RunCadence") {
                runCadence = try walker.readDouble("RunCadence")
            } else {
                try readExtensions(into: &point, runCadence: &runCadence)
            }
        }
    }
}
