#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Replays a GPX file as it reads it: the events of a ``GPXReplaySource`` over a
/// ``ReplaySchedule``, with memory bounded whatever the trace's length.
///
/// ```swift
/// var source = try StreamingReplaySource(contentsOf: "walk.gpx", loops: 2)
/// while let event = try source.nextEvent() { print(event.offset, event.index) }
/// ```
///
/// It reads the file twice. A first pass, in the initialiser, keeps only counters: whether the
/// file plays its tracks, its routes or its waypoints, whether every point that plays has a
/// time, how many points go back in time, and the reader's errors and warnings (a large GPX file
/// is counted in two halves at once, on two cores, with the same result). Each play then
/// reads the file again on a thread of its own, and a second thread lays the points out as they
/// come with a few fixes of look-ahead (see ``ReplaySchedule`` for the rules), each handing its
/// work on through a bounded queue. A loop reads the file once more. Standard input (`-`) and
/// other files that cannot be read twice are copied to an unlinked temporary file first.
///
/// The events are those of `GPXReplaySource(schedule: ReplaySchedule(document:file:options:),
/// name:loops:)` for the same file and options, field for field.
///
/// A streaming source is a cursor over an open file: its copies share one position, so use one
/// copy at a time (``Simulation`` takes the copy it is given and uses only that one). Releasing
/// the last copy stops its reader thread and closes the file.
public struct StreamingReplaySource: SynchronousLocationSource {
    public let name: String
    /// How many times to play the trace; nil plays it until the run ends.
    public let loops: Int?
    /// Whether the fixes follow the file's own times (else the trace plays at the untimed speed).
    public let isTimed: Bool
    /// How many points the replay leaves out because their time goes backwards, counted by the
    /// first pass: ``ReplaySchedule/droppedPoints``, known before the first fix.
    public let totalDroppedPoints: Int
    /// Bad points a lenient reader left out (``GPXReader/droppedPoints``), counted by the first pass.
    public let badPointsLeftOut: Int
    /// How many points of the file play (before any are dropped or skipped by the start offset).
    public let pointCount: Int
    private let state: State
    /// How the first pass read the file (tests check that a large one is read in halves).
    let censusReading: ReplayCensus.Reading

    /// Opens `path` (`-` for standard input) and counts what a replay needs to know.
    ///
    /// - Parameters:
    ///   - path: the GPX file, or `-` for standard input (spooled to an unlinked temporary file).
    ///   - file: the name in each fix's provenance (default: `path`), as ``ReplaySchedule``'s `file`.
    ///   - name: what logs call the source (default: `path`).
    ///   - readOptions: how to read the file. Replay uses only the extension values Waymark knows,
    ///     so the default does not keep extension elements.
    ///   - options: how to lay the trace out.
    ///   - loops: how many times to play it; nil plays it until the run ends.
    ///   - readers: readers for formats beyond GPX and NMEA (gpsd JSON, from `WaymarkGPSD`).
    ///   - warnings: receives the reader's warnings, from the first pass only.
    ///   - degrade: a degradation profile and its seed: the track points play degraded by a
    ///     ``TraceDegrader`` (every pass and every loop the same way), the fixes it drops not at
    ///     all.
    /// - Throws: ``GPXError`` when the file cannot be opened or read (as ``GPXReader`` reports it),
    ///   then ``ReplaySchedule/ScheduleError`` for options that cannot lay a trace out: the same
    ///   errors, in the same order, as reading a ``GPXDocument`` and laying out a ``ReplaySchedule``.
    public init(
        contentsOf path: String, file: String? = nil, name: String? = nil,
        readOptions: GPXReadOptions = GPXReadOptions(keepsExtensionElements: false),
        options: ReplaySchedule.Options = ReplaySchedule.Options(), loops: Int? = 1,
        readers: TraceReaders = TraceReaders(),
        warnings: ((GPXWarning) -> Void)? = nil,
        degrade: (profile: DegradeProfile, seed: UInt64)? = nil
    ) throws {
        let opened = try ReplayFile(path: path)
        let reader = Self.degraded(
            try TraceFormat.reader(for: opened.bytes(), name: path, options: readOptions, readers: readers), degrade)
        let census: ReplayCensus
        let badPoints: Int
        // A degraded replay's reader is a DegradingReader: it is counted in one pass.
        if let gpx = reader as? GPXReader {
            (census, badPoints, censusReading) = try ReplayCensus.count(
                gpx, file: opened, readOptions: readOptions, warnings: warnings)
        } else {
            census = try ReplayCensus.count(reader, warnings: warnings)
            badPoints = reader.droppedPoints
            censusReading = .whole
        }
        guard options.untimedSpeed > 0, options.untimedSpeed.isFinite else {
            throw ReplaySchedule.ScheduleError(message: "the speed for untimed traces must be above 0 m/s")
        }
        if let interval = options.interval, interval <= .zero {
            throw ReplaySchedule.ScheduleError(message: "the interval must be longer than 0 s")
        }
        self.name = name ?? path
        self.loops = loops
        isTimed = census.isTimed
        totalDroppedPoints = census.droppedPoints
        badPointsLeftOut = badPoints
        pointCount = census.chosen.count
        state = State(
            file: opened, fileName: file ?? path, readOptions: readOptions, readers: readers, options: options,
            census: census, loops: loops, degrade: degrade)
    }

