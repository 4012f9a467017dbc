// A streaming decoder for the FIT protocol (Garmin's Flexible and Interoperable Data Transfer).
//
// It works at the protocol level: file headers, record headers, definition and data messages,
// base types, compressed timestamps, CRCs and chained files. It knows nothing of what a message
// means; FITProfile.swift maps the few messages an activity reader needs.
//
// Written from the protocol's public description: "Flexible & Interoperable Data Transfer (FIT)
// Protocol", Dynastream document D00001275, and the FIT SDK's protocol overview on
// developer.garmin.com.

/// One value of a FIT field, in the kind its base type gives.
enum FITValue: Sendable, Hashable {
    /// A signed integer: sint8, sint16, sint32 or sint64.
    case int(Int64)
    /// An unsigned integer: enum, uint8 … uint64 and the `z` types.
    case uint(UInt64)
    /// A float32 or float64; never NaN.
    case float(Double)
    /// A string, up to its NUL terminator; never empty.
    case string(String)
    /// Raw bytes: a `byte` field, an unknown base type, or a field whose size is not a multiple of
    /// its base type's size.
    case bytes([UInt8])
}

/// One field of a data message.
struct FITField: Sendable, Hashable {
    /// The field definition number, as the profile numbers the fields of each message.
    var number: UInt8
    /// The base type byte from the definition message (e.g. 0x86 for uint32).
    var baseType: UInt8
    /// The valid values, in order: one for a plain field, several for an array. Values equal to
    /// the base type's invalid sentinel are left out, so this is never empty.
    var values: [FITValue]
}

/// One data message, with its fields decoded but not yet given meaning.
struct FITMessage: Sendable, Hashable {
    /// The global message number: 20 is `record`, 0 is `file_id` (see ``FITProfile``).
    var global: UInt16
    /// The local message type, 0–15, that the record header named.
    var localType: UInt8
    /// The fields that hold at least one valid value, in the order of the definition. A message
    /// with a compressed timestamp header gets its timestamp as field 253 (uint32, FIT seconds).
    var fields: [FITField]
    /// How many developer fields the message carried; the decoder skips their bytes.
    var developerFieldCount: Int
    /// The byte offset of the message's record header from the start of the stream (for chained
    /// files, from the start of the first file).
    var offset: Int

    /// The first field numbered `number`, or nil when it is absent or held only invalid values.
    func field(_ number: UInt8) -> FITField? {
        fields.first { $0.number == number }
    }

    /// The first value of field `number` as an unsigned integer, when it is a non-negative integer.
    func uint(_ number: UInt8) -> UInt64? {
        switch field(number)?.values.first {
        case .uint(let value): return value
        case .int(let value) where value >= 0: return UInt64(value)
        default: return nil
        }
    }

    /// The first value of field `number` as a signed integer, when it is an integer that fits.
    func int(_ number: UInt8) -> Int64? {
        switch field(number)?.values.first {
        case .int(let value): return value
        case .uint(let value) where value <= UInt64(Int64.max): return Int64(value)
        default: return nil
        }
    }

    /// The first value of field `number` as a Double, whatever its numeric base type.
    func double(_ number: UInt8) -> Double? {
        switch field(number)?.values.first {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        default: return nil
        }
    }

    /// The first string of field `number`.
    func string(_ number: UInt8) -> String? {
        if case .string(let value) = field(number)?.values.first { return value }
        return nil
    }
}

