import Waymark

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One TPV report from gpsd, as values: nil where gpsd left a field out.
///
/// It is what crosses from the thread that owns libgps to the rest of Waymark.
public struct GPSDReport: Sendable, Hashable {
    /// The device that produced it (`/dev/ttyUSB0`, a pty under gpsfake).
    public var device: String
    /// 0 not seen, 1 no fix, 2 two-dimensional, 3 three-dimensional.
    public var mode: Int
    /// gpsd's fix status: 0 unknown, 1 fix, 2 DGPS, 3 RTK fixed, 4 RTK float, 5 dead reckoning…
    /// 8 simulated (``isSimulated``).
    public var status: Int
    /// The fix time (UTC).
    public var time: Date?
    /// Degrees, WGS 84.
    public var latitude: Double?
    public var longitude: Double?
    /// Metres above the WGS 84 ellipsoid (`altHAE`).
    public var altitudeHAE: Double?
    /// Metres above mean sea level (`altMSL`).
    public var altitudeMSL: Double?
    /// Metres, horizontal position error (gpsd: about 95 % confidence).
    public var eph: Double?
    /// Metres, longitude and latitude errors, when `eph` is missing.
    public var epx: Double?
    public var epy: Double?
    /// Metres, vertical error.
    public var epv: Double?
    /// Metres per second over ground, and its error.
    public var speed: Double?
    public var eps: Double?
    /// Degrees from true north, and its error.
    public var track: Double?
    public var epd: Double?
    /// From the last SKY report.
    public var satellitesUsed: Int?
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?

    /// Whether gpsd says the receiver is in simulation mode (status 8, `STATUS_SIM`: an NMEA
    /// receiver's GGA quality 8 or mode indicator `S`): the position is a simulator's.
    public var isSimulated: Bool { status == 8 }

    public init(
        device: String = "", mode: Int, status: Int = 0, time: Date? = nil, latitude: Double? = nil,
        longitude: Double? = nil, altitudeHAE: Double? = nil, altitudeMSL: Double? = nil, eph: Double? = nil,
        epx: Double? = nil, epy: Double? = nil, epv: Double? = nil, speed: Double? = nil, eps: Double? = nil,
        track: Double? = nil, epd: Double? = nil, satellitesUsed: Int? = nil, hdop: Double? = nil,
        vdop: Double? = nil, pdop: Double? = nil
    ) {
        self.device = device
        self.mode = mode
        self.status = status
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeHAE = altitudeHAE
        self.altitudeMSL = altitudeMSL
        self.eph = eph
        self.epx = epx
        self.epy = epy
        self.epv = epv
        self.speed = speed
        self.eps = eps
        self.track = track
        self.epd = epd
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
    }

    /// Whether this is a fix: mode 2 or 3, a valid position and a time.
    public var isFix: Bool {
        guard mode >= 2, let latitude, let longitude, time != nil else { return false }
        return Coordinate(latitude: latitude, longitude: longitude).isValid
    }

    /// The optional values the report carries, for judging how complete it is.
    public var fields: Fields {
        var f: Fields = []
        if altitudeMSL != nil || altitudeHAE != nil { f.insert(.altitude) }
        if eph != nil || (epx != nil && epy != nil) { f.insert(.horizontalError) }
        if epv != nil { f.insert(.verticalError) }
        if speed != nil { f.insert(.speed) }
        if eps != nil { f.insert(.speedError) }
        if track != nil { f.insert(.track) }
        if epd != nil { f.insert(.trackError) }
        return f
    }

    /// Optional parts of a report.
    public struct Fields: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let altitude = Fields(rawValue: 1 << 0)
        public static let horizontalError = Fields(rawValue: 1 << 1)
        public static let verticalError = Fields(rawValue: 1 << 2)
        public static let speed = Fields(rawValue: 1 << 3)
        public static let speedError = Fields(rawValue: 1 << 4)
        public static let track = Fields(rawValue: 1 << 5)
        public static let trackError = Fields(rawValue: 1 << 6)
        static let all: [Fields] = [
            .altitude, .horizontalError, .verticalError, .speed, .speedError, .track, .trackError,
        ]
    }
}

