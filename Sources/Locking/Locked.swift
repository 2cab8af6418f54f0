#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that is only read or changed while holding its pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer cannot see that Mutex's futex-based locking on
/// Linux (Swift 6.3.1: a four-thread counter under `-sanitize=thread` reports races), while it does understand
/// pthread mutexes; avoiding false reports keeps `swift test --sanitize=thread` meaningful.
// @unchecked Sendable: every access to `value` happens inside withLock, under `mutex`.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // Heap-allocated because a pthread mutex must never move in memory.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Guards `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
