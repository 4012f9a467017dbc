import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a capture of gpsd's JSON reports (what `gpspipe -w` prints, one report a line) as the
/// events of a GPX document: one track, one point per fix, a new segment after each loss of
/// fix and each jump of the receiver's clock.
///
/// Each line is read exactly as `record` reads gpsd's lines: libgps unpacks it
/// (``GPSDLineDecoder``), so a TPV carries the satellites and DOPs of the SKY before it;
/// ``FixCoalescer`` keeps one fix per time, the most complete, and drops a time that does not
/// fit the receiver's clock; ``GPSDMapping`` makes the location, and the point is what
/// ``GPXLocationMapping/point(for:)`` records of it, with gpsd's accuracies (which replay then
/// uses instead of a model).
///
/// Lines that are not JSON, and lines too long to be gpsd's, are skipped and counted; one
/// warning per kind, at the end, gives the count and the first line. Reports other than TPV and
/// SKY (VERSION, DEVICES, WATCH, PPS, TOFF, ERROR…) carry no fix: they are skipped and counted
/// by class (``reportsWithoutFix``); gpsd's own notices among them (an `ERROR`, a receiver's
/// `DEVICE` deactivated, or activated more than once) are named in a warning per kind. Fixes gpsd
/// marks simulated (status 8) are left out, counted and named, as the NMEA reader leaves out
/// the epochs of a receiver in simulation mode.
public final class GPSDCaptureReader: TraceEventReader {
    public let fileName: String
    /// Always 0: a bad line is skipped, not a point.
    public let droppedPoints = 0
    /// Fixes read: the points of the track.
    public private(set) var fixes = 0
    /// Lines that were not JSON objects.
    public private(set) var notJSON = 0
    /// Lines longer than ``GPSDLineFramer``'s limit.
    public private(set) var overlong = 0
    /// Fixes gpsd marked simulated (status 8: a receiver in simulation mode), left out.
    public private(set) var simulatedFixes = 0
    /// Reports that carry no fix, by class (VERSION, DEVICES, WATCH, SKY, PPS, ERROR, DEVICE…;
    /// "" for an object without a class): skipped, but counted.
    public private(set) var reportsWithoutFix: [String: Int] = [:]
    /// gpsd's own notices in the capture (`ERROR`; `DEVICE` activated or deactivated), with
    /// their lines, in order.
    public private(set) var notices: [(line: Int, notice: GPSDNotice)] = []

    private let source: ByteSource
    private let mapping: GPSDMapping
    private var firstNotJSON: Int?
    private var firstOverlong: Int?
    private var firstSimulated: Int?
    private var implausible: [(line: Int, time: Date)] = []
    private var jumps: [(line: Int, seconds: Double)] = []

    public init(source: ByteSource, name: String, mapping: GPSDMapping = GPSDMapping()) {
        self.source = source
        self.fileName = name
        self.mapping = mapping
    }

    public convenience init(contentsOf path: String) throws {
        self.init(source: try FileByteSource(path: path), name: path)
    }

    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        guard let decoder = GPSDLineDecoder() else {
            throw GPXError(
                code: .io, file: fileName, line: 0, column: 0,
                message: "libgps could not allocate its gps_data_t; out of memory?")
        }
        try handle(.header(GPXHeader(version: "1.1", creator: nil)))
        try handle(.trackStart(GPXPathInfo()))
        var coalescer = FixCoalescer()
        var framer = GPSDLineFramer()
        var inSegment = false
        var line = 0
        var failure: (any Error)?
        var activeDevices: Set<String> = []

        func take(_ outputs: [FixCoalescer.Output]) throws {
            for output in outputs {
                switch output {
                case .fix(let report) where report.isSimulated:
                    // A simulator's position, not the receiver's: left out, counted, named.
                    simulatedFixes += 1
                    if firstSimulated == nil { firstSimulated = line }
                    if inSegment {
                        try handle(.segmentEnd(GPXExtensions()))
                        inSegment = false
                    }
                case .fix(let report):
                    guard let location = mapping.location(for: report) else { continue }
                    if !inSegment {
                        try handle(.segmentStart)
                        inSegment = true
                    }
                    var point = GPXLocationMapping.default.point(for: location)
                    point.horizontalAccuracy = location.horizontalAccuracy
                    if location.verticalAccuracy > 0 { point.verticalAccuracy = location.verticalAccuracy }
                    if location.speedAccuracy >= 0 { point.speedAccuracy = location.speedAccuracy }
                    if location.courseAccuracy >= 0 { point.courseAccuracy = location.courseAccuracy }
                    fixes += 1
                    try handle(.trackPoint(point))
                case .noFix:
                    if inSegment {
                        try handle(.segmentEnd(GPXExtensions()))
                        inSegment = false
                    }
                case .implausibleTime(let report, _):
                    if let time = report.time { implausible.append((line, time)) }
                case .timeJump(let seconds):
                    jumps.append((line, seconds))
                    if inSegment {
                        try handle(.segmentEnd(GPXExtensions()))
                        inSegment = false
                    }
                }
            }
        }

