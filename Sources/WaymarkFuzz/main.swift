import CFuzzShim
@_spi(Testing) import Waymark
import WaymarkGPSD
import WaymarkScenarioFile

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// libFuzzer targets, one per mode (WAYMARK_FUZZ_TARGET). Build and run: scripts/fuzz.sh.
//
// - `gpx` (the default): the XML tokenizer and the GPX reader. Beyond "no crash, no hang, no
//   sanitizer report", every input checks that reading it whole and in 7-byte pieces gives the
//   same document or the same error (chunk boundaries must not matter); that when the strict
//   read succeeds, the lenient read gives the same document; and that, reading for GeoJSON
//   (extension elements not kept), the track point fast path gives the general path's document
//   or error.
// - `writers`: what reads (leniently) is written as GPX and as GeoJSON, and repaired as
//   `waymark repair` does: the time formatter and every writer meet every value the reader
//   takes. The GPX written and the repaired file must read again.
// - `scenario`: a scenario file is read; one that reads and passes its checks drives a
//   simulation with a few fixes for up to a day of its timeline.
// - `gpsd`: the bytes are gpsd's stream: cut into lines (64 KiB limit), each read by libgps's
//   parser, the reports coalesced per epoch and mapped to locations, which must be valid.
// - `nmea`: the bytes are a trace of unknown format: `TraceFormat` tells it and makes its reader,
//   and the bytes are read as an NMEA log (`NMEAReader`) and as a gpsd JSON capture
//   (`GPSDCaptureReader`). Each read must give one well-nested track (segments of points, each
//   begun and ended), points at a finite latitude in -90...90 and longitude in -180...180 with
//   a time, if any, of the years -9999...9999 (`ValueFormatting.readableSeconds`), and the same
//   events whether the bytes come whole or in pieces of 7 bytes and, for short inputs, of 1
//   byte: a line break or a sentence cut by a read must not matter.
// - `activity`: the bytes are read as TCX, KML, GeoJSON, FIT and CSV, strictly and leniently:
//   each read must give events in GPX's shape (`checkDocument`) with points on the Earth, and the
//   same events whole and in pieces; `TraceFormat` must make the reader its `detect` names.
// A violation traps, so libFuzzer saves the input. Inputs go up to 1 MB and each has a time
// limit (scripts/fuzz.sh), so that work quadratic in the input shows as a timeout.

/// The outcome of one read, comparable across reads.
enum Outcome: Equatable {
    case document(GPXDocument)
    case failure(GPXError)
}

func report(_ message: String) {
    _ = message.withCString { write(2, $0, strlen($0)) }
}

func read(
    _ bytes: [UInt8], pieceSize: Int, lenient: Bool, keepsExtensions: Bool = true, scanner: Bool = true
) -> Outcome {
    let limits = XMLLimits(maxDepth: 64, maxTokenBytes: 4096, chunkBytes: 64)
    let reader = GPXReader(
        source: MemoryByteSource(bytes, pieceSize: pieceSize), name: "fuzz.gpx",
        options: GPXReadOptions(lenient: lenient, limits: limits, keepsExtensionElements: keepsExtensions))
    reader.usesTrackPointScanner = scanner
    do {
        return .document(try GPXDocument(reader: reader))
    } catch let error as GPXError {
        return .failure(error)
    } catch {
        return .failure(GPXError(code: .io, file: "fuzz.gpx", line: 0, column: 0, message: "\(error)"))
    }
}

func fuzzGPX(_ bytes: [UInt8]) {
    let whole = read(bytes, pieceSize: .max, lenient: false)
    let pieces = read(bytes, pieceSize: 7, lenient: false)
    if whole != pieces {
        report("waymark-fuzz: whole and 7-byte reads differ:\n  \(whole)\n  \(pieces)\n")
        abort()
    }
    let fast = read(bytes, pieceSize: .max, lenient: false, keepsExtensions: false)
    let general = read(bytes, pieceSize: .max, lenient: false, keepsExtensions: false, scanner: false)
    if fast != general {
        report("waymark-fuzz: the track point fast path and the general path differ:\n  \(fast)\n  \(general)\n")
        abort()
    }
    if case .document = whole {
        let lenient = read(bytes, pieceSize: .max, lenient: true)
        if lenient != whole {
            report("waymark-fuzz: strict read succeeded but lenient differs:\n  \(whole)\n  \(lenient)\n")
            abort()
        }
    }
}

/// A file of this process's own, for the writers' output.
let scratch: String = {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    return directory + "/waymark-fuzz-\(getpid()).out"
}()

/// The bytes of `scratch`.
func scratchBytes() -> [UInt8] {
    guard let file = fopen(scratch, "rb") else { return [] }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return bytes
}

