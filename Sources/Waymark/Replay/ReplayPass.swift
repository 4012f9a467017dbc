#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a first pass over a GPX file learns for a replay: the whole-file facts that
/// ``ReplaySchedule`` takes from the document in memory, kept as counters.
struct ReplayCensus {
    /// Which points a replay plays.
    enum Plays {
        case tracks, routes, waypoints
    }

    /// Counts for one kind of point, in document order.
    struct Tally {
        var count = 0
        var untimed = 0
        /// Points whose time goes backwards, were every point of the kind timed.
        var dropped = 0
        /// The first time.
        private(set) var origin: Date?
        /// The latest time so far, as an offset from `origin`.
        private var last = -Double.infinity
        /// The earliest and the latest time, in seconds since the reference date.
        private var low = Double.infinity
        private var high = -Double.infinity

        mutating func add(_ time: Date?) {
            count += 1
            guard let time else {
                untimed += 1
                return
            }
            let origin = self.origin ?? time
            self.origin = origin
            let t = time.timeIntervalSince(origin)
            if t < last { dropped += 1 } else { last = t }
            let raw = time.timeIntervalSinceReferenceDate
            if raw < low { low = raw }
            if raw > high { high = raw }
        }

        /// This tally followed by `next`, the tally of the points after this one's: what one tally
        /// of all of them counts, or nil when that cannot be told from the two.
        ///
        /// A point is dropped when its time is before the latest time before it, measured from
        /// the first time (`t - origin`, rounded). `next` measured from its own first time, and
        /// knew nothing of this tally's latest time. Its count holds when its first time is at
        /// or after this tally's latest, and when every difference of two times is exact: all
        /// times positive and the latest at most twice the earliest (Sterbenz's lemma), so
        /// that `t - origin` orders times as they are, whichever time is the origin.
        func followed(by next: Tally) -> Tally? {
            var all = self
            all.count += next.count
            all.untimed += next.untimed
            guard let nextOrigin = next.origin else { return all }
            guard let origin else {
                all.dropped = next.dropped
                all.origin = next.origin
                all.last = next.last
                all.low = next.low
                all.high = next.high
                return all
            }
            let low = min(self.low, next.low)
            let high = max(self.high, next.high)
            guard low > 0, high <= 2 * low, nextOrigin.timeIntervalSinceReferenceDate >= self.high else {
                return nil
            }
            all.dropped += next.dropped
            all.low = low
            all.high = high
            all.last = high - origin.timeIntervalSinceReferenceDate
            return all
        }
    }

    var waypoints = Tally()
    var routePoints = Tally()
    var trackPoints = Tally()

    /// Tracks when there are track points, else routes when there are route points, else
    /// waypoints; nil when the file has no point at all.
    var plays: Plays? {
        if trackPoints.count > 0 { return .tracks }
        if routePoints.count > 0 { return .routes }
        return waypoints.count > 0 ? .waypoints : nil
    }

    /// The tally of the points that play.
    var chosen: Tally {
        switch plays {
        case .tracks?: trackPoints
        case .routes?: routePoints
        case .waypoints?, nil: waypoints
        }
    }

    /// Whether every point that plays has a time.
    var isTimed: Bool { chosen.count > 0 && chosen.untimed == 0 }

    /// How many points a replay leaves out because their time goes backwards.
    var droppedPoints: Int { isTimed ? chosen.dropped : 0 }

    /// The file index of the first point that plays: waypoints count first, then route points,
    /// then track points.
    var firstIndex: Int {
        switch plays {
        case .tracks?: waypoints.count + routePoints.count
        case .routes?: waypoints.count
        case .waypoints?, nil: 0
        }
    }

    /// This census followed by `next`, the census of the rest of the file from a track point
    /// on: nil when that cannot be told from the two (see ``Tally/followed(by:)``), or when
    /// `next` holds waypoints or routes, which would count before the tracks.
    func followed(by next: ReplayCensus) -> ReplayCensus? {
        guard next.waypoints.count == 0, next.routePoints.count == 0,
            let tracks = trackPoints.followed(by: next.trackPoints)
        else { return nil }
        var all = self
        all.trackPoints = tracks
        return all
    }

    mutating func add(_ event: borrowing GPXEvent) {
        switch event {
        case .waypoint(let p): waypoints.add(p.time)
        case .routePoint(let p): routePoints.add(p.time)
        case .trackPoint(let p): trackPoints.add(p.time)
        default: break
        }
    }

    /// Reads all of `reader` (on the calling thread), handing its warnings to `warnings`.
    static func count(_ reader: any TraceEventReader, warnings: ((GPXWarning) -> Void)?) throws -> ReplayCensus {
        var census = ReplayCensus()
        try reader.readEvents { event in
            if let warnings, case .warning(let w) = event { warnings(w) }
            census.add(event)
        }
        return census
    }
}

