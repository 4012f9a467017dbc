import Waymark
import WaymarkPostGIS
import WaymarkStore

/// Waymark's version: the one place it is written. `scripts/release.sh` reads it from here, and
/// CHANGELOG.md has a section for each.
enum WaymarkVersion {
    static let number = "0.3.0"

    /// What `waymark --version` prints: the version, the commit it was built from (a release
    /// build's; "built from source" otherwise), and the versions of the formats it writes.
    static var description: String {
        "\(number) (\(waymarkBuildCommit.map { "commit \($0)" } ?? "built from source")); "
            + "audit log format \(AuditEvent.formatVersion), store schema \(StoreSchema.currentVersion), "
            + "PostGIS schema \(PostGISStore.currentSchemaVersion)"
    }
}

#if !WAYMARK_RELEASE
    /// A release build (`scripts/release.sh`) defines WAYMARK_RELEASE and writes the commit in
    /// `BuildCommit.release.swift`.
    let waymarkBuildCommit: String? = nil
#endif
