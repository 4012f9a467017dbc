/// The hot loop of ``NMEALexer``: a sentence's body read eight bytes at a time.
///
/// ``NMEALexer/lex(_:_:next:)`` keeps the rules; this finds, in one pass, what it needs from
/// the bytes between the `$` and the `*`: where each field ends, the exclusive or of the bytes,
/// and whether any of them is one NMEA does not allow. A byte at a time this was the reader's
/// largest cost on logs of short sentences (RMC alone, 10 Hz RTK).
enum NMEABodyScan {
    /// What the scan of a body found.
    struct Result {
        /// Commas found (at most the capacity kept; the rest are counted, not stored).
        var count: Int
        /// The exclusive or of every byte of the body (the commas included).
        var sum: UInt8
        /// Whether a byte of the body is outside printable ASCII (0x20...0x7E).
        var bad: Bool
        /// Where the body stopped: the `*`, the next `$` or `!`, or the end.
        var stop: UnsafePointer<UInt8>
    }

    /// Scans the body that begins at `start` up to the first `*`, `$` or `!` before `end`,
    /// storing in `commas` (room for `capacity`) where each comma is, in order: the ends of the
    /// fields but the last, which the stop ends.
    ///
    /// Byte by byte, this is: a comma ends a field; `*`, `$` or `!` stops; any other byte goes
    /// into the sum and may be bad. Eight bytes are read as one word only while eight remain
    /// before `end`, so nothing past `end` is read.
    @inline(__always)
    static func scan(
        _ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>,
        into commaList: UnsafeMutablePointer<UnsafePointer<UInt8>>, capacity: Int
    ) -> Result {
        var count = 0
        var q = start
        var sum: UInt64 = 0
        #if _endian(little)
            let h: UInt64 = 0x8080_8080_8080_8080
            let ones: UInt64 = 0x0101_0101_0101_0101
            words: while end - q >= 8 {
                let w = UnsafeRawPointer(q).loadUnaligned(as: UInt64.self)
                // The common word: no byte below 0x2B (which takes in `*`, `$`, `!`, controls,
                // the space and a few others) or above 0x7E, and room for eight commas more. A
                // byte below 0x2B borrows in w - 0x2B…, setting its high bit; 0x7F plus 1 reaches
                // the high bit; `| w` catches the rest. Taken whole with one test.
                let special = ((w &- 0x2B2B_2B2B_2B2B_2B2B) | w | ((w & 0x7F7F_7F7F_7F7F_7F7F) &+ ones)) & h
                if special == 0 && count <= capacity &- 8 {
                    sum ^= w
                    // Exact for bytes below 0x80: ((b ^ 0x2C) + 0x7F) has its high bit clear
                    // only when b is a comma.
                    var commas = ~((w ^ 0x2C2C_2C2C_2C2C_2C2C) &+ 0x7F7F_7F7F_7F7F_7F7F) & h
                    while commas != 0 {
                        // count <= capacity - 8 before the word: room for its eight bytes.
                        commaList[count] = q + (commas.trailingZeroBitCount &>> 3)
                        count &+= 1
                        commas &= commas &- 1
                    }
                    q += 8
                    continue words
                }
                // The word has a `*`, or an unusual byte: one a body seldom holds (below 0x26,
                // which takes in `$`, `!`, controls and the space, or above 0x7E). A word of usual
                // bytes is taken whole; the word with the `*` up to it; at an unusual byte the
                // byte loop below reads on, and decides exactly. A byte below 0x26 borrows in
                // w - 0x26…, setting its high bit (a borrow may also mark bytes above it: the test
                // is of the word, or of the bytes below a `*`, which only a marked byte below
                // could mark).
                let unusual = ((w &- 0x2626_2626_2626_2626) | w | ((w & 0x7F7F_7F7F_7F7F_7F7F) &+ ones)) & h
                // The lowest byte marked is the first `*` (a borrow only marks bytes above one).
                let x = w ^ 0x2A2A_2A2A_2A2A_2A2A
                let stars = (x &- ones) & ~x & h
                var body = w
                if stars != 0 {
                    let before = (1 &<< UInt64(stars.trailingZeroBitCount &- 7)) &- 1
                    guard unusual & before == 0 else { break }
                    body &= before
                } else if unusual != 0 {
                    break
                }
                sum ^= body
                // Bytes past the `*` are not looked at.
                var commas = ~((w ^ 0x2C2C_2C2C_2C2C_2C2C) &+ 0x7F7F_7F7F_7F7F_7F7F) & h
                if stars != 0 { commas &= (1 &<< UInt64(stars.trailingZeroBitCount &- 7)) &- 1 }
                while commas != 0 {
                    if count < capacity { commaList[count] = q + (commas.trailingZeroBitCount &>> 3) }
                    count &+= 1
                    commas &= commas &- 1
                }
                if stars != 0 {
                    return finish(count, sum, false, q + (stars.trailingZeroBitCount &>> 3))
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
                if count < capacity { commaList[count] = q }
                count &+= 1
                q += 1
                continue
            }
            if b == 0x2A || b == 0x24 || b == 0x21 { break }  // *, $ or !
            if b < 0x20 || b >= 0x7F { bad = true }
            tailSum ^= b
            q += 1
        }
        var result = finish(count, sum, bad, q)
        result.sum ^= tailSum
        return result
    }

    @inline(__always)
    private static func finish(_ count: Int, _ sum: UInt64, _ bad: Bool, _ stop: UnsafePointer<UInt8>) -> Result {
        var s = sum
        s ^= s &>> 32
        s ^= s &>> 16
        s ^= s &>> 8
        return Result(count: count, sum: UInt8(truncatingIfNeeded: s), bad: bad, stop: stop)
    }
}
