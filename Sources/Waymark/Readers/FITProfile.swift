#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The part of the FIT profile that an activity reader needs: message and field numbers, and the
/// scale, offset and unit of each field.
///
/// A field's value is `raw / scale - offset`. The numbers come from Garmin's FIT profile
/// (Profile.xlsx in the FIT SDK), read in the profile module that Garmin generates from it
/// (`src/profile.js` of the public repository garmin/fit-javascript-sdk, profile 21.202), and
/// checked against the message tables in ExtFit's documentation (hexdocs.pm/ext_fit,
/// `ExtFit.Profile.Messages.Record`, `.Lap`, `.Session`, `.FileId`, `.Activity`, profile 21.126).
enum FITProfile {
    /// Global message numbers (the profile's `mesg_num` type).
    enum MessageNumber {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let activity: UInt16 = 34
        static let fieldDescription: UInt16 = 206
        static let developerDataID: UInt16 = 207
    }

    /// The field number of `timestamp` in every message.
    static let timestampField: UInt8 = 253

    /// Seconds from the Unix epoch to FIT's epoch, 1989-12-31T00:00:00Z.
    static let epochOffset: Double = 631_065_600

    /// The instant of a FIT `date_time`: seconds since 1989-12-31T00:00:00Z, UTC.
    ///
    /// The profile calls values below 0x10000000 "system time" (seconds since the device
    /// started), not instants; they are converted all the same, and land in 1990.
    static func date(fitSeconds: UInt64) -> Date {
        Date(timeIntervalSince1970: Double(fitSeconds) + epochOffset)
    }

    /// Degrees from semicircles, the unit of FIT positions: 2^31 semicircles make 180 degrees.
    static func degrees(semicircles: Int64) -> Double {
        Double(semicircles) * 180 / 2_147_483_648
    }

    /// The field `number` of `message` with the profile's scale and offset applied.
    static func scaled(_ message: FITMessage, _ number: UInt8, scale: Double, offset: Double = 0) -> Double? {
        message.double(number).map { $0 / scale - offset }
    }

    /// A `date_time` field of `message` as an instant.
    static func date(_ message: FITMessage, _ number: UInt8) -> Date? {
        message.uint(number).map { date(fitSeconds: $0) }
    }

    /// A duration field in thousandths of a second (scale 1000, unit s).
    static func milliseconds(_ message: FITMessage, _ number: UInt8) -> Duration? {
        message.uint(number).map { .milliseconds(Int64(clamping: $0)) }
    }
}

/// A data message with the meaning the profile gives it, for the messages an activity needs.
enum FITProfileMessage: Sendable, Hashable {
    case fileID(FITFileID)
    case record(FITRecord)
    case lap(FITLap)
    case session(FITSession)
    case event(FITEvent)
    case activity(FITActivity)
    /// Any other message (device_info, developer_data_id, field_description, …), undecoded.
    case other(FITMessage)

    init(_ message: FITMessage) {
        switch message.global {
        case FITProfile.MessageNumber.fileID: self = .fileID(FITFileID(message))
        case FITProfile.MessageNumber.record: self = .record(FITRecord(message))
        case FITProfile.MessageNumber.lap: self = .lap(FITLap(message))
        case FITProfile.MessageNumber.session: self = .session(FITSession(message))
        case FITProfile.MessageNumber.event: self = .event(FITEvent(message))
        case FITProfile.MessageNumber.activity: self = .activity(FITActivity(message))
        default: self = .other(message)
        }
    }
}

/// `file_id` (global message 0): what the file is and which device wrote it.
struct FITFileID: Sendable, Hashable {
    /// Values of the profile's `file` type that matter here.
    enum FileType {
        static let activity: UInt8 = 4
        static let course: UInt8 = 6
    }

    /// Field 0, the profile's `file` type: 4 is an activity, 6 a course.
    var type: UInt8?
    /// Field 1, the profile's `manufacturer` type (1 is Garmin, 255 "development").
    var manufacturer: UInt16?
    /// Field 2.
    var product: UInt16?
    /// Field 3 (uint32z).
    var serialNumber: UInt32?
    /// Field 4.
    var timeCreated: Date?

    init(_ message: FITMessage) {
        type = message.uint(0).map { UInt8(truncatingIfNeeded: $0) }
        manufacturer = message.uint(1).map { UInt16(truncatingIfNeeded: $0) }
        product = message.uint(2).map { UInt16(truncatingIfNeeded: $0) }
        serialNumber = message.uint(3).map { UInt32(truncatingIfNeeded: $0) }
        timeCreated = FITProfile.date(message, 4)
    }
}

/// `record` (global message 20): one sample of an activity or course.
///
/// Where a record has both a plain field and its enhanced (wider) form, the enhanced one wins.
struct FITRecord: Sendable, Hashable {
    /// Field 253.
    var timestamp: Date?
    /// Fields 0 and 1 (position_lat, position_long, sint32 semicircles), in degrees WGS 84; nil
    /// unless both are present and in range.
    var coordinate: Coordinate?
    /// Metres, as the device measured them (usually above mean sea level): field 78
    /// (enhanced_altitude, uint32) or field 2 (altitude, uint16), both scale 5, offset 500.
    var altitude: Double?
    /// Beats per minute: field 3 (uint8).
    var heartRate: Int?
    /// Revolutions (or strides) per minute: field 4 (uint8) plus field 53 (fractional_cadence,
    /// uint8, scale 128) when present.
    var cadence: Double?
    /// Metres since the start: field 5 (uint32, scale 100).
    var distance: Double?
    /// Metres per second: field 73 (enhanced_speed, uint32) or field 6 (speed, uint16), both
    /// scale 1000.
    var speed: Double?
    /// Watts: field 7 (uint16).
    var power: Int?
    /// Degrees Celsius: field 13 (sint8).
    var temperature: Int?
    /// Metres: field 31 (gps_accuracy, uint8).
    var gpsAccuracy: Double?

