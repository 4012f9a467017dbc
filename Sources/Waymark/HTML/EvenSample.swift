/// An even sample of a stream, in bounded memory: every element until ``capacity`` are kept,
/// then every second, then every fourth, …, spread evenly over the stream; the latest element is
/// kept too (``keepLast()``), so a path's last point is always drawn. The pages keep their points
/// and fixes with it.
struct EvenSample<Element> {
    private(set) var elements: [Element] = []
    /// One element is kept in every `stride`.
    private(set) var stride = 1
    var capacity: Int
    private var sinceKept = 0
    /// The latest element when it was not kept.
    private var pending: Element?

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func append(_ element: Element) {
        sinceKept += 1
        guard sinceKept >= stride else {
            pending = element
            return
        }
        sinceKept = 0
        pending = nil
        elements.append(element)
        guard elements.count >= capacity else { return }
        // The element just kept is dropped by halving when it falls on an odd place: it may be
        // the last.
        if elements.count % 2 == 0 { pending = element }
        elements.keepEveryOther()
        stride *= 2
        // The next to keep is `stride` after the last kept, which was `stride / 2` ago.
        sinceKept = stride / 2
    }

    /// Keeps the latest element if it was left out.
    mutating func keepLast() {
        if let pending { elements.append(pending) }
        pending = nil
    }
}

extension Array {
    /// Keeps the elements at even positions (the first, the third, …).
    mutating func keepEveryOther() {
        var w = 0
        for i in Swift.stride(from: 0, to: count, by: 2) {
            self[w] = self[i]
            w += 1
        }
        removeLast(count - w)
    }
}
