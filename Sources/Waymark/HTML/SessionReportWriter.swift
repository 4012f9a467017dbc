#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A run of the simulated app as one self-contained HTML page, from its audit log: the path the
/// source gave, each fix coloured by what happened to it, a timeline strip of the app's state,
/// authorization, accuracy, updates, background work, prompts, wakes and source outages, and the
/// summary. Clicking a point of the path or a moment of the timeline lists the audit events of
/// that moment; `#point=N` and `#time=2024-05-01T08:05:00Z` in the page's address do the same.
///
/// It reads the audit log's lines (`docs/audit-log.md`), as `replay --audit` writes them and as
/// the store keeps them, so a report of a replay and of a stored session are the same page.
///
/// What happened to a fix, its category:
/// - delivered in the foreground: delivered while the app was active or inactive;
/// - delivered in the background: delivered while it was in the background (a session, a
///   background task, a fetch, a wake, audio…);
/// - held, delivered later: held at arrival (a suspended app), and delivered when the app
///   resumed (a second `fix` record with reason `resumed`);
/// - held, never delivered: held and then discarded (`heldDiscarded`) or still held at the end;
/// - dropped, with the reason (`notDetermined`, `paused`, `distanceFilter`, …);
/// - ignored: updates were not running.
///
/// Memory and the page are bounded: at most ``TraceHTMLWriter/maxSamples`` fixes are kept for
/// drawing (every fix, then every second, …, evenly), at most ``maxEvents`` other events are kept
/// for the event list, and clicks find their fix among at most
/// ``TraceHTMLWriter/maxHoverPoints``. The counts in the summary are of every line.
public final class SessionReportWriter {
    public struct Options: Sendable {
        /// The page's title: the session, or the trace and scenario replayed.
        public var title: String
        /// Where the lines come from, for errors (`run.ndjson`, `session 3`).
        public var sourceName: String

        public init(title: String, sourceName: String = "audit log") {
            self.title = title
            self.sourceName = sourceName
        }
    }

    /// An audit line that cannot be read.
    public struct ReportError: Error, CustomStringConvertible, Sendable {
        public var source: String
        public var line: Int
        public var message: String
        public var description: String { "\(source):\(line): \(message)" }
    }

    public static let maxEvents = 20_000

    enum Category: Int, CaseIterable {
        case deliveredForeground, deliveredBackground, heldDeliveredLater, heldNeverDelivered, dropped, ignored

        var name: String {
            switch self {
            case .deliveredForeground: "delivered in the foreground"
            case .deliveredBackground: "delivered in the background"
            case .heldDeliveredLater: "held, delivered later"
            case .heldNeverDelivered: "held, never delivered"
            case .dropped: "dropped"
            case .ignored: "ignored (not updating)"
            }
        }

        /// Drawn as a tick across the source's path rather than as a stretch of it: a fix the
        /// app was not given although it was updating.
        var isTick: Bool { self == .dropped }

        var colour: String {
            switch self {
            case .deliveredForeground: "#1a7f37"
            case .deliveredBackground: "#1f6feb"
            case .heldDeliveredLater: "#d4a72c"
            case .heldNeverDelivered: "#8250df"
            case .dropped: "#cf222e"
            case .ignored: "#8c959f"
            }
        }
    }

    /// A value of an audit line.
    enum Value: Decodable, Hashable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
        case other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let d = try? c.decode(Double.self) {
                self = .number(d)
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else {
                self = .other
            }
        }

        var text: String? {
            switch self {
            case .string(let s): s
            case .number(let d): ValueFormatting.fixed(d, decimals: 6)
            case .bool(let b): b ? "true" : "false"
            case .null, .other: nil
            }
        }

        var number: Double? {
            if case .number(let d) = self { return d }
            return nil
        }

