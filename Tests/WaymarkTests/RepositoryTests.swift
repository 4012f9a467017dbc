import Foundation
import Testing
import WaymarkPostGIS

@testable import Waymark
@testable import WaymarkStore

/// The repository checks out on every disk its users have.
@Suite struct RepositoryTests {
    /// A default macOS (or Windows) disk ignores case: two paths that differ only by it are one
    /// file there, and a checkout breaks (issue 17: `Sources/Waymark` and `Sources/waymark`).
    @Test func noTwoPathsDifferOnlyByCase() throws {
        let root = Paths.root.path
        var seen: [String: String] = [:]
        var clashes: [String] = []
        let skipped: Set<String> = [".git", ".build"]
        var stack = [""]
        while let relative = stack.popLast() {
            let directory = relative.isEmpty ? root : root + "/" + relative
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                if relative.isEmpty && (skipped.contains(name) || name.hasPrefix(".build")) { continue }
                let path = relative.isEmpty ? name : relative + "/" + name
                if let other = seen.updateValue(path, forKey: path.lowercased()), other != path {
                    clashes.append("\(other) and \(path)")
                }
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory),
                    isDirectory.boolValue
                {
                    stack.append(path)
                }
            }
        }
        #expect(clashes.isEmpty, "paths that differ only by case: \(clashes)")
        #expect(seen.count > 100, "the walk found the repository (\(seen.count) paths under \(root))")
    }
}

/// Issue 31: one version, said the same everywhere, with the formats beside it.
@Suite struct ReleaseVersionTests {
    static func versionInSource() throws -> String {
        let source = try String(
            contentsOf: Paths.root.appendingPathComponent("Sources/WaymarkCLI/Version.swift"), encoding: .utf8)
        let line = try #require(source.split(separator: "\n").first { $0.contains("static let number = \"") })
        return String(line.split(separator: "\"")[1])
    }

    /// CHANGELOG.md's newest release is the source's version, and its table lists the audit log's
    /// and the store's format versions as the code has them.
    @Test func theChangelogStartsWithThisReleaseAndItsFormats() throws {
        let version = try Self.versionInSource()
        let changelog = try String(contentsOf: Paths.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(changelog.components(separatedBy: "\n## ").dropFirst().first)
        #expect(newest.hasPrefix(version + " "), "\(newest.prefix(40))")
        #expect(newest.contains("| audit log (NDJSON) | \(AuditEvent.formatVersion) |"), "\(newest.prefix(600))")
        #expect(newest.contains("| session store (SQLite) | schema \(StoreSchema.currentVersion) "))
        #expect(newest.contains("| session store (PostGIS) | schema \(PostGISStore.currentSchemaVersion) "))
    }

    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.waymark.path), "needs the built waymark"))
    func versionNamesTheReleaseTheBuildAndTheFormats() throws {
        let r = try run(Paths.waymark.path, ["--version"])
        #expect(r.status == 0)
        let text = r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            text
                == "\(try Self.versionInSource()) (built from source); audit log format \(AuditEvent.formatVersion), store schema \(StoreSchema.currentVersion), PostGIS schema \(PostGISStore.currentSchemaVersion)"
        )
    }
}
