/// A strict reader of the Prometheus text exposition format 0.0.4, for tests: every line must be a `# HELP`, a
/// `# TYPE` or a sample of the family declared just before it.
struct Exposition {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Family {
        var help: String?
        var type: String?
        var samples: [Sample] = []
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var families: [String: Family] = [:]
    private(set) var order: [String] = []

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw Malformed(description: "no final newline") }
        var current: String?
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                current = try declare(line)
            } else {
                let sample = try Self.sample(line)
                guard let family = current, Self.belongs(sample.name, to: family, type: families[family]?.type) else {
                    throw Malformed(description: "sample outside its family: \(line)")
                }
                families[family]?.samples.append(sample)
            }
        }
    }

    /// The value of the one sample called `name` with exactly these labels.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        families.values.flatMap(\.samples).first { $0.name == name && $0.labels == labels }?.value
    }

    private mutating func declare(_ line: String) throws -> String {
        let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, Self.isMetricName(parts[2]) else { throw Malformed(description: "bad comment: \(line)") }
        let name = parts[2]
        if families[name] == nil {
            families[name] = Family()
            order.append(name)
        }
        if parts[1] == "HELP" {
            guard families[name]?.help == nil else { throw Malformed(description: "second HELP for \(name)") }
            families[name]?.help = parts[3]
        } else {
            let types: Set = ["counter", "gauge", "histogram", "summary", "untyped"]
            guard families[name]?.type == nil, families[name]?.samples.isEmpty == true, types.contains(parts[3]) else {
                throw Malformed(description: "bad or late TYPE: \(line)")
            }
            families[name]?.type = parts[3]
        }
        return name
    }

    private static func belongs(_ sample: String, to family: String, type: String?) -> Bool {
        if sample == family { return type != "histogram" }
        guard type == "histogram" else { return false }
        return ["_bucket", "_sum", "_count"].contains { sample == family + $0 }
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    /// `name{key="value",...} number` or `name number`.
    static func sample(_ line: String) throws -> Sample {
        guard let space = line.lastIndex(of: " "), let value = number(String(line[line.index(after: space)...])) else {
            throw Malformed(description: "bad sample: \(line)")
        }
        let head = line[..<space]
        let nameEnd = head.firstIndex(of: "{") ?? head.endIndex
        let name = String(head[..<nameEnd])
        guard isMetricName(name) else { throw Malformed(description: "bad metric name: \(line)") }
        var labels: [String: String] = [:]
        if nameEnd < head.endIndex {
            guard head.last == "}" else { throw Malformed(description: "unclosed labels: \(line)") }
            labels = try self.labels(head[head.index(after: nameEnd)..<head.index(before: head.endIndex)])
        }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func labels(_ text: Substring) throws -> [String: String] {
        var labels: [String: String] = [:]
        var rest = text
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else {
                throw Malformed(description: "bad label in {\(text)}")
            }
            let key = String(rest[..<equals])
            var value = ""
            var index = rest.index(equals, offsetBy: 2)
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\" { index = rest.index(after: index) }
                guard index < rest.endIndex else { break }
                value.append(rest[index])
                index = rest.index(after: index)
            }
            guard index < rest.endIndex, isMetricName(key), labels[key] == nil else {
                throw Malformed(description: "bad label in {\(text)}")
            }
            labels[key] = value
            rest = rest[rest.index(after: index)...]
            if rest.first == "," { rest = rest.dropFirst() } else if !rest.isEmpty {
                throw Malformed(description: "bad label separator in {\(text)}")
            }
        }
        return labels
    }

    static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }
}
