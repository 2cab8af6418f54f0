// libFuzzer harness for HTTPRequestDecoder: the SwiftPM product FuzzHTTPRequest (built by fuzz/run.sh).
//
// Input: the first byte chooses the limits (bit 7: small limits, so the fuzzer reaches them) and how the rest
// is cut into appends (0: one byte at a time; otherwise a pseudo-random split seeded by it). Every invariant
// below traps via `precondition`, which libFuzzer reports as a crash.
import HTTPCore

/// Small limits that short inputs can exceed.
private let smallLimits = HTTPLimits(maxRequestLineBytes: 64, maxHeaderBytes: 128, maxHeaderCount: 6, maxBodyBytes: 48)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let control = bytes[0]
    let input = bytes[1...]
    let limits = control & 0x80 != 0 ? smallLimits : HTTPLimits()

    let whole = FuzzFeeding.run([input], limits: limits)
    let split = FuzzFeeding.run(FuzzFeeding.pieces(of: input, seed: control & 0x7F), limits: limits)
    precondition(whole == split, "outcome depends on the split: \(whole) vs \(split)")
    return 0
}

/// What a feeding produced, comparable across splits.
struct FuzzOutcome: Equatable {
    /// Events other than `.expectContinue`, whose presence depends on how much body came with the head.
    var requests: [HTTPRequest] = []
    var error: HTTPParseError?
    /// Decoder state at the end, when no error was thrown.
    var buffered = 0
    var isMidRequest = false
    var isReadingBody = false
}

/// Feeds a decoder and checks its invariants after every step.
enum FuzzFeeding {
    /// Cuts `input` into pieces: single bytes for seed 0, otherwise lengths from an xorshift generator.
    static func pieces(of input: ArraySlice<UInt8>, seed: UInt8) -> [ArraySlice<UInt8>] {
        guard seed != 0 else { return input.indices.map { input[$0...$0] } }
        var state = UInt32(seed) &* 2_654_435_761 | 1
        var pieces: [ArraySlice<UInt8>] = []
        var start = input.startIndex
        while start < input.endIndex {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            let length = Int(state % (UInt32(seed) + 1)) + 1
            let end = min(start + length, input.endIndex)
            pieces.append(input[start..<end])
            start = end
        }
        return pieces
    }

    static func run(_ pieces: [ArraySlice<UInt8>], limits: HTTPLimits) -> FuzzOutcome {
        var decoder = HTTPRequestDecoder(limits: limits)
        var outcome = FuzzOutcome()
        var appended = 0
        var previousWasContinue = false
        for piece in pieces {
            decoder.append(piece)
            appended += piece.count
            checkState(decoder, appended: appended)
            while true {
                let before = decoder.bufferedByteCount
                let event: HTTPDecoderEvent?
                do {
                    event = try decoder.next()
                } catch {
                    // The decoder is finished: the same error forever.
                    precondition(Result { () throws(HTTPParseError) in try decoder.next() } == .failure(error))
                    outcome.error = error
                    return outcome
                }
                precondition(decoder.bufferedByteCount <= before, "next() grew the buffer")
                checkState(decoder, appended: appended)
                guard let event else { break }
                switch event {
                case .expectContinue:
                    precondition(!previousWasContinue, "two 100-continue events for one request")
                    precondition(decoder.isReadingBody, "100-continue outside a body")
                    previousWasContinue = true
                case .request(let request):
                    check(request, limits: limits)
                    outcome.requests.append(request)
                    previousWasContinue = false
                }
            }
        }
        outcome.buffered = decoder.bufferedByteCount
        outcome.isMidRequest = decoder.isMidRequest
        outcome.isReadingBody = decoder.isReadingBody
        return outcome
    }

    private static func checkState(_ decoder: HTTPRequestDecoder, appended: Int) {
        precondition((0...appended).contains(decoder.bufferedByteCount), "buffered count out of range")
        precondition(!decoder.isReadingBody || decoder.isMidRequest, "reading a body outside a request")
    }

    /// What any returned request must satisfy, whatever the input.
    private static func check(_ request: HTTPRequest, limits: HTTPLimits) {
        precondition(request.body.count <= limits.maxBodyBytes, "body over the limit")
        precondition(request.headers.count <= limits.maxHeaderCount, "too many header fields")
        precondition(request.target.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") })
        precondition(request.path.hasPrefix("/") || (request.path == "*" && request.method == .OPTIONS))
        precondition(request.query == nil || request.target.contains("?"), "query without ?")
        for field in request.headers {
            precondition(!field.name.isEmpty && field.name.utf8.allSatisfy(isTokenByte), "bad name")
            precondition(!field.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "CR/LF/NUL in value")
            precondition(field.value.utf8.first.map { $0 != 0x20 && $0 != 0x09 } ?? true, "untrimmed value")
            precondition(field.value.utf8.last.map { $0 != 0x20 && $0 != 0x09 } ?? true, "untrimmed value")
        }
        let hosts = request.headers.values("Host").count
        precondition(hosts == 1 || (request.version == .http1_0 && hosts == 0), "Host count")
        let hasLength = !request.headers.values("Content-Length").isEmpty
        precondition(!hasLength || request.headers.values("Transfer-Encoding").isEmpty, "CL and TE accepted")
    }
}

/// RFC 9110 §5.6.2 tchar, written out again here so the check does not trust the code under test.
private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}
