#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One fix, as CoreLocation's `CLLocation` models it.
///
/// As in CoreLocation, a negative accuracy, speed or course means "invalid", and a
/// `verticalAccuracy` of zero or less means the altitudes are invalid.
///
/// A location is a value. Its fields live in one shared, copy-on-write box, so that handing a
/// fix on (from the source to the rules, the audit record, the app and the outputs, several
/// times for every fix) copies a reference, not some two hundred bytes; a change to one copy
/// never shows in another.
public struct Location: Sendable, Hashable, Codable, CustomReflectable {
    /// Latitude and longitude, degrees WGS 84.
    public var coordinate: Coordinate {
        get { storage.fields.coordinate }
        set { unique().fields.coordinate = newValue }
    }
    /// Metres above mean sea level; valid when ``verticalAccuracy`` > 0.
    public var altitude: Double {
        get { storage.fields.altitude }
        set { unique().fields.altitude = newValue }
    }
    /// Metres above the WGS 84 ellipsoid; nil when the source gives no geoid separation
    /// (CoreLocation always reports one; a GPX file often cannot).
    public var ellipsoidalAltitude: Double? {
        get { storage.fields.ellipsoidalAltitude }
        set { unique().fields.ellipsoidalAltitude = newValue }
    }
    /// Radius of uncertainty of the coordinate in metres; negative when the coordinate is invalid.
    public var horizontalAccuracy: Double {
        get { storage.fields.horizontalAccuracy }
        set { unique().fields.horizontalAccuracy = newValue }
    }
    /// Uncertainty of the altitudes in metres; zero or negative when they are invalid.
    public var verticalAccuracy: Double {
        get { storage.fields.verticalAccuracy }
        set { unique().fields.verticalAccuracy = newValue }
    }
    /// Metres per second over ground; negative when invalid.
    public var speed: Double {
        get { storage.fields.speed }
        set { unique().fields.speed = newValue }
    }
    /// Metres per second; negative when invalid.
    public var speedAccuracy: Double {
        get { storage.fields.speedAccuracy }
        set { unique().fields.speedAccuracy = newValue }
    }
    /// Degrees from true north, 0..<360; negative when invalid.
    public var course: Double {
        get { storage.fields.course }
        set { unique().fields.course = newValue }
    }
    /// Degrees; negative when invalid.
    public var courseAccuracy: Double {
        get { storage.fields.courseAccuracy }
        set { unique().fields.courseAccuracy = newValue }
    }
    /// The time of the fix.
    public var timestamp: Date {
        get { storage.fields.timestamp }
        set { unique().fields.timestamp = newValue }
    }
    /// Where the fix came from and how good the receiver said it was.
    ///
    /// Lent in place, not copied: reading one of its fields (`location.provenance.fixMode`, for
    /// every fix of a replay) or changing one touches neither its file's name nor its faults.
    public var provenance: Provenance {
        _read { yield storage.fields.provenance }
        _modify { yield &unique().fields.provenance }
    }

    /// The fields, shared by copies until one of them changes.
    private var storage: Storage

    public init(
        coordinate: Coordinate, altitude: Double = 0, ellipsoidalAltitude: Double? = nil,
        horizontalAccuracy: Double, verticalAccuracy: Double = -1, speed: Double = -1, speedAccuracy: Double = -1,
        course: Double = -1, courseAccuracy: Double = -1, timestamp: Date, provenance: Provenance
    ) {
        storage = Storage(
            fields: Fields(
                coordinate: coordinate, altitude: altitude, ellipsoidalAltitude: ellipsoidalAltitude,
                horizontalAccuracy: horizontalAccuracy, verticalAccuracy: verticalAccuracy, speed: speed,
                speedAccuracy: speedAccuracy, course: course, courseAccuracy: courseAccuracy, timestamp: timestamp,
                provenance: provenance))
    }

    /// A location of `fields`, boxed where it is made: a replay lays its fixes out as fields, on a
    /// thread of its own, and boxes each on the device's thread, which frees it (memory freed on
    /// the thread that took it is taken again without a lock).
    @inline(__always)
    init(fields: consuming Fields) {
        storage = Storage(fields: fields)
    }

    /// The fields, read in place; changing them gives this copy a box of its own first.
    var fields: Fields {
        _read { yield storage.fields }
        _modify { yield &unique().fields }
    }

