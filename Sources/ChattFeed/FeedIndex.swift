import ChattModel
import JSON

/// Which row of an encoded feed holds each chatt id. Settled rows are indexed once per lineage, on first demand,
/// by scanning their bytes; the few tail rows are looked through.
public struct FeedIndex: Sendable {
    private let feed: EncodedFeed

    init(_ feed: EncodedFeed) {
        self.feed = feed
    }

    /// The row of the chatt with `id`, or nil when the feed does not hold it.
    public func row(of id: ChattID) -> Int? {
        feed.lineage.row(of: id, in: feed.tip)
    }

    /// The first row that sorts after `place` in feed order (a removed chatt's place: where `since` its id resumes);
    /// the row count when none does.
    public func firstRow(after place: FeedPosition) -> Int {
        feed.lineage.firstRow(after: place, in: feed.tip)
    }

    /// The timestamp of the row whose `[` is at index `rowStart` of `body`, which holds the whole row: the fourth
    /// string, after the id, written by the encoder with no escapes.
    static func timestamp(in body: ArraySlice<UInt8>, rowStart: Int) -> String? {
        var index = rowStart + 1  // "["
        index = endOfString(body, from: index) + 1  // name, then ","
        index = endOfString(body, from: index) + 1  // message, then ","
        index = endOfString(body, from: index) + 1  // id, then ","
        let end = endOfString(body, from: index)
        guard index < end, end <= body.endIndex, body[index] == UInt8(ascii: "\"") else { return nil }
        return String(decoding: body[(index + 1)..<(end - 1)], as: UTF8.self)
    }

    /// The id of the row whose `[` is at index `rowStart` of `body`, which holds the whole row. Every row is
    /// `["name","message","id",...`: the id is the third string, after two strings that may hold escapes. The
    /// encoder wrote these rows, so the id is there; a row that somehow is not gives nil.
    static func id(in body: ArraySlice<UInt8>, rowStart: Int) -> ChattID? {
        var index = rowStart + 1  // "["
        index = endOfString(body, from: index) + 1  // name, then ","
        index = endOfString(body, from: index) + 1  // message, then ","
        return ChattID(body, index + 1)
    }

    /// The offset just past the JSON string whose opening quote is at `start`: a quote ends the string
    /// unless a backslash escapes it, and an escaped backslash escapes nothing further.
    private static func endOfString(_ body: ArraySlice<UInt8>, from start: Int) -> Int {
        var index = start + 1
        while index < body.endIndex {
            switch body[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return index
    }
}
