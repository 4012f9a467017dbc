/// An error found while reading or writing GPX, with the place it was found.
///
/// The description reads like a compiler diagnostic:
/// `walk.gpx:12:5: <trkpt> has no 'lat' attribute`. Columns count bytes from 1.
public struct GPXError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Code: String, Sendable, Hashable, Codable {
        /// The file does not exist.
        case fileNotFound
        /// Reading or writing failed in the operating system.
        case io
        /// The bytes are not well-formed XML 1.0.
        case malformedXML
        /// The file ends before the document does.
        case truncated
        /// The declared or detected character encoding is not supported.
        case unsupportedEncoding
        /// A DOCTYPE or entity declaration: refused, because GPX needs none.
        case forbiddenDeclaration
        /// A configured limit (depth, token length) was exceeded.
        case limitExceeded
        /// The document is XML but its root is not `<gpx>`.
        case notGPX
        /// A latitude or longitude is missing, not a number, or out of range.
        case invalidCoordinate
        /// A value (time, elevation, DOP, …) cannot be read.
        case invalidValue
    }

    /// What kind of problem this is.
    public var code: Code
    /// The file, as the user named it.
    public var file: String
    /// 1-based line, or 0 when the problem has no place in the file.
    public var line: Int
    /// 1-based column in bytes, or 0 when unknown.
    public var column: Int
    /// What is wrong, in plain words.
    public var message: String

    public init(code: Code, file: String, line: Int, column: Int, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        if line > 0 { return "\(file):\(line):\(column): \(message)" }
        return "\(file): \(message)"
    }
}

/// A problem that did not stop reading: the reader went on, and says what it did.
public struct GPXWarning: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        if line > 0 { return "\(file):\(line):\(column): warning: \(message)" }
        return "\(file): warning: \(message)"
    }
}
