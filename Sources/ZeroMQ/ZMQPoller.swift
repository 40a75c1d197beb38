import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits on several sockets and raw file descriptors at once (`zmq_poll`).
///
/// Holds its sockets strongly so a polled socket cannot be freed while its handle is in the
/// poll set; like them it belongs to one thread. Raw descriptors let a loop wake on something
/// other than ZeroMQ, such as an eventfd doorbell.
public struct ZMQPoller {
    /// What an item polls: a socket (kept alive here) or a descriptor.
    private enum Source {
        case socket(ZMQSocket)
        case fileDescriptor(Int32)
    }

    private var sources: [Source] = []
    private var items: [zmq_pollitem_t] = []

    /// Creates an empty poller.
    public init() {}

    /// The number of items added.
    public var count: Int { items.count }

    /// Adds a socket.
    ///
    /// - Parameters:
    ///   - socket: The socket to watch; it must stay open while this poller is used.
    ///   - events: What to wait for.
    /// - Returns: The item's index for ``isReadable(_:)`` and ``returnedEvents(_:)``.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, events: PollEvents = .readable) -> Int {
        sources.append(.socket(socket))
        items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Adds a raw file descriptor (a pipe, an eventfd, a TCP socket not owned by libzmq).
    ///
    /// - Parameters:
    ///   - fileDescriptor: The descriptor; this poller does not own or close it.
    ///   - events: What to wait for.
    /// - Returns: The item's index.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        sources.append(.fileDescriptor(fileDescriptor))
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Waits until at least one item is ready or the timeout passes.
    ///
    /// - Parameter timeoutMilliseconds: 0 to check without waiting, -1 to wait forever.
    /// - Returns: How many items are ready; 0 on timeout or when a signal interrupted the wait
    ///   (`EINTR`), so the caller simply loops.
    /// - Throws: ``ZMQError``: ``ZMQError/Code-swift.struct/notSocket`` if an added socket was
    ///   closed, ``ZMQError/Code-swift.struct/terminated`` if its context was shut down.
    public mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> Int {
        for index in items.indices {
            items[index].revents = 0
            if case .socket(let socket) = sources[index] {
                guard let handle = socket.handle else { throw ZMQError.closed("poll item \(index)") }
                items[index].socket = handle
            }
        }
        let ready = items.withUnsafeMutableBufferPointer { buffer in
            zmq_poll(buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        guard ready >= 0 else {
            let error = zmq_errno()
            if error == EINTR { return 0 }
            throw ZMQError(errno: error, operation: "poll")
        }
        return Int(ready)
    }

    /// What the last ``poll(timeoutMilliseconds:)`` reported for an item.
    ///
    /// - Parameter index: An index returned by `add`.
    public func returnedEvents(_ index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }

    /// Whether the last poll found a message (or data) to read on an item.
    public func isReadable(_ index: Int) -> Bool {
        returnedEvents(index).contains(.readable)
    }

    /// Whether the last poll found room to send on an item.
    public func isWritable(_ index: Int) -> Bool {
        returnedEvents(index).contains(.writable)
    }
}

/// A poller holds sockets, which belong to one thread.
@available(*, unavailable)
extension ZMQPoller: Sendable {}
