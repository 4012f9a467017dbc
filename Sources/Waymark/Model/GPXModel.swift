import Foundation

/// The GPX `fix` value: the kind of fix the receiver had.
public enum GPXFix: String, Sendable, Hashable, Codable, CaseIterable {
    case none
    case twoD = "2d"
    case threeD = "3d"
    case dgps
    case pps
}

/// A link to an external resource (GPX `linkType`).
public struct GPXLink: Sendable, Hashable, Codable {
    public var href: String
    public var text: String?
    public var type: String?

    public init(href: String, text: String? = nil, type: String? = nil) {
        self.href = href
        self.text = text
        self.type = type
    }
}

/// Extension content: the values Waymark knows, and every element kept verbatim for round trips.
public struct GPXExtensions: Sendable, Hashable, Codable {
    /// Heart rate in beats per minute (Garmin TrackPointExtension `hr`).
    public var heartRate: Double?
    /// Cadence in revolutions per minute (`cad`).
    public var cadence: Double?
    /// Air temperature in degrees Celsius (`atemp`).
    public var airTemperature: Double?
    /// Water temperature in degrees Celsius (`wtemp`).
    public var waterTemperature: Double?
    /// Depth in metres (`depth`).
    public var depth: Double?
    /// Power in watts (Garmin PowerExtension `PowerInWatts`, or `power`).
    public var power: Double?
    /// Speed over ground in metres per second (TrackPointExtension v2 `speed`).
    public var speed: Double?
    /// Course in degrees from true north (TrackPointExtension v2 `course`).
    public var course: Double?
    /// Each child of `<extensions>`, serialised as a standalone XML element with the namespace
    /// declarations it needs.
    public var elements: [String]

    public init(elements: [String] = []) {
        self.elements = elements
    }

    /// The namespace given to extension elements that a file put in GPX's own namespace or in
    /// none, which GPX 1.1's schema does not allow inside `<extensions>`.
    public static let unqualifiedNamespace = "urn:waymark:gpx-extension-without-namespace"

    public var isEmpty: Bool { elements.isEmpty && !hasKnownValues }

    /// True when any value Waymark knows is present.
    public var hasKnownValues: Bool {
        heartRate != nil || cadence != nil || airTemperature != nil || waterTemperature != nil || depth != nil
            || power != nil || speed != nil || course != nil
    }
}

/// A waypoint, route point or track point (GPX `wptType`).
public struct GPXPoint: Sendable, Hashable, Codable {
    /// Latitude and longitude, degrees WGS 84.
    public var coordinate: Coordinate
    /// Elevation in metres, as GPX gives it (normally above mean sea level).
    public var elevation: Double?
    /// The time of the fix, UTC.
    public var time: Date?
    /// Magnetic variation in degrees.
    public var magneticVariation: Double?
    /// Height of the geoid above the WGS 84 ellipsoid, metres.
    public var geoidHeight: Double?
    public var name: String?
    public var comment: String?
    public var description: String?
    public var source: String?
    public var links: [GPXLink] = []
    public var symbol: String?
    public var type: String?
    public var fix: GPXFix?
    /// Satellites used for the fix.
    public var satellites: Int?
    /// Horizontal, vertical and position dilution of precision (unitless).
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    /// Seconds since the last DGPS update.
    public var ageOfDGPSData: Double?
    public var dgpsStation: Int?
    /// Speed in metres per second, from GPX 1.0 `<speed>`.
    public var speed: Double?
    /// Course in degrees from true north, from GPX 1.0 `<course>`.
    public var course: Double?
    public var extensions = GPXExtensions()

    public init(coordinate: Coordinate) {
        self.coordinate = coordinate
    }

    public init(latitude: Double, longitude: Double, elevation: Double? = nil, time: Date? = nil) {
        self.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        self.elevation = elevation
        self.time = time
    }
}

/// What describes a route or a track, apart from its points.
public struct GPXPathInfo: Sendable, Hashable, Codable {
    public var name: String?
    public var comment: String?
    public var description: String?
    public var source: String?
    public var links: [GPXLink] = []
    public var number: Int?
    public var type: String?
    public var extensions = GPXExtensions()

    public init(name: String? = nil) {
        self.name = name
    }
}

/// A track segment: points recorded without a break.
public struct GPXSegment: Sendable, Hashable, Codable {
    public var points: [GPXPoint]
    public var extensions = GPXExtensions()

    public init(points: [GPXPoint] = []) {
        self.points = points
    }
}

/// A track: an ordered list of segments.
public struct GPXTrack: Sendable, Hashable, Codable {
    public var info: GPXPathInfo
    public var segments: [GPXSegment]

    public init(info: GPXPathInfo = GPXPathInfo(), segments: [GPXSegment] = []) {
        self.info = info
        self.segments = segments
    }
}

/// A route: an ordered list of points to follow.
public struct GPXRoute: Sendable, Hashable, Codable {
    public var info: GPXPathInfo
    public var points: [GPXPoint]

    public init(info: GPXPathInfo = GPXPathInfo(), points: [GPXPoint] = []) {
        self.info = info
        self.points = points
    }
}

/// Information about the file (GPX `metadataType`; GPX 1.0's top-level fields are moved here).
public struct GPXMetadata: Sendable, Hashable, Codable {
    public var name: String?
    public var description: String?
    public var authorName: String?
    public var copyright: String?
    public var links: [GPXLink] = []
    public var time: Date?
    public var keywords: String?
    public var bounds: Bounds?
    public var extensions = GPXExtensions()

    public init() {}

    public var isEmpty: Bool { self == GPXMetadata() }
}

/// The `<gpx>` element's own attributes.
public struct GPXHeader: Sendable, Hashable, Codable {
    /// "1.0" or "1.1", as the file says.
    public var version: String
    public var creator: String?

    public init(version: String = "1.1", creator: String? = nil) {
        self.version = version
        self.creator = creator
    }
}

/// A whole GPX document in memory: the small-document API.
///
/// For large files, use ``GPXReader`` and handle the events as they come.
public struct GPXDocument: Sendable, Hashable, Codable {
    public var header: GPXHeader
    public var metadata: GPXMetadata
    public var waypoints: [GPXPoint]
    public var routes: [GPXRoute]
    public var tracks: [GPXTrack]
    public var extensions: GPXExtensions

    public init(
        header: GPXHeader = GPXHeader(), metadata: GPXMetadata = GPXMetadata(), waypoints: [GPXPoint] = [],
        routes: [GPXRoute] = [], tracks: [GPXTrack] = [], extensions: GPXExtensions = GPXExtensions()
    ) {
        self.header = header
        self.metadata = metadata
        self.waypoints = waypoints
        self.routes = routes
        self.tracks = tracks
        self.extensions = extensions
    }
}
