import NIOCore
import WaymarkStore

/// `COPY` text written straight into memory that a `ByteBuffer` has set aside: the hot path of
/// a push's rows (``DirectRow``, ``CopyText``), with no capacity check and no `String` per
/// value. Whoever starts it reserves enough bytes first (``ByteBuffer/writeCopyBytes(bound:_:)``).
struct CopyBytes {
    private(set) var cursor: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { cursor = start }

    /// The most bytes ``integer(_:)`` or ``real(_:)`` writes: `-9223372036854775808` is 20,
    /// Swift's longest `Double` description (`-2.2250738585072014e-308`) 24.
    static let numberBound = 24

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        cursor.pointee = b
        cursor += 1
    }

    @inline(__always)
    mutating func bytes(_ s: StaticString) {
        s.withUTF8Buffer { b in
            for c in b { byte(c) }
        }
    }

    /// The decimal digits of `v`.
    mutating func integer(_ v: Int64) {
        if v < 0 { byte(UInt8(ascii: "-")) }
        unsigned(v.magnitude)
    }

    /// The decimal digits of `n`.
    @inline(__always)
    private mutating func unsigned(_ n: UInt64) {
        var count = 1
        var rest = n / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        var value = n
        var p = cursor + count
        repeat {
            p -= 1
            p.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        } while value > 0
        cursor += count
    }

    /// `value` (not negative) in exactly `width` decimal digits.
    @inline(__always)
    mutating func digits(_ value: Int, width: Int) {
        var rest = value
        var p = cursor + width
        while p > cursor {
            p -= 1
            p.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        cursor += width
    }

    /// `v` as text that PostgreSQL's `float8in` reads back to the same bits:
    /// - a whole number below 2^53 as its integer digits;
    /// - `NaN`, `Infinity`, `-Infinity`;
    /// - a decimal of at most nine places whose digits fit in 2^53 as those digits
    ///   (``shortDecimal(_:)``);
    /// - anything else as Swift's shortest round-trip digits.
    mutating func real(_ v: Double) {
        if v == v.rounded(.towardZero), abs(v) < 9_007_199_254_740_992, v != 0 || v.sign == .plus {
            integer(Int64(v))
        } else if v.isNaN {
            bytes("NaN")
        } else if v.isInfinite {
            if v > 0 { bytes("Infinity") } else { bytes("-Infinity") }
        } else if !shortDecimal(v) {
            var text = v.description
            text.withUTF8 { b in
                for c in b { byte(c) }
            }
        }
    }

    /// `value` as one field of a row (`\N` for NULL), unless it is text, whose escaped length
    /// has no bound here: then nothing is written, and it returns false.
    @inline(__always)
    mutating func field(_ value: TransferValue) -> Bool {
        switch value {
        case .null:
            byte(UInt8(ascii: "\\"))
            byte(UInt8(ascii: "N"))
        case .integer(let v): integer(v)
        case .real(let v): real(v)
        case .text: return false
        }
        return true
    }

    private static let scales: [Double] = [1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// Writes `v` as `d.ddd` with at most nine places when that decimal reads back to `v`, and
    /// says whether it did (nothing is written otherwise).
    ///
    /// For `k` places, `r` is `|v| · 10^k` rounded to an integer, and `r < 2^53`: `r` and `10^k`
    /// are then exact doubles, and IEEE division rounds `r / 10^k` to the double nearest the
    /// decimal `r · 10^-k`, which is what `strtod` (and so `float8in`) makes of its digits. So
    /// the check `r / 10^k == |v|` is exact: when it holds, the digits read back to `v`.
    @inline(__always)
    private mutating func shortDecimal(_ v: Double) -> Bool {
        let magnitude = abs(v)
        for k in 0..<Self.scales.count {
            let scale = Self.scales[k]
            let s = magnitude * scale
            guard s < 9_007_199_254_740_992 else { return false }
            let r = s.rounded()
            // Far from an integer: not k places (a cheap look before the division decides).
            guard abs(s - r) <= 2 * s.ulp, r / scale == magnitude else { continue }
            if v.sign == .minus { byte(UInt8(ascii: "-")) }
            let n = UInt64(r)
            let places = k + 1
            let unit = UInt64(scale)
            unsigned(n / unit)
            byte(UInt8(ascii: "."))
            digits(Int(n % unit), width: places)
            return true
        }
        return false
    }

    private static let hex: StaticString = "0123456789ABCDEF"

    /// The eight bytes of `value`, little-endian, in hexadecimal.
    @inline(__always)
    mutating func hexadecimal(_ value: Double) {
        var bits = value.bitPattern
        Self.hex.withUTF8Buffer { hex in
            for _ in 0..<8 {
                let b = Int(truncatingIfNeeded: bits & 0xFF)
                byte(hex[b &>> 4])
                byte(hex[b & 0xF])
                bits &>>= 8
            }
        }
    }
}

extension ByteBuffer {
    /// Runs `body` on at least `bound` bytes set aside at the buffer's end, and keeps what it
    /// wrote. `body` must write no more than `bound` bytes: the check after it reports an
    /// overrun, it cannot prevent one, so only a body with a fixed maximum may use this.
    @inline(__always)
    mutating func writeCopyBytes(bound: Int, _ body: (inout CopyBytes) -> Void) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { raw in
            guard let start = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                preconditionFailure("a ByteBuffer set aside \(bound) bytes without an address")
            }
            var bytes = CopyBytes(start)
            body(&bytes)
            let written = bytes.cursor - start
            precondition(written <= bound, "a COPY row took \(written) bytes, more than the \(bound) set aside")
            return written
        }
    }
}
