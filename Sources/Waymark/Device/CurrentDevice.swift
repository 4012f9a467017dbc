#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A reference to a device, for the task-local that says which device the app's code runs on.
///
/// `@unchecked Sendable`: the device it points to is only used on the isolation that drives it;
/// the reference itself is immutable.
final class DeviceReference: @unchecked Sendable {
    weak var device: Simulation?
    init(_ device: Simulation) { self.device = device }
}

/// The device the app's code runs on, for objects the app creates without naming one: a
/// `DeviceLocationManager()` (as `CLLocationManager()`), `UIApplication.shared`,
/// `BGTaskScheduler.shared`.
///
/// In order: the device running the app's code now (set around every call into the app's code,
/// and by ``Simulation/withDevice(_:)``); else the newest device created on the current task (or,
/// outside any task, created outside any task); else, when a test kit told the registry how to
/// name the test that runs (``Simulation/nameTestContexts(_:)``), the newest device created in
/// the same test, so that a `Task` the test starts finds it. Otherwise there is none, and the
/// object says so loudly when it is used.
enum CurrentDevice {
    @TaskLocal static var reference: DeviceReference?

    /// The device, if one can be told.
    static var value: Simulation? {
        if let device = reference?.device { return device }
        return Simulation.registry.current()
    }
}

extension Simulation {
    /// Runs `body` with this device as the one the app's objects created in it belong to: for
    /// code that creates a `DeviceLocationManager()` (a `CLLocationManager()`, a `CLMonitor`, live
    /// updates, Apple's sessions) outside the app's callbacks, such as a view model's `start()`
    /// called by a test. A `Task` started in `body` inherits the device, as tasks inherit
    /// task-local values, so the objects its code creates later belong to it too.
    public func withDevice<T>(_ body: () throws -> T) rethrows -> T {
        try CurrentDevice.$reference.withValue(DeviceReference(self)) { try body() }
    }

    /// The `async` form of ``withDevice(_:)``: `body` runs on the caller's isolation.
    public func withDevice<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await CurrentDevice.$reference.withValue(DeviceReference(self), operation: body, isolation: isolation)
    }

    /// Stops the program: `call` was made on an object that belongs to no device, so it could
    /// never work. The message names the ways to give it one (printed in every build, as
    /// `fatalError` prints it; `preconditionFailure` would drop it in an optimized one).
    package static func noDevice(_ call: String) -> Never {
        fatalError(
            """
            Waymark: \(call) belongs to no simulated device, so it could never work. The objects the app's code \
            creates (a CLLocationManager, CLLocationUpdate.liveUpdates(), a CLMonitor, a CLServiceSession or \
            CLBackgroundActivitySession) belong to the device whose app code creates them: create them in the \
            app's code (its launch, a callback), inside `device.withDevice { }` (a TestDevice's or a \
            Simulation's), on the task that created the device, or in a task started by the Swift Testing test \
            that made it with the test kit. Elsewhere (a task of a parameterized test's case, or under XCTest) a \
            `Task { }` has no device: start it inside `device.withDevice { }`, whose device it inherits. A \
            DeviceLocationManager can also be handed to `TestDevice(manager:)` or \
            `Simulation(scenario:epoch:app:manager:)`.
            """)
    }

    /// Every device alive, and the task that created each: the fallbacks of ``CurrentDevice``.
    static let registry = DeviceRegistry()

    /// Tells the registry how to name the test that runs, if one does (WaymarkTesting names a
    /// Swift Testing test that is not parameterized: its tasks inherit the name, and only one
    /// case of it runs at a time). A device remembers the name it was created under; a task
    /// started by the test finds the newest device of its test. Set once, before devices are made.
    package static func nameTestContexts(_ name: @escaping @Sendable () -> AnyHashable?) {
        registry.setContextName(name)
    }
}

/// The devices alive. `@unchecked Sendable`: `mutex` guards `entries`.
final class DeviceRegistry: @unchecked Sendable {
    private struct Entry {
        weak var device: Simulation?
        let id: ObjectIdentifier
        /// The task that created the device, if any.
        let task: Int?
        /// The test it was created in, if the context is named.
        let context: AnyHashable?
    }

    private var mutex = pthread_mutex_t()
    private var entries: [Entry] = []
    private var contextName: (@Sendable () -> AnyHashable?)?

    func setContextName(_ name: @escaping @Sendable () -> AnyHashable?) {
        locked { _ in contextName = name }
    }

    private var context: AnyHashable? {
        let name = locked { _ in contextName }
        return name?()
    }

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    /// Runs `body` under the lock. Reading a weak `device` makes a strong reference; if another
    /// thread drops the device's last other reference meanwhile, releasing that one ends the
    /// device, and its deinit removes it from here, taking the lock again: a thread that did
    /// that under the lock waited for itself forever (seen as a hung test run). So `body` puts
    /// every device it reads in `held`, which is released after the lock is.
    private func locked<T>(_ body: (inout [Simulation]) -> T) -> T {
        var held: [Simulation] = []
        pthread_mutex_lock(&mutex)
        let result = body(&held)
        pthread_mutex_unlock(&mutex)
        withExtendedLifetime(held) {}
        return result
    }

    private static var currentTask: Int? { withUnsafeCurrentTask { $0?.hashValue } }

    // Adding and removing read no device: every device removes itself as it ends (its deinit),
    // so no entry needs its device read to be pruned. A device read here is held for a moment
    // by the thread that reads it; read on another task's behalf, it would outlive the last
    // reference its own code dropped, and end on that other thread (seen as a device that
    // outlived its run while tests ran side by side).

    func add(_ device: Simulation) {
        let entry = Entry(device: device, id: ObjectIdentifier(device), task: Self.currentTask, context: context)
        locked { _ in entries.append(entry) }
    }

    func remove(_ device: Simulation) {
        let id = ObjectIdentifier(device)
        locked { _ in entries.removeAll { $0.id == id } }
    }

    /// The newest device alive created on the current task (outside any task: outside any task);
    /// else the newest created in the current test, when tests are named. Never another task's
    /// or another test's: tests run side by side, each with its own device.
    func current() -> Simulation? {
        let task = Self.currentTask
        let context = context
        return locked { held in
            for entry in entries.reversed() where entry.task == task {
                if let alive = entry.device {
                    held.append(alive)
                    return alive
                }
            }
            guard let context else { return nil }
            for entry in entries.reversed() where entry.context == context {
                if let alive = entry.device {
                    held.append(alive)
                    return alive
                }
            }
            return nil
        }
    }
}

extension Simulation {
    /// The device the app's code runs on now, if one can be told (``CurrentDevice``): for the
    /// Apple-spelled modules' shared objects.
    package static var current: Simulation? { CurrentDevice.value }
}
