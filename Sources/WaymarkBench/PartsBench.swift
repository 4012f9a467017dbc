// waymark-bench parts FILE: where the time of GPX → GeoJSON goes, in one process: reading the
// bytes alone, the reader alone (events dropped), the GeoJSON writer alone (from events kept in
// memory), and reader plus writer (to /dev/null), on one thread and with the reader on a second
// (GPXReader.readAhead).
// Each stage runs 5 times; the best is printed, in MB/s, with its ratio to reading the bytes
// alone, measured in the same run.

import Foundation
import Waymark

#if canImport(Glibc)
    import Glibc
#endif

enum PartsBench {
    static func run(arguments: [String]) throws {
        guard let path = arguments.first else {
            print("usage: waymark-bench parts FILE.gpx [--only read|ahead]")
            exit(64)
        }
        let options = GPXReadOptions(keepsExtensionElements: false)
        /// GPX → GeoJSON into /dev/null, the reader on this thread or on a second one.
        func convert(readingAhead: Bool) throws {
            let reader = try GPXReader(contentsOf: path, options: options)
            let sink = try FileSink(atomicPath: "/dev/null")
            let writer = GeoJSONWriter(sink: sink)
            if readingAhead {
                try reader.readAhead { try writer.write($0) }
            } else {
                try reader.read { try writer.write($0) }
            }
            try writer.finish()
            try sink.commit()
        }
        if arguments.count > 1 {
            // For a profiler: one stage alone, 5 times (read: the reader; ahead: reader and
            // writer on two threads).
            guard arguments.count == 3, arguments[1] == "--only", ["read", "ahead"].contains(arguments[2]) else {
                print("usage: waymark-bench parts FILE.gpx [--only read|ahead]")
                exit(64)
            }
            for _ in 0..<5 {
                if arguments[2] == "read" {
                    try GPXReader(contentsOf: path, options: options).read { _ in }
                } else {
                    try convert(readingAhead: true)
                }
            }
            return
        }
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        func best(_ body: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<5 {
                let clock = ContinuousClock()
                let start = clock.now
                try body()
                let d = clock.now - start
                times.append(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
            }
            return times.min()!
        }
        let cat = try best {
            let source = try FileByteSource(path: path)
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 16)
            defer { buffer.deallocate() }
            while try source.read(into: buffer, capacity: 1 << 16) > 0 {}
        }
        var points = 0
        let readOnly = try best {
            points = 0
            let reader = try GPXReader(contentsOf: path, options: options)
            try reader.read { event in
                if case .trackPoint = event { points += 1 }
            }
        }
        let both = try best { try convert(readingAhead: false) }
        let ahead = try best { try convert(readingAhead: true) }
        var events: [GPXEvent] = []
        try GPXReader(contentsOf: path, options: options).read { events.append($0) }
        let writeOnly = try best {
            let sink = try FileSink(atomicPath: "/dev/null")
            let writer = GeoJSONWriter(sink: sink)
            for event in events { try writer.write(event) }
            try writer.finish()
            try sink.commit()
        }
        events = []
        func line(_ name: String, _ seconds: Double) {
            let padded = name.padding(toLength: 28, withPad: " ", startingAt: 0)
            print(
                padded
                    + String(
                        format: "%7.3f s %8.1f MB/s %6.0f ns/point  %5.1f× the read alone", seconds,
                        bytes / 1e6 / seconds, seconds * 1e9 / Double(max(points, 1)), seconds / cat))
        }
        print("\(path): \(Int(bytes)) bytes, \(points) track points; best of 5")
        line("read the bytes", cat)
        line("GPXReader", readOnly)
        line("GeoJSONWriter (events kept)", writeOnly)
        line("GPXReader + GeoJSONWriter", both)
        line("the same, reading ahead", ahead)
    }
}
