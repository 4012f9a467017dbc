#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads an NMEA 0183 log (what receivers write, `gpspipe -r` prints and gpsfake replays) as
/// the events of a GPX document: one track, one point per epoch, a new segment after each loss
/// of fix.
///
/// Sentences are checked (`NMEALexer`) and merged per epoch (`NMEAEpochMerger`, whose
/// documentation gives the rules). A point's elevation is the altitude above mean sea level
/// and its geoid height the receiver's separation; its fix, satellites, DOPs, speed, course,
/// magnetic variation, DGPS age and station are the receiver's, and its accuracies GST's
/// one-sigma errors (the horizontal one the root sum of squares of the latitude and longitude
/// errors).
///
/// A bad sentence (a wrong checksum, bytes NMEA does not allow, a line too long) is skipped
/// and counted; one warning per kind, at the end, gives the count and the first line. Comment
/// lines (`#`) are skipped; `# Date: 2019-03-14` tells the day the log was recorded, which
/// dates the fixes of a log whose receiver gives no date and undoes a GPS week rollover
/// (a receiver that says 1999-08-22 on 2019-04-07): once or twice (2048 weeks) at most; a line
/// further from the receiver's dates is taken for wrong, with a warning, and the receiver's dates
/// are kept. Lines of gpsd JSON are skipped and counted. The epochs of a receiver in simulation
/// mode (GGA quality 8, mode indicator `S`) are a simulator's positions: left out, counted in
/// ``simulatedFixes``, and named in a warning. A leap second (23:59:60) is an epoch of its own,
/// dated as the second after it as gpsd dates it, and named in a warning.
public final class NMEAReader {
    public let fileName: String
    /// Sentences read (checked or unchecked), of any type.
    @exclusivity(unchecked) public private(set) var sentences = 0
    /// Sentences refused for a wrong checksum.
    @exclusivity(unchecked) public private(set) var badChecksums = 0
    /// Lines that are not sentences: bytes NMEA does not allow, no address, too long.
    @exclusivity(unchecked) public private(set) var malformedLines = 0
    /// Lines of gpsd JSON in the log, skipped.
    @exclusivity(unchecked) public private(set) var jsonLines = 0
    /// Fixes read: the points of the track.
    @exclusivity(unchecked) public private(set) var fixes = 0
    /// Epochs of a receiver in simulation mode, left out (GGA quality 8, mode indicator `S`).
    public var simulatedFixes: Int { merger.simulatedEpochs }
    /// When set before ``read(_:)``, each fix's epoch lines are recorded (``fixLines``).
    public var recordsFixLines: Bool {
        get { merger.recordsFixLines }
        set { merger.recordsFixLines = newValue }
    }
    /// With ``recordsFixLines``: for each fix, in order, the first line of its epoch and the
    /// line after its last (the next epoch's first; `Int32.max` when the log ends there).
    public var fixLines: [(first: Int32, end: Int32)] { merger.fixLines }
    /// Always 0: a bad sentence is skipped, not a point (here for the same questions as
    /// ``GPXReader/droppedPoints``).
    public let droppedPoints = 0

    private let source: ByteSource
    // One thread reads; the per-sentence path skips dynamic exclusivity checks.
    @exclusivity(unchecked) private var merger = NMEAEpochMerger()
    private let lexer = NMEALexer()
    @exclusivity(unchecked) private var firstBadChecksum: (line: Int, column: Int)?
    @exclusivity(unchecked) private var firstMalformed: (line: Int, column: Int)?
    /// The line of the log's `# Date:` line.
    @exclusivity(unchecked) private var recordedDayLine = 0
    /// Whether a track segment is open (while reading).
    @exclusivity(unchecked) private var inSegment = false

    /// Where fixes go when ``TraceEventReader/readEventsAhead(batchSize:batches:_:)`` reads: each
    /// point moves from the merger's queue straight into its batch's slot.
    @exclusivity(unchecked) var pointSink: EventSender?

    /// The longest line read; a longer one is skipped as malformed (NMEA's own limit is 82).
    static let maxLineLength = 4096

    public init(source: ByteSource, name: String) {
        self.source = source
        self.fileName = name
    }

    public convenience init(contentsOf path: String) throws {
        self.init(source: try FileByteSource(path: path), name: path)
    }

    /// Reads the whole log, handing each event to `handle` in order.
    public func read(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try handle(.header(GPXHeader(version: "1.1", creator: nil)))
        try handle(.trackStart(GPXPathInfo()))
        inSegment = false
        try forEachLine { line, start, end in
            try take(line: line, start, end)
            if merger.hasFixes { try deliver(handle) }
        }
        merger.finish()
        try deliver(handle)
        if inSegment { try handle(.segmentEnd(GPXExtensions())) }
        try handle(.trackEnd(GPXPathInfo()))
        for warning in closingWarnings() { try handle(.warning(warning)) }
    }

