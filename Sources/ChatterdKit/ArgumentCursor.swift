/// A command-line or environment mistake, reported with the usage text and exit status 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Walks `--flag value` pairs; also accepts `--flag=value`.
struct ArgumentCursor {
    private var arguments: [String]
    private var pendingValue: String?

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next flag, or nil at the end. A value given as `--flag=value` waits for `value(for:)` or `switchValue`.
    mutating func nextFlag() -> String? {
        pendingValue = nil
        guard !arguments.isEmpty else { return nil }
        let argument = arguments.removeFirst()
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            pendingValue = String(argument[argument.index(after: equals)...])
            return String(argument[..<equals])
        }
        return argument
    }

    mutating func value(for flag: String) throws(UsageError) -> String {
        if let pendingValue {
            self.pendingValue = nil
            return pendingValue
        }
        guard !arguments.isEmpty else { throw UsageError(description: "\(flag) needs a value") }
        return arguments.removeFirst()
    }

    /// A flag without a value is on; `--flag=VALUE` takes 1/true/yes or 0/false/no (any case).
    mutating func switchValue(for flag: String) throws(UsageError) -> Bool {
        guard let text = pendingValue else { return true }
        pendingValue = nil
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw UsageError(description: "\(flag) takes 1, true, yes, 0, false or no, not \(text)")
        }
    }

    mutating func number<N: FixedWidthInteger>(
        for flag: String, atLeast minimum: N = 0, atMost maximum: N = .max
    ) throws(UsageError) -> N {
        let text = try value(for: flag)
        guard let number = N(text), number >= minimum, number <= maximum else {
            let range = maximum == .max ? "of at least \(minimum)" : "from \(minimum) to \(maximum)"
            throw UsageError(description: "\(flag) needs a whole number \(range), not \(text)")
        }
        return number
    }

    mutating func seconds(for flag: String) throws(UsageError) -> Double {
        let text = try value(for: flag)
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
            throw UsageError(description: "\(flag) needs a positive number of seconds, not \(text)")
        }
        return seconds
    }

    /// One of `choices`, by name.
    mutating func choice<T>(for flag: String, _ choices: [(String, T)]) throws(UsageError) -> T {
        let text = try value(for: flag)
        guard let match = choices.first(where: { $0.0 == text }) else {
            let names = choices.map(\.0).joined(separator: ", ")
            throw UsageError(description: "\(flag) takes one of \(names), not \(text)")
        }
        return match.1
    }
}
