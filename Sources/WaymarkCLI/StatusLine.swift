import Waymark
import WaymarkGPSD

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The last line of a terminal during `record` (fix mode, satellites, rate, stored count) and a
/// paced `replay` (``ReplayProgress``).
///
/// It is redrawn at most four times a second, and cleared before any other line is written, so
/// that log lines scroll above it.
final class StatusLine {
    private var last: ContinuousClock.Instant?
    private var arrivals: [ContinuousClock.Instant] = []
    private(set) var isShown = false

    /// Shows `text` (one line, shorter than the terminal), unless the line was drawn less than a
    /// quarter of a second ago. The time is the terminal's: wall-clock pacing of a redraw, no
    /// part of what the line says.
    func show(_ text: @autoclosure () -> String) {
        let now = ContinuousClock.now
        if let last, now - last < .milliseconds(250) { return }
        last = now
        writeStandardError("\r\u{1B}[K" + text())
        isShown = true
    }

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

/// The status line of a paced replay: how far the run has got in trace time, of how much, and
/// the fixes and deliveries so far.
final class ReplayProgress: SimulationObserver {
    private let status: StatusLine
    private let total: Duration?
    private var fixes = 0
    private var delivered = 0

    /// `total`: the trace time the run is expected to take, when known.
    init(status: StatusLine, total: Duration?) {
        self.status = status
        self.total = total
    }

    func simulation(_ simulation: Simulation, didRecord event: AuditEvent) {
        guard case .fix(let f) = event.kind else { return }
        // A held fix delivered later has a second record: the same fix, counted once.
        if f.reason == .resumed || f.reason == .alwaysGranted {
            delivered += 1
            status.show(Self.text(at: event.offset, of: total, fixes: fixes, delivered: delivered))
            return
        }
        fixes += 1
        if f.delivered != nil { delivered += 1 }
        status.show(Self.text(at: event.offset, of: total, fixes: fixes, delivered: delivered))
    }

    /// `replay +0:01:20 of 0:10:00 (13%) · 9 fix(es), 7 delivered`.
    static func text(at offset: Duration, of total: Duration?, fixes: Int, delivered: Int) -> String {
        var text = "replay " + ConsoleReporter.offset(offset)
        if let total, total > .zero {
            let percent = min(100, Int(offset.inSeconds / total.inSeconds * 100))
            text += " of " + ConsoleReporter.offset(total).dropFirst() + " (\(percent)%)"
        }
        return text + " · \(fixes) fix(es), \(delivered) delivered"
    }
}
