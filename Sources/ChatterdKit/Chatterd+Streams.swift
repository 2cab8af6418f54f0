import ChattFeed
import ChattModel
import ChattStore
import ChattStream
import Dispatch

extension Chatterd {
    /// The feed streams over `repository`, with the options' heartbeat and bound.
    static func makeStreamHub(_ options: ServeOptions, repository: PostgresChattRepository) -> ChattStreamHub {
        ChattStreamHub(
            read: { count, limit, deadline throws(RepositoryError) in
                let committed = try await repository.committed(after: count, limit: limit, before: deadline)
                return ChattStreamHub.Rows(
                    chatts: committed.chatts.map { ($0.commit, $0.chatt) }, position: committed.position)
            },
            capacity: options.streamMaxUnsentBytes,
            // A heartbeat of nothing would tick without pause.
            heartbeat: .milliseconds(max(100, Int(options.streamHeartbeatSeconds * 1000))))
    }

    /// Ticks `streams` (heartbeats, and the poll of the store) for as long as the returned timer lives.
    static func startTicking(_ streams: ChattStreamHub) -> DispatchSourceTimer {
        let interval = ChattStreamHub.tickInterval(streams.heartbeat)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "chatterd.stream-ticks"))
        timer.schedule(deadline: .now() + interval.timeInterval, repeating: interval.timeInterval)
        timer.setEventHandler { streams.tick() }
        timer.resume()
        return timer
    }
}

extension ChattStreamHub {
    /// A commit of this process, as the feeds took it in: appended when nobody else's commit falls among its
    /// rows, else read from the store; a post whose outcome is unknown (nil) is looked for in the store.
    func committed(_ batch: ChattBatch?) {
        guard let batch, batch.isContiguous else { return changed() }
        let chatts = batch.chatts.sorted { $0.commit < $1.commit }.map { (count: $0.commit, chatt: $0.chatt) }
        take(chatts, after: batch.previous, position: batch.position)
    }
}

extension Duration {
    /// In seconds, for Dispatch.
    fileprivate var timeInterval: DispatchTimeInterval {
        .nanoseconds(Int(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000))
    }
}
