/// A reader whose track points come out degraded by a ``TraceDegrader``: any format, on its way
/// to any writer. Routes and waypoints pass as they are.
///
/// Each degraded point keeps its truth in an extension element, so that a GPX export can be
/// measured against it afterwards:
/// `<waymark:truth xmlns:waymark="urn:waymark:degrade:1" lat="…" lon="…" ele="…" error="…"
/// faults="multipath jump"/>` (`error`: metres from the truth, horizontally; `ele` only when the
/// point has one; `faults` only when a model beyond the noise acted).
public final class DegradingReader: TraceEventReader {
    public static let truthNamespace = "urn:waymark:degrade:1"

    private let inner: any TraceEventReader
    private var degrader: TraceDegrader
    /// Track points read, and those that came out.
    public private(set) var pointsIn = 0
    public private(set) var pointsOut = 0

    public var fileName: String { inner.fileName }
    public var droppedPoints: Int { inner.droppedPoints }

    public init(_ inner: any TraceEventReader, profile: DegradeProfile, seed: UInt64) {
        self.inner = inner
        degrader = TraceDegrader(profile: profile, seed: seed)
    }

    public func readEvents(_ handle: (consuming GPXEvent) throws -> Void) throws {
        try inner.readEvents { event in
            guard case .trackPoint(let p) = event else {
                try handle(event)
                return
            }
            pointsIn += 1
            guard let fix = degrader.degrade(p) else { return }
            pointsOut += 1
            var point = fix.point
            point.extensions.elements.append(Self.truthElement(fix))
            try handle(.trackPoint(point))
        }
    }

    /// A point's truth, from its `<waymark:truth>` element, or nil without one: the true position
    /// (degrees), the error (metres) and the faults.
    public static func truth(of p: GPXPoint) -> (latitude: Double, longitude: Double, error: Double, faults: [String])?
    {
        guard let element = p.extensions.elements.first(where: { $0.hasPrefix("<waymark:truth ") }) else { return nil }
        func value(_ name: String) -> Substring? {
            guard let start = element.firstRange(of: " \(name)=\"")?.upperBound else { return nil }
            return element[start...].prefix { $0 != "\"" }
        }
        guard let lat = value("lat").flatMap({ Double($0) }), let lon = value("lon").flatMap({ Double($0) }) else {
            return nil
        }
        let faults = value("faults").map { $0.split(separator: " ").map(String.init) } ?? []
        return (lat, lon, value("error").flatMap { Double($0) } ?? .nan, faults)
    }

    /// A degraded point's ``Location/Provenance/Degradation``, or nil.
    static func degradation(of p: GPXPoint) -> Provenance.Degradation? {
        guard let t = truth(of: p), t.error.isFinite else { return nil }
        return Provenance.Degradation(error: t.error, faults: t.faults)
    }

    /// The `<waymark:truth>` element of a fix.
    static func truthElement(_ fix: TraceDegrader.Fix) -> String {
        var text = "<waymark:truth xmlns:waymark=\"\(truthNamespace)\" lat=\""
        text += ValueFormatting.fixed(fix.truth.coordinate.latitude, decimals: 9)
        text += "\" lon=\"" + ValueFormatting.fixed(fix.truth.coordinate.longitude, decimals: 9) + "\""
        if let e = fix.truth.elevation { text += " ele=\"" + ValueFormatting.fixed(e, decimals: 3) + "\"" }
        text += " error=\"" + ValueFormatting.fixed(fix.horizontalError, decimals: 2) + "\""
        if !fix.faults.isEmpty { text += " faults=\"" + fix.faults.joined(separator: " ") + "\"" }
        return text + "/>"
    }
}
