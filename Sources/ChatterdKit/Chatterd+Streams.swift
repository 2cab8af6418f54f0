import ChangeLog
import ChattFeed
import ChattModel
import ChattStore
import ChattStream
import Dispatch

extension Chatterd {
    /// The feed streams following `log`, reading `repository` for clients resuming from further back, with the
    /// options' heartbeat and bound.
    static func makeStreamHub(
        _ options: ServeOptions, log: ChangeLog, repository: PostgresChattRepository
    ) -> ChattStreamHub {
        ChattStreamHub(
            following: log,
            read: { position, limit, deadline throws(RepositoryError) in
                try await repository.log(after: position, limit: limit, before: deadline)
            },
            capacity: options.streamMaxUnsentBytes,
            // A heartbeat of nothing would tick without pause.
            heartbeat: .milliseconds(max(100, Int(options.streamHeartbeatSeconds * 1000))))
    }

    /// Ticks `streams` (heartbeats) for as long as the returned timer lives.
    static func startTicking(_ streams: ChattStreamHub) -> DispatchSourceTimer {
        let interval = ChattStreamHub.tickInterval(streams.heartbeat)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "chatterd.stream-ticks"))
        timer.schedule(deadline: .now() + interval.timeInterval, repeating: interval.timeInterval)
        timer.setEventHandler { streams.tick() }
        timer.resume()
        return timer
    }
}

extension Duration {
    /// In seconds, for Dispatch.
    fileprivate var timeInterval: DispatchTimeInterval {
        .nanoseconds(Int(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000))
    }
}
