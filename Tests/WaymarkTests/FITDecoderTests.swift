import Foundation
import Testing

@testable import Waymark

/// The FIT decoder, and the profile mapping on top of it, against the suite's own encoder
/// (FITEncoder.swift), which was written separately from the protocol's description: the two
/// CRCs agree, every encoder option decodes to the values written whatever the sizes of the
/// reads, a truncated or corrupted file is an error (never a crash, and never a changed message
/// before the damage), and the protocol's corners (compressed timestamps, invalid values,
/// odd-sized fields, chained files) read as the protocol says.
///
/// These checks come from the standalone driver the decoder was written against, which also
/// compared it with gpsbabel on a corpus; that comparison stays out of the suite.
@Suite struct FITDecoderTests {
    /// The data messages of `bytes`, and the error that ended them, if any; records an issue when
    /// the decoder does not keep returning nil after the end, or its error after an error.
    static func decode(_ bytes: [UInt8], pieceSize: Int = .max) -> (messages: [FITMessage], error: GPXError?) {
        let decoder = FITDecoder(source: MemoryByteSource(bytes, pieceSize: pieceSize), fileName: "t.fit")
        var messages: [FITMessage] = []
        do {
            while let message = try decoder.next() { messages.append(message) }
            if try decoder.next() != nil { Issue.record("a message after the end") }
            return (messages, nil)
        } catch let error as GPXError {
            do {
                _ = try decoder.next()
                Issue.record("no error after the error \(error)")
            } catch let again as GPXError {
                if again != error { Issue.record("another error after the error: \(again)") }
            } catch {
                Issue.record("an error that is not a GPXError: \(error)")
            }
            return (messages, error)
        } catch {
            Issue.record("an error that is not a GPXError: \(error)")
            return (messages, nil)
        }
    }

    /// A file around `data`, from the default encoder.
    static func file(_ data: [UInt8]) -> [UInt8] { FITEncoder().file(data: data) }

    // MARK: - CRC

    @Test func bothCRCsGiveTheCheckValueOfTheCheckString() {
        #expect(FITCRC.checksum(Array("123456789".utf8)) == 0xBB3D)
        #expect(FITEncoder.crc(Array("123456789".utf8)) == 0xBB3D)
    }

    static let crcInputs = Property<[UInt8]>(
        name: "FIT CRC inputs", count: 200,
        generate: { r in r.array(0...300) { UInt8(truncatingIfNeeded: $0.next()) } },
        shrink: { shrinkArray($0, minimum: 0) })

    @Test func theDecodersNibbleCRCEqualsTheEncodersBitwiseCRC() {
        Self.crcInputs.check { bytes in
            let (nibble, bitwise) = (FITCRC.checksum(bytes), FITEncoder.crc(bytes))
            return nibble == bitwise ? [] : ["nibble-wise \(nibble), bit-wise \(bitwise)"]
        }
    }

    // MARK: - Round trips

    static let start = FITEncoder.fitSeconds(unix: 1_714_550_400)  // 2024-05-01T08:00:00Z

    /// A run: records 3 s apart, then 7 s apart (so that compressed timestamps roll over), then
    /// 5 s apart after a gap of 177 s (so that a full timestamp comes back); some values absent,
    /// one position near the corner of the map.
    static let records: [FITEncoder.Record] = (0..<90).map { i in
        let seconds = i < 40 ? i * 3 : i < 70 ? 120 + (i - 40) * 7 : 500 + (i - 70) * 5
        var r = FITEncoder.Record(
            timestamp: start + UInt32(seconds), latitude: 48.1372 + Double(i) * 0.00011,
            longitude: 11.5755 - Double(i) * 0.00013, altitude: 519.2 + Double(i % 17) * 0.4 - 3,
            heartRate: UInt8(90 + i % 60), cadence: UInt8(80 + i % 10), power: UInt16(200 + i),
            temperature: Int8(-5 + i % 30), speed: 2.5 + Double(i % 5) * 0.125, distance: Double(i) * 12.34,
            developerValue: UInt16(i * 3))
        if i % 37 == 5 {
            r.heartRate = nil
            r.altitude = nil
        }
        if i % 41 == 7 {
            r.latitude = nil
            r.longitude = nil
        }
        if i == 20 {
            r.latitude = -89.999
            r.longitude = -179.999
        }
        return r
    }

