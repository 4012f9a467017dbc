import ArgumentParser
import Waymark
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The formats Waymark writes that a file's extension names.
enum NamedFormat: String {
    case text, geojson, ndjson, gpx, svg, html

    /// The format a file's name asks for: `.gpx`, `.geojson` or `.json`, `.ndjson`, `.txt`,
    /// `.svg`, `.html` or `.htm`; nil for another or none.
    static func named(by path: String) -> NamedFormat? {
        let lower = path.lowercased()
        if lower.hasSuffix(".gpx") { return .gpx }
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") || lower.hasSuffix(".geojsons") { return .geojson }
        if lower.hasSuffix(".ndjson") { return .ndjson }
        if lower.hasSuffix(".txt") { return .text }
        if lower.hasSuffix(".svg") { return .svg }
        if lower.hasSuffix(".html") || lower.hasSuffix(".htm") { return .html }
        return nil
    }
}

/// What `-o`'s file name says, for every command that writes one: a name whose extension is
/// one Waymark writes picks that format (unless `--format` says otherwise, which is an error);
/// an extension Waymark does not know, or one of another tool's formats (`.kml`, `.csv`, `.tcx`,
/// `.fit`, …), is refused unless `--format` says what to write there, so `-o x.kml` never quietly
/// gets the text view. A name without an extension is taken as it is.
enum OutputName {
    /// The extension of `path`'s last component, lowercased: "walk.gpx" → "gpx"; nil for
    /// "walk", ".profile" and "-".
    static func fileExtension(_ path: String) -> String? {
        guard path != "-" else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext.lowercased()
    }

    /// Refuses an `-o` whose extension is no format Waymark writes, unless `--format` was given.
    /// `writes` says, for the message, what the command writes.
    static func refuseUnknown(_ output: String?, formatGiven: Bool, writes: String) throws {
        guard let output, let ext = fileExtension(output), NamedFormat.named(by: output) == nil else { return }
        let foreign = ["kml", "kmz", "csv", "tcx", "fit", "gpkg", "shp", "png", "jpg", "jpeg", "pdf", "osm", "xml"]
        if foreign.contains(ext) {
            throw ValidationError("-o \(output): Waymark does not write .\(ext) files; this command writes \(writes)")
        }
        if !formatGiven {
            throw ValidationError(
                "-o \(output): .\(ext) names no format this command writes (\(writes)); name the file so, or give --format"
            )
        }
    }
}

/// How `replay` and `record` write the locations the app received.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, geojson, ndjson, gpx

    /// The run format an output file's name asks for: `.gpx`, `.geojson` or `.json`, `.ndjson`,
    /// `.txt`; nil for another or none (`.svg` is a picture, which only `render` draws).
    static func named(by path: String) -> OutputFormat? {
        NamedFormat.named(by: path).flatMap { OutputFormat(rawValue: $0.rawValue) }
    }

    /// `--format`, else what `-o`'s extension names, else text; a `--format` that contradicts
    /// the extension, or an extension of a format runs do not write (`.svg`), is a usage error.
    /// The output's format: `--format`, else `-o`'s name, else GeoJSON when an option of GeoJSON
    /// output (`--geojson-points`, `--only`, `--no-coordinate-properties`) asks for it, else text.
    static func resolve(_ format: OutputFormat?, output: String?, geojsonAsked: Bool = false) throws -> OutputFormat {
        try OutputName.refuseUnknown(
            output, formatGiven: format != nil,
            writes: "text (.txt), NDJSON (.ndjson), GeoJSON (.geojson, .json, .geojsons) or GPX (.gpx)")
        if let output, output != "-", let kind = NamedFormat.named(by: output), Self(rawValue: kind.rawValue) == nil {
            throw ValidationError(
                kind == .html
                    ? "-o \(output): this command writes text, NDJSON, GeoJSON or GPX; for a page of the run use --report \(output)"
                    : "-o \(output): this command writes text, NDJSON, GeoJSON or GPX, not \(kind.rawValue); render draws SVG"
            )
        }
        let named = output.flatMap { $0 == "-" ? nil : Self.named(by: $0) }
        if let format, let named, format != named {
            throw ValidationError(
                "--format \(format.rawValue) and -o \(output!) disagree: the file's name says \(named.rawValue); change one"
            )
        }
        return format ?? named ?? (geojsonAsked ? .geojson : .text)
    }

    /// The live GPX writer of a run: with `--format gpx`, to `-o` (a file complete after every
    /// point) or standard output; else to `--gpx`, if given.
    static func liveGPX(format: OutputFormat, output: String?, gpx: String?, name: String) throws -> LiveGPXWriter? {
        if format == .gpx {
            if gpx != nil, output != nil, gpx != output {
                throw ValidationError("--format gpx writes to -o; --gpx names a second GPX file: give one")
            }
            let path = output ?? gpx
            guard let path, path != "-" else { return try LiveGPXWriter.standardOutput(name: name) }
            return try LiveGPXWriter(path: path, name: name)
        }
        if gpx == "-" {
            throw ValidationError(
                "--gpx - would mix GPX into the \(format.rawValue) on standard output: use --format gpx, or name a file"
            )
        }
        return try gpx.map { try LiveGPXWriter(path: $0, name: name) }
    }
}

