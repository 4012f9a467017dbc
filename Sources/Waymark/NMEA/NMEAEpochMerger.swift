#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One epoch of a receiver: the fix its sentences describe, merged, as the GPX point it
/// becomes (without its time until its day is known).
struct NMEAFix: Sendable, Equatable {
    /// The point: position, elevation (metres above mean sea level, 3D only), geoid height,
    /// fix, satellites, DOPs, speed, course, magnetic variation, DGPS age and station, and
    /// GST's (or GBS's) one-sigma errors as accuracies.
    var point: GPXPoint
    /// Nanoseconds since midnight UTC.
    var timeOfDay: Int64?
    /// Days since 1970-01-01, once a date is known (an RMC, a ZDA, or the log's `# Date:` line).
    var day: Int?
    /// The line of the epoch's first sentence.
    var line: Int
    /// Whether epochs without a fix came between this fix and the one before.
    var followsLoss = false

    /// The time of the fix, when its day is known.
    var date: Date? {
        guard let day, let timeOfDay else { return nil }
        let seconds = Double(day) * 86_400 + Double(timeOfDay / 1_000_000_000)
        return Date(timeIntervalSince1970: seconds + Double(timeOfDay % 1_000_000_000) / 1e9)
    }
}

/// Merges the sentences of an NMEA 0183 log into one fix per epoch, as gpsd merges them: a pure
/// state machine, fed one sentence at a time.
///
/// - An epoch is the run of sentences between two changes of the receiver's time: a GGA, RMC,
///   GLL, GNS or GBS whose `hhmmss` differs from the epoch's by more than 0.01 s begins the
///   next one (gpsd's rule, ZDA left out as gpsd leaves it). Sentences without a time (GSA,
///   GSV, VTG) belong to the epoch they follow.
/// - The position comes from any sentence that says it is valid (RMC `A`/`D`, GGA quality
///   above 0, GLL `A`, GNS not `N`); an epoch whose only word is "no fix" gives no fix.
/// - The mode is kept from sentence to sentence and epoch to epoch, as gpsd 3.22 keeps it: GSA
///   sets it; GGA makes it 3D with an altitude, 2D without, and no fix with fewer than three
///   satellites; RMC and GLL with a valid position make it at least 2D, and 3D with an altitude
///   in the epoch or more than three satellites in use; RMC V, GLL V and GGA quality 0 make it
///   no fix. The mode at the end of the epoch stands, raised to 3D when the epoch has an
///   altitude. A 2D fix has no altitude. Where gpsd differs (it reports at its learnt end of a
///   cycle, not at the end of an epoch), `NMEACorpusTests` counts and explains each case.
/// - The date comes from RMC (status `A` or `D`, as gpsd takes it) or ZDA, and dates every
///   epoch around it: an epoch's day is the one that puts its time nearest the dated
///   sentence's, so midnight is crossed both ways. Fixes before the first date wait for it (up
///   to ``pendingLimit``), then take the log's `# Date:` line, else stay undated.
/// - A leap second (23:59:60) is an epoch of its own, one second after 23:59:59 and one before
///   the next day's 00:00:00, as gpsd tells epochs by the receiver's `hhmmss`. Its fix is dated
///   as the second after it (the next day's 00:00:00), as gpsd dates it: times here, as POSIX's
///   and CoreLocation's, have no leap seconds. Such fixes are counted (``leapSecondFixes``) for
///   the reader to say so.
/// - DOPs and the count of satellites from GSA last until the next GSA, as in gpsd.
/// - Accuracy: GST's one-sigma latitude, longitude and altitude errors, else GBS's.
/// - A receiver in simulation mode (GGA quality 8, or the mode indicator `S` of RMC, GLL, GNS or
///   VTG, as a Garmin in demo mode sends) gives a simulator's positions: such an epoch gives no
///   fix, and is counted (``simulatedEpochs``) for the reader to say so.
struct NMEAEpochMerger: ~Copyable {
    /// Fixes held while no date is known; beyond this many they go out undated.
    static let pendingLimit = 3600

