import COpenSSL

/// OpenSSL's thread-local error queue, drained into text so no stale error outlives the call that caused it.
enum OpenSSLErrorQueue {
    /// Every queued error as OpenSSL describes it, oldest first, joined by "; "; empties the queue.
    static func drain() -> String {
        var details: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            details.append(String(decoding: text, as: UTF8.self))
        }
        return details.joined(separator: "; ")
    }
}
