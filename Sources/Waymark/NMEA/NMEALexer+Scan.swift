/// The hot loop of ``NMEALexer``: a sentence's body read eight bytes at a time.
///
/// ``NMEALexer/lex(_:_:next:)`` keeps the rules; this finds, in one pass, what it needs from
/// the bytes between the `$` and the `*`: where each field begins and ends, the exclusive or of
/// the bytes, and whether any of them is one NMEA does not allow. A byte at a time this was the
/// reader's largest cost on logs of short sentences (RMC alone, 10 Hz RTK).
enum NMEABodyScan {
    /// What the scan of a body found.
    struct Result {
        /// Fields found (at most the capacity kept; the rest are counted, not stored).
        var count: Int
        /// The exclusive or of every byte of the body (the commas included).
        var sum: UInt8
        /// Whether a byte of the body is outside printable ASCII (0x20...0x7E).
        var bad: Bool
        /// Where the body stopped: the `*`, the next `$` or `!`, or the end.
        var stop: UnsafePointer<UInt8>
        /// Where the last field (the one the stop ends) begins.
        var lastField: UnsafePointer<UInt8>
    }

    /// Scans the body that begins at `start` up to the first `*`, `$` or `!` before `end`,
    /// storing in `fields` (room for `capacity`) each field that a comma ends, as
    /// ``NMEALexer`` stores them; the last field, which the stop ends, is left to the caller.
    ///
    /// Byte by byte, this is: a comma ends a field; `*`, `$` or `!` stops; any other byte goes
    /// into the sum and may be bad. Eight bytes are read as one word only while eight remain
    /// before `end`, so nothing past `end` is read.
    @inline(__always)
    static func scan(
        _ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, into fields: UnsafeMutablePointer<ByteSpan>,
        capacity: Int
    ) -> Result {
        var count = 0
        var q = start
        var fieldStart = start
        var sum: UInt64 = 0
        var badBits: UInt64 = 0
        #if _endian(little)
            // For a byte b and a constant c below 0x80, ((b & 0x7F) ^ c) + 0x7F has its high bit
            // clear exactly when b & 0x7F == c (no carry crosses into the next byte); with b's
            // own high bit clear too, b == c.
            let m: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            let h: UInt64 = 0x8080_8080_8080_8080
            while end - q >= 8 {
                let w = UnsafeRawPointer(q).loadUnaligned(as: UInt64.self)
                let low = w & m
                let star = (low ^ 0x2A2A_2A2A_2A2A_2A2A) &+ m
                let dollar = (low ^ 0x2424_2424_2424_2424) &+ m
                let bang = (low ^ 0x2121_2121_2121_2121) &+ m
                let stops = ~((star & dollar & bang) | w) & h
                var commas = ~(((low ^ 0x2C2C_2C2C_2C2C_2C2C) &+ m) | w) & h
                // Below 0x20 (low + 0x60 stays below 0x80), 0x7F, or the high bit set.
                var bad = (~((low &+ 0x6060_6060_6060_6060) & ((low ^ m) &+ m)) | w) & h
                var body = w
                if stops != 0 {
                    // Only the bytes before the first stop.
                    let before = (1 &<< UInt64(stops.trailingZeroBitCount &- 7)) &- 1
                    body &= before
                    commas &= before
                    bad &= before
                }
                sum ^= body
                badBits |= bad
                while commas != 0 {
                    let comma = q + (commas.trailingZeroBitCount &>> 3)
                    if count < capacity { fields[count] = ByteSpan(start: fieldStart, count: comma - fieldStart) }
                    count &+= 1
                    fieldStart = comma + 1
                    commas &= commas &- 1
                }
                if stops != 0 {
                    return finish(count, sum, badBits, false, q + (stops.trailingZeroBitCount &>> 3), fieldStart)
                }
                q += 8
            }
        #endif
        var tailSum: UInt8 = 0
        var bad = false
        while q < end {
            let b = q.pointee
            if b == 0x2C {  // ,
                tailSum ^= b
                if count < capacity { fields[count] = ByteSpan(start: fieldStart, count: q - fieldStart) }
                count &+= 1
                q += 1
                fieldStart = q
                continue
            }
            if b == 0x2A || b == 0x24 || b == 0x21 { break }  // *, $ or !
            if b < 0x20 || b >= 0x7F { bad = true }
            tailSum ^= b
            q += 1
        }
        var result = finish(count, sum, badBits, bad, q, fieldStart)
        result.sum ^= tailSum
        return result
    }

    @inline(__always)
    private static func finish(
        _ count: Int, _ sum: UInt64, _ badBits: UInt64, _ bad: Bool, _ stop: UnsafePointer<UInt8>,
        _ lastField: UnsafePointer<UInt8>
    ) -> Result {
        var s = sum
        s ^= s &>> 32
        s ^= s &>> 16
        s ^= s &>> 8
        return Result(
            count: count, sum: UInt8(truncatingIfNeeded: s), bad: bad || badBits != 0, stop: stop,
            lastField: lastField)
    }
}
