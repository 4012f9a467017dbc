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