/// How a gpsd report becomes a ``Location`` (DESIGN §2).
///
/// - A fix needs mode 2 or 3, a position and a time; anything else is "no fix", which the
///   manager reports as `locationUnknown`.
/// - `altMSL` → `altitude`, `altHAE` → `ellipsoidalAltitude`; in 2D the altitudes are invalid
///   (`verticalAccuracy` −1).
/// - `epv` → `verticalAccuracy`, else the last VDOP × ``uere``, else
///   ``defaultVerticalAccuracy``, when a 3D fix has an altitude.
/// - `eph` → `horizontalAccuracy`, else the root sum square of `epx` and `epy`, else the last
///   HDOP × ``uere``, else ``defaultHorizontalAccuracy``.
/// - `speed`/`eps` → `speed`/`speedAccuracy`, `track`/`epd` → `course`/`courseAccuracy`.
///   Missing values are invalid (−1), never zero.
/// - **Confidence.** gpsd states its errors at about 95 % confidence; CoreLocation names none.
///   Waymark passes gpsd's numbers through unchanged: an accuracy of 8 m means gpsd's 95 %
///   radius is 8 m (about twice a one-sigma radius). Scaling would invent precision the receiver
///   did not claim.
/// - gpsd's `status` sets the differential mode: 2 DGPS, 3 RTK fixed, 4 RTK float.
public struct GPSDMapping: Sendable, Hashable {
    /// Metres; the user equivalent range error for HDOP-only receivers.
    public var uere: Double
    /// Metres, when gpsd gives no horizontal error and no HDOP.
    public var defaultHorizontalAccuracy: Double
    /// Metres, when a 3D fix has an altitude but gpsd gives no vertical error and no VDOP.
    public var defaultVerticalAccuracy: Double
    /// Which height is the location's altitude (and so GPX's `<ele>`).
    public var altitude: AltitudeReference

    /// The height a location's altitude is measured from.
    public enum AltitudeReference: String, Sendable, Hashable, CaseIterable {
        /// Mean sea level (gpsd's `altMSL`): what GPX's `<ele>` means, and CoreLocation's
        /// `altitude`. The default.
        case msl
        /// The WGS 84 ellipsoid (gpsd's `altHAE`): what gpxlogger writes as `<ele>`. The
        /// location's ellipsoidal altitude is the same, so no geoid height follows from it.
        case hae
    }

    public init(
        uere: Double = 5, defaultHorizontalAccuracy: Double = 10, defaultVerticalAccuracy: Double = 15,
        altitude: AltitudeReference = .msl
    ) {
        self.uere = uere
        self.defaultHorizontalAccuracy = defaultHorizontalAccuracy
        self.defaultVerticalAccuracy = defaultVerticalAccuracy
        self.altitude = altitude
    }

    /// The location for `report`, or nil when it is not a fix (or its time is outside the
    /// years −9999 to 9999).
    public func location(for report: GPSDReport) -> Location? {
        guard report.isFix, let lat = report.latitude, let lon = report.longitude, let time = report.time,
            ValueFormatting.readableSeconds.contains(time.timeIntervalSince1970)
        else {
            return nil
        }
        let horizontal: Double
        if let eph = report.eph, eph >= 0 {
            horizontal = eph
        } else if let x = report.epx, let y = report.epy, x >= 0, y >= 0, (x * x + y * y).isFinite {
            horizontal = (x * x + y * y).squareRoot()
        } else if let hdop = report.hdop, hdop > 0, (hdop * uere).isFinite {
            horizontal = hdop * uere
        } else {
            horizontal = defaultHorizontalAccuracy
        }
        let threeD = report.mode >= 3
        var vertical = -1.0
        let hasAltitude =
            altitude == .hae ? report.altitudeHAE != nil : report.altitudeMSL != nil || report.altitudeHAE != nil
        if threeD, hasAltitude {
            if let epv = report.epv, epv > 0 {
                vertical = epv
            } else if let vdop = report.vdop, vdop > 0, (vdop * uere).isFinite {
                vertical = vdop * uere
            } else {
                vertical = defaultVerticalAccuracy
            }
        }
        let differential: Provenance.Differential
        switch report.status {
        case 2: differential = .dgps
        case 3: differential = .rtkFixed
        case 4: differential = .rtkFloat
        default: differential = .none
        }
        let speed = report.speed.map { $0 >= 0 ? $0 : -1 } ?? -1
        let course = report.track.map { $0 >= 0 && $0 < 360 ? $0 : -1 } ?? -1
        return Location(
            coordinate: Coordinate(latitude: lat, longitude: lon),
            altitude: threeD ? ((altitude == .hae ? report.altitudeHAE : report.altitudeMSL) ?? 0) : 0,
            ellipsoidalAltitude: threeD && altitude == .msl ? report.altitudeHAE : nil,
            horizontalAccuracy: horizontal,
            verticalAccuracy: vertical,
            speed: speed,
            speedAccuracy: speed >= 0 ? (report.eps ?? -1) : -1,
            course: course,
            courseAccuracy: course >= 0 ? (report.epd ?? -1) : -1,
            timestamp: time,
            provenance: Provenance(
                source: .gpsd(device: report.device), isSimulatedBySoftware: false,
                fixMode: threeD ? .threeD : .twoD, satellitesUsed: report.satellitesUsed, hdop: report.hdop,
                vdop: report.vdop, pdop: report.pdop, differential: differential))
    }
}

