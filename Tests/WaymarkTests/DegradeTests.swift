import Foundation
import Testing

@testable import Waymark
@testable import WaymarkScenarioFile

/// Issue 32: bad GPS on purpose. The models are seeded and pure; their errors have the σ and
/// correlation time they state, within confidence bounds computed from the run's length.
@Suite struct DegradeTests {
    /// A walk east along 48°N at `speed` m/s, one point a second.
    static func walk(_ count: Int, speed: Double = 1.4) -> [GPXPoint] {
        (0..<count).map { i in
            GPXPoint(
                latitude: 48, longitude: 11 + Double(i) * speed / 74_600, elevation: 500,
                time: Date(timeIntervalSince1970: 1_719_792_000 + Double(i)))
        }
    }

    static func run(_ profile: DegradeProfile, seed: UInt64, _ points: [GPXPoint]) -> [TraceDegrader.Fix?] {
        var degrader = TraceDegrader(profile: profile, seed: seed)
        return points.map { degrader.degrade($0) }
    }

    /// Mean, variance and the autocorrelation at `lag` of a series.
    static func moments(_ xs: [Double], lag: Int) -> (mean: Double, variance: Double, correlation: Double) {
        let mean = xs.reduce(0, +) / Double(xs.count)
        let variance = xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(xs.count - 1)
        var c = 0.0
        for i in 0..<(xs.count - lag) { c += (xs[i] - mean) * (xs[i + lag] - mean) }
        return (mean, variance, c / Double(xs.count - lag) / variance)
    }

    /// The bound of a sample variance's relative error at 4 standard errors, for `n` samples of a
    /// process whose autocorrelation one step apart is `phi` (effective samples n(1−φ)/(1+φ)).
    static func varianceBound(n: Int, phi: Double) -> Double {
        let effective = Double(n) * (1 - phi) / (1 + phi)
        return 4 * (2 / effective).squareRoot()
    }

    @Test(arguments: [(2.0, 10.0, 1.0), (5.0, 60.0, 1.0), (1.0, 30.0, 5.0)])
    func gaussMarkovHasItsSigmaAndCorrelationTime(_ sample: (sigma: Double, tau: Double, dt: Double)) {
        var random = DegradeRandom(seed: 42)
        var process = GaussMarkov(sigma: sample.sigma, tau: sample.tau, random: &random)
        let n = 400_000
        let xs = (0..<n).map { _ in process.step(sample.dt, random: &random) }
        let lag = max(1, Int((sample.tau / sample.dt).rounded()))
        let m = Self.moments(xs, lag: lag)
        let phi = exp(-sample.dt / sample.tau)
        let bound = Self.varianceBound(n: n, phi: phi)
        #expect(abs(m.variance / (sample.sigma * sample.sigma) - 1) < bound, "variance \(m.variance), bound \(bound)")
        // The autocorrelation at lag τ is e⁻¹; its standard error is about √(1/n_eff).
        let expected = exp(-Double(lag) * sample.dt / sample.tau)
        #expect(abs(m.correlation - expected) < 2 * bound, "ρ(\(lag)) = \(m.correlation), expected \(expected)")
        let tau = -Double(lag) * sample.dt / log(m.correlation)
        #expect(abs(tau / sample.tau - 1) < 0.15, "estimated τ \(tau)")
    }

    @Test func theSameSeedGivesTheSameOutputAndAnotherSeedAnother() {
        var profile = DegradeProfile(name: "all")
        profile.noise = .init(sigma: 3, tau: 60)
        profile.multipath = .init(sigma: 5, tau: 20, bias: 20, every: 200, lasting: 40, reportedFraction: 0.4)
        profile.outages = .init(at: [[50, 70]], every: 400, lasting: 30)
        profile.jumps = .init(every: 500, distance: 120, lasting: 5, reportedAccuracy: 10)
        profile.drift = .init(sigma: 5, tau: 120, belowSpeed: 0.5)
        profile.satellites = .init(mean: 8, sigma: 2, tau: 120, minimum: 4, hdop: 1.2)
        profile.altitude = .init(sigma: 12, tau: 60)
        profile.clock = .init(repeats: 0.01, backward: 0.01, late: 0.01, by: 2)
        profile.rate = .init(interval: 2, burstEvery: 300, burstLasting: 20)
        let points = Self.walk(3000)
        let a = Self.run(profile, seed: 7, points)
        #expect(a == Self.run(profile, seed: 7, points))
        #expect(a != Self.run(profile, seed: 8, points))
        #expect(a.contains { $0 == nil } && a.contains { $0 != nil })
    }

