import Synchronization

/// The pages of one push written over several connections, which may commit out of order:
/// how far `last_seq` may move when a page commits.
///
/// `last_seq` promises that every row up to it is at the server, since a push resumes after
/// it. A page therefore moves it over itself only when every earlier page has committed, and
/// then also over the later pages that committed before it; otherwise only to the end of the
/// pages that have all committed (or not at all). Pages are numbered from 0 in the order they
/// were read, which is the order of their rows.
final class PageLedger: Sendable {
    private struct State {
        /// The last sequence number of each page added.
        var ends: [Int: Int64] = [:]
        /// Pages committed after a page before them that has not.
        var waiting: Set<Int> = []
        /// The pages 0 through `through` have all committed (−1: none).
        var through = -1
    }

    private let state = Mutex(State())

    /// Page `number` is about to be written; its rows end at `last`.
    func add(_ number: Int, last: Int64) {
        state.withLock { $0.ends[number] = last }
    }

    /// What `last_seq` may become in page `number`'s transaction, just before it commits:
    /// nil when no page before the ones in flight has committed and this one cannot count.
    func mark(for number: Int) -> Int64? {
        state.withLock { s in
            guard number == s.through + 1 else { return s.through >= 0 ? s.ends[s.through] : nil }
            var end = number
            while s.waiting.contains(end + 1) { end += 1 }
            return s.ends[end]
        }
    }

    /// Page `number` committed.
    func committed(_ number: Int) {
        state.withLock { s in
            s.waiting.insert(number)
            while s.waiting.remove(s.through + 1) != nil { s.through += 1 }
        }
    }
}
