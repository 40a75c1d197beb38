import CZeroMQ

/// The readiness a ``ZMQPoller`` item waits for, or reports.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16

    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// A whole message can be received (or the descriptor is readable).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without blocking (or the descriptor is writable).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a raw descriptor (never set for ZeroMQ sockets).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}
