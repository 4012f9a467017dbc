import Foundation
import Testing

@testable import Waymark

/// `GPXReader.readAhead` reads on a second thread; what the caller sees must be what `read` gives.
@Suite struct ReadAheadTests {
    struct Outcome: Equatable {
        var events: [GPXEvent] = []
        var error: String?
    }

    static func outcome(_ bytes: [UInt8], lenient: Bool = false, ahead: (batchSize: Int, batches: Int)?) -> Outcome {
        let reader = GPXReader(
            source: MemoryByteSource(bytes), name: "t.gpx",
            options: GPXReadOptions(lenient: lenient, keepsExtensionElements: false))
        var result = Outcome()
        do {
            if let ahead {
                try reader.readAhead(batchSize: ahead.batchSize, batches: ahead.batches) { result.events.append($0) }
            } else {
                try reader.read { result.events.append($0) }
            }
        } catch {
            result.error = "\(error)"
        }
        return result
    }

    @Test func givesTheSameEventsAndErrorsAsRead() throws {
        let files = Paths.projectGPXFiles(corpus: false)
        #expect(files.count > 30)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            for lenient in [false, true] {
                let plain = Self.outcome(bytes, lenient: lenient, ahead: nil)
                for ahead in [(1, 1), (3, 2), (1024, 4)] {
                    #expect(Self.outcome(bytes, lenient: lenient, ahead: ahead) == plain, "\(file) \(ahead)")
                }
            }
        }
    }

    /// A long file cut part-way: every event before the damage arrives, then the error.
    @Test func anErrorComesAfterTheEventsBeforeIt() {
        var text = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<5000 { text += "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"1\"><ele>\(i)</ele></trkpt>\n" }
        let bytes = Array(text.utf8)
        let plain = Self.outcome(bytes, ahead: nil)
        let ahead = Self.outcome(bytes, ahead: (64, 2))
        #expect(plain.error != nil)
        #expect(plain.events.count == 5003)
        #expect(ahead == plain)
    }

    /// When the consumer fails, reading stops and the consumer's error comes out; the reading
    /// thread does not hang on a full queue (if it did, joining it would, and the limit trips).
    @Test(.timeLimit(.minutes(45))) func aFailingConsumerStopsTheReader() {
        struct Stop: Error {}
        var text = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<20_000 { text += "<trkpt lat=\"\(Double(i) / 1000)\" lon=\"1\"/>\n" }
        text += "</trkseg></trk></gpx>\n"
        let reader = GPXReader(source: MemoryByteSource(Array(text.utf8)), name: "t.gpx")
        var seen = 0
        #expect(throws: Stop.self) {
            try reader.readAhead(batchSize: 16, batches: 2) { _ in
                seen += 1
                if seen == 100 { throw Stop() }
            }
        }
        #expect(seen == 100)
    }
}
