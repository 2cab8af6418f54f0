import Dispatch
import Foundation

/// Runs `body(i)` for `0..<count`, each on its own thread (not Dispatch's pool, which adds threads only slowly
/// while its threads block), and returns a group to wait on.
@discardableResult
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    return group
}