    /// When set, each fix's epoch lines are recorded in ``fixLines``, in the order the fixes go
    /// out (`serve` passes a log's own sentences on; off on the reading path).
    var recordsFixLines = false
    /// Each fix's epoch: its first line, and the line after its last (the next epoch's first,
    /// or `Int32.max` at the end of the log).
    private(set) var fixLines: [(first: Int32, end: Int32)] = []

    /// The day the log says it was recorded (`# Date: 2019-03-14`), if it does.
    var recordedDay: Int?
    /// Fixes given a date from the `# Date:` line rather than from the receiver.
    private(set) var datedFromHeader = 0
    /// Fixes that went out without a date.
    private(set) var undated = 0
    /// Epochs that ended without a fix.
    private(set) var noFixEpochs = 0
    /// Epochs whose position came from a receiver in simulation mode (GGA quality 8, or the
    /// mode indicator `S` of RMC, GLL, GNS or VTG), left out; and the line of the first.
    private(set) var simulatedEpochs = 0
    private(set) var firstSimulatedLine: Int?
    /// Fixes at a leap second (`hhmm60`), dated as the second after it, and the first one's line.
    private(set) var leapSecondFixes = 0
    private(set) var firstLeapSecondLine: Int?
    /// Whole 1024-week periods added to the receiver's dates (the GPS week rollover), when the
    /// log's `# Date:` line shows that its receiver counts weeks from an earlier period.
    private(set) var weekShift: Int?
    /// The most 1024-week periods a `# Date:` line moves the receiver's dates.
    static let maximumWeekShift = 2
    /// Set when the `# Date:` line is more than ``maximumWeekShift`` periods after the
    /// receiver's date: the first such date (days since 1970-01-01) and how many periods apart
    /// they are. The receiver's dates were kept.
    private(set) var farRecordedDay: (receiverDay: Int, periods: Int)?

    private var epoch = Epoch()
    /// The last date seen: its day and the time of day of the sentence that gave it.
    private var anchor: (day: Int, timeOfDay: Int64)?
    private var pending: [NMEAFix] = []
    /// Fixes ready to go out.
    private var out = NMEAFixQueue()
    /// The last RMC date field (its six bytes) and the day it gives, when valid.
    private var lastDateField: UInt64 = 0
    private var lastDateDay: Int?
    // Persist from epoch to epoch, as gpsd's do.
    private var hdop: Double?
    private var vdop: Double?
    private var pdop: Double?
    private var satellitesFromGSA: Int?
    private var lostSinceFix = false
    /// The receiver's mode as gpsd keeps it from sentence to sentence and epoch to epoch: 0
    /// before any sentence said, then 1 (no fix), 2 or 3.
    private var mode = 0
    /// Satellites used in the solution as last reported (GGA, GNS or the GSAs of an epoch).
    private var satellitesUsed: Int?

    /// What one epoch has said so far.
    private struct Epoch {
        var timeOfDay: Int64?
        var line = 0
        var started = false
        var latitude: Double?
        var longitude: Double?
        var valid = false
        var saidNoFix = false
        /// A sentence said the receiver is simulating (GGA quality 8, mode indicator `S`).
        var simulated = false
        var gsaMode: Int?
        var altitude: Double?
        var geoidSeparation: Double?
        var quality: Int?
        var satellites: Int?
        var speed: Double?
        var course: Double?
        var magneticVariation: Double?
        var gst: (Double?, Double?, Double?)?
        var gbs: (Double?, Double?, Double?)?
        var dgpsAge: Double?
        var dgpsStation: Int?
        var gsaHDOP: Double?
        var ggaHDOP: Double?
        /// Satellites the epoch's GSAs list as used (one GSA per system, summed).
        var gsaUsed = 0
    }

    init() {}

    /// Whether a fix is ready to go out (``nextFix``).
    var hasFixes: Bool { !out.isEmpty }

    /// The next fix ready to go out, where it lies; there must be one.
    var nextFix: UnsafePointer<NMEAFix> { out.first }

    /// Removes the next fix, moving its point into `slot` (uninitialised memory).
    mutating func removeFix(movingPointTo slot: UnsafeMutablePointer<GPXPoint>) {
        out.removeFirst(movingPointTo: slot)
    }