        /// The number when it is a whole number an `Int` holds (a stored log may hold anything).
        var integer: Int? { number.flatMap { Int(exactly: $0) } }
    }

    /// One row of the timeline: labelled spans and marks.
    struct Row {
        var title: String
        var spans: [(t0: Double, t1: Double, label: String)] = []
        var marks: [(t: Double, label: String)] = []
        /// The open span's start and label.
        var open: (t: Double, label: String)?

        /// Marks and spans beyond ``SessionReportWriter/maxEvents`` each are counted, not kept.
        var leftOut = 0

        mutating func change(to label: String?, at t: Double) {
            if let open, open.label == label { return }
            if let open { addSpan(open.t, t, open.label) }
            open = label.map { (t, $0) }
        }

        mutating func close(at t: Double) {
            if let open { addSpan(open.t, t, open.label) }
            open = nil
        }

        mutating func addSpan(_ t0: Double, _ t1: Double, _ label: String) {
            if spans.count < SessionReportWriter.maxEvents { spans.append((t0, t1, label)) } else { leftOut += 1 }
        }

        mutating func addMark(_ t: Double, _ label: String) {
            if marks.count < SessionReportWriter.maxEvents { marks.append((t, label)) } else { leftOut += 1 }
        }
    }

    private let sink: FileSink
    private let options: Options
    private let decoder = JSONDecoder()
    private var lineNumber = 0
    private var first: Double?
    private var last: Double?
    private var started: [String: Value] = [:]
    private var finished: [String: Value]?
    /// A fix kept for drawing.
    struct KeptFix {
        var t: Double
        var latitude: Double
        var longitude: Double
        var category: Int
        /// Its reason, as an index into ``reasons``.
        var why: Int
        var index: Int
        var segment: Int
        /// Its line's number in the log.
        var order: Int
        var line: String
        /// Metres from the truth, for a fix degraded on purpose (`truthError`); NaN otherwise.
        var truthError: Double = .nan
    }

    private var kept = EvenSample<KeptFix>(capacity: TraceHTMLWriter.maxSamples)
    // The fixes kept, as columns: filled by `finish()` for drawing.
    private var fixT: [Double] = []
    private var fixLat: [Double] = []
    private var fixLon: [Double] = []
    private var fixCategory: [Int] = []
    private var fixReason: [Int] = []
    private var fixIndex: [Int] = []
    private var fixSegment: [Int] = []
    private var fixOrder: [Int] = []
    private var fixLine: [String] = []
    private var fixCount = 0
    /// Every fix's category, counted, and per category its reasons.
    private var categoryCounts = [Int](repeating: 0, count: Category.allCases.count)
    private var reasonCounts: [String: Int] = [:]
    private var reasons: [String] = []
    private var reasonIndex: [String: Int] = [:]
    /// Fixes held at arrival, by index, and those of them delivered later.
    private var held: Set<Int> = []
    private var resumed: Set<Int> = []
    /// Lines besides fixes, with their place in the log (events of one time keep its order).
    private var events: [(t: Double, order: Int, line: String)] = []
    private var eventsLeftOut = 0
    private var rows: [String: Row] = [:]
    private static let rowOrder = [
        "app state", "authorization", "accuracy", "updates", "background work", "sessions", "prompts", "wakes",
        "source",
    ]
    private var openTasks: [String: Double] = [:]
    private var openSessions: [String: Double] = [:]

    public init(sink: FileSink, options: Options) {
        self.sink = sink
        self.options = options
        for title in Self.rowOrder { rows[title] = Row(title: title) }
    }

    /// Reads one line of the audit log (its newline optional; blank lines are skipped).
    public func add(line rawLine: String) throws {
        lineNumber += 1
        let line = rawLine.hasSuffix("\n") ? String(rawLine.dropLast()) : rawLine
        guard !line.allSatisfy(\.isWhitespace) else { return }
        let object: [String: Value]
        do {
            object = try FlatJSON.object(line) ?? decoder.decode([String: Value].self, from: Data(line.utf8))
        } catch {
            throw ReportError(source: options.sourceName, line: lineNumber, message: "not a JSON object: \(error)")
        }
        guard let timeText = object["time"]?.text, let t = Self.seconds(timeText) else {
            throw ReportError(
                source: options.sourceName, line: lineNumber, message: "an audit event needs a UTC \"time\"")
        }
        guard let event = object["event"]?.text else {
            throw ReportError(
                source: options.sourceName, line: lineNumber, message: "an audit event needs an \"event\"")
        }
        first = min(first ?? t, t)
        last = max(last ?? t, t)
        let start = first!
        func field(_ key: String) -> String? { object[key]?.text }
        if event == "fix" {
            takeFix(object, t: t, line: line)
            return
        }
        // A logger's recording lists the source's events, not the simulated app's under it.
        if !isLogger || Self.loggerEvents.contains(event) { list(t, line) }
        switch event {
        case "started": started = object
        case "finished": finished = object
        case "managerCreated":
            if let a = field("authorization") { rows["authorization"]!.change(to: a, at: t) }
        case "stateChanged":
            if rows["app state"]!.open == nil, let from = field("from") {
                rows["app state"]!.change(to: from, at: start)
            }
            rows["app state"]!.change(to: field("to"), at: t)
            if field("to") == "notRunning" { appEnded(at: t) }
        case "authorizationChanged":
            if rows["authorization"]!.open == nil, let from = field("from") {
                rows["authorization"]!.change(to: from, at: start)
            }
            rows["authorization"]!.change(to: field("to"), at: t)
        case "accuracyChanged":
            if rows["accuracy"]!.open == nil, let from = field("from") {
                rows["accuracy"]!.change(to: from, at: start)
            }
            rows["accuracy"]!.change(to: field("to"), at: t)
        case "updates":
            rows["updates"]!.change(to: field("action") == "started" ? "updating" : nil, at: t)
        case "paused":
            rows["updates"]!.change(to: "paused", at: t)
        case "resumed":
            rows["updates"]!.change(to: "updating", at: t)
        case "backgroundTask", "fetch", "scheduledTask", "transfer", "audio":
            let id = event + ":" + (field("task") ?? field("identifier") ?? "")
            let action = field("action") ?? ""
            if action == "began" || action == "started" {
                openTasks[id] = t
            } else if ["ended", "completed", "expired", "expiring", "stopped", "failed"].contains(action),
                let t0 = openTasks.removeValue(forKey: id)
            {
                rows["background work"]!.addSpan(t0, t, event)
            } else if openTasks[id] == nil {
                rows["background work"]!.addMark(t, "\(event) \(action)")
            }
        case "session":
            let kind = field("kind") ?? "session"
            switch field("action") {
            case "started": openSessions[kind] = openSessions[kind] ?? t
            case "invalidated":
                if let t0 = openSessions.removeValue(forKey: kind) { rows["sessions"]!.addSpan(t0, t, kind) }
            default: rows["sessions"]!.addMark(t, "\(kind) \(field("action") ?? "") \(field("reason") ?? "")")
            }
        case "prompt", "authorizationRequest":
            let what = field("prompt") ?? field("request") ?? event
            rows["prompts"]!.addMark(t, what + (field("phase").map { " \($0)" } ?? ""))
        case "serviceLocation", "region", "visit", "push", "monitor", "liveUpdate":
            rows["wakes"]!.addMark(t, event + " " + (field("action") ?? ""))
        case "source":
            switch field("action") {
            case "outage", "unreachable", "stale": rows["source"]!.change(to: field("action"), at: t)
            case "connected", "receiving": rows["source"]!.change(to: nil, at: t)
            default: rows["source"]!.addMark(t, field("action") ?? "source")
            }
        case "terminated":
            rows["app state"]!.change(to: "notRunning", at: t)
            appEnded(at: t)
        case "heldDiscarded":
            break
        default:
            break
        }
    }

    /// Whether the log is a logger's recording (`started`'s `logger`, issue 28): its page shows
    /// the source's fixes, gaps and outages, without the simulated app's rows.
    private var isLogger: Bool { started["logger"] == .bool(true) }

    /// The events a logger's page lists.
    private static let loggerEvents: Set<String> = ["started", "source", "finished"]

    /// Lists a line for clicks, up to ``maxEvents``.
    private func list(_ t: Double, _ line: String) {
        if events.count < Self.maxEvents {
            events.append((t, lineNumber, line))
        } else {
            eventsLeftOut += 1
        }
    }

    /// The app is no longer running: what it had under way ends with it, and its held fixes can
    /// no longer be delivered.
    private func appEnded(at t: Double) {
        for (id, t0) in openTasks.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            rows["background work"]!.addSpan(t0, t, String(id.prefix { $0 != ":" }))
        }
        openTasks.removeAll()
        for (kind, t0) in openSessions.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            rows["sessions"]!.addSpan(t0, t, kind)
        }
        openSessions.removeAll()
        rows["updates"]!.change(to: nil, at: t)
        held.removeAll()
    }

    private func takeFix(_ object: [String: Value], t: Double, line: String) {
        let decision = object["decision"]?.text ?? ""
        let reason = object["reason"]?.text ?? ""
        let index = object["index"]?.integer ?? -1
        // A held fix delivered later (when the app resumes, or when Always is granted): its
        // second record.
        if decision == "delivered" && held.contains(index) {
            held.remove(index)
            resumed.insert(index)
            categoryCounts[Category.heldDeliveredLater.rawValue] += 1
            categoryCounts[Category.heldNeverDelivered.rawValue] -= 1
            list(t, line)
            return
        }
        if rows["accuracy"]!.open == nil, let accuracy = object["accuracy"]?.text {
            rows["accuracy"]!.change(to: accuracy == "reduced" ? "reducedAccuracy" : "fullAccuracy", at: first ?? t)
        }
        let category: Category
        switch decision {
        case "delivered":
            let state = object["appState"]?.text ?? ""
            category = state == "active" || state == "inactive" ? .deliveredForeground : .deliveredBackground
        case "held":
            category = .heldNeverDelivered
            held.insert(index)
        case "dropped": category = .dropped
        default: category = .ignored
        }
        fixCount += 1
        categoryCounts[category.rawValue] += 1
        let key = category.name + "\u{1}" + reason
        reasonCounts[key, default: 0] += 1
        let why: Int
        if let known = reasonIndex[reason] {
            why = known
        } else {
            why = reasons.count
            reasonIndex[reason] = why
            reasons.append(reason)
        }
        kept.append(
            KeptFix(
                t: t, latitude: object["latitude"]?.number ?? .nan, longitude: object["longitude"]?.number ?? .nan,
                category: category.rawValue, why: why, index: index, segment: object["segment"]?.integer ?? 0,
                order: lineNumber, line: line, truthError: object["truthError"]?.number ?? .nan))
    }

    /// Seconds since 1970 of an audit time (`2024-05-01T08:00:05.000Z`).
    static func seconds(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { buffer -> Double? in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            guard case .success(let t) = ValueParsing.dateTime(ByteSpan(start: base, count: buffer.count)),
                t.hadZone
            else { return nil }
            return t.date.timeIntervalSince1970
        }
    }

    // MARK: - Drawing

    /// Writes the page and flushes.
    public func finish() throws {
        let out = sink.buffer
        kept.keepLast()
        let fixes = kept.elements
        fixT = fixes.map(\.t)
        fixLat = fixes.map(\.latitude)
        fixLon = fixes.map(\.longitude)
        fixCategory = fixes.map(\.category)
        fixReason = fixes.map(\.why)
        fixIndex = fixes.map(\.index)
        fixSegment = fixes.map(\.segment)
        fixOrder = fixes.map(\.order)
        fixLine = fixes.map(\.line)
        let fixError = fixes.map(\.truthError)
        let stride = kept.stride
        let t0 = first ?? 0
        let t1 = max(last ?? 0, t0 + 1)
        appEnded(at: t1)
        for title in Self.rowOrder {
            rows[title]!.close(at: t1)
            rows[title]!.spans.sort { ($0.t0, $0.label, $0.t1) < ($1.t0, $1.label, $1.t1) }
            rows[title]!.marks.sort { ($0.t, $0.label) < ($1.t, $1.label) }
        }
        // Categories once the held fixes delivered later are known.
        for i in fixCategory.indices
        where fixCategory[i] == Category.heldNeverDelivered.rawValue && resumed.contains(fixIndex[i]) {
            fixCategory[i] = Category.heldDeliveredLater.rawValue
        }

        var subtitle = "\(fixCount) fix(es)"
        if first != nil {
            subtitle +=
                ", \(ValueFormatting.iso8601(Date(timeIntervalSince1970: t0))) → \(ValueFormatting.iso8601(Date(timeIntervalSince1970: last ?? t0))) (\(TextRenderer.duration((last ?? t0) - t0)))"
        }
        if isLogger {
            subtitle += "; a logger's recording"
        } else if let ios = started["ios"]?.text {
            subtitle += "; the rules of iOS \(ios)"
        }
        HTMLPage.begin(title: options.title, subtitle: subtitle, to: out)

        // The map: the source's path, wide and pale, the fixes over it by category.
        out.append("<section id=\"map\">\n")
        HTMLPage.appendMapControls(to: out)
        out.append("<div class=\"map\">\n")
        let map = SVGWriter(
            sink: sink,
            options: SVGWriter.Options(
                title: "Fixes by what happened to them", embedded: true, trackColour: Self.sourcePathColour,
                trackLabel: "the source's path", colourPerTrack: false, trackWidth: 9))
        try map.write(.trackStart(GPXPathInfo()))
        var segment: Int?
        for i in fixT.indices where fixLat[i].isFinite && fixLon[i].isFinite {
            if segment != fixSegment[i] {
                if segment != nil { try map.write(.segmentStart) }
                segment = fixSegment[i]
            }
            try map.write(.trackPoint(GPXPoint(latitude: fixLat[i], longitude: fixLon[i])))
        }
        try map.finish()
        let drawn = fixT.indices.filter { fixLat[$0].isFinite && fixLon[$0].isFinite }
        var px: [Double] = []
        var py: [Double] = []
        if let mapping = map.mapping {
            let pixels = mapping.pixels(
                latitudes: drawn.map { fixLat[$0] }, longitudes: drawn.map { fixLon[$0] },
                segments: drawn.map { fixSegment[$0] })
            HTMLPage.beginOverlay(hidden: false, to: out)
            try writeFixLayer(pixels: pixels, indices: drawn, to: out)
            out.append(
                "<circle id=\"marker\" cx=\"0\" cy=\"0\" r=\"8\" fill=\"none\" stroke=\"#24292f\" stroke-width=\"3\" visibility=\"hidden\"/>\n"
            )
            HTMLPage.endOverlay(to: out)
            px = pixels.map(\.x)
            py = pixels.map(\.y)
        }
        out.append("</div>\n<ul class=\"legend\">\n")
        out.append(
            "<li><span class=\"swatch\" style=\"background:\(Self.sourcePathColour)\"></span>the source's path</li>\n")
        for c in Category.allCases where categoryCounts[c.rawValue] > 0 {
            // A dropped fix is a tick across the path, not a stretch of it.
            let swatch = c.isTick ? "swatch tick" : "swatch"
            out.append("<li><span class=\"\(swatch)\" style=\"background:\(c.colour)\"></span>")
            HTMLPage.appendText("\(c.name) (\(categoryCounts[c.rawValue]))", to: out)
            out.append("</li>\n")
        }
        out.append("</ul>\n<p class=\"note\">")
        HTMLPage.appendText(
            "Click a point of the path or a moment of the timeline for its audit events. "
                + (stride > 1
                    ? "1 in \(stride) fixes is drawn (\(fixT.count) of \(fixCount)); lines are simplified with Douglas–Peucker to half a pixel."
                    : "Every fix is drawn; lines are simplified with Douglas–Peucker to half a pixel."),
            to: out)
        out.append("</p>\n</section>\n")
        try sink.flushIfNeeded()

        // The timeline.
        out.append("<section id=\"timeline-section\">\n<h2>Timeline</h2>\n<div class=\"timeline\">\n")
        let timeline = writeTimeline(t0: t0, t1: t1, to: out)
        out.append("</div>\n<h2>Audit events</h2>\n<div id=\"details\"><span class=\"hint\">")
        HTMLPage.appendText("Click a point of the path or a moment of the timeline.", to: out)
        out.append("</span></div>\n")
        if eventsLeftOut > 0 {
            out.append("<p class=\"note\">")
            HTMLPage.appendText(
                "The first \(Self.maxEvents) events besides fixes are listed; \(eventsLeftOut) later one(s) are in the audit log only.",
                to: out)
            out.append("</p>\n")
        }
        out.append("</section>\n")
        try sink.flushIfNeeded()

        // The summary.
        out.append("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"stats\">\n")
        func row(_ label: String, _ value: String) {
            out.append("<tr><th>")
            HTMLPage.appendText(label, to: out)
            out.append("</th><td>")
            HTMLPage.appendText(value, to: out)
            out.append("</td></tr>\n")
        }
        if let source = started["source"]?.text { row("source", source) }
        if let ios = started["ios"]?.text, !isLogger { row("iOS", ios) }
        if let f = finished {
            let names = ["fixes", "delivered", "held", "dropped", "ignored", "resumed"]
            row(
                "finished",
                names.compactMap { key in f[key]?.text.map { "\(key) \($0)" } }.joined(separator: ", "))
        } else {
            row("finished", "no `finished` event: the run did not end cleanly (the counts below are of its fixes)")
        }
        for c in Category.allCases where categoryCounts[c.rawValue] > 0 {
            let prefix = c.name + "\u{1}"
            var byReason: [(reason: String, count: Int)] = []
            for (key, count) in reasonCounts where key.hasPrefix(prefix) {
                byReason.append((String(key.dropFirst(prefix.count)), count))
            }
            byReason.sort { a, b in a.count != b.count ? a.count > b.count : a.reason < b.reason }
            var value = "\(categoryCounts[c.rawValue])"
            if c != .heldDeliveredLater && c != .heldNeverDelivered, !byReason.isEmpty {
                value +=
                    ": " + byReason.map { "\($0.reason.isEmpty ? "—" : $0.reason) \($0.count)" }.joined(separator: ", ")
            }
            row(c.name, value)
        }
        out.append("</table>\n</section>\n")

        // The data island.
        let hover = Self.evenlySpread(
            count: drawn.count, atMost: TraceHTMLWriter.maxHoverPoints,
            keeping: { k in
                k > 0 && fixCategory[drawn[k]] != fixCategory[drawn[k - 1]]
            })
        let data = ByteStore(capacity: 1 << 16)
        data.append("{\"points\":{")
        HTMLPage.appendJSONArray("x", hover.map { px[$0] }, decimals: 1, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("y", hover.map { py[$0] }, decimals: 1, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("t", hover.map { fixT[drawn[$0]] }, decimals: 3, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("lat", hover.map { fixLat[drawn[$0]] }, decimals: 7, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("lon", hover.map { fixLon[drawn[$0]] }, decimals: 7, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("cat", hover.map { Double(fixCategory[drawn[$0]]) }, decimals: 0, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("why", hover.map { Double(fixReason[drawn[$0]]) }, decimals: 0, to: data)
        data.append(",")
        HTMLPage.appendJSONArray("idx", hover.map { Double(fixIndex[drawn[$0]]) }, decimals: 0, to: data)
        if fixError.contains(where: { $0.isFinite }) {
            // A degraded run's fixes say how far each lay from the truth.
            data.append(",")
            HTMLPage.appendJSONArray("err", hover.map { fixError[drawn[$0]] }, decimals: 2, to: data)
        }
        data.append("},\"categories\":[")
        for (k, c) in Category.allCases.enumerated() {
            if k > 0 { data.append(",") }
            HTMLPage.appendJSONString(c.name, to: data)
        }
        data.append("],\"reasons\":[")
        for (k, r) in reasons.enumerated() {
            if k > 0 { data.append(",") }
            HTMLPage.appendJSONString(r, to: data)
        }
        data.append("],\"timeline\":{\"id\":\"timeline\",\"t0\":")
        HTMLPage.appendJSONNumber(t0, decimals: 3, to: data)
        data.append(",\"t1\":")
        HTMLPage.appendJSONNumber(t1, decimals: 3, to: data)
        data.append(",\"p0\":\(Int(timeline.p0)),\"p1\":\(Int(timeline.p1))},\"events\":[")
        // Events besides fixes, and the fixes that can be clicked, in time order.
        var listed = events
        listed += hover.map { (fixT[drawn[$0]], fixOrder[drawn[$0]], fixLine[drawn[$0]]) }
        listed.sort { ($0.t, $0.order) < ($1.t, $1.order) }
        for (k, e) in listed.enumerated() {
            if k > 0 { data.append(",") }
            data.append("[")
            HTMLPage.appendJSONNumber(e.t, decimals: 3, to: data)
            data.append(",")
            HTMLPage.appendJSONString(e.line, to: data)
            data.append("]")
        }
        data.append("]")
        HTMLPage.appendMap(map, tiles: nil, to: data)
        data.append("}")
        HTMLPage.end(data: data, to: out)
        try sink.flush()
    }

    /// The source's path under the fixes.
    static let sourcePathColour = "#d0d7de"

    /// The fixes over the map, over the source's path.
    /// - The fixes the app was given, or that were held for it, are lines: each run of one
    ///   category within a segment in its colour, reaching on to the next such fix so that the
    ///   line has no holes; a lone fix is a dot.
    /// - A dropped fix (a filter's, a pause's) is not part of the app's path: it is a small tick
    ///   across the path where it was, which the lines pass over.
    private func writeFixLayer(pixels: [(x: Double, y: Double)], indices: [Int], to out: ByteStore) throws {
        out.append(
            "<g id=\"fixes\" fill=\"none\" stroke-width=\"4\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n")
        var ticks: [Int] = []
        var run: [(x: Double, y: Double)] = []
        var runCategory = -1
        var runSegment = -1
        func flush() throws {
            defer { run.removeAll(keepingCapacity: true) }
            guard !run.isEmpty else { return }
            let colour = Category(rawValue: runCategory)!.colour
            if run.count == 1 {
                out.append("<circle r=\"3.5\" stroke=\"none\" fill=\"\(colour)\" cx=\"")
                SVGWriter.appendNumber(run[0].x, to: out)
                out.append("\" cy=\"")
                SVGWriter.appendNumber(run[0].y, to: out)
                out.append("\"/>\n")
            } else {
                out.append("<polyline stroke=\"\(colour)\" points=\"")
                for (n, index) in SVGWriter.simplify(run, tolerance: SVGWriter.tolerance).enumerated() {
                    if n > 0 { out.append(UInt8(ascii: " ")) }
                    SVGWriter.appendNumber(run[index].x, to: out)
                    out.append(UInt8(ascii: ","))
                    SVGWriter.appendNumber(run[index].y, to: out)
                }
                out.append("\"/>\n")
            }
            try sink.flushIfNeeded()
        }
        for k in indices.indices {
            let fix = indices[k]
            let category = fixCategory[fix]
            if Category(rawValue: category)!.isTick {
                ticks.append(k)
                continue
            }
            let segment = fixSegment[fix]
            if segment != runSegment {
                try flush()
            } else if category != runCategory {
                // The run reaches on to this fix, which starts the next.
                run.append(pixels[k])
                try flush()
            }
            runCategory = category
            runSegment = segment
            run.append(pixels[k])
        }
        try flush()
        out.append("</g>\n")
        guard !ticks.isEmpty else { return }
        out.append(
            "<g id=\"dropped\" stroke=\"\(Category.dropped.colour)\" stroke-width=\"2\" stroke-linecap=\"butt\">\n")
        for k in ticks {
            // Across the path: square to the way from the fix before to the fix after, in its segment.
            let segment = fixSegment[indices[k]]
            let before = k > 0 && fixSegment[indices[k - 1]] == segment ? pixels[k - 1] : pixels[k]
            let after = k + 1 < indices.count && fixSegment[indices[k + 1]] == segment ? pixels[k + 1] : pixels[k]
            var dx = after.x - before.x
            var dy = after.y - before.y
            let length = (dx * dx + dy * dy).squareRoot()
            if length > 1e-9 {
                dx /= length
                dy /= length
            } else {
                (dx, dy) = (1, 0)
            }
            let half = Self.tickHalfLength
            out.append("<line class=\"tick\" x1=\"")
            SVGWriter.appendNumber(pixels[k].x - dy * half, to: out)
            out.append("\" y1=\"")
            SVGWriter.appendNumber(pixels[k].y + dx * half, to: out)
            out.append("\" x2=\"")
            SVGWriter.appendNumber(pixels[k].x + dy * half, to: out)
            out.append("\" y2=\"")
            SVGWriter.appendNumber(pixels[k].y - dx * half, to: out)
            out.append("\"/>\n")
            try sink.flushIfNeeded()
        }
        out.append("</g>\n")
    }

    /// Half a dropped fix's tick, in pixels: a tick is 9 pixels across a 9-pixel path.
    static let tickHalfLength = 4.5

    /// Commits the page's file (a sink opened with `FileSink(atomicPath:)`).
    public func commit() throws { try sink.commit() }

    /// Colours of the timeline's spans, by label.
    static func spanColour(_ label: String) -> String {
        switch label {
        case "active": "#1a7f37"
        case "inactive": "#4ac26b"
        case "background": "#1f6feb"
        case "suspended": "#8c959f"
        case "notRunning": "#eaeef2"
        case "authorizedAlways", "always": "#0969da"
        case "authorizedWhenInUse", "whenInUse": "#54aeff"
        case "notDetermined": "#d0d7de"
        case "denied", "restricted", "outage", "unreachable": "#cf222e"
        case "stale": "#d4a72c"
        case "fullAccuracy": "#2da44e"
        case "reducedAccuracy": "#bf8700"
        case "updating": "#2da44e"
        case "paused": "#d4a72c"
        case "backgroundTask": "#8250df"
        case "fetch": "#bf3989"
        case "scheduledTask": "#6639ba"
        case "transfer", "audio": "#0550ae"
        default: "#57606a"
        }
    }

    /// The timeline strip: a row of the fixes by category, then one row per kind of state.
    private func writeTimeline(t0: Double, t1: Double, to out: ByteStore) -> (p0: Double, p1: Double) {
        let p0 = 130.0
        let p1 = 980.0
        let rowHeight = 22.0
        let shown = Self.rowOrder.filter { title in
            if isLogger && title != "source" { return false }
            let r = rows[title]!
            return !r.spans.isEmpty || !r.marks.isEmpty
        }
        let height = 30 + rowHeight * Double(shown.count + 1) + 26
        func x(_ t: Double) -> Double { p0 + (t - t0) / (t1 - t0) * (p1 - p0) }
        out.append(
            "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1000 \(Int(height))\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n<title>Timeline</title>\n"
        )
        // Fixes: per pixel column, the category most of its fixes had.
        var y = 10.0
        out.append("<text x=\"8\" y=\"\(Int(y + 15))\" fill=\"#24292f\">fixes</text>\n<g id=\"timeline-fixes\">\n")
        let columns = Int(p1 - p0)
        var counts = [[Int]](repeating: [Int](repeating: 0, count: Category.allCases.count), count: columns)
        for i in fixT.indices {
            let c = min(columns - 1, max(0, Int(x(fixT[i]) - p0)))
            counts[c][fixCategory[i]] += 1
        }
        for c in 0..<columns {
            guard let best = counts[c].indices.max(by: { counts[c][$0] < counts[c][$1] }), counts[c][best] > 0
            else { continue }
            out.append(
                "<rect x=\"\(Int(p0) + c)\" y=\"\(Int(y + 2))\" width=\"1\" height=\"\(Int(rowHeight - 4))\" fill=\"\(Category(rawValue: best)!.colour)\"/>\n"
            )
        }
        out.append("</g>\n")
        y += rowHeight
        for title in shown {
            let r = rows[title]!
            out.append("<text x=\"8\" y=\"\(Int(y + 15))\" fill=\"#24292f\">")
            HTMLPage.appendText(title, to: out)
            out.append("</text>\n<g>\n")
            // Spans that overlap (two kinds of background work at once) go in lanes of their own.
            var laneEnds: [Double] = []
            var lanes: [Int] = []
            for s in r.spans {
                let a = x(s.t0)
                let lane = laneEnds.firstIndex { $0 <= a + 1e-9 } ?? min(laneEnds.count, 3)
                if lane == laneEnds.count { laneEnds.append(0) }
                laneEnds[lane] = max(laneEnds[lane], x(s.t1))
                lanes.append(lane)
            }
            let laneHeight = (rowHeight - 4) / Double(max(1, laneEnds.count))
            var drawnTo = [Double](repeating: -1, count: laneEnds.count)
            for (s, lane) in zip(r.spans, lanes) {
                let a = x(s.t0)
                let b = max(x(s.t1), a + 1)
                // Under a pixel and inside what its lane already shows: nothing more to draw.
                if x(s.t1) - a < 1 && b <= drawnTo[lane] { continue }
                drawnTo[lane] = max(drawnTo[lane], b)
                out.append("<rect y=\"")
                SVGWriter.appendNumber(y + 2 + Double(lane) * laneHeight, to: out)
                out.append("\" height=\"")
                SVGWriter.appendNumber(laneHeight, to: out)
                out.append("\" x=\"")
                SVGWriter.appendNumber(a, to: out)
                out.append("\" width=\"")
                SVGWriter.appendNumber(b - a, to: out)
                out.append("\" fill=\"\(Self.spanColour(s.label))\"><title>")
                HTMLPage.appendText(
                    "\(s.label): \(ValueFormatting.iso8601(Date(timeIntervalSince1970: s.t0))) → \(ValueFormatting.iso8601(Date(timeIntervalSince1970: s.t1)))",
                    to: out)
                out.append("</title></rect>\n")
                if b - a > 70 && laneEnds.count == 1 {
                    let light = ["#eaeef2", "#d0d7de", "#54aeff", "#4ac26b"].contains(Self.spanColour(s.label))
                    out.append(
                        "<text y=\"\(Int(y + 15))\" fill=\"\(light ? "#24292f" : "#ffffff")\" font-size=\"11\" x=\"")
                    SVGWriter.appendNumber(a + 4, to: out)
                    out.append("\" pointer-events=\"none\">")
                    HTMLPage.appendText(s.label, to: out)
                    out.append("</text>\n")
                }
            }
            // Marks: one per pixel column, naming what happened there.
            var k = 0
            while k < r.marks.count {
                let column = Int(x(r.marks[k].t).rounded(.down))
                var end = k + 1
                while end < r.marks.count && Int(x(r.marks[end].t).rounded(.down)) == column { end += 1 }
                let m = r.marks[k]
                out.append("<rect y=\"\(Int(y + 1))\" height=\"\(Int(rowHeight - 2))\" width=\"3\" x=\"")
                SVGWriter.appendNumber(x(m.t) - 1.5, to: out)
                out.append("\" fill=\"#24292f\"><title>")
                if end - k == 1 {
                    HTMLPage.appendText(
                        "\(m.label) at \(ValueFormatting.iso8601(Date(timeIntervalSince1970: m.t)))", to: out)
                } else {
                    var names: [String] = []
                    for n in k..<end where !names.contains(r.marks[n].label) && names.count < 4 {
                        names.append(r.marks[n].label)
                    }
                    HTMLPage.appendText(
                        "\(end - k) events from \(ValueFormatting.iso8601(Date(timeIntervalSince1970: m.t))): "
                            + names.joined(separator: ", ") + (names.count == 4 ? ", …" : ""), to: out)
                }
                out.append("</title></rect>\n")
                k = end
            }
            if r.leftOut > 0 {
                out.append(
                    "<text x=\"\(Int(p1))\" y=\"\(Int(y + 15))\" text-anchor=\"end\" font-size=\"10\" fill=\"#57606a\">"
                )
                HTMLPage.appendText("+\(r.leftOut) more in the audit log", to: out)
                out.append("</text>\n")
            }
            out.append("</g>\n")
            y += rowHeight
        }
        // The time axis.
        out.append("<g fill=\"#57606a\" text-anchor=\"middle\">\n")
        for t in HTMLChart.timeTicks(t0, t1) {
            out.append("<line y1=\"10\" y2=\"\(Int(y + 4))\" stroke=\"#d8dee4\" x1=\"")
            SVGWriter.appendNumber(x(t), to: out)
            out.append("\" x2=\"")
            SVGWriter.appendNumber(x(t), to: out)
            out.append("\"/><text y=\"\(Int(y + 18))\" x=\"")
            SVGWriter.appendNumber(x(t), to: out)
            out.append("\">")
            HTMLPage.appendText(HTMLChart.clock(t, span: t1 - t0), to: out)
            out.append("</text>\n")
        }
        out.append("</g>\n")
        out.append(
            "<line id=\"timeline-cursor\" y1=\"8\" y2=\"\(Int(y + 2))\" x1=\"0\" x2=\"0\" stroke=\"#24292f\" stroke-width=\"1.5\" visibility=\"hidden\"/>\n</svg>\n"
        )
        return (p0, p1)
    }

    /// At most `limit` of `0..<count`, evenly spread, with the first, the last and (room
    /// allowing) every index `keeping` says to keep.
    static func evenlySpread(count: Int, atMost limit: Int, keeping: (Int) -> Bool) -> [Int] {
        guard count > limit else { return Array(0..<count) }
        var chosen = Set(
            (0..<limit / 2).map { Int((Double($0) * Double(count - 1) / Double(limit / 2 - 1)).rounded()) })
        for k in 0..<count where chosen.count < limit && keeping(k) { chosen.insert(k) }
        return chosen.sorted()
    }
}