/// The outputs `replay` and `record` share: the session in the store, a live GPX file, the
/// console (UI and log lines), the audit log, and the delivered locations in the chosen format,
/// to standard output or to `-o` (atomically).
///
/// Every event goes first to what records it (the store, then the live GPX file) and only then,
/// if that worked, to what shows it: nothing is shown that is not stored. In batched mode the
/// store commits before any shown line is written out.
final class RunOutputs: SimulationObserver {
    let console: ConsoleReporter
    let session: SessionRecorder?
    let liveGPX: LiveGPXWriter?
    private let format: OutputFormat
    private let output: String?
    private let sink: FileSink
    private let audit: AuditLogWriter?
    private let report: ReportCollector?
    private let ndjson: DeliveredNDJSON?
    /// GeoJSON without a store: the app's locations, written as it stores them.
    private var streamedGeoJSON: GeoJSONOptionsWriter?
    /// `--geojson-points`, `--only`, `--no-coordinate-properties`.
    private let geojson: GeoJSONOptions
    private var streamError: (any Error)?
    /// The first error of the store or the live GPX file; the run should stop.
    private(set) var recordingFailure: (any Error)?
    /// Called once, with the first recording error.
    var onRecordingFailure: ((any Error) -> Void)?

    /// Attaches to `simulation`. `live` writes every line at once (paced replay, live recording)
    /// instead of in large blocks.
    init(
        simulation: Simulation, format: OutputFormat, output: String?, audit: String?, quiet: Bool, live: Bool,
        session: SessionRecorder? = nil, liveGPX: LiveGPXWriter? = nil, geojson: GeoJSONOptions = GeoJSONOptions(),
        report: (path: String, title: String)? = nil
    ) throws {
        self.geojson = geojson
        // `-o -` is standard output; with --format gpx the live GPX writer has -o to itself.
        let output = output == "-" || format == .gpx ? nil : output
        self.format = format
        self.output = output
        self.session = session
        self.liveGPX = liveGPX
        let ui: ConsoleReporter.UIMode = format != .text ? .none : (output == nil ? .standardOutput : .collect)
        console = ConsoleReporter(epoch: simulation.epoch, ui: ui, quiet: quiet, flushEachLine: live)
        self.audit = try audit.map { AuditLogWriter(sink: try FileSink(atomicPath: $0), epoch: simulation.epoch) }
        self.report = try report.map {
            ReportCollector(
                writer: SessionReportWriter(
                    sink: try FileSink(atomicPath: $0.path),
                    options: SessionReportWriter.Options(title: $0.title, sourceName: $0.path)),
                epoch: simulation.epoch)
        }
        sink = format == .gpx ? FileSink.standardOutput() : try openOutput(output)
        if format == .ndjson {
            // To a file, with no store to commit before each block and no pace to keep, the
            // lines are formatted and written on a thread of their own (the file's bytes are the
            // same); on standard output they keep their place among the run's other output.
            let ahead = output != nil && session == nil && !live
            let writer = DeliveredNDJSON(
                ahead ? try LocationNDJSONWriter.writingAhead(to: sink) : LocationNDJSONWriter(sink: sink),
                flushEachLine: live && output == nil)
            ndjson = writer
        } else {
            ndjson = nil
        }
        // The app keeps only what its fetch has yet to sync, so that a long replay or recording
        // runs in bounded memory. GeoJSON is read back from the store at the end, or, without
        // one, written as the app stores each location (the writer spills to a temporary file).
        simulation.tutorialApp?.retainsStoredLocations = false
        if session == nil && format == .geojson {
            // With the defaults, the options' writer is the GeoJSONWriter itself, untouched.
            let writer = GeoJSONOptionsWriter(sink: sink, options: geojson)
            writer.beginDelivered()
            streamedGeoJSON = writer
            simulation.tutorialApp?.onStored = { [unowned self] stored in
                guard streamError == nil else { return }
                do { try writer.addDelivered(stored) } catch { streamError = error }
            }
        }
        // In virtual time the live GPX is published in blocks too, each before the lines that
        // show its points.
        if !live { liveGPX?.publishThreshold = 1 << 20 }
        if session != nil || (liveGPX != nil && !live) {
            let commit: () throws -> Void = { [session, liveGPX] in
                if let session {
                    session.commit()
                    if let failure = session.failure { throw failure }
                }
                try liveGPX?.publishPending()
            }
            console.beforeWrite = commit
            if output == nil { sink.beforeWrite = commit }
            if !live {
                // Every block written waits for the store to commit what it reports, which
                // stalls the run: write few, large blocks, so that the store mostly commits
                // batches while the run goes on.
                console.setBlockSize(1 << 20)
                sink.flushThreshold = 1 << 20
            }
        }
        simulation.addObserver(self)
    }

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard recordingFailure == nil else { return }
        if let session, !session.record(event) {
            fail(session.failure!)
            return
        }
        if let liveGPX, let f = event.deliveredRecord, let location = f.delivered {
            do {
                try liveGPX.append(location, segment: f.segment)
            } catch {
                fail(error)
                return
            }
        }
        // The reporters, in order: the console, the audit log, the report, the delivered
        // lines. Each is called through its constant, not bound to a name or held in an array
        // of observers, so that handing on an event (every fix) counts no reference to them. A
        // quiet console would return at once: it is not called for each fix of a quiet run.
        if !console.ignoresFixes || !event.isFix { console.simulation(simulation, didRecord: event) }
        audit?.simulation(simulation, didRecord: event)
        report?.simulation(simulation, didRecord: event)
        ndjson?.simulation(simulation, didRecord: event)
    }

    /// A fix: when only the delivered lines read fixes (no store, live GPX, audit log or report,
    /// and a console that ignores them), they read the record where it lies; otherwise it is
    /// the `fix` event, for all of them, as ``simulation(_:didRecord:)`` hands every event on.
    func simulation(_ simulation: Simulation, didDecide record: borrowing AuditEvent.FixRecord, at offset: Duration) {
        guard session == nil, liveGPX == nil, audit == nil, report == nil, console.ignoresFixes else {
            self.simulation(simulation, didRecord: AuditEvent(offset: offset, kind: .fix(copy record)))
            return
        }
        guard recordingFailure == nil else { return }
        ndjson?.simulation(simulation, didDecide: record, at: offset)
    }

    private func fail(_ error: any Error) {
        guard recordingFailure == nil else { return }
        recordingFailure = error
        onRecordingFailure?(error)
    }

    /// Closes the session with `outcome` (or `failed`), then finishes the outputs; throws the
    /// recording error first, else the first write error.
    ///
    /// With `noFixReason`, a session to which the source gave no fix is not kept: it is deleted
    /// once the outputs are written, and the summary says so, and why (`noFixReason`).
    func finish(
        simulation: Simulation, featureName: String, summary: String, outcome: SessionOutcome, endedAt: Date,
        discardingWithoutFix noFixReason: String? = nil
    ) throws {
        // The delivered lines' thread, if any, is done before anything touches the sink.
        ndjson?.waitForLines()
        var storeError: (any Error)?
        do {
            try session?.finish(
                outcome: recordingFailure == nil ? outcome : .failed,
                detail: recordingFailure.map { "\($0)" }, duration: simulation.now, endedAt: endedAt)
        } catch {
            storeError = error
        }
        // A commit that failed inside an output's flush is seen here.
        if let failure = session?.failure { fail(failure) }
        // The live GPX publishes what waits before any line that shows it is written.
        do { try liveGPX?.close() } catch { if recordingFailure == nil { fail(error) } }
        if recordingFailure != nil {
            // Lines still buffered may report events of the transaction that failed.
            console.discardPending()
            if output == nil { sink.discardBuffered() }
        }
        console.beforeWrite = nil
        sink.beforeWrite = nil
        var summary = summary
        let fixes = simulation.summary.fixes - simulation.summary.count(FixReason.noFix)
        let discarded = noFixReason != nil && fixes == 0 && recordingFailure == nil && storeError == nil
        if let session {
            if discarded, let noFixReason {
                summary += "No session was kept: \(noFixReason) (--keep-empty keeps a session without fixes)\n"
            } else {
                summary +=
                    "Session \(session.id): \(session.committedLocations) location(s) stored in \(TerminalText.escaped(session.store.path))\n"
            }
        }
        if let liveGPX { summary += "Live GPX: \(liveGPX.count) point(s) in \(TerminalText.escaped(liveGPX.path))\n" }
        try finishOutputs(simulation: simulation, featureName: featureName, summary: summary)
        if let failure = recordingFailure ?? storeError { throw failure }
        if discarded, let session { try session.store.deleteSession(session.id) }
    }

    /// Writes what comes at the end (GeoJSON, collected UI lines), commits the files, and
    /// prints `summary`: on standard output after text, else on standard error. Throws the first
    /// write error of the run.
    private func finishOutputs(simulation: Simulation, featureName: String, summary: String) throws {
        if recordingFailure != nil {
            // The end outputs (-o, --audit, GeoJSON) would report what the store failed to keep:
            // they are not written. The summary still says what happened.
            try? console.finish()
            writeStandardError(summary)
            return
        }
        try ndjson?.finish()
        switch format {
        case .geojson:
            if let session {
                let writer = GeoJSONOptionsWriter(sink: sink, options: geojson)
                let locations = try session.store.locationSequence(of: session.id)
                try writer.writeDelivered(locations, name: featureName)
                if let failure = locations.failure { throw failure }
                try writer.finish()
            } else if let writer = streamedGeoJSON {
                if let streamError { throw streamError }
                try writer.endDelivered(name: featureName)
                try writer.finish()
            }
        case .text:
            if output != nil { sink.write(console.uiText) }
        case .ndjson, .gpx:
            break
        }
        try sink.flush()
        if output != nil { try sink.commit() }
        try audit?.finish()
        try report?.finish()
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
        // A standard update's record is read where it lies; `deliveredRecord` makes one for a
        // service's location.
        switch event.kind {
        case .fix(let f): write(f)
        case .serviceLocation:
            if let f = event.deliveredRecord { write(f) }
        default: return
        }
    }

    /// A fix's record, read where it lies (this runs for every fix).
    func simulation(_ simulation: Simulation, didDecide record: borrowing AuditEvent.FixRecord, at offset: Duration) {
        write(record)
    }

    /// The line of `record`'s delivered location, if it has one; the first error is kept.
    private func write(_ record: borrowing AuditEvent.FixRecord) {
        guard failure == nil, record.delivered != nil else { return }
        do {
            try writer.write(delivered: record)
            if flushEachLine { try writer.finish() }
        } catch {
            failure = error
        }
    }

    func finish() throws {
        if let failure { throw failure }
        try writer.finish()
    }

    /// Waits until the lines written so far are in the sink (``LocationNDJSONWriter/waitForLines()``).
    func waitForLines() { writer.waitForLines() }
}

/// Feeds a run's audit lines to a ``SessionReportWriter`` (`--report`): the page of a run is the
/// page of its audit log.
final class ReportCollector: SimulationObserver {
    private let writer: SessionReportWriter
    private let epoch: Date
    private var failure: (any Error)?

    init(writer: SessionReportWriter, epoch: Date) {
        self.writer = writer
        self.epoch = epoch
    }

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard failure == nil else { return }
        do { try writer.add(line: event.ndjson(epoch: epoch)) } catch { failure = error }
    }

    /// Writes and commits the page; throws the first error.
    func finish() throws {
        if let failure { throw failure }
        try writer.finish()
        try writer.commit()
    }
}

extension AuditEvent {
    /// True for a fix's record (the event of every fix).
    fileprivate var isFix: Bool {
        if case .fix = kind { return true }
        return false
    }
}
