import HTTPCore

/// Who a request is from. The socket's peer, unless the peer is a proxy we trust: then the client the proxy
/// names, in its PROXY protocol header or, without one, in `X-Forwarded-For` (on the TLS listener only from a proxy
/// that terminates TLS: see `ServerConfiguration.forwardedForProxies`). Nobody else can choose the address they
/// are counted under.
struct ClientAddress: Equatable, Sendable {
    /// The client's address.
    let ip: IPAddress
    /// The client's port, when known (not from `X-Forwarded-For`).
    let port: UInt16?
    /// `ip:port`, or `[ip]:port` for IPv6; the address alone without a port. For logs, which always show the
    /// whole address (the limits count by `ClientGroup`); made once, since every request reports it.
    let text: String

    init(ip: IPAddress, port: UInt16?) {
        self.ip = ip
        self.port = port
        let address = ip.description
        if let port { text = ip.isIPv4 ? "\(address):\(port)" : "[\(address)]:\(port)" } else { text = address }
    }

    /// The client of a request with `X-Forwarded-For` values `forwardedFor`, sent by a trusted proxy
    /// `proxy`: the rightmost address not itself a trusted proxy (RFC 7239 §5.2's order: each proxy appends
    /// the address it received from). Without a usable list, the proxy itself.
    static func forwarded(
        by proxy: ClientAddress, forwardedFor: [String], trusted: [AddressRange]
    ) -> ClientAddress {
        let hops: [String] = forwardedFor.flatMap { $0.split(separator: ",") }.map { hop in
            String(hop.filter { $0 != " " && $0 != "\t" })
        }
        var client = proxy
        for hop in hops.reversed() {
            // A hop that is not an address means the list cannot be read past it.
            guard let address = IPAddress(hop) else { break }
            client = ClientAddress(ip: address, port: nil)
            if !trusted.contains(where: { $0.contains(address) }) { break }
        }
        return client
    }
}

/// How a connection names the client of each request: its own client, or, for a trusted proxy that sent no
/// PROXY header, the client each request's `X-Forwarded-For` names.
struct ClientIdentity: Sendable {
    /// The connection's client (the PROXY header's, or the peer).
    var connection: ClientAddress
    /// The proxies `X-Forwarded-For` is taken from; empty when it is not to be read on this connection.
    var forwardingProxies: [AddressRange]
    /// The IPv6 prefix a client is counted by (see `ClientGroup`).
    let ipv6ClientPrefixLength: Int

    /// The client of `request`.
    func client(of request: HTTPRequest) -> ClientAddress {
        guard !forwardingProxies.isEmpty else { return connection }
        return ClientAddress.forwarded(
            by: connection, forwardedFor: request.headers.values("X-Forwarded-For"), trusted: forwardingProxies)
    }

    /// `request` marked with the group its client is counted in (the full address is for logs).
    func marked(_ request: HTTPRequest) -> (HTTPRequest, ClientAddress) {
        let client = client(of: request)
        var request = request
        request.clientGroup = ClientGroup(client.ip, ipv6PrefixLength: ipv6ClientPrefixLength)
        return (request, client)
    }
}
