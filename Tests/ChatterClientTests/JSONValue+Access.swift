import ChattModel
import JSON

/// Accessors that let tests `#require` a JSON shape.
extension JSONValue {
    var arrayItems: [JSONValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    var objectKeys: [String]? {
        if case .object(let members) = self { members.map(\.key) } else { nil }
    }

    var numberValue: Double? {
        if case .number(let number) = self { number.value } else { nil }
    }

    var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }
}