/// Reads the data messages of a FIT file, or of several FIT files one after another, from a
/// ``ByteSource``.
///
/// The decoder streams: it holds one 64 KiB buffer and the current definitions (at most 16, each
/// of at most 255 regular and 255 developer fields), never the whole file. Every byte counts
/// towards the file's CRC, which is checked at the end of each file; a mismatch is an error, so
/// the messages of a corrupt file come before the error that rejects it.
///
/// Errors are ``GPXError`` values with line and column 0 and the byte offset in the message:
/// `.notGPX` when the stream does not start with a FIT header, `.truncated` when it ends before
/// the data its header promises, `.invalidValue` for anything else. After an error, `next()`
/// throws the same error again.
final class FITDecoder {
    /// Where the decoder is in the stream.
    private enum Phase {
        /// Before a file header: the first one, or one that may follow a complete file.
        case fileHeader
        /// Inside a file's data, which ends (before its 2-byte CRC) at byte `end`.
        case data(end: Int, size: Int)
        case finished
        case failed(any Error)
    }

    private let reader: FITByteReader
    private let fileName: String
    private var phase = Phase.fileHeader
    /// How many complete files (header, data and CRC) have been read.
    private var filesRead = 0
    /// The definitions in force, by local message type. They last until the end of their file.
    private var definitions = [FITDefinition?](repeating: nil, count: 16)
    /// The last full timestamp (field 253 of any message), the base of compressed timestamps.
    private var lastTimestamp: UInt32?

    /// - Parameters:
    ///   - source: the bytes of the file(s).
    ///   - fileName: the name used in error messages.
    init(source: ByteSource, fileName: String) {
        self.reader = FITByteReader(source: source)
        self.fileName = fileName
    }

    /// Returns the next data message, or nil at the clean end of the stream.
    ///
    /// Definition messages are consumed on the way and never returned.
    func next() throws -> FITMessage? {
        do {
            while true {
                switch phase {
                case .finished:
                    return nil
                case .failed(let error):
                    throw error
                case .fileHeader:
                    if filesRead > 0, try !reader.hasMoreBytes() {
                        phase = .finished
                        return nil
                    }
                    try readFileHeader()
                case .data(let end, let size):
                    if reader.offset == end {
                        try readFileCRC()
                        filesRead += 1
                        phase = .fileHeader
                    } else if let message = try readRecord(dataEnd: end, dataSize: size) {
                        return message
                    }
                }
            }
        } catch {
            phase = .failed(error)
            throw error
        }
    }

    // MARK: - File header and CRC

    /// Reads a 12- or 14-byte (or longer) file header and enters its data.
    private func readFileHeader() throws {
        let start = reader.offset
        reader.limit = .max
        reader.crc = 0
        definitions = [FITDefinition?](repeating: nil, count: 16)
        lastTimestamp = nil
        let first = filesRead == 0
        let notFIT: GPXError.Code = first ? .notGPX : .invalidValue
        let what = first ? "not a FIT file" : "the bytes after the end of a FIT file are not another FIT file"

        guard try reader.hasMoreBytes() else {
            throw failure(.notGPX, at: start, "the file is empty, not a FIT file")
        }
        var header: [UInt8]
        do {
            header = try reader.withBytes(12) { Array($0) }
        } catch FITByteReader.Stop.endOfStream(let end) {
            if first { throw failure(.notGPX, at: end, "too short to be a FIT file") }
            throw failure(.truncated, at: end, "the file ends inside the header of a chained FIT file")
        }
        let size = Int(header[0])
        guard header[8] == 0x2E, header[9] == 0x46, header[10] == 0x49, header[11] == 0x54 else {
            throw failure(notFIT, at: start + 8, "\(what): the header has no \".FIT\" signature")
        }
        guard size >= 12 else {
            throw failure(notFIT, at: start, "\(what): a header size of \(size) bytes (FIT headers have 12 or 14)")
        }
        do {
            header += try reader.withBytes(size - 12) { Array($0) }
        } catch FITByteReader.Stop.endOfStream(let end) {
            throw failure(.truncated, at: end, "the file ends inside its \(size)-byte header")
        }
        let major = header[1] >> 4
        let minor = header[1] & 0x0F
        guard major <= 2 else {
            throw failure(
                .invalidValue, at: start + 1, "FIT protocol version \(major).\(minor) is newer than this reader (2.x)")
        }
        if size >= 14 {
            let stored = UInt16(header[12]) | UInt16(header[13]) << 8
            let computed = FITCRC.checksum(header[0..<12])
            if stored != 0, stored != computed {
                throw failure(
                    .invalidValue, at: start + 12,
                    "the header CRC is \(hex(stored)), but the header's bytes give \(hex(computed))")
            }
        }
        let dataSize = Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16 | Int(header[7]) << 24
        phase = .data(end: reader.offset + dataSize, size: dataSize)
    }

