/// The driver's side of the per-fix hot path (the rules' is `DeviceRules+FixPath.swift`).
///
/// ``receive(_:)`` hands every fix from the source to the rules and carries out what they
/// return, as it does any step. The common answers, a fix decided (and delivered at once), are
/// carried out here without a walk through the interpreter and with the facts of the fix's
/// record read in the same call as the decision; anything else goes through ``carryOut(_:arrivals:)``
/// action by action. Both give the same events, counts and calls, in the same order.
extension Simulation {
    /// The rules' decision on one fix from the source, carried out.
    func decide(_ event: borrowing SourceEvent) {
        var actions = buffers.actions
        buffers.actions = []
        actions.empty()
        let facts = rules.receiveFix(event, into: &actions)
        // The decision is moved out of the buffer (an action that holds nothing left in its
        // place), so that its outcome, and the location in it, is not copied.
        if actions.count == 2, case .decided = actions[0],
            case .deliver(let count, let reason, let manager) = actions[1]
        {
            // One fix delivered: nothing runs between the decision and its record.
            var first = DeviceAction.deliver(count: 0, reason: reason, manager: manager)
            swap(&first, &actions[0])
            if case .decided(let outcome) = consume first { fixDecided(outcome, arrival: true, facts: facts) }
            deliver(count: count, reason: reason, manager: manager)
        } else if actions.count == 1, case .decided = actions[0] {
            // One fix held, dropped or ignored.
            var first = DeviceAction.deliver(count: 0, reason: .foreground, manager: 1)
            swap(&first, &actions[0])
            if case .decided(let outcome) = consume first { fixDecided(outcome, arrival: true, facts: facts) }
        } else {
            for action in actions { carryOut(action, arrivals: true) }
        }
        buffers.actions = actions
    }
}
