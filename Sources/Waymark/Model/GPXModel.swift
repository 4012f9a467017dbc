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
///
/// Known values are stored compactly (a presence mask and eight doubles), because a point is
/// copied several times on its way from reader to writer.
public struct GPXExtensions: Sendable, Hashable, Codable {
    // The values first: their 16-byte alignment then pads nothing (73 bytes, not 88).
    private var values = SIMD8<Double>(repeating: 0)
    private var present: UInt8 = 0

    /// Indices of the known values, in the order of the properties below.
    enum Field: Int {
        case heartRate, cadence, airTemperature, waterTemperature, depth, power, speed, course
    }

    @inline(__always)
    private func value(_ i: Int) -> Double? { present & (1 << i) != 0 ? values[i] : nil }

    @inline(__always)
    mutating func set(_ field: Field, _ v: Double) {
        present |= 1 << field.rawValue
        values[field.rawValue] = v
    }

    @inline(__always)
    private mutating func set(_ i: Int, _ v: Double?) {
        if let v {
            present |= 1 << i
            values[i] = v
        } else {
            present &= ~(1 << i)
            values[i] = 0
        }
    }

    /// Heart rate in beats per minute (Garmin TrackPointExtension `hr`).
    public var heartRate: Double? {
        get { value(0) }
        set { set(0, newValue) }
    }
    /// Cadence in revolutions per minute (`cad`).
    public var cadence: Double? {
        get { value(1) }
        set { set(1, newValue) }
    }
    /// Air temperature in degrees Celsius (`atemp`).
    public var airTemperature: Double? {
        get { value(2) }
        set { set(2, newValue) }
    }
    /// Water temperature in degrees Celsius (`wtemp`).
    public var waterTemperature: Double? {
        get { value(3) }
        set { set(3, newValue) }
    }
    /// Depth in metres (`depth`).
    public var depth: Double? {
        get { value(4) }
        set { set(4, newValue) }
    }
    /// Power in watts (Garmin PowerExtension `PowerInWatts`, or `power`).
    public var power: Double? {
        get { value(5) }
        set { set(5, newValue) }
    }
    /// Speed over ground in metres per second (TrackPointExtension v2 `speed`).
    public var speed: Double? {
        get { value(6) }
        set { set(6, newValue) }
    }
    /// Course in degrees from true north (TrackPointExtension v2 `course`).
    public var course: Double? {
        get { value(7) }
        set { set(7, newValue) }
    }
    /// Each child of `<extensions>`, serialised as a standalone XML element with the namespace
    /// declarations it needs.
    public var elements: [String] {
        get { storedElements ?? [] }
        set { storedElements = newValue.isEmpty ? nil : newValue }
        // In place: appending one element must not copy the others (quadratic with thousands).
        _modify {
            var list = storedElements ?? []
            storedElements = nil
            defer { storedElements = list.isEmpty ? nil : list }
            yield &list
        }
    }
    /// Nil when there are none: a point without extension elements then holds no reference, so
    /// that copying it (once per point, from reader to writer) takes no reference counting.
    private var storedElements: [String]?

    public init(elements: [String] = []) {
        self.elements = elements
    }

    private enum CodingKeys: String, CodingKey {
        case present, values, elements
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        present = try c.decode(UInt8.self, forKey: .present)
        values = try c.decode(SIMD8<Double>.self, forKey: .values)
        elements = try c.decode([String].self, forKey: .elements)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(present, forKey: .present)
        try c.encode(values, forKey: .values)
        try c.encode(elements, forKey: .elements)
    }

    /// The namespace given to extension elements that a file put in GPX's own namespace or in
    /// none, which GPX 1.1's schema does not allow inside `<extensions>`.
    public static let unqualifiedNamespace = "urn:waymark:gpx-extension-without-namespace"

    public var isEmpty: Bool { storedElements == nil && present == 0 }

    /// Whether it keeps elements verbatim (without them, ``elements`` is empty).
    var hasElements: Bool { storedElements != nil }

    /// Adds `other`'s elements after these, and its known values over these: a point with several
    /// `<extensions>` blocks (Apple Watch exports write one per sensor) keeps them all, as one.
    public mutating func merge(_ other: GPXExtensions) {
        for i in 0..<8 where other.present & (1 << i) != 0 { set(i, other.values[i]) }
        if let more = other.storedElements { elements.append(contentsOf: more) }
    }

    /// True when any value Waymark knows is present.
    public var hasKnownValues: Bool { present != 0 }
}