    /// The noise alone: each axis' error has the stated σ and correlation time; the reported
    /// accuracy is the 68% radius of that error, and about 68% of fixes lie within it.
    @Test func noiseHasItsSigmaAndTheReportedAccuracyIsHonest() throws {
        var profile = DegradeProfile(name: "noise")
        profile.noise = .init(sigma: 4, tau: 20)
        let fixes = Self.run(profile, seed: 3, Self.walk(200_000)).compactMap { $0 }
        #expect(fixes.count == 200_000)
        let bound = Self.varianceBound(n: fixes.count, phi: exp(-1 / 20.0))
        for axis in [fixes.map(\.north), fixes.map(\.east)] {
            let m = Self.moments(axis, lag: 20)
            #expect(abs(m.variance / 16 - 1) < bound, "variance \(m.variance)")
            #expect(abs(m.correlation - exp(-1)) < 2 * bound, "ρ(τ) \(m.correlation)")
        }
        let reported = try #require(fixes.first?.point.horizontalAccuracy)
        #expect(abs(reported - 1.515 * 4) < 0.1)
        let within = Double(fixes.filter { $0.horizontalError <= reported }.count) / Double(fixes.count)
        #expect(abs(within - 0.68) < 0.04, "share within the reported accuracy: \(within)")
        // The truth is kept, and the error is the distance between the two.
        for fix in fixes.prefix(200) {
            let d = Geodesic.distance(fix.point.coordinate, fix.truth.coordinate)
            #expect(abs(d - fix.horizontalError) < 0.01 * max(1, d))
        }
    }

    @Test func outagesColdStartsAndRatesDropFixes() {
        var profile = DegradeProfile(name: "gaps")
        profile.coldStart = 30
        profile.outages = .init(at: [[100, 160]])
        let fixes = Self.run(profile, seed: 1, Self.walk(400))
        for (i, fix) in fixes.enumerated() {
            let dropped = i < 30 || (i >= 100 && i < 160)
            #expect((fix == nil) == dropped, "second \(i)")
        }
        // Drawn outages: the share of time without a fix is lasting / (every + lasting).
        var drawn = DegradeProfile(name: "drawn")
        drawn.outages = .init(every: 120, lasting: 40)
        let long = Self.run(drawn, seed: 5, Self.walk(400_000))
        let share = Double(long.filter { $0 == nil }.count) / Double(long.count)
        #expect(abs(share - 0.25) < 0.03, "share in outages \(share)")
        // A lower rate: one fix every 5 s.
        var slow = DegradeProfile(name: "slow")
        slow.rate = .init(interval: 5)
        let kept = Self.run(slow, seed: 1, Self.walk(100)).compactMap { $0?.truth.time?.timeIntervalSince1970 }
        #expect(kept.count == 20 && zip(kept, kept.dropFirst()).allSatisfy { $1 - $0 == 5 })
    }

