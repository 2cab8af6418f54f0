import Locking

/// The last encoded `/getmaps` and `/getchatts` bodies with the store version they show. While the
/// version is unchanged every request shares one body: no re-read, no re-encode, no copy per connection.
final class ChattFeedCache: Sendable {
    enum Feed: Hashable {
        case maps, chatts
    }

    private let entries = Locked<[Feed: (version: ChattsVersion, body: [UInt8])]>([:])

    /// The cached body of `feed` if it was made at `version`.
    func body(_ feed: Feed, at version: ChattsVersion) -> [UInt8]? {
        entries.withLock { entries in
            guard let entry = entries[feed], entry.version == version else { return nil }
            return entry.body
        }
    }

    func store(_ body: [UInt8], for feed: Feed, at version: ChattsVersion) {
        entries.withLock { $0[feed] = (version, body) }
    }
}
