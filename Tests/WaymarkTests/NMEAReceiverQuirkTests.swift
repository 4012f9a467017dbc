import Foundation
import Testing

@testable import Waymark

/// Issue 27, items 7 and 8: what an NMEA receiver's own quirks do to its fixes. A `# Date:`
/// line undoes one or two GPS week rollovers and no more; a receiver in simulation mode never
/// loses its fixes silently.
@Suite struct NMEAReceiverQuirkTests {
    static let rmc1999 = TraceFormatTests.s("GPRMC,101010.00,A,4807.0380,N,01131.0000,E,0.0,0.0,220899,,,A")

    static func time(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }

    @Test func oneOrTwoRolloversAreUndone() throws {
        let (one, _, w1) = try TraceFormatTests.read("# Date: 2019-04-07\n" + Self.rmc1999)
        #expect(one.first?.time == Self.time("2019-04-07T10:10:10Z"))
        #expect(w1.contains { $0.message.contains("1024 weeks before") }, "\(w1)")
        let (two, _, w2) = try TraceFormatTests.read("# Date: 2038-11-21\n" + Self.rmc1999)
        #expect(two.first?.time == Self.time("2038-11-21T10:10:10Z"))
        #expect(w2.contains { $0.message.contains("2048 weeks before") }, "\(w2)")
    }

    /// A `# Date: 2200-12-31` over a receiver of 1999 would move every fix 10 240 weeks.
    @Test func aFarDateLineKeepsTheReceiversDatesWithAWarning() throws {
        for header in ["# Date: 2200-12-31", "# Date: 2058-07-07"] {
            let (points, _, warnings) = try TraceFormatTests.read(
                "# Name: test\n" + header + "\n" + Self.rmc1999, name: "far.nmea")
            #expect(points.first?.time == Self.time("1999-08-22T10:10:10Z"), "\(header)")
            let text = warnings.map(\.description)
            #expect(
                text.contains {
                    $0.hasPrefix("far.nmea:2:1: warning: the log's '# Date:' line (\(header.dropFirst(8)))")
                        && $0.contains("after the receiver's date (1999-08-22)")
                        && $0.contains("the receiver's dates were kept")
                }, "\(header): \(text)")
            #expect(!text.contains { $0.contains("were moved forward") }, "\(text)")
        }
        let (points, _, warnings) = try TraceFormatTests.read("# Date: 2200-12-31\n" + Self.rmc1999)
        #expect(points.count == 1)
        #expect(warnings.map(\.message).contains { $0.contains("is 10240 weeks after") }, "\(warnings)")
    }
}
