#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes GPX 1.1 that validates against the official schema, streaming from reader events.
///
/// GPX 1.0 input is upgraded: its top-level metadata moves into `<metadata>`, and its per-point
/// `<speed>` and `<course>` move into a Garmin TrackPointExtension v2 element. Extension elements
/// are written back verbatim. Times are UTC with milliseconds.
///
/// GPX 1.1 requires waypoints, then routes, then tracks. Routes and tracks are held in spill
/// buffers (memory, then a temporary file) until the end, so input in any order streams out in
/// bounded memory.
public final class GPXWriter {
    private let sink: FileSink
    private var out: ByteStore { sink.buffer }
    private let routes = SpillBuffer()
    private let tracks = SpillBuffer()
    private var headerWritten = false
    private var creator = "Waymark"
    private var pendingMetadata: GPXMetadata?
    private var documentExtensions = GPXExtensions()
    private var pathInfo = GPXPathInfo()
    private var pathHeaderWritten = false
    private var finished = false

    /// Writes to `sink`; call ``finish()`` at the end.
    public init(sink: FileSink) {
        self.sink = sink
    }

    /// Writes a whole document.
    public static func write(_ document: GPXDocument, to sink: FileSink) throws {
        let writer = GPXWriter(sink: sink)
        try document.forEachEvent { try writer.write($0) }
        try writer.finish()
    }

    /// Writes one event.
    public func write(_ event: GPXEvent) throws {
        switch event {
        case .header(let h):
            creator = h.creator ?? "Waymark"
        case .metadata(let m):
            pendingMetadata = m
        case .waypoint(let p):
            try writeHeaderIfNeeded()
            Self.writePoint(p, tag: "wpt", indent: "  ", to: out)
            try sink.flushIfNeeded()
        case .routeStart(let info):
            try writeHeaderIfNeeded()
            pathInfo = info
            pathHeaderWritten = false
        case .routePoint(let p):
            writePathHeaderIfNeeded(tag: "rte", to: routes.memory)
            Self.writePoint(p, tag: "rtept", indent: "    ", to: routes.memory)
            try routes.spillIfNeeded()
        case .routeEnd(let info):
            if !pathHeaderWritten { pathInfo = info }
            writePathHeaderIfNeeded(tag: "rte", to: routes.memory)
            routes.memory.append("  </rte>\n")
            try routes.spillIfNeeded()
        case .trackStart(let info):
            try writeHeaderIfNeeded()
            pathInfo = info
            pathHeaderWritten = false
        case .segmentStart:
            writePathHeaderIfNeeded(tag: "trk", to: tracks.memory)
            tracks.memory.append("    <trkseg>\n")
        case .trackPoint(let p):
            Self.writePoint(p, tag: "trkpt", indent: "      ", to: tracks.memory)
            try tracks.spillIfNeeded()
        case .segmentEnd(let e):
            Self.writeExtensions(e, indent: "      ", to: tracks.memory)
            tracks.memory.append("    </trkseg>\n")
            try tracks.spillIfNeeded()
        case .trackEnd(let info):
            if !pathHeaderWritten { pathInfo = info }
            writePathHeaderIfNeeded(tag: "trk", to: tracks.memory)
            tracks.memory.append("  </trk>\n")
            try tracks.spillIfNeeded()
        case .documentExtensions(let e):
            documentExtensions = e
        case .warning:
            break
        }
    }