    enum Option: String, CaseIterable, Sendable {
        case plain, bigEndian, header12, compressedTimestamps, enhancedFields, developerField, redefinedMidway
        case everything

        var encoder: FITEncoder {
            var e = FITEncoder()
            switch self {
            case .plain: break
            case .bigEndian: e.bigEndian = true
            case .header12: e.headerSize = 12
            case .compressedTimestamps: e.compressedTimestamps = true
            case .enhancedFields: e.enhancedFields = true
            case .developerField: e.developerField = true
            case .redefinedMidway: e.redefinesRecordsMidway = true
            case .everything:
                e.bigEndian = true
                e.headerSize = 12
                e.compressedTimestamps = true
                e.enhancedFields = true
                e.developerField = true
                e.redefinesRecordsMidway = true
            }
            return e
        }
    }

    @Test(arguments: Option.allCases)
    func eachEncoderOptionDecodesToTheValuesWrittenWholeAndByteByByte(_ option: Option) throws {
        let encoder = option.encoder
        let bytes = encoder.activity(records: Self.records)
        let (messages, error) = Self.decode(bytes)
        #expect(error == nil)
        #expect(Self.decode(bytes, pieceSize: 1).messages == messages, "in 1-byte pieces")

        var problems = Problems()
        let recordMessages = messages.filter { $0.global == FITProfile.MessageNumber.record }
        let decoded = recordMessages.map(FITRecord.init)
        problems.expect(decoded.count == Self.records.count, "\(decoded.count) records")
        for (i, (d, e)) in zip(decoded, Self.records).enumerated() {
            problems.expect(d.timestamp == FITProfile.date(fitSeconds: UInt64(e.timestamp)), "\(i): time")
            if let latitude = e.latitude, let longitude = e.longitude, let c = d.coordinate {
                problems.expect(abs(c.latitude - latitude) < 1e-7 && abs(c.longitude - longitude) < 1e-7, "\(i): place")
            } else {
                problems.expect(d.coordinate == nil && e.latitude == nil, "\(i): a place, or none")
            }
            if let altitude = e.altitude {
                problems.expect(abs((d.altitude ?? .nan) - altitude) <= 0.1, "\(i): altitude \(d.altitude ?? .nan)")
            } else {
                problems.expect(d.altitude == nil, "\(i): no altitude")
            }
            problems.expect(d.heartRate == e.heartRate.map(Int.init), "\(i): heart rate")
            problems.expect(d.cadence == e.cadence.map(Double.init), "\(i): cadence")
            problems.expect(d.power == e.power.map(Int.init), "\(i): power")
            problems.expect(d.temperature == e.temperature.map(Int.init), "\(i): temperature")
            problems.expect(abs((d.speed ?? .nan) - e.speed!) < 0.0006, "\(i): speed")
            problems.expect(abs((d.distance ?? .nan) - e.distance!) < 0.006, "\(i): distance")
        }
        let developerFields = encoder.developerField ? 1 : 0
        problems.expect(recordMessages.allSatisfy { $0.developerFieldCount == developerFields }, "developer fields")
        if encoder.compressedTimestamps {
            // The records of local type 3 are the ones with compressed timestamp headers.
            problems.expect(recordMessages.filter { $0.localType == 3 }.count > 60, "compressed headers")
        }

        var counts: [String: Int] = [:]
        let first = FITProfile.date(fitSeconds: UInt64(Self.records[0].timestamp))
        let seconds = Int64(Self.records.last!.timestamp - Self.records[0].timestamp)
        for message in messages {
            switch FITProfileMessage(message) {
            case .fileID(let f):
                counts["file_id", default: 0] += 1
                problems.expect(f.type == 4 && f.manufacturer == 255 && f.serialNumber == 12345, "\(f)")
            case .lap(let lap):
                counts["lap", default: 0] += 1
                problems.expect(lap.startTime == first && lap.totalElapsedTime == .seconds(seconds), "\(lap)")
                problems.expect(lap.totalDistance == (Self.records.last!.distance! * 100).rounded() / 100, "\(lap)")
            case .session(let s):
                counts["session", default: 0] += 1
                problems.expect(s.sport == 1 && s.subSport == 0 && s.startTime == first, "\(s)")
            case .event(let e):
                counts[e.isTimerStart ? "start" : e.isTimerStop ? "stop" : "event", default: 0] += 1
            case .activity(let a):
                counts["activity", default: 0] += 1
                problems.expect(a.utcOffset == .seconds(3600) && a.numberOfSessions == 1, "\(a)")
            case .record:
                break
            case .other(let m):
                problems.expect(encoder.developerField && (m.global == 206 || m.global == 207), "message \(m.global)")
            }
        }
        let expected = ["file_id": 1, "lap": 1, "session": 1, "start": 1, "stop": 1, "activity": 1]
        problems.expect(counts == expected, "messages \(counts)")
        if encoder.developerField {
            let description = messages.first { $0.global == FITProfile.MessageNumber.fieldDescription }
            problems.expect(description?.string(3) == "test_counter" && description?.string(8) == "count", "name")
            problems.expect(description?.uint(2) == 0x84, "the developer field's base type")
            let id = messages.first { $0.global == FITProfile.MessageNumber.developerDataID }
            problems.expect(id?.field(1)?.values == [.bytes(Array(0x10..<0x20))], "application_id")
        }
        #expect(problems.list == [])
    }