    init(_ message: FITMessage) {
        timestamp = FITProfile.date(message, FITProfile.timestampField)
        if let latitude = message.int(0), let longitude = message.int(1) {
            let candidate = Coordinate(
                latitude: FITProfile.degrees(semicircles: latitude),
                longitude: FITProfile.degrees(semicircles: longitude))
            coordinate = candidate.isValid ? candidate : nil
        }
        altitude =
            FITProfile.scaled(message, 78, scale: 5, offset: 500)
            ?? FITProfile.scaled(message, 2, scale: 5, offset: 500)
        heartRate = message.int(3).map { Int($0) }
        if let whole = message.double(4) {
            cadence = whole + (FITProfile.scaled(message, 53, scale: 128) ?? 0)
        }
        distance = FITProfile.scaled(message, 5, scale: 100)
        speed = FITProfile.scaled(message, 73, scale: 1000) ?? FITProfile.scaled(message, 6, scale: 1000)
        power = message.int(7).map { Int($0) }
        temperature = message.int(13).map { Int($0) }
        gpsAccuracy = message.double(31)
    }
}

/// `lap` (global message 19): a summary of one lap.
struct FITLap: Sendable, Hashable {
    /// Field 253: the end of the lap.
    var timestamp: Date?
    /// Field 2.
    var startTime: Date?
    /// Field 7 (uint32, scale 1000, seconds): from start to end, pauses included.
    var totalElapsedTime: Duration?
    /// Field 8 (uint32, scale 1000, seconds): time with the timer running.
    var totalTimerTime: Duration?
    /// Metres: field 9 (uint32, scale 100).
    var totalDistance: Double?

    init(_ message: FITMessage) {
        timestamp = FITProfile.date(message, FITProfile.timestampField)
        startTime = FITProfile.date(message, 2)
        totalElapsedTime = FITProfile.milliseconds(message, 7)
        totalTimerTime = FITProfile.milliseconds(message, 8)
        totalDistance = FITProfile.scaled(message, 9, scale: 100)
    }
}

/// `session` (global message 18): a summary of one sport's part of an activity.
struct FITSession: Sendable, Hashable {
    /// Field 253: the end of the session.
    var timestamp: Date?
    /// Field 2.
    var startTime: Date?
    /// Field 5, the profile's `sport` type: 0 generic, 1 running, 2 cycling, 11 walking, …
    var sport: UInt8?
    /// Field 6, the profile's `sub_sport` type.
    var subSport: UInt8?
    /// Field 7 (uint32, scale 1000, seconds).
    var totalElapsedTime: Duration?
    /// Field 8 (uint32, scale 1000, seconds).
    var totalTimerTime: Duration?
    /// Metres: field 9 (uint32, scale 100).
    var totalDistance: Double?

    init(_ message: FITMessage) {
        timestamp = FITProfile.date(message, FITProfile.timestampField)
        startTime = FITProfile.date(message, 2)
        sport = message.uint(5).map { UInt8(truncatingIfNeeded: $0) }
        subSport = message.uint(6).map { UInt8(truncatingIfNeeded: $0) }
        totalElapsedTime = FITProfile.milliseconds(message, 7)
        totalTimerTime = FITProfile.milliseconds(message, 8)
        totalDistance = FITProfile.scaled(message, 9, scale: 100)
    }
}

/// `event` (global message 21): something that happened at an instant, such as the timer starting
/// or stopping.
struct FITEvent: Sendable, Hashable {
    /// Values of the profile's `event` type that matter here.
    enum Kind {
        static let timer: UInt8 = 0
    }

    /// Values of the profile's `event_type` type that matter here.
    enum EventType {
        static let start: UInt8 = 0
        static let stop: UInt8 = 1
        static let stopAll: UInt8 = 4
    }

    /// Field 253.
    var timestamp: Date?
    /// Field 0, the profile's `event` type: 0 is the timer.
    var event: UInt8?
    /// Field 1, the profile's `event_type` type: 0 start, 1 stop, 3 marker, 4 stop_all.
    var eventType: UInt8?

    init(_ message: FITMessage) {
        timestamp = FITProfile.date(message, FITProfile.timestampField)
        event = message.uint(0).map { UInt8(truncatingIfNeeded: $0) }
        eventType = message.uint(1).map { UInt8(truncatingIfNeeded: $0) }
    }

    /// True for the timer starting (or resuming).
    var isTimerStart: Bool { event == Kind.timer && eventType == EventType.start }

    /// True for the timer stopping: a pause (stop) or the end (stop_all).
    var isTimerStop: Bool {
        event == Kind.timer && (eventType == EventType.stop || eventType == EventType.stopAll)
    }
}

/// `activity` (global message 34): the summary that ends an activity file.
struct FITActivity: Sendable, Hashable {
    /// Field 253.
    var timestamp: Date?
    /// Field 0 (uint32, scale 1000, seconds).
    var totalTimerTime: Duration?
    /// Field 1.
    var numberOfSessions: Int?
    /// The offset of the device's local time from UTC: field 5 (local_timestamp, seconds since
    /// 1989-12-31T00:00:00 local time) less field 253, as the profile suggests.
    var utcOffset: Duration?

    init(_ message: FITMessage) {
        timestamp = FITProfile.date(message, FITProfile.timestampField)
        totalTimerTime = FITProfile.milliseconds(message, 0)
        numberOfSessions = message.int(1).map { Int($0) }
        if let local = message.int(5), let utc = message.int(FITProfile.timestampField) {
            utcOffset = .seconds(local - utc)
        }
    }
}
