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
    /// Lines that were not a JSON object, and so were not read.
    public private(set) var notJSON = 0

    /// nil when the `gps_data_t` cannot be allocated.
    public init?() {
        guard let data = cgps_create() else { return nil }
        self.data = data
    }

    deinit { cgps_destroy(data) }

    /// Unpacks one line (without its newline). Returns the report of a TPV that libgps reads;
    /// nil for any other line. Only TPV and SKY lines (whose satellites and DOPs the next
    /// TPV's report carries) that are well-formed JSON go to libgps, and only their plain
    /// members and SKY's satellites (``JSONSyntax/flattened(_:keeping:)``): gpsd 3.22's parser
    /// loops for ever on a line that is not JSON, on a DEVICES of more than four devices, and on
    /// a TPV with nested objects that name a class (the fuzzer found all three). ``notJSON``
    /// counts the lines that were not JSON.
    public func decode(_ bytes: [UInt8]) -> GPSDReport? {
        guard let kind = JSONSyntax.objectClass(bytes) else {
            notJSON += 1
            return nil
        }
        guard kind == "TPV" || kind == "SKY" else { return nil }
        let bytes = JSONSyntax.flattened(bytes, keeping: "satellites")
        // gps_unpack reads a C string: a NUL inside the line ends it there, as it would in libgps.
        line.removeAll(keepingCapacity: true)
        line.reserveCapacity(bytes.count + 1)
        for byte in bytes { line.append(CChar(bitPattern: byte)) }
        line.append(0)
        let status = line.withUnsafeMutableBufferPointer { cgps_unpack(data, $0.baseAddress) }
        guard status == 0, kind == "TPV" else { return nil }
        cgps_get_report(data, &report)
        return GPSDClient.report(from: &report)
    }
}
