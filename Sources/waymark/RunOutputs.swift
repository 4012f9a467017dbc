import ArgumentParser
import Waymark

/// How `replay` and `record` write the locations the app received.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, geojson, ndjson
}

/// The outputs `replay` and `record` share: the console (UI and log lines), the audit log, and
/// the delivered locations in the chosen format, to standard output or to `-o` (atomically).
final class RunOutputs {
    let console: ConsoleReporter
    private let format: OutputFormat
    private let output: String?
    private let sink: FileSink
    private let audit: AuditLogWriter?
    private let ndjson: DeliveredNDJSON?

    /// Attaches the observers to `simulation`. `live` writes every line at once (paced replay,
    /// live recording) instead of in large blocks.
    init(simulation: Simulation, format: OutputFormat, output: String?, audit: String?, quiet: Bool, live: Bool)
        throws
    {
        self.format = format
        self.output = output
        let ui: ConsoleReporter.UIMode = format != .text ? .none : (output == nil ? .standardOutput : .collect)
        console = ConsoleReporter(epoch: simulation.epoch, ui: ui, quiet: quiet, flushEachLine: live)
        simulation.addObserver(console)
        self.audit = try audit.map { AuditLogWriter(sink: try FileSink(atomicPath: $0), epoch: simulation.epoch) }
        if let writer = self.audit { simulation.addObserver(writer) }
        sink = try output.map { try FileSink(atomicPath: $0) } ?? FileSink.standardOutput()
        if format == .ndjson {
            let writer = DeliveredNDJSON(LocationNDJSONWriter(sink: sink), flushEachLine: live && output == nil)
            simulation.addObserver(writer)
            ndjson = writer
        } else {
            ndjson = nil
        }
    }

    /// Writes what comes at the end (GeoJSON, collected UI lines), commits the files, and
    /// prints `summary`: on standard output after text, else on standard error. Throws the first
    /// write error of the run.
    func finish(simulation: Simulation, featureName: String, summary: String) throws {
        try ndjson?.finish()
        switch format {
        case .geojson:
            let writer = GeoJSONWriter(sink: sink)
            try writer.writeDelivered(simulation.stored, name: featureName)
            try writer.finish()
        case .text:
            if output != nil { sink.write(console.uiText) }
        case .ndjson:
            break
        }
        try sink.flush()
        if output != nil { try sink.commit() }
        try audit?.finish()
        try console.finish()
        if format == .text && output == nil {
            let out = FileSink.standardOutput()
            out.write(summary)
            try out.flush()
        } else {
            writeStandardError(summary)
        }
    }
}

/// Streams delivered locations as NDJSON while the run goes.
final class DeliveredNDJSON: SimulationObserver {
    private let writer: LocationNDJSONWriter
    private let flushEachLine: Bool
    private(set) var failure: (any Error)?

    /// `flushEachLine` writes every line at once (for live recording to a pipe).
    init(_ writer: LocationNDJSONWriter, flushEachLine: Bool = false) {
        self.writer = writer
        self.flushEachLine = flushEachLine
    }

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard failure == nil, case .fix(let f) = event.kind, let location = f.delivered else { return }
        do {
            try writer.write(
                StoredLocation(
                    location: location, appState: f.appState, reason: f.reason, index: f.index, segment: f.segment,
                    offset: event.offset))
            if flushEachLine { try writer.finish() }
        } catch {
            failure = error
        }
    }

    func finish() throws {
        if let failure { throw failure }
        try writer.finish()
    }
}
