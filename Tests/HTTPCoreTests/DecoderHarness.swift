import HTTPCore
import Testing

/// One row of a decoder table: a note, the input, and the outcome expected when it is fed in one piece.
struct DecoderCase: CustomTestStringConvertible, Sendable {
    let note: String
    let input: [UInt8]
    /// Events rendered by `DecoderHarness.describe`; `100-continue` for `.expectContinue`.
    let events: [String]
    let error: HTTPParseError?
    let limits: HTTPLimits

    var testDescription: String { note }

    init(_ note: String, _ input: String, _ events: [String], _ error: HTTPParseError? = nil, limits: HTTPLimits = HTTPLimits()) {
        self.init(note, bytes: Array(input.utf8), events, error, limits: limits)
    }

    init(_ note: String, bytes: [UInt8], _ events: [String], _ error: HTTPParseError? = nil, limits: HTTPLimits = HTTPLimits()) {
        self.note = note
        self.input = bytes
        self.events = events
        self.error = error
        self.limits = limits
    }
}

/// Everything observable after feeding an input and draining `next()` after every append
/// (the buffer state only when no error was thrown).
struct DecoderOutcome: Equatable, CustomStringConvertible {
    var events: [String] = []
    var error: HTTPParseError?
    var bufferedByteCount = 0
    var isMidRequest = false
    var isReadingBody = false

    var description: String {
        "events \(events) error \(error.map { "\($0)" } ?? "none") buffered \(bufferedByteCount) "
            + "mid \(isMidRequest) body \(isReadingBody)"
    }

    /// Whether a `100 Continue` is due depends on how much of the body came with the head, so runs
    /// with different splits are compared without that event.
    var withoutContinue: DecoderOutcome {
        var copy = self
        copy.events.removeAll { $0 == DecoderHarness.continueEvent }
        return copy
    }
}

/// Feeds decoder cases whole, split in two at every position, and one byte at a time (like llparse's scan
/// and NIO's ByteToMessageDecoderVerifier); every way of feeding must give the same outcome.
enum DecoderHarness {
    static let continueEvent = "100-continue"

    /// A compact rendering of a request: method, path, `?query` if any, version, and the body if any.
    static func describe(_ request: HTTPRequest) -> String {
        var text = "\(request.method.rawValue) \(request.path)"
        if let query = request.query { text += "?\(query)" }
        text += request.version == .http1_1 ? " 1.1" : " 1.0"
        if !request.body.isEmpty { text += " body=\(String(decoding: request.body, as: UTF8.self))" }
        return text
    }

    /// Appends each piece in turn, calling `next()` after each until it returns nil or throws.
    static func run(_ pieces: [ArraySlice<UInt8>], limits: HTTPLimits) -> DecoderOutcome {
        var decoder = HTTPRequestDecoder(limits: limits)
        var outcome = DecoderOutcome()
        for piece in pieces {
            decoder.append(piece)
            do {
                while let event = try decoder.next() {
                    switch event {
                    case .expectContinue: outcome.events.append(continueEvent)
                    case .request(let request): outcome.events.append(describe(request))
                    }
                }
            } catch {
                // What is still buffered after an error depends on where the input was cut; nothing else does.
                outcome.error = error
                return outcome
            }
        }
        outcome.bufferedByteCount = decoder.bufferedByteCount
        outcome.isMidRequest = decoder.isMidRequest
        outcome.isReadingBody = decoder.isReadingBody
        return outcome
    }

    /// Checks `testCase` fed whole against its expectation, then every other feeding against the whole one.
    static func verify(_ testCase: DecoderCase) {
        let input = testCase.input[...]
        let whole = run([input], limits: testCase.limits)
        #expect(whole.events == testCase.events, "\(testCase.note)")
        #expect(whole.error == testCase.error, "\(testCase.note)")

        var feedings: [(String, [ArraySlice<UInt8>])] = (1..<max(input.count, 1)).map {
            ("split at \($0)", [input[..<$0], input[$0...]])
        }
        feedings.append(("one byte at a time", input.indices.map { input[$0...$0] }))
        var mismatches: [String] = []
        for (name, pieces) in feedings {
            let outcome = run(pieces, limits: testCase.limits)
            if outcome.withoutContinue != whole.withoutContinue || !continuesAreWellPlaced(outcome.events) {
                mismatches.append("\(name): \(outcome)")
            }
        }
        #expect(mismatches.isEmpty, "\(testCase.note): whole gave \(whole); \(mismatches.prefix(3))")
    }

    /// `100-continue` comes at most once per request, before that request.
    private static func continuesAreWellPlaced(_ events: [String]) -> Bool {
        zip(events, events.dropFirst()).allSatisfy { !($0 == continueEvent && $1 == continueEvent) }
    }
}
