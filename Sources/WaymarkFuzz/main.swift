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

enum Mode: String {
    case gpx, writers, scenario, gpsd
}

let mode: Mode = {
    let name = getenv("WAYMARK_FUZZ_TARGET").map { String(cString: $0) } ?? "gpx"
    guard let mode = Mode(rawValue: name) else {
        report("waymark-fuzz: WAYMARK_FUZZ_TARGET must be gpx, writers, scenario or gpsd, not \(name)\n")
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
