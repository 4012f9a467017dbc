import Testing

@testable import Waymark

/// Every transition of background tasks and of background fetch, from tables; every pair not in
/// a table is ignored.
@Suite struct BackgroundTaskMachineTests {
    typealias Machine = BackgroundTaskStateMachine

    /// N not running; F0/F1 foreground without/with task 1; B0 background, no task, budget unused;
    /// R1 background with task 1, budget running since 0 s; X1 the same after the expiration
    /// handlers ran; R0 background, no task, budget running since 0 s; R12 tasks 1 and 2.
    static let states: [String: Machine.State] = [
        "N": .notRunning, "F0": .foreground(tasks: []), "F1": .foreground(tasks: [1]),
        "B0": .background(tasks: [], budget: .unused),
        "R1": .background(tasks: [1], budget: .running(since: .zero, expiring: false)),
        "X1": .background(tasks: [1], budget: .running(since: .zero, expiring: true)),
        "R0": .background(tasks: [], budget: .running(since: .zero, expiring: false)),
        "R12": .background(tasks: [1, 2], budget: .running(since: .zero, expiring: false)),
    ]

    /// Events at 10 s (the warning at 25 s: a 30 s budget, warned 5 s ahead).
    static let events: [String: Machine.Event] = [
        "begin": .begin(at: .seconds(10)), "end": .end(task: nil, at: .seconds(10)),
        "end2": .end(task: 2, at: .seconds(10)), "launchFg": .launched(inBackground: false, at: .seconds(10)),
        "launchBg": .launched(inBackground: true, at: .seconds(10)), "enterBg": .enteredBackground(at: .seconds(10)),
        "enterFg": .enteredForeground, "suspended": .appSuspended, "warning": .warningDue(at: .seconds(25)),
        "deadline": .deadlineDue,
        "terminated": .appTerminated,
    ]

    static let table: [(String, String, String, String)] = [
        ("N", "launchFg", "F0", ""), ("N", "launchBg", "B0", ""),
        ("F0", "begin", "F3", "began 3"), ("F0", "enterBg", "B0", ""), ("F0", "launchBg", "B0", ""),
        ("F0", "launchFg", "F0", ""), ("F0", "terminated", "N", ""),
        ("F1", "begin", "F1+3", "began 3"), ("F1", "end", "F0", "ended 1 -"),
        // The budget starts when the app leaves with a task outstanding.
        ("F1", "enterBg", "R1@10", "expiry 35 40"), ("F1", "launchFg", "F0", ""), ("F1", "launchBg", "B0", ""),
        ("F1", "terminated", "N", ""),
        ("B0", "begin", "R3@10", "began 3 expiry 35 40"), ("B0", "enterFg", "F0", ""), ("B0", "launchFg", "F0", ""),
        ("B0", "launchBg", "B0", ""), ("B0", "terminated", "N", ""),
        // A task begun while others run shares the stay's budget.
        ("R1", "begin", "R13", "began 3"), ("R1", "end", "R0", "ended 1 20 -expiry"),
        ("R1", "enterFg", "F1", "-expiry"), ("R1", "warning", "X1", "expiring 1 5"), ("R1", "deadline", "R1", "kill"),
        ("R1", "terminated", "N", "-expiry"), ("R1", "launchFg", "F0", ""), ("R1", "launchBg", "B0", ""),
        ("X1", "begin", "X13", "began 3"), ("X1", "end", "X0", "ended 1 20 -expiry"),
        ("X1", "enterFg", "F1", "-expiry"), ("X1", "deadline", "X1", "kill"), ("X1", "terminated", "N", "-expiry"),
        ("X1", "launchFg", "F0", ""), ("X1", "launchBg", "B0", ""),
        // After the tasks ended, a new one gets what is left of the stay's budget.
        ("R0", "begin", "R3", "began 3 expiry 25 30"),
        // Suspended, the stay is over: a wake (for a fetch, say) starts a fresh budget.
        ("R0", "suspended", "B0", ""), ("R0", "enterFg", "F0", ""), ("R0", "terminated", "N", ""),
        ("R0", "launchFg", "F0", ""), ("R0", "launchBg", "B0", ""),
        ("R12", "end", "R2", "ended 1 20"), ("R12", "end2", "R1", "ended 2 20"), ("R12", "begin", "R123", "began 3"),
        ("R12", "warning", "X12", "expiring 1,2 5"), ("R12", "deadline", "R12", "kill"),
        ("R12", "enterFg", "F12", "-expiry"), ("R12", "terminated", "N", "-expiry"),
        ("R12", "launchFg", "F0", ""), ("R12", "launchBg", "B0", ""),
    ]

