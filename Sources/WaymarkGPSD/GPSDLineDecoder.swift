import CGPS
import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// What one line from gpsd is.
    public enum Line: Sendable, Hashable {
        /// A TPV that libgps read.
        case report(GPSDReport)
        /// gpsd's own notice: an `ERROR`, a `DEVICE` activated or deactivated.
        case notice(GPSDNotice)
        /// A report that carries no fix, of this class (SKY, whose values the next TPV's report
        /// carries; VERSION, DEVICES, WATCH, PPS…; a TPV libgps could not read; "" for an
        /// object without a class).
        case other(String)
        /// Not a JSON object (``notJSON`` counts it too).
        case notJSON
    }

    /// Reads one line (without its newline): a TPV's report, gpsd's notice, or what else it is.
    public func read(_ bytes: [UInt8]) -> Line {
        guard let kind = JSONSyntax.objectClass(bytes) else {
            notJSON += 1
            return .notJSON
        }
        if kind == "ERROR" || kind == "DEVICE" {
            return GPSDNotice(bytes).map(Line.notice) ?? .other(kind)
        }
        return decode(bytes, class: kind).map(Line.report) ?? .other(kind)
    }

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
        return decode(bytes, class: kind)
    }

    /// Unpacks a well-formed object of class `kind`.
    private func decode(_ bytes: [UInt8], class kind: String) -> GPSDReport? {
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

/// gpsd's own notice on its socket: an error, or a receiver that came or went.
public enum GPSDNotice: Sendable, Hashable {
    /// `{"class":"ERROR","message":"…"}`: gpsd could not do what was asked (a bad request, a
    /// device it cannot open).
    case error(message: String)
    /// `{"class":"DEVICE","path":"…","activated":"2024-…"}`: gpsd opened a receiver (and sends
    /// this again when it learns its driver).
    case deviceActivated(path: String, driver: String?)
    /// `{"class":"DEVICE","path":"…","activated":0}`: gpsd closed a receiver (unplugged,
    /// silent, or no client watches it).
    case deviceDeactivated(path: String)

    /// The notice of a well-formed `ERROR` or `DEVICE` line; nil for a `DEVICE` that says
    /// neither (without `activated`).
    init?(_ bytes: [UInt8]) {
        struct Fields: Decodable {
            var `class`: String
            var message: String?
            var path: String?
            var driver: String?
            var activated: Activated?
        }
        enum Activated: Decodable {
            case time(String)
            case none
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                self = (try? c.decode(String.self)).map(Activated.time) ?? .none
            }
        }
        guard let f = try? JSONDecoder().decode(Fields.self, from: Data(bytes)) else { return nil }
        switch (f.class, f.activated) {
        case ("ERROR", _): self = .error(message: f.message ?? "")
        case ("DEVICE", .time?): self = .deviceActivated(path: f.path ?? "", driver: f.driver)
        case ("DEVICE", .none?): self = .deviceDeactivated(path: f.path ?? "")
        default: return nil
        }
    }

    /// The audit log's `source` action for the notice.
    public var action: SourceAction {
        switch self {
        case .error: .gpsdError
        case .deviceActivated: .deviceActivated
        case .deviceDeactivated: .deviceDeactivated
        }
    }

    /// The notice in words, for the audit log's `detail` and the terminal.
    public var detail: String {
        switch self {
        case .error(let message): message
        case .deviceActivated(let path, let driver): path + (driver.map { " (\($0))" } ?? "")
        case .deviceDeactivated(let path): path
        }
    }
}
