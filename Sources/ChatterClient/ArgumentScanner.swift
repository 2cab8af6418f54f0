/// Sorts command-line words into the command name, its operands, `--flag value` options and bare switches.
///
/// Options may come before or after the command; `--flag=value` works too. Which options a command accepts is
/// checked afterwards, with `requireOnly`.
struct ArgumentScanner {
    /// Options that take a value.
    static let valueFlags: Set<String> = [
        "--name", "--message", "--lat", "--lon", "--facing", "--speed", "--format", "--server", "--cacert",
        "--timeout", "--reason", "--admin-token-file", "--bbox", "--newest",
    ]
    /// Options without a value, with their short spellings mapped to the long ones.
    static let switchFlags = [
        "--maps": "--maps", "--help": "--help", "-h": "--help", "--version": "--version",
        "-V": "--version",
    ]

    /// The first word that is not an option or an option's value.
    private(set) var command: String?
    /// The words after the command that are not options or their values (`chatter delete ID`).
    private(set) var operands: [String] = []
    private(set) var values: [String: String] = [:]
    private(set) var switches: Set<String> = []

    /// Scans `arguments` (without the program name).
    init(_ arguments: [String]) throws(ClientError) {
        var words = arguments[...]
        while let word = words.popFirst() {
            let (flag, inline) = Self.split(word)
            if let canonical = Self.switchFlags[flag], inline == nil {
                switches.insert(canonical)
            } else if Self.valueFlags.contains(flag) {
                guard let value = inline ?? words.popFirst() else { throw .usage("\(flag) needs a value") }
                guard values.updateValue(value, forKey: flag) == nil else { throw .usage("\(flag) given twice") }
            } else if word.hasPrefix("-") {
                throw .usage("unknown option \(word) (see chatter --help)")
            } else if command == nil {
                command = word
            } else {
                operands.append(word)
            }
        }
    }

    /// Whether the switch (long spelling) was given.
    func has(_ flag: String) -> Bool {
        switches.contains(flag)
    }

    /// Throws if an option outside `allowed` (or the common ones) was given, or more than `operands` operands.
    func requireOnly(_ allowed: Set<String>, for command: String, operands count: Int = 0) throws(ClientError) {
        if operands.count > count {
            throw .usage("unexpected argument \(operands[count]) (values with spaces need quotes)")
        }
        let common: Set<String> = ["--server", "--cacert", "--timeout"]
        for flag in Set(values.keys).union(switches).sorted() where !allowed.contains(flag) && !common.contains(flag) {
            throw .usage("\(flag) is not an option of \(command) (see chatter --help)")
        }
    }

    /// `--flag=value` → (`--flag`, `value`); anything else → (word, nil).
    private static func split(_ word: String) -> (String, String?) {
        guard word.hasPrefix("--"), let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }
}
