import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Turns signals into calls: the first SIGTERM or SIGINT starts a graceful shutdown, a second exits at once;
/// SIGHUP reloads (`systemctl reload`).
final class SignalWatcher: @unchecked Sendable {  // `received` is touched only on `queue`
    private let queue = DispatchQueue(label: "chatterd.signals")
    private var sources: [any DispatchSourceSignal] = []
    private var received = 0

    init(logger: Logger, onReload: @escaping @Sendable () -> Void, onFirst: @escaping @Sendable () -> Void) {
        signal(SIGHUP, SIG_IGN)
        let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP, queue: queue)
        hangUp.setEventHandler { onReload() }
        hangUp.resume()
        sources.append(hangUp)
        for signalNumber in [SIGTERM, SIGINT] {
            // Dispatch needs the default action disabled, or the signal would still kill the process.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [unowned self] in
                self.received += 1
                if self.received == 1 {
                    logger.log(.info, "shutdown_started", ["signal": .integer(Int(signalNumber))])
                    onFirst()
                } else {
                    logger.log(.warn, "shutdown_forced")
                    logger.writer.flush()
                    _exit(1)
                }
            }
            source.resume()
            sources.append(source)
        }
    }
}