/// A waypoint, route point or track point (GPX `wptType`).
///
/// The fields most points have (position, elevation, time, extension values, and the fix,
/// satellites, DOPs, speed and course that receivers write with every point) are stored
/// inline; the rest (texts, links and rare numbers) live in a shared box that is allocated only
/// when one of them is set, so that points stay cheap to copy through streaming readers and
/// writers, and a logger's point takes no allocation at all.
public struct GPXPoint: Sendable, Hashable {
    // The stored properties are declared so that alignment pads little: a point is copied
    // several times on its way from reader to writer, and its size is what each copy costs.
    public var extensions = GPXExtensions()
    /// The common numeric details.
    private var numbers = InlineNumbers()
    /// Latitude and longitude, degrees WGS 84.
    public var coordinate: Coordinate
    /// Elevation in metres, as GPX gives it (normally above mean sea level).
    public var elevation: Double? {
        @inline(__always) get { numbers.elevation }
        @inline(__always) set { numbers.elevation = newValue }
    }
    /// The time of the fix, UTC.
    public var time: Date? {
        @inline(__always) get { numbers.time }
        @inline(__always) set { numbers.time = newValue }
    }
    /// `<src>`, which loggers write with every point (GPSLogger's "gps"); a short one takes
    /// no allocation.
    private var sourceText: String?
    /// The other details; its inline fields (``InlineNumbers``, the source) are always nil.
    private var box: DetailsBox?

    /// The less common fields of a point.
    public struct Details: Sendable, Hashable, Codable {
        public var magneticVariation: Double?
        public var geoidHeight: Double?
        public var name: String?
        public var comment: String?
        public var description: String?
        public var source: String?
        public var links: [GPXLink] = []
        public var symbol: String?
        public var type: String?
        public var fix: GPXFix?
        public var satellites: Int?
        public var hdop: Double?
        public var vdop: Double?
        public var pdop: Double?
        public var ageOfDGPSData: Double?
        public var dgpsStation: Int?
        public var speed: Double?
        public var course: Double?
        /// Metres: the horizontal and vertical accuracy an app wrote in its own extension
        /// (Apple Health's `<hAcc>`, `<vAcc>`); GPX itself has no accuracy.
        public var horizontalAccuracy: Double?
        public var verticalAccuracy: Double?
        /// Metres per second and degrees: the accuracy of the speed and of the course, where the
        /// source gives one (a gpsd capture's `eps` and `epd`).
        public var speedAccuracy: Double?
        public var courseAccuracy: Double?

        public init() {}
    }

    /// The details a receiver writes with every point: a presence mask, the fix, the count of
    /// satellites and eight numbers, stored without a reference.
    struct InlineNumbers: Sendable, Hashable {
        /// An absent value is 0, so that equal details compare equal.
        private var values = SIMD8<Double>(repeating: 0)
        /// The point's elevation and time (seconds since 2001), here for their presence bits:
        /// two optionals would take 16 bytes more.
        private var elevationValue = 0.0
        private var timeValue = 0.0
        private var satelliteCount = 0
        /// Bit i for `values[i]`, bit 8 for `satellites`, 9 for the elevation, 10 for the time.
        private var present: UInt16 = 0
        /// 0 when there is no fix, else 1 + its index in `GPXFix.allCases`.
        private var fixCode: UInt8 = 0

        enum Field: Int, CaseIterable {
            case magneticVariation, geoidHeight, hdop, vdop, pdop, ageOfDGPSData, speed, course
        }

        /// No detail set (the elevation and time are not details).
        var isEmpty: Bool { present & 0x1FF == 0 && fixCode == 0 }

        var elevation: Double? {
            @inline(__always) get { present & 0x200 != 0 ? elevationValue : nil }
            @inline(__always) set {
                if let newValue {
                    present |= 0x200
                    elevationValue = newValue
                } else {
                    present &= ~0x200
                    elevationValue = 0
                }
            }
        }

        var time: Date? {
            @inline(__always) get {
                present & 0x400 != 0 ? Date(timeIntervalSinceReferenceDate: timeValue) : nil
            }
            @inline(__always) set {
                if let newValue {
                    present |= 0x400
                    timeValue = newValue.timeIntervalSinceReferenceDate
                } else {
                    present &= ~0x400
                    timeValue = 0
                }
            }
        }

        @inline(__always)
        subscript(_ field: Field) -> Double? {
            get { present & (1 << field.rawValue) != 0 ? values[field.rawValue] : nil }
            set {
                if let newValue {
                    present |= 1 << field.rawValue
                    values[field.rawValue] = newValue
                } else {
                    present &= ~(1 << field.rawValue)
                    values[field.rawValue] = 0
                }
            }
        }

        var satellites: Int? {
            @inline(__always) get { present & 0x100 != 0 ? satelliteCount : nil }
            @inline(__always) set {
                if let newValue {
                    present |= 0x100
                    satelliteCount = newValue
                } else {
                    present &= ~0x100
                    satelliteCount = 0
                }
            }
        }

