import Waymark

/// Which of a receiver's fixes a logger keeps, as gpxlogger's options choose them: a pure
/// function of the fixes so far.
///
/// - ``minimumMode``: a fix of a lower mode is left out (`--fix-min 3d` keeps 3D fixes only).
/// - ``minimumMove``: a fix less than this many metres (geodesic, WGS 84) from the last fix kept
///   is left out, as gpxlogger's `-m` does; the first fix, and the first after a loss of fix or
///   an outage (``restart()``), is always kept.
public struct LoggerFilter: Sendable, Hashable {
    /// Why a fix was left out.
    public enum Rejection: String, Sendable, Hashable {
        case belowMinimumMode
        case belowMinimumMove
    }

    /// 2 or 3; nil keeps any fix.
    public var minimumMode: Int?
    /// Metres; nil (or 0) keeps every fix however close.
    public var minimumMove: Double?
    private var lastKept: Coordinate?
    /// Fixes left out, by reason.
    public private(set) var belowMode = 0
    public private(set) var belowMove = 0

    public init(minimumMode: Int? = nil, minimumMove: Double? = nil) {
        self.minimumMode = minimumMode
        self.minimumMove = minimumMove
    }

    /// Whether the filter keeps every fix.
    public var keepsEverything: Bool { (minimumMode ?? 0) <= 2 && (minimumMove ?? 0) <= 0 }

    /// Takes the next fix (its mode, 2 or 3, and position): nil when it is kept, else why not.
    public mutating func admit(mode: Int, at coordinate: Coordinate) -> Rejection? {
        if let minimumMode, mode < minimumMode {
            belowMode += 1
            return .belowMinimumMode
        }
        if let minimumMove, minimumMove > 0, let last = lastKept, Geodesic.distance(last, coordinate) < minimumMove {
            belowMove += 1
            return .belowMinimumMove
        }
        lastKept = coordinate
        return nil
    }

    /// After a loss of fix or an outage: the next fix is kept wherever it is.
    public mutating func restart() { lastKept = nil }
}
