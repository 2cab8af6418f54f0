import Locking
#if canImport(Glibc)
import Glibc
#endif

/// Carries the cause of a failed repository call to the error line logged for the request it failed.
///
/// The client only ever sees "database unavailable"; the operator needs the reason. A handler answers a request
/// on one thread from start to end, so a failure is first filed under the calling thread (`record`), moved under
/// the request id once the handler returns (`claim`), and taken by the observer that logs the 5xx (`take`).
final class FaultLedger: Sendable {
    private let byThread = Locked([UInt: String]())
    private let byRequest = Locked([String: String]())

    /// Files `cause` under the calling thread, replacing an unclaimed one.
    func record(_ cause: String) {
        byThread.withLock { $0[Self.currentThread] = cause }
    }

    /// After a handler has answered `requestID` on this thread: keeps the cause filed meanwhile when the answer
    /// is a server error, and forgets it otherwise.
    func claim(for requestID: String, status: Int) {
        guard let cause = byThread.withLock({ $0.removeValue(forKey: Self.currentThread) }), status >= 500 else {
            return
        }
        byRequest.withLock { $0[requestID] = cause }
    }

    /// The cause claimed for `requestID`, removed.
    func take(for requestID: String) -> String? {
        byRequest.withLock { $0.removeValue(forKey: requestID) }
    }

    private static var currentThread: UInt {
        UInt(pthread_self())
    }
}
