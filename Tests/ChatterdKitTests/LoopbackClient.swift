import Foundation

/// One request over a fresh loopback connection (`Connection: close`), read to the end; 5 s receive timeout.
struct LoopbackClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: String

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    struct Failure: Error {
        let what: String
    }

    let port: UInt16

    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String = ""
    ) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(what: "connect") }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure(what: "send") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = recv(fd, &buffer, buffer.count, 0), count > 0 { received += buffer[..<count] }
        return try Self.parse(String(decoding: received, as: UTF8.self))
    }

    private static func parse(_ text: String) throws -> Response {
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(what: "no response head in \(text)") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(what: lines[0]) }
        let headers = lines.dropFirst().map { line -> (String, String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
    }
}