    /// Reads the 2-byte CRC that ends a file and compares it with the CRC of the file's bytes.
    private func readFileCRC() throws {
        reader.limit = .max
        let at = reader.offset
        let computed = reader.crc
        let stored: UInt16
        do {
            stored = try reader.withBytes(2) { UInt16($0[0]) | UInt16($0[1]) << 8 }
        } catch FITByteReader.Stop.endOfStream(let end) {
            throw failure(.truncated, at: end, "the file ends before its 2-byte CRC")
        }
        guard stored == computed else {
            throw failure(
                .invalidValue, at: at, "the file CRC is \(hex(stored)), but the file's bytes give \(hex(computed))")
        }
    }

    // MARK: - Records

    /// Reads one record: returns a data message, or nil after a definition message.
    private func readRecord(dataEnd: Int, dataSize: Int) throws -> FITMessage? {
        reader.limit = dataEnd
        let at = reader.offset
        do {
            switch FITRecordHeader(try reader.readByte()) {
            case .definition(let localType, let hasDeveloperFields):
                definitions[Int(localType)] = try readDefinition(at: at, hasDeveloperFields: hasDeveloperFields)
                return nil
            case .data(let localType):
                return try readData(localType: localType, at: at, timeOffset: nil)
            case .compressedTimestamp(let localType, let timeOffset):
                return try readData(localType: localType, at: at, timeOffset: timeOffset)
            }
        } catch FITByteReader.Stop.endOfStream(let end) {
            throw failure(
                .truncated, at: end,
                "the file ends early: its header promises \(dataSize) bytes of data, up to byte \(dataEnd)")
        } catch FITByteReader.Stop.pastLimit {
            throw failure(
                .invalidValue, at: at,
                "the message here runs past the end of the data, which the header puts at byte \(dataEnd)")
        }
    }

    /// Reads the body of a definition message (after its record header at `at`).
    private func readDefinition(at: Int, hasDeveloperFields: Bool) throws -> FITDefinition {
        let (architecture, global, fieldCount) = try reader.withBytes(5) { bytes in
            (bytes[1], (UInt16(bytes[2]), UInt16(bytes[3])), Int(bytes[4]))
        }
        guard architecture <= 1 else {
            throw failure(
                .invalidValue, at: at + 2,
                "a definition message's architecture is \(architecture), neither 0 (little-endian) nor 1 (big-endian)")
        }
        let bigEndian = architecture == 1
        var definition = FITDefinition(
            global: bigEndian ? global.0 << 8 | global.1 : global.1 << 8 | global.0, bigEndian: bigEndian)
        definition.fields.reserveCapacity(fieldCount)
        for _ in 0..<fieldCount {
            definition.fields.append(
                try reader.withBytes(3) { FITDefinition.Field(number: $0[0], size: $0[1], baseType: $0[2]) })
        }
        if hasDeveloperFields {
            let developerCount = Int(try reader.readByte())
            definition.developerFieldSizes.reserveCapacity(developerCount)
            for _ in 0..<developerCount {
                definition.developerFieldSizes.append(try reader.withBytes(3) { $0[1] })
            }
        }
        return definition
    }