    /// A jump: far from the truth while the reported accuracy looks fine; multipath: the reported
    /// accuracy grows, but by less than the error does.
    @Test func jumpsAndMultipathReportOptimisticAccuracies() {
        var jumpy = DegradeProfile(name: "jumps")
        jumpy.noise = .init(sigma: 2, tau: 30)
        jumpy.jumps = .init(every: 300, distance: 150, lasting: 6, reportedAccuracy: 12)
        let jumps = Self.run(jumpy, seed: 9, Self.walk(50_000)).compactMap { $0 }.filter { $0.faults.contains("jump") }
        #expect(jumps.count > 500)
        #expect(jumps.allSatisfy { $0.point.horizontalAccuracy == 12 && $0.horizontalError > 120 })
        var canyon = DegradeProfile(name: "multipath")
        canyon.noise = .init(sigma: 2, tau: 30)
        canyon.multipath = .init(sigma: 6, tau: 15, bias: 30, every: 200, lasting: 60, reportedFraction: 0.4)
        let all = Self.run(canyon, seed: 9, Self.walk(50_000)).compactMap { $0 }
        let inEpisode = all.filter { $0.faults.contains("multipath") }
        #expect(inEpisode.count > 5_000)
        let meanError = inEpisode.map(\.horizontalError).reduce(0, +) / Double(inEpisode.count)
        let meanReported = inEpisode.compactMap(\.point.horizontalAccuracy).reduce(0, +) / Double(inEpisode.count)
        #expect(meanReported < meanError && meanReported > 1.515 * 2, "\(meanReported) against \(meanError)")
    }