    /// Removes the next fix and returns it.
    mutating func removeFix() -> NMEAFix { out.removeFirst() }

    /// Feeds one sentence of type `type` (its fields in `lexer`), from line `line`.
    mutating func add(_ type: NMEAType, _ s: NMEALexer, line: Int) {
        switch type {
        case .rmc: rmc(s, line: line)
        case .gga: gga(s, line: line)
        case .gll: gll(s, line: line)
        case .gns: gns(s, line: line)
        case .gsa: gsa(s, line: line)
        case .vtg: vtg(s, line: line)
        case .zda: zda(s)
        case .gst: gst(s, line: line)
        case .gbs: gbs(s, line: line)
        case .gsv, .other: break
        }
    }

    /// Ends the log: the last epoch closes and every held fix goes out.
    mutating func finish() {
        closeEpoch(nextLine: nil)
        releasePending(force: true)
    }

    // MARK: - Epochs

    /// Starts the epoch of time `t` if `t` is another epoch's (more than 0.01 s away).
    private mutating func time(_ t: Int64?, line: Int) {
        guard let t else {
            touch(line)
            return
        }
        if let current = epoch.timeOfDay {
            var delta = abs(t - current)
            // Across midnight. A leap second (23:59:60, a time of day of 86 400 s or more) is
            // the day's last second: one before the next day's 00:00:00, not the same time.
            let day: Int64 = 86_400_000_000_000
            let length = max(t, current) >= day ? day + 1_000_000_000 : day
            delta = min(delta, length - delta)
            if delta > 10_000_000 {
                closeEpoch(nextLine: line)
                epoch.line = line
                epoch.started = true
            }
            // Within 0.01 s it is the same epoch, and the latest time stands (gpsd's rule: an
            // eXplorist sends GLL at .295 and GGA and RMC at .30).
            epoch.timeOfDay = t
        } else {
            epoch.timeOfDay = t
            if !epoch.started {
                epoch.line = line
                epoch.started = true
            }
        }
    }

    private mutating func touch(_ line: Int) {
        if !epoch.started {
            epoch.started = true
            epoch.line = line
        }
    }

    /// Ends the epoch; `nextLine` begins the next one (nil: the log has ended).
    private mutating func closeEpoch(nextLine: Int?) {
        defer { epoch = Epoch() }
        guard epoch.started else { return }
        if epoch.gsaMode != nil { satellitesFromGSA = epoch.gsaUsed > 0 ? epoch.gsaUsed : nil }
        if let gsaHDOP = epoch.gsaHDOP {
            hdop = gsaHDOP
        } else if let ggaHDOP = epoch.ggaHDOP {
            hdop = ggaHDOP
        }
        // A simulator's position is no fix of the receiver's: left out, counted and named
        // (gpsd reports it with status 8, and the Garmin Geko's RMC V and GLL V then say no fix).
        if epoch.simulated && epoch.latitude != nil {
            simulatedEpochs += 1
            if firstSimulatedLine == nil { firstSimulatedLine = epoch.line }
            lostSinceFix = true
            return
        }
        guard epoch.valid, let latitude = epoch.latitude, let longitude = epoch.longitude else {
            if epoch.saidNoFix || epoch.latitude != nil {
                noFixEpochs += 1
                lostSinceFix = true
            }
            return
        }
        // gpsd's mode as the epoch ended: the last word stands.
        var mode = self.mode
        guard mode >= 2 else {
            noFixEpochs += 1
            lostSinceFix = true
            return
        }
        // A fix with an altitude is 3D, whatever GSA said: gpsd 3.22 reports it so (a u-blox
        // LEA-4H, a Garmin 25LP and a Navior CH-4711 send GSA mode 2 beside GGA altitudes).
        if mode == 2 && epoch.altitude != nil { mode = 3 }
        var fix = NMEAFix(
            point: GPXPoint(coordinate: Coordinate(latitude: latitude, longitude: longitude)),
            timeOfDay: epoch.timeOfDay, line: epoch.line)
        fillPoint(&fix.point, mode: mode)
        fix.followsLoss = lostSinceFix
        lostSinceFix = false
        if recordsFixLines { fixLines.append((Int32(clamping: epoch.line), Int32(clamping: nextLine ?? Int.max))) }
        if let t = epoch.timeOfDay, Self.isLeapSecond(t) {
            leapSecondFixes += 1
            if firstLeapSecondLine == nil { firstLeapSecondLine = epoch.line }
        }
        if anchor != nil || fix.timeOfDay == nil {
            fix.day = fix.timeOfDay.flatMap { Self.day(of: $0, anchor: anchor) }
            // The next epoch is dated from this one, as gpsd's midnight wrap does: a log dated
            // once (its `# Date:` line, a ZDA a minute) keeps its days however long it runs.
            if let day = fix.day, let t = fix.timeOfDay { anchor = (day, t) }
            fix.point.time = fix.date
            if fix.timeOfDay == nil { undated += 1 }
            out.append(consume fix)
        } else {
            pending.append(consume fix)
            if pending.count >= Self.pendingLimit { releasePending(force: true) }
        }
    }