/// Keeps one location per fix time, the most complete, without holding complete fixes back.
///
/// gpsd may send several TPVs in one epoch (one per sentence that carries fix data). A report
/// that has every optional value this receiver has been sending lately goes out at once; one
/// that lacks some waits for the next report of the same time, which is merged into it, or for
/// ``flush()`` (the caller calls it when no report came for a short settling time). A report for
/// a time already sent, or less than ``lateWindow`` older, is a late part of an epoch: dropped.
/// A value the receiver stops sending is no longer waited for after ``forgetAfter`` epochs
/// without it.
///
/// **A receiver's time is data, not truth.** A fix whose time does not follow from the last
/// one's (earlier than it, or more than ``aheadLimit`` ahead of it plus the time that passed
/// between their arrivals) is held until a fix of another time decides: if that one follows
/// from it and not from the last, the receiver's clock really moved (a reset, a 1024-week
/// rollover in gpsd or the receiver, a log that starts again), so both go out after a
/// ``Output/timeJump(seconds:)``; otherwise it alone is dropped as
/// ``Output/implausibleTime(_:expected:)``. Either way every other fix goes out: one bad time
/// never stops the fixes after it. gpsd's regression corpus has both: a fix dated a day ahead
/// among 0.5 s epochs (bt451), dropped, and a clock that steps back 13 s while the receiver
/// moves on (humminbird-M37), followed.
public struct FixCoalescer: Sendable {
    /// What the coalescer hands on.
    public enum Output: Sendable, Hashable {
        case fix(GPSDReport)
        case noFix(GPSDReport)
        /// A fix whose time does not fit the receiver's clock, dropped; `expected` is the time
        /// that would have followed from the last fix.
        case implausibleTime(GPSDReport, expected: Date)
        /// The receiver's clock moved by this many seconds and stayed there; fixes go on from
        /// the new time.
        case timeJump(seconds: Double)
    }

    /// Seconds a report may be older than the last fix sent and still count as a late part of
    /// an epoch already sent (dropped quietly); older is a time that went backwards.
    public var lateWindow: Double = 1
    /// Seconds a fix's time may run ahead of the last fix's plus the time between their
    /// arrivals (a log replayed fast arrives at once, gaps in it are normal).
    public var aheadLimit: Double = 3600
    /// A fix whose time did not fit, and when it arrived: the next fix decides about it.
    private var suspect: (report: GPSDReport, arrival: Double)?
    /// When the last fix sent arrived, and the one held for its epoch.
    private var lastArrival = 0.0
    private var pendingArrival = 0.0
    /// Fixes dropped because their time did not fit.
    public private(set) var implausible = 0

    /// Epochs without a value before it is no longer expected.
    public var forgetAfter = 5
    private var expected: GPSDReport.Fields = []
    private var missing: [Int] = Array(repeating: 0, count: GPSDReport.Fields.all.count)
    private var pending: GPSDReport?
    private var lastSent: Date?
    /// Reports dropped because their time had already been sent (or was older).
    public private(set) var duplicates = 0

    public init() {}

    /// Whether a report waits for the rest of its epoch.
    public var isHolding: Bool { pending != nil }

