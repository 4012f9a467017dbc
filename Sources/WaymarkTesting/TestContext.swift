import Waymark

#if canImport(Testing)
    import Testing
#endif

/// Names the Swift Testing test that runs, for the device registry: a `Task` a test starts (a
/// view model's, reading live updates) inherits the test, and so finds the device the test made,
/// as the test's own code does. A parameterized test's cases run side by side under one test, so
/// they are not named: their tasks run inside `device.withDevice { }`. Under XCTest, nothing is
/// named.
enum TestContext {
    /// Installed once, by the first device the test kit makes.
    static let installed: Void = {
        #if canImport(Testing)
            Simulation.nameTestContexts {
                guard let test = Test.current, Test.Case.current?.isParameterized != true else { return nil }
                return AnyHashable(test.id)
            }
        #endif
    }()
}
