import TaskExecution
import Testing

/// Runs each test of a suite as the server runs a request's task: on Dispatch's threads, not Swift's cooperative
/// pool, whose few threads (one a core) other suites' blocking calls may hold for seconds, delays that the timing
/// checks here would otherwise measure.
struct OnDispatch: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(DispatchTaskExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OnDispatch {
    /// See `OnDispatch`.
    static var onDispatch: Self { OnDispatch() }
}
