import Foundation
import Testing

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
