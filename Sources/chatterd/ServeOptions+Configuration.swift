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
        // One handler thread per database connection: more would only queue inside the pool.
        configuration.handlerThreadCount = poolSize
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
