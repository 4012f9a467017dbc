#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A view of bytes owned by the tokenizer, valid until its next call to `next()`.
struct ByteSpan {
    var start: UnsafePointer<UInt8>
    var count: Int

    static var empty: ByteSpan { ByteSpan(start: UnsafePointer(bitPattern: 1)!, count: 0) }

    @inline(__always)
    func equals(_ literal: StaticString) -> Bool {
        count == literal.utf8CodeUnitCount && Self.bytesEqual(start, literal.utf8Start, count)
    }

    @inline(__always)
    func equals(_ other: ByteSpan) -> Bool {
        count == other.count && Self.bytesEqual(start, other.start, count)
    }

    /// Whether `n` bytes at `a` and `b` are equal: in place, a word at a time, never reading past
    /// either (names and numbers are short: cheaper than a call to memcmp).
    @inline(__always)
    static func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if n > 64 { return memcmp(a, b, n) == 0 }
        let x = UnsafeRawPointer(a)
        let y = UnsafeRawPointer(b)
        if n >= 8 {
            // Whole words, the last one overlapping the one before; one test at the end.
            var diff =
                x.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                ^ y.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            var i = 0
            while i &+ 8 <= n {
                diff |=
                    x.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    ^ y.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i &+= 8
            }
            return diff == 0
        }
        if n >= 4 {
            let head = x.loadUnaligned(as: UInt32.self) ^ y.loadUnaligned(as: UInt32.self)
            let tail =
                x.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
                ^ y.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
            return head | tail == 0
        }
        var i = 0
        while i < n {
            if a[i] != b[i] { return false }
            i &+= 1
        }
        return true
    }

    @inline(__always)
    subscript(_ index: Int) -> UInt8 { start[index] }

    var string: String {
        String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// True when every byte is XML white space (space, tab, CR, LF).
    var isWhitespace: Bool {
        for i in 0..<count {
            let b = start[i]
            if b != 0x20 && b != 0x0A && b != 0x09 && b != 0x0D { return false }
        }
        return true
    }

    /// The span without leading and trailing XML white space.
    var trimmed: ByteSpan {
        var lo = 0
        var hi = count
        while lo < hi, Self.isSpace(start[lo]) { lo += 1 }
        while hi > lo, Self.isSpace(start[hi - 1]) { hi -= 1 }
        return ByteSpan(start: start + lo, count: hi - lo)
    }

    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }
}

/// A growable byte buffer with stable storage between growths, freed on deinit.
///
/// Each store belongs to one reader or writer on one thread, so its fields skip Swift's dynamic
/// exclusivity checks (`@exclusivity(unchecked)`); no access to them overlaps another.
final class ByteStore {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ bytes: UnsafePointer<UInt8>, count n: Int) {
        guard n > 0 else { return }
        reserve(n)
        let target = UnsafeMutableRawPointer(base + count)
        let source = UnsafeRawPointer(bytes)
        // Names and numbers: a few bytes, copied as two overlapping words rather than through a
        // call to memcpy (which a byte loop would become).
        if n >= 8 && n <= 16 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        } else if n < 4 {
            target.storeBytes(of: bytes[0], as: UInt8.self)
            target.storeBytes(of: bytes[n >> 1], toByteOffset: n >> 1, as: UInt8.self)
            target.storeBytes(of: bytes[n - 1], toByteOffset: n - 1, as: UInt8.self)
        } else {
            target.copyMemory(from: source, byteCount: n)
        }
        count += n
    }

    func append(_ span: ByteSpan) { append(span.start, count: span.count) }

    func append(_ literal: StaticString) { append(literal.utf8Start, count: literal.utf8CodeUnitCount) }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0.baseAddress!, count: $0.count) }
    }

    /// Appends a Unicode scalar as UTF-8.
    func appendScalar(_ v: UInt32) {
        if v < 0x80 {
            append(UInt8(v))
        } else if v < 0x800 {
            reserve(2)
            append(UInt8(0xC0 | (v >> 6)))
            append(UInt8(0x80 | (v & 0x3F)))
        } else if v < 0x10000 {
            reserve(3)
            append(UInt8(0xE0 | (v >> 12)))
            append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            append(UInt8(0x80 | (v & 0x3F)))
        } else {
            reserve(4)
            append(UInt8(0xF0 | (v >> 18)))
            append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    func span(from offset: Int, count n: Int) -> ByteSpan {
        ByteSpan(start: UnsafePointer(base + offset), count: n)
    }

    var span: ByteSpan { span(from: 0, count: count) }

    var string: String { span.string }
}