    /// True when the altitudes are usable (`verticalAccuracy` > 0).
    public var hasValidAltitude: Bool { storage.fields.hasValidAltitude }

    /// The box, this copy's own before it is changed.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The fields of a location, as one value.
    struct Fields: Sendable {
        var coordinate: Coordinate
        var altitude: Double
        var ellipsoidalAltitude: Double?
        var horizontalAccuracy: Double
        var verticalAccuracy: Double
        var speed: Double
        var speedAccuracy: Double
        var course: Double
        var courseAccuracy: Double
        var timestamp: Date
        var provenance: Provenance

        /// True when the altitudes are usable (`verticalAccuracy` > 0).
        var hasValidAltitude: Bool { verticalAccuracy > 0 }
    }

    /// The box of a location's fields.
    ///
    /// `@unchecked Sendable`: a box is changed only through ``Location/unique()``, that is only
    /// while a single value refers to it; a box that copies share is never changed, so no lock
    /// is needed.
    ///
    /// Its fields skip dynamic exclusivity checks (read for every field of every fix): they are
    /// changed only in place through `unique()`, while this copy alone refers to the box.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var fields: Fields

        @inline(__always)
        init(fields: consuming Fields) { self.fields = fields }

        func copy() -> Storage { Storage(fields: fields) }
    }
}

// The conformances a struct of these fields would have: equal when every field is (so a NaN
// field makes a location unequal even to itself, as before), hashed field by field, and coded
// under the fields' names.
extension Location {
    public static func == (a: Location, b: Location) -> Bool {
        let x = a.storage.fields
        let y = b.storage.fields
        return x.coordinate == y.coordinate && x.altitude == y.altitude
            && x.ellipsoidalAltitude == y.ellipsoidalAltitude && x.horizontalAccuracy == y.horizontalAccuracy
            && x.verticalAccuracy == y.verticalAccuracy && x.speed == y.speed && x.speedAccuracy == y.speedAccuracy
            && x.course == y.course && x.courseAccuracy == y.courseAccuracy && x.timestamp == y.timestamp
            && x.provenance == y.provenance
    }

    public func hash(into hasher: inout Hasher) {
        let x = storage.fields
        hasher.combine(x.coordinate)
        hasher.combine(x.altitude)
        hasher.combine(x.ellipsoidalAltitude)
        hasher.combine(x.horizontalAccuracy)
        hasher.combine(x.verticalAccuracy)
        hasher.combine(x.speed)
        hasher.combine(x.speedAccuracy)
        hasher.combine(x.course)
        hasher.combine(x.courseAccuracy)
        hasher.combine(x.timestamp)
        hasher.combine(x.provenance)
    }

    /// The fields, as a struct of them would show in `print`, `dump` and test failures.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "coordinate": coordinate, "altitude": altitude, "ellipsoidalAltitude": ellipsoidalAltitude as Any,
                "horizontalAccuracy": horizontalAccuracy, "verticalAccuracy": verticalAccuracy, "speed": speed,
                "speedAccuracy": speedAccuracy, "course": course, "courseAccuracy": courseAccuracy,
                "timestamp": timestamp, "provenance": provenance,
            ], displayStyle: .struct)
    }

    private enum CodingKeys: String, CodingKey {
        case coordinate, altitude, ellipsoidalAltitude, horizontalAccuracy, verticalAccuracy, speed, speedAccuracy
        case course, courseAccuracy, timestamp, provenance
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            coordinate: try c.decode(Coordinate.self, forKey: .coordinate),
            altitude: try c.decode(Double.self, forKey: .altitude),
            ellipsoidalAltitude: try c.decodeIfPresent(Double.self, forKey: .ellipsoidalAltitude),
            horizontalAccuracy: try c.decode(Double.self, forKey: .horizontalAccuracy),
            verticalAccuracy: try c.decode(Double.self, forKey: .verticalAccuracy),
            speed: try c.decode(Double.self, forKey: .speed),
            speedAccuracy: try c.decode(Double.self, forKey: .speedAccuracy),
            course: try c.decode(Double.self, forKey: .course),
            courseAccuracy: try c.decode(Double.self, forKey: .courseAccuracy),
            timestamp: try c.decode(Date.self, forKey: .timestamp),
            provenance: try c.decode(Provenance.self, forKey: .provenance))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let x = storage.fields
        try c.encode(x.coordinate, forKey: .coordinate)
        try c.encode(x.altitude, forKey: .altitude)
        try c.encodeIfPresent(x.ellipsoidalAltitude, forKey: .ellipsoidalAltitude)
        try c.encode(x.horizontalAccuracy, forKey: .horizontalAccuracy)
        try c.encode(x.verticalAccuracy, forKey: .verticalAccuracy)
        try c.encode(x.speed, forKey: .speed)
        try c.encode(x.speedAccuracy, forKey: .speedAccuracy)
        try c.encode(x.course, forKey: .course)
        try c.encode(x.courseAccuracy, forKey: .courseAccuracy)
        try c.encode(x.timestamp, forKey: .timestamp)
        try c.encode(x.provenance, forKey: .provenance)
    }
}

