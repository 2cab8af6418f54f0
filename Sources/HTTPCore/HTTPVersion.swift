/// The HTTP versions chatterd serves; any other well-formed version is answered 505.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0
    case http1_1
}
