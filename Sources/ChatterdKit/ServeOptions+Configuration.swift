import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

extension ServeOptions {
    /// Handler threads even with a small pool: the most posts that can share one commit.
    static let minimumHandlerThreads = 64

    /// The server configuration these options describe.
    var serverConfiguration: ServerConfiguration {
        var configuration = server
        configuration.tls = plainHTTP
            ? nil : TLSConfiguration(certificatePath: certificatePath, privateKeyPath: keyPath)
        configuration.ioQueueCount = max(1, System.coreCount)
        // Reads wait for a pooled connection, but posts wait in the insert batcher, where every blocked thread
        // adds its row to the next shared commit: at least 64 threads, so 64 concurrent posts can share one.
        configuration.handlerThreadCount = max(poolSize, Self.minimumHandlerThreads)
        configuration.timeouts.minimumBytesPerSecond = Double(minimumTransferRate)
        return configuration
    }
}

enum System {
    static var coreCount: Int {
        #if canImport(Glibc)
        Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        2
        #endif
    }
}
