import ChattModel
import HTTPCore
import JSON

/// Writes `/getmaps` and `/getchatts` bodies: a JSON array of rows of strings, oldest first (docs/API.md).
///
/// Hand-written over bytes because these bodies grow with the store, and Foundation's encoders are many times slower
/// (measured: bench/RESULTS.md, "Row encoder").
public enum ChattRowEncoder {
    /// `[[name, message, id, timestamp, geodata|null], …]`, or `[]`.
    public static func mapsRows(_ chatts: [StoredChatt]) -> [UInt8] {
        encode(chatts, includingGeodata: true)
    }

    /// `[[name, message, id, timestamp], …]`, or `[]`.
    public static func chattsRows(_ chatts: [StoredChatt]) -> [UInt8] {
        encode(chatts, includingGeodata: false)
    }

    /// The rows as one JSON array. A cached feed is built row by row with `appendRow` (`FeedLineage`), which
    /// records where each row starts, so that a slice of the feed needs no re-encoding.
    static func encode(_ chatts: [StoredChatt], includingGeodata: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedSize(of: chatts))
        out.append(UInt8(ascii: "["))
        for (index, chatt) in chatts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendRow(chatt, includingGeodata: includingGeodata, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// One row, `[name, message, id, timestamp]` and geodata (or `null`) when `includingGeodata`.
    public static func appendRow(_ chatt: StoredChatt, includingGeodata: Bool, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        appendString(chatt.name, to: &out)
        out.append(UInt8(ascii: ","))
        appendString(chatt.message, to: &out)
        out.append(UInt8(ascii: ","))
        appendString(chatt.id, to: &out)
        out.append(UInt8(ascii: ","))
        appendString(chatt.timestamp, to: &out)
        if includingGeodata {
            out.append(UInt8(ascii: ","))
            if let geodata = chatt.geodata {
                appendString(geodata, to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Copies a string that needs no escaping as one block; JSONString escapes the rest byte by byte.
    /// Most chatt fields need no escaping, and scanning and copying contiguous bytes is several times faster.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        let copied = string.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if copied != true { JSONString.append(string, to: &out) }
    }

    /// The unescaped size plus punctuation; escapes are rare, so one growth at most in practice.
    private static func estimatedSize(of chatts: [StoredChatt]) -> Int {
        chatts.reduce(2) { size, chatt in
            size + chatt.name.utf8.count + chatt.message.utf8.count + chatt.id.utf8.count
                + chatt.timestamp.utf8.count + (chatt.geodata?.utf8.count ?? 4) + 16
        }
    }
}
