/// What the connections of one I/O queue share, used only on that queue: the `Date` header, and the buffer reads
/// land in. A connection hands what it read to its driver before any other read on the queue, so one buffer
/// serves them all and a read allocates nothing.
final class QueueLocals: @unchecked Sendable {  // touched only on its I/O queue
    static let readBufferBytes = 16 * 1024

    let dates = DateCache()
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: QueueLocals.readBufferBytes, alignment: 16)

    deinit {
        readBuffer.deallocate()
    }
}
