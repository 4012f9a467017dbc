/// Writes FIT activity files for tests, with the protocol's options switchable one by one.
///
/// Written from the FIT protocol description, separately from `FITDecoder`: its CRC is the
/// bitwise CRC-16 (reflected polynomial 0xA001), not the decoder's nibble table, so that each
/// checks the other. Profile numbers are those documented in `FITProfile`.
///
/// ```swift
/// var encoder = FITEncoder()
/// encoder.compressedTimestamps = true
/// let bytes = encoder.activity(records: records)
/// ```
struct FITEncoder: Sendable {
    /// One `record` message. Nil values are written as their base type's invalid value.
    struct Record: Sendable, Hashable {
        /// Seconds since 1989-12-31T00:00:00Z (see ``FITEncoder/fitSeconds(unix:)``).
        var timestamp: UInt32
        /// Degrees, WGS 84.
        var latitude: Double?
        /// Degrees, WGS 84.
        var longitude: Double?
        /// Metres, -500 to about 12 600 (plain altitude) or more (enhanced).
        var altitude: Double?
        /// Beats per minute.
        var heartRate: UInt8?
        /// Revolutions per minute.
        var cadence: UInt8?
        /// Watts.
        var power: UInt16?
        /// Degrees Celsius.
        var temperature: Int8?
        /// Metres per second.
        var speed: Double?
        /// Metres since the start.
        var distance: Double?
        /// The developer field's value, written when the encoder has ``FITEncoder/developerField``.
        var developerValue: UInt16?

        init(
            timestamp: UInt32, latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil,
            heartRate: UInt8? = nil, cadence: UInt8? = nil, power: UInt16? = nil, temperature: Int8? = nil,
            speed: Double? = nil, distance: Double? = nil, developerValue: UInt16? = nil
        ) {
            self.timestamp = timestamp
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.heartRate = heartRate
            self.cadence = cadence
            self.power = power
            self.temperature = temperature
            self.speed = speed
            self.distance = distance
            self.developerValue = developerValue
        }

        /// A record from plain numbers: `unixSeconds` since 1970, sensor values as integers. A value
        /// that its FIT field cannot hold (a heart rate of 300, a temperature of 200 °C) is written
        /// as absent.
        init(
            unixSeconds: Int, latitude: Double?, longitude: Double?, altitude: Double? = nil, heartRate: Int? = nil,
            cadence: Int? = nil, power: Int? = nil, temperature: Int? = nil, speed: Double? = nil,
            distance: Double? = nil
        ) {
            self.init(
                timestamp: FITEncoder.fitSeconds(unix: Int64(unixSeconds)), latitude: latitude, longitude: longitude,
                altitude: altitude, heartRate: heartRate.flatMap { UInt8(exactly: $0) },
                cadence: cadence.flatMap { UInt8(exactly: $0) }, power: power.flatMap { UInt16(exactly: $0) },
                temperature: temperature.flatMap { Int8(exactly: $0) }, speed: speed, distance: distance)
        }
    }

    /// One `lap` message.
    struct Lap: Sendable, Hashable {
        /// FIT seconds.
        var startTime: UInt32
        /// FIT seconds: the end of the lap.
        var timestamp: UInt32
        /// Metres.
        var totalDistance: Double
    }

    /// Writes multi-byte values big-endian (architecture 1) instead of little-endian.
    var bigEndian = false
    /// The file header's size: 14 (with a header CRC) or 12 (without).
    var headerSize = 14
    /// Writes a record with a compressed timestamp header whenever it comes less than 32 seconds
    /// after the last full timestamp.
    var compressedTimestamps = false
    /// Writes enhanced_altitude (78) and enhanced_speed (73) instead of altitude (2) and speed (6).
    var enhancedFields = false
    /// Adds developer_data_id (207) and field_description (206) messages, and one uint16 developer
    /// field ("test_counter") to every record.
    var developerField = false
    /// Redefines the records' local message type halfway through, with their fields in reverse order.
    var redefinesRecordsMidway = false
    /// The session's sport (the profile's `sport` type; 1 is running).
    var sport: UInt8 = 1

    init() {}

