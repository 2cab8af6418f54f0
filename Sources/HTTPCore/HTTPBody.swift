/// A response body: byte segments sent one after another. A body that grows by versions (a cached feed) shares
/// its older segments with the versions before it, and the server queues each segment where it lies, so a body is
/// copied neither per version nor per connection. Ordinary responses are one segment.
public typealias HTTPBody = ByteSegments
