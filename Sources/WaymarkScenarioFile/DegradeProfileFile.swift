import Waymark
import Yams

/// Degradation profiles as YAML files (`profiles/degrade/*.yaml`): the bundled ones by name, any
/// other by path. Errors name the file, line and column, as a scenario file's do: an unknown key
/// (a typo) is an error, never ignored.
public enum DegradeProfileFile {
    /// `NAME` or `PATH`, with an optional `:SEED` (a whole number; 1 when left out).
    public static func parseArgument(_ text: String) -> (profile: String, seed: UInt64)? {
        if let colon = text.lastIndex(of: ":"), let seed = UInt64(text[text.index(after: colon)...]) {
            let name = String(text[..<colon])
            return name.isEmpty ? nil : (name, seed)
        }
        return text.isEmpty ? nil : (text, 1)
    }

    /// The bundled profile named `name`, or the file at `name`.
    public static func load(_ name: String) throws -> DegradeProfile {
        if let text = bundled[name] { return try parse(text, path: "\(name) (bundled)") }
        guard name.contains("/") || name.hasSuffix(".yaml") || name.hasSuffix(".yml") else {
            throw ScenarioFileError(
                path: name,
                message:
                    "no such degradation profile; the bundled ones are \(bundledNames.joined(separator: ", ")), or give a YAML file's path"
            )
        }
        return try parse(try ScenarioFile.readText(path: name), path: name)
    }

    public static var bundledNames: [String] { bundled.keys.sorted() }

    static let sections: [String: [String]] = [
        "noise": ["sigma", "tau"],
        "multipath": ["sigma", "tau", "bias", "every", "lasting", "reportedFraction"],
        "outages": ["at", "every", "lasting"],
        "jumps": ["every", "distance", "lasting", "reportedAccuracy"],
        "drift": ["sigma", "tau", "belowSpeed"],
        "satellites": ["mean", "sigma", "tau", "minimum", "hdop"],
        "altitude": ["sigma", "tau"],
        "clock": ["repeats", "backward", "late", "by"],
        "rate": ["interval", "burstEvery", "burstLasting"],
    ]
    /// Keys a section must have.
    static let required: [String: [String]] = [
        "noise": ["sigma", "tau"], "multipath": ["sigma", "tau", "bias", "every", "lasting", "reportedFraction"],
        "jumps": ["every", "distance", "lasting", "reportedAccuracy"], "drift": ["sigma", "tau", "belowSpeed"],
        "satellites": ["mean", "sigma", "tau", "minimum", "hdop"], "altitude": ["sigma", "tau"], "rate": ["interval"],
    ]

    public static func parse(_ text: String, path: String) throws -> DegradeProfile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let e as YamlError {
            throw ScenarioFile.syntaxError(e, path: path)
        }
        let r = NodeReader(path: path)
        guard let root else { throw ScenarioFileError(path: path, message: "the file is empty") }
        var profile = DegradeProfile(name: "")
        let top = ["name", "description", "coldStart"] + sections.keys.sorted()
        for (key, value) in try r.mapping(root, in: "a degradation profile", keys: top) {
            switch key {
            case "name": profile.name = try r.string(value, key: key)
            case "description": profile.description = try r.string(value, key: key)
            case "coldStart": profile.coldStart = try Self.amount(value, key: key, r)
            default:
                var numbers: [String: Double] = [:]
                var intervals: [[Double]]?
                for (field, v) in try r.mapping(value, in: "'\(key)'", keys: sections[key] ?? []) {
                    if key == "outages" && field == "at" {
                        intervals = try r.list(v, key: "at").map { pair in
                            let list = try r.list(pair, key: "at").map { try Self.amount($0, key: "at", r) }
                            guard list.count == 2, list[0] < list[1] else {
                                throw r.error(pair, "each of 'at' is [from, to] in seconds, from before to")
                            }
                            return list
                        }
                    } else {
                        numbers[field] = try Self.amount(v, key: field, r)
                        if ["reportedFraction", "repeats", "backward", "late"].contains(field), numbers[field]! > 1 {
                            throw r.error(v, "'\(field)' is a share, from 0 to 1")
                        }
                    }
                }
                for field in required[key] ?? [] where numbers[field] == nil {
                    throw r.error(
                        value, "'\(key)' needs '\(field)' (it has \(numbers.keys.sorted().joined(separator: ", ")))")
                }
                func n(_ f: String) -> Double { numbers[f] ?? 0 }
                if key == "satellites" {
                    guard n("hdop") > 0 else { throw r.error(value, "'satellites' needs an 'hdop' above 0") }
                    guard n("minimum") >= 1, n("minimum") <= n("mean"), n("mean") <= 200 else {
                        throw r.error(value, "'satellites' needs 1 ≤ minimum ≤ mean ≤ 200")
                    }
                }
                for field in ["tau", "every", "lasting", "interval"] where numbers[field] == 0 {
                    throw r.error(value, "'\(key)' needs '\(field)' above 0")
                }
                switch key {
                case "noise": profile.noise = .init(sigma: n("sigma"), tau: n("tau"))
                case "multipath":
                    profile.multipath = .init(
                        sigma: n("sigma"), tau: n("tau"), bias: n("bias"), every: n("every"), lasting: n("lasting"),
                        reportedFraction: n("reportedFraction"))
                case "outages":
                    profile.outages = .init(at: intervals, every: numbers["every"], lasting: numbers["lasting"])
                case "jumps":
                    profile.jumps = .init(
                        every: n("every"), distance: n("distance"), lasting: n("lasting"),
                        reportedAccuracy: n("reportedAccuracy"))
                case "drift": profile.drift = .init(sigma: n("sigma"), tau: n("tau"), belowSpeed: n("belowSpeed"))
                case "satellites":
                    profile.satellites = .init(
                        mean: n("mean"), sigma: n("sigma"), tau: n("tau"), minimum: Int(n("minimum")), hdop: n("hdop"))
                case "altitude": profile.altitude = .init(sigma: n("sigma"), tau: n("tau"))
                case "clock":
                    profile.clock = .init(
                        repeats: numbers["repeats"], backward: numbers["backward"], late: numbers["late"],
                        by: numbers["by"])
                case "rate":
                    profile.rate = .init(
                        interval: n("interval"), burstEvery: numbers["burstEvery"],
                        burstLasting: numbers["burstLasting"])
                default: break
                }
            }
        }
        if profile.name.isEmpty { profile.name = path }
        return profile
    }

    /// A number of metres, seconds or a share: finite and not negative.
    static func amount(_ node: Node, key: String, _ r: NodeReader) throws -> Double {
        let d = try r.number(node, key: key)
        guard d >= 0 else { throw r.error(node, "'\(key)' must be 0 or more") }
        return d
    }
}
