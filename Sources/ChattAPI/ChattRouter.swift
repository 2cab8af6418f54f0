import HTTPCore

/// Routes requests to the chatt endpoints of API.md. Blocking: repository calls run on the caller's thread.
public struct ChattRouter: Sendable {
    public init(repository: any ChattRepository, serverName: String = "chatterd") {
        fatalError("not implemented")
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        fatalError("not implemented")
    }
}