        func frame(_ output: GPSDLineFramer.Output) {
            guard failure == nil else { return }
            line += 1
            switch output {
            case .line(let bytes):
                switch decoder.read(bytes) {
                case .report(let report):
                    do { try take(coalescer.add(report)) } catch { failure = error }
                case .notice(let notice):
                    reportsWithoutFix[notice.action == .gpsdError ? "ERROR" : "DEVICE", default: 0] += 1
                    // A DEVICE repeated for a receiver already active (gpsd sends one more when it
                    // learns the driver) is no news, as in record.
                    if case .deviceActivated(let path, _) = notice {
                        guard activeDevices.insert(path).inserted else { return }
                    } else if case .deviceDeactivated(let path) = notice {
                        activeDevices.remove(path)
                    }
                    notices.append((line, notice))
                case .other(let kind):
                    reportsWithoutFix[kind, default: 0] += 1
                case .notJSON:
                    if !Self.isBlank(bytes) {
                        notJSON += 1
                        if firstNotJSON == nil { firstNotJSON = line }
                    }
                }
            case .overlong:
                overlong += 1
                if firstOverlong == nil { firstOverlong = line }
            }
        }

        let capacity = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        while true {
            let n = try source.read(into: buffer, capacity: capacity)
            if n == 0 { break }
            framer.feed(UnsafeRawBufferPointer(start: buffer, count: n), frame)
            if let failure { throw failure }
        }
        // A last line without a newline is a line still (a capture cut at its end).
        if framer.hasPartialLine {
            let newline: [UInt8] = [10]
            newline.withUnsafeBytes { framer.feed($0, frame) }
            if let failure { throw failure }
        }
        try take(coalescer.finish())
        if inSegment { try handle(.segmentEnd(GPXExtensions())) }
        try handle(.trackEnd(GPXPathInfo()))
        for warning in closingWarnings() { try handle(.warning(warning)) }
    }

    private static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 }
    }

    private func closingWarnings() -> [GPXWarning] {
        var list: [GPXWarning] = []
        if let line = firstNotJSON {
            list.append(
                GPXWarning(
                    file: fileName, line: line, column: 1,
                    message: "\(notJSON) line(s) that are not gpsd JSON were skipped; this is the first"))
        }
        if let line = firstOverlong {
            list.append(
                GPXWarning(
                    file: fileName, line: line, column: 1,
                    message: "\(overlong) line(s) longer than gpsd's reports (64 KiB) were skipped; this is the first"))
        }
        // gpsd's own notices: each kind counted, the first named.
        for action in [SourceAction.gpsdError, .deviceDeactivated, .deviceActivated] {
            let these = notices.filter { $0.notice.action == action }
            guard let first = these.first else { continue }
            let what: String
            switch action {
            case .gpsdError: what = "gpsd reported \(these.count) error(s) (ERROR); the first: \(first.notice.detail)"
            case .deviceDeactivated:
                what = "gpsd deactivated a receiver \(these.count) time(s) (DEVICE); the first: \(first.notice.detail)"
            default:
                // The capture begins with its receiver's activation as a rule: only more is news.
                guard these.count > 1 else { continue }
                what = "gpsd activated a receiver \(these.count) time(s) (DEVICE); the first: \(first.notice.detail)"
            }
            list.append(GPXWarning(file: fileName, line: first.line, column: 1, message: what))
        }
        if let line = firstSimulated {
            list.append(
                GPXWarning(
                    file: fileName, line: line, column: 1,
                    message:
                        "\(simulatedFixes) fix(es) gpsd marked simulated (status 8: the receiver is in simulation mode) were left out: they are a simulator's positions, not the receiver's; this is the first"
                ))
        }
        if let first = implausible.first {
            list.append(
                GPXWarning(
                    file: fileName, line: first.line, column: 1,
                    message:
                        "\(implausible.count) fix(es) whose time does not fit the receiver's clock were left out (as record leaves them out); the first is dated \(ValueFormatting.iso8601(first.time))"
                ))
        }
        for jump in jumps {
            list.append(
                GPXWarning(
                    file: fileName, line: jump.line, column: 1,
                    message:
                        "the receiver's clock jumped by \(ValueFormatting.fixed(jump.seconds, decimals: 1)) s and stayed there; a new segment starts"
                ))
        }
        return list
    }
}

extension TraceReaders {
    /// GPX, NMEA and gpsd JSON captures (read by ``GPSDCaptureReader``).
    public static let withGPSDCaptures = TraceReaders(gpsdJSON: { GPSDCaptureReader(source: $0, name: $1) })
}
