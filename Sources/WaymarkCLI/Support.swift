import ArgumentParser
import Waymark
import WaymarkGPSD
import WaymarkPostGIS
import WaymarkStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Options every command that reads GPX shares.
struct ReadOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Recover what can be read: leave out a bad value (a malformed time, a number that is not one) or a point without a usable position, with a warning, and read a damaged file up to the damage.",
            discussion: "Without it, the first error stops the command with exit code 65."))
    var lenient = false

    var gpxOptions: GPXReadOptions { GPXReadOptions(lenient: lenient) }

    /// For outputs that do not write GPX: only known extension values are read.
    var valueOptions: GPXReadOptions { GPXReadOptions(lenient: lenient, keepsExtensionElements: false) }
}

/// sysexits(3) codes.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let ioError: Int32 = 74
}

/// Prints a message to standard error, its control characters (from a file's name, a trace's
/// text, gpsd) shown escaped but for line feeds and tabs (``TerminalText``): a name with ESC
/// or BEL never reaches the terminal raw.
func printError(_ message: String) {
    writeStandardError(TerminalText.escaped(message, keepingLineBreaks: true) + "\n")
}

/// Writes text to standard error as it is, with `write(2)`.
func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Turns a library error into a message and a sysexits code, at the edge of the tool.
func sysexit(for error: Error) -> ExitCode {
    switch error {
    case let e as GPXError:
        printError("waymark: \(e)")
        switch e.code {
        case .fileNotFound:
            printError("hint: check the path; use - to read standard input")
            return ExitCode(ExitStatus.noInput)
        case .io:
            return ExitCode(ExitStatus.ioError)
        case .truncated:
            printError(
                "hint: the file may be cut short (a crashed logger?)"
                    + (CommandLine.arguments.contains("--lenient") ? "" : "; --lenient reads what is there"))
        case .unsupportedEncoding:
            break
        case .forbiddenDeclaration:
            printError("hint: remove the DOCTYPE; GPX files need none")
        case .notGPX:
            break  // the message says what the file is and what to use
        default:
            // Never suggested when it is on already.
            if !CommandLine.arguments.contains("--lenient") {
                printError("hint: --lenient skips bad points and keeps the rest")
            }
        }
        return ExitCode(ExitStatus.dataError)
    case let e as OutputError:
        printError("waymark: \(e)")
        return ExitCode(ExitStatus.ioError)
    case let e as StoreError:
        printError("waymark: \(e)")
        switch e.kind {
        case .missing, .sessionNotFound: return ExitCode(ExitStatus.noInput)
        case .notADatabase, .foreign, .newer, .corrupt, .cannotUpgrade: return ExitCode(ExitStatus.dataError)
        case .readOnly, .full, .busy, .io: return ExitCode(ExitStatus.ioError)
        }
    case let e as ValidationError:
        printError("waymark: \(e.message)")
        return ExitCode(ExitStatus.usage)
    case let e as PostGISError:
        printError("waymark: \(e)")
        if e.isTransient {
            printError("hint: is the server running and reachable? Sessions stay in the local store until it is")
            return ExitCode(69)
        }
        return ExitCode(ExitStatus.dataError)
    case let e as SessionReportWriter.ReportError:
        printError("waymark: \(e)")
        return ExitCode(ExitStatus.dataError)
    default:
        printError("waymark: \(error)")
        return ExitCode.failure
    }
}

/// Whether standard output or error is a terminal.
enum Terminal {
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Whether to show what only a person at a terminal wants (replay's pace notice and
    /// progress, record's status line): when standard error is a terminal, or when
    /// `WAYMARK_TERMINAL_UI=1` forces it (for tests and `script` sessions); `=0` turns it off.
    static var showsTerminalUI: Bool {
        switch ProcessInfo.processInfo.environment["WAYMARK_TERMINAL_UI"] {
        case "1": true
        case "0": false
        default: stderrIsTerminal
        }
    }

    /// Columns of the terminal on standard output, or $COLUMNS, or 80.
    static var width: Int {
        var size = winsize()
        if isatty(1) == 1, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let c = ProcessInfo.processInfo.environment["COLUMNS"], let n = Int(c), n > 0 { return n }
        return 80
    }

    /// Colour only for terminals, and never when NO_COLOR is set.
    static var wantsColor: Bool {
        let env = ProcessInfo.processInfo.environment
        return stdoutIsTerminal && env["NO_COLOR"] == nil && env["TERM"] != "dumb"
    }
}

/// Counts bytes as a reader pulls them, and shows progress on a terminal for large files.
final class ProgressSource: ByteSource {
    private let inner: FileByteSource
    private let total: Int
    private let label: String
    private let show: Bool
    private var read = 0
    private var nextReport = 0
    private static let step = 32 << 20

    init(path: String) throws {
        inner = try FileByteSource(path: path)
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        total = (attributes?[.size] as? Int) ?? 0
        label = path
        show = Terminal.stderrIsTerminal && total > Self.step
        nextReport = Self.step
    }

    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) throws -> Int {
        let n = try inner.read(into: buffer, capacity: capacity)
        read += n
        if show {
            if n == 0 {
                writeStandardError("\r\u{1B}[K")
            } else if read >= nextReport {
                nextReport += Self.step
                let percent = total > 0 ? min(100, read * 100 / total) : 0
                writeStandardError("\r\(label): \(percent)% (\(read >> 20) of \(total >> 20) MiB)")
            }
        }
        return n
    }
}

/// Opens a reader on `path` for what the file holds (GPX, TCX, KML, GeoJSON, FIT, CSV, an NMEA
/// log or a gpsd JSON capture, told by its first bytes), with progress for large files on a
/// terminal.
func makeReader(_ path: String, options: ReadOptions, keepingExtensions: Bool = true) throws
    -> any TraceEventReader
{
    try TraceFormat.reader(
        for: try ProgressSource(path: path), name: path,
        options: keepingExtensions ? options.gpxOptions : options.valueOptions, readers: .withGPSDCaptures)
}

/// After a lenient read, says how many bad points were left out, if any.
func reportDropped(_ reader: any TraceEventReader) {
    if reader.droppedPoints > 0 {
        printError(
            "\(reader.fileName): --lenient left out \(reader.droppedPoints) bad point(s); see the warnings above")
    }
}

/// Prints reader warnings to standard error as they come.
func report(_ warning: GPXWarning) {
    printError(warning.description)
}

/// The sink for `-o PATH`: standard output when there is no path or it is `-` (as for inputs),
/// else the file, written atomically.
func openOutput(_ path: String?) throws -> FileSink {
    guard let path, path != "-" else { return FileSink.standardOutput() }
    return try FileSink(atomicPath: path)
}