    /// `reader`, degraded when a profile is given.
    static func degraded(
        _ reader: any TraceEventReader, _ degrade: (profile: DegradeProfile, seed: UInt64)?
    ) -> any TraceEventReader {
        guard let degrade else { return reader }
        return DegradingReader(reader, profile: degrade.profile, seed: degrade.seed)
    }

    /// Points left out so far because their time goes backwards; it grows during the first play
    /// and ends at ``totalDroppedPoints``.
    public var droppedPoints: Int { state.droppedPoints }

    /// The most fixes the look-ahead has held at once in the plays that have ended (the source
    /// has, once it returns nil): a few, whatever the trace's length.
    package var lookAheadHighWater: Int { state.highWater }

    /// The most events the reader thread queues ahead of the replay (its bounded queue).
    package static var readAheadLimit: Int { ReplayPass.batchSize * (ReplayPass.depth + 1) }

    public mutating func next() async throws -> SourceEvent? { try nextEvent() }

    /// The next event, synchronously; nil when the last play has ended.
    ///
    /// - Throws: ``GPXError`` when reading fails part-way (the file changed or vanished since the
    ///   first pass, or an I/O error); the source has ended then.
    public mutating func nextEvent() throws -> SourceEvent? {
        try state.next()
    }

    /// The next event without taking it; nil means there is nothing (more) to replay.
    public mutating func peek() throws -> SourceEvent? {
        try state.peek()?.event
    }

    /// The fix behind the next event, without taking it: the first one gives a run its epoch
    /// (its timestamp less its offset), even when the point has no fix (`<fix>none</fix>`) and
    /// its event carries no location. Nil means there is nothing (more) to replay.
    public mutating func peekFix() throws -> ReplaySchedule.Fix? {
        try state.peek()?.fix
    }
}

extension StreamingReplaySource {
    /// The reading position and the loop, shared by the copies of a source.
    private final class State {
        private let file: ReplayFile
        private let fileName: String
        private let readOptions: GPXReadOptions
        private let readers: TraceReaders
        private let options: ReplaySchedule.Options
        private let census: ReplayCensus
        private let loops: Int?

        // Read for every fix, by the replay's thread alone: no dynamic exclusivity checks.
        /// The play being read and laid out, on threads of its own.
        @exclusivity(unchecked) private var pass: LaidOutPass? {
            didSet { playing = pass.map { Unmanaged.passUnretained($0) } }
        }
        /// ``pass``, not counted: the fix's path calls it without a reference count around each
        /// call. `pass` holds it; `didSet` keeps this in step, and `pass` is assigned only in
        /// `advance()` and `endPass()`, never during a call of `next()`.
        @exclusivity(unchecked) private var playing: Unmanaged<LaidOutPass>?
        /// A fix taken ahead by a peek; `.some(nil)` when the source has ended.
        @exclusivity(unchecked) private var peeked: ReplaySchedule.Fix??
        @exclusivity(unchecked) private var finished = false
        @exclusivity(unchecked) private var loop = 0
        /// The offset and segment of the last fix of the first play, which set the period and
        /// segment count of loops.
        @exclusivity(unchecked) private var lastOfFirstPlay: (offset: Duration, segment: Int)?
        private var period = Duration.zero
        private var segmentsPerLoop = 0
        @exclusivity(unchecked) private var fixesThisPlay = 0
        private var firstPlayDropped: Int?
        /// The dropped points of a play that has ended (when its pass is gone).
        private var lastPlayDropped = 0
        private var earlierHighWater = 0
        private let degrade: (profile: DegradeProfile, seed: UInt64)?

