import Foundation
import Testing

@testable import Waymark

/// `StreamingReplaySource` reads as it plays; what it plays must be what the in-memory path
/// (`GPXDocument` → `ReplaySchedule` → `GPXReplaySource`) plays, event for event.
@Suite struct StreamingReplaySourceTests {
    /// One way to lay a trace out and play it.
    struct Setup: Sendable, CustomStringConvertible {
        var description: String
        var options = ReplaySchedule.Options()
        var loops: Int? = 1
    }

    static let setups: [Setup] = [
        Setup(description: "default"),
        Setup(description: "interval 3 s", options: .init(interval: .seconds(3))),
        Setup(description: "start offset 30 s", options: .init(startOffset: .seconds(30))),
        Setup(description: "loops 2", loops: 2),
        Setup(description: "untimed speed 5", options: .init(untimedSpeed: 5)),
        Setup(
            description: "interval 0.7 s, start offset 5 s, loops 3",
            options: .init(interval: .milliseconds(700), startOffset: .seconds(5)), loops: 3),
        Setup(description: "endless", loops: nil),
    ]

    /// What a run gives: its events, or the error that stopped it, as text with its type.
    struct Outcome: Equatable, CustomStringConvertible {
        var events: [SourceEvent] = []
        var error: String?
        var description: String { error ?? "\(events.count) events" }
    }

    static let readOptions = GPXReadOptions(keepsExtensionElements: false)

    /// Events of the in-memory path; an endless source stops after `limit`.
    static func inMemory(_ path: String, _ setup: Setup, limit: Int = 100_000) -> Outcome {
        var outcome = Outcome()
        do {
            // The same reader the streaming path makes: told by content (a KML named .gpx is KML).
            let reader = try TraceFormat.reader(for: FileByteSource(path: path), name: path, options: readOptions)
            let document = try GPXDocument(reading: reader)
            let schedule = try ReplaySchedule(document: document, file: path, options: setup.options)
            var source = GPXReplaySource(schedule: schedule, name: path, loops: setup.loops)
            while outcome.events.count < limit, let e = source.nextEvent() { outcome.events.append(e) }
        } catch {
            outcome.error = "\(type(of: error)): \(error)"
        }
        return outcome
    }

    static func streamed(_ path: String, _ setup: Setup, limit: Int = 100_000) -> Outcome {
        var outcome = Outcome()
        do {
            var source = try StreamingReplaySource(
                contentsOf: path, readOptions: readOptions, options: setup.options, loops: setup.loops)
            while outcome.events.count < limit, let e = try source.nextEvent() { outcome.events.append(e) }
        } catch {
            outcome.error = "\(type(of: error)): \(error)"
        }
        return outcome
    }

