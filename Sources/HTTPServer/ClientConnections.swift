import Locking

/// How many connections each client address has open, for `--max-connections-per-ip`.
final class ClientConnections: Sendable {
    /// The most connections one address may hold; nil for no limit.
    let limit: Int?
    private let counts = Locked([IPAddress: Int]())

    init(limit: Int?) {
        self.limit = limit
    }

    /// Counts a new connection from `address`, or refuses it (false) when the address is at the limit.
    func admit(_ address: IPAddress) -> Bool {
        guard let limit else { return true }
        return counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ address: IPAddress) {
        guard limit != nil else { return }
        counts.withLock { counts in
            let open = counts[address, default: 1] - 1
            counts[address] = open > 0 ? open : nil
        }
    }
}