    /// Hands the merger's ready fixes on: each a track point, after the segment events its
    /// place in the track calls for.
    private func deliver(_ handle: (consuming GPXEvent) throws -> Void) throws {
        while merger.hasFixes {
            if merger.nextFix.pointee.followsLoss && inSegment {
                try handle(.segmentEnd(GPXExtensions()))
                inSegment = false
            }
            if !inSegment {
                try handle(.segmentStart)
                inSegment = true
            }
            fixes += 1
            if let pointSink {
                // The fix's point moves from the merger's queue into its batch's slot.
                merger.removeFix(movingPointTo: pointSink.pointSlot())
                try pointSink.commitPoint()
            } else {
                try handle(.trackPoint(merger.removeFix().point))
            }
        }
    }

    // MARK: - Lines

    private func take(line: Int, _ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) throws {
        var p = start
        while p < end, p.pointee == UInt8(ascii: " ") || p.pointee == UInt8(ascii: "\t") { p += 1 }
        guard p < end else { return }
        switch p.pointee {
        case UInt8(ascii: "#"):
            if merger.recordedDay == nil, let day = Self.recordedDay(ByteSpan(start: p, count: end - p)) {
                merger.recordedDay = day
                recordedDayLine = line
            }
            return
        case UInt8(ascii: "{"):
            jsonLines += 1
            return
        default:
            break
        }
        // Each `$` or `!` begins a sentence: a line may hold a sentence cut short by the next
        // one (a receiver's buffer overrun), or bytes before the first.
        var q = p
        if q.pointee != UInt8(ascii: "$") && q.pointee != UInt8(ascii: "!") {
            while q < end, q.pointee != UInt8(ascii: "$"), q.pointee != UInt8(ascii: "!") { q += 1 }
            malformed(line: line, column: p - start + 1)
        }
        while q < end {
            var next = end
            switch lexer.lex(q, end, next: &next) {
            case .sentence(let type):
                sentences += 1
                merger.add(type, lexer, line: line)
            case .badChecksum:
                badChecksums += 1
                if firstBadChecksum == nil { firstBadChecksum = (line, q - start + 1) }
            case .malformed:
                malformed(line: line, column: q - start + 1)
            }
            q = next
            // Bytes after a checksum that begin no sentence are junk.
            if q < end, q.pointee != UInt8(ascii: "$"), q.pointee != UInt8(ascii: "!") {
                let junk = q
                while q < end, q.pointee != UInt8(ascii: "$"), q.pointee != UInt8(ascii: "!") { q += 1 }
                var blank = true
                var r = junk
                while r < q {
                    if r.pointee != 0x20 && r.pointee != 0x09 && r.pointee != 0 { blank = false }
                    r += 1
                }
                if !blank { malformed(line: line, column: junk - start + 1) }
            }
        }
    }

    private func malformed(line: Int, column: Int) {
        malformedLines += 1
        if firstMalformed == nil { firstMalformed = (line, column) }
    }

    private func closingWarnings() -> [GPXWarning] {
        var list: [GPXWarning] = []
        func warn(_ message: String, at place: (line: Int, column: Int) = (0, 0)) {
            list.append(GPXWarning(file: fileName, line: place.line, column: place.column, message: message))
        }
        if let place = firstBadChecksum {
            warn("\(badChecksums) sentence(s) with a wrong checksum were skipped; this is the first", at: place)
        }
        if let place = firstMalformed {
            warn(
                "\(malformedLines) line(s) that are not NMEA sentences were skipped (bytes NMEA does not allow, no address, or longer than \(Self.maxLineLength) bytes); this is the first",
                at: place)
        }
        if let line = merger.firstSimulatedLine {
            warn(
                "\(merger.simulatedEpochs) fix(es) from a receiver in simulation mode (GGA quality 8, or mode indicator S) were left out: they are a simulator's positions, not the receiver's (gpsd marks them status 8); this is the first",
                at: (line, 1))
        }
        if let line = merger.firstLeapSecondLine {
            warn(
                "\(merger.leapSecondFixes) fix(es) at a leap second (23:59:60) are dated as the second after it, the next day's 00:00:00, as gpsd dates them (times here have no leap seconds, as POSIX's and CoreLocation's have none); each stays a point of its own; this is the first",
                at: (line, 1))
        }
        if merger.datedFromHeader > 0 {
            warn(
                "\(merger.datedFromHeader) fix(es) before the receiver's first date (RMC or ZDA) take the day of the log's '# Date:' line"
            )
        }
        if merger.undated > 0 {
            warn(
                "\(merger.undated) fix(es) have no time: the receiver gave no date (RMC or ZDA) and the log no '# Date: YYYY-MM-DD' line"
            )
        }
        if let far = merger.farRecordedDay, let recorded = merger.recordedDay {
            warn(
                "the log's '# Date:' line (\(Self.dayText(recorded))) is \(far.periods * 1024) weeks after the receiver's date (\(Self.dayText(far.receiverDay))): more than \(NMEAEpochMerger.maximumWeekShift) GPS week rollovers, so it is not one; the receiver's dates were kept (correct the '# Date:' line if they are wrong)",
                at: (recordedDayLine, 1))
        }
        if let shift = merger.weekShift {
            warn(
                "the receiver's dates are \(shift * 1024) weeks before the log's '# Date:' line (the GPS week rollover); they were moved forward"
            )
        }
        return list
    }