    /// Fills in the GPX point of the epoch that just ended, a fix of `mode` (2 or 3), from its
    /// position. (Mutating only so that the merger is not copied to read it.)
    private mutating func fillPoint(_ p: inout GPXPoint, mode: Int) {
        if mode == 3, let altitude = epoch.altitude { p.elevation = altitude }
        // GPX's fix says 2D or 3D, or how a 3D fix was made (dgps also for RTK, as gpxlogger).
        switch (mode, epoch.quality) {
        case (2, _): p.fix = GPXFix.twoD
        case (_, 2?), (_, 4?), (_, 5?): p.fix = GPXFix.dgps
        case (_, 3?): p.fix = GPXFix.pps
        default: p.fix = GPXFix.threeD
        }
        if let n = epoch.satellites ?? satellitesFromGSA { p.satellites = n }
        if let hdop { p.hdop = hdop }
        if mode == 3, let vdop { p.vdop = vdop }
        if let pdop { p.pdop = pdop }
        if let v = epoch.speed { p.speed = v }
        if let v = epoch.course { p.course = v }
        if let v = epoch.magneticVariation { p.magneticVariation = v < 0 ? v + 360 : v }
        if let v = epoch.geoidSeparation { p.geoidHeight = v }
        if let v = epoch.dgpsAge { p.ageOfDGPSData = v }
        // Accuracies and the station live in the point's box: set them only when there are any,
        // so that the common point allocates none.
        let errors = epoch.gst ?? epoch.gbs
        let horizontal = errors?.0.flatMap { a in errors?.1.map { b in (a * a + b * b).squareRoot() } }
        let vertical = mode == 3 ? errors?.2 : nil
        if horizontal != nil || vertical != nil || epoch.dgpsStation != nil {
            // The point has no box yet, and these are no inline fields: the box is these alone.
            var d = GPXPoint.Details()
            d.horizontalAccuracy = horizontal
            d.verticalAccuracy = vertical
            d.dgpsStation = epoch.dgpsStation
            p.setBoxedDetails(d, nonEmpty: true)
        }
    }

    /// The day of an epoch at `t`: the one that puts it nearest the last dated sentence.
    private static func day(of t: Int64, anchor: (day: Int, timeOfDay: Int64)?) -> Int? {
        guard let anchor else { return nil }
        let dayNanos: Int64 = 86_400_000_000_000
        var best = anchor.day
        var bestDistance = abs(t - anchor.timeOfDay)
        // The day before, then the day after.
        let before = abs(t - dayNanos - anchor.timeOfDay)
        if before < bestDistance {
            best = anchor.day - 1
            bestDistance = before
        }
        if abs(t + dayNanos - anchor.timeOfDay) < bestDistance { best = anchor.day + 1 }
        return best
    }

