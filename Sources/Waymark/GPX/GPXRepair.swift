/// Recovers a GPX file that was cut short or damaged: every complete point up to the damage is
/// kept (and any bad point on the way dropped), open structures are closed, and the result is
/// written as GPX 1.1 that validates against the schema.
public enum GPXRepair {
    /// What a repair found and kept.
    public struct Report: Sendable {
        public var trackPoints = 0
        public var routePoints = 0
        public var waypoints = 0
        /// Where the file was damaged and what was dropped; empty when it needed no repair.
        public var warnings: [GPXWarning] = []

        public var points: Int { trackPoints + routePoints + waypoints }
        public var wasDamaged: Bool { !warnings.isEmpty }
    }

    /// Reads `source` leniently and writes what it recovers to `sink`.
    ///
    /// - Throws: the ``GPXError`` that stopped reading when not one point could be recovered
    ///   (nothing useful is then written), or the sink's error.
    public static func repair(source: ByteSource, name: String, to sink: FileSink) throws -> Report {
        let reader = GPXReader(source: source, name: name, options: GPXReadOptions(lenient: true))
        let writer = GPXWriter(sink: sink)
        var report = Report()
        try reader.read { event in
            switch event {
            case .warning(let w): report.warnings.append(w)
            case .trackPoint: report.trackPoints += 1
            case .routePoint: report.routePoints += 1
            case .waypoint: report.waypoints += 1
            default: break
            }
            try writer.write(event)
        }
        try writer.finish()
        return report
    }
}