    /// Calls `body` with each line (without its line break: LF, CRLF or CR) and its number.
    private func forEachLine(_ body: (Int, UnsafePointer<UInt8>, UnsafePointer<UInt8>) throws -> Void) throws {
        let capacity = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0
        var line = 1
        var skippingLongLine = false
        var atEnd = false
        while !atEnd {
            let n = try source.read(into: buffer + filled, capacity: capacity - filled)
            if n == 0 { atEnd = true }
            filled += n
            var p = UnsafePointer(buffer)
            let end = UnsafePointer(buffer + filled)
            while p < end {
                guard let nl = Self.lineBreak(p, end) else { break }
                // CRLF is one break; CR alone is one too. A CR that ends the bytes read may be
                // the first half of a CRLF: its line waits for the next read, which tells (taken
                // now, the line would be taken again then).
                var next = nl + 1
                if nl.pointee == 13, next == end, !atEnd { break }
                if nl.pointee == 13, next < end, next.pointee == 10 { next += 1 }
                if skippingLongLine {
                    skippingLongLine = false
                } else if nl - p >= Self.maxLineLength {
                    // As long a line is skipped when a read ends inside it, so it is here too:
                    // where reads end must not matter.
                    malformed(line: line, column: 1)
                } else {
                    try body(line, p, nl)
                }
                line += 1
                p = next
            }
            let rest = end - p
            if atEnd {
                if rest > 0 && !skippingLongLine {
                    if rest >= Self.maxLineLength { malformed(line: line, column: 1) } else { try body(line, p, end) }
                }
                break
            }
            // A CR left at the end is the line's break (its LF, if any, still to come).
            let keptCR = rest > 0 && (end - 1).pointee == 13
            if !skippingLongLine && rest - (keptCR ? 1 : 0) >= Self.maxLineLength {
                malformed(line: line, column: 1)
                skippingLongLine = true
            }
            if skippingLongLine {
                // The long line's bytes go; a CR that ends it stays, to end it in the next read.
                if keptCR {
                    buffer[0] = 13
                    filled = 1
                } else {
                    filled = 0
                }
                continue
            }
            if rest > 0 && p != UnsafePointer(buffer) { memmove(buffer, p, rest) }
            filled = rest
        }
    }

    /// The first LF or CR in `p..<end` (memchr, which compares many bytes at a time; a CR
    /// alone is rare, so the second search is over the line only).
    @inline(__always)
    private static func lineBreak(_ p: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        let n = end - p
        let lf = memchr(p, 10, n).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) }
        let limit = lf ?? end
        if let cr = memchr(p, 13, limit - p) { return UnsafePointer(cr.assumingMemoryBound(to: UInt8.self)) }
        return lf
    }

    /// `YYYY-MM-DD` of a day counted from 1970-01-01.
    static func dayText(_ day: Int) -> String {
        String(ValueFormatting.iso8601(Date(timeIntervalSince1970: Double(day) * 86_400)).prefix(10))
    }

    /// The day of a `# Date: 2019-03-14` line (also `# Date = 2015-02-25`, `# Date: 2019-April 12`,
    /// `# Date: 18 March 2020`), as days since 1970-01-01.
    static func recordedDay(_ line: ByteSpan) -> Int? {
        let text = line.string
        var words = text.dropFirst().drop { $0 == " " || $0 == "\t" }
        guard words.hasPrefix("Date") else { return nil }
        words = words.dropFirst(4)
        var rest = words.drop { $0 == " " || $0 == ":" || $0 == "=" || $0 == "\t" }
        rest = rest.prefix { $0 != "#" }
        let tokens = rest.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        func month(_ t: String) -> Int? {
            if let n = Int(t) { return n }
            return months.firstIndex(of: String(t.lowercased().prefix(3))).map { $0 + 1 }
        }
        guard tokens.count >= 3 else { return nil }
        if tokens[0].count == 4, let y = Int(tokens[0]), let m = month(tokens[1]), let d = Int(tokens[2]) {
            return NMEAField.civilDay(year: y, month: m, day: d)
        }
        if let d = Int(tokens[0]), Int(tokens[1]) == nil, let m = month(tokens[1]), tokens[2].count == 4,
            let y = Int(tokens[2])
        {
            return NMEAField.civilDay(year: y, month: m, day: d)
        }
        return nil
    }
}
