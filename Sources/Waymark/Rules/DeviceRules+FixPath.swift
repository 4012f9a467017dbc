/// The rules' side of the per-fix hot path (the driver's is `Simulation+FixPath.swift`).
///
/// Nothing here decides anything: ``receive(_:into:)`` and the machines it calls hold every
/// rule. What is here makes a fix cheap to hand over: the driver reads the rules through a class
/// property, and each call it makes there costs an exclusivity check, and a call of a method
/// that does not mutate may copy the whole value first. So the driver asks for a fix's decision
/// and the facts its audit record carries in one mutating call, and the location service's
/// machines append the fix's actions to the driver's buffer, reused from fix to fix, instead of
/// an array allocated for each.
extension DeviceRules {
    /// The facts a fix's audit record carries beside its outcome: the app and its authorization
    /// when the fix was decided.
    struct FixFacts {
        var appState: AppState
        var authorization: AuthorizationStatus
        var accuracy: AccuracyAuthorization
        var backgroundTimeRemaining: Duration?
    }

    /// The facts now.
    @inline(__always)
    var fixFacts: FixFacts {
        FixFacts(
            appState: appState, authorization: authorization.status, accuracy: authorization.accuracy,
            backgroundTimeRemaining: backgroundTimeRemaining)
    }

    /// The facts now, for the driver: a mutating call borrows the rules where the driver keeps
    /// them, where a getter called on them there copies the whole struct first (a copy per fix;
    /// docs/benchmarks.md). Nothing changes. Never inlined: inlined into the driver, the getter
    /// was called on the driver's property again, and copied it.
    @inline(never)
    mutating func currentFixFacts() -> FixFacts { fixFacts }

    /// ``receive(_:into:)``, and the facts as they are once it has decided: what the driver
    /// records with the outcome when nothing runs between the decision and its record (the
    /// actions are the decision alone, or the decision and its delivery). Never inlined, as
    /// ``currentFixFacts()``: inlined into ``Simulation``, it copied the rules (1.4 kB) for the
    /// facts of every fix.
    @inline(never)
    mutating func receiveFix(_ event: borrowing SourceEvent, into actions: inout [DeviceAction]) -> FixFacts {
        receive(event, into: &actions)
        return fixFacts
    }
}

extension Array {
    /// `removeAll(keepingCapacity: true)` for the few elements of a per-fix buffer: taken from
    /// the end one by one, which costs a fraction of that call's general path (a subrange
    /// replaced by an empty collection).
    @inline(__always)
    mutating func empty() {
        while popLast() != nil {}
    }
}