    /// Reads the body of a data message of `localType` (after its record header at `at`).
    ///
    /// - Parameter timeOffset: the 5-bit time offset of a compressed timestamp header, or nil.
    private func readData(localType: UInt8, at: Int, timeOffset: UInt8?) throws -> FITMessage {
        guard let definition = definitions[Int(localType)] else {
            throw failure(
                .invalidValue, at: at,
                "a data message of local type \(localType), which no definition message defined")
        }
        var fields: [FITField] = []
        fields.reserveCapacity(definition.fields.count)
        for field in definition.fields {
            let values = try reader.withBytes(Int(field.size)) {
                FITBaseType.values(in: $0, baseType: field.baseType, bigEndian: definition.bigEndian)
            }
            if !values.isEmpty {
                fields.append(FITField(number: field.number, baseType: field.baseType, values: values))
            }
        }
        for size in definition.developerFieldSizes {
            try reader.skip(Int(size))
        }
        var message = FITMessage(
            global: definition.global, localType: localType, fields: fields,
            developerFieldCount: definition.developerFieldSizes.count, offset: at)

        if let timeOffset {
            guard let last = lastTimestamp else {
                throw failure(
                    .invalidValue, at: at,
                    "a compressed timestamp header, but no earlier message gave a full timestamp")
            }
            let timestamp = FITRecordHeader.timestamp(after: last, timeOffset: timeOffset)
            lastTimestamp = timestamp
            message.fields.removeAll { $0.number == FITRecordHeader.timestampField }
            message.fields.append(
                FITField(number: FITRecordHeader.timestampField, baseType: 0x86, values: [.uint(UInt64(timestamp))]))
        } else if let timestamp = message.uint(FITRecordHeader.timestampField), timestamp <= UInt64(UInt32.max) {
            lastTimestamp = UInt32(timestamp)
        }
        return message
    }

    // MARK: - Errors

    private func failure(_ code: GPXError.Code, at offset: Int, _ message: String) -> GPXError {
        GPXError(code: code, file: fileName, line: 0, column: 0, message: "at byte \(offset): \(message)")
    }

    private func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// What one record header byte says; a pure reading of the protocol's bit layout.
enum FITRecordHeader: Equatable {
    /// A normal header with bit 6 set: a definition message follows. Bit 5 says whether it ends
    /// with developer field definitions.
    case definition(localType: UInt8, hasDeveloperFields: Bool)
    /// A normal header with bit 6 clear: a data message of local type 0–15 (bits 0–3).
    case data(localType: UInt8)
    /// A compressed timestamp header (bit 7 set): a data message of local type 0–3 (bits 5–6),
    /// timed `timeOffset` seconds (bits 0–4, modulo 32) after the last full timestamp.
    case compressedTimestamp(localType: UInt8, timeOffset: UInt8)

    /// The field number of `timestamp`, the same in every message.
    static let timestampField: UInt8 = 253

    init(_ byte: UInt8) {
        if byte & 0x80 != 0 {
            self = .compressedTimestamp(localType: (byte >> 5) & 0x03, timeOffset: byte & 0x1F)
        } else if byte & 0x40 != 0 {
            self = .definition(localType: byte & 0x0F, hasDeveloperFields: byte & 0x20 != 0)
        } else {
            self = .data(localType: byte & 0x0F)
        }
    }

    /// The timestamp of a compressed header: the last full timestamp with its low five bits
    /// replaced by `timeOffset`, plus 32 seconds when those bits rolled over.
    static func timestamp(after last: UInt32, timeOffset: UInt8) -> UInt32 {
        let offset = UInt32(timeOffset & 0x1F)
        var timestamp = (last & ~0x1F) &+ offset
        if offset < last & 0x1F { timestamp &+= 0x20 }
        return timestamp
    }
}

/// A definition message: the layout of the data messages of one local type.
struct FITDefinition: Sendable, Hashable {
    struct Field: Sendable, Hashable {
        var number: UInt8
        /// Bytes in the data message.
        var size: UInt8
        var baseType: UInt8
    }

