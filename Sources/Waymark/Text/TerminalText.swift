/// Text from a file or a store (a file name, a trace's name, a session's source) made safe to
/// print on a terminal: control characters are shown escaped, as git and `ls` show them, so
/// that a name with ESC, BEL or BS cannot retitle, recolour or rewrite the terminal.
public enum TerminalText {
    /// `text` with each control character written as an escape: `\t`, `\n` and `\r`, `\xHH`
    /// for the other C0 controls and DEL (`\x1b` for ESC), and `\u{HHHH}` for the C1 controls
    /// (U+0080 to U+009F: U+009B is CSI to many terminals), the line and paragraph separators
    /// and the bidirectional overrides and isolates (which reorder what follows them). When
    /// anything was escaped, the whole is quoted as the shell's `$'…'` (as GNU `ls` shows such a
    /// name), with a backslash written `\\` and a quote `\'` inside: the result reads back one
    /// way, and `a\nb` (a backslash and an n) is told from a line break. Text without control
    /// characters comes back unchanged, unless it begins with `$'` itself.
    ///
    /// With `keepingLineBreaks`, line feeds and tabs stay as they are: for messages of several
    /// lines.
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        // Text that begins as the quoted form does is quoted too, so that it cannot pass for it.
        guard
            text.hasPrefix("$'")
                || text.unicodeScalars.contains(where: { needsEscape($0, keepingLineBreaks: keepingLineBreaks) })
        else {
            return text
        }
        var out = String.UnicodeScalarView()
        func append(_ ascii: String) { out.append(contentsOf: ascii.unicodeScalars) }
        append("$'")
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                append("\\\\")
            } else if scalar == "'" {
                append("\\'")
            } else if !needsEscape(scalar, keepingLineBreaks: keepingLineBreaks) {
                out.append(scalar)
            } else {
                switch scalar {
                case "\t": append("\\t")
                case "\n": append("\\n")
                case "\r": append("\\r")
                default:
                    let hex = String(scalar.value, radix: 16)
                    if scalar.value < 0x80 {
                        append("\\x" + (hex.count < 2 ? "0" : "") + hex)
                    } else {
                        append("\\u{" + hex + "}")
                    }
                }
            }
        }
        append("'")
        return String(out)
    }

    /// Whether `scalar` is one ``escaped(_:keepingLineBreaks:)`` escapes.
    static func needsEscape(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLineBreaks
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