        var fix: GPXFix? {
            @inline(__always) get {
                switch fixCode {
                case 1: GPXFix.none
                case 2: .twoD
                case 3: .threeD
                case 4: .dgps
                case 5: .pps
                default: nil
                }
            }
            @inline(__always) set {
                switch newValue {
                case nil: fixCode = 0
                case GPXFix.none?: fixCode = 1
                case .twoD?: fixCode = 2
                case .threeD?: fixCode = 3
                case .dgps?: fixCode = 4
                case .pps?: fixCode = 5
                }
            }
        }

        /// Takes the inline fields out of `details`, leaving them nil there.
        init(takingFrom details: inout Details) {
            self[.magneticVariation] = details.magneticVariation
            self[.geoidHeight] = details.geoidHeight
            self[.hdop] = details.hdop
            self[.vdop] = details.vdop
            self[.pdop] = details.pdop
            self[.ageOfDGPSData] = details.ageOfDGPSData
            self[.speed] = details.speed
            self[.course] = details.course
            satellites = details.satellites
            fix = details.fix
            details.magneticVariation = nil
            details.geoidHeight = nil
            details.hdop = nil
            details.vdop = nil
            details.pdop = nil
            details.ageOfDGPSData = nil
            details.speed = nil
            details.course = nil
            details.satellites = nil
            details.fix = nil
        }

        init() {}

        /// Puts the inline fields into `details`.
        func fill(_ details: inout Details) {
            details.magneticVariation = self[.magneticVariation]
            details.geoidHeight = self[.geoidHeight]
            details.hdop = self[.hdop]
            details.vdop = self[.vdop]
            details.pdop = self[.pdop]
            details.ageOfDGPSData = self[.ageOfDGPSData]
            details.speed = self[.speed]
            details.course = self[.course]
            details.satellites = satellites
            details.fix = fix
        }
    }

    /// The details of a point that has texts, links or rare numbers, shared between its copies
    /// and never changed: a change makes a new box. Reading one field reads it through the
    /// reference, without copying the others.
    final class DetailsBox: Sendable, Hashable {
        let details: Details

        init(_ details: consuming Details) { self.details = details }

        static func == (a: DetailsBox, b: DetailsBox) -> Bool { a === b || a.details == b.details }
        func hash(into hasher: inout Hasher) { details.hash(into: &hasher) }
    }

    /// Every field other than position, elevation, time and extensions.
    public var details: Details {
        get {
            var d = box?.details ?? Details()
            numbers.fill(&d)
            d.source = sourceText
            return d
        }
        set { store(newValue) }
        // The value leaves the box for the change: once the box is released, a point's arrays
        // (its links) are not shared, so they are not copied on each append, which made a
        // point with many links quadratic.
        _modify {
            var d = box?.details ?? Details()
            box = nil
            numbers.fill(&d)
            d.source = sourceText
            defer { store(d) }
            yield &d
        }
    }

    /// Splits `details` into the inline numbers and the box (nil when it would be empty).
    private mutating func store(_ details: consuming Details) {
        var rest = details
        let (elevation, time) = (numbers.elevation, numbers.time)
        numbers = InlineNumbers(takingFrom: &rest)
        numbers.elevation = elevation
        numbers.time = time
        sourceText = rest.source
        rest.source = nil
        box = rest == Details() ? nil : DetailsBox(rest)
    }

    public init(coordinate: Coordinate) {
        self.coordinate = coordinate
    }

    /// Sets the boxed details (texts, links, rare numbers) from `d`, which has none of the
    /// inline ones (numbers, source) set; `nonEmpty` when the caller knows it has a field set, which spares the
    /// comparison with empty details.
    @inline(__always)
    mutating func setBoxedDetails(_ d: consuming Details, nonEmpty: Bool) {
        box = nonEmpty || d != Details() ? DetailsBox(d) : nil
    }

    /// Sets one of the inline numbers (the readers' fast path).
    @inline(__always)
    mutating func setNumber(_ field: InlineNumbers.Field, _ value: Double) {
        numbers[field] = value
    }

    public init(latitude: Double, longitude: Double, elevation: Double? = nil, time: Date? = nil) {
        self.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        self.elevation = elevation
        self.time = time
    }

    /// True when no field beyond position, elevation, time and extensions is set.
    public var hasDetails: Bool { box != nil || !numbers.isEmpty || sourceText != nil }