    /// Dates the held fixes with the date now known, or, when `force`d without one, with the
    /// log's `# Date:` line, else leaves them undated. Each is dated from its neighbour, as
    /// gpsd's midnight wrap dates an epoch from the one before: backward from a receiver's date
    /// that came after them, forward from the `# Date:` line's day at the first of them.
    private mutating func releasePending(force: Bool) {
        guard !pending.isEmpty else { return }
        var forward = false
        if anchor == nil {
            guard force else { return }
            if let recordedDay, let first = pending.first?.timeOfDay {
                anchor = (recordedDay, first)
                datedFromHeader += pending.count
                forward = true
            }
        }
        var neighbour = anchor
        for i in forward ? Array(pending.indices) : pending.indices.reversed() {
            pending[i].day = pending[i].timeOfDay.flatMap { Self.day(of: $0, anchor: neighbour) }
            if let day = pending[i].day, let t = pending[i].timeOfDay { neighbour = (day, t) }
            pending[i].point.time = pending[i].date
            if pending[i].day == nil { undated += 1 }
        }
        if forward { anchor = neighbour }
        for fix in pending { out.append(fix) }
        pending.removeAll(keepingCapacity: true)
    }

    /// A date from the receiver: `day` at time of day `t`, moved past any GPS week rollover the
    /// log's `# Date:` line reveals.
    private mutating func date(_ day: Int, at t: Int64) {
        var day = day
        if let recordedDay {
            // 1024 weeks (7168 days) as often as brings the date nearest the recording's: once
            // or twice (a receiver of 1999 read in 2019, or in 2038). More is no rollover but a
            // `# Date:` line that is wrong (a typo, a date of conversion): the receiver's date
            // stands, and a warning says so.
            let periods = Int((Double(recordedDay - day) / 7168).rounded())
            if periods > Self.maximumWeekShift {
                if farRecordedDay == nil { farRecordedDay = (receiverDay: day, periods: periods) }
            } else if periods > 0 {
                weekShift = periods
                day += periods * 7168
            }
        }
        anchor = (day, t)
        releasePending(force: false)
    }

    // MARK: - Sentences

    private mutating func position(_ s: NMEALexer, _ lat: Int, valid: Bool) {
        guard valid,
            let la = NMEAField.angle(s.field(lat), s.field(lat + 1), limit: 90),
            let lo = NMEAField.angle(s.field(lat + 2), s.field(lat + 3), limit: 180)
        else {
            epoch.saidNoFix = true
            return
        }
        epoch.latitude = la
        epoch.longitude = lo
        epoch.valid = true
    }

    /// Sets gpsd's mode after a sentence.
    private mutating func setMode(_ m: Int) { mode = m }

    /// RMC and GLL with a valid position: at least 2D; 3D when the epoch has an altitude, when
    /// more than three satellites are used, or when the receiver was in 3D already (as gpsd
    /// 3.22 decides, GSA or not).
    private mutating func modeFromPositionOnly(valid: Bool) {
        guard valid, epoch.valid else {
            setMode(1)
            return
        }
        if (satellitesUsed ?? 0) > 3 || mode == 3 || epoch.altitude != nil {
            setMode(3)
        } else {
            setMode(2)
        }
    }

    /// `$--RMC,hhmmss.ss,A,llll.ll,a,yyyyy.yy,a,x.x,x.x,ddmmyy,x.x,a[,m]`
    private mutating func rmc(_ s: NMEALexer, line: Int) {
        let t = NMEAField.timeOfDay(s.field(1))
        time(t, line: line)
        let status = s.field(2)
        let faa = s.field(12)
        if Self.says(faa, "S") { epoch.simulated = true }
        let valid =
            status.count == 1 && (status[0] == UInt8(ascii: "A") || status[0] == UInt8(ascii: "D"))
            && !(faa.count == 1 && faa[0] == UInt8(ascii: "N"))
        position(s, 3, valid: valid)
        modeFromPositionOnly(valid: valid)
        guard valid else { return }
        if let knots = NMEAField.number(s.field(7)), knots >= 0 { epoch.speed = knots * 1852 / 3600 }
        if let course = NMEAField.number(s.field(8)), course >= 0, course < 360 { epoch.course = course }
        if let v = NMEAField.number(s.field(10)), v <= 180 {
            let w = s.field(11)
            epoch.magneticVariation = w.count == 1 && w[0] == UInt8(ascii: "W") ? -v : v
        }
        if let t, let day = rmcDay(s.field(9)) { date(day, at: t) }
    }

