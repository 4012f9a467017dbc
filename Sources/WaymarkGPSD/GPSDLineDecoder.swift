import CGPS

/// Reads gpsd's lines with libgps's own parser (`gps_unpack`), as `gps_read` does after it has
/// a line: every line is unpacked into one `gps_data_t`, so that a TPV's report carries what
/// the SKY before it said (satellites used, DOPs), and each TPV gives a ``GPSDReport``.
///
/// The lines come from a ``GPSDLineFramer``; the decoder has no socket and no clock.
public final class GPSDLineDecoder {
    private let data: UnsafeMutableRawPointer
    private var line: [CChar] = []
    private var report = cgps_report()
    private static let tpv = Array(#""class":"TPV""#.utf8)

    /// nil when the `gps_data_t` cannot be allocated.
    public init?() {
        guard let data = cgps_create() else { return nil }
        self.data = data
    }

    deinit { cgps_destroy(data) }

    /// Unpacks one line (without its newline). Returns the report of a TPV that libgps reads;
    /// nil for any other line, whose values are kept for the reports after it.
    public func decode(_ bytes: [UInt8]) -> GPSDReport? {
        // gps_unpack reads a C string: a NUL inside the line ends it there, as it would in libgps.
        line.removeAll(keepingCapacity: true)
        line.reserveCapacity(bytes.count + 1)
        for byte in bytes { line.append(CChar(bitPattern: byte)) }
        line.append(0)
        let status = line.withUnsafeMutableBufferPointer { cgps_unpack(data, $0.baseAddress) }
        guard status == 0, Self.contains(bytes, Self.tpv) else { return nil }
        cgps_get_report(data, &report)
        return GPSDClient.report(from: &report)
    }

    /// Whether `needle` occurs in `haystack`.
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