    /// Magnetic variation in degrees.
    public var magneticVariation: Double? {
        get { numbers[.magneticVariation] }
        set { numbers[.magneticVariation] = newValue }
    }
    /// Height of the geoid above the WGS 84 ellipsoid, metres.
    public var geoidHeight: Double? {
        get { numbers[.geoidHeight] }
        set { numbers[.geoidHeight] = newValue }
    }
    public var name: String? {
        get { box?.details.name }
        set { details.name = newValue }
    }
    public var comment: String? {
        get { box?.details.comment }
        set { details.comment = newValue }
    }
    public var description: String? {
        get { box?.details.description }
        set { details.description = newValue }
    }
    public var source: String? {
        get { sourceText }
        set { sourceText = newValue }
    }
    public var links: [GPXLink] {
        get { box?.details.links ?? [] }
        set { details.links = newValue }
        _modify { yield &details.links }
    }
    public var symbol: String? {
        get { box?.details.symbol }
        set { details.symbol = newValue }
    }
    public var type: String? {
        get { box?.details.type }
        set { details.type = newValue }
    }
    public var fix: GPXFix? {
        get { numbers.fix }
        set { numbers.fix = newValue }
    }
    /// Satellites used for the fix.
    public var satellites: Int? {
        get { numbers.satellites }
        set { numbers.satellites = newValue }
    }
    /// Horizontal, vertical and position dilution of precision (unitless).
    public var hdop: Double? {
        get { numbers[.hdop] }
        set { numbers[.hdop] = newValue }
    }
    public var vdop: Double? {
        get { numbers[.vdop] }
        set { numbers[.vdop] = newValue }
    }
    public var pdop: Double? {
        get { numbers[.pdop] }
        set { numbers[.pdop] = newValue }
    }
    /// Seconds since the last DGPS update.
    public var ageOfDGPSData: Double? {
        get { numbers[.ageOfDGPSData] }
        set { numbers[.ageOfDGPSData] = newValue }
    }
    public var dgpsStation: Int? {
        get { box?.details.dgpsStation }
        set { details.dgpsStation = newValue }
    }
    /// Speed in metres per second, from GPX 1.0 `<speed>`.
    public var speed: Double? {
        get { numbers[.speed] }
        set { numbers[.speed] = newValue }
    }
    /// Course in degrees from true north, from GPX 1.0 `<course>`.
    public var course: Double? {
        get { numbers[.course] }
        set { numbers[.course] = newValue }
    }
    /// Metres: the point's own horizontal accuracy, from an app's extension (Apple Health's
    /// `<hAcc>`).
    public var horizontalAccuracy: Double? {
        get { box?.details.horizontalAccuracy }
        set { details.horizontalAccuracy = newValue }
    }
    /// Metres: its own vertical accuracy (Apple Health's `<vAcc>`).
    public var verticalAccuracy: Double? {
        get { box?.details.verticalAccuracy }
        set { details.verticalAccuracy = newValue }
    }
    /// Metres per second: the accuracy of its speed (a gpsd capture's `eps`).
    public var speedAccuracy: Double? {
        get { box?.details.speedAccuracy }
        set { details.speedAccuracy = newValue }
    }
    /// Degrees: the accuracy of its course (a gpsd capture's `epd`).
    public var courseAccuracy: Double? {
        get { box?.details.courseAccuracy }
        set { details.courseAccuracy = newValue }
    }
}

extension GPXPoint: Codable {
    // Encoded as the struct was when every detail lived in one box, itself encoded as the
    // enum it once was (`case details(Details)`): points encoded by earlier versions decode.
    private enum CodingKeys: String, CodingKey { case coordinate, elevation, time, extensions, box }
    private enum BoxKeys: String, CodingKey { case details }
    private enum PayloadKeys: String, CodingKey { case _0 }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        coordinate = try c.decode(Coordinate.self, forKey: .coordinate)
        elevation = try c.decodeIfPresent(Double.self, forKey: .elevation)
        time = try c.decodeIfPresent(Date.self, forKey: .time)
        extensions = try c.decode(GPXExtensions.self, forKey: .extensions)
        if c.contains(.box), try !c.decodeNil(forKey: .box) {
            let payload = try c.nestedContainer(keyedBy: BoxKeys.self, forKey: .box)
                .nestedContainer(keyedBy: PayloadKeys.self, forKey: .details)
            store(try payload.decode(Details.self, forKey: ._0))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(coordinate, forKey: .coordinate)
        try c.encodeIfPresent(elevation, forKey: .elevation)
        try c.encodeIfPresent(time, forKey: .time)
        try c.encode(extensions, forKey: .extensions)
        if hasDetails {
            var box = c.nestedContainer(keyedBy: BoxKeys.self, forKey: .box)
            var payload = box.nestedContainer(keyedBy: PayloadKeys.self, forKey: .details)
            try payload.encode(details, forKey: ._0)
        }
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
    /// The author's address, `id@domain` (GPX 1.1 splits it into two attributes).
    public var authorEmail: String?
    public var authorLink: GPXLink?
    /// The copyright holder (GPX `copyright author`).
    public var copyrightHolder: String?
    public var copyrightYear: Int?
    /// A link to the licence.
    public var copyrightLicense: String?
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
