import Foundation
import Testing

/// The test harness's own promises, which the rest of the suite relies on.
@Suite struct SupportTests {
    /// A program started by ``spawnUnblocked(_:output:error:input:processGroup:)`` holds its
    /// standard input, output and error and nothing else, although the test process has a pipe
    /// open without close-on-exec (as Foundation opens them) at the time.
    @Test func aSpawnedProgramInheritsOnlyItsThreeDescriptors() async throws {
        let open = Pipe()
        let leaked = [open.fileHandleForReading.fileDescriptor, open.fileHandleForWriting.fileDescriptor]
        #expect(leaked.allSatisfy { fcntl($0, F_GETFD) & FD_CLOEXEC == 0 }, "the pipe is open across exec")
        let r = try await runUnblockedAsync(["/bin/ls", "/proc/self/fd"])
        #expect(r.status == 0, "\(r.stderr)")
        // ls's own listing of its directory is one more descriptor, above 2.
        let descriptors = r.stdoutText.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
        #expect(descriptors.filter { $0 > 2 }.count == 1, "\(descriptors)")
        #expect(leaked.allSatisfy { !descriptors.contains($0) }, "\(descriptors) holds \(leaked)")
        try open.fileHandleForReading.close()
        try open.fileHandleForWriting.close()
    }
}
