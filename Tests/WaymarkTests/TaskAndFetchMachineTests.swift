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
        "begin": .begin(name: "sync", at: .seconds(10)), "end": .end(task: nil, name: nil, at: .seconds(10)),
        "end2": .end(task: 2, name: "upload", at: .seconds(10)),
        "launchFg": .launched(inBackground: false, at: .seconds(10)),
        "launchBg": .launched(inBackground: true, at: .seconds(10)), "enterBg": .enteredBackground(at: .seconds(10)),
        "enterFg": .enteredForeground, "suspended": .appSuspended, "warning": .warningDue(at: .seconds(25)),
        "deadline": .deadlineDue,
        "terminated": .appTerminated,
    ]

    static let table: [(String, String, String, String)] = [
        ("N", "launchFg", "F0", ""), ("N", "launchBg", "B0", ""),
        ("F0", "begin", "F3", "began 3 sync"), ("F0", "enterBg", "B0", ""), ("F0", "launchBg", "B0", ""),
        ("F0", "launchFg", "F0", ""), ("F0", "terminated", "N", ""),
        ("F1", "begin", "F1+3", "began 3 sync"), ("F1", "end", "F0", "ended 1 -"),
        // The budget starts when the app leaves with a task outstanding.
        ("F1", "enterBg", "R1@10", "warn 35 deadline 40"), ("F1", "launchFg", "F0", ""), ("F1", "launchBg", "B0", ""),
        ("F1", "terminated", "N", ""),
        ("B0", "begin", "R3@10", "began 3 sync warn 35 deadline 40"), ("B0", "enterFg", "F0", ""),
        ("B0", "launchFg", "F0", ""),
        ("B0", "launchBg", "B0", ""), ("B0", "terminated", "N", ""),
        // A task begun while others run shares the stay's budget.
        ("R1", "begin", "R13", "began 3 sync"), ("R1", "end", "R0", "ended 1 20 -warn -deadline"),
        ("R1", "enterFg", "F1", "-warn -deadline"), ("R1", "warning", "X1", "expiring 5 handlers 1"),
        ("R1", "deadline", "R1", "kill"),
        ("R1", "terminated", "N", "-warn -deadline"), ("R1", "launchFg", "F0", ""), ("R1", "launchBg", "B0", ""),
        ("X1", "begin", "X13", "began 3 sync"), ("X1", "end", "X0", "ended 1 20 -warn -deadline"),
        ("X1", "enterFg", "F1", "-warn -deadline"), ("X1", "deadline", "X1", "kill"),
        ("X1", "terminated", "N", "-warn -deadline"),
        ("X1", "launchFg", "F0", ""), ("X1", "launchBg", "B0", ""),
        // After the tasks ended, a new one gets what is left of the stay's budget.
        ("R0", "begin", "R3", "began 3 sync warn 25 deadline 30"),
        // Suspended, the stay is over: a wake (for a fetch, say) starts a fresh budget.
        ("R0", "suspended", "B0", ""), ("R0", "enterFg", "F0", ""), ("R0", "terminated", "N", ""),
        ("R0", "launchFg", "F0", ""), ("R0", "launchBg", "B0", ""),
        ("R12", "end", "R2", "ended 1 20"), ("R12", "end2", "R1", "ended 2 20 upload"),
        ("R12", "begin", "R123", "began 3 sync"),
        ("R12", "warning", "X12", "expiring 5 handlers 1,2"), ("R12", "deadline", "R12", "kill"),
        ("R12", "enterFg", "F12", "-warn -deadline"), ("R12", "terminated", "N", "-warn -deadline"),
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

    /// The device's actions, short: `began 3 sync` (a task and its name), `ended 1 20` (the time
    /// left), `warn 35`/`deadline 40` (the timers set), `-warn`/`-deadline` (cancelled),
    /// `expiring 5` (the time left), `handlers 1,2` (whose expiration handlers run), `kill` (the
    /// watchdog).
    static func describe(_ actions: [DeviceAction]) -> String {
        let seconds = { (d: Duration?) in d.map { "\($0.components.seconds)" } ?? "-" }
        return actions.map { action -> String in
            switch action {
            case .record(.backgroundTask(.began, let task?, nil, let name)):
                "began \(task)" + (name.map { " \($0)" } ?? "")
            case .record(.backgroundTask(.ended, let task?, let remaining, let name)):
                "ended \(task) \(seconds(remaining))" + (name.map { " \($0)" } ?? "")
            case .record(.backgroundTask(.expiring, nil, let remaining?, "budget")): "expiring \(seconds(remaining))"
            case .schedule(.taskWarning, let at): "warn \(seconds(at))"
            case .schedule(.taskDeadline, let at): "deadline \(seconds(at))"
            case .cancel(.taskWarning): "-warn"
            case .cancel(.taskDeadline): "-deadline"
            case .call(.taskExpiration(let tasks)): "handlers \(tasks.map(String.init).joined(separator: ","))"
            case .post(.lifecycle(.terminate(.watchdog))): "kill"
            default: "unexpected \(action)"
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
    /// 60 s interval set (D has none); the last fetch begun was fetch 1.
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
        "completed": .completed(id: 1, .newData, note: nil, at: .seconds(110)),
        "completedNoted": .completed(id: 1, .noData, note: AppNote(synced: 3, note: "queue"), at: .seconds(110)),
        // The completion of an earlier fetch than the last begun.
        "completedEarlier": .completed(id: 0, .newData, note: nil, at: .seconds(110)),
        "deadline": .deadlineDue(at: .seconds(130)),
        "terminated": .appTerminated(at: .seconds(100)),
    ]

    static let table: [(String, String, String, String)] = [
        ("D", "set60", "W160", "wake 160"), ("D", "setNever", "D", ""),
        ("W", "set60", "W", ""), ("W", "setNever", "D", "-wake"),
        ("W", "wakeActive", "Df", "deferred"), ("W", "wakeBackground", "F", "began deadline 130 handler 2"),
        ("W", "wakeSuspended", "F", "woken began deadline 130 handler 2"),
        ("W", "wakeNotRunning", "F", "woken began deadline 130 handler 2"),
        ("W", "wakeSwipedAway", "W160", "wake 160 skipped"),
        // A fetch deferred in the foreground runs once the app is in the background.
        ("Df", "enteredBackground", "F", "began deadline 130 handler 2"), ("Df", "terminated", "W", "wake 100"),
        ("Df", "set60", "Df", ""), ("Df", "setNever", "D", ""),
        ("F", "completed", "W160", "-deadline completed:newData 0 wake 160"),
        ("F", "completedNoted", "W160", "-deadline completed:noData 3 queue wake 160"),
        ("F", "deadline", "W220", "expired kill wake 220"), ("F", "terminated", "W160", "-deadline wake 160"),
        ("F", "set60", "F", ""), ("F", "setNever", "F", ""),
    ]

    static func state(_ name: String) -> Machine.State? {
        switch name {
        case "W160": .waiting(nextWake: .seconds(160))
        case "W220": .waiting(nextWake: .seconds(220))
        default: states[name]?.0
        }
    }

    /// The device's actions, short: `wake 160`/`-wake` (the wake timer), `deferred`, `skipped`,
    /// `woken` (the app is launched or resumed), `began`, `deadline 130`/`-deadline` (the
    /// handler's), `handler 2` (fetch 2's handler is called), `completed:newData 3 queue` (what the
    /// app synced, and its note), `expired`, `kill` (the app is terminated).
    static func describe(_ actions: [DeviceAction]) -> String {
        actions.map { action -> String in
            switch action {
            case .schedule(.fetchWake, let at): "wake \(at.components.seconds)"
            case .cancel(.fetchWake): "-wake"
            case .record(.fetch(.deferred, nil, nil, .appInForeground, nil)): "deferred"
            case .record(.fetch(.skipped, nil, nil, .userTerminated, nil)): "skipped"
            case .post(.lifecycle(.wake(.backgroundFetch))): "woken"
            case .record(.fetch(.began, nil, nil, nil, nil)): "began"
            case .schedule(.fetchDeadline, let at): "deadline \(at.components.seconds)"
            case .call(.performFetch(let id)): "handler \(id)"
            case .record(.fetch(.completed, let result?, let synced?, nil, let note)):
                "completed:\(result.rawValue) \(synced)" + (note.map { " \($0)" } ?? "")
            case .cancel(.fetchDeadline): "-deadline"
            case .record(.fetch(.expired, nil, nil, .budget, nil)): "expired"
            case .post(.lifecycle(.terminate(.fetchBudgetExceeded))): "kill"
            default: "unexpected \(action)"
            }
        }.joined(separator: " ")
    }

    @Test(arguments: table.indices)
    func eachTransition(_ row: Int) throws {
        let (from, event, to, actions) = Self.table[row]
        let (state, interval) = try #require(Self.states[from])
        var machine = Machine(hasFetchMode: true, budget: .seconds(30), state: state, interval: interval, lastID: 1)
        let done = machine.handle(try #require(Self.events[event]))
        #expect(machine.state == (try #require(Self.state(to))), "\(from) + \(event)")
        #expect(Self.describe(done) == actions, "\(from) + \(event)")
        if event == "deadline" { #expect(machine.spacing == 2, "an overrun doubles the spacing") }
    }

    @Test func everyPairNotInTheTableIsIgnored() {
        expectUnlistedPairsAreIgnored(states: Self.states, events: Self.events, listed: Self.table.map { ($0.0, $0.1) })
        {
            var machine = Machine(hasFetchMode: true, budget: .seconds(30), state: $0.0, interval: $0.1, lastID: 1)
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
