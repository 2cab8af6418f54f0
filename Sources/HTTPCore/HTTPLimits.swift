/// Size limits applied while decoding requests; defaults are docs/API.md's.
public struct HTTPLimits: Sendable, Equatable {
    /// Longest request line (method, target, version), in bytes, before 414.
    public var maxRequestLineBytes: Int = 8 * 1024
    /// Largest header section (all field lines), in bytes, before 431.
    public var maxHeaderBytes: Int = 16 * 1024
    /// Most header fields before 431.
    public var maxHeaderCount: Int = 100
    /// Largest decoded body, in bytes, before 413.
    public var maxBodyBytes: Int = 64 * 1024

    public init() {}

    public init(maxRequestLineBytes: Int, maxHeaderBytes: Int, maxHeaderCount: Int, maxBodyBytes: Int) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}