        init(
            file: ReplayFile, fileName: String, readOptions: GPXReadOptions, readers: TraceReaders,
            options: ReplaySchedule.Options, census: ReplayCensus, loops: Int?,
            degrade: (profile: DegradeProfile, seed: UInt64)?
        ) {
            self.degrade = degrade
            self.file = file
            self.fileName = fileName
            self.readOptions = readOptions
            self.readers = readers
            self.options = options
            self.census = census
            self.loops = loops
        }

        var droppedPoints: Int { firstPlayDropped ?? pass?.droppedPoints ?? lastPlayDropped }
        var highWater: Int { max(earlierHighWater, pass?.highWater ?? 0) }

        func peek() throws -> (event: SourceEvent, fix: ReplaySchedule.Fix)? {
            if peeked == nil { peeked = .some(try advanceOrEnd()) }
            return peeked!.map { (Self.event(of: $0), $0) }
        }

        func next() throws -> SourceEvent? {
            if let taken = peeked {
                peeked = nil
                return taken.map(Self.event(of:))
            }
            return try advanceOrEnd().map(Self.event(of:))
        }

        /// The next fix; after an error the source has ended.
        private func advanceOrEnd() throws -> ReplaySchedule.Fix? {
            do {
                return try advance()
            } catch {
                finished = true
                endPass()
                throw error
            }
        }

        private func advance() throws -> ReplaySchedule.Fix? {
            while !finished {
                if let loops, loop >= loops { break }
                guard let plays = census.plays else { break }
                if pass == nil {
                    let reader = StreamingReplaySource.degraded(
                        try TraceFormat.reader(
                            for: file.bytes(), name: file.path, options: readOptions, readers: readers), degrade)
                    earlierHighWater = highWater
                    pass = try LaidOutPass(
                        reader: reader, plays: plays, firstIndex: census.firstIndex,
                        timeline: ReplayTimeline(file: fileName, options: options, isTimed: census.isTimed))
                    fixesThisPlay = 0
                }
                if let fix = try playing?._withUnsafeGuaranteedRef({ try $0.next() }) {
                    if loop == 0 { lastOfFirstPlay = (fix.offset, fix.segment) }
                    fixesThisPlay += 1
                    return shifted(fix)
                }
                // This play has ended; one without fixes (the file changed) ends the replay.
                endPass()
                if fixesThisPlay == 0 { break }
                if loop == 0 {
                    firstPlayDropped = lastPlayDropped
                    guard let last = lastOfFirstPlay else { break }
                    period = last.offset + .seconds(1)
                    segmentsPerLoop = last.segment + 1
                }
                loop += 1
            }
            finished = true
            endPass()
            return nil
        }

        /// Lets the play go, keeping what it counted.
        private func endPass() {
            guard let ended = pass else { return }
            lastPlayDropped = ended.droppedPoints
            earlierHighWater = highWater
            pass = nil
        }

        /// `fix` moved on to the current loop, as ``GPXReplaySource`` moves it.
        private func shifted(_ fix: consuming ReplaySchedule.Fix) -> ReplaySchedule.Fix {
            if loop > 0 {
                let shift = period * loop
                fix.offset += shift
                fix.location.timestamp = fix.location.timestamp.addingTimeInterval(ReplaySchedule.seconds(shift))
                fix.segment += loop * segmentsPerLoop
            }
            return fix
        }

        /// The event of a fix, as ``GPXReplaySource`` makes it.
        private static func event(of fix: consuming ReplaySchedule.Fix) -> SourceEvent {
            let index = fix.location.provenance.fileIndex
            let offset = fix.offset
            let segment = fix.segment
            let kind: SourceEvent.Kind = fix.location.provenance.fixMode == .none ? .noFix : .fix(fix.location)
            return SourceEvent(offset: offset, kind: kind, index: index, segment: segment)
        }
    }
}
