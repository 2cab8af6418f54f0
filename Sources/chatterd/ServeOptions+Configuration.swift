import HTTPCore
import HTTPServer
#if canImport(Glibc)
import Glibc
#endif

extension ServeOptions {
    /// The server configuration these options describe.
    var serverConfiguration: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.tls = plainHTTP
            ? nil : TLSConfiguration(certificatePath: certificatePath, privateKeyPath: keyPath)
        configuration.limits = HTTPLimits(
            maxRequestLineBytes: server.maxRequestLineBytes, maxHeaderBytes: server.maxHeaderBytes,
            maxHeaderCount: server.maxHeaderCount, maxBodyBytes: server.maxBodyBytes)
        configuration.timeouts.handshakeSeconds = server.handshakeSeconds
        configuration.timeouts.headerSeconds = server.headerSeconds
        configuration.timeouts.bodyIdleSeconds = server.bodyIdleSeconds
        configuration.timeouts.sendIdleSeconds = server.sendIdleSeconds
        configuration.timeouts.keepAliveIdleSeconds = server.keepAliveIdleSeconds
        configuration.maxConnections = server.maxConnections
        configuration.maxRequestsPerConnection = server.maxRequestsPerConnection
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