/// Writes into `scratch` through a FileSink; false when writing failed (an error, not a trap).
func writeScratch(_ body: (FileSink) throws -> Void) -> Bool {
    do {
        let sink = try FileSink(atomicPath: scratch)
        try body(sink)
        try sink.commit()
        return true
    } catch {
        return false
    }
}

func fuzzWriters(_ bytes: [UInt8]) {
    guard case .document(let document) = read(bytes, pieceSize: .max, lenient: true) else { return }
    if writeScratch({ try GPXWriter.write(document, to: $0) }) {
        if case .failure(let error) = read(scratchBytes(), pieceSize: .max, lenient: false) {
            report("waymark-fuzz: the GPX Waymark wrote does not read: \(error)\n")
            abort()
        }
    }
    _ = writeScratch { try GeoJSONWriter.write(document, to: $0) }
    _ = writeScratch { try SVGWriter.write(document, to: $0) }
    var repaired = false
    _ = writeScratch { sink in
        _ = try GPXRepair.repair(source: MemoryByteSource(bytes, pieceSize: .max), name: "fuzz.gpx", to: sink)
        repaired = true
    }
    if repaired, case .failure(let error) = read(scratchBytes(), pieceSize: .max, lenient: true) {
        report("waymark-fuzz: the repaired GPX does not read: \(error)\n")
        abort()
    }
}

func fuzzScenario(_ bytes: [UInt8]) {
    guard let (scenario, _) = try? ScenarioFile.parse(String(decoding: bytes, as: UTF8.self), path: "fuzz.yaml"),
        scenario.problems.isEmpty
    else { return }
    let simulation = Simulation(scenario: scenario, epoch: Date(timeIntervalSince1970: 1_714_550_400))
    simulation.start(source: "fuzz")
    for i in 0..<5 {
        let location = Location(
            coordinate: Coordinate(latitude: 51.5 + Double(i) * 1e-4, longitude: -0.12), altitude: 40,
            horizontalAccuracy: 5, verticalAccuracy: 8, speed: 1.4, course: 0,
            timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i) * 60),
            provenance: Provenance(
                source: .file(path: "fuzz.gpx", index: i), isSimulatedBySoftware: false, fixMode: .threeD))
        simulation.receive(SourceEvent(offset: .seconds(i * 60), kind: .fix(location), index: i, segment: 0))
    }
    simulation.advance(to: .seconds(86_400))
    _ = simulation.finish(at: .seconds(86_400))
}

func fuzzGPSD(_ bytes: [UInt8]) {
    guard let decoder = GPSDLineDecoder() else { return }
    var framer = GPSDLineFramer(limit: 65_536)
    var coalescer = FixCoalescer()
    let mapping = GPSDMapping()
    var arrival = Duration.zero
    func check(_ outputs: [FixCoalescer.Output]) {
        for case .fix(let r) in outputs {
            guard let l = mapping.location(for: r) else { continue }
            let c = l.coordinate
            guard c.latitude.isFinite, c.longitude.isFinite, abs(c.latitude) <= 90, abs(c.longitude) <= 180,
                l.horizontalAccuracy.isFinite, l.horizontalAccuracy > 0, l.altitude.isFinite, l.speed.isFinite,
                l.course.isFinite
            else {
                report("waymark-fuzz: gpsd's report became an invalid location: \(r) → \(l)\n")
                abort()
            }
        }
    }
    bytes.withUnsafeBytes { raw in
        framer.feed(raw) { output in
            guard case .line(let line) = output, let report = decoder.decode(line) else { return }
            arrival += .milliseconds(100)
            check(coalescer.add(report, arrival: arrival))
        }
    }
    check(coalescer.finish())
}

/// Every event of `reader`, or the error that ended the read.
func events(of reader: any TraceEventReader) -> (events: [GPXEvent], error: String?) {
    var list: [GPXEvent] = []
    do {
        try reader.readEvents { list.append($0) }
        return (list, nil)
    } catch {
        return (list, "\(error)")
    }
}

/// Traps unless `events` are one well-nested track of valid points (what the NMEA and gpsd
/// capture readers give): a header, the track, segments of at least one point, then warnings.
func checkTrack(_ events: [GPXEvent], reader: String) {
    func fail(_ why: String) -> Never {
        report("waymark-fuzz: \(reader): \(why)\n  \(events.prefix(40))\n")
        abort()
    }
    enum Place { case start, header, track, segment, ended }
    var place = Place.start
    var pointsInSegment = 0
    for event in events {
        switch (place, event) {
        case (.start, .header): place = .header
        case (.header, .trackStart): place = .track
        case (.track, .segmentStart):
            place = .segment
            pointsInSegment = 0
        case (.segment, .trackPoint(let point)):
            pointsInSegment += 1
            let c = point.coordinate
            guard c.latitude.isFinite, c.longitude.isFinite, (-90...90).contains(c.latitude),
                (-180...180).contains(c.longitude)
            else { fail("a point outside the world: \(point)") }
            if let elevation = point.elevation, !elevation.isFinite {
                fail("an elevation that is not finite: \(point)")
            }
            if let time = point.time, !ValueFormatting.readableSeconds.contains(time.timeIntervalSince1970) {
                fail("a time outside the years -9999...9999: \(time.timeIntervalSince1970) s")
            }
        case (.segment, .segmentEnd):
            if pointsInSegment == 0 { fail("an empty segment") }
            place = .track
        case (.track, .trackEnd): place = .ended
        case (.ended, .warning): break
        default: fail("\(event) out of place (after \(place))")
        }
    }
    if place != .ended { fail("the events end inside the track (\(place))") }
}

