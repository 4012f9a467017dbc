import Testing

@testable import Waymark

/// Every transition of the app's lifecycle: each state against each event, from a table.
@Suite struct LifecycleMachineTests {
    typealias Machine = AppLifecycleStateMachine

    /// The states, by short name: N never launched, Nu swiped away, A active, Ii inactive
    /// (interruption), Ia inactive (alert), Iia inactive (both), Bg background in the grace
    /// period, B background after it, S suspended.
    static let states: [String: Machine.State] = [
        "N": .notRunning(terminated: nil), "Nu": .notRunning(terminated: .user), "A": .foreground(obscured: []),
        "Ii": .foreground(obscured: .interruption), "Ia": .foreground(obscured: .alert),
        "Iia": .foreground(obscured: [.interruption, .alert]), "Bg": .background(inGracePeriod: true),
        "B": .background(inGracePeriod: false), "S": .suspended,
    ]

    static let events: [String: Machine.Event] = [
        "launch": .launch(inBackground: false, cause: .userLaunch),
        "launchBg": .launch(inBackground: true, cause: .backgroundFetch), "open": .open, "leave": .leave,
        "interrupt": .interrupt, "endInterruption": .endInterruption, "showAlert": .showAlert,
        "dismissAlert": .dismissAlert, "graceEnded": .gracePeriodEnded, "idle": .idle, "wake": .wake(.backgroundFetch),
        "terminate": .terminate(.watchdog),
    ]

    /// One row: from a state, an event, to a state, with the steps in order. Steps: `A>I` a state
    /// change (with its cause after a colon), `launch`/`launchBg` finish launching, `active`
    /// became active, `willFg` will enter foreground, `bg` entered background, `grace` start the
    /// grace period, `-grace` cancel it, `suspended`, `terminated`. Each step's device actions
    /// are spelled out in ``token(_:wasRunning:)``.
    static let table: [(String, String, String, String)] = [
        ("N", "launch", "A", "notRunning>inactive:userLaunch launch inactive>active:userLaunch active"),
        ("N", "launchBg", "B", "notRunning>background:backgroundFetch launchBg"),
        ("N", "open", "A", "notRunning>inactive:userLaunch launch inactive>active:userLaunch active"),
        ("N", "leave", "N", ""), ("N", "interrupt", "N", ""), ("N", "endInterruption", "N", ""),
        ("N", "showAlert", "N", ""), ("N", "dismissAlert", "N", ""), ("N", "graceEnded", "N", ""),
        ("N", "idle", "N", ""),
        ("N", "wake", "B", "notRunning>background:backgroundFetch launchBg"),
        ("N", "terminate", "N", ""),
        ("Nu", "launch", "A", "notRunning>inactive:userLaunch launch inactive>active:userLaunch active"),
        ("Nu", "wake", "B", "notRunning>background:backgroundFetch launchBg"),
        // Whether a service may launch an app the user swiped away is the service's rule.
        ("Nu", "launchBg", "B", "notRunning>background:backgroundFetch launchBg"),
        ("Nu", "open", "A", "notRunning>inactive:userLaunch launch inactive>active:userLaunch active"),
        ("Nu", "leave", "Nu", ""), ("Nu", "idle", "Nu", ""), ("Nu", "terminate", "Nu", ""),
        ("A", "launch", "A", ""), ("A", "launchBg", "A", ""), ("A", "open", "A", ""),
        ("A", "leave", "Bg", "active>inactive:userLeft inactive>background:userLeft grace bg"),
        ("A", "interrupt", "Ii", "active>inactive:interrupted"), ("A", "endInterruption", "A", ""),
        ("A", "showAlert", "Ia", "active>inactive:alertShown"), ("A", "dismissAlert", "A", ""),
        ("A", "graceEnded", "A", ""), ("A", "idle", "A", ""), ("A", "wake", "A", ""),
        ("A", "terminate", "N", "active>notRunning:watchdog terminated"),
        ("Ii", "open", "A", "inactive>active:userOpened active"),
        ("Ii", "leave", "Bg", "inactive>background:userLeft grace bg"),
        ("Ii", "interrupt", "Ii", ""), ("Ii", "endInterruption", "A", "inactive>active:interruptionEnded active"),
        ("Ii", "showAlert", "Iia", ""), ("Ii", "dismissAlert", "Ii", ""), ("Ii", "idle", "Ii", ""),
        ("Ii", "terminate", "N", "inactive>notRunning:watchdog terminated"),
        ("Ia", "open", "Ia", ""), ("Ia", "leave", "Bg", "inactive>background:userLeft grace bg"),
        ("Ia", "interrupt", "Iia", ""), ("Ia", "endInterruption", "Ia", ""), ("Ia", "showAlert", "Ia", ""),
        ("Ia", "dismissAlert", "A", "inactive>active:alertDismissed active"),
        ("Ia", "terminate", "N", "inactive>notRunning:watchdog terminated"),
        ("Iia", "open", "Ia", ""), ("Iia", "endInterruption", "Ia", ""), ("Iia", "dismissAlert", "Ii", ""),
        ("Iia", "leave", "Bg", "inactive>background:userLeft grace bg"),
        ("Iia", "terminate", "N", "inactive>notRunning:watchdog terminated"),
        ("Bg", "launch", "Bg", ""),
        ("Bg", "open", "A", "-grace willFg background>inactive:userOpened inactive>active:userOpened active"),
        ("Bg", "leave", "Bg", ""), ("Bg", "interrupt", "Bg", ""), ("Bg", "showAlert", "Bg", ""),
        ("Bg", "graceEnded", "B", ""), ("Bg", "idle", "Bg", ""), ("Bg", "wake", "Bg", ""),
        ("Bg", "terminate", "N", "-grace background>notRunning:watchdog terminated"),
        ("B", "open", "A", "willFg background>inactive:userOpened inactive>active:userOpened active"),
        ("B", "leave", "B", ""), ("B", "graceEnded", "B", ""),
        ("B", "idle", "S", "background>suspended:idle suspended"),
        ("B", "wake", "B", ""), ("B", "terminate", "N", "background>notRunning:watchdog terminated"),
        (
            "S", "open", "A",
            "suspended>background:resumed willFg background>inactive:userOpened inactive>active:userOpened active"
        ),
        ("S", "launch", "S", ""), ("S", "leave", "S", ""), ("S", "interrupt", "S", ""), ("S", "graceEnded", "S", ""),
        ("S", "idle", "S", ""), ("S", "wake", "B", "suspended>background:backgroundFetch"),
        ("S", "terminate", "N", "suspended>notRunning:watchdog terminated"),
    ]