/// Where a ``Location`` came from.
public struct Provenance: Sendable, Hashable, Codable {
    /// The origin of a fix.
    public enum Source: Sendable, Hashable, Codable {
        /// A live receiver behind gpsd.
        case gpsd(device: String)
        /// A recorded trace: the file and the point's index in it (0-based, in document order).
        case file(path: String, index: Int)
    }

    /// How many dimensions the receiver solved for.
    public enum FixMode: String, Sendable, Hashable, Codable, CaseIterable {
        case none, twoD, threeD
    }

    /// Corrections the receiver applied.
    public enum Differential: String, Sendable, Hashable, Codable, CaseIterable {
        case none, dgps, rtkFloat, rtkFixed
    }

    /// The file or device the fix came from.
    public var source: Source {
        get { origin.source }
        set { origin = Origin(newValue) }
    }
    /// ``source``, held without a reference: copying a provenance (several times for every fix
    /// of a replay) then copies bytes and counts no reference. The store reads it for every fix
    /// to tell whether the file or device changed, without reading the name.
    package var origin: Origin

    /// The point's index in its file, or 0 for a live fix.
    var fileIndex: Int { origin.isFile ? origin.index : 0 }
    /// True for fixes that software made up or replayed, as CoreLocation's
    /// `sourceInformation.isSimulatedBySoftware`.
    public var isSimulatedBySoftware: Bool
    public var fixMode: FixMode
    public var satellitesUsed: Int?
    /// Dilutions of precision, unitless.
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    public var differential: Differential
    /// True when speed was computed from neighbouring points rather than given by the source.
    public var speedIsDerived: Bool
    /// True when course was computed from neighbouring points rather than given by the source.
    public var courseIsDerived: Bool
    /// A fix made bad on purpose (`--degrade`): how far from the truth, and why.
    public var degradation: Degradation?

    /// A fix degraded by a ``TraceDegrader``: its horizontal distance from the truth in metres,
    /// and the models beyond the noise that acted on it (`multipath`, `jump`, `drift`,
    /// `clockRepeat`, `clockBackward`, `clockLate`).
    public struct Degradation: Sendable, Hashable, Codable {
        public var error: Double
        public var faults: [String]

        public init(error: Double, faults: [String] = []) {
            self.error = error
            self.faults = faults
        }
    }

    public init(
        source: Source, isSimulatedBySoftware: Bool, fixMode: FixMode, satellitesUsed: Int? = nil, hdop: Double? = nil,
        vdop: Double? = nil, pdop: Double? = nil, differential: Differential = .none, speedIsDerived: Bool = false,
        courseIsDerived: Bool = false, degradation: Degradation? = nil
    ) {
        self.init(
            origin: Origin(source), isSimulatedBySoftware: isSimulatedBySoftware, fixMode: fixMode,
            satellitesUsed: satellitesUsed, hdop: hdop, vdop: vdop, pdop: pdop, differential: differential,
            speedIsDerived: speedIsDerived, courseIsDerived: courseIsDerived, degradation: degradation)
    }

    /// A provenance whose source is already an ``Origin``: a replay names its file once, not for
    /// every point.
    @inline(__always)
    init(
        origin: Origin, isSimulatedBySoftware: Bool, fixMode: FixMode, satellitesUsed: Int?, hdop: Double?,
        vdop: Double?, pdop: Double?, differential: Differential, speedIsDerived: Bool, courseIsDerived: Bool,
        degradation: Degradation?
    ) {
        self.degradation = degradation
        self.origin = origin
        self.isSimulatedBySoftware = isSimulatedBySoftware
        self.fixMode = fixMode
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.differential = differential
        self.speedIsDerived = speedIsDerived
        self.courseIsDerived = courseIsDerived
    }
}

