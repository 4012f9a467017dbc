/// What a ``GPXReader`` reading the first half of a file tells the census reading the second
/// half (``ReplayCensus/count(_:file:readOptions:warnings:secondHalfAt:)``).
protocol HalfWatch: AnyObject {
    /// The offset the second half starts at (`Int.max` until it is chosen).
    var offset: Int { get }
    /// The reader has read a segment's start tag (not an empty one); its children come next.
    func enteredSegment(_ reader: GPXReader)
    /// The next child of the segment being read starts exactly at ``offset``, with only white
    /// space before it. Throwing stops the reading there.
    func reached(_ reader: GPXReader) throws
    /// The reader has gone past ``offset`` without reaching it (or cannot stop there).
    func missed()
}

extension ReplayCensus {
    /// How a census read its file.
    enum Reading: Equatable {
        /// From start to end, on the calling thread.
        case whole
        /// In two halves at once, the second on a thread of its own.
        case halves
    }

    /// The smallest file whose census is read in halves.
    static let halvesFrom = 8 << 20

    /// Counts a GPX file as ``count(_:warnings:)`` does, reading a large one in two halves at
    /// once on two cores: the same census, warnings, bad points and errors, in the same order.
    ///
    /// The second half starts at the first track point's start tag (`<trkpt`, or with a prefix)
    /// within 1 MiB after the middle of the file. It is read as a document of its own: the
    /// file's head to the end of the `<gpx>` start tag, the start tags of the track and segment
    /// of the first segment that is not empty, then the file from that start tag on. The first
    /// half, read by `reader` on the calling thread, watches for that offset, and keeps the
    /// second half's counts only when it is exactly as the second half began:
    /// - the segment's next child starts at the offset, with only white space before it, and no
    ///   warning is held back to be given with the next point;
    /// - the track and segment it is in have start tags identical, byte for byte, to those the
    ///   second half was given (so the same namespaces are in scope, at the same depth);
    /// - the second half read to its end with no warning, no error, no bad point, no waypoint
    ///   and no route;
    /// - the two halves' tallies can be joined (``Tally/followed(by:)``).
    ///
    /// Otherwise `reader` reads on to the end, as if there were no second half. Both halves only
    /// check the numbers of the points the track point scanner reads (``GPXReader/countsOnly``).
    /// A file smaller
    /// than ``halvesFrom``, transcoded from another encoding, whose `<gpx>` start tag ends past
    /// its first MiB, or without a track point within 1 MiB after its middle is read whole, and
    /// so is any file when no thread can be started.
    ///
    /// - Parameters:
    ///   - reader: a reader of `file` from its start, with `readOptions`, that has read nothing.
    ///   - secondHalfAt: where the second half starts, instead of the first track point after the
    ///     middle, and whatever the file's size (tests try every offset).
    /// - Returns: the census, the bad points a lenient reader left out, and how it was read.
    static func count(
        _ reader: GPXReader, file: ReplayFile, readOptions: GPXReadOptions, warnings: ((GPXWarning) -> Void)?,
        secondHalfAt: Int? = nil
    ) throws -> (census: ReplayCensus, droppedPoints: Int, reading: Reading) {
        let split = Halves(file: file, name: reader.fileName, options: readOptions, chosen: secondHalfAt)
        // The census reads times alone: the other numbers are only checked.
        reader.countsOnly = true
        reader.halves = split
        defer {
            reader.countsOnly = false
            reader.halves = nil
            reader.watchFrom = .max
            split.stop()
        }
        do {
            try reader.readEvents { event in
                if let warnings, case .warning(let w) = event { warnings(w) }
                split.first.add(event)
            }
        } catch let joined as Halves.Joined {
            return (joined.census, reader.droppedPoints, .halves)
        }
        return (split.first, reader.droppedPoints, .whole)
    }
}

/// The second half of a census, and the first half's watch for it.
private final class Halves: HalfWatch {
    /// Thrown by ``reached(_:)`` to stop the first half: the census of the whole file.
    struct Joined: Error {
        let census: ReplayCensus
    }

    /// What the second half's thread leaves for the first: written before the thread ends, read
    /// once it has been joined (`@unchecked Sendable`: the join orders the two).
    final class SecondHalf: @unchecked Sendable {
        private let gate = ThreadGate()
        private var stopped = false
        var census = ReplayCensus()
        var clean = false

        var isStopped: Bool { gate.locked { stopped } }
        func stop() { gate.locked { stopped = true } }
    }

    private struct Abandoned: Error {}

    /// How far before the second half's start the first half looks at each segment's child.
    private static let watchAhead = 8192