    /// Compares both paths on `path` for every setup; an endless replay is compared over its
    /// first three plays and a bit.
    static func expectSamePlay(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for setup in setups {
            var limit = 100_000
            if setup.loops == nil { limit = 3 * inMemory(path, Setup(description: "once")).events.count + 2 }
            let expected = inMemory(path, setup, limit: limit)
            let actual = streamed(path, setup, limit: limit)
            #expect(actual == expected, "\(path), \(setup)", sourceLocation: sourceLocation)
            if actual != expected,
                let i = zip(actual.events, expected.events).enumerated().first(where: { $0.element.0 != $0.element.1 })?
                    .offset
            {
                Issue.record(
                    "first difference at event \(i):\n\(actual.events[i])\n\(expected.events[i])",
                    sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: - The project's files and the corpus

    static let files: [String] = {
        var files = Paths.projectGPXFiles(corpus: true)
        let traces = Paths.fixtures.appendingPathComponent("scenarios/traces")
        files += Paths.files(under: traces, suffix: ".gpx").map { traces.appendingPathComponent($0).path }
        return files
    }()

    @Test(arguments: files)
    func playsEveryFileAsTheInMemoryScheduleDoes(_ path: String) {
        Self.expectSamePlay(path)
    }

    @Test func theFileListCoversFixturesScenarioTracesAndTraces() {
        #expect(Self.files.contains { $0.hasSuffix("gpx/segments.gpx") })
        #expect(Self.files.contains { $0.hasSuffix("scenarios/traces/nofix.gpx") })
        #expect(Self.files.contains { $0.hasSuffix("traces/xcode-route.gpx") })
        #expect(Self.files.contains { $0.hasSuffix("bad/truncated-in-trkpt.gpx") })
    }

    @Test func keepingExtensionElementsPlaysTheSame() throws {
        let path = Paths.fixture("gpx/extensions.gpx")
        let document = try GPXDocument(reader: GPXReader(contentsOf: path))
        let expected = GPXReplaySource(schedule: try ReplaySchedule(document: document, file: "f"), loops: 2).allEvents
        var source = try StreamingReplaySource(contentsOf: path, file: "f", readOptions: GPXReadOptions(), loops: 2)
        var events: [SourceEvent] = []
        while let e = try source.nextEvent() { events.append(e) }
        #expect(events == expected)
        #expect(source.name == path)
    }

    // MARK: - Generated traces

    static let header =
        "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"

    static func point(_ tag: String, _ i: Int, time: Int?, extra: String = "") -> String {
        let t = time.map {
            String(format: "<time>2024-05-01T%02d:%02d:%02dZ</time>", 8 + $0 / 3600, $0 / 60 % 60, $0 % 60)
        }
        return "<\(tag) lat=\"\(48.1 + Double(i) * 0.0001)\" lon=\"\(11.5 + Double(i % 7) * 0.0001)\">"
            + "<ele>\(500 + i % 13)</ele>\(t ?? "")\(extra)</\(tag)>\n"
    }

    /// Writes `body` inside a `<gpx>` element to a temporary file.
    static func write(_ body: String) throws -> String {
        let path = temporaryPath(".gpx")
        try (header + body + "</gpx>\n").write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static let generated: [(String, String)] = {
        func track(_ segments: [[(Int, Int?)]], extra: (Int) -> String = { _ in "" }) -> String {
            "<trk>"
                + segments.map { s in
                    "<trkseg>" + s.map { point("trkpt", $0.0, time: $0.1, extra: extra($0.0)) }.joined() + "</trkseg>"
                }.joined() + "</trk>\n"
        }
        let timed = (0..<40).map { ($0, Optional($0 * 4)) }
        return [
            ("backwards times", track([[(0, 10), (1, 5), (2, 20), (3, 20), (4, 19), (5, 40)], [(6, 30), (7, 60)]])),
            (
                "a segment wholly back in time",
                track([[(0, 100), (1, 110)], [(2, 50), (3, 60)], [(4, 120), (5, 130)]])
            ),
            (
                "multiple segments and tracks",
                track([Array(timed[0..<10]), Array(timed[10..<11]), Array(timed[11..<20])])
                    + track([[], Array(timed[20..<40])])
            ),
            (
                "route only",
                "<rte>" + (0..<12).map { point("rtept", $0, time: $0 * 7) }.joined() + "</rte><rte></rte>"
                    + "<rte>" + (12..<20).map { point("rtept", $0, time: 200 + $0) }.joined() + "</rte>"
            ),
            ("waypoints only", (0..<15).map { point("wpt", $0, time: $0 * 11) }.joined()),
            ("untimed track", track([(0..<30).map { ($0, nil) }, (30..<35).map { ($0, nil) }])),
            ("partly timed track", track([[(0, 0), (1, nil), (2, 20)]])),
            ("untimed route", "<rte>" + (0..<9).map { point("rtept", $0, time: nil) }.joined() + "</rte>"),
            ("a single point", track([[(0, 0)]])),
            ("a single untimed point", track([[(0, nil)]])),
            ("empty segments only", "<wpt lat=\"1\" lon=\"2\"/>" + track([[], []])),
            (
                "empty segments, then a route",
                track([[]]) + "<rte><rtept lat=\"1\" lon=\"2\"/><rtept lat=\"1\" lon=\"2.1\"/></rte>"
            ),
            ("nothing at all", "<metadata><name>empty</name></metadata>"),
            (
                "waypoints and routes before and after tracks",
                point("wpt", 90, time: 1) + track([Array(timed[0..<5])]) + "<rte>" + point("rtept", 91, time: 2)
                    + "</rte>"
                    + point("wpt", 92, time: 3) + track([Array(timed[5..<9])])
            ),
            (
                "fix none",
                track(
                    [Array(timed[0..<8])],
                    extra: { $0 % 3 == 1 ? "<fix>none</fix>" : ($0 == 4 ? "<fix>dgps</fix><hdop>2</hdop>" : "") })
            ),
            (
                "given speed and course",
                track(
                    [Array(timed[0..<6])],
                    extra: {
                        $0 % 2 == 0
                            ? "<extensions><gpxtpx:TrackPointExtension xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v2\"><gpxtpx:speed>2.5</gpxtpx:speed><gpxtpx:course>45</gpxtpx:course></gpxtpx:TrackPointExtension></extensions>"
                            : ""
                    })
            ),
            ("equal times", track([[(0, 0), (1, 0), (2, 0), (3, 4), (4, 4), (5, 4), (6, 9)], [(7, 9), (8, 9)]])),
            ("long stops between points", track([[(0, 0), (1, 200), (2, 201), (3, 500)]])),
        ]
    }()

    @Test(arguments: generated.map(\.0))
    func playsGeneratedTracesAsTheInMemoryScheduleDoes(_ name: String) throws {
        let body = try #require(Self.generated.first { $0.0 == name }?.1)
        let path = try Self.write(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        Self.expectSamePlay(path)
        for interval in [Duration.milliseconds(333), .seconds(1), .seconds(50)] {
            for offset in [Duration.zero, .seconds(3), .seconds(199)] {
                let setup = Setup(
                    description: "interval \(interval), offset \(offset)",
                    options: .init(interval: interval, startOffset: offset), loops: 2)
                #expect(Self.streamed(path, setup) == Self.inMemory(path, setup), "\(name), \(setup)")
            }
        }
    }

    @Test func pointsGoingBackInTimeAreCountedUpFrontAndAsTheyAreDropped() throws {
        let body = Self.generated.first { $0.0 == "backwards times" }!.1
        let path = try Self.write(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let schedule = try ReplaySchedule(document: GPXDocument(contentsOf: path), file: path)
        #expect(schedule.droppedPoints == 3)
        var source = try StreamingReplaySource(contentsOf: path, loops: 2)
        #expect(source.totalDroppedPoints == 3 && source.droppedPoints == 0 && source.isTimed)
        var seen: [Int] = []
        while try source.nextEvent() != nil { seen.append(source.droppedPoints) }
        #expect(seen.first == 1)  // the second point is dropped on the way to the second fix
        #expect(seen == seen.sorted() && seen.last == 3)
        #expect(source.droppedPoints == source.totalDroppedPoints)
    }

    @Test func peekGivesTheFirstEventWithoutTakingItAndNilWhenThereIsNothingToPlay() throws {
        var source = try StreamingReplaySource(contentsOf: Paths.fixture("gpx/segments.gpx"))
        let first = try source.peek()
        #expect(try source.peek() == first)
        #expect(try source.nextEvent() == first)
        #expect(try source.nextEvent()?.offset == .seconds(10))
        #expect(first?.index == 3 && first?.offset == .zero)
        var late = try StreamingReplaySource(
            contentsOf: Paths.fixture("gpx/segments.gpx"), options: .init(startOffset: .seconds(3600)), loops: nil)
        #expect(try late.peek() == nil)
        #expect(try late.nextEvent() == nil)
        // The fix behind an event without a location still gives the run its epoch.
        let noFix = try Self.write(
            "<trk><trkseg>" + Self.point("trkpt", 0, time: 30, extra: "<fix>none</fix>")
                + Self.point("trkpt", 1, time: 40) + "</trkseg></trk>")
        defer { try? FileManager.default.removeItem(atPath: noFix) }
        var blind = try StreamingReplaySource(contentsOf: noFix)
        #expect(try blind.peek()?.kind == SourceEvent.Kind.noFix)
        let fix = try #require(try blind.peekFix())
        #expect(fix.location.timestamp == Date(timeIntervalSince1970: 1_714_550_430) && fix.offset == .zero)
        #expect(try blind.nextEvent()?.kind == SourceEvent.Kind.noFix)
        #expect(try blind.peekFix()?.offset == .seconds(10))
        let empty = try Self.write("")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        var nothing = try StreamingReplaySource(contentsOf: empty, loops: nil)
        #expect(nothing.pointCount == 0)
        #expect(try nothing.peek() == nil)
    }

    @Test func theAsyncNextGivesTheSameEvents() async throws {
        let path = Paths.fixture("scenarios/traces/nofix.gpx")
        var source = try StreamingReplaySource(contentsOf: path, readOptions: Self.readOptions, loops: 2)
        var events: [SourceEvent] = []
        while let e = try await source.next() { events.append(e) }
        #expect(Outcome(events: events) == Self.inMemory(path, Setup(description: "loops 2", loops: 2)))
        #expect(events.contains { $0.kind == .noFix })
    }

    // MARK: - Errors

    @Test func badOptionsThrowTheScheduleErrors() throws {
        let path = Paths.fixture("gpx/segments.gpx")
        for options in [
            ReplaySchedule.Options(untimedSpeed: 0), .init(untimedSpeed: .infinity), .init(interval: .zero),
        ] {
            let setup = Setup(description: "bad", options: options)
            let actual = Self.streamed(path, setup)
            #expect(actual.error?.hasPrefix("ScheduleError: ") == true)
            #expect(actual == Self.inMemory(path, setup))
        }
    }

    @Test func readErrorsAreTheReadersWithTheirPlace() throws {
        let path = try Self.write(
            "<trk><trkseg>" + Self.point("trkpt", 0, time: 0) + "<trkpt lat=\"x\" lon=\"1\"/></trkseg></trk>")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: GPXError.self) { try StreamingReplaySource(contentsOf: path) }
        do {
            _ = try StreamingReplaySource(contentsOf: path)
        } catch let error as GPXError {
            #expect(error.line == 4 && error.column > 0 && "\(error)".hasPrefix("\(path):4:"))
        }
        #expect(Self.streamed(path, Self.setups[0]) == Self.inMemory(path, Self.setups[0]))
        let missing = Self.streamed("/nonexistent/walk.gpx", Self.setups[0])
        #expect(missing.error?.contains("GPXError") == true)
        #expect(missing == Self.inMemory("/nonexistent/walk.gpx", Self.setups[0]))
        #expect(
            Self.streamed(Paths.fixtures.path, Self.setups[0]) == Self.inMemory(Paths.fixtures.path, Self.setups[0]))
    }

    @Test func aLenientReadCountsTheBadPointsAndPlaysTheRest() throws {
        let body =
            "<trk><trkseg>" + Self.point("trkpt", 0, time: 0) + "<trkpt lat=\"x\" lon=\"1\"/>"
            + Self.point("trkpt", 1, time: 5) + "</trkseg></trk>"
        let path = try Self.write(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = GPXReadOptions(lenient: true, keepsExtensionElements: false)
        var warnings: [GPXWarning] = []
        var source = try StreamingReplaySource(contentsOf: path, readOptions: options) { warnings.append($0) }
        #expect(source.badPointsLeftOut == 1 && warnings.count == 1)
        var events: [SourceEvent] = []
        while let e = try source.nextEvent() { events.append(e) }
        let document = try GPXDocument(reader: GPXReader(contentsOf: path, options: options))
        #expect(events == GPXReplaySource(schedule: try ReplaySchedule(document: document, file: path)).allEvents)
        #expect(warnings.count == 1)  // the plays do not report them again
    }

    // MARK: - Input that cannot be read twice

    @Test(.timeLimit(.minutes(45))) func aFIFOIsSpooledToAnUnlinkedTemporaryFile() throws {
        let source = Paths.fixture("gpx/segments.gpx")
        let fifo = temporaryPath(".fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let writer = Thread {
            let fd = open(fifo, O_WRONLY | O_CLOEXEC)
            bytes.withUnsafeBytes { _ = Foundation.write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }
        writer.start()
        let temporary = TestScratch.directory
        func spools() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter {
                $0.hasPrefix("waymark-replay-")
            }.count
        }
        let before = spools()
        var streamed = try StreamingReplaySource(contentsOf: fifo, file: "s", loops: 2)
        #expect(spools() == before)
        var events: [SourceEvent] = []
        while let e = try streamed.nextEvent() { events.append(e) }
        let document = try GPXDocument(contentsOf: source, options: Self.readOptions)
        #expect(
            events == GPXReplaySource(schedule: try ReplaySchedule(document: document, file: "s"), loops: 2).allEvents)
    }

    // MARK: - Memory and stopping early

    /// A walk of `count` 1 Hz points in segments of 5 000, with a waypoint and a route first.
    static func walk(_ count: Int) throws -> String {
        let path = temporaryPath(".gpx")
        guard let file = fopen(path, "w") else { throw POSIXError(.EIO) }
        defer { fclose(file) }
        fputs(header + "<wpt lat=\"48\" lon=\"11\"/><rte><rtept lat=\"48\" lon=\"11\"/></rte><trk><trkseg>\n", file)
        for i in 0..<count {
            if i > 0 && i % 5000 == 0 { fputs("</trkseg><trkseg>\n", file) }
            let t = i + i / 5000 * 60  // seconds since 2024-05-01T00:00:00Z
            let time =
                String(
                    format: "2024-05-%02d", 1 + t / 86_400)
                + String(format: "T%02d:%02d:%02dZ", t / 3600 % 24, t / 60 % 60, t % 60)
            let lat = 48.1 + Double(i % 1000) * 1e-5
            let lon = 11.5 + Double(i / 1000) * 1e-5
            fputs("<trkpt lat=\"\(lat)\" lon=\"\(lon)\"><time>\(time)</time></trkpt>\n", file)
        }
        fputs("</trkseg></trk></gpx>\n", file)
        return path
    }

    /// The look-ahead holds a few fixes, as many for 200 000 points as for 2 000.
    @Test func theLookAheadIsBoundedWhateverTheTraceLength() throws {
        var marks: [Int: [Int]] = [:]
        for count in [2_000, 200_000] {
            let path = try Self.walk(count)
            defer { try? FileManager.default.removeItem(atPath: path) }
            for options in [ReplaySchedule.Options(), .init(interval: .milliseconds(400))] {
                var source = try StreamingReplaySource(contentsOf: path, options: options)
                var events = 0
                while try source.nextEvent() != nil { events += 1 }
                #expect(events >= count)
                marks[count, default: []].append(source.lookAheadHighWater)
            }
        }
        #expect(marks[2_000] == marks[200_000])
        #expect(marks[200_000]!.allSatisfy { $0 > 0 && $0 <= 6 })
        #expect(StreamingReplaySource.readAheadLimit <= 2_048)
    }

    /// Stopping early (Ctrl-C, `--end`) releases the source; its reader thread stops and is
    /// joined, also when it is skipping a long run of points that do not play.
    @Test(.timeLimit(.minutes(45))) func releasingTheSourceEarlyStopsItsReader() throws {
        var body = "<trk><trkseg>" + (0..<3).map { Self.point("trkpt", $0, time: $0) }.joined() + "</trkseg></trk>\n"
        body += String(repeating: "<wpt lat=\"1\" lon=\"2\"/>\n", count: 300_000)
        let path = try Self.write(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let long = try Self.walk(50_000)
        defer { try? FileManager.default.removeItem(atPath: long) }
        // A few times each: a reader that did not stop would play the looping file for ever. (Each
        // source reads its file through once before playing, about a second in a debug build:
        // twenty times each took 50 s of the test's 60.)
        for file in [path, long] {
            for _ in 0..<3 {
                var source = try StreamingReplaySource(contentsOf: file, loops: nil)
                _ = try source.nextEvent()
                _ = try source.nextEvent()
            }
        }
    }
}
