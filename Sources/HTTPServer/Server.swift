import COpenSSL
import Dispatch
import HTTPCore

public final class Server: Sendable {
    public init() {}
}
