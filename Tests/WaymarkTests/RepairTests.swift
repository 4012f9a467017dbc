import Foundation
import Testing

@testable import Waymark

/// The live GPX file is complete after every point; a file cut anywhere is repaired up to its
/// last complete point, and the result is valid GPX.
@Suite struct RepairTests {
    static func location(_ i: Int) -> Location {
        Location(
            coordinate: Coordinate(latitude: 48.137 + Double(i) * 1e-4, longitude: 11.575 + Double(i) * 2e-4),
            altitude: 520 + Double(i), ellipsoidalAltitude: 567 + Double(i), horizontalAccuracy: 4,
            verticalAccuracy: i % 3 == 2 ? -1 : 6, speed: i % 2 == 0 ? 1.25 : -1, course: i % 2 == 0 ? 90 : -1,
            timestamp: Date(timeIntervalSince1970: 1_714_550_400 + Double(i) * 0.5),
            provenance: Provenance(
                source: .gpsd(device: "/dev/ttyUSB0"), isSimulatedBySoftware: false,
                fixMode: i % 3 == 2 ? .twoD : .threeD,
                satellitesUsed: 7, hdop: 0.8))
    }

    /// A live GPX of 14 points in three segments, and the byte offset where each point ends.
    static func liveFile() throws -> (path: String, pointEnds: [Int]) {
        let path = temporaryPath(".gpx")
        let writer = try LiveGPXWriter(path: path, name: "walk <&> \"live\"")
        var ends: [Int] = []
        for i in 0..<14 {
            try writer.append(location(i), segment: i < 5 ? 0 : (i < 9 ? 1 : 2))
            let text = try String(contentsOfFile: path, encoding: .utf8)
            // The point ends with "</trkpt>" and a newline, just before the closing tags.
            ends.append(Array(text.utf8).count - "    </trkseg>\n  </trk>\n</gpx>\n".utf8.count - 1)
        }
        try writer.close()
        return (path, ends)
    }

    @Test func theLiveFileIsCompleteGPXAfterEveryPoint() throws {
        let path = temporaryPath(".gpx")
        let writer = try LiveGPXWriter(path: path, name: "walk")
        #expect(try readDocument(path).0.tracks.first?.segments.first?.points.isEmpty == true, "valid before any fix")
        for i in 0..<9 {
            try writer.append(Self.location(i), segment: i / 4)
            let (document, warnings) = try readDocument(path)  // strict: throws on anything malformed
            #expect(warnings.isEmpty)
            let points = document.tracks[0].segments.flatMap(\.points)
            #expect(points.count == i + 1)
            #expect(document.tracks[0].segments.count == i / 4 + 1)
            #expect(points.last?.coordinate == Self.location(i).coordinate)
            #expect(points.last?.time == Self.location(i).timestamp)
        }
        try writer.close()
        if Paths.sharedAvailable && which("xmllint") != nil {
            let x = try run(Paths.shared.appendingPathComponent("tools/check-gpx").path, [path])
            #expect(x.status == 0, "\(x.stdoutText)\(x.stderr)")
        }
    }

