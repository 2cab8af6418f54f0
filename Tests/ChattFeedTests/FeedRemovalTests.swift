@testable import ChattFeed
import ChattModel
import TestSupport
import Testing

/// Removed chatts leaving the feeds as the change log tells of them, with no full read of the store.
@Suite struct FeedRemovalTests {
    let repository = InMemoryChattRepository()
    let feeds: ChattFeed

    init() {
        feeds = ChattFeed(repository: repository)
        feeds.listening(true)
    }

    @Test(arguments: [ChattFeed.Kind.maps, .chatts])
    func removedChattsLeaveTheFeedByteIdenticalToARebuiltOneWithNoFullRead(_ kind: ChattFeed.Kind) async throws {
        for serial in 1...40 { try await repository.add(variedChatt(serial)) }
        _ = try await feeds.read(kind)
        let ids = repository.chatts.map(\.id)
        var references = 0
        // The first settled row, a middle one, the newest (in the tail), a settled and a tail row at once.
        for round in [[ids[0]], [ids[20]], [ids[39]], [ids[1], ids[38]]] {
            for id in round { #expect(repository.remove(id: id)) }
            try await feeds.log.noticedAndRead()
            try await expectSameAsRebuilt(try await feeds.read(kind), kind, repository)
            references += 1
        }
        // Two removals told while nobody reads are kept, then left out by the next read.
        for id in [ids[5], ids[6]] {
            repository.remove(id: id)
            try await feeds.log.noticedAndRead()
        }
        // Later posts go on after the removals; one posted and removed before a tick saw it changes nothing.
        for serial in 41...50 { try await repository.add(variedChatt(serial)) }
        let gone = repository.storeCommitted(variedChatt(51), timestamp: "2026-03-25T08:11:59.300051Z")
        repository.remove(id: gone.chatt.id)
        try await feeds.log.noticedAndRead()
        try await expectSameAsRebuilt(try await feeds.read(kind), kind, repository)
        references += 1
        for id in repository.chatts.map(\.id) { repository.remove(id: id) }
        try await feeds.log.noticedAndRead()
        let empty = try await feeds.read(kind)
        #expect(empty.rowCount == 0 && empty.identity.body.bytes == Array("[]".utf8))
        try await expectSameAsRebuilt(empty, kind, repository)
        #expect(repository.fullReads == 1 + references + 1, "one full read, then only the references")
    }
}
