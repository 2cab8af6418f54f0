import HTTPCore
import Locking

/// How many connections each client (an IPv4 address, or an IPv6 prefix: see `ClientGroup`) has open, for
/// `--max-connections-per-ip`.
final class ClientConnections: Sendable {
    /// The most connections one client may hold; nil for no limit.
    let limit: Int?
    private let counts = Locked([ClientGroup: Int]())

    init(limit: Int?) {
        self.limit = limit
    }

    /// Counts a new connection from `client`, or refuses it (false) when the client is at the limit.
    func admit(_ client: ClientGroup) -> Bool {
        guard let limit else { return true }
        return counts.withLock { counts in
            let open = counts[client, default: 0]
            guard open < limit else { return false }
            counts[client] = open + 1
            return true
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ client: ClientGroup) {
        guard limit != nil else { return }
        counts.withLock { counts in
            let open = counts[client, default: 1] - 1
            counts[client] = open > 0 ? open : nil
        }
    }
}
