@testable import ChatterdKit
import ChattModel
import Locking
import Testing
import TestSupport

/// `--retention-days`: batches until one comes back short, a pause after each full one, and a failure that ends
/// the pass without stopping the next.
@Suite struct RetentionTests {
    let store = InMemoryChattRepository()
    let pauses = Locked<[Duration]>([])
    let pipe = LogPipe()

    func retention(batch: Int) -> Retention {
        let pauses = pauses
        return Retention(
            repository: store, days: 7, batch: batch, minimumPause: .milliseconds(50), logger: pipe.logger(),
            sleep: { duration in pauses.withLock { $0.append(duration) } })
    }

    func post(_ count: Int, at second: Int) async throws {
        for index in 0..<count {
            store.storeCommitted(
                NewChatt(name: "n", message: "m\(second)-\(index)"),
                timestamp: "2026-03-\(String(second + 10))T08:00:00.\(100_000 + index)Z")
        }
    }

    @Test func aPassRemovesBatchAfterBatchOfExpiredChattsPausingAfterEachFullOne() async throws {
        try await post(25, at: 1)
        try await post(3, at: 9)
        store.expiryCutoff = "2026-03-15"
        #expect(await retention(batch: 10).pass() == 25)
        #expect(store.chatts.count == 3 && store.chatts.allSatisfy { $0.message.hasPrefix("m9-") })
        #expect(pauses.withLock { $0.count } == 2, "after the two full batches; the short one ends the pass")
        #expect(pauses.withLock { $0 }.allSatisfy { $0 >= .milliseconds(50) })
        #expect(store.removers.count == 25 && store.removers.allSatisfy { $0.moderator == "retention" })
        #expect(pipe.lines(1).first?.contains("event=retention_removed removed=25") == true)
        #expect(await retention(batch: 10).pass() == 0, "nothing left to remove")
    }

    @Test func aFailureEndsThePassWithAWarning() async throws {
        try await post(5, at: 1)
        store.expiryCutoff = "2026-03-15"
        store.fail(with: .unavailable("down"))
        #expect(await retention(batch: 2).pass() == 0)
        #expect(pipe.lines(1).first?.contains("event=retention_failed") == true)
        store.fail(with: nil)
        #expect(await retention(batch: 2).pass() == 5)
    }
}