    private let file: ReplayFile
    private let name: String
    private let options: GPXReadOptions
    private let chosen: Int?
    // Used for every event of the first half, on its thread alone.
    @exclusivity(unchecked) var first = ReplayCensus()
    private(set) var offset = Int.max
    private var tried = false
    private var track: [UInt8] = []
    private var segment: [UInt8] = []
    private var second: SecondHalf?
    private var thread: ReaderThread?

    init(file: ReplayFile, name: String, options: GPXReadOptions, chosen: Int?) {
        self.file = file
        self.name = name
        self.options = options
        self.chosen = chosen
    }

    /// At the first segment: chooses where the second half starts, and starts reading it.
    func enteredSegment(_ reader: GPXReader) {
        guard !tried else { return }
        tried = true
        let size = file.byteCount
        guard reader.offsetsAreTheSource, chosen != nil || size >= ReplayCensus.halvesFrom,
            reader.rootTagEnd <= 1 << 20
        else { return }
        let here = reader.position
        guard let start = chosen ?? ReplayCensus.trackPoint(in: file, from: max(here, size / 2), before: size),
            start > here
        else { return }
        let head = file.contents(from: 0, count: reader.rootTagEnd)
        guard head.count == reader.rootTagEnd else { return }
        track = reader.trackTag
        segment = reader.segmentTag
        let second = SecondHalf()
        let source = file.bytes(after: head + track + segment, from: start)
        let (name, options) = (name, options)
        guard
            let thread = ReaderThread({
                let reader = GPXReader(source: source, name: name, options: options)
                reader.countsOnly = true
                Self.read(reader, into: second)
            })
        else { return }
        self.second = second
        self.thread = thread
        offset = start
        reader.watchFrom = max(here, start - Self.watchAhead)
    }

    func reached(_ reader: GPXReader) throws {
        guard let second, let thread else { return }
        thread.join()
        defer { stop() }
        guard second.clean, reader.trackTag == track, reader.segmentTag == segment,
            let all = first.followed(by: second.census)
        else { return }
        throw Joined(census: all)
    }

    func missed() {
        stop()
    }

    /// Stops the second half, if it still runs, and lets go of it.
    func stop() {
        offset = .max
        second?.stop()
        thread?.join()
        second = nil
        thread = nil
    }

    /// The second half's thread: its census, and whether it read cleanly to its end.
    private static func read(_ reader: GPXReader, into half: SecondHalf) {
        var census = ReplayCensus()
        var events = 0
        do {
            try reader.readEvents { event in
                events &+= 1
                if events & 4095 == 0 && half.isStopped { throw Abandoned() }
                if case .warning = event { throw Abandoned() }
                census.add(event)
            }
            // A lenient reader warns of each point it leaves out; checked again all the same.
            half.clean = reader.droppedPoints == 0
        } catch {
            half.clean = false
        }
        half.census = census
    }
}

extension ReplayCensus {
    /// The offset of the first track point's start tag (`<trkpt`, or with a prefix, `<g:trkpt`)
    /// from `offset` on, looking at most 1 MiB ahead; nil if there is none.
    static func trackPoint(in file: ReplayFile, from offset: Int, before end: Int) -> Int? {
        let name = Array("trkpt".utf8)
        let chunk = 64 << 10
        // Each chunk is read with the longest prefix and name before it and the byte after.
        let margin = 64
        var at = offset
        while at < min(end, offset + (1 << 20)) {
            let from = max(offset, at - margin)
            let bytes = file.contents(from: from, count: at - from + chunk + 1)
            guard bytes.count > at - from + name.count else { return nil }
            var i = at - from
            while i + name.count < bytes.count && i < at - from + chunk {
                if bytes[i] == 0x74, Array(bytes[i..<(i + name.count)]) == name,
                    [0x20, 0x09, 0x0A, 0x0D, 0x3E, 0x2F].contains(bytes[i + name.count]),
                    let open = tagStart(bytes, before: i), from + open >= offset
                {
                    return from + open
                }
                i += 1
            }
            at += chunk
        }
        return nil
    }

    /// Where the start tag whose local name begins at `i` begins: `<` right before it, or
    /// before its prefix and colon.
    private static func tagStart(_ bytes: [UInt8], before i: Int) -> Int? {
        guard i > 0 else { return nil }
        if bytes[i - 1] == 0x3C { return i - 1 }
        guard bytes[i - 1] == 0x3A else { return nil }
        var j = i - 2
        while j >= 0 {
            switch bytes[j] {
            case 0x3C: return j < i - 2 ? j : nil
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2E, 0x2D, 0x5F: j -= 1
            default: return nil
            }
        }
        return nil
    }
}
