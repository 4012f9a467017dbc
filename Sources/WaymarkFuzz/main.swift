import CFuzzShim
@_spi(Testing) import Waymark

#if canImport(Glibc)
    import Glibc
#endif

// libFuzzer target for the XML tokenizer and the GPX reader. Build and run: scripts/fuzz.sh.
//
// Beyond "no crash, no hang, no sanitizer report", every input checks two properties:
// - reading it whole and reading it in 7-byte pieces gives the same document or the same
//   error (chunk boundaries must not matter);
// - when the strict read succeeds, the lenient read gives the same document;
// - reading for GeoJSON (extension elements not kept), the track point fast path gives the
//   general path's document or error.
// A violation traps, so libFuzzer saves the input.

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

@_cdecl("waymark_fuzz_one")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
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
    return 0
}

guard cfuzz_driver_available() != 0 else {
    report("waymark-fuzz: built without libFuzzer; build with -Xswiftc -sanitize=fuzzer,address\n")
    exit(64)
}
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