/// One play's read of a GPX file: the reader runs on a thread of its own and hands the points
/// that play (and the ends of their segments) over through a bounded queue; the replay pulls
/// them one at a time.
///
/// At most ``depth`` batches of ``batchSize`` events are queued, plus the batch being taken, so
/// memory stays bounded whatever the file's length. Releasing the pass stops the reader at its
/// next batch (or within a few thousand skipped events) and joins its thread.
final class ReplayPass {
    static let batchSize = 512
    static let depth = 3

    private let pipe: EventPipe
    private let thread: ReaderThread
    // Read for every point, by the replay's thread alone: no dynamic exclusivity checks.
    /// The batch being read, in place; it goes back to the reader when it has been read.
    @exclusivity(unchecked) private var batch: EventBatch?
    /// The next event of the batch, and how many of its points and other events come before it.
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var pointsRead = 0
    @exclusivity(unchecked) private var othersRead = 0
    /// A waypoint's copy, handed out in place as a batch's points are (waypoints are the batch's
    /// other events, inside a ``GPXEvent``).
    private let waypoint = UnsafeMutablePointer<GPXPoint>.allocate(capacity: 1)
    @exclusivity(unchecked) private var holdsWaypoint = false
    @exclusivity(unchecked) private var ended = false
    @exclusivity(unchecked) private var index: Int

    /// Starts reading with `reader`, keeping the points that `plays` names; `firstIndex` is the
    /// file index of the first of them.
    ///
    /// - Throws: ``GPXError`` (``GPXError/Code/io``) when no thread can be started.
    init(reader: any TraceEventReader, plays: ReplayCensus.Plays, firstIndex: Int) throws {
        let pipe = EventPipe(depth: Self.depth, batchSize: Self.batchSize)
        guard let thread = ReaderThread({ Self.produce(reader, plays: plays, into: pipe) }) else {
            throw GPXError(
                code: .io, file: reader.fileName, line: 0, column: 0,
                message: "cannot start a thread to read the file; the system is out of threads")
        }
        self.pipe = pipe
        self.thread = thread
        index = firstIndex
    }

    deinit {
        pipe.cancel()
        thread.join()
        if holdsWaypoint { waypoint.deinitialize(count: 1) }
        waypoint.deallocate()
    }

    /// The next point or segment end; nil at the end of the file. A point is read where it
    /// lies in its batch: it stays there until the next call.
    ///
    /// - Throws: the reader's error, after the points before it.
    func next() throws -> ReplayInput? {
        while true {
            if batch == nil || position == batch!.count {
                guard try refill() else { return nil }
            }
            let batch = batch!
            position += 1
            if batch.kind(position - 1) != 0 {
                // A track or route point.
                let point = batch.point(pointsRead)
                pointsRead += 1
                index += 1
                return .point(point, index: index - 1)
            }
            let event = batch.event(othersRead)
            othersRead += 1
            switch event.pointee {
            case .waypoint(let p):
                if holdsWaypoint { waypoint.deinitialize(count: 1) }
                waypoint.initialize(to: p)
                holdsWaypoint = true
                index += 1
                return .point(waypoint, index: index - 1)
            case .segmentEnd, .routeEnd:
                return .segmentEnd
            default:
                continue
            }
        }
    }

    /// Takes the next batch; false when the read has ended. Out of line, so that the point's
    /// path does not begin the accesses to the pipe and the thread.
    @inline(never)
    private func refill() throws -> Bool {
        while batch == nil || position == batch!.count {
            if let done = batch {
                batch = nil
                pipe.recycle(done)
            }
            if ended { return false }
            position = 0
            pointsRead = 0
            othersRead = 0
            switch pipe.receive() {
            case .batch(let next):
                batch = next
            case .end:
                ended = true
                thread.join()
                if let error = pipe.failure { throw error }
            }
        }
        return true
    }

    /// The reader thread: reads everything, sends the events that matter in batches.
    private static func produce(_ reader: any TraceEventReader, plays: ReplayCensus.Plays, into pipe: EventPipe) {
        var batch = pipe.emptyBatch()
        var skipped = 0
        do {
            try reader.readEvents { event in
                let wanted: Bool
                switch event {
                case .trackPoint, .segmentEnd: wanted = plays == .tracks
                case .routePoint, .routeEnd: wanted = plays == .routes
                case .waypoint: wanted = plays == .waypoints
                default: wanted = false
                }
                guard wanted else {
                    skipped &+= 1
                    if skipped & 4095 == 0 && pipe.isCancelled { throw EventPipe.Cancelled() }
                    return
                }
                batch.append(event)
                if batch.isFull {
                    guard pipe.send(batch) else { throw EventPipe.Cancelled() }
                    batch = pipe.emptyBatch()
                }
            }
            if !batch.isEmpty { _ = pipe.send(batch) }
            pipe.finish(nil)
        } catch is EventPipe.Cancelled {
            pipe.finish(nil)
        } catch {
            if !batch.isEmpty { _ = pipe.send(batch) }
            pipe.finish(error)
        }
    }
}