/// Whether two reads gave the same events; a NaN in a point (which is not equal to itself) is
/// compared by its text.
func sameEvents(_ a: (events: [GPXEvent], error: String?), _ b: (events: [GPXEvent], error: String?)) -> Bool {
    if a.error != b.error || a.events.count != b.events.count { return false }
    return zip(a.events, b.events).allSatisfy { $0 == $1 || "\($0)" == "\($1)" }
}

/// The piece sizes each input is read in besides whole: 7 bytes up to 256 KiB, 1 byte up to
/// 16 KiB (a 1-byte read of a long line scans it once per byte), and one size that varies
/// with the input so that reads also end at other places in the reader's 64 KiB buffer.
func pieceSizes(_ count: Int) -> [Int] {
    var sizes = [4093]
    if count <= 262_144 { sizes.append(7) }
    if count <= 16_384 { sizes.append(1) }
    return sizes
}

/// Reads `bytes` whole and in each of `pieceSizes` with `make`, checks each read's events with
/// `checkTrack` when `checksTrack`, and traps when two reads differ.
func readInPieces(
    _ bytes: [UInt8], reader name: String, checksTrack: Bool = true, _ make: (ByteSource) -> (any TraceEventReader)?
) {
    guard let wholeReader = make(MemoryByteSource(bytes, pieceSize: .max)) else { return }
    let whole = events(of: wholeReader)
    if checksTrack, whole.error == nil { checkTrack(whole.events, reader: name) }
    for size in pieceSizes(bytes.count) {
        guard let reader = make(MemoryByteSource(bytes, pieceSize: size)) else {
            report("waymark-fuzz: \(name): made no reader from \(size)-byte pieces but did from the whole\n")
            abort()
        }
        let pieces = events(of: reader)
        if !sameEvents(whole, pieces) {
            let shorter = min(whole.events.count, pieces.events.count)
            let firstDifference = (0..<shorter).first { whole.events[$0] != pieces.events[$0] } ?? shorter
            report(
                "waymark-fuzz: \(name): whole and \(size)-byte reads differ at event \(firstDifference) of \(whole.events.count) and \(pieces.events.count) (errors \(whole.error ?? "none"), \(pieces.error ?? "none")):\n  \(whole.events.dropFirst(firstDifference).prefix(3))\n  \(pieces.events.dropFirst(firstDifference).prefix(3))\n"
            )
            abort()
        }
    }
}

func fuzzNMEA(_ bytes: [UInt8]) {
    // The format of the first 4 KiB, as the reader's peek sees it, and the reader it makes.
    let format = TraceFormat.detect(bytes.prefix(4096))
    readInPieces(bytes, reader: "TraceFormat.reader (\(format))", checksTrack: format != .gpx) { source in
        do {
            let reader = try TraceFormat.reader(
                for: source, name: "fuzz.trace", options: GPXReadOptions(lenient: true),
                readers: .withGPSDCaptures)
            let made: TraceFormat =
                reader is NMEAReader ? .nmea : reader is GPSDCaptureReader ? .gpsdJSON : .gpx
            if made != format {
                report("waymark-fuzz: TraceFormat.detect says \(format) but the reader made is for \(made)\n")
                abort()
            }
            return reader
        } catch {
            report("waymark-fuzz: TraceFormat.reader threw on bytes in memory: \(error)\n")
            abort()
        }
    }
    readInPieces(bytes, reader: "NMEAReader") { NMEAReader(source: $0, name: "fuzz.nmea") }
    readInPieces(bytes, reader: "GPSDCaptureReader") { GPSDCaptureReader(source: $0, name: "fuzz.json") }
}

