/// Cuts the bytes gpsd sends into its lines (one JSON report each), with a limit on a line's
/// length: a pure state machine, fed whatever a read returned.
///
/// libgps's own reader (`gps_read`) keeps part of a line in an 8 KiB buffer; a line that does
/// not fit makes every later read fail, which looks like gpsd going away. Waymark reads gpsd's
/// socket itself through this framer and hands each complete line to libgps's parser
/// (`gps_unpack`): a line longer than ``limit`` is skipped to its end and reported once, and
/// the lines after it are read as usual.
public struct GPSDLineFramer: Sendable {
    /// The longest line taken, in bytes without its newline. gpsd's longest reports (a SKY of
    /// many satellites, a DEVICES of many receivers) stay under 10 KiB.
    public let limit: Int

    /// What ``feed(_:_:)`` found.
    public enum Output: Equatable, Sendable {
        /// A complete line, without its newline (and without a carriage return before it).
        case line([UInt8])
        /// A line of `bytes` bytes (more than ``limit``) was skipped; it is reported when its
        /// end is seen, or by ``finish()``.
        case overlong(bytes: Int)
    }

    /// The part of a line seen so far (empty while skipping).
    private var partial: [UInt8] = []
    /// While skipping an overlong line, how long it is so far.
    private var skipping: Int?

    public init(limit: Int = 65_536) {
        self.limit = max(1, limit)
    }

    /// Whether part of a line is waiting for the rest of it.
    public var hasPartialLine: Bool { !partial.isEmpty || skipping != nil }

    /// Takes the bytes of one read; `emit` receives each line completed by them, in order.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Output) -> Void) {
        var start = 0
        let count = bytes.count
        while start < count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            guard let newline = rest.firstIndex(of: 0x0A) else {
                take(rest)
                return
            }
            take(UnsafeRawBufferPointer(rebasing: rest[..<newline]))
            if let skipped = skipping {
                emit(.overlong(bytes: skipped))
                skipping = nil
            } else {
                if partial.last == 0x0D { partial.removeLast() }
                emit(.line(partial))
                partial.removeAll(keepingCapacity: partial.count <= 16_384)
            }
            start += rest.distance(from: rest.startIndex, to: newline) + 1
        }
    }

    /// The end of the stream: a line cut short is dropped; one too long is reported.
    public mutating func finish() -> Output? {
        defer {
            partial = []
            skipping = nil
        }
        return skipping.map { .overlong(bytes: $0) }
    }

    /// Adds a piece of the current line, switching to skipping when it grows past the limit.
    private mutating func take(_ piece: UnsafeRawBufferPointer) {
        if let skipped = skipping {
            skipping = skipped + piece.count
        } else if partial.count + piece.count > limit {
            skipping = partial.count + piece.count
            partial = []
        } else {
            partial.append(contentsOf: piece)
        }
    }
}