    var global: UInt16
    /// True when multi-byte values are big-endian (architecture 1).
    var bigEndian: Bool
    var fields: [Field] = []
    /// The size in bytes of each developer field; the decoder skips them.
    var developerFieldSizes: [UInt8] = []
}

/// The protocol's base types: their size, their invalid value, and how to read them.
enum FITBaseType {
    private enum Kind {
        case signed, unsigned, float, string, bytes
    }

    /// Size in bytes, kind, and the raw bit pattern that means "invalid", by base type number
    /// (the low five bits of the base type byte); nil for numbers the protocol does not define.
    private static func layout(_ baseType: UInt8) -> (size: Int, kind: Kind, invalid: UInt64)? {
        switch baseType & 0x1F {
        case 0x00: return (1, .unsigned, 0xFF)  // enum
        case 0x01: return (1, .signed, 0x7F)  // sint8
        case 0x02: return (1, .unsigned, 0xFF)  // uint8
        case 0x03: return (2, .signed, 0x7FFF)  // sint16
        case 0x04: return (2, .unsigned, 0xFFFF)  // uint16
        case 0x05: return (4, .signed, 0x7FFF_FFFF)  // sint32
        case 0x06: return (4, .unsigned, 0xFFFF_FFFF)  // uint32
        case 0x07: return (1, .string, 0)  // string
        case 0x08: return (4, .float, 0xFFFF_FFFF)  // float32
        case 0x09: return (8, .float, 0xFFFF_FFFF_FFFF_FFFF)  // float64
        case 0x0A: return (1, .unsigned, 0)  // uint8z
        case 0x0B: return (2, .unsigned, 0)  // uint16z
        case 0x0C: return (4, .unsigned, 0)  // uint32z
        case 0x0D: return (1, .bytes, 0xFF)  // byte
        case 0x0E: return (8, .signed, 0x7FFF_FFFF_FFFF_FFFF)  // sint64
        case 0x0F: return (8, .unsigned, 0xFFFF_FFFF_FFFF_FFFF)  // uint64
        case 0x10: return (8, .unsigned, 0)  // uint64z
        default: return nil
        }
    }

    /// The valid values held in one field's bytes.
    ///
    /// An array field holds several values of its base type; invalid elements are left out. A
    /// `byte` field is one value, invalid when every byte is 0xFF. A string field gives each
    /// NUL-separated non-empty string. A field of an unknown base type, or whose size is not a
    /// multiple of its type's size, is one `.bytes` value.
    static func values(in bytes: UnsafeBufferPointer<UInt8>, baseType: UInt8, bigEndian: Bool) -> [FITValue] {
        guard !bytes.isEmpty else { return [] }
        guard let shape = layout(baseType), bytes.count % shape.size == 0 else {
            return [.bytes(Array(bytes))]
        }
        let (size, kind, invalid) = shape
        switch kind {
        case .string:
            return bytes.split(separator: 0).map { .string(String(decoding: $0, as: UTF8.self)) }
        case .bytes:
            return bytes.allSatisfy { $0 == 0xFF } ? [] : [.bytes(Array(bytes))]
        case .signed, .unsigned, .float:
            var values: [FITValue] = []
            values.reserveCapacity(bytes.count / size)
            for start in stride(from: 0, to: bytes.count, by: size) {
                var raw: UInt64 = 0
                for index in 0..<size {
                    let byte = UInt64(bytes[bigEndian ? start + index : start + size - 1 - index])
                    raw = raw << 8 | byte
                }
                guard raw != invalid else { continue }
                switch (kind, size) {
                case (.signed, 1): values.append(.int(Int64(Int8(truncatingIfNeeded: raw))))
                case (.signed, 2): values.append(.int(Int64(Int16(truncatingIfNeeded: raw))))
                case (.signed, 4): values.append(.int(Int64(Int32(truncatingIfNeeded: raw))))
                case (.signed, _): values.append(.int(Int64(bitPattern: raw)))
                case (.float, 4):
                    let value = Float(bitPattern: UInt32(truncatingIfNeeded: raw))
                    if !value.isNaN { values.append(.float(Double(value))) }
                case (.float, _):
                    let value = Double(bitPattern: raw)
                    if !value.isNaN { values.append(.float(value)) }
                default: values.append(.uint(raw))
                }
            }
            return values
        }
    }
}

/// The FIT CRC-16, computed a nibble at a time with the protocol's 16-entry table.
enum FITCRC {
    private static let table: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// The CRC after one more byte: the low nibble first, then the high one.
    static func update(_ crc: UInt16, _ byte: UInt8) -> UInt16 {
        var crc = crc
        var entry = table[Int(crc & 0x0F)]
        crc = (crc >> 4) & 0x0FFF
        crc = crc ^ entry ^ table[Int(byte & 0x0F)]
        entry = table[Int(crc & 0x0F)]
        crc = (crc >> 4) & 0x0FFF
        crc = crc ^ entry ^ table[Int(byte >> 4)]
        return crc
    }