    /// The expected state: a name from ``states``, or tasks and budget spelled out
    /// (`F1+3`, `F3`, `R1@10`, `R13`, `X13`, `X0`, `R3`, `R3@10`, `R2`, `R123`, `X12`, `F12`).
    static func state(_ name: String) -> Machine.State? {
        if let s = states[name] { return s }
        let running = { (tasks: [Int], since: Int, expiring: Bool) -> Machine.State in
            .background(tasks: tasks, budget: .running(since: .seconds(since), expiring: expiring))
        }
        switch name {
        case "F1+3": return .foreground(tasks: [1, 3])
        case "F12": return .foreground(tasks: [1, 2])
        case "F3": return .foreground(tasks: [3])
        case "X0": return running([], 0, true)
        case "R1@10": return running([1], 10, false)
        case "R3@10": return running([3], 10, false)
        case "R13": return running([1, 3], 0, false)
        case "X13": return running([1, 3], 0, true)
        case "R3": return running([3], 0, false)
        case "R2": return running([2], 0, false)
        case "R123": return running([1, 2, 3], 0, false)
        case "X12": return running([1, 2], 0, true)
        default: return nil
        }
    }

    static func describe(_ actions: [Machine.Action]) -> String {
        actions.map { action -> String in
            switch action {
            case .began(let task): "began \(task)"
            case .ended(let task, let remaining): "ended \(task) \(remaining.map { "\($0.components.seconds)" } ?? "-")"
            case .scheduleExpiry(let w, let d): "expiry \(w.components.seconds) \(d.components.seconds)"
            case .cancelExpiry: "-expiry"
            case .expiring(let tasks, let remaining):
                "expiring \(tasks.map(String.init).joined(separator: ",")) \(remaining.components.seconds)"
            case .terminateApp: "kill"
            }
        }.joined(separator: " ")
    }

