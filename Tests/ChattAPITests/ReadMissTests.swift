import ChattAPI
import ChattFeed
import ChattModel
import Dispatch
import HTTPCore
import Locking
import TaskExecution
import TestSupport
import Testing

/// A feed read that misses the cache waits for the store without holding a thread.
@Suite(.timeLimit(.minutes(1))) struct ReadMissTests {
    @Test func manyReadMissesWaitForOneHeldStoreReadOnASingleThread() async throws {
        let repository = InMemoryChattRepository()
        for serial in 1...3 { try await repository.add(NewChatt(name: "n", message: "\(serial)")) }
        // One serial queue runs every request's task: were a waiting read to block it, the held read could never
        // finish (it resumes on that queue too), and the test would run out of time instead of passing.
        let queue = DispatchQueue(label: "read-miss-tests")
        let router = ChattRouter(
            feed: ChattFeed(repository: repository), executor: DispatchTaskExecutor(queue: queue))
        let gate = repository.holdNextFullRead()
        let answers = Locked<[HTTPResponse]>([])
        let answered = DispatchGroup()
        for _ in 0..<200 {
            guard case .deferred(let start) = router.plan(for: feedRequest(path: "/getmaps")) else {
                Issue.record("a read miss is not deferred")
                return
            }
            answered.enter()
            start { response in
                answers.withLock { $0.append(response) }
                answered.leave()
            }
        }
        // The queue is first come, first served: once this runs, every task has run up to where it waits.
        queue.sync {}
        await gate.waitUntilEntered()
        #expect(answers.withLock { $0.isEmpty }, "all wait for the held read")
        #expect(repository.fullReads == 1, "one read of the store for all of them")
        gate.release()
        answered.wait()
        let bodies = answers.withLock { $0.map(\.body.bytes) }
        #expect(answers.withLock { $0.allSatisfy { $0.status == .ok } })
        #expect(Set(bodies).count == 1 && bodies.count == 200)
        #expect(String(decoding: bodies[0], as: UTF8.self).contains("\"3\""))
    }
}