    @Test func clockFaultsRepeatStepBackAndComeLate() {
        var profile = DegradeProfile(name: "clock")
        profile.clock = .init(repeats: 0.05, backward: 0.05, late: 0.05, by: 3)
        let fixes = Self.run(profile, seed: 11, Self.walk(20_000)).compactMap { $0 }
        for (fault, share) in [("clockRepeat", 0.05), ("clockBackward", 0.95 * 0.05), ("clockLate", 0.9025 * 0.05)] {
            let n = Double(fixes.filter { $0.faults.contains(fault) }.count)
            #expect(abs(n / 20_000 - share) < 0.01, "\(fault): \(n)")
        }
        var previous: Double?
        for fix in fixes {
            let t = fix.point.time!.timeIntervalSince1970
            let truth = fix.truth.time!.timeIntervalSince1970
            if fix.faults.contains("clockRepeat") { #expect(t == previous) }
            if fix.faults.contains("clockBackward") { #expect(t == (previous ?? truth) - 3) }
            if fix.faults.contains("clockLate") { #expect(t == truth - 3) }
            if fix.faults.isEmpty { #expect(t == truth) }
            previous = t
        }
    }

    /// Drift acts only while standing still; altitude noise has its own σ.
    @Test func driftWhileStillAndAltitudeNoise() {
        var profile = DegradeProfile(name: "still")
        profile.drift = .init(sigma: 8, tau: 100, belowSpeed: 0.5)
        profile.altitude = .init(sigma: 15, tau: 30)
        let still = Self.run(profile, seed: 2, Self.walk(100_000, speed: 0)).compactMap { $0 }
        #expect(still.allSatisfy { $0.faults == ["drift"] || $0.truth.time == still[0].truth.time })
        let m = Self.moments(still.map(\.north), lag: 100)
        #expect(abs(m.variance / 64 - 1) < Self.varianceBound(n: still.count, phi: exp(-1 / 100.0)))
        let up = Self.moments(still.map(\.up), lag: 30)
        #expect(abs(up.variance / 225 - 1) < Self.varianceBound(n: still.count, phi: exp(-1 / 30.0)))
        let moving = Self.run(profile, seed: 2, Self.walk(1_000, speed: 3)).compactMap { $0 }
        #expect(moving.dropFirst().allSatisfy { !$0.faults.contains("drift") && $0.horizontalError == 0 })
    }

    /// The reader writes the truth beside each degraded point, and a GPX export keeps it.
    @Test func aDegradedGPXKeepsTheTruth() throws {
        var gpx =
            #"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"#
        for p in Self.walk(50) {
            gpx += "<trkpt lat=\"\(p.coordinate.latitude)\" lon=\"\(p.coordinate.longitude)\"><ele>500</ele>"
            gpx += "<time>\(ValueFormatting.iso8601(p.time!))</time></trkpt>"
        }
        gpx += "</trkseg></trk></gpx>"
        var profile = DegradeProfile(name: "noise")
        profile.noise = .init(sigma: 3, tau: 30)
        let reader = DegradingReader(
            GPXReader(source: MemoryByteSource(Array(gpx.utf8), pieceSize: 64), name: "walk.gpx"), profile: profile,
            seed: 4)
        var points: [GPXPoint] = []
        try reader.readEvents { event in
            if case .trackPoint(let p) = event { points.append(p) }
        }
        #expect(points.count == 50 && reader.pointsIn == 50 && reader.pointsOut == 50)
        for (point, truth) in zip(points, Self.walk(50)) {
            let element = try #require(point.extensions.elements.first { $0.contains("waymark:truth") })
            let lat = Double(element.components(separatedBy: "lat=\"")[1].prefix { $0 != "\"" }) ?? 0
            #expect(abs(lat - truth.coordinate.latitude) < 1e-9)
            let error = Double(element.components(separatedBy: "error=\"")[1].prefix { $0 != "\"" }) ?? -1
            #expect(abs(error - Geodesic.distance(point.coordinate, truth.coordinate)) < 0.02)
        }
    }
}

/// The profiles: bundled ones and YAML files, their errors, and `render --degrade`.
@Suite struct DegradeProfileTests {
    @Test func everyProfileFileIsBundledAsItIsAndReads() throws {
        let directory = Paths.root.appendingPathComponent("profiles/degrade")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yaml") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(DegradeProfileFile.bundledNames))
        #expect(
            Set(DegradeProfileFile.bundledNames) == [
                "open-sky", "suburb", "urban-canyon", "tunnel-city", "forest", "indoor-edge", "phone-in-pocket",
            ])
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let name = String(file.dropLast(5))
            #expect(DegradeProfileFile.bundled[name].map { $0 + "\n" } == text, "\(file) differs from its bundled copy")
            let profile = try DegradeProfileFile.load(name)
            #expect(profile.name == name)
            #expect(profile == (try DegradeProfileFile.load(directory.appendingPathComponent(file).path)))
        }
        let canyon = try DegradeProfileFile.load("urban-canyon")
        #expect(canyon.multipath?.bias == 30 && canyon.jumps?.distance == 150 && canyon.outages?.every == 600)
    }

    @Test func aBadProfileNamesItsPlace() {
        for (yaml, message) in [
            ("name: x\nnoise: {sigma: 2, tua: 30}\n", "2:19: unknown key 'tua'"),
            ("name: x\nnoise: {sigma: 2}\n", "2:8: 'noise' needs 'tau'"),
            ("name: x\nclock: {repeats: 2}\n", "2:18: 'repeats' is a share"),
            ("name: x\noutages: {at: [[30, 10]]}\n", "2:16: each of 'at' is [from, to]"),
            ("name: x\naltitude: {sigma: -1, tau: 3}\n", "2:19: 'sigma' must be 0 or more"),
            ("name: x\nnoise: [1, 2\n", "not valid YAML"),
        ] {
            #expect {
                _ = try DegradeProfileFile.parse(yaml, path: "bad.yaml")
            } throws: { error in
                "\(error)".contains("bad.yaml:") && "\(error)".contains(message)
            }
        }
        #expect(DegradeProfileFile.parseArgument("urban-canyon:7")! == ("urban-canyon", 7))
        #expect(DegradeProfileFile.parseArgument("my/profile.yaml")! == ("my/profile.yaml", 1))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path), "needs the built waymark"))
    func renderDegradesReproduciblyAndKeepsTheTruth() throws {
        let directory = temporaryPath("-degrade")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func render(_ spec: String, _ name: String) throws -> String {
            let path = directory + "/" + name
            let r = try run(Paths.waymark.path, ["render", HTMLPageTests.walk, "--degrade", spec, "-o", path])
            #expect(r.status == 0, "\(r.stderr)")
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        let a = try render("urban-canyon:7", "a.gpx")
        #expect(a == (try render("urban-canyon:7", "b.gpx")))
        #expect(a != (try render("urban-canyon:8", "c.gpx")))
        #expect(a.contains("<waymark:truth xmlns:waymark=\"urn:waymark:degrade:1\""))
        // The degraded GPX reads back, and each point's error is its distance from its truth.
        let points = try SVGTests.fileEvents(directory + "/a.gpx").compactMap { e -> GPXPoint? in
            if case .trackPoint(let p) = e { return p }
            return nil
        }
        #expect(!points.isEmpty)
        for p in points.prefix(100) {
            let truth = try #require(p.extensions.elements.first { $0.contains("waymark:truth") })
            func value(_ k: String) -> Double {
                Double(truth.components(separatedBy: " \(k)=\"")[1].prefix { $0 != "\"" }) ?? .nan
            }
            let d = Geodesic.distance(p.coordinate, Coordinate(latitude: value("lat"), longitude: value("lon")))
            #expect(abs(d - value("error")) < 0.05, "\(truth)")
        }
        let bad = try run(Paths.waymark.path, ["render", HTMLPageTests.walk, "--degrade", "mars-canyon"])
        #expect(bad.status != 0 && bad.stderr.contains("the bundled ones are forest, indoor-edge"), "\(bad.stderr)")
    }
}

/// Measuring against the truth, and degraded replays.
@Suite struct DegradeEvaluationTests {
    @Test func theTruthIsInterpolatedAndErrorsAreMeasured() throws {
        let walk = DegradeTests.walk(100)
        let evaluation = DegradeEvaluation(truth: walk.shuffled())
        let t0 = walk[0].time!.timeIntervalSince1970
        let mid = try #require(evaluation.truth(at: t0 + 10.5))
        let expected = (walk[10].coordinate.longitude + walk[11].coordinate.longitude) / 2
        #expect(abs(mid.longitude - expected) < 1e-12 && mid.latitude == 48)
        #expect(evaluation.truth(at: t0 - 1) == nil && evaluation.truth(at: t0 + 100) == nil)
        // Positions 10 m north of the truth, one in five 40 m: RMS, 95th percentile and worst.
        var positions: [(time: Double, coordinate: Coordinate)] = []
        for (i, p) in walk.enumerated() {
            let d = i % 5 == 4 ? 40.0 : 10.0
            positions.append((p.time!.timeIntervalSince1970, TraceDegrader.offset(p.coordinate, north: d, east: 0)))
        }
        let r = evaluation.evaluate(positions)
        #expect(r.count == 100 && r.gaps == 0 && r.recoveryMedian == nil)
        #expect(abs(r.rms - ((80 * 100 + 20 * 1600) / 100.0).squareRoot()) < 0.01)
        #expect(abs(r.p95 - 40) < 0.01 && abs(r.worst - 40) < 0.01)
        // A gap of 20 s, after which the first two positions are 30 m off: back after 2 s.
        let gapped = positions.enumerated().filter { !(40..<60).contains($0.offset) }.map { e in
            (60..<62).contains(e.offset)
                ? (e.element.time, TraceDegrader.offset(walk[e.offset].coordinate, north: 30, east: 0)) : e.element
        }
        let g = evaluation.evaluate(gapped, gap: 10, recoveredWithin: 15)
        #expect(g.gaps == 1 && g.recoveryMedian == 2 && g.recoveryWorst == 2)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path), "needs the built waymark"))
    func aDegradedReplayIsReproducibleAndMeasured() throws {
        let directory = temporaryPath("-degraded-replay")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func replay(_ extra: [String], _ name: String) throws -> (summary: String, audit: String) {
            let audit = directory + "/" + name
            let r = try run(
                Paths.waymark.path,
                [
                    "replay", HTMLPageTests.walk, "--rate", "max", "--no-store", "--quiet", "--audit", audit,
                    "--authorization", "always", "--background-modes", "location", "--allows-background-updates",
                    "-o", directory + "/" + name + ".geojson",
                ] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return (r.stderr, try String(contentsOfFile: audit, encoding: .utf8))
        }
        let plain = try replay([], "plain.ndjson")
        let a = try replay(["--degrade", "urban-canyon:3"], "a.ndjson")
        let b = try replay(["--degrade", "urban-canyon:3"], "b.ndjson")
        let c = try replay(["--degrade", "urban-canyon:4"], "c.ndjson")
        #expect(a.audit == b.audit && a.audit != c.audit && a.audit != plain.audit)
        #expect(!plain.summary.contains("degraded by"))
        let line = try #require(
            a.summary.split(separator: "\n").first { $0.contains("degraded by urban-canyon (seed 3)") })
        #expect(line.contains("RMS ") && line.contains("95% ") && line.contains("worst "), "\(line)")
        // Each fix of the degraded run says how far it lay from the truth: the error the GPX
        // export of the same profile and seed keeps with the point of the same index.
        let export = directory + "/bad.gpx"
        #expect(
            try run(Paths.waymark.path, ["render", HTMLPageTests.walk, "--degrade", "urban-canyon:3", "-o", export])
                .status == 0)
        // A fix's index counts every point of the file in document order, waypoints too.
        let exported = try SVGTests.fileEvents(export).compactMap { e -> (error: Double, faults: [String])? in
            switch e {
            case .waypoint, .routePoint: return (.nan, [])
            case .trackPoint(let p):
                let t = DegradingReader.truth(of: p)
                return (t?.error ?? .nan, t?.faults ?? [])
            default: return nil
            }
        }
        var checked = 0
        for line in a.audit.split(separator: "\n") where line.contains("\"event\":\"fix\"") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let index = try #require(object["index"] as? Int)
            let error = try #require(object["truthError"] as? Double, "\(line)")
            #expect(abs(error - exported[index].error) < 0.006, "\(line)")
            #expect((object["faults"] as? String ?? "") == exported[index].faults.joined(separator: " "), "\(line)")
            checked += 1
        }
        #expect(checked > 300)
        #expect(!plain.audit.contains("truthError"))
        // The run's page gives each fix's distance from the truth in its details.
        let page = try SessionReportTests.report(a.audit.split(separator: "\n").map(String.init))
        let errors = (try HTMLPageTests.island(page)["points"] as? [String: [Any]])?["err"]
        #expect((errors?.compactMap { $0 as? Double }.count ?? 0) > 300)
        let plainPage = try SessionReportTests.report(plain.audit.split(separator: "\n").map(String.init))
        #expect((try HTMLPageTests.island(plainPage)["points"] as? [String: Any])?["err"] == nil)
        // The canyon's outages take fixes away.
        func fixes(_ audit: String) -> Int {
            audit.split(separator: "\n").filter { $0.contains("\"event\":\"fix\"") }.count
        }
        #expect(fixes(a.audit) < fixes(plain.audit))
        // Standard input cannot be read twice.
        let stdin = try run(Paths.waymark.path, ["replay", "-", "--degrade", "suburb", "--rate", "max", "--no-store"])
        #expect(stdin.status == 64 && stdin.stderr.contains("not standard input"), "\(stdin.stderr)")
    }
}

/// `replay.degrade` in a scenario file.
@Suite struct DegradeScenarioTests {
    @Test func aScenarioNamesItsDegradationAndABadOneItsPlace() throws {
        let (_, settings) = try ScenarioFile.parse("replay:\n  degrade: suburb:9\n", path: "s.yaml")
        #expect(settings.degrade?.profile.name == "suburb" && settings.degrade?.seed == 9)
        // A profile file beside the scenario.
        let directory = temporaryPath("-scenario-degrade")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "name: mine\nnoise: {sigma: 2, tau: 10}\n".write(
            toFile: directory + "/mine.yaml", atomically: true, encoding: .utf8)
        try "replay:\n  degrade: mine.yaml:3\n".write(
            toFile: directory + "/s.yaml", atomically: true, encoding: .utf8)
        let (_, mine) = try ScenarioFile.load(path: directory + "/s.yaml")
        #expect(mine.degrade?.profile.noise == .init(sigma: 2, tau: 10) && mine.degrade?.seed == 3)
        #expect {
            _ = try ScenarioFile.parse("replay:\n  degrade: mars\n", path: "s.yaml")
        } throws: { error in
            "\(error)".hasPrefix("s.yaml:2:12: 'degrade': ") && "\(error)".contains("the bundled ones are")
        }
    }
}

/// A degraded trace's page shows the truth under it.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path), "needs the built waymark"))
struct DegradedPageTests {
    @Test func aDegradedPageDrawsTheTruthAndEachPointsError() throws {
        let directory = temporaryPath("-degraded-page")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for output in ["bad.gpx", "bad.html"] {
            let r = try run(
                Paths.waymark.path,
                ["render", HTMLPageTests.walk, "--degrade", "forest:5", "-o", directory + "/" + output])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let page = try String(contentsOfFile: directory + "/bad.html", encoding: .utf8)
        #expect(page.contains("<g id=\"truth\"") && page.contains("the dashed line is the truth"))
        let data = try HTMLPageTests.island(page)
        let errors = try #require((data["points"] as? [String: [Any]])?["err"]?.compactMap { $0 as? Double })
        // The errors are those the GPX export of the same profile and seed keeps with each point.
        let exported = try SVGTests.fileEvents(directory + "/bad.gpx").compactMap { e -> Double? in
            guard case .trackPoint(let p) = e, let t = TraceHTMLWriter.truth(of: p) else { return nil }
            return t.error
        }
        #expect(errors.count == exported.count && !errors.isEmpty)
        #expect(zip(errors, exported).allSatisfy { abs($0 - $1) < 0.006 })
        // A plain page has neither.
        let plain = try HTMLPageTests.page(try SVGTests.fileEvents(HTMLPageTests.walk))
        let plainPoints = try HTMLPageTests.island(plain)["points"] as? [String: Any]
        #expect(!plain.contains("<g id=\"truth\"") && plainPoints?["err"] == nil)
    }
}

/// The σ and correlation time of the multipath and satellite models, over long runs.
@Suite struct DegradeModelStatisticsTests {
    /// One episode that lasts the whole run, without noise: the error is the episode's bias plus
    /// a Gauss–Markov process of the stated σ and τ on each axis, and the bias's length is stated.
    @Test func multipathHasItsBiasSigmaAndCorrelationTime() {
        var profile = DegradeProfile(name: "canyon")
        profile.multipath = .init(sigma: 6, tau: 25, bias: 30, every: 1e-6, lasting: 1e12, reportedFraction: 0.4)
        // The episode begins a moment after the first fix.
        let fixes = Array(DegradeTests.run(profile, seed: 17, DegradeTests.walk(300_000)).compactMap { $0 }.dropFirst())
        #expect(fixes.allSatisfy { $0.faults == ["multipath"] })
        let north = fixes.map(\.north)
        let east = fixes.map(\.east)
        let bound = DegradeTests.varianceBound(n: fixes.count, phi: exp(-1 / 25.0))
        var bias = (0.0, 0.0)
        for (axis, xs) in [north, east].enumerated() {
            let m = DegradeTests.moments(xs, lag: 25)
            #expect(abs(m.variance / 36 - 1) < bound, "variance \(m.variance)")
            #expect(abs(m.correlation - exp(-1)) < 2 * bound, "ρ(τ) \(m.correlation)")
            if axis == 0 { bias.0 = m.mean } else { bias.1 = m.mean }
        }
        // The mean is the bias, within four standard errors of a mean of correlated samples.
        let meanError = 4 * 6 * (1 / (Double(fixes.count) * (1 - exp(-1 / 25.0)) / (1 + exp(-1 / 25.0)))).squareRoot()
        #expect(abs((bias.0 * bias.0 + bias.1 * bias.1).squareRoot() - 30) < 2 * meanError, "\(bias)")
    }

