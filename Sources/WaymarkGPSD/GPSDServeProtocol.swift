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

/// What a client of `waymark serve` asked to watch, as gpsd's `?WATCH` sets it.
public struct GPSDWatchPolicy: Sendable, Hashable {
    public var enable = false
    /// TPV and SKY reports.
    public var json = false
    /// NMEA 0183 sentences.
    public var nmea = false
    /// 1 or 2: the receiver's own data; for a trace these are NMEA sentences, as `nmea` gives.
    public var raw = 0
    public var scaled = false
    public var timing = false
    public var split24 = false
    public var pps = false
    /// Only this device; nil watches all.
    public var device: String?

    public init() {}
}

/// One client's side of gpsd's protocol, as a pure state machine: the bytes a client sends in,
/// the replies and its watch policy out. No socket, no clock: the owner passes what the replies
/// need in a ``Context``.
///
/// It answers as gpsd 3.22 does, checked against a real one:
/// - A request is what arrives up to a newline, or up to a `;` that ends what has arrived.
///   Requests that do not begin with `?` are ignored; one may hold several commands
///   (`?VERSION;?DEVICES;`).
/// - `?VERSION;`, `?DEVICES;`, `?POLL;`, `?DEVICE;`, `?WATCH;` and `?WATCH={…};`. A WATCH
///   changes only the options it names, then gets DEVICES and WATCH back. Options it does not know
///   are ignored.
/// - Errors: `Unrecognized request '…'` (the rest of the request, then a newline), `Invalid
///   WATCH: …` (what the JSON parser of gpsd says), `No such device as …`.
public struct GPSDServeSession: Sendable {
    /// What the replies need from the server: the device and the last epoch served.
    public struct Context: Sendable {
        public var device: GPSDServedDevice
        /// The last epoch served, for POLL; nil before the first.
        public var last: GPSDEpoch?

        public init(device: GPSDServedDevice, last: GPSDEpoch? = nil) {
            self.device = device
            self.last = last
        }
    }

    /// What handling the client's bytes gives.
    public struct Output: Sendable, Equatable {
        /// The replies, each line with its CR LF.
        public var reply: [UInt8] = []
        /// The client enabled watching (it was not watching before): its reports start now.
        public var startedWatching = false
        /// The client sent a request longer than ``requestLimit`` without ending it: close it.
        public var close = false
    }

    /// The longest request kept while waiting for its end, in bytes (gpsd's is 1 KiB).
    public static let requestLimit = 8192

    public private(set) var policy = GPSDWatchPolicy()
    /// What has arrived of a request not yet complete.
    private var buffer: [UInt8] = []
    /// How much of `buffer` is known to hold no newline.
    private var scanned = 0

    public init() {}

    /// The VERSION object gpsd sends on connect and on `?VERSION;`.
    public static func version() -> [UInt8] {
        var o = JSONLine(class: "VERSION")
        o.string("release", GPSDServedDevice.release)
        o.string("rev", GPSDServedDevice.release)
        o.raw("proto_major", String(GPSDServedDevice.protocolMajor))
        o.raw("proto_minor", String(GPSDServedDevice.protocolMinor))
        return o.finish()
    }