    /// What GPX can say of a location comes back: elevation only when valid, the geoid
    /// height, the fix, satellites, HDOP, speed and course.
    @Test func theLiveFileKeepsWhatGPXCanSay() throws {
        let (path, _) = try Self.liveFile()
        let points = try readDocument(path).0.tracks[0].segments.flatMap(\.points)
        for (i, p) in points.enumerated() {
            let l = Self.location(i)
            #expect(p.elevation == (l.hasValidAltitude ? l.altitude : nil))
            if l.hasValidAltitude { #expect(abs((p.geoidHeight ?? 0) - 47) < 1e-9) }
            #expect(p.fix == (l.provenance.fixMode == .twoD ? .twoD : .threeD))
            #expect(p.satellites == 7 && p.hdop == 0.8)
            #expect(p.extensions.speed == (l.speed >= 0 ? l.speed : nil))
            #expect(p.extensions.course == (l.course >= 0 ? l.course : nil))
        }
    }

    /// Cut at every byte: the repair keeps exactly the points whose end tag is in the file,
    /// in order, and writes GPX that reads strictly.
    @Test func aCutAtAnyByteIsRepairedUpToTheLastCompletePoint() throws {
        let (path, ends) = try Self.liveFile()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let original = try readDocument(path).0.tracks[0].segments.flatMap(\.points)
        let headerEnd = try #require(ends.first) - 1
        var repairedCount = 0
        for cut in stride(from: 0, through: bytes.count, by: 1) {
            let complete = ends.filter { $0 <= cut }.count
            let out = temporaryPath(".gpx")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let sink = try FileSink(atomicPath: out)
            do {
                let report = try GPXRepair.repair(
                    source: MemoryByteSource(Array(bytes[..<cut])), name: "cut.gpx", to: sink)
                try sink.commit()
                #expect(report.trackPoints == complete, "cut at \(cut)")
                // Only the final newline may go missing without damage.
                #expect(report.wasDamaged == (cut < bytes.count - 1), "cut at \(cut)")
                let points = try readDocument(out).0.tracks.flatMap(\.segments).flatMap(\.points)
                #expect(points.map(\.coordinate) == original.prefix(complete).map(\.coordinate), "cut at \(cut)")
                #expect(points.map(\.time) == original.prefix(complete).map(\.time), "cut at \(cut)")
                repairedCount += 1
            } catch is GPXError {
                // Nothing recoverable: only possible before the first point is complete.
                #expect(complete == 0, "cut at \(cut) lost \(complete) complete point(s)")
            }
        }
        #expect(repairedCount > bytes.count - headerEnd - 10)
    }

    /// Files from other loggers (the bundled traces, and the corpus when present), cut at a
    /// spread of places: the repaired file passes the GPX checker and keeps a prefix of the points.
    @Test func filesFromOtherLoggersAreRepairedToValidGPX() throws {
        var files = ["city-walk.gpx", "drive-tunnel.gpx", "xcode-route.gpx"].map {
            Paths.root.appendingPathComponent("traces/\($0)").path
        }
        if Paths.sharedAvailable {
            files += Truth.parsedInputs.prefix(8).map { Paths.corpus.appendingPathComponent($0).path }
        }
        let checker = Paths.shared.appendingPathComponent("tools/check-gpx").path
        let canCheck = Paths.sharedAvailable && which("xmllint") != nil
        for file in files {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            guard let (whole, _) = try? readDocument(file) else { continue }
            let allPoints =
                whole.waypoints.count + whole.routes.flatMap(\.points).count
                + whole.tracks.flatMap(\.segments).flatMap(\.points).count
            for fraction in [0.35, 0.6, 0.9] {
                let cut = Int(Double(bytes.count) * fraction)
                let out = temporaryPath(".gpx")
                defer { try? FileManager.default.removeItem(atPath: out) }
                let sink = try FileSink(atomicPath: out)
                guard
                    let report = try? GPXRepair.repair(
                        source: MemoryByteSource(Array(bytes[..<cut])), name: file, to: sink)
                else { continue }
                try sink.commit()
                #expect(report.wasDamaged && report.points <= allPoints, "\(file) cut at \(cut)")
                let repaired = try readDocument(out).0
                let kept = repaired.tracks.flatMap(\.segments).flatMap(\.points).map(\.coordinate)
                let prefix = whole.tracks.flatMap(\.segments).flatMap(\.points).prefix(kept.count).map(\.coordinate)
                #expect(kept == Array(prefix), "\(file) cut at \(cut)")
                if canCheck {
                    let x = try run(checker, [out])
                    #expect(x.status == 0, "\(file) cut at \(cut): \(x.stdoutText)\(x.stderr)")
                }
            }
        }
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path),
            "run `swift build` first: the waymark product is missing beside the tests"))
    func theRepairCommandSaysWhatItCut() throws {
        let (path, ends) = try Self.liveFile()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = temporaryPath(".gpx")
        try bytes.prefix(ends[6] + 40).write(to: URL(fileURLWithPath: cut))
        let fixed = temporaryPath(".gpx")
        let r = try run(Paths.waymark.path, ["repair", cut, "-o", fixed])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("\(cut):"), "the warning names the file, line and column: \(r.stderr)")
        #expect(r.stderr.contains("repaired: kept 7 point(s): 7 track point(s)"), "\(r.stderr)")
        #expect(try readDocument(fixed).0.tracks[0].segments.flatMap(\.points).count == 7)

        let whole = try run(Paths.waymark.path, ["repair", path])
        #expect(whole.status == 0 && whole.stderr.contains("nothing to repair"), "\(whole.stderr)")
        #expect(whole.stdoutText.contains("<trkpt"))

        let headerOnly = temporaryPath(".gpx")
        try bytes.prefix(60).write(to: URL(fileURLWithPath: headerOnly))
        let none = temporaryPath(".gpx")
        let n = try run(Paths.waymark.path, ["repair", headerOnly, "-o", none])
        #expect(n.status == 65 && n.stderr.contains("not one complete point"), "\(n.stderr)")
        #expect(!FileManager.default.fileExists(atPath: none), "nothing written")
    }
}
