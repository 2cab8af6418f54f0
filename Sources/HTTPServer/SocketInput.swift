/// What a connection knows of its socket's input. Readiness is edge-triggered, so whether the socket may hold
/// input not read yet is remembered here, from its readiness and from reads that stopped before they would block;
/// so is a TLS read that waits for the socket to be writable first.
struct SocketInput {
    /// What one read came to, when it came to anything.
    enum Read {
        case bytes(UnsafeRawBufferPointer)
        /// The peer closed its side.
        case closed
        case failed
    }

    private(set) var mayHaveInput = true
    private var waitsForWritable = false

    mutating func becameReadable() {
        mayHaveInput = true
    }

    mutating func becameWritable() {
        waitsForWritable = false
    }

    /// Whether a read may find something now.
    func mayRead(_ io: any ConnectionIO) -> Bool {
        !waitsForWritable && (mayHaveInput || io.hasBufferedInput)
    }

    /// Reads once from `io` into `buffer`; nil when there is nothing to read now.
    mutating func read(_ io: any ConnectionIO, into buffer: UnsafeMutableRawBufferPointer) -> Read? {
        switch io.read(into: buffer) {
        case .done(let count): return .bytes(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        case let outcome: return noted(outcome)
        }
    }

    /// Reads and drops what the client sends after the final response; nil while it has not closed.
    mutating func discard(_ io: any ConnectionIO) -> Read? {
        switch io.discardInput() {
        case .done, .wantRead, .wantWrite: return noted(.wantRead)
        case let outcome: return noted(outcome)
        }
    }

    /// What a read that brought no bytes means, and what it waits for.
    private mutating func noted(_ outcome: IOResult) -> Read? {
        switch outcome {
        case .done, .wantRead:
            mayHaveInput = false
            return nil
        case .wantWrite:
            waitsForWritable = true
            return nil
        case .closed:
            return .closed
        case .failed:
            return .failed
        }
    }
}
