import CFuzzShim
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

// libFuzzer target: feeds arbitrary bytes to the GPX reader, in one piece and in 7-byte pieces
// (to exercise chunk boundaries). Any crash, hang or sanitizer report is a bug; thrown errors
// are the expected answer to bad input. Build and run: see README, "Fuzzing".

@_cdecl("waymark_fuzz_one")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    for piece in [Int.max, 7] {
        let reader = GPXReader(
            source: MemoryByteSource(bytes, pieceSize: piece), name: "fuzz",
            options: GPXReadOptions(lenient: piece == 7, limits: XMLLimits(maxTokenBytes: 4096, chunkBytes: 64)))
        var stats = TraceStatistics()
        do {
            try reader.read { stats.add($0) }
        } catch {
            _ = String(describing: error)
        }
    }
    return 0
}

guard cfuzz_driver_available() != 0 else {
    let message = "waymark-fuzz: built without libFuzzer; build with -Xswiftc -sanitize=fuzzer,address\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(64)
}
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
