/// Escaping for XML text and attribute values.
enum XMLEscaping {
    /// Appends `text` with `&`, `<` and `>` escaped; in attributes also `"` and the white space
    /// characters that attribute normalisation would otherwise turn into spaces.
    ///
    /// The characters XML 1.0 does not allow at all, not even as a character reference (the
    /// controls U+0000 to U+001F but tab, line feed and carriage return; U+FFFE and U+FFFF),
    /// are each written as U+FFFD, the replacement character: a name or a file name that holds
    /// one (ESC, BEL, U+0001) still makes a well-formed document, which Waymark reads back.
    /// With `html`, so are DEL and the C1 controls (U+007F to U+009F), which HTML's parser
    /// reports as errors.
    static func appendEscaped(_ text: ByteSpan, attribute: Bool, html: Bool = false, to out: ByteStore) {
        var runStart = 0
        var i = 0
        while i < text.count {
            let b = text[i]
            var replacement: StaticString?
            // A character XML (or HTML) forbids, this many bytes long: written as U+FFFD.
            var forbidden = 0
            switch b {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "\"") where attribute: replacement = "&quot;"
            case 0x09 where attribute: replacement = "&#9;"
            case 0x0A where attribute: replacement = "&#10;"
            case 0x0D: replacement = "&#13;"
            case 0x09, 0x0A: break
            case 0x00...0x1F: forbidden = 1
            case 0x7F where html: forbidden = 1
            case 0xC2 where html && i + 1 < text.count && (0x80...0x9F).contains(text[i + 1]):
                forbidden = 2  // U+0080 to U+009F
            case 0xEF where i + 2 < text.count && text[i + 1] == 0xBF && text[i + 2] >= 0xBE:
                forbidden = 3  // U+FFFE and U+FFFF
            default: break
            }
            if replacement != nil || forbidden > 0 {
                out.append(text.start + runStart, count: i - runStart)
                if let replacement {
                    out.append(replacement)
                } else {
                    out.append(0xEF)
                    out.append(0xBF)
                    out.append(0xBD)
                }
                runStart = i + max(1, forbidden)
            }
            i += max(1, forbidden)
        }
        out.append(text.start + runStart, count: text.count - runStart)
    }

    static func appendEscaped(_ text: String, attribute: Bool, html: Bool = false, to out: ByteStore) {
        var text = text
        text.withUTF8 { buffer in
            appendEscaped(
                ByteSpan(start: buffer.baseAddress ?? ByteSpan.empty.start, count: buffer.count), attribute: attribute,
                html: html, to: out)
        }
    }
}
