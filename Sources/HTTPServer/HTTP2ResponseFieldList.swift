import ASCII
import CNGHTTP2
import HTTPCore

/// A response's header fields as nghttp2 takes them (`:status` first, then `HTTP2ResponseFields`' rules), built in
/// buffers that are reused from response to response, so a response makes no strings and no arrays.
struct HTTP2ResponseFieldList {
    private var bytes: [UInt8] = []
    private var bounds: [(name: Range<Int>, value: Range<Int>)] = []

    /// Makes the list for `response`, answered under `requestID` at `date`.
    mutating func assemble(_ response: HTTPResponse, requestID: String, date: String) {
        bytes.removeAll(keepingCapacity: true)
        bounds.removeAll(keepingCapacity: true)
        add(HTTP2ResponseFields.status) { ASCII.appendDecimal(response.status.code, to: &$0) }
        for field in response.headers where HTTP2ResponseFields.isSent(field.name) {
            let nameStart = bytes.count
            HTTP2ResponseFields.appendLowercased(field.name, to: &bytes)
            let valueStart = bytes.count
            bytes.append(contentsOf: field.value.utf8)
            bounds.append((nameStart..<valueStart, valueStart..<bytes.count))
        }
        add(HTTP2ResponseFields.requestID) { $0.append(contentsOf: requestID.utf8) }
        // As over HTTP/1.1: the body's length also for HEAD and 304 (RFC 9110 §8.6, §9.3.2); a body made while
        // it is sent has none.
        if response.stream == nil {
            add(HTTP2ResponseFields.contentLength) { ASCII.appendDecimal(response.body.count, to: &$0) }
        }
        add(HTTP2ResponseFields.date) { $0.append(contentsOf: date.utf8) }
    }

    /// Calls `body` with the list as an `nghttp2_nv` array, valid only inside `body`.
    mutating func withArray(_ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> Int32) -> Int32 {
        let bounds = bounds
        return bytes.withUnsafeMutableBufferPointer { bytes in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: bounds.count) { nva in
                for (index, field) in bounds.enumerated() {
                    nva[index] = nghttp2_nv(
                        name: bytes.baseAddress! + field.name.lowerBound,
                        value: bytes.baseAddress! + field.value.lowerBound, namelen: field.name.count,
                        valuelen: field.value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
                }
                return body(nva)
            }
        }
    }

    private mutating func add(_ name: [UInt8], value: (inout [UInt8]) -> Void) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name)
        let valueStart = bytes.count
        value(&bytes)
        bounds.append((nameStart..<valueStart, valueStart..<bytes.count))
    }
}