    /// Takes bytes from the client and says what to send back.
    ///
    /// Linear in the bytes, with a small constant: the newlines are found with `memchr`, each
    /// byte is looked at a bounded number of times whatever the lines' lengths, a line that
    /// does not begin with `?` (gpsd ignores those) costs no more than finding its end, and the
    /// bytes of requests handled are dropped once per call. A client that streams newlines
    /// costs about what one streaming anything else does.
    public mutating func received(_ bytes: some Collection<UInt8>, context: Context) -> Output {
        buffer.append(contentsOf: bytes)
        var output = Output()
        let wasWatching = policy.enable
        let question = UInt8(ascii: "?")
        var start = 0
        var requests: [Range<Int>] = []
        buffer.withUnsafeBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let count = p.count
            while start < count {
                if base[start] == 10 {  // an empty line
                    start += 1
                    scanned = max(scanned, start)
                    continue
                }
                let from = max(start, scanned)
                if let found = memchr(base + from, 10, count - from) {
                    let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if base[start] == question { requests.append(start..<newline) }
                    start = newline + 1
                    scanned = start
                    continue
                }
                scanned = count
                // No newline: what has arrived is a request when it ends in `;` (spaces aside).
                var last = count - 1
                while last > start && Self.isSpace(base[last]) { last -= 1 }
                if base[last] == UInt8(ascii: ";") {
                    if base[start] == question { requests.append(start..<count) }
                    start = count
                }
                break
            }
        }
        for request in requests { handle(buffer[request], context: context, into: &output) }
        if start > 0 {
            buffer.removeFirst(start)
            scanned = max(0, scanned - start)
        }
        if buffer.count > Self.requestLimit {
            buffer = []
            scanned = 0
            output.close = true
        }
        output.startedWatching = !wasWatching && policy.enable
        return output
    }

    private mutating func handle(_ request: ArraySlice<UInt8>, context: Context, into output: inout Output) {
        guard request.first == UInt8(ascii: "?") else { return }
        var i = request.startIndex
        while i < request.endIndex {
            if Self.isSpace(request[i]) {
                i += 1
                continue
            }
            let rest = request[i...]
            if rest.starts(with: "?VERSION;".utf8) {
                output.reply += Self.version()
                i += 9
            } else if rest.starts(with: "?DEVICES;".utf8) {
                output.reply += Self.devices(context.device)
                i += 9
            } else if rest.starts(with: "?POLL;".utf8) {
                output.reply += Self.poll(context)
                i += 6
            } else if rest.starts(with: "?DEVICE;".utf8) || rest.starts(with: "?DEVICE=".utf8) {
                // Settings (speed, parity, cycle) do not apply to a trace: the device is as it is.
                output.reply += Self.device(context.device) + [13, 10]
                i = rest.starts(with: "?DEVICE;".utf8) ? i + 8 : Self.skipObject(request, from: i + 8)
            } else if rest.starts(with: "?WATCH;".utf8) {
                output.reply += Self.devices(context.device) + Self.watch(policy)
                i += 7
            } else if rest.starts(with: "?WATCH=".utf8) {
                var parser = WatchParser(bytes: request, index: i + 7)
                switch parser.parse() {
                case .success(let fields):
                    i = parser.index
                    if i < request.endIndex, request[i] == UInt8(ascii: ";") { i += 1 }
                    if let device = fields.device, device != context.device.path {
                        output.reply += Self.error("No such device as \(device)")
                        continue
                    }
                    fields.apply(to: &policy)
                    output.reply += Self.devices(context.device) + Self.watch(policy)
                case .failure(let message):
                    output.reply +=
                        Self.error("Invalid WATCH: \(message)") + Self.devices(context.device) + Self.watch(policy)
                    i = request.endIndex
                }
            } else {
                var end = request.endIndex
                while end > i, request[end - 1] == 13 { end -= 1 }
                output.reply += Self.error(
                    "Unrecognized request '\(String(decoding: request[i..<end], as: UTF8.self))\n'")
                i = request.endIndex
            }
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 10 || b == 13 || b == 11 || b == 12 }

    /// Past a JSON object that starts at `i` (or at the end of the request), and its `;`.
    private static func skipObject(_ request: ArraySlice<UInt8>, from i: Int) -> Int {
        guard let close = request[i...].firstIndex(of: UInt8(ascii: "}")) else { return request.endIndex }
        var j = close + 1
        if j < request.endIndex, request[j] == UInt8(ascii: ";") { j += 1 }
        return j
    }

    // MARK: - Replies

    /// `{"class":"ERROR","message":…}`.
    public static func error(_ message: String) -> [UInt8] {
        var o = JSONLine(class: "ERROR")
        o.string("message", message)
        return o.finish()
    }

    /// The DEVICE object (without line end), as DEVICES lists it.
    static func device(_ d: GPSDServedDevice) -> [UInt8] {
        var o = JSONLine(class: "DEVICE")
        o.string("path", d.path)
        o.string("driver", d.driver)
        o.string("activated", ValueFormatting.iso8601(d.activated))
        o.raw("flags", "1")
        o.raw("native", "0")
        o.raw("bps", "4800")
        o.string("parity", "N")
        o.raw("stopbits", "1")
        o.number("cycle", d.cycle, 2)
        return Array(o.finish().dropLast(2))
    }

    /// `{"class":"DEVICES","devices":[…]}`.
    public static func devices(_ d: GPSDServedDevice) -> [UInt8] {
        Array("{\"class\":\"DEVICES\",\"devices\":[".utf8) + device(d) + Array("]}\r\n".utf8)
    }

    /// `{"class":"WATCH",…}` for `policy`.
    public static func watch(_ policy: GPSDWatchPolicy) -> [UInt8] {
        var o = JSONLine(class: "WATCH")
        o.bool("enable", policy.enable)
        o.bool("json", policy.json)
        o.bool("nmea", policy.nmea)
        o.raw("raw", String(policy.raw))
        o.bool("scaled", policy.scaled)
        o.bool("timing", policy.timing)
        o.bool("split24", policy.split24)
        o.bool("pps", policy.pps)
        if let device = policy.device { o.string("device", device) }
        return o.finish()
    }

    /// `{"class":"POLL",…}`: the last epoch's TPV and SKY, timed by the last fix (the trace's
    /// clock, not the wall clock).
    public static func poll(_ context: Context) -> [UInt8] {
        var o = JSONLine(class: "POLL")
        o.string("time", ValueFormatting.iso8601(context.last?.time ?? context.device.activated))
        o.raw("active", context.last == nil ? "0" : "1")
        func array(_ line: ArraySlice<UInt8>?) -> String {
            guard let line, line.count > 2 else { return "[]" }
            return "[" + String(decoding: line.dropLast(2), as: UTF8.self) + "]"
        }
        o.raw("tpv", array(context.last?.tpv))
        o.raw("gst", "[]")
        o.raw("sky", array(context.last?.sky))
        return o.finish()
    }
}

