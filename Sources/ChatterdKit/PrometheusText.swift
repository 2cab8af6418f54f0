/// Builds a page in the Prometheus text exposition format, version 0.0.4: for each metric family a `# HELP` and a
/// `# TYPE` line, then its samples, one per line, each `name{label="value",...} number`.
struct PrometheusText {
    private(set) var text = ""

    /// Starts a metric family; `type` is `counter`, `gauge` or `histogram`.
    mutating func family(_ name: String, _ type: String, help: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(type)\n"
    }

    /// One sample of the current family.
    mutating func sample(_ name: String, _ value: String, labels: KeyValuePairs<String, String> = [:]) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.key)=\"\(Self.escapedLabel($0.value))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// A whole-number sample.
    mutating func sample(_ name: String, _ value: Int, labels: KeyValuePairs<String, String> = [:]) {
        sample(name, String(value), labels: labels)
    }

    /// A family with a single unlabelled sample.
    mutating func single(_ name: String, _ type: String, help: String, _ value: Int) {
        family(name, type, help: help)
        sample(name, value)
    }

    /// A float as the format writes it (`+Inf`, `-Inf` and `NaN` included).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return "\(value)"
    }

    // The format escapes `\` and newline in HELP text, and also `"` in label values.
    private static func escapedHelp(_ help: String) -> String {
        help.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }

    private static func escapedLabel(_ value: String) -> String {
        escapedHelp(value).replacing("\"", with: "\\\"")
    }
}