    /// The day of RMC's `ddmmyy` field: the last one's again when the bytes are the same (they
    /// change once a day).
    private mutating func rmcDay(_ f: ByteSpan) -> Int? {
        guard f.count == 6 else { return nil }
        var key: UInt64 = 0
        for i in 0..<6 { key = key << 8 | UInt64(f[i]) }
        if key != lastDateField {
            lastDateField = key
            lastDateDay = NMEAField.date(ddmmyy: f)
        }
        return lastDateDay
    }

    /// `$--GGA,hhmmss.ss,llll.ll,a,yyyyy.yy,a,q,nn,h.h,a.a,M,g.g,M,age,station`
    private mutating func gga(_ s: NMEALexer, line: Int) {
        time(NMEAField.timeOfDay(s.field(1)), line: line)
        let quality = NMEAField.integer(s.field(6))
        if quality == 8 { epoch.simulated = true }
        position(s, 2, valid: (quality ?? 0) > 0)
        guard let quality, quality > 0, epoch.valid else {
            setMode(1)
            return
        }
        epoch.quality = quality
        fixDetails(s, satellites: 7, hdop: 8, altitude: 9, separation: 11, age: 13)
        // An altitude means 3D, none means 2D at most (SiRF sends GGA without one in 2D); fewer
        // than three satellites in use is no fix (gpsd 3.22's rule, which a Garmin 25LP's
        // `1,00` needs). An empty count says nothing, where gpsd reads it as 0.
        if let used = NMEAField.integer(s.field(7)), used < 3 {
            setMode(1)
        } else {
            setMode(NMEAField.number(s.field(9)) != nil ? 3 : 2)
        }
    }

    /// `$--GNS,hhmmss.ss,llll.ll,a,yyyyy.yy,a,mm,nn,h.h,a.a,g.g,age,station[,status]`
    private mutating func gns(_ s: NMEALexer, line: Int) {
        time(NMEAField.timeOfDay(s.field(1)), line: line)
        let modes = s.field(6)
        var valid = modes.count > 0
        if valid {
            // One letter per system; all N (or empty) is no fix.
            valid = false
            for i in 0..<modes.count where modes[i] != UInt8(ascii: "N") { valid = true }
            for i in 0..<modes.count where modes[i] == UInt8(ascii: "S") { epoch.simulated = true }
        }
        position(s, 2, valid: valid)
        guard valid, epoch.valid else { return }
        if modes[0] == UInt8(ascii: "D") { epoch.quality = max(epoch.quality ?? 0, 2) }
        fixDetails(s, satellites: 7, hdop: 8, altitude: 9, separation: 10, age: 11)
        setMode(NMEAField.number(s.field(9)) != nil && (satellitesUsed ?? 0) > 3 ? 3 : 2)
    }

    private mutating func fixDetails(
        _ s: NMEALexer, satellites: Int, hdop: Int, altitude: Int, separation: Int, age: Int
    ) {
        if let n = NMEAField.integer(s.field(satellites)) {
            epoch.satellites = n
            satellitesUsed = n
        }
        if let h = NMEAField.number(s.field(hdop)), h > 0, h < 100 { epoch.ggaHDOP = h }
        if let a = NMEAField.number(s.field(altitude)), abs(a) < 1e6 { epoch.altitude = a }
        if let g = NMEAField.number(s.field(separation)), abs(g) < 1000 { epoch.geoidSeparation = g }
        if let a = NMEAField.number(s.field(age)), let st = NMEAField.integer(s.field(age + 1)), a > 0 || st > 0 {
            epoch.dgpsAge = a
            epoch.dgpsStation = st
        }
    }

    /// `$--GLL,llll.ll,a,yyyyy.yy,a,hhmmss.ss,A[,m]`
    private mutating func gll(_ s: NMEALexer, line: Int) {
        time(NMEAField.timeOfDay(s.field(5)), line: line)
        let status = s.field(6)
        let faa = s.field(7)
        if Self.says(faa, "S") { epoch.simulated = true }
        let valid =
            status.count == 1 && status[0] == UInt8(ascii: "A") && !(faa.count == 1 && faa[0] == UInt8(ascii: "N"))
        position(s, 1, valid: valid)
        modeFromPositionOnly(valid: valid)
    }

