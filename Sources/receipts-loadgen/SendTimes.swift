/// When each frame was (or was scheduled to be) sent, in monotonic nanoseconds, shared by
/// the sending thread (writes) and the update collector (reads).
///
/// A plain buffer rather than atomics: the collector reads entry i only after it received an
/// update caused by frame i, and that update went through the send syscall, receiptd and the
/// receive syscall after entry i was written, which orders the write before the read.
final class SendTimes: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<UInt64>

    /// Space for `count` frames, all zero (not sent).
    init(count: Int) {
        buffer = .allocate(capacity: max(count, 1))
        buffer.initialize(repeating: 0)
    }

    deinit { buffer.deallocate() }

    subscript(index: Int) -> UInt64 {
        get { buffer[index] }
        set { buffer[index] = newValue }
    }
}
