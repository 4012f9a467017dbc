/// Places labels beside their marks so that they cover no mark and no label placed before: a
/// pure, greedy placer for a picture's waypoint names.
///
/// Each label tries eight places around its mark (right and left, above, level and below, then
/// straight above and below), then the same farther out. It takes the first that overlaps
/// nothing and stays inside the bounds; when none does, the one that overlaps least. Text widths
/// are estimated from the characters (DejaVu Sans' advances, rounded up), so a label's box is at
/// least as wide as a browser draws it.
struct LabelPlacer {
    struct Box: Equatable {
        var x0: Double
        var y0: Double
        var x1: Double
        var y1: Double

        func overlap(_ other: Box) -> Double {
            let w = min(x1, other.x1) - max(x0, other.x0)
            let h = min(y1, other.y1) - max(y0, other.y0)
            return w > 0 && h > 0 ? w * h : 0
        }
    }

    enum Anchor: Equatable {
        case start, middle, end
    }

    struct Label: Equatable {
        /// The text's anchor point (SVG `x`, `y`: the baseline) and how the text hangs from it.
        var x: Double
        var y: Double
        var anchor: Anchor
        /// The box the text covers.
        var box: Box
    }

    private let bounds: Box
    private(set) var obstacles: [Box] = []

    /// `bounds`: left, top, right, bottom.
    init(bounds: (Double, Double, Double, Double)) {
        self.bounds = Box(x0: bounds.0, y0: bounds.1, x1: bounds.2, y1: bounds.3)
    }

    /// The square of half-side `radius` around a point.
    static func box(around p: (x: Double, y: Double), radius: Double) -> Box {
        Box(x0: p.x - radius, y0: p.y - radius, x1: p.x + radius, y1: p.y + radius)
    }

    mutating func avoid(_ box: Box) { obstacles.append(box) }

    /// The estimated width of `text` in pixels at `fontSize`, for DejaVu Sans (the pages' first
    /// font; others are narrower): its advances in em, rounded up.
    static func textWidth(_ text: String, fontSize: Double) -> Double {
        var em = 0.0
        for c in text.unicodeScalars {
            switch c {
            case "i", "j", "l", ".", ",", ":", ";", "'", "!", "|", "I": em += 0.32
            case " ", "f", "t", "r", "(", ")", "[", "]", "-": em += 0.42
            case "m", "w", "M", "W", "@", "%": em += 1.0
            case "A"..."Z", "0"..."9": em += 0.72
            case "a"..."z": em += 0.64
            default: em += c.value < 0x80 ? 0.7 : 1.0
            }
        }
        return em * fontSize
    }

    /// Places `text` for the mark at `p`, and avoids its box from then on.
    mutating func place(_ text: String, at p: (x: Double, y: Double), fontSize: Double) -> Label {
        let w = Self.textWidth(text, fontSize: fontSize)
        // A line's box: from the ascent above the baseline to the descent below it.
        let ascent = fontSize * 0.8
        let descent = fontSize * 0.25
        var best: Label?
        var bestOverlap = Double.infinity
        for gap in [7.0, 16.0] {
            // (dx, baseline dy, anchor): right above, right below, left above, left below, right
            // level, left level, above, below.
            let candidates: [(Double, Double, Anchor)] = [
                (gap, -gap + 1, .start), (gap, gap + ascent - 1, .start),
                (-gap, -gap + 1, .end), (-gap, gap + ascent - 1, .end),
                (gap + 1, ascent / 2 - 1, .start), (-gap - 1, ascent / 2 - 1, .end),
                (0, -gap - 3, .middle), (0, gap + ascent + 2, .middle),
            ]
            for (dx, dy, anchor) in candidates {
                let x = p.x + dx
                let y = p.y + dy
                let x0 =
                    switch anchor {
                    case .start: x
                    case .middle: x - w / 2
                    case .end: x - w
                    }
                let box = Box(x0: x0, y0: y - ascent, x1: x0 + w, y1: y + descent)
                var overlap = obstacles.reduce(0) { $0 + $1.overlap(box) }
                // Outside the bounds counts as covering what it leaves.
                let inside = bounds.overlap(box)
                overlap += (box.x1 - box.x0) * (box.y1 - box.y0) - inside
                if overlap < bestOverlap {
                    bestOverlap = overlap
                    best = Label(x: x, y: y, anchor: anchor, box: box)
                    if overlap == 0 { break }
                }
            }
            if bestOverlap == 0 { break }
        }
        let label = best!
        obstacles.append(label.box)
        return label
    }
}