    /// Satellites in view: mean and spread as stated (rounded to whole satellites, floored at
    /// the minimum); HDOP grows as the count falls.
    @Test func satellitesHaveTheirMeanAndSpreadAndHDOPFollows() {
        var profile = DegradeProfile(name: "sky")
        profile.noise = .init(sigma: 2, tau: 30)
        profile.satellites = .init(mean: 12, sigma: 2, tau: 60, minimum: 4, hdop: 1.0)
        let fixes = DegradeTests.run(profile, seed: 23, DegradeTests.walk(300_000)).compactMap { $0 }
        let counts = fixes.compactMap { $0.point.satellites.map(Double.init) }
        #expect(counts.count == fixes.count)
        let m = DegradeTests.moments(counts, lag: 60)
        let bound = DegradeTests.varianceBound(n: counts.count, phi: exp(-1 / 60.0))
        // Rounding adds 1/12 to the variance of a continuous value.
        #expect(abs(m.mean - 12) < 0.1, "mean \(m.mean)")
        #expect(abs(m.variance / (4 + 1.0 / 12) - 1) < bound, "variance \(m.variance)")
        for fix in fixes.prefix(5_000) {
            let n = Double(fix.point.satellites!)
            #expect(abs(fix.point.hdop! - (12 / n * 10).rounded() / 10) < 1e-9)
            #expect(abs(fix.point.horizontalAccuracy! - (1.515 * 2 * 12 / n * 10).rounded() / 10) < 0.051)
        }
    }
}

/// Edge cases a review found: untimed traces, the poles, episodes back to back, bad satellites.
@Suite struct DegradeEdgeTests {
    @Test func untimedPointsStayUntimedAndPolesStayOnTheMap() {
        var profile = DegradeProfile(name: "edges")
        profile.clock = .init(repeats: 0.3, backward: 0.3, late: 0.3, by: 2)
        profile.jumps = .init(every: 5, distance: 200, lasting: 3, reportedAccuracy: 10)
        var degrader = TraceDegrader(profile: profile, seed: 1)
        for i in 0..<500 {
            let pole = i % 2 == 0
            let p = GPXPoint(latitude: pole ? 90 : -89.99999, longitude: pole ? 179.9 : -179.9)
            guard let fix = degrader.degrade(p) else { continue }
            #expect(fix.point.time == nil, "an untimed point gained a time")
            #expect((-180...180).contains(fix.point.coordinate.longitude), "\(fix.point.coordinate)")
            #expect((-90...90).contains(fix.point.coordinate.latitude))
        }
    }