    @Test(arguments: table.indices)
    func eachTransition(_ row: Int) throws {
        let (from, event, to, actions) = Self.table[row]
        var machine = Machine(
            budget: .seconds(30), warning: .seconds(5), state: try #require(Self.states[from]), counter: 2)
        let done = machine.handle(try #require(Self.events[event]))
        #expect(machine.state == (try #require(Self.state(to), "\(to)")), "\(from) + \(event)")
        #expect(Self.describe(done) == actions, "\(from) + \(event)")
    }

    @Test func everyPairNotInTheTableIsIgnored() {
        expectUnlistedPairsAreIgnored(states: Self.states, events: Self.events, listed: Self.table.map { ($0.0, $0.1) })
        {
            var machine = Machine(budget: .seconds(30), warning: .seconds(5), state: $0, counter: 2)
            return (machine.handle($1).isEmpty, machine.state == $0)
        }
    }

    /// `backgroundTimeRemaining`: the stay's budget less the time since it started; nil in the
    /// foreground (iOS: "remains suitably large"), never below zero.
    @Test func remainingTimeCountsDownInTheBackgroundOnly() {
        let r1 = Machine(budget: .seconds(30), warning: .seconds(5), state: Self.states["R1"]!, counter: 1)
        #expect(r1.remaining(at: .seconds(12)) == .seconds(18))
        #expect(r1.remaining(at: .seconds(99)) == .zero)
        let f1 = Machine(budget: .seconds(30), warning: .seconds(5), state: Self.states["F1"]!, counter: 1)
        #expect(f1.remaining(at: .seconds(12)) == nil)
    }
}

@Suite struct BackgroundFetchMachineTests {
    typealias Machine = BackgroundFetchStateMachine

    /// D disabled; W a wake due at 100 s; Df deferred; F fetching since 100 s. Every state has a
    /// 60 s interval set (D has none).
    static let states: [String: (Machine.State, Duration?)] = [
        "D": (.disabled, nil), "W": (.waiting(nextWake: .seconds(100)), .seconds(60)), "Df": (.deferred, .seconds(60)),
        "F": (.fetching(since: .seconds(100)), .seconds(60)),
    ]

    /// Events at 100 s (completion and deadline at 110 s and 130 s).
    static let events: [String: Machine.Event] = [
        "set60": .setInterval(.seconds(60), at: .seconds(100)), "setNever": .setInterval(nil, at: .seconds(100)),
        "wakeActive": .wakeDue(at: .seconds(100), app: .active, terminatedByUser: false),
        "wakeBackground": .wakeDue(at: .seconds(100), app: .background, terminatedByUser: false),
        "wakeSuspended": .wakeDue(at: .seconds(100), app: .suspended, terminatedByUser: false),
        "wakeNotRunning": .wakeDue(at: .seconds(100), app: .notRunning, terminatedByUser: false),
        "wakeSwipedAway": .wakeDue(at: .seconds(100), app: .notRunning, terminatedByUser: true),
        "enteredBackground": .appEnteredBackground(at: .seconds(100)),
        "completed": .completed(.newData, at: .seconds(110)), "deadline": .deadlineDue(at: .seconds(130)),
        "terminated": .appTerminated(at: .seconds(100)),
    ]

    static let table: [(String, String, String, String)] = [
        ("D", "set60", "W160", "wake 160"), ("D", "setNever", "D", ""),
        ("W", "set60", "W", ""), ("W", "setNever", "D", "-wake"),
        ("W", "wakeActive", "Df", "deferred"), ("W", "wakeBackground", "F", "begin none 130"),
        ("W", "wakeSuspended", "F", "begin resume 130"), ("W", "wakeNotRunning", "F", "begin launch 130"),
        ("W", "wakeSwipedAway", "W160", "wake 160 skipped"),
        // A fetch deferred in the foreground runs once the app is in the background.
        ("Df", "enteredBackground", "F", "begin none 130"), ("Df", "terminated", "W", "wake 100"),
        ("Df", "set60", "Df", ""), ("Df", "setNever", "D", ""),
        ("F", "completed", "W160", "-deadline completed:newData wake 160"),
        ("F", "deadline", "W220", "expired wake 220"), ("F", "terminated", "W160", "-deadline wake 160"),
        ("F", "set60", "F", ""), ("F", "setNever", "F", ""),
    ]

    static func state(_ name: String) -> Machine.State? {
        switch name {
        case "W160": .waiting(nextWake: .seconds(160))
        case "W220": .waiting(nextWake: .seconds(220))
        default: states[name]?.0
        }
    }

    static func describe(_ actions: [Machine.Action]) -> String {
        actions.map { action -> String in
            switch action {
            case .scheduleWake(let at): "wake \(at.components.seconds)"
            case .cancelWake: "-wake"
            case .deferred: "deferred"
            case .skippedUserTerminated: "skipped"
            case .begin(let wake, let deadline): "begin \(wake) \(deadline.components.seconds)"
            case .completed(let r): "completed:\(r.rawValue)"
            case .cancelDeadline: "-deadline"
            case .expired: "expired"
            }
        }.joined(separator: " ")
    }

    @Test(arguments: table.indices)
    func eachTransition(_ row: Int) throws {
        let (from, event, to, actions) = Self.table[row]
        let (state, interval) = try #require(Self.states[from])
        var machine = Machine(hasFetchMode: true, budget: .seconds(30), state: state, interval: interval)
        let done = machine.handle(try #require(Self.events[event]))
        #expect(machine.state == (try #require(Self.state(to))), "\(from) + \(event)")
        #expect(Self.describe(done) == actions, "\(from) + \(event)")
        if event == "deadline" { #expect(machine.spacing == 2, "an overrun doubles the spacing") }
    }

    @Test func everyPairNotInTheTableIsIgnored() {
        expectUnlistedPairsAreIgnored(states: Self.states, events: Self.events, listed: Self.table.map { ($0.0, $0.1) })
        {
            var machine = Machine(hasFetchMode: true, budget: .seconds(30), state: $0.0, interval: $0.1)
            return (machine.handle($1).isEmpty, machine.state == $0.0)
        }
    }

    /// Without the `fetch` background mode an interval does nothing.
    @Test func withoutTheFetchModeNothingIsScheduled() {
        var machine = Machine(hasFetchMode: false, budget: .seconds(30))
        #expect(machine.handle(.setInterval(.seconds(60), at: .zero)).isEmpty)
        #expect(machine.state == .disabled)
    }
}