    /// The messages of a file, as they come when it starts `offset` bytes into a chain.
    static func messages(_ file: [UInt8], at offset: Int) -> [FITMessage] {
        decode(file).messages.map {
            var m = $0
            m.offset += offset
            return m
        }
    }

    @Test func chainedFilesDecodeAsTheirPartsOneAfterAnother() {
        let parts = Option.allCases.map { $0.encoder.activity(records: Array(Self.records.prefix(20))) }
        let chained = FITEncoder.chain(parts)
        var separately: [FITMessage] = []
        for (i, part) in parts.enumerated() {
            separately += Self.messages(part, at: parts[..<i].map(\.count).reduce(0, +))
        }
        let whole = Self.decode(chained)
        #expect(whole.error == nil)
        #expect(whole.messages == separately)
        #expect(Self.decode(chained, pieceSize: 1).messages == separately, "in 1-byte pieces")

        // Files with no data count as files.
        let empty = Self.file([])
        #expect(Self.decode(empty).messages.isEmpty && Self.decode(empty).error == nil)
        #expect(Self.decode(empty + parts[1] + empty).messages == Self.messages(parts[1], at: empty.count))
        // What follows a file must be a whole file.
        #expect(Self.decode(chained + [0x00, 0x01]).error?.code == .truncated)
        #expect(Self.decode(parts[0] + parts[1].prefix(5)).error?.code == .truncated)
        #expect(Self.decode(parts[0] + Array(repeating: 0x20, count: 14)).error?.code == .invalidValue)
    }

    // MARK: - Truncation and corruption

    /// Two small files chained: one with compressed timestamps and a developer field, one plain.
    static let smallChain: (bytes: [UInt8], boundary: Int) = {
        var encoder = FITEncoder()
        encoder.compressedTimestamps = true
        encoder.developerField = true
        let first = encoder.activity(records: Array(records.prefix(8)))
        let second = FITEncoder().activity(records: Array(records.suffix(3)))
        return (first + second, first.count)
    }()

    /// A file cut anywhere is an error, except where one chained file ends and the next begins;
    /// what came before the cut is what the whole file begins with.
    @Test func everyTruncationIsAnErrorAndKeepsAPrefixOfTheMessages() {
        let (bytes, boundary) = Self.smallChain
        let full = Self.decode(bytes).messages
        #expect(Self.decode(bytes).error == nil)
        let firstFile = Self.decode(Array(bytes[..<boundary])).messages
        var problems = Problems()
        for n in 0..<bytes.count {
            let (messages, error) = Self.decode(Array(bytes[..<n]))
            if n == boundary {
                problems.expect(error == nil && messages == firstFile, "cut between the files: \(error?.message ?? "")")
            } else {
                // Fewer bytes than a header: not a FIT file at all.
                let code: GPXError.Code = n < 12 ? .notGPX : .truncated
                problems.expect(error?.code == code, "cut at \(n): \(String(describing: error))")
            }
            problems.expect(messages == Array(full.prefix(messages.count)), "cut at \(n): other messages")
        }
        #expect(problems.list == [])
    }

