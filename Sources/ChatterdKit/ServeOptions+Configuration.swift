import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

extension ServeOptions {
    /// The server configuration these options describe.
    var serverConfiguration: ServerConfiguration {
        var configuration = server
        configuration.tls = plainHTTP
            ? nil : TLSConfiguration(certificatePath: certificatePath, privateKeyPath: keyPath)
        configuration.ioQueueCount = max(1, System.coreCount)
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