    /// `$--GSA,a,m,p1,…,p12,pdop,hdop,vdop[,system]`
    private mutating func gsa(_ s: NMEALexer, line: Int) {
        touch(line)
        guard s.fieldCount >= 17, let mode = NMEAField.integer(s.field(2)), (1...3).contains(mode) else { return }
        // Several GSAs (one per system) in an epoch: the best mode stands.
        epoch.gsaMode = max(epoch.gsaMode ?? 0, mode)
        setMode(epoch.gsaMode ?? mode)
        for i in 3...14 where s.field(i).count > 0 { epoch.gsaUsed += 1 }
        satellitesUsed = epoch.gsaUsed
        func dop(_ f: Int) -> Double? {
            guard let v = NMEAField.number(s.field(f)), v > 0, v < 99 else { return nil }
            return v
        }
        // The first GSA of an epoch gives its DOPs (the others repeat them, or give none).
        if epoch.gsaHDOP == nil {
            epoch.gsaHDOP = dop(16)
            pdop = dop(15)
            vdop = dop(17)
        }
    }

    /// `$--VTG,t.t,T,m.m,M,n.n,N,k.k,K[,m]`
    private mutating func vtg(_ s: NMEALexer, line: Int) {
        touch(line)
        let faa = s.field(9)
        if Self.says(faa, "S") { epoch.simulated = true }
        guard !(faa.count == 1 && (faa[0] == UInt8(ascii: "N") || faa[0] == UInt8(ascii: "E"))) else { return }
        if let course = NMEAField.number(s.field(1)), course >= 0, course < 360 { epoch.course = course }
        if let knots = NMEAField.number(s.field(5)), knots >= 0 {
            epoch.speed = knots * 1852 / 3600
        } else if let kmh = NMEAField.number(s.field(7)), kmh >= 0 {
            epoch.speed = kmh / 3.6
        }
    }

    /// `$--ZDA,hhmmss.ss,dd,mm,yyyy,zh,zm`: a date, which does not begin an epoch.
    private mutating func zda(_ s: NMEALexer) {
        guard let t = NMEAField.timeOfDay(s.field(1)), let d = NMEAField.integer(s.field(2)),
            let m = NMEAField.integer(s.field(3)), let y = NMEAField.integer(s.field(4)), s.field(4).count == 4,
            let day = NMEAField.civilDay(year: y, month: m, day: d)
        else { return }
        date(day, at: t)
    }

    /// `$--GST,hhmmss.ss,rms,major,minor,orientation,lat,lon,alt`
    private mutating func gst(_ s: NMEALexer, line: Int) {
        guard Self.sameEpoch(NMEAField.timeOfDay(s.field(1)), epoch.timeOfDay) else { return }
        touch(line)
        epoch.gst = (Self.error(s.field(6)), Self.error(s.field(7)), Self.error(s.field(8)))
    }

    /// `$--GBS,hhmmss.ss,lat,lon,alt,…`
    private mutating func gbs(_ s: NMEALexer, line: Int) {
        let t = NMEAField.timeOfDay(s.field(1))
        time(t, line: line)
        epoch.gbs = (Self.error(s.field(2)), Self.error(s.field(3)), Self.error(s.field(4)))
    }

    /// Whether a one-letter field is `letter`.
    private static func says(_ f: ByteSpan, _ letter: Unicode.Scalar) -> Bool {
        f.count == 1 && f[0] == UInt8(ascii: letter)
    }

    private static func error(_ f: ByteSpan) -> Double? {
        guard let v = NMEAField.number(f), v >= 0, v < 1e6 else { return nil }
        return v
    }

    /// Whether the time of day `t` is in a leap second: 23:59:60, which
    /// ``NMEAField/timeOfDay(_:)`` reads as 86 400 s (and its fraction) after midnight.
    static func isLeapSecond(_ t: Int64) -> Bool { t >= 86_400_000_000_000 }

    /// Whether a sentence of time `t` speaks of the epoch of time `current` (or of one not yet
    /// timed).
    private static func sameEpoch(_ t: Int64?, _ current: Int64?) -> Bool {
        guard let t, let current else { return true }
        return abs(t - current) <= 10_000_000
    }
}
