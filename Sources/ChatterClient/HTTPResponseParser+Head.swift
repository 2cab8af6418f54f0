import HTTPCore

extension HTTPResponseParser {
    /// Handles one line of the head: the status line, a field, or the empty line that ends the head.
    mutating func headLine(_ line: ArraySlice<UInt8>) throws(ClientError) {
        guard case .fields = state else {
            try parseStatusLine(line)
            state = .fields
            return
        }
        if line.isEmpty {
            try endOfHead()
            return
        }
        guard headers.count < Self.maxFieldCount else { throw .malformedResponse("too many header fields") }
        headers.append(try Self.parseField(line))
    }

    /// `HTTP/1.x SP 3DIGIT SP [reason]` (RFC 9112 §4); some servers omit the space after the code.
    private mutating func parseStatusLine(_ line: ArraySlice<UInt8>) throws(ClientError) {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0" else {
            throw .malformedResponse("not an HTTP/1.x response (is the server URL right?)")
        }
        guard parts[1].count == 3, parts[1].allSatisfy(\.isASCII), let code = Int(parts[1]), code >= 100 else {
            throw .malformedResponse("bad status code \(parts[1])")
        }
        status = code
        reason = parts.count == 3 ? String(parts[2]) : ""
        headers = []
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5); no space before the colon, no obsolete line folding.
    private static func parseField(_ line: ArraySlice<UInt8>) throws(ClientError) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[..<colon].allSatisfy(ByteClass.isTokenChar)
        else { throw .malformedResponse("bad header field") }
        let value = ByteSet.trimmingWhitespace(line[(colon + 1)...])
        guard !value.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
            throw .malformedResponse("control character in a header field")
        }
        return (String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Chooses how the body is delimited (RFC 9112 §6.3), or starts over after an interim 1xx response.
    private mutating func endOfHead() throws(ClientError) {
        switch status {
        case 101: throw .malformedResponse("the server switched protocols, which chatter never asks for")
        case 100..<200:
            state = .statusLine
            return
        case 204, 304:
            state = .done
            return
        default: break
        }
        let codings = values(of: "content-encoding").filter { $0.lowercased() != "identity" }
        guard codings.isEmpty else {
            throw .malformedResponse(
                "body encoded as \(codings.joined(separator: ", ")), which chatter did not ask for")
        }
        let transfer = values(of: "transfer-encoding")
        if !transfer.isEmpty {
            // Only "chunked" can be decoded; anything else (gzip, chunked) was never asked for.
            guard transfer.map({ $0.lowercased() }) == ["chunked"] else {
                throw .malformedResponse("unsupported transfer coding \(transfer.joined(separator: ", "))")
            }
            state = .chunkSize
            return
        }
        // A list of identical values is allowed (RFC 9110 §8.6); anything else is not.
        let lengths = Set(
            values(of: "content-length").flatMap { $0.split(separator: ",") }.map {
                String(decoding: ByteSet.trimmingWhitespace(ArraySlice($0.utf8)), as: UTF8.self)
            })
        guard let length = lengths.first else {
            state = .bodyUntilClose
            return
        }
        guard lengths.count == 1, (1...15).contains(length.utf8.count),
            length.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let count = Int(length)
        else { throw .malformedResponse("bad Content-Length") }
        guard count <= maxBodyBytes else { throw .malformedResponse("body larger than \(maxBodyBytes) bytes") }
        state = count == 0 ? .done : .fixedBody(remaining: count)
    }

    private func values(of name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name }.map(\.value)
    }
}
