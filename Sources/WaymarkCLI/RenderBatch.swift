import ArgumentParser
import Dispatch
import Synchronization
import Waymark

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `render --output-dir`: many traces, a file each, converted on every core, then a summary. A
/// season of activities is one command. A trace that cannot be read is reported and the others
/// are written (nothing is lost); the exit status is then 65.
struct Batch {
    let render: WaymarkCommand.Render
    let directory: String

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The files to read: each path given, and for a directory every regular file under it at
    /// any depth (hidden ones left out), in name order.
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            guard isDirectory(path) else {
                files.append(path)
                continue
            }
            guard let walker = FileManager.default.enumerator(atPath: path) else {
                throw ValidationError("\(path): cannot list the directory")
            }
            var found: [String] = []
            while let relative = walker.nextObject() as? String {
                let name = relative.split(separator: "/").last.map(String.init) ?? relative
                let full = path.hasSuffix("/") ? path + relative : path + "/" + relative
                if name.hasPrefix(".") {
                    if isDirectory(full) { walker.skipDescendants() }
                    continue
                }
                var info = stat()
                if stat(full, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG { found.append(full) }
            }
            files += found.sorted()
        }
        return files
    }

    /// The file in `directory` for each input: its name with the format's extension instead of
    /// its own; where two inputs would give one name (`a.gpx`, `a.tcx`), both keep their whole
    /// name before the new extension (`a.gpx.geojson`, `a.tcx.geojson`).
    static func outputs(for inputs: [String], in directory: String, extension ext: String) -> [String] {
        func base(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }
        func stem(_ name: String) -> String {
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
            return String(name[..<dot])
        }
        let plain = inputs.map { stem(base($0)) + "." + ext }
        var counts: [String: Int] = [:]
        for name in plain { counts[name, default: 0] += 1 }
        return zip(inputs, plain).map { input, name in
            directory + "/" + (counts[name]! > 1 ? base(input) + "." + ext : name)
        }
    }

    /// What became of one input.
    struct Outcome: Sendable {
        var points = 0
        var error: String?
    }

    func run() throws {
        let inputs = try Self.expand(render.traces)
        guard !inputs.isEmpty else {
            throw ValidationError("no trace files in \(render.traces.joined(separator: ", "))")
        }
        let ext: String =
            switch render.format {
            case .geojson: render.geojson.options(writingTo: nil).sequence ? "geojsons" : "geojson"
            case .gpx: "gpx"
            case .svg: "svg"
            case .html: "html"
            case .text: "txt"
            }
        let outputs = Self.outputs(for: inputs, in: directory, extension: ext)
        try OutputSafety.check(
            outputs: outputs.map { ("--output-dir", $0) }, protected: OutputSafety.inputs(inputs))
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw sysexit(for: OutputError(path: directory, message: "cannot make the directory: \(error)"))
        }
        let outcomes = Mutex<[Outcome?]>([Outcome?](repeating: nil, count: inputs.count))
        let done = Atomic<Int>(0)
        let started = ContinuousClock.now
        let render = self.render
        let uncommitted = UncommittedOutputs()
        defer { uncommitted.finish() }
        // `add` takes its lock (the signal handlers read the same list): safe from every thread.
        nonisolated(unsafe) let registry = uncommitted
        // Every core: each input is read and written on its own, start to finish.
        DispatchQueue.concurrentPerform(iterations: inputs.count) { i in
            var outcome = Outcome()
            do {
                let reader = try render.degraded(
                    try makeReader(inputs[i], options: render.read, keepingExtensions: render.format == .gpx))
                let counted = PointCounter()
                // No reader in the source: the events go through the count (the writers' fast
                // path would read past it).
                let events = EventSource(title: inputs[i]) { handle in
                    try reader.readEventsAhead { event in
                        switch event {
                        case .trackPoint, .routePoint, .waypoint: counted.value += 1
                        default: break
                        }
                        try handle(event)
                    }
                }
                let sink = try FileSink(atomicPath: outputs[i])
                registry.add(sink)
                try render.write(events, isSession: false, to: sink, output: outputs[i])
                try sink.commit()
                reportDropped(reader)
                outcome.points = counted.value
            } catch {
                outcome.error = "\(error)"
            }
            outcomes.withLock { $0[i] = outcome }
            let n = done.add(1, ordering: .relaxed).newValue
            let what = outcome.error == nil ? "\(outcome.points) points" : "failed"
            printError("[\(n)/\(inputs.count)] \(inputs[i]) → \(outputs[i]) (\(what))")
        }
        let seconds = (ContinuousClock.now - started).inSeconds
        let list = outcomes.withLock { $0.map { $0 ?? Outcome(error: "not converted") } }
        let failed = zip(inputs, list).filter { $0.1.error != nil }
        let points = list.reduce(0) { $0 + $1.points }
        printError(
            "render: \(inputs.count - failed.count) of \(inputs.count) trace(s) written to \(directory) (\(render.format.rawValue)), \(points) points in \(ValueFormatting.fixed(seconds, decimals: 1)) s"
        )
        for (input, outcome) in failed {
            printError("  not written: \(input): \(outcome.error ?? "")")
        }
        if !failed.isEmpty { throw ExitCode(ExitStatus.dataError) }
    }
}

/// A count one conversion's thread keeps.
private final class PointCounter {
    var value = 0
}

/// `render --merge`: several traces as one, their track points in one track in time order.
///
/// The track points of every input are held (about 200 bytes each) and sorted by time, stably:
/// a point without a time keeps the time of the point before it in its own input, so it stays
/// where it was. Waypoints and routes come as they are, input by input.
struct MergedTraces {
    let paths: [String]
    let options: ReadOptions

    var events: EventSource {
        get throws {
            let paths = self.paths
            let options = self.options
            return EventSource(title: paths.count == 1 ? paths[0] : "\(paths.count) traces merged") { handle in
                var points: [(time: Double, order: Int, point: GPXPoint)] = []
                var names: [String] = []
                try handle(.header(GPXHeader()))
                for path in paths {
                    let reader = try makeReader(path, options: options)
                    var last = -Double.infinity
                    try reader.readEvents { event in
                        switch event {
                        case .trackPoint(let p):
                            if let t = p.time { last = t.timeIntervalSince1970 }
                            points.append((last, points.count, p))
                        case .trackStart(let info):
                            if let name = info.name, !names.contains(name) { names.append(name) }
                        case .header, .metadata, .trackEnd, .segmentStart, .segmentEnd, .documentExtensions: break
                        default: try handle(event)
                        }
                    }
                    reportDropped(reader)
                }
                points.sort { ($0.time, $0.order) < ($1.time, $1.order) }
                let info = GPXPathInfo(name: names.isEmpty ? "merged" : names.joined(separator: " + "))
                try handle(.trackStart(info))
                if !points.isEmpty {
                    try handle(.segmentStart)
                    for entry in points { try handle(.trackPoint(entry.point)) }
                    try handle(.segmentEnd(GPXExtensions()))
                }
                try handle(.trackEnd(info))
            }
        }
    }
}
