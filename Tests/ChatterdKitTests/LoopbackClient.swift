import Foundation
import Syscalls

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
        let fd = try Syscall.run("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        defer { close(fd) }
        try Syscall.setTimeout(fd, SO_RCVTIMEO, seconds: 5, name: "SO_RCVTIMEO")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try Syscall.run("connect") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        let sent = try Syscall.run("send") { send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(what: "send") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = try Syscall.run("recv", { recv(fd, &buffer, buffer.count, 0) }), count > 0 {
            received += buffer[..<count]
        }
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
