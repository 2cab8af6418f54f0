/// One log line under construction, in logfmt or JSON. Every value is escaped, so nothing a client sends can
/// split a line or forge a field.
public struct LogLine {
    private(set) var bytes: [UInt8] = []
    private let format: LogFormat

    /// A line that starts with `time`, `level` and `event`.
    public init(format: LogFormat, level: LogLevel, event: String) {
        self.format = format
        bytes.reserveCapacity(256)
        if format == .json { bytes.append(UInt8(ascii: "{")) }
        appendKey("time")
        if format == .json { bytes.append(UInt8(ascii: "\"")) }
        LogTimestamp.appendNow(to: &bytes)
        if format == .json { bytes.append(UInt8(ascii: "\"")) }
        string("level", level.name)
        string("event", event)
    }

    /// Adds a text field.
    public mutating func string(_ key: String, _ value: String) {
        appendKey(key)
        if format == .json || Self.needsQuotes(value) {
            appendQuoted(value)
        } else {
            bytes.append(contentsOf: value.utf8)
        }
    }

    /// Adds a whole-number field.
    public mutating func integer(_ key: String, _ value: Int) {
        appendKey(key)
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        LogTimestamp.appendDigits(Int(clamping: value.magnitude), to: &bytes)
    }

    /// Adds a non-negative number with exactly three decimals (e.g. milliseconds with microsecond precision).
    public mutating func thousandths(_ key: String, _ value: Double) {
        appendKey(key)
        let scaled = value.isFinite ? Int(min(max(value, 0), 1e12) * 1000 + 0.5) : 0
        LogTimestamp.appendDigits(scaled / 1000, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        LogTimestamp.appendDigits(scaled % 1000, width: 3, to: &bytes)
    }

    /// Adds a boolean field.
    public mutating func boolean(_ key: String, _ value: Bool) {
        appendKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Closes the line (newline included) and returns its bytes; add nothing after this.
    public mutating func finish() -> [UInt8] {
        if format == .json { bytes.append(UInt8(ascii: "}")) }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    // Keys are chatterd's own constants: plain lowercase words, never escaped.
    private mutating func appendKey(_ key: String) {
        switch format {
        case .logfmt:
            if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
            bytes.append(contentsOf: key.utf8)
            bytes.append(UInt8(ascii: "="))
        case .json:
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: key.utf8)
            bytes.append(contentsOf: "\":".utf8)
        }
    }

    /// logfmt leaves a value bare unless it is empty or holds a space, quote, `=`, backslash or control byte.
    public static func needsQuotes(_ value: String) -> Bool {
        value.isEmpty || value.utf8.contains { $0 <= 0x20 || $0 == 0x7F || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C }
    }

    /// `"value"` with `"`, `\` and control characters escaped as JSON does (which logfmt readers accept).
    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
            case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