    /// The CRCs catch every single-byte error, and never anything but a `GPXError` comes out;
    /// the messages that lie wholly before the corrupt byte come out as they are.
    @Test func aCorruptByteAnywhereIsAnErrorNeverACrash() {
        let (bytes, _) = Self.smallChain
        let full = Self.decode(bytes).messages
        var problems = Problems()
        for i in bytes.indices {
            // Those that another message follows before byte i.
            let intact = zip(full, full.dropFirst()).prefix { $1.offset <= i }.map(\.0)
            // One flip per byte (every byte flipped is too slow in a debug build): the lowest bit,
            // the highest, or all.
            let mask: UInt8 = [0x01, 0x80, 0xFF][i % 3]
            var corrupt = bytes
            corrupt[i] ^= mask
            let (messages, error) = Self.decode(corrupt, pieceSize: i % 2 == 0 ? .max : 3)
            problems.expect(error != nil, "byte \(i) ^ \(mask): no error")
            problems.expect(
                messages.prefix(intact.count) == intact.prefix(messages.count), "byte \(i) ^ \(mask): other messages")
        }
        #expect(problems.list == [])
    }

    // MARK: - Hand-made files

    struct Bad: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: GPXError.Code
        var fragment: String
        var testDescription: String { name }
    }

    static let bad: [Bad] = {
        let plain = FITEncoder().activity(records: Array(records.prefix(5)))
        var badHeaderCRC = plain
        badHeaderCRC[12] ^= 1
        var badFileCRC = plain
        badFileCRC[badFileCRC.count - 1] ^= 1
        var pastTheEnd = plain
        pastTheEnd[4...7] = [0xFF, 0xFF, 0x0F, 0x00]
        pastTheEnd[12...13] = [0, 0]  // no header CRC to check
        var version3 = plain
        version3[1] = 0x30
        let crc = FITEncoder.crc(version3[..<12])
        version3[12...13] = [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        var shortHeader = plain
        shortHeader[0] = 11
        return [
            Bad(name: "empty", bytes: [], code: .notGPX, fragment: "the file is empty"),
            Bad(name: "shorter than a header", bytes: Array(plain.prefix(5)), code: .notGPX, fragment: "too short"),
            Bad(name: "XML", bytes: Array("<?xml version='1.0'?><gpx/>".utf8), code: .notGPX, fragment: ".FIT"),
            Bad(name: "header of 11 bytes", bytes: shortHeader, code: .notGPX, fragment: "a header size of 11"),
            Bad(name: "protocol 3.0", bytes: version3, code: .invalidValue, fragment: "newer than this reader"),
            Bad(name: "bad header CRC", bytes: badHeaderCRC, code: .invalidValue, fragment: "the header CRC is"),
            Bad(name: "bad file CRC", bytes: badFileCRC, code: .invalidValue, fragment: "the file CRC is"),
            Bad(name: "data size past the end", bytes: pastTheEnd, code: .truncated, fragment: "the file ends early"),
            Bad(
                name: "no definition", bytes: file([0x03, 0x01]), code: .invalidValue,
                fragment: "which no definition message defined"),
            Bad(
                name: "compressed timestamp first", bytes: file([0x40, 0, 0, 20, 0, 1, 3, 1, 2, 0x80, 5]),
                code: .invalidValue, fragment: "no earlier message gave a full timestamp"),
            Bad(
                name: "architecture 7", bytes: file([0x40, 0, 7, 20, 0, 0]), code: .invalidValue,
                fragment: "architecture is 7"),
            Bad(
                name: "message past the data", bytes: file([0x40, 0, 0, 20, 0, 1, 3, 4, 0x86, 0x00, 1]),
                code: .invalidValue, fragment: "runs past the end of the data"),
        ]
    }()

    @Test(arguments: bad)
    func aBrokenFileGetsAnErrorSayingWhatIsWrong(_ bad: Bad) {
        for piece in [Int.max, 1] {
            let error = Self.decode(bad.bytes, pieceSize: piece).error
            #expect(error?.code == bad.code, "\(String(describing: error))")
            #expect(error?.message.contains(bad.fragment) == true, "\(String(describing: error))")
            #expect(error?.description.hasPrefix("t.fit: at byte ") == true)
        }
    }

    @Test func aZeroHeaderCRCIsNotChecked() {
        var bytes = FITEncoder().activity(records: Array(Self.records.prefix(5)))
        let messages = Self.decode(bytes).messages
        bytes[12...13] = [0, 0]
        let crc = FITEncoder.crc(bytes.dropLast(2))
        bytes[(bytes.count - 2)...] = [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        #expect(Self.decode(bytes).error == nil)
        #expect(Self.decode(bytes).messages == messages)
    }

    /// Odd-sized fields and unknown base types are kept as bytes; invalid values are dropped,
    /// array elements one by one, and a field with none left is left out.
    @Test func oddFieldsAreKeptAsBytesAndInvalidValuesAreDropped() throws {
        let definition: [UInt8] = [
            0x40, 0, 0, 0x34, 0x12, 7,
            1, 3, 0x84,  // 3 bytes of uint16
            2, 2, 0x1F,  // an unknown base type
            3, 6, 0x84,  // 3 uint16, the middle one invalid
            4, 8, 0x07,  // strings "ab" and "cd", NUL-padded
            5, 4, 0x88,  // float32, invalid
            6, 4, 0x85,  // sint32, invalid
            7, 2, 0x0D,  // byte, all 0xFF: invalid
        ]
        let data: [UInt8] = [
            0x00, 1, 2, 3, 9, 9, 1, 0, 0xFF, 0xFF, 3, 0, 0x61, 0x62, 0, 0, 0x63, 0x64, 0, 0,
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF,
        ]
        let (messages, error) = Self.decode(Self.file(definition + data))
        #expect(error == nil)
        let m = try #require(messages.first)
        #expect(m.global == 0x1234)
        #expect(m.field(1)?.values == [.bytes([1, 2, 3])])
        #expect(m.field(2)?.values == [.bytes([9, 9])])
        #expect(m.field(3)?.values == [.uint(1), .uint(3)])
        #expect(m.field(4)?.values == [.string("ab"), .string("cd")])
        #expect(m.fields.map(\.number) == [1, 2, 3, 4])
    }

    @Test func bigEndianValuesKeepTheirSigns() {
        let definition: [UInt8] = [0x40, 0, 1, 0x12, 0x34, 3, 1, 4, 0x85, 2, 2, 0x83, 3, 4, 0x88]
        let data: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFE, 0x80, 0x00, 0x3F, 0xC0, 0x00, 0x00]
        let m = Self.decode(Self.file(definition + data)).messages.first
        #expect(m?.global == 0x1234)
        #expect(m?.int(1) == -2 && m?.int(2) == -32768 && m?.double(3) == 1.5)
    }

    /// A compressed header's offset replaces the low five bits of the last timestamp, plus 32
    /// seconds when those bits went down.
    @Test func compressedTimestampsRollOverAsTheProtocolSays() {
        let definitions: [UInt8] = [0x40, 0, 0, 20, 0, 1, 253, 4, 0x86, 0x41, 0, 0, 20, 0, 1, 3, 1, 2]
        let data: [UInt8] = [
            0x00, 0x3E, 0x00, 0x00, 0x00,  // timestamp 62: low bits 30
            0xA0 | 31, 90,  // offset 31: 63
            0xA0 | 2, 91,  // offset 2, below 31: rolls over to 66
            0xA0 | 2, 92,  // the same offset: 66 again
        ]
        let messages = Self.decode(Self.file(definitions + data)).messages
        #expect(messages.map { $0.uint(253) } == [62, 63, 66, 66])
        #expect(messages.map { $0.uint(3) } == [nil, 90, 91, 92])
    }

    /// The largest definition the protocol allows: 255 fields of 255 bytes and as many developer
    /// fields, more than the decoder's 64 KiB buffer holds.
    @Test func theLargestDefinitionDecodesInPieces() {
        let numbers = (0...254).map { UInt8($0) }
        var definition: [UInt8] = [0x60, 0, 0, 20, 0, 255]
        definition += numbers.flatMap { [$0, 255, 0x02] }  // uint8 arrays
        definition.append(255)
        definition += numbers.flatMap { [$0, 255, 0] }
        let data: [UInt8] = [0x00] + [UInt8](repeating: 7, count: 255 * 255 * 2)
        let invalid: [UInt8] = [0x00] + [UInt8](repeating: 0xFF, count: 255 * 255 * 2)
        let bytes = Self.file(definition + data + invalid)
        let (messages, error) = Self.decode(bytes)
        #expect(error == nil)
        #expect(messages.count == 2)
        #expect(messages.first?.fields.count == 255 && messages.first?.fields.first?.values.count == 255)
        #expect(messages.first?.developerFieldCount == 255 && messages.last?.fields.isEmpty == true)
        #expect(Self.decode(bytes, pieceSize: 1000).messages == messages)
    }
}