    /// Takes one report, which arrived at `arrival` (on any monotonic scale; the same for all
    /// when a log is replayed as fast as it is read); returns what goes out now, in order.
    public mutating func add(_ report: GPSDReport, arrival: Duration = .zero) -> [Output] {
        guard report.isFix, let time = report.time else {
            var out = flush()
            out.append(.noFix(report))
            return out
        }
        let at = Double(arrival.components.seconds) + Double(arrival.components.attoseconds) / 1e18
        var out: [Output] = []
        if let held = suspect {
            // Another report of the same epoch: part of the fix in doubt.
            if time == held.report.time {
                suspect = (Self.merge(held.report, report), held.arrival)
                return []
            }
            suspect = nil
            let heldTime = held.report.time!
            let followsLast = lastSent.map { follows(time, at, from: $0, lastArrival) } ?? true
            if follows(time, at, from: heldTime, held.arrival) && !followsLast {
                out += flush()
                let wouldBe = expectedTime(at: held.arrival) ?? heldTime
                out.append(.timeJump(seconds: heldTime.timeIntervalSince(wouldBe)))
                lastSent = nil
                out += accept(held.report, time: heldTime, at: held.arrival)
            } else {
                implausible += 1
                out.append(.implausibleTime(held.report, expected: expectedTime(at: held.arrival) ?? heldTime))
            }
        }
        if let last = lastSent {
            if time <= last && time > last.addingTimeInterval(-lateWindow) {
                // Too late for its epoch, but what it carries tells what this receiver sends: the
                // next epoch waits for it.
                if time == last { notice(report.fields) }
                duplicates += 1
                return out
            }
            if !follows(time, at, from: last, lastArrival) {
                suspect = (report, at)
                return out
            }
        }
        return out + accept(report, time: time, at: at)
    }

    /// The time that follows from the last fix for a fix arrived at `at`.
    private func expectedTime(at: Double) -> Date? {
        lastSent.map { $0.addingTimeInterval(max(0, at - lastArrival)) }
    }

    /// Whether a fix at `time`, arrived at `at`, follows from one at `base` arrived at `baseAt`.
    private func follows(_ time: Date, _ at: Double, from base: Date, _ baseAt: Double) -> Bool {
        let elapsed = max(0, at - baseAt)
        return time > base && time <= base.addingTimeInterval(elapsed + aheadLimit)
    }

    /// The rest of ``add(_:arrival:)`` for a fix whose time fits.
    private mutating func accept(_ report: GPSDReport, time: Date, at: Double) -> [Output] {
        var out: [Output] = []
        var report = report
        if let held = pending {
            if held.time == time {
                report = Self.merge(held, report)
                pending = nil
            } else {
                out += flush()
            }
        }
        learn(report.fields)
        if report.fields.isSuperset(of: expected) {
            out.append(send(report, arrival: at))
        } else {
            pending = report
            pendingArrival = at
        }
        return out
    }

    /// Sends what is held for its epoch, if anything. (A fix whose time is in doubt stays held
    /// until the next fix, or ``finish()``.)
    public mutating func flush() -> [Output] {
        guard let held = pending else { return [] }
        pending = nil
        return [send(held, arrival: pendingArrival)]
    }

    /// At the end of the stream: sends what is held, and drops a fix whose time is still in
    /// doubt (nothing came after it to confirm it).
    public mutating func finish() -> [Output] {
        var out = flush()
        if let held = suspect {
            suspect = nil
            implausible += 1
            out.append(.implausibleTime(held.report, expected: expectedTime(at: held.arrival) ?? held.report.time!))
        }
        return out
    }

    private mutating func send(_ report: GPSDReport, arrival: Double) -> Output {
        lastSent = report.time
        lastArrival = arrival
        return .fix(report)
    }

    private mutating func notice(_ fields: GPSDReport.Fields) {
        for (i, field) in GPSDReport.Fields.all.enumerated() where fields.contains(field) {
            missing[i] = 0
            expected.insert(field)
        }
    }

    private mutating func learn(_ fields: GPSDReport.Fields) {
        for (i, field) in GPSDReport.Fields.all.enumerated() {
            if fields.contains(field) {
                missing[i] = 0
                expected.insert(field)
            } else {
                missing[i] += 1
                if missing[i] >= forgetAfter { expected.remove(field) }
            }
        }
    }

    /// `newer`'s values, with `older`'s where `newer` has none.
    static func merge(_ older: GPSDReport, _ newer: GPSDReport) -> GPSDReport {
        var r = newer
        r.altitudeHAE = newer.altitudeHAE ?? older.altitudeHAE
        r.altitudeMSL = newer.altitudeMSL ?? older.altitudeMSL
        r.eph = newer.eph ?? older.eph
        r.epx = newer.epx ?? older.epx
        r.epy = newer.epy ?? older.epy
        r.epv = newer.epv ?? older.epv
        r.speed = newer.speed ?? older.speed
        r.eps = newer.eps ?? older.eps
        r.track = newer.track ?? older.track
        r.epd = newer.epd ?? older.epd
        r.satellitesUsed = newer.satellitesUsed ?? older.satellitesUsed
        r.hdop = newer.hdop ?? older.hdop
        r.vdop = newer.vdop ?? older.vdop
        r.pdop = newer.pdop ?? older.pdop
        r.mode = max(newer.mode, older.mode)
        return r
    }
}