/// Checks that events follow GPX's shape: the header first; waypoints anywhere outside paths;
/// routes of route points; tracks of non-empty segments of track points; every point on the
/// Earth, with a finite elevation and a readable time.
func checkDocument(_ events: [GPXEvent], reader: String) {
    func fail(_ why: String) -> Never {
        report("waymark-fuzz: \(reader): \(why)\n  \(events.prefix(40))\n")
        abort()
    }
    func check(_ point: GPXPoint) {
        let c = point.coordinate
        guard c.latitude.isFinite, c.longitude.isFinite, (-90...90).contains(c.latitude),
            (-180...180).contains(c.longitude)
        else { fail("a point outside the world: \(point)") }
        if let elevation = point.elevation, !elevation.isFinite { fail("an elevation that is not finite: \(point)") }
        if let time = point.time, !ValueFormatting.readableSeconds.contains(time.timeIntervalSince1970) {
            fail("a time outside the years -9999...9999: \(time.timeIntervalSince1970) s")
        }
    }
    enum Place { case start, document, route, track, segment }
    var place = Place.start
    var pointsInSegment = 0
    for event in events {
        switch (place, event) {
        case (.start, .header): place = .document
        case (.start, _): fail("\(event) before the header")
        case (_, .warning): break
        case (.document, .waypoint(let p)): check(p)
        case (.document, .metadata), (.document, .documentExtensions): break
        case (.document, .routeStart): place = .route
        case (.route, .routePoint(let p)): check(p)
        case (.route, .routeEnd): place = .document
        case (.document, .trackStart): place = .track
        case (.track, .segmentStart):
            place = .segment
            pointsInSegment = 0
        case (.segment, .trackPoint(let p)):
            check(p)
            pointsInSegment += 1
        case (.segment, .segmentEnd):
            if pointsInSegment == 0 { fail("an empty segment") }
            place = .track
        case (.track, .trackEnd): place = .document
        default: fail("\(event) out of place (in \(place))")
        }
    }
    if place != .document && place != .start { fail("the events end inside a path (\(place))") }
}

/// The activity formats: the bytes as TCX, KML, GeoJSON, FIT and CSV, each read whole and in
/// pieces (the same events), strictly and leniently, and through `TraceFormat` (which must make
/// the reader its `detect` names).
func fuzzActivity(_ bytes: [UInt8]) {
    let format = TraceFormat.detect(bytes.prefix(4096))
    let makers: [(String, (ByteSource, GPXReadOptions) -> any TraceEventReader)] = [
        ("TCXReader", { TCXReader(source: $0, name: "fuzz.tcx", options: $1) }),
        ("KMLReader", { KMLReader(source: $0, name: "fuzz.kml", options: $1) }),
        ("GeoJSONReader", { GeoJSONReader(source: $0, name: "fuzz.geojson", options: $1) }),
        ("FITReader", { FITReader(source: $0, name: "fuzz.fit", options: $1) }),
        ("CSVReader", { CSVReader(source: $0, name: "fuzz.csv", options: $1) }),
    ]
    let limits = XMLLimits(maxDepth: 64, maxTokenBytes: 4096, chunkBytes: 64)
    for (name, make) in makers {
        for lenient in [false, true] {
            readInPieces(bytes, reader: name, checksTrack: false) { source in
                make(source, GPXReadOptions(lenient: lenient, limits: limits))
            }
            let whole = events(of: make(MemoryByteSource(bytes), GPXReadOptions(lenient: lenient, limits: limits)))
            if whole.error == nil { checkDocument(whole.events, reader: name) }
        }
    }
    do {
        let reader = try TraceFormat.reader(for: MemoryByteSource(bytes), name: "fuzz.trace")
        let made: TraceFormat =
            switch reader {
            case is TCXReader: .tcx
            case is KMLReader: .kml
            case is GeoJSONReader: .geoJSON
            case is FITReader: .fit
            case is CSVReader: .csv
            case is NMEAReader: .nmea
            default: .gpx
            }
        if made != format && format != .gpsdJSON {
            report("waymark-fuzz: TraceFormat.detect says \(format) but the reader made is for \(made)\n")
            abort()
        }
    } catch {}
}

enum Mode: String {
    case gpx, writers, scenario, gpsd, nmea, activity
}

let mode: Mode = {
    let name = getenv("WAYMARK_FUZZ_TARGET").map { String(cString: $0) } ?? "gpx"
    guard let mode = Mode(rawValue: name) else {
        report(
            "waymark-fuzz: WAYMARK_FUZZ_TARGET must be gpx, writers, scenario, gpsd, nmea or activity, not \(name)\n")
        exit(64)
    }
    return mode
}()

@_cdecl("waymark_fuzz_one")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch mode {
    case .gpx: fuzzGPX(bytes)
    case .writers: fuzzWriters(bytes)
    case .scenario: fuzzScenario(bytes)
    case .gpsd: fuzzGPSD(bytes)
    case .nmea: fuzzNMEA(bytes)
    case .activity: fuzzActivity(bytes)
    }
    return 0
}

guard cfuzz_driver_available() != 0 else {
    report("waymark-fuzz: built without libFuzzer; build with -Xswiftc -sanitize=fuzzer,address\n")
    exit(64)
}
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