extension Provenance {
    /// A ``Provenance/Source`` without a reference: whether it is a file, its file's or device's
    /// name as a number that ``OriginNames`` gives, and the point's index in its file.
    package struct Origin: Sendable, Hashable {
        package var isFile: Bool
        package var name: UInt32
        /// The point's index in its file; 0 for a device.
        package var index: Int

        @inline(__always)
        init(isFile: Bool, name: UInt32, index: Int) {
            self.isFile = isFile
            self.name = name
            self.index = index
        }

        init(_ source: Source) {
            switch source {
            case .gpsd(let device): self.init(isFile: false, name: OriginNames.number(for: device), index: 0)
            case .file(let path, let index): self.init(isFile: true, name: OriginNames.number(for: path), index: index)
            }
        }

        /// The `index`-th point of the file named by `name`.
        @inline(__always)
        static func file(_ name: UInt32, index: Int) -> Origin { Origin(isFile: true, name: name, index: index) }

        var source: Source {
            let text = OriginNames.name(name)
            return isFile ? .file(path: text, index: index) : .gpsd(device: text)
        }
    }
}

/// The names of the files and devices that fixes came from, each given a number the first time
/// it is seen and kept for the life of the process (a process reads few files and devices).
///
/// Names are told apart by their bytes, as Linux's file systems tell file names apart: the two
/// spellings of an accented name (composed, decomposed) are two names, and a provenance of one is
/// not equal to a provenance of the other.
enum OriginNames {
    private static let table = Table()

    /// The number of `name`, given now if it has none yet.
    static func number(for name: String) -> UInt32 { table.number(for: name) }

    /// The name numbered `number`.
    static func name(_ number: UInt32) -> String { table.name(number) }

    /// `@unchecked Sendable`: `gate` guards `numbers` and `names`.
    private final class Table: @unchecked Sendable {
        /// A name, hashed and compared by its UTF-8 bytes.
        private struct Key: Hashable {
            var text: String

            static func == (a: Key, b: Key) -> Bool {
                var a = a.text
                var b = b.text
                return a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
            }

            func hash(into hasher: inout Hasher) {
                var text = self.text
                text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }

        private let gate = ThreadGate()
        private var numbers: [Key: UInt32] = [:]
        private var names: [String] = []

        func number(for name: String) -> UInt32 {
            gate.locked {
                if let n = numbers[Key(text: name)] { return n }
                let n = UInt32(names.count)
                names.append(name)
                numbers[Key(text: name)] = n
                return n
            }
        }

        func name(_ number: UInt32) -> String {
            gate.locked { names[Int(number)] }
        }
    }
}

// Coded and shown as before the source became a number: under the fields' names, with the
// source as a ``Provenance/Source``.
extension Provenance: CustomReflectable {
    private enum CodingKeys: String, CodingKey {
        case source, isSimulatedBySoftware, fixMode, satellitesUsed, hdop, vdop, pdop, differential
        case speedIsDerived, courseIsDerived, degradation
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            source: try c.decode(Source.self, forKey: .source),
            isSimulatedBySoftware: try c.decode(Bool.self, forKey: .isSimulatedBySoftware),
            fixMode: try c.decode(FixMode.self, forKey: .fixMode),
            satellitesUsed: try c.decodeIfPresent(Int.self, forKey: .satellitesUsed),
            hdop: try c.decodeIfPresent(Double.self, forKey: .hdop),
            vdop: try c.decodeIfPresent(Double.self, forKey: .vdop),
            pdop: try c.decodeIfPresent(Double.self, forKey: .pdop),
            differential: try c.decode(Differential.self, forKey: .differential),
            speedIsDerived: try c.decode(Bool.self, forKey: .speedIsDerived),
            courseIsDerived: try c.decode(Bool.self, forKey: .courseIsDerived),
            degradation: try c.decodeIfPresent(Degradation.self, forKey: .degradation))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(source, forKey: .source)
        try c.encode(isSimulatedBySoftware, forKey: .isSimulatedBySoftware)
        try c.encode(fixMode, forKey: .fixMode)
        try c.encodeIfPresent(satellitesUsed, forKey: .satellitesUsed)
        try c.encodeIfPresent(hdop, forKey: .hdop)
        try c.encodeIfPresent(vdop, forKey: .vdop)
        try c.encodeIfPresent(pdop, forKey: .pdop)
        try c.encode(differential, forKey: .differential)
        try c.encode(speedIsDerived, forKey: .speedIsDerived)
        try c.encode(courseIsDerived, forKey: .courseIsDerived)
        try c.encodeIfPresent(degradation, forKey: .degradation)
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "source": source, "isSimulatedBySoftware": isSimulatedBySoftware, "fixMode": fixMode,
                "satellitesUsed": satellitesUsed as Any, "hdop": hdop as Any, "vdop": vdop as Any, "pdop": pdop as Any,
                "differential": differential, "speedIsDerived": speedIsDerived, "courseIsDerived": courseIsDerived,
                "degradation": degradation as Any,
            ], displayStyle: .struct)
    }
}

