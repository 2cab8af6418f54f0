/// A connected byte stream: a plain TCP socket, or TLS over one.
protocol ByteStream: AnyObject {
    /// Sends all of `bytes`.
    func write(_ bytes: [UInt8]) throws(ClientError)
    /// Reads into `buffer`; returns how many bytes arrived, 0 when the peer has closed.
    func read(into buffer: inout [UInt8]) throws(ClientError) -> Int
    /// Sets how long one `read` waits for bytes before it fails as timed out.
    func setReadTimeout(seconds: Double) throws(ClientError)
}
