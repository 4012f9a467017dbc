/// The fixes an ``NMEAEpochMerger`` has ready to go out, in order: each is moved in once and
/// moved out once.
///
/// An array emptied now and then made a copy of each fix's point on the way out (retaining its
/// references) and destroyed the original later (releasing them): a fifth of the reader's work
/// per fix on a log of RMC alone.
struct NMEAFixQueue: ~Copyable {
    /// Fixes `head..<tail` are initialised; the rest of the `capacity` slots are not.
    private var storage: UnsafeMutablePointer<NMEAFix>
    private var capacity: Int
    private var head = 0
    private var tail = 0

    init() {
        capacity = 64
        storage = .allocate(capacity: capacity)
    }

    deinit {
        (storage + head).deinitialize(count: tail - head)
        storage.deallocate()
    }

    var isEmpty: Bool {
        @inline(__always) get { head == tail }
    }

    /// Moves `fix` in, last.
    @inline(__always)
    mutating func append(_ fix: consuming NMEAFix) {
        if tail == capacity { makeRoom() }
        (storage + tail).initialize(to: fix)
        tail &+= 1
    }

    /// The first fix, where it lies (valid until the queue next changes); the queue must not be
    /// empty.
    @inline(__always)
    var first: UnsafePointer<NMEAFix> {
        precondition(head < tail, "NMEAFixQueue is empty")
        return UnsafePointer(storage + head)
    }

    /// Removes the first fix, moving its point into `slot` (uninitialised memory); the queue
    /// must not be empty.
    @inline(__always)
    mutating func removeFirst(movingPointTo slot: UnsafeMutablePointer<GPXPoint>) {
        precondition(head < tail, "NMEAFixQueue is empty")
        // The point is the fix's only field that is not trivial: once it is moved out, what is
        // left of the fix needs no deinitialisation, and its slot counts as uninitialised.
        let fix = UnsafeMutableRawPointer(storage + head)
        let point = (fix + MemoryLayout<NMEAFix>.offset(of: \NMEAFix.point)!).assumingMemoryBound(to: GPXPoint.self)
        slot.moveInitialize(from: point, count: 1)
        removedFirst()
    }

    /// Removes the first fix and returns it; the queue must not be empty.
    @inline(__always)
    mutating func removeFirst() -> NMEAFix {
        precondition(head < tail, "NMEAFixQueue is empty")
        let fix = (storage + head).move()
        removedFirst()
        return fix
    }

    @inline(__always)
    private mutating func removedFirst() {
        head &+= 1
        if head == tail {
            head = 0
            tail = 0
        }
    }

    /// Moves the fixes down to the front, or into storage twice the size when they fill it.
    private mutating func makeRoom() {
        let n = tail - head
        if n * 2 <= capacity {
            if head > 0 { storage.moveInitialize(from: storage + head, count: n) }
        } else {
            let larger = UnsafeMutablePointer<NMEAFix>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: storage + head, count: n)
            storage.deallocate()
            storage = larger
            capacity *= 2
        }
        head = 0
        tail = n
    }
}
