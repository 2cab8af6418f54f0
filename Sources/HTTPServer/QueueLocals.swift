/// What the connections of one I/O queue share, used only on that queue (but `wakes`, which any thread adds to): the
/// `Date` header, the buffer reads land in, and the connections whose streams woke. A connection hands what it read
/// to its driver before any other read on the queue, so one buffer serves them all and a read allocates nothing.
final class QueueLocals: @unchecked Sendable {  // touched only on its I/O queue
    static let readBufferBytes = 16 * 1024

    let dates = DateCache()
    /// Its connections whose response streams woke.
    let wakes = WakeList()
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: QueueLocals.readBufferBytes, alignment: 16)

    deinit {
        readBuffer.deallocate()
    }
}