    /// Episodes that follow each other between two fixes (a fix every 60 s, episodes of about
    /// 20 s every 20 s) still each draw their own direction.
    @Test func everyJumpDrawsItsOwnDirection() {
        var profile = DegradeProfile(name: "jumps")
        profile.jumps = .init(every: 20, distance: 100, lasting: 20, reportedAccuracy: 10)
        let points = (0..<2000).map { i in
            GPXPoint(latitude: 48, longitude: 11, time: Date(timeIntervalSince1970: 1_719_792_000 + Double(i) * 60))
        }
        let jumps = DegradeTests.run(profile, seed: 4, points).compactMap { $0 }.filter { $0.faults == ["jump"] }
        let directions = Set(jumps.map { Int((atan2($0.east, $0.north) * 1000).rounded()) })
        #expect(jumps.count > 200 && directions.count > jumps.count / 2, "\(directions.count) of \(jumps.count)")
    }

    @Test func badSatelliteNumbersAreRefused() {
        for (yaml, message) in [
            ("satellites: {mean: 8, sigma: 1, tau: 10, minimum: 4, hdop: 0}", "'hdop' above 0"),
            ("satellites: {mean: 8, sigma: 1, tau: 10, minimum: 0, hdop: 1}", "1 ≤ minimum ≤ mean ≤ 200"),
            ("satellites: {mean: 1e19, sigma: 1, tau: 10, minimum: 4, hdop: 1}", "1 ≤ minimum ≤ mean ≤ 200"),
            ("noise: {sigma: 3, tau: 0}", "'tau' above 0"),
        ] {
            #expect {
                _ = try DegradeProfileFile.parse("name: x\n" + yaml + "\n", path: "p.yaml")
            } throws: { error in
                "\(error)".hasPrefix("p.yaml:2:") && "\(error)".contains(message)
            }
        }
    }
}
