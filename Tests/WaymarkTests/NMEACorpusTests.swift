import Foundation
import Testing

@testable import Waymark

/// Every NMEA log of gpsd 3.22's regression suite, read offline by ``NMEAReader`` and compared
/// with the log's `.chk` (gpsd 3.22's own decoding of it, TPV by TPV).
@Suite(.enabled(if: Paths.sharedAvailable, "needs ../shared/corpus"))
struct NMEACorpusTests {
    static let directory = Paths.corpus.appendingPathComponent("gpsd/release-3.22")
    static let logs: [String] = Paths.files(under: directory, suffix: ".log").filter {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent($0 + ".chk").path)
    }

    /// One fix as gpsd 3.22 reported it: the last TPV of a run of TPVs of one time (gpsd sends
    /// a TPV after several sentences of an epoch, each more complete), with a 2D or 3D fix.
    struct GpsdFix {
        var time: String?
        var latitude: Double
        var longitude: Double
        var mode: Int
        var altitude: Double?
    }

    /// gpsd's fixes, in order: for each run of TPVs of one time, its last one with a fix; TPVs
    /// with a fix but no time (gpsd had no date yet) are kept too, each on its own.
    static func gpsdFixes(_ log: String) throws -> [GpsdFix] {
        let text = try String(contentsOf: directory.appendingPathComponent(log + ".chk"), encoding: .isoLatin1)
        var fixes: [GpsdFix] = []
        var runTime: String?
        var runFix: GpsdFix?
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{\"class\":\"TPV\"") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            let time = object["time"] as? String
            if time != runTime || time == nil {
                if let runFix { fixes.append(runFix) }
                runFix = nil
                runTime = time
            }
            guard let mode = object["mode"] as? Int, mode >= 2, let lat = object["lat"] as? Double,
                let lon = object["lon"] as? Double
            else { continue }
            runFix = GpsdFix(
                time: time, latitude: lat, longitude: lon, mode: mode,
                altitude: (object["altMSL"] as? NSNumber)?.doubleValue)
        }
        if let runFix { fixes.append(runFix) }
        return fixes
    }

    static func ours(_ log: String) throws -> (points: [GPXPoint], warnings: [GPXWarning]) {
        let reader = try NMEAReader(contentsOf: directory.appendingPathComponent(log).path)
        var points: [GPXPoint] = []
        var warnings: [GPXWarning] = []
        try reader.read { event in
            switch event {
            case .trackPoint(let p): points.append(p)
            case .warning(let w): warnings.append(w)
            default: break
            }
        }
        return (points, warnings)
    }

    static let formatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return f
    }()

    /// gpsd 3.22 moves every date before 2017 forward 1024 weeks, taking each receiver for a
    /// live one with the week rollover bug; a recorded log keeps its own dates.
    static func gpsdTime(of date: Date) -> [String] {
        var times = [formatter.string(from: date)]
        if date < Date(timeIntervalSince1970: 1_483_228_800) {
            times.append(formatter.string(from: date.addingTimeInterval(619_315_200)))
        }
        return times
    }

    /// Differences from gpsd that Waymark makes on purpose, by log: how many of each, so that
    /// one more or one fewer fails. Each is explained where it is counted.
    static let deliberate: [String: [Difference: Int]] = [
        // bt451's log is two recordings spliced: after 15:25:08.5 the time goes back to
        // 14:33:06 on the same day (the ZDAs say 2009-12-09 throughout). gpsd takes the step
        // back for a midnight and dates the rest a day later (matched as `otherDay`); its
        // epoch of 15:25:08.5, cut short by the splice, it never reports. Waymark keeps it.
        "bt451.log": [.notInGpsd: 2],
        // This marine log sends each GGA a cycle late: the GGA of 09:48:16 comes after the
        // RMC, ZDA and GLL of that second, with the position of 09:48:17. gpsd reports the
        // epoch before the GGA arrives; Waymark merges the GGA into the epoch its time names,
        // and so takes its position and altitude.
        "bundg_zeus_9.log": [.position: 25, .altitude: 25],
        // gpsd sends a TPV where it has learnt that a cycle ends; an epoch that ends another
        // way it does not report, though its sentences give a fix:
        // - the humminbird's seconds of GLL alone (19:41:02 and 19:41:04);
        "humminbird-M37.log": [.notInGpsd: 2],
        // - the RST39's GGAs at 10 Hz between RMCs at 1 Hz (20:41:32.1);
        "rst39.log": [.notInGpsd: 1],
        // - the Haicom's epoch of 09:53:04.802, whose GGA says no fix and whose GSA (2D) and
        //   RMC (valid) then give one.
        "haicom-305N.log": [.notInGpsd: 1],
        // - the Garmin 25LP's epoch of 12:03:26, whose GGA says 0 satellites (no fix, gpsd's
        //   TPV) and whose GSA then says 2D.
        "garmin25lp.log": [.notInGpsd: 1],
        // The SL869 gives 10:21:43.990 in one sentence and 10:21:44.000 in the next, 10 ms
        // apart: gpsd starts an epoch there, Waymark does not (within 0.01 s is one epoch), so
        // the two make one fix of Waymark's; its mode is 3 from GGA's altitude where gpsd's
        // first part had GSA's 2D.
        "sl869.log": [.mode: 1, .gpsdMissing: 1],
    ]

    enum Difference: Hashable, CustomStringConvertible {
        case position, mode, altitude, notInGpsd, gpsdMissing
        var description: String {
            switch self {
            case .position: "position"
            case .mode: "mode"
            case .altitude: "altitude"
            case .notInGpsd: "a fix gpsd does not report"
            case .gpsdMissing: "a gpsd fix Waymark does not report"
            }
        }
    }

    @Test(arguments: logs)
    func everyFixMatchesGpsdsDecoding(_ log: String) throws {
        let expected = try Self.gpsdFixes(log)
        var byTime: [String: [Int]] = [:]
        for (i, f) in expected.enumerated() { if let t = f.time { byTime[t, default: []].append(i) } }
        let (points, _) = try Self.ours(log)
        var matched = Set<Int>()
        var counts: [Difference: Int] = [:]
        var report: [String] = []
        var explained = (undated: 0, otherDay: 0)
        func samePosition(_ f: GpsdFix, _ p: GPXPoint) -> Bool {
            abs(f.latitude - p.coordinate.latitude) <= 1e-8 && abs(f.longitude - p.coordinate.longitude) <= 1e-8
        }
        for p in points {
            guard let time = p.time else { continue }
            let ourMode = p.fix == .twoD ? 2 : 3
            let candidates = Self.gpsdTime(of: time).flatMap { byTime[$0] ?? [] }
            guard !candidates.isEmpty else {
                let timeOfDay = String(Self.formatter.string(from: time).dropFirst(10))
                if let i = expected.indices.first(where: {
                    !matched.contains($0) && expected[$0].time == nil && samePosition(expected[$0], p)
                }) {
                    // gpsd had no date for this epoch yet, and sent its TPV without a time;
                    // Waymark dates it from the receiver's next date.
                    matched.insert(i)
                    explained.undated += 1
                } else if let i = expected.indices.first(where: {
                    !matched.contains($0) && expected[$0].time?.hasSuffix(timeOfDay) == true
                        && samePosition(expected[$0], p)
                }) {
                    // gpsd guessed another day (see bt451 below).
                    matched.insert(i)
                    explained.otherDay += 1
                } else {
                    counts[.notInGpsd, default: 0] += 1
                    report.append("\(Self.formatter.string(from: time)): no gpsd fix at this time")
                }
                continue
            }
            // The fix of that time that agrees best: position, then mode, then altitude.
            func agreement(_ f: GpsdFix) -> Int {
                var a = samePosition(f, p) ? 4 : 0
                if f.mode == ourMode { a += 2 }
                if f.altitude.map({ a in p.elevation.map { abs($0 - a) <= 1e-4 } ?? false }) ?? (p.elevation == nil) {
                    a += 1
                }
                return a
            }
            let best = candidates.max { agreement(expected[$0]) < agreement(expected[$1]) }!
            matched.insert(best)
            let f = expected[best]
            let key = f.time ?? "?"
            if !samePosition(f, p) {
                counts[.position, default: 0] += 1
                report.append(
                    "\(key): position \(p.coordinate.latitude),\(p.coordinate.longitude) vs \(f.latitude),\(f.longitude)"
                )
            }
            if f.mode != ourMode {
                counts[.mode, default: 0] += 1
                report.append("\(key): mode \(ourMode) vs \(f.mode)")
            }
            if f.mode == 3, ourMode == 3 {
                switch (p.elevation, f.altitude) {
                case (let a?, let b?) where abs(a - b) > 1e-4:
                    counts[.altitude, default: 0] += 1
                    report.append("\(key): altitude \(a) vs \(b)")
                case (nil, let b?):
                    counts[.altitude, default: 0] += 1
                    report.append("\(key): no altitude vs \(b)")
                case (let a?, nil):
                    counts[.altitude, default: 0] += 1
                    report.append("\(key): altitude \(a) vs none")
                default: break
                }
            }
        }
        for (i, f) in expected.enumerated() where f.time != nil && !matched.contains(i) {
            counts[.gpsdMissing, default: 0] += 1
            report.append("\(f.time!): gpsd's fix is missing")
        }
        let summary = report.prefix(40).joined(separator: "\n")
        #expect(
            counts == Self.deliberate[log] ?? [:],
            "\(log): \(counts) where \(Self.deliberate[log] ?? [:]) is explained:\n\(summary)")
        #expect(points.count >= expected.filter { $0.time != nil }.count - (counts[.gpsdMissing] ?? 0))
        _ = explained
    }
}
