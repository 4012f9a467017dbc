/// Escaping for XML text and attribute values.
enum XMLEscaping {
    /// Appends `text` with `&`, `<` and `>` escaped; in attributes also `"` and the white space
    /// characters that attribute normalisation would otherwise turn into spaces.
    static func appendEscaped(_ text: ByteSpan, attribute: Bool, to out: ByteStore) {
        var runStart = 0
        for i in 0..<text.count {
            let b = text[i]
            let replacement: StaticString?
            switch b {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "\"") where attribute: replacement = "&quot;"
            case 0x09 where attribute: replacement = "&#9;"
            case 0x0A where attribute: replacement = "&#10;"
            case 0x0D: replacement = "&#13;"
            default: replacement = nil
            }
            if let replacement {
                out.append(text.start + runStart, count: i - runStart)
                out.append(replacement)
                runStart = i + 1
            }
        }
        out.append(text.start + runStart, count: text.count - runStart)
    }

    static func appendEscaped(_ text: String, attribute: Bool, to out: ByteStore) {
        var text = text
        text.withUTF8 { buffer in
            appendEscaped(
                ByteSpan(start: buffer.baseAddress ?? ByteSpan.empty.start, count: buffer.count), attribute: attribute,
                to: out)
        }
    }
}