    /// The event's time: the grace period ends 5 s after it.
    static let now: Duration = .seconds(100)

    /// A step's name in the table, if its device actions are exactly what that name means;
    /// `wasRunning`: the app ran before the event (it hears of its termination).
    static func token(_ step: [DeviceAction], wasRunning: Bool) -> String {
        if case .post(.appStateChanged(let from, let to, let cause))? = step.last {
            // Leaving active, the app's willResignActive runs first.
            let resign: [DeviceAction] = from == .active && to == .inactive ? [.call(.willResignActive)] : []
            guard step.dropLast().elementsEqual(resign) else { return "unexpected \(step)" }
            return "\(from.rawValue)>\(to.rawValue):\(cause.rawValue)"
        }
        let launched = { (background: Bool, cause: LifecycleCause) -> [DeviceAction] in
            [
                .post(.appLaunched(inBackground: background)),
                .call(.finishLaunching(inBackground: background, cause: cause)), .post(.launchFinished),
            ]
        }
        let steps: [String: [DeviceAction]] = [
            "launch": launched(false, .userLaunch), "launchBg": launched(true, .backgroundFetch),
            "active": [
                .post(.appBecameActive), .call(.becomeActive), .post(.askForServiceSessionAuthorization),
                .post(.deliverHeldPush),
            ],
            "willFg": [.post(.appWillEnterForeground), .call(.willEnterForeground)],
            "bg": [
                .post(.alertDismissedOnLeaving), .post(.tasksEnteredBackground), .call(.didEnterBackground),
                .post(.appEnteredBackground),
            ],
            "grace": [.schedule(.gracePeriodEnd, at: now + .seconds(5))], "-grace": [.cancel(.gracePeriodEnd)],
            "suspended": [.post(.appSuspended)],
            // A running app hears it is terminated; a suspended one gets no notice.
            "terminated": (wasRunning ? [.call(.willTerminate)] : [])
                + [.post(.alertDismissedOnLeaving), .post(.appTerminated(.watchdog)), .call(.terminated(.watchdog))],
        ]
        return steps.first { $0.value == step }?.key ?? "unexpected \(step)"
    }

    static func describe(_ steps: [[DeviceAction]], from: String) -> String {
        let wasRunning = !["N", "Nu", "S"].contains(from)
        return steps.map { token($0, wasRunning: wasRunning) }.joined(separator: " ")
    }

    @Test(arguments: table.indices)
    func eachTransition(_ row: Int) throws {
        let (from, event, to, actions) = Self.table[row]
        var machine = Machine(gracePeriod: .seconds(5), state: try #require(Self.states[from]))
        let done = machine.handle(try #require(Self.events[event]), at: Self.now)
        let expected = try #require(Self.states[to])
        // A swiped-away app that is terminated again keeps its cause; the watchdog's row ends in N.
        #expect(
            machine.state == expected || (to == "N" && machine.state == .notRunning(terminated: .watchdog)),
            "\(from) + \(event)")
        #expect(Self.describe(done, from: from) == actions, "\(from) + \(event)")
    }

    /// Every other pair of state and event is ignored: no change, no action. With the table,
    /// that covers every transition.
    @Test func everyPairNotInTheTableIsIgnored() {
        expectUnlistedPairsAreIgnored(states: Self.states, events: Self.events, listed: Self.table.map { ($0.0, $0.1) })
        {
            var machine = Machine(gracePeriod: .seconds(5), state: $0)
            return (machine.handle($1, at: Self.now).isEmpty, machine.state == $0)
        }
    }

    /// What counts as in use, by state: on screen or in the grace period.
    @Test func inUseIsTheForegroundAndTheGracePeriod() throws {
        for (name, state) in Self.states {
            let machine = Machine(gracePeriod: .seconds(5), state: state)
            #expect(machine.isInUse == ["A", "Ii", "Ia", "Iia", "Bg"].contains(name), "\(name)")
            #expect(machine.isRunning == !["N", "Nu", "S"].contains(name), "\(name)")
        }
    }
}
