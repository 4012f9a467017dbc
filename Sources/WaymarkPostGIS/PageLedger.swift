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
        /// The highest mark handed out: a page whose mark would be no higher leaves `last_seq`
        /// alone (an update that moves nothing would wait for the other lane's commit).
        var handedOut = Int64.min
    }

    private let state = Mutex(State())

    /// Page `number` is about to be written; its rows end at `last`.
    func add(_ number: Int, last: Int64) {
        state.withLock { $0.ends[number] = last }
    }

    /// What `last_seq` may become in page `number`'s transaction, just before it commits:
    /// nil when that would not move it past what an earlier page's transaction set.
    func mark(for number: Int) -> Int64? {
        state.withLock { s in
            var mark: Int64?
            if number == s.through + 1 {
                var end = number
                while s.waiting.contains(end + 1) { end += 1 }
                mark = s.ends[end]
            } else if s.through >= 0 {
                mark = s.ends[s.through]
            }
            guard let mark, mark > s.handedOut else { return nil }
            s.handedOut = mark
            return mark
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
