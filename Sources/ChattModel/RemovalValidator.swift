import JSON

/// Turns a `DELETE /chatts/<id>` body into the removal's reason (docs/API.md): a JSON object whose `reason` is a
/// string of 1 to 200 characters. Every way a body can miss that is a 400.
public enum RemovalValidator {
    /// A reason holds 1...200 Unicode scalars (PostgreSQL counts characters as scalars).
    public static let reasonScalars = 1...200

    public static let badReason = APIError.badRequest("body must be {\"reason\": 1 to 200 characters}")

    public static func reason(of body: [UInt8]) throws(APIError) -> String {
        guard !body.contains(0) else { throw ChattValidator.nulCharacter }
        let object: JSONValue
        do {
            object = try JSONParser.parse(body)
        } catch {
            throw badReason
        }
        guard case .object = object, case .string(let reason)? = object["reason"] else { throw badReason }
        guard !object.containsNUL else { throw ChattValidator.nulCharacter }
        guard reasonScalars.contains(reason.unicodeScalars.count) else { throw badReason }
        return reason
    }
}
