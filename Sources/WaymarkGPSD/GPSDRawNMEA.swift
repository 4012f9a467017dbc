import Waymark

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

/// A receiver log's own sentences, fix by fix, for the clients of `serve` that watch NMEA
/// (`?WATCH={"nmea":true}`, `gpspipe -r`): what gpsfake passes on, where Waymark otherwise writes
/// GGA, GSA and RMC from each fix.
///
/// A fix's sentences are the log's lines from the end of the previous fix's epoch to the end of
/// its own: the epochs without a fix between them (a tunnel), and the satellites' GSV, come
/// with it. Lines that are not sentences (comments, gpsd JSON, junk) and sentences with a wrong
/// checksum are left out, as gpsd leaves them out; each sentence goes with CR LF. The epochs are
/// the NMEA reader's own (`NMEAReader.recordsFixLines`), so fix `i` here is the trace's point
/// `i`. The log is read again, a fix's lines at a time, as the fix is served.
public final class GPSDRawNMEA {
    public let path: String
    /// Where each fix's lines end, in bytes; the first begin at 0.
    private let ends: [Int64]
    private let descriptor: Int32

    /// The log at `path` read fix by fix; nil when it is not an NMEA log.
    public init?(path: String) throws {
        let peeked = try PeekedByteSource(try FileByteSource(path: path))
        guard peeked.format == .nmea else { return nil }
        let reader = NMEAReader(source: peeked, name: path)
        reader.recordsFixLines = true
        try reader.read { _ in }
        let lines = reader.fixLines
        guard lines.count == reader.fixes else { return nil }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw OutputError(path: path, message: String(cString: strerror(errno))) }
        self.path = path
        self.descriptor = descriptor
        do {
            ends = try Self.offsets(ofLines: lines.map(\.end), in: descriptor, path: path)
        } catch {
            _ = close(descriptor)
            throw error
        }
    }

    deinit { _ = close(descriptor) }

    /// How many fixes the log has.
    public var fixCount: Int { ends.count }

    /// The sentences that come with fix `index` (each with CR LF); empty for an index the log
    /// has no fix for.
    public func sentences(forFix index: Int) -> [UInt8] {
        guard index >= 0, index < ends.count else { return [] }
        let start = index == 0 ? 0 : ends[index - 1]
        let count = Int(ends[index] - start)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < count {
                let n = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(start) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                done += n
            }
            return done
        }
        return Self.sentences(in: bytes[..<read])
    }

    /// The sentences among `bytes`' lines (LF, CRLF or CR), each with CR LF.
    static func sentences(in bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var lineStart = bytes.startIndex
        var i = bytes.startIndex
        func take(_ line: ArraySlice<UInt8>) {
            var s = line.drop { $0 == 0x20 || $0 == 0x09 }
            while let last = s.last, last == 0x20 || last == 0x09 { s = s.dropLast() }
            guard let first = s.first, first == UInt8(ascii: "$") || first == UInt8(ascii: "!"),
                hasGoodChecksum(s)
            else { return }
            out += s
            out += [13, 10]
        }
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == 10 || b == 13 {
                take(bytes[lineStart..<i])
                if b == 13, i + 1 < bytes.endIndex, bytes[i + 1] == 10 { i += 1 }
                lineStart = i + 1
            }
            i += 1
        }
        if lineStart < bytes.endIndex { take(bytes[lineStart...]) }
        return out
    }

    /// Whether a sentence's checksum (`*HH`, when it has one) is the XOR of the bytes between
    /// `$` or `!` and `*`.
    static func hasGoodChecksum(_ s: ArraySlice<UInt8>) -> Bool {
        guard let star = s.lastIndex(of: UInt8(ascii: "*")) else { return true }
        let digits = s[(star + 1)...]
        guard digits.count == 2, let given = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) else {
            return false
        }
        return s[(s.startIndex + 1)..<star].reduce(0, ^) == given
    }

    /// The byte offsets where the given lines begin (numbered from 1, as the NMEA reader numbers
    /// them: LF, CRLF or CR ends a line), in order; the file's size for `Int32.max` or a line
    /// past its end.
    private static func offsets(ofLines lines: [Int32], in descriptor: Int32, path: String) throws -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(lines.count)
        var wanted = 0
        var line: Int32 = 1
        func lineBegins(at start: Int64) {
            line += 1
            while wanted < lines.count, lines[wanted] <= line {
                result.append(start)
                wanted += 1
            }
        }
        // Line 1 begins at 0.
        while wanted < lines.count, lines[wanted] <= 1 {
            result.append(0)
            wanted += 1
        }
        let capacity = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        // A CR ends its line; whether an LF after it belongs to the break, the next byte tells.
        var pendingCR = false
        reading: while wanted < lines.count {
            let n = pread(descriptor, buffer, capacity, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(path: path, message: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            for k in 0..<n {
                let b = buffer[k]
                let at = offset + Int64(k)
                if pendingCR {
                    pendingCR = false
                    if b == 10 {
                        lineBegins(at: at + 1)
                        continue
                    }
                    lineBegins(at: at)
                }
                if b == 13 {
                    pendingCR = true
                } else if b == 10 {
                    lineBegins(at: at + 1)
                }
                if wanted == lines.count { break reading }
            }
            offset += Int64(n)
        }
        let size = Int64(lseek(descriptor, 0, SEEK_END))
        if pendingCR { lineBegins(at: size) }
        while result.count < lines.count { result.append(size) }
        return result.map { min($0, size) }
    }
}
