/// One request and its response over a fresh connection: TCP, then TLS for `https` URLs.
public enum HTTPExchange {
    /// Bytes asked of the socket per read.
    static let readSize = 64 * 1024

    /// Connects to `options.server`, sends `request` and returns the complete response.
    public static func perform(
        _ request: HTTPClientRequest, options: ConnectionOptions
    ) throws(ClientError) -> HTTPClientResponse {
        let server = options.server
        let stream = try connect(options)
        var parser = HTTPResponseParser()
        do {
            try stream.write(request.bytes)
        } catch {
            // A server may answer early (413, say) and close before reading the whole body: read what it said.
            guard let response = try? readResponse(from: stream, parser: &parser, tls: server.usesTLS) else {
                throw error
            }
            return response
        }
        return try readResponse(from: stream, parser: &parser, tls: server.usesTLS)
    }

    /// A connection to `options.server`: TCP, then TLS for `https` URLs.
    static func connect(_ options: ConnectionOptions) throws(ClientError) -> any ByteStream {
        let server = options.server
        // The CA file is checked before connecting, so a typo in --cacert is reported as such.
        let context = server.usesTLS ? try TLSClientContext(trusting: trustAnchor(options), for: server) : nil
        let socket = try TCPSocket(connectingTo: server.host, port: server.port, timeoutSeconds: options.timeoutSeconds)
        return try context.map { (context) throws(ClientError) in
            try TLSStream(over: socket, context: context, server: server)
        } ?? socket
    }

    /// What the server's certificate is checked against; reads `./chatterd.crt`'s names when they decide it.
    private static func trustAnchor(_ options: ConnectionOptions) -> TrustAnchor {
        TrustAnchor.choose(
            for: options.server, caFile: options.caFile, localCertificate: options.localCertificate,
            names: CertificateNames.init(pemFile:))
    }

    /// Reads until the parser has a whole response, or the peer closes.
    private static func readResponse(
        from stream: any ByteStream, parser: inout HTTPResponseParser, tls: Bool
    ) throws(ClientError) -> HTTPClientResponse {
        var buffer = [UInt8](repeating: 0, count: readSize)
        var received = 0
        do {
            while true {
                let count = try stream.read(into: &buffer)
                received += count
                if count == 0 { return try parser.finish() }
                if let response = try parser.receive(buffer[..<count]) { return response }
            }
        } catch .connection(let message) where !tls && received == 0 {
            // A TLS server drops a plain-HTTP request without a word; say what probably happened.
            throw .connection("\(message) (if the server speaks TLS, use an https:// URL)")
        }
    }
}