/// How GPX points become ``Location``s.
///
/// A point whose extensions carry its own accuracy (Apple Health's `<hAcc>`, `<vAcc>`) keeps it.
/// Otherwise GPX gives dilutions of precision, not accuracies. An accuracy is the DOP times an assumed
/// user equivalent range error (UERE): `horizontalAccuracy = hdop × uere` (falling back to
/// `pdop × uere`), `verticalAccuracy = vdop × uere`. Without a DOP the defaults apply. A point
/// without `<ele>` has an invalid altitude (`verticalAccuracy` −1). `geoidheight`, when present,
/// gives the ellipsoidal altitude as `ele + geoidheight`.
///
/// The `fix` element sets the fix mode (`none`, `2d`, else 3D; `dgps` also sets the differential
/// mode). Without it, a point with an elevation counts as 3D and one without as 2D.
///
/// Speed and course come from GPX 1.0 `<speed>`/`<course>` or a TrackPointExtension v2;
/// otherwise they are left invalid here and derived from neighbouring points by the replay
/// schedule, which marks them as derived.
public struct GPXLocationMapping: Sendable, Hashable {
    /// Metres; the user equivalent range error multiplied with DOPs. 5 m suits consumer receivers.
    public var uere: Double
    /// Metres, when a point has no HDOP or PDOP.
    public var defaultHorizontalAccuracy: Double
    /// Metres, when a point with an elevation has no VDOP.
    public var defaultVerticalAccuracy: Double

    public init(uere: Double = 5, defaultHorizontalAccuracy: Double = 10, defaultVerticalAccuracy: Double = 15) {
        self.uere = uere
        self.defaultHorizontalAccuracy = defaultHorizontalAccuracy
        self.defaultVerticalAccuracy = defaultVerticalAccuracy
    }

    public static let `default` = GPXLocationMapping()

    /// The location for `point`, the `index`-th point of `file`, fixed at `timestamp`.
    public func location(for point: GPXPoint, file: String, index: Int, timestamp: Date) -> Location {
        withUnsafePointer(to: point) {
            location(forPointAt: $0, file: OriginNames.number(for: file), index: index, timestamp: timestamp)
        }
    }

    /// ``location(for:file:index:timestamp:)`` for the point at `p`, read where it lies: the
    /// replay's timeline reads every point where its reader put it (loading it whole would copy
    /// it).
    ///
    /// `file` is the file's number from ``OriginNames``.
    @inline(__always)
    func location(forPointAt p: UnsafePointer<GPXPoint>, file: UInt32, index: Int, timestamp: Date) -> Location {
        Location(fields: fields(forPointAt: p, file: file, index: index, timestamp: timestamp))
    }

