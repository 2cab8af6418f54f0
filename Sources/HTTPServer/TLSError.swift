import COpenSSL

/// A TLS set-up failure, with OpenSSL's error queue drained into the message.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ what: String) {
        var details: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            details.append(String(decoding: text, as: UTF8.self))
        }
        description = details.isEmpty ? what : "\(what) (\(details.joined(separator: "; ")))"
    }
}
