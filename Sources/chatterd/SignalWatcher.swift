import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGTERM/SIGINT into calls: the first starts a graceful shutdown, a second exits at once.
final class SignalWatcher: @unchecked Sendable {  // `received` is touched only on `queue`
    private let queue = DispatchQueue(label: "chatterd.signals")
    private var sources: [any DispatchSourceSignal] = []
    private var received = 0

    init(onFirst: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGTERM, SIGINT] {
            // Dispatch needs the default action disabled, or the signal would still kill the process.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [unowned self] in
                self.received += 1
                if self.received == 1 {
                    Log.write("event=shutdown_started signal=\(signalNumber)")
                    onFirst()
                } else {
                    Log.write("event=shutdown_forced")
                    _exit(1)
                }
            }
            source.resume()
            sources.append(source)
        }
    }
}