/// The options a `?WATCH=` object names.
struct WatchFields {
    var enable: Bool?
    var json: Bool?
    var nmea: Bool?
    var raw: Int?
    var scaled: Bool?
    var timing: Bool?
    var split24: Bool?
    var pps: Bool?
    var device: String?

    func apply(to policy: inout GPSDWatchPolicy) {
        if let enable { policy.enable = enable }
        if let json { policy.json = json }
        if let nmea { policy.nmea = nmea }
        if let raw { policy.raw = raw }
        if let scaled { policy.scaled = scaled }
        if let timing { policy.timing = timing }
        if let split24 { policy.split24 = split24 }
        if let pps { policy.pps = pps }
        if let device { policy.device = device }
    }
}

/// Reads the flat JSON object of `?WATCH=`, with the error texts of gpsd's JSON parser.
struct WatchParser {
    enum Result {
        case success(WatchFields)
        case failure(String)
    }

    let bytes: ArraySlice<UInt8>
    var index: Int

    private enum Value {
        case bool(Bool)
        case number(Double)
        case string(String)
    }

    mutating func parse() -> Result {
        var fields = WatchFields()
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return .failure("non-whitespace when expecting object start") }
        skipSpace()
        if take(UInt8(ascii: "}")) { return .success(fields) }
        while true {
            skipSpace()
            guard let key = string() else { return .failure("non-whitespace when expecting attribute start") }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return .failure("garbage while expecting colon") }
            skipSpace()
            guard let value = value() else { return .failure("other data conversion error") }
            switch (key, value) {
            case ("enable", .bool(let b)): fields.enable = b
            case ("json", .bool(let b)): fields.json = b
            case ("nmea", .bool(let b)): fields.nmea = b
            case ("scaled", .bool(let b)): fields.scaled = b
            case ("timing", .bool(let b)): fields.timing = b
            case ("split24", .bool(let b)): fields.split24 = b
            case ("pps", .bool(let b)): fields.pps = b
            case ("raw", .number(let n)) where n == n.rounded() && abs(n) < 1e9: fields.raw = Int(n)
            case ("device", .string(let s)): fields.device = s
            case ("enable", .string), ("json", .string), ("nmea", .string), ("raw", .string), ("scaled", .string),
                ("timing", .string), ("split24", .string), ("pps", .string):
                return .failure("saw quoted value when expecting non-string")
            case ("device", _):
                return .failure("didn't see quoted value when expecting string")
            case ("enable", _), ("json", _), ("nmea", _), ("raw", _), ("scaled", _), ("timing", _), ("split24", _),
                ("pps", _):
                return .failure("other data conversion error")
            default:
                break  // gpsd 3.22 ignores what it does not know (remote, …)
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            if take(UInt8(ascii: "}")) { return .success(fields) }
            return .failure("garbage while expecting comma")
        }
    }

    private mutating func skipSpace() {
        while index < bytes.endIndex, GPSDServeSession.isSpace(bytes[index]) { index += 1 }
    }

    private mutating func take(_ b: UInt8) -> Bool {
        guard index < bytes.endIndex, bytes[index] == b else { return false }
        index += 1
        return true
    }

    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        var out: [UInt8] = []
        while index < bytes.endIndex {
            let b = bytes[index]
            index += 1
            if b == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if b == 92 {
                guard index < bytes.endIndex else { return nil }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "r"): out.append(13)
                default: out.append(e)
                }
            } else {
                out.append(b)
            }
        }
        return nil
    }

    private mutating func value() -> Value? {
        guard index < bytes.endIndex else { return nil }
        if bytes[index] == UInt8(ascii: "\"") { return string().map(Value.string) }
        let start = index
        while index < bytes.endIndex, !GPSDServeSession.isSpace(bytes[index]), bytes[index] != UInt8(ascii: ","),
            bytes[index] != UInt8(ascii: "}")
        {
            index += 1
        }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: return Double(token).map(Value.number)
        }
    }
}