    /// The CRC of `bytes`, starting from 0.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        bytes.reduce(0, update)
    }
}

/// Pulls bytes from a ``ByteSource`` through a fixed buffer, and counts their offset and CRC.
///
/// Callers ask for at most a few hundred bytes at a time (a FIT field is at most 255 bytes), so
/// the 64 KiB buffer always has room for a request.
final class FITByteReader {
    /// Why the reader could not give the bytes asked for.
    enum Stop: Error {
        /// The stream ended at this offset.
        case endOfStream(at: Int)
        /// The bytes asked for go past ``limit``.
        case pastLimit
    }

    private static let capacity = 64 * 1024
    private let source: ByteSource
    private var buffer = [UInt8](repeating: 0, count: FITByteReader.capacity)
    /// The buffered bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    private var sourceEnded = false
    /// The offset in the stream of the next byte to be read.
    private(set) var offset = 0
    /// The offset no read may go past; a read that would throws ``Stop/pastLimit``.
    var limit = Int.max
    /// The running CRC of the bytes read since it was last set.
    var crc: UInt16 = 0

    init(source: ByteSource) {
        self.source = source
    }

    /// True when at least one more byte can be read.
    func hasMoreBytes() throws -> Bool {
        try fill(1)
    }

    func readByte() throws -> UInt8 {
        try withBytes(1) { $0[0] }
    }

    /// Skips `count` bytes (counting them in the CRC).
    func skip(_ count: Int) throws {
        try withBytes(count) { _ in }
    }

    /// Consumes the next `count` bytes and hands them to `body`.
    ///
    /// The buffer is valid only during the call.
    func withBytes<Result>(_ count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) throws -> Result {
        precondition(count >= 0 && count <= Self.capacity, "FITByteReader asked for \(count) bytes at once")
        guard count <= limit - offset else { throw Stop.pastLimit }
        guard try fill(count) else { throw Stop.endOfStream(at: offset + (end - start)) }
        let first = start
        start += count
        offset += count
        return try buffer.withUnsafeBufferPointer { all in
            let bytes = UnsafeBufferPointer(rebasing: all[first..<first + count])
            crc = bytes.reduce(crc, FITCRC.update)
            return try body(bytes)
        }
    }

    /// Reads from the source until `count` bytes are buffered; false if it ends first.
    private func fill(_ count: Int) throws -> Bool {
        if end - start >= count { return true }
        if buffer.count - start < count {
            // Fewer than `count` (so a few hundred) bytes remain: move them to the front.
            for index in 0..<(end - start) { buffer[index] = buffer[start + index] }
            end -= start
            start = 0
        }
        while end - start < count, !sourceEnded {
            let room = buffer.count - end
            let read = try buffer.withUnsafeMutableBufferPointer { all in
                try source.read(into: all.baseAddress! + end, capacity: room)
            }
            if read <= 0 { sourceEnded = true } else { end += min(read, room) }
        }
        return end - start >= count
    }
}