    /// Seconds from the Unix epoch to FIT's epoch, 1989-12-31T00:00:00Z.
    static let epochOffset: Int64 = 631_065_600

    /// FIT seconds for a Unix time in seconds.
    static func fitSeconds(unix: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: unix - epochOffset)
    }

    // MARK: - Files

    /// A complete activity file from the default encoder, with the records of every track's
    /// segments: the tracks run on as one, and a timer stop and start separate the segments.
    static func activity(_ tracks: [[[Record]]]) -> [UInt8] {
        FITEncoder().activity(segments: tracks.flatMap { $0 })
    }

    /// A complete activity file with one segment of records.
    func activity(records: [Record], laps: [Lap]? = nil) -> [UInt8] {
        activity(segments: [records], laps: laps)
    }

    /// A complete activity file: file_id, a timer start event, (developer data descriptions,) the
    /// records, a timer stop_all event, the laps (one lap over all records when `laps` is nil), a
    /// session and an activity message. Between segments the timer stops (stop_all) and starts
    /// again, as a watch records a pause.
    func activity(segments: [[Record]], laps: [Lap]? = nil) -> [UInt8] {
        let records = segments.flatMap { $0 }
        let first = records.first?.timestamp ?? 0
        let last = records.last?.timestamp ?? first
        let distance = records.compactMap(\.distance).last ?? 0
        var writer = MessageWriter(bigEndian: bigEndian)

        writer.write(
            local: Local.fileID, global: 0,
            fields: [
                field(0, .enumeration, 4),  // type: activity
                field(1, .uint16, 255),  // manufacturer: development
                field(2, .uint16, 1),  // product
                field(3, .uint32z, 12345),  // serial_number
                field(4, .uint32, Int64(first)),  // time_created
            ])
        if developerField {
            writer.write(
                local: Local.developerDataID, global: 207,
                fields: [
                    Field(number: 1, baseType: 0x0D, bytes: Array(0x10..<0x20)),  // application_id
                    field(3, .uint8, 0),  // developer_data_index
                    field(4, .uint32, 1),  // application_version
                ])
            writer.write(
                local: Local.fieldDescription, global: 206,
                fields: [
                    field(0, .uint8, 0),  // developer_data_index
                    field(1, .uint8, 0),  // field_definition_number
                    field(2, .uint8, 0x84),  // fit_base_type_id: uint16
                    string(3, "test_counter", size: 16),  // field_name
                    string(8, "count", size: 8),  // units
                ])
        }

        // The last full timestamp, as a decoder keeps it: the base of compressed timestamps.
        var lastTimestamp = first
        var index = 0
        for (number, segment) in segments.enumerated() where !segment.isEmpty {
            if number > 0 {
                writer.write(local: Local.event, global: 21, fields: eventFields(lastTimestamp, type: 4))  // stop_all
            }
            lastTimestamp = segment[0].timestamp
            writer.write(local: Local.event, global: 21, fields: eventFields(lastTimestamp, type: 0))  // timer start
            for record in segment {
                var fields = recordFields(record)
                if redefinesRecordsMidway, index >= records.count / 2 { fields.reverse() }
                let developer =
                    developerField
                    ? [Field(number: 0, baseType: 0x84, bytes: encode(.uint16, record.developerValue.map(Int64.init)))]
                    : []
                if compressedTimestamps, record.timestamp >= lastTimestamp, record.timestamp - lastTimestamp < 32 {
                    writer.write(
                        local: Local.compressedRecord, global: 20, fields: fields.filter { $0.number != 253 },
                        developer: developer, compressedTimestamp: record.timestamp)
                } else {
                    writer.write(local: Local.record, global: 20, fields: fields, developer: developer)
                }
                lastTimestamp = record.timestamp
                index += 1
            }
        }

        writer.write(local: Local.event, global: 21, fields: eventFields(last, type: 4))  // timer stop_all
        for lap in laps ?? [Lap(startTime: first, timestamp: last, totalDistance: distance)] {
            let milliseconds = Int64(lap.timestamp &- lap.startTime) * 1000
            writer.write(
                local: Local.lap, global: 19,
                fields: [
                    field(253, .uint32, Int64(lap.timestamp)),
                    field(0, .enumeration, 9),  // event: lap
                    field(1, .enumeration, 1),  // event_type: stop
                    field(2, .uint32, Int64(lap.startTime)),
                    field(7, .uint32, milliseconds),  // total_elapsed_time
                    field(8, .uint32, milliseconds),  // total_timer_time
                    field(9, .uint32, Int64((lap.totalDistance * 100).rounded())),  // total_distance
                ])
        }
        let milliseconds = Int64(last &- first) * 1000
        writer.write(
            local: Local.session, global: 18,
            fields: [
                field(253, .uint32, Int64(last)),
                field(0, .enumeration, 8),  // event: session
                field(1, .enumeration, 1),  // event_type: stop
                field(2, .uint32, Int64(first)),  // start_time
                field(5, .enumeration, Int64(sport)),
                field(6, .enumeration, 0),  // sub_sport: generic
                field(7, .uint32, milliseconds),  // total_elapsed_time
                field(8, .uint32, milliseconds),  // total_timer_time
                field(9, .uint32, Int64((distance * 100).rounded())),  // total_distance
            ])
        writer.write(
            local: Local.activity, global: 34,
            fields: [
                field(253, .uint32, Int64(last)),
                field(0, .uint32, milliseconds),  // total_timer_time
                field(1, .uint16, 1),  // num_sessions
                field(2, .enumeration, 0),  // type: manual
                field(3, .enumeration, 26),  // event: activity
                field(4, .enumeration, 1),  // event_type: stop
                field(5, .uint32, Int64(last) + 3600),  // local_timestamp: UTC+1
            ])
        return file(data: writer.bytes)
    }

    /// A complete file around `data`: the header (with its CRC when 14 bytes long), the data and
    /// the file CRC.
    func file(data: [UInt8]) -> [UInt8] {
        let size = UInt32(data.count)
        var bytes: [UInt8] = [UInt8(headerSize), 0x20]  // header size, protocol version 2.0
        bytes += [0x54, 0x08]  // profile version 21.32, little-endian
        bytes += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
        bytes += Array(".FIT".utf8)
        if headerSize >= 14 {
            let crc = Self.crc(bytes)
            bytes += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
            bytes += [UInt8](repeating: 0, count: headerSize - 14)
        }
        bytes += data
        let crc = Self.crc(bytes)
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// Complete files one after another: a chained FIT file.
    static func chain(_ files: [[UInt8]]) -> [UInt8] {
        files.flatMap { $0 }
    }

    /// The FIT CRC-16 of `bytes`, computed a bit at a time.
    static func crc(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 {
                crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1
            }
        }
        return crc
    }

    // MARK: - Messages

    /// The local message types this encoder uses.
    private enum Local {
        static let fileID: UInt8 = 0
        static let event: UInt8 = 1
        static let record: UInt8 = 2
        /// At most 3: compressed timestamp headers have two bits for the local type.
        static let compressedRecord: UInt8 = 3
        static let lap: UInt8 = 4
        static let session: UInt8 = 5
        static let activity: UInt8 = 6
        static let developerDataID: UInt8 = 7
        static let fieldDescription: UInt8 = 8
    }

    /// The base types the encoder writes: their number, size and invalid value.
    enum BaseType {
        case enumeration, sint8, uint8, uint16, sint32, uint32, uint32z

        var number: UInt8 {
            switch self {
            case .enumeration: 0x00
            case .sint8: 0x01
            case .uint8: 0x02
            case .uint16: 0x84
            case .sint32: 0x85
            case .uint32: 0x86
            case .uint32z: 0x8C
            }
        }

        var size: Int {
            switch self {
            case .enumeration, .sint8, .uint8: 1
            case .uint16: 2
            case .sint32, .uint32, .uint32z: 4
            }
        }

        var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8: 0xFF
            case .sint8: 0x7F
            case .uint16: 0xFFFF
            case .sint32: 0x7FFF_FFFF
            case .uint32: 0xFFFF_FFFF
            case .uint32z: 0
            }
        }
    }

    /// A field of a definition, with its value's bytes for the data message.
    struct Field: Sendable, Hashable {
        var number: UInt8
        var baseType: UInt8
        var bytes: [UInt8]
    }

    /// `value` in `type`'s size and this encoder's byte order; nil gives the invalid value.
    func encode(_ type: BaseType, _ value: Int64?) -> [UInt8] {
        let raw = value.map { UInt64(bitPattern: $0) } ?? type.invalid
        let littleEndian = (0..<type.size).map { UInt8(truncatingIfNeeded: raw >> (8 * UInt64($0))) }
        return bigEndian ? littleEndian.reversed() : littleEndian
    }

    func field(_ number: UInt8, _ type: BaseType, _ value: Int64?) -> Field {
        Field(number: number, baseType: type.number, bytes: encode(type, value))
    }

    /// A string field of `size` bytes, NUL-padded.
    func string(_ number: UInt8, _ text: String, size: Int) -> Field {
        let utf8 = Array(text.utf8.prefix(size - 1))
        return Field(number: number, baseType: 0x07, bytes: utf8 + [UInt8](repeating: 0, count: size - utf8.count))
    }

    private func eventFields(_ timestamp: UInt32, type: Int64) -> [Field] {
        [
            field(253, .uint32, Int64(timestamp)),
            field(0, .enumeration, 0),  // event: timer
            field(1, .enumeration, type),  // event_type
        ]
    }

    private func recordFields(_ record: Record) -> [Field] {
        func semicircles(_ degrees: Double?) -> Int64? {
            degrees.map { Int64(($0 * 2_147_483_648 / 180).rounded()) }
        }
        func scaled(_ value: Double?, _ scale: Double, _ offset: Double = 0) -> Int64? {
            value.map { Int64((($0 + offset) * scale).rounded()) }
        }
        return [
            field(253, .uint32, Int64(record.timestamp)),
            field(0, .sint32, semicircles(record.latitude)),
            field(1, .sint32, semicircles(record.longitude)),
            enhancedFields
                ? field(78, .uint32, scaled(record.altitude, 5, 500))
                : field(2, .uint16, scaled(record.altitude, 5, 500)),
            field(3, .uint8, record.heartRate.map(Int64.init)),
            field(4, .uint8, record.cadence.map(Int64.init)),
            field(5, .uint32, scaled(record.distance, 100)),
            enhancedFields
                ? field(73, .uint32, scaled(record.speed, 1000))
                : field(6, .uint16, scaled(record.speed, 1000)),
            field(7, .uint16, record.power.map(Int64.init)),
            field(13, .sint8, record.temperature.map(Int64.init)),
        ]
    }

    /// Appends messages, writing a definition message whenever a local type's layout changes.
    private struct MessageWriter {
        let bigEndian: Bool
        var bytes: [UInt8] = []
        /// The definition message last written for each local type.
        private var defined: [UInt8: [UInt8]] = [:]

        init(bigEndian: Bool) {
            self.bigEndian = bigEndian
        }

        /// Writes a data message (and its definition first, if needed).
        ///
        /// - Parameter compressedTimestamp: when set, the message gets a compressed timestamp
        ///   header carrying its low five bits; `local` must then be 0–3.
        mutating func write(
            local: UInt8, global: UInt16, fields: [Field], developer: [Field] = [], compressedTimestamp: UInt32? = nil
        ) {
            var definition: [UInt8] = [0x40 | local | (developer.isEmpty ? 0 : 0x20), 0, bigEndian ? 1 : 0]
            let globalBytes = [UInt8(global & 0xFF), UInt8(global >> 8)]
            definition += bigEndian ? globalBytes.reversed() : globalBytes
            definition.append(UInt8(fields.count))
            for field in fields {
                definition += [field.number, UInt8(field.bytes.count), field.baseType]
            }
            if !developer.isEmpty {
                definition.append(UInt8(developer.count))
                for field in developer {
                    definition += [field.number, UInt8(field.bytes.count), 0]  // developer_data_index 0
                }
            }
            if defined[local] != definition {
                bytes += definition
                defined[local] = definition
            }
            if let compressedTimestamp {
                bytes.append(0x80 | local << 5 | UInt8(compressedTimestamp & 0x1F))
            } else {
                bytes.append(local)
            }
            for field in fields + developer {
                bytes += field.bytes
            }
        }
    }
}
