import Foundation
import Testing

@testable import Waymark

/// A reader opening a live GPX at any moment of a recording reads a complete document: the one
/// published when it opened, however slowly it reads and however many points arrive meanwhile
/// (issue 28, item 6).
@Suite struct LiveGPXReadingTests {
    static let strategies: [PublishedFile.Strategy?] = [nil, .copying]

    /// A directory of the test's own: the hidden files beside the output are counted there.
    static func privateDirectory() throws -> String {
        let directory = temporaryPath("-live")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return directory
    }

    static func hiddenFiles(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".") }
    }

    /// A reader with a descriptor of its own, reading a few bytes at a time.
    final class SlowReader {
        let fd: Int32
        var bytes: [UInt8] = []
        var atEnd = false

        init(_ path: String) throws {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw OutputError(path: path, message: "cannot open") }
        }

        deinit { close(fd) }

        /// Reads up to `count` bytes; at the end of the file, notes it.
        func read(_ count: Int) {
            var chunk = [UInt8](repeating: 0, count: count)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, count) }
            if n <= 0 { atEnd = true } else { bytes += chunk[0..<n] }
        }

        func readToEnd() {
            while !atEnd { read(4096) }
        }
    }

    static func points(in bytes: [UInt8]) throws -> Int {
        let document = try parseDocument(String(decoding: bytes, as: UTF8.self))
        return document.tracks.flatMap(\.segments).flatMap(\.points).count
    }

    /// A reader opens the file after five points and stops 20 bytes before its end. Three
    /// points arrive; it reads on. It must read the five-point document it opened, whole, while
    /// a new reader finds eight points. Swapping in place would have written the held file.
    @Test(arguments: strategies)
    func aReaderHoldingTheFileReadsTheDocumentItOpened(strategy: PublishedFile.Strategy?) throws {
        let path = temporaryPath(".gpx")
        let writer = try LiveGPXWriter(path: path, name: "held", strategy: strategy)
        for i in 0..<5 { try writer.append(RepairTests.location(i), segment: 0) }
        let opened = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let reader = try SlowReader(path)
        reader.read(opened.count - 20)
        for i in 5..<8 { try writer.append(RepairTests.location(i), segment: 0) }
        reader.readToEnd()
        let unchanged = reader.bytes == opened
        #expect(
            unchanged,
            "the held file changed under its reader; it ends: \(String(decoding: reader.bytes.suffix(120), as: UTF8.self))"
        )
        #expect(try Self.points(in: reader.bytes) == 5)
        #expect(try Self.points(in: Array(Data(contentsOf: URL(fileURLWithPath: path)))) == 8)
        let file = try #require(writer.publishedFile)
        if strategy == nil {
            #expect(file.strategy == .swapping, "this machine's file system leases and swaps")
            // The held file was due to be written at the seventh point: it alone was copied.
            #expect(file.copies == 1)
        } else {
            #expect(file.copies == 8)
        }
        try writer.close()
    }

    /// Property: readers open at random moments and read at random paces while points arrive
    /// in random segments; each reads exactly the document published when it opened, which is
    /// complete GPX with every point so far.
    @Test(arguments: strategies)
    func everyReaderReadsACompleteDocument(strategy: PublishedFile.Strategy?) throws {
        struct Step: Sendable {
            enum Kind: Sendable {
                case point(newSegment: Bool)
                case open
                case read(reader: Int, count: Int)
                case close(Int)
            }
            var kind: Kind
        }
        Property<[Step]>(
            name: "live GPX readers \(String(describing: strategy))", count: 30,
            generate: { random in
                random.array(10...60) { random in
                    switch random.int(0...9) {
                    case 0...3: Step(kind: .point(newSegment: random.bool(0.15)))
                    case 4: Step(kind: .open)
                    case 5...7: Step(kind: .read(reader: random.int(0...5), count: random.pick([1, 7, 64, 300, 5000])))
                    default: Step(kind: .close(random.int(0...5)))
                    }
                }
            },
            shrink: { shrinkArray($0) },
            describe: { "\($0.map { "\($0.kind)" })" }
        ).check { steps in
            var problems = Problems()
            do {
                let directory = try Self.privateDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let path = directory + "/live.gpx"
                let writer = try LiveGPXWriter(path: path, name: "property", strategy: strategy)
                var readers: [(reader: SlowReader, expected: [UInt8], points: Int)] = []
                var segment = 0
                var published = 0
                func check(_ entry: (reader: SlowReader, expected: [UInt8], points: Int)) {
                    entry.reader.readToEnd()
                    problems.expect(entry.reader.bytes == entry.expected, "a reader's file changed while it read")
                    problems.expect(
                        (try? Self.points(in: entry.reader.bytes)) == entry.points,
                        "a reader did not read complete GPX with its \(entry.points) point(s)")
                }
                for step in steps {
                    switch step.kind {
                    case .point(let newSegment):
                        if newSegment { segment += 1 }
                        try writer.append(RepairTests.location(published), segment: segment)
                        published += 1
                    case .open:
                        let expected = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                        readers.append((try SlowReader(path), expected, published))
                    case .read(let index, let count):
                        if !readers.isEmpty { readers[index % readers.count].reader.read(count) }
                    case .close(let index):
                        if !readers.isEmpty { check(readers.remove(at: index % readers.count)) }
                    }
                }
                readers.forEach(check)
                readers.removeAll()
                let final = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                problems.expect((try? Self.points(in: final)) == published, "the file lacks points")
                try writer.close()
                problems.expect(try Self.hiddenFiles(in: directory).isEmpty, "close left a hidden file")
            } catch {
                problems.expect(false, "\(error)")
            }
            return problems.list
        }
    }

    /// Without readers, a point costs a point: nothing is copied, one hidden file sits beside the
    /// output while it is written, and none after.
    @Test func withoutReadersNothingIsCopied() throws {
        let directory = try Self.privateDirectory()
        let path = directory + "/walk.gpx"
        let writer = try LiveGPXWriter(path: path, name: "walk")
        for i in 0..<200 { try writer.append(RepairTests.location(i), segment: i / 50) }
        let file = try #require(writer.publishedFile)
        #expect(file.strategy == .swapping)
        #expect(file.copies == 0)
        #expect(try Self.hiddenFiles(in: directory).count == 1)
        try writer.close()
        #expect(try Self.hiddenFiles(in: directory).isEmpty)
        let points = try readDocument(path).0.tracks[0].segments.flatMap(\.points)
        #expect(points.count == 200)
        #expect(points.map(\.coordinate) == (0..<200).map { RepairTests.location($0).coordinate })
    }

    /// A replay in virtual time publishes in blocks: points wait until a block's worth has
    /// come, or until asked, and the file between is the last complete publication.
    @Test func pointsWaitForTheirBlockWhenAThresholdIsSet() throws {
        let path = temporaryPath(".gpx")
        let writer = try LiveGPXWriter(path: path, name: "blocks")
        writer.publishThreshold = 4096
        var published = 0
        for i in 0..<40 {
            try writer.append(RepairTests.location(i), segment: 0)
            let now = try readDocument(path).0.tracks[0].segments.flatMap(\.points).count
            #expect(now == published || now == i + 1, "point \(i): \(now) published")
            published = now
        }
        #expect(published > 0 && published < 40, "some points waited: \(published)")
        try writer.publishPending()
        #expect(try readDocument(path).0.tracks[0].segments[0].points.count == 40)
        try writer.append(RepairTests.location(40), segment: 1)
        try writer.close()
        let segments = try readDocument(path).0.tracks[0].segments
        #expect(segments.map(\.points.count) == [40, 1], "close publishes what waits")
    }

    /// The file replaced keeps its mode, a link to it stays a link (to the new content), and a
    /// FIFO is written, not replaced.
    @Test func whatIsAtThePathStaysWhatItWas() throws {
        let directory = try Self.privateDirectory()
        let privatePath = directory + "/private.gpx"
        #expect(
            FileManager.default.createFile(
                atPath: privatePath, contents: Data("old".utf8), attributes: [.posixPermissions: 0o600]))
        let writer = try LiveGPXWriter(path: privatePath, name: "private")
        try writer.append(RepairTests.location(0), segment: 0)
        try writer.close()
        var info = stat()
        #expect(stat(privatePath, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let link = directory + "/link.gpx"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "private.gpx")
        let linked = try LiveGPXWriter(path: link, name: "linked")
        for i in 0..<3 { try linked.append(RepairTests.location(i), segment: 0) }
        try linked.close()
        #expect(lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
        #expect(try readDocument(privatePath).0.tracks[0].segments[0].points.count == 3)

        let fifo = directory + "/pipe.gpx"
        #expect(mkfifo(fifo, 0o600) == 0)
        let readEnd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(readEnd >= 0)
        defer { close(readEnd) }
        let piped = try LiveGPXWriter(path: fifo, name: "piped")
        try piped.append(RepairTests.location(0), segment: 0)
        try piped.close()
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
        var received = [UInt8](repeating: 0, count: 1 << 16)
        let n = received.withUnsafeMutableBytes { read(readEnd, $0.baseAddress!, $0.count) }
        #expect(try Self.points(in: Array(received[0..<max(0, n)])) == 1)
        #expect(try Self.hiddenFiles(in: directory).isEmpty)
    }
}