    /// Writes what is held back and the closing tag, then flushes.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try writeHeaderIfNeeded()
        try routes.drain(into: sink)
        try tracks.drain(into: sink)
        Self.writeExtensions(documentExtensions, indent: "  ", to: out)
        out.append("</gpx>\n")
        try sink.flush()
    }

    private func writeHeaderIfNeeded() throws {
        guard !headerWritten else { return }
        headerWritten = true
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        out.append("<gpx xmlns=\"http://www.topografix.com/GPX/1/1\" version=\"1.1\" creator=\"")
        XMLEscaping.appendEscaped(creator, attribute: true, to: out)
        out.append("\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"")
        out.append(
            " xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd\">\n")
        if let m = pendingMetadata, !m.isEmpty { writeMetadata(m) }
    }

    private func writeMetadata(_ m: GPXMetadata) {
        out.append("  <metadata>\n")
        Self.element("name", m.name, indent: "    ", to: out)
        Self.element("desc", m.description, indent: "    ", to: out)
        let email = m.authorEmail.flatMap(Self.splitEmail)
        if m.authorName != nil || email != nil || m.authorLink != nil {
            out.append("    <author>\n")
            Self.element("name", m.authorName, indent: "      ", to: out)
            if let (id, domain) = email {
                out.append("      <email id=\"")
                XMLEscaping.appendEscaped(id, attribute: true, to: out)
                out.append("\" domain=\"")
                XMLEscaping.appendEscaped(domain, attribute: true, to: out)
                out.append("\"/>\n")
            }
            if let link = m.authorLink { Self.writeLink(link, indent: "      ", to: out) }
            out.append("    </author>\n")
        }
        if let holder = m.copyrightHolder {
            out.append("    <copyright author=\"")
            XMLEscaping.appendEscaped(holder, attribute: true, to: out)
            out.append("\">")
            if let year = m.copyrightYear, (0...9999).contains(year) {
                out.append("<year>")
                ValueFormatting.appendDigits(year, width: 4, to: out)
                out.append("</year>")
            }
            Self.inlineElement("license", m.copyrightLicense, to: out)
            out.append("</copyright>\n")
        }
        for link in m.links { Self.writeLink(link, indent: "    ", to: out) }
        if let t = m.time {
            out.append("    <time>")
            ValueFormatting.appendISO8601(t, to: out)
            out.append("</time>\n")
        }
        Self.element("keywords", m.keywords, indent: "    ", to: out)
        if let b = m.bounds, Coordinate(latitude: b.minLatitude, longitude: b.minLongitude).isValid,
            Coordinate(latitude: b.maxLatitude, longitude: b.maxLongitude).isValid
        {
            out.append("    <bounds minlat=\"")
            ValueFormatting.appendDecimal(b.minLatitude, to: out)
            out.append("\" minlon=\"")
            ValueFormatting.appendDecimal(b.minLongitude == 180 ? -180 : b.minLongitude, to: out)
            out.append("\" maxlat=\"")
            ValueFormatting.appendDecimal(b.maxLatitude, to: out)
            out.append("\" maxlon=\"")
            // A box reaching 180 cannot say so in GPX 1.1 (lon < 180): its edge is written as the
            // greatest longitude below 180 that the writer's precision shows apart from it.
            ValueFormatting.appendDecimal(b.maxLongitude == 180 ? 179.9999999 : b.maxLongitude, to: out)
            out.append("\"/>\n")
        }
        Self.writeExtensions(m.extensions, indent: "    ", to: out)
        out.append("  </metadata>\n")
    }

    /// `id@domain` as GPX 1.1 spells it; nil when the address has no '@' to split at.
    static func splitEmail(_ address: String) -> (String, String)? {
        guard let at = address.lastIndex(of: "@"), at != address.startIndex,
            address.index(after: at) != address.endIndex
        else { return nil }
        return (String(address[..<at]), String(address[address.index(after: at)...]))
    }

    private func writePathHeaderIfNeeded(tag: StaticString, to o: ByteStore) {
        guard !pathHeaderWritten else { return }
        pathHeaderWritten = true
        let info = pathInfo
        o.append("  <")
        o.append(tag)
        o.append(">\n")
        Self.element("name", info.name, indent: "    ", to: o)
        Self.element("cmt", info.comment, indent: "    ", to: o)
        Self.element("desc", info.description, indent: "    ", to: o)
        Self.element("src", info.source, indent: "    ", to: o)
        for link in info.links { Self.writeLink(link, indent: "    ", to: o) }
        if let n = info.number {
            o.append("    <number>")
            o.append(String(n))
            o.append("</number>\n")
        }
        Self.element("type", info.type, indent: "    ", to: o)
        Self.writeExtensions(info.extensions, indent: "    ", to: o)
    }

    static func element(_ tag: StaticString, _ value: String?, indent: StaticString, to o: ByteStore) {
        guard let value else { return }
        o.append(indent)
        o.append(UInt8(ascii: "<"))
        o.append(tag)
        o.append(UInt8(ascii: ">"))
        XMLEscaping.appendEscaped(value, attribute: false, to: o)
        o.append("</")
        o.append(tag)
        o.append(">\n")
    }

    private func number(_ tag: StaticString, _ value: Double?, decimals: Int, indent: StaticString, to o: ByteStore) {
        guard let value, value.isFinite else { return }
        o.append(indent)
        o.append(UInt8(ascii: "<"))
        o.append(tag)
        o.append(UInt8(ascii: ">"))
        ValueFormatting.appendFixed(value, decimals: decimals, to: o)
        o.append("</")
        o.append(tag)
        o.append(">\n")
    }

    static func writeLink(_ link: GPXLink, indent: StaticString, to o: ByteStore) {
        o.append(indent)
        o.append("<link href=\"")
        XMLEscaping.appendEscaped(link.href, attribute: true, to: o)
        if link.text == nil && link.type == nil {
            o.append("\"/>\n")
            return
        }
        o.append("\">")
        inlineElement("text", link.text, to: o)
        inlineElement("type", link.type, to: o)
        o.append("</link>\n")
    }

    static func writePoint(_ p: GPXPoint, tag: StaticString, indent: StaticString, to o: ByteStore) {
        o.append(indent)
        o.append(UInt8(ascii: "<"))
        o.append(tag)
        o.append(" lat=\"")
        ValueFormatting.appendDecimal(p.coordinate.latitude, to: o)
        o.append("\" lon=\"")
        // GPX 1.1's longitudeType is -180 ≤ lon < 180: 180 is written as the same meridian, -180.
        ValueFormatting.appendDecimal(p.coordinate.longitude == 180 ? -180 : p.coordinate.longitude, to: o)
        o.append(UInt8(ascii: "\""))
        let simple = p.elevation == nil && p.time == nil && p.extensions.isEmpty && !p.hasDetails
        if simple {
            o.append("/>\n")
            return
        }
        o.append(">")
        if let e = p.elevation, e.isFinite {
            o.append("<ele>")
            ValueFormatting.appendDecimal(e, to: o)
            o.append("</ele>")
        }
        if let t = p.time {
            o.append("<time>")
            ValueFormatting.appendISO8601(t, to: o)
            o.append("</time>")
        }
        let inner: StaticString = "\n"
        if let v = p.magneticVariation, v >= 0, v < 360 {
            o.append("<magvar>")
            ValueFormatting.appendDecimal(v, to: o)
            o.append("</magvar>")
        }
        if let v = p.geoidHeight, v.isFinite {
            o.append("<geoidheight>")
            ValueFormatting.appendDecimal(v, to: o)
            o.append("</geoidheight>")
        }
        inlineElement("name", p.name, to: o)
        inlineElement("cmt", p.comment, to: o)
        inlineElement("desc", p.description, to: o)
        inlineElement("src", p.source, to: o)
        for link in p.links { writeLink(link, indent: "", to: o) }
        if !p.links.isEmpty { o.count -= 1 }  // writeLink ends with a newline
        inlineElement("sym", p.symbol, to: o)
        inlineElement("type", p.type, to: o)
        inlineElement("fix", p.fix?.rawValue, to: o)
        if let s = p.satellites {
            o.append("<sat>")
            o.append(String(s))
            o.append("</sat>")
        }
        inlineNumber("hdop", p.hdop, to: o)
        inlineNumber("vdop", p.vdop, to: o)
        inlineNumber("pdop", p.pdop, to: o)
        inlineNumber("ageofdgpsdata", p.ageOfDGPSData, to: o)
        if let d = p.dgpsStation, (0...1023).contains(d) {
            o.append("<dgpsid>")
            o.append(String(d))
            o.append("</dgpsid>")
        }
        var ext = p.extensions
        if ext.elements.isEmpty && (p.speed != nil || p.course != nil) {
            ext.speed = ext.speed ?? p.speed
            ext.course = ext.course ?? p.course
        }
        // The point's own accuracies (an NMEA log's GST, a gpsd capture's errors) go in as
        // `hAcc` and `vAcc`, the elements Apple Health writes and the reader takes back, with the
        // digits they came with; a point that keeps the extension elements it was read with has
        // them there already.
        var accuracies: Accuracies?
        if ext.elements.isEmpty && p.hasDetails {
            func usable(_ v: Double?) -> Double? { v.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }
            let own = Accuracies(horizontal: usable(p.horizontalAccuracy), vertical: usable(p.verticalAccuracy))
            if own.horizontal != nil || own.vertical != nil { accuracies = own }
        }
        if !ext.isEmpty || accuracies != nil {
            o.append(inner)
            writeExtensions(ext, indent: indent, extraIndent: true, accuracies: accuracies, to: o)
            o.append(indent)
        }
        o.append("</")
        o.append(tag)
        o.append(">\n")
    }

    static func inlineElement(_ tag: StaticString, _ value: String?, to o: ByteStore) {
        guard let value else { return }
        o.append(UInt8(ascii: "<"))
        o.append(tag)
        o.append(UInt8(ascii: ">"))
        XMLEscaping.appendEscaped(value, attribute: false, to: o)
        o.append("</")
        o.append(tag)
        o.append(UInt8(ascii: ">"))
    }

    static func inlineNumber(_ tag: StaticString, _ value: Double?, to o: ByteStore) {
        guard let value, value.isFinite, value >= 0 else { return }
        o.append(UInt8(ascii: "<"))
        o.append(tag)
        o.append(UInt8(ascii: ">"))
        ValueFormatting.appendDecimal(value, to: o)
        o.append("</")
        o.append(tag)
        o.append(UInt8(ascii: ">"))
    }

    /// A point's own horizontal and vertical accuracy, in metres.
    struct Accuracies: Equatable {
        var horizontal: Double?
        var vertical: Double?
    }

    /// Writes `<extensions>`: kept elements verbatim, or known values as TrackPointExtension,
    /// and then `accuracies` as `hAcc` and `vAcc` (in ``GPXExtensions/unqualifiedNamespace``,
    /// where Waymark keeps Apple Health's own).
    static func writeExtensions(
        _ e: GPXExtensions, indent: StaticString, extraIndent: Bool = false, accuracies: Accuracies? = nil,
        to o: ByteStore
    ) {
        guard !e.isEmpty || accuracies != nil else { return }
        o.append(indent)
        if extraIndent { o.append("  ") }
        o.append("<extensions>")
        if !e.elements.isEmpty {
            for element in e.elements { o.append(element) }
        } else if e.hasKnownValues {
            let v2 = e.speed != nil || e.course != nil
            o.append(
                v2
                    ? "<gpxtpx:TrackPointExtension xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v2\">"
                    : "<gpxtpx:TrackPointExtension xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\">"
            )
            func value(_ tag: StaticString, _ v: Double?) {
                guard let v, v.isFinite else { return }
                o.append("<gpxtpx:")
                o.append(tag)
                o.append(UInt8(ascii: ">"))
                ValueFormatting.appendDecimal(v, to: o)
                o.append("</gpxtpx:")
                o.append(tag)
                o.append(UInt8(ascii: ">"))
            }
            value("atemp", e.airTemperature)
            value("wtemp", e.waterTemperature)
            value("depth", e.depth)
            value("hr", e.heartRate)
            value("cad", e.cadence)
            value("speed", e.speed)
            value("course", e.course)
            o.append("</gpxtpx:TrackPointExtension>")
        }
        if let accuracies {
            func accuracy(_ tag: StaticString, _ v: Double?) {
                guard let v else { return }
                o.append(UInt8(ascii: "<"))
                o.append(tag)
                o.append(" xmlns=\"")
                o.append(GPXExtensions.unqualifiedNamespace)
                o.append("\">")
                ValueFormatting.appendDecimal(v, to: o)
                o.append("</")
                o.append(tag)
                o.append(UInt8(ascii: ">"))
            }
            accuracy("hAcc", accuracies.horizontal)
            accuracy("vAcc", accuracies.vertical)
        }
        o.append("</extensions>\n")
    }
}
