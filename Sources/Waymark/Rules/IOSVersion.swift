/// The iOS release a run models: the rules that changed between releases follow it.
///
/// `docs/ios-versions.md` has the table, with a source for every row. The releases Waymark knows
/// are 12 to 18 and 26 (Apple numbered the release after 18 by its year); ``newest`` is the
/// default.
public struct IOSVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major release, such as 13 or 17.
    public let major: Int

    /// The releases Waymark models, oldest first.
    public static let supported = [12, 13, 14, 15, 16, 17, 18, 26]
    /// The newest release whose behaviour Apple documents: the default.
    public static let newest = IOSVersion(checked: 26)

    /// The release `major`, or nil when Waymark does not model it.
    public init?(major: Int) {
        guard Self.supported.contains(major) else { return nil }
        self.major = major
    }

    private init(checked major: Int) { self.major = major }

    /// Parses `13`, `17.4` or `iOS 14` (the minor release is accepted and has no effect).
    public init?(parsing text: String) {
        var t = Substring(text)
        if t.lowercased().hasPrefix("ios") { t = t.dropFirst(3).drop(while: { $0 == " " }) }
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            let major = Int(parts[0]), parts.dropFirst().allSatisfy({ Int($0) != nil })
        else { return nil }
        self.init(major: major)
    }

    public static func < (a: IOSVersion, b: IOSVersion) -> Bool { a.major < b.major }
    public var description: String { "iOS \(major)" }

    /// The supported releases as users type them, for messages.
    public static let names = supported.map(String.init).joined(separator: ", ")

    // MARK: - What changed when (docs/ios-versions.md)

    /// A background task's budget: about 180 s up to iOS 12, about 30 s from iOS 13.
    public var backgroundTaskBudget: Duration { major >= 13 ? .seconds(30) : .seconds(180) }

    /// From iOS 13 a When In Use app receives updates only while *in use*: in the foreground, in
    /// the grace period after leaving it, or with a background location session that shows the
    /// indicator. Before, it received them whenever it ran.
    public var restrictsWhenInUseToInUse: Bool { major >= 13 }

    /// Allow Once (temporary When In Use) and provisional Always, from iOS 13. Before, a request
    /// for Always from `notDetermined` asked for Always at once.
    public var hasAllowOnceAndProvisionalAlways: Bool { major >= 13 }

    /// Reduced accuracy, the Precise Location switch and `kCLLocationAccuracyReduced`, from iOS 14.
    public var hasReducedAccuracy: Bool { major >= 14 }

    /// `locationManagerDidChangeAuthorization(_:)` is called when the app creates its manager,
    /// from iOS 14.
    public var reportsAuthorizationAtManagerCreation: Bool { major >= 14 }

}
