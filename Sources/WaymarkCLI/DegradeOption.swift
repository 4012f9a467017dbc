import ArgumentParser
import Waymark
import WaymarkScenarioFile

/// `--degrade PROFILE[:SEED]`, for render, replay and serve.
struct DegradeOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Make the trace bad on purpose, reproducibly: a bundled profile (open-sky, suburb, urban-canyon, tunnel-city, forest, indoor-edge, phone-in-pocket) or a profile's YAML file, with an optional seed (urban-canyon:7; default 1). docs/degrade.md describes the models.",
            valueName: "profile[:seed]"))
    var degrade: String?

    func validate() throws {
        if let degrade, DegradeProfileFile.parseArgument(degrade) == nil {
            throw ValidationError("--degrade \(degrade): give a profile, and a seed after a colon (urban-canyon:7)")
        }
    }

    /// The profile and the seed, read (a file's errors name its line and column); nil without
    /// `--degrade`.
    func load() throws -> (profile: DegradeProfile, seed: UInt64)? {
        guard let degrade, let (name, seed) = DegradeProfileFile.parseArgument(degrade) else { return nil }
        return (try DegradeProfileFile.load(name), seed)
    }
}

/// Collects the locations a degraded replay delivered, to measure them against the truth.
final class DeliveredPositions: SimulationObserver {
    private(set) var positions: [(time: Double, coordinate: Coordinate)] = []

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard let location = event.deliveredRecord?.delivered else { return }
        positions.append((location.timestamp.timeIntervalSince1970, location.coordinate))
    }

    /// The summary's lines on how far what the app received lay from the truth of `trace`.
    func report(against trace: String, profile: DegradeProfile, seed: UInt64, read: ReadOptions) throws -> String {
        let reader = try makeReader(trace, options: read, keepingExtensions: false)
        var truth: [GPXPoint] = []
        try reader.readEvents { event in
            if case .trackPoint(let p) = event { truth.append(p) }
        }
        let r = DegradeEvaluation(truth: truth).evaluate(positions.sorted { $0.time < $1.time })
        var text = "  degraded by \(profile.name) (seed \(seed)); what the app received against the truth: "
        guard r.count > 0 else { return text + "no delivered location had a truth at its time\n" }
        func m(_ v: Double) -> String { ValueFormatting.fixed(v, decimals: 1) + " m" }
        text += "\(r.count) location(s), RMS \(m(r.rms)), 95% \(m(r.p95)), worst \(m(r.worst))"
        if r.gaps > 0, let median = r.recoveryMedian, let worst = r.recoveryWorst {
            text +=
                "; \(r.gaps) gap(s) over 10 s, back within 15 m after \(Int(median)) s (median), \(Int(worst)) s (worst)"
        }
        return text + "\n"
    }
}
