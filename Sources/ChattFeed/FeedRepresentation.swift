import ChattModel
import HTTPCore
import JSON

/// One representation of a feed: the body bytes, their entity tag, and the response headers that go with
/// them. Built once and shared by every response (its segments are shared, never copied per connection).
public struct FeedRepresentation: Sendable {
    /// The bytes sent.
    public let body: HTTPBody
    /// Names these bytes (RFC 9110 §8.8.3).
    public let etag: EntityTag
    /// `Content-Type`, `ETag`, `Vary: Accept-Encoding`, and `Content-Encoding` for a coded body.
    public let headers: HTTPHeaders
    /// The hash of the identity bytes.
    private let contentHash: UInt64
    /// Whether the body is the identity bytes.
    private let isIdentity: Bool
    /// Its `Content-Type`.
    private let contentType: String

    /// The media type of `GET /getmaps/clusters` (RFC 7946).
    public static let geoJSON = "application/geo+json"

    /// The identity representation of `body`, tagged with a hash of its bytes, so that servers sharing a
    /// database give the same feed the same tag.
    public init(identity body: HTTPBody, contentType: String = "application/json") {
        var hasher = ContentHasher()
        hasher.update(body)
        self.init(body: body, contentHash: hasher.finalize(), coding: nil, contentType: contentType)
    }

    /// `body` coded with `coding` (e.g. "gzip"); `contentHash` is the hash of the identity bytes. The coding is
    /// part of the tag: a coded body is a different representation, with bytes of its own. So is `variant`, which
    /// names how the coded bytes were made from the identity bytes (for gzip, the level): the same identity
    /// bytes then give the same coded bytes under one tag in every process, and a build that codes differently
    /// (during a rolling upgrade) tags its bytes differently, as a strong validator must (RFC 9110 §8.8.3).
    init(
        body: HTTPBody, contentHash: UInt64, coding: String?, variant: String = "",
        contentType: String = "application/json"
    ) {
        self.body = body
        self.contentHash = contentHash
        isIdentity = coding == nil
        self.contentType = contentType
        let opaque = ContentHash.hex(contentHash) + (coding.map { "-" + $0 + variant } ?? "")
        // Invariant: hex digits, "-" and a coding token are all `etagc`, so the tag exists.
        etag = EntityTag(opaque)!
        var headers = HTTPHeaders([
            ("Content-Type", contentType), ("ETag", etag.fieldValue), ("Vary", "Accept-Encoding"),
        ])
        if let coding { headers.add("Content-Encoding", coding) }
        self.headers = headers
    }

    /// This identity representation gzip-compressed at `Gzip.answerLevel` (`AnswerGzip`), for an answer made for
    /// one request (a viewport's rows): fast rather than small. Itself should compression fail, or when it is coded
    /// already.
    public func gzipped() -> FeedRepresentation {
        guard isIdentity, let bytes = AnswerGzip.compress(body) else { return self }
        return FeedRepresentation(
            body: HTTPBody(bytes), contentHash: contentHash, coding: "gzip", variant: AnswerGzip.variant,
            contentType: contentType)
    }
}
