#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a GeoJSON position is written: `[longitude, latitude]` with ``decimals`` decimals, then
/// the elevation in metres with at most three (and no more than ``decimals``), unless
/// ``elevations`` is false.
///
/// Seven decimals (the default) are about a centimetre on the ground, six about 10 cm, five
/// about a metre (RFC 7946 §11.2 advises six); each decimal less saves about a tenth of a
/// line's coordinates.
public struct GeoJSONPositionFormat: Sendable, Hashable {
    /// Decimals of longitudes and latitudes, 0 to 7.
    public var decimals: Int {
        didSet { precondition((0...7).contains(decimals), "a GeoJSON position takes 0 to 7 decimals") }
    }
    /// Whether a position carries the point's elevation, when it has one.
    public var elevations: Bool

    public init(decimals: Int = 7, elevations: Bool = true) {
        precondition((0...7).contains(decimals), "a GeoJSON position takes 0 to 7 decimals")
        self.decimals = decimals
        self.elevations = elevations
    }

    @inline(__always)
    func append(longitude: Double, latitude: Double, elevation: Double?, to o: ByteStore) {
        o.append(UInt8(ascii: "["))
        ValueFormatting.appendFixed(longitude, decimals: decimals, to: o)
        o.append(UInt8(ascii: ","))
        ValueFormatting.appendFixed(latitude, decimals: decimals, to: o)
        if elevations, let e = elevation, e.isFinite {
            o.append(UInt8(ascii: ","))
            ValueFormatting.appendFixed(e, decimals: min(3, decimals), to: o)
        }
        o.append(UInt8(ascii: "]"))
    }
}

/// A property value added to a feature.
enum GeoJSONPropertyValue: Sendable, Hashable {
    case number(Double, decimals: Int)
    /// A number written with a fraction always (`30.0`), so that GIS tools, which type a field
    /// by the values they see, make it a real number whatever the data.
    case real(Double, decimals: Int)
    case string(String)
    case time(Date)

    func append(to out: ByteStore) {
        switch self {
        case .number(let value, let decimals), .real(let value, let decimals):
            guard value.isFinite else {
                out.append("null")
                return
            }
            let start = out.count
            ValueFormatting.appendFixed(value, decimals: decimals, to: out)
            if case .real = self,
                !UnsafeBufferPointer(start: out.base + start, count: out.count - start).contains(UInt8(ascii: "."))
            {
                out.append(".0")
            }
        case .string(let text):
            JSONEscaping.appendString(text, to: out)
        case .time(let date):
            out.append(UInt8(ascii: "\""))
            ValueFormatting.appendISO8601(date, to: out)
            out.append(UInt8(ascii: "\""))
        }
    }
}

/// The summary properties of a track or route feature (`--summary-properties`), for a web map's
/// popup: what `waymark info` says of the whole file, for the one line.
///
/// | key | value |
/// |---|---|
/// | `length` | metres along the line on the WGS 84 ellipsoid, within segments |
/// | `duration` | seconds from first to last time, summed over segments (timed lines) |
/// | `movingTime` | seconds spent above 1 km/h (timed lines) |
/// | `ascent`, `descent` | metres climbed and descended, within segments (lines with elevations) |
/// | `startTime`, `endTime` | the earliest and latest time, ISO 8601 UTC |
///
/// The figures always have a fraction (`30.0`), so that GDAL and QGIS, which type a field by
/// its values, make them real numbers in every file.
/// The line's bounds are its `bbox` member, which RFC 7946 defines (and which stays right across
/// the antimeridian). The figures are of every point read, before `--simplify` leaves any out.
public enum GeoJSONLineSummary {
    static func properties(of s: TraceStatistics) -> [(key: String, value: GeoJSONPropertyValue)] {
        var properties: [(key: String, value: GeoJSONPropertyValue)] = []
        let isRoute = s.trackPointCount == 0 && s.routePointCount > 0
        properties.append(("length", .real(isRoute ? s.routeLength2D : s.length2D, decimals: 1)))
        if !isRoute {
            if let duration = s.duration {
                properties.append(("duration", .real(duration, decimals: 3)))
                properties.append(("movingTime", .real(s.movingTime, decimals: 3)))
            }
            if s.minElevation != nil {
                properties.append(("ascent", .real(s.climb, decimals: 1)))
                properties.append(("descent", .real(s.descent, decimals: 1)))
            }
            if let start = s.startTime, let end = s.endTime {
                properties.append(("startTime", .time(start)))
                properties.append(("endTime", .time(end)))
            }
        }
        return properties
    }
}

/// simplestyle-spec 1.1.0 properties (`--simplestyle`), which GitHub's and Mapbox's GeoJSON views
/// and geojson.io draw: each track or route a colour of its own, cycling through eight that
/// tell apart on a map and for most colour vision (ColorBrewer's Set1, its yellow left out),
/// 3 pixels wide; waypoints a small grey marker.
public enum GeoJSONStyle {
    /// The line colours, in order.
    public static let lineColors = [
        "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#999999",
    ]

    static func line(_ index: Int) -> [(key: String, value: GeoJSONPropertyValue)] {
        [
            ("stroke", .string(lineColors[index % lineColors.count])),
            ("stroke-width", .number(3, decimals: 0)),
            ("stroke-opacity", .number(0.9, decimals: 1)),
        ]
    }

    static let waypoint: [(key: String, value: GeoJSONPropertyValue)] = [
        ("marker-color", .string("#555555")),
        ("marker-size", .string("small")),
    ]
}
