import Waymark
import WaymarkGPSD

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The last line of a terminal during `record`: fix mode, satellites, rate, stored count.
///
/// It is redrawn at most four times a second, and cleared before any other line is written, so
/// that log lines scroll above it.
final class StatusLine {
    private var last: ContinuousClock.Instant?
    private var arrivals: [ContinuousClock.Instant] = []
    private(set) var isShown = false

    /// Records a fix and redraws the line if it is time.
    func update(report: GPSDReport, stored: Int) {
        let now = ContinuousClock.now
        arrivals.append(now)
        arrivals.removeAll { now - $0 > .seconds(5) }
        if let last, now - last < .milliseconds(250) { return }
        last = now
        let mode = report.mode >= 3 ? "3D" : (report.mode == 2 ? "2D" : "no fix")
        let satellites = report.satellitesUsed.map { "\($0) satellites" } ?? "satellites unknown"
        var rate = "–"
        if arrivals.count > 1, let first = arrivals.first {
            let seconds = (now - first).inSeconds
            if seconds > 0 { rate = ValueFormatting.fixed(Double(arrivals.count - 1) / seconds, decimals: 1) + " Hz" }
        }
        writeStandardError("\r\u{1B}[K\(mode) · \(satellites) · \(rate) · \(stored) stored")
        isShown = true
    }

    /// Clears the line (before another line is written, and at the end).
    func clear() {
        guard isShown else { return }
        writeStandardError("\r\u{1B}[K")
        isShown = false
    }
}