    /// The fields of ``location(forPointAt:file:index:timestamp:)``, not yet boxed: what the
    /// replay's timeline lays out.
    @inline(__always)
    func fields(forPointAt p: UnsafePointer<GPXPoint>, file: UInt32, index: Int, timestamp: Date) -> Location.Fields {
        let horizontal: Double
        if let own = p.pointee.horizontalAccuracy, own >= 0 {
            horizontal = own  // the file's own accuracy beats the DOP model
        } else if let hdop = p.pointee.hdop, hdop >= 0 {
            horizontal = hdop * uere
        } else if let pdop = p.pointee.pdop, pdop >= 0 {
            horizontal = pdop * uere
        } else {
            horizontal = defaultHorizontalAccuracy
        }
        var vertical = -1.0
        if p.pointee.elevation != nil {
            if let own = p.pointee.verticalAccuracy, own > 0 {
                vertical = own
            } else if let vdop = p.pointee.vdop, vdop > 0 {
                vertical = vdop * uere
            } else {
                vertical = defaultVerticalAccuracy
            }
        }
        let fixMode: Provenance.FixMode
        switch p.pointee.fix {
        case .none?: fixMode = .none
        case .twoD?: fixMode = .twoD
        case .threeD?, .dgps?, .pps?: fixMode = .threeD
        case nil: fixMode = p.pointee.elevation == nil ? .twoD : .threeD
        }
        if fixMode != .threeD { vertical = -1 }
        let speed = p.pointee.speed ?? p.pointee.extensions.speed
        let course = p.pointee.course ?? p.pointee.extensions.course
        let elevation = p.pointee.elevation ?? 0
        return Location.Fields(
            coordinate: p.pointee.coordinate,
            altitude: elevation,
            ellipsoidalAltitude: p.pointee.elevation.flatMap { e in p.pointee.geoidHeight.map { e + $0 } },
            horizontalAccuracy: fixMode == .none ? -1 : horizontal,
            verticalAccuracy: vertical,
            speed: speed.map { $0 >= 0 ? $0 : -1 } ?? -1, speedAccuracy: -1,
            course: course.map { $0 >= 0 && $0 < 360 ? $0 : -1 } ?? -1, courseAccuracy: -1,
            timestamp: timestamp,
            provenance: Provenance(
                origin: .file(file, index: index), isSimulatedBySoftware: true, fixMode: fixMode,
                satellitesUsed: p.pointee.satellites, hdop: p.pointee.hdop, vdop: p.pointee.vdop, pdop: p.pointee.pdop,
                differential: p.pointee.fix == .dgps ? .dgps : .none, speedIsDerived: false, courseIsDerived: false,
                // Only an element kept verbatim (`<waymark:truth>`) says how a point was degraded.
                degradation: p.pointee.extensions.hasElements ? DegradingReader.degradation(of: p.pointee) : nil))
    }
}

extension GPXLocationMapping {
    /// The GPX point that records `location`: the inverse of ``location(for:file:index:timestamp:)``
    /// as far as GPX can say it.
    ///
    /// The elevation is written when the altitude is valid, the geoid height when the ellipsoidal
    /// altitude is known, the fix from the fix mode (`dgps` for a differential 3D fix), the
    /// receiver's satellites and DOPs when it gave them, and a valid speed and course (which a
    /// GPX 1.1 writer puts in a TrackPointExtension v2). GPX has no place for accuracies, so they
    /// are not written.
    public func point(for location: Location) -> GPXPoint {
        var point = GPXPoint(coordinate: location.coordinate)
        point.time = location.timestamp
        if location.hasValidAltitude {
            point.elevation = location.altitude
            if let e = location.ellipsoidalAltitude { point.geoidHeight = e - location.altitude }
        }
        let p = location.provenance
        switch p.fixMode {
        case .none: point.fix = GPXFix.none
        case .twoD: point.fix = .twoD
        case .threeD: point.fix = p.differential == .none ? .threeD : .dgps
        }
        point.satellites = p.satellitesUsed
        point.hdop = p.hdop
        point.vdop = p.vdop
        point.pdop = p.pdop
        if location.speed >= 0 { point.speed = location.speed }
        if location.course >= 0 { point.course = location.course }
        return point
    }
}

extension Sequence<StoredLocation> {
    /// The locations as the reader events of a GPX document with one track named `name`, a
    /// segment per segment number: what the GPX, GeoJSON and text writers take.
    public func forEachGPXEvent(
        name: String, creator: String = "Waymark", mapping: GPXLocationMapping = .default,
        _ body: (GPXEvent) throws -> Void
    ) throws {
        try body(.header(GPXHeader(version: "1.1", creator: creator)))
        let info = GPXPathInfo(name: name)
        try body(.trackStart(info))
        var segment: Int?
        for stored in self {
            if segment != stored.segment {
                if segment != nil { try body(.segmentEnd(GPXExtensions())) }
                try body(.segmentStart)
                segment = stored.segment
            }
            try body(.trackPoint(mapping.point(for: stored.location)))
        }
        if segment != nil { try body(.segmentEnd(GPXExtensions())) }
        try body(.trackEnd(info))
    }
}
