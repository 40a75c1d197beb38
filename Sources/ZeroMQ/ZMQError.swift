import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by libzmq, or by this wrapper when a socket is used after `close()`.
///
/// The code is the errno libzmq set, so callers can branch on the cases that matter for a
/// message loop (``Code-swift.struct/terminated`` to exit, ``Code-swift.struct/hostUnreachable``
/// for an unroutable ROUTER reply) while unknown errnos still round-trip through
/// ``Code-swift.struct/other(_:)``.
public struct ZMQError: Error, Hashable, Sendable {
    /// The errno-based classification of the failure.
    public var code: Code

    /// Human-readable text, normally `zmq_strerror(errno)`.
    public var message: String

    /// The operation that failed, e.g. `"bind tcp://127.0.0.1:*"` or `"setsockopt ZMQ_LINGER"`.
    public var operation: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The errno-based code.
    ///   - message: A description of the failure.
    ///   - operation: The operation that failed.
    public init(code: Code, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// Creates an error from an errno value, with libzmq's text for it.
    init(errno value: Int32, operation: String) {
        self.init(code: Code(rawValue: value), message: String(cString: zmq_strerror(value)), operation: operation)
    }

    /// Creates an error from the calling thread's current `zmq_errno()`.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(errno: zmq_errno(), operation: operation)
    }

    /// The error thrown when a closed socket is used: libzmq would read freed memory instead.
    static func closed(_ operation: String) -> ZMQError {
        ZMQError(code: .notSocket, message: "socket is closed", operation: operation)
    }
}

extension ZMQError: CustomStringConvertible {
    public var description: String {
        "\(operation): \(message) (\(code))"
    }
}

extension ZMQError {
    /// An errno value with names for the ones libzmq documents.
    ///
    /// A struct rather than an enum so new codes can be named without breaking callers;
    /// `Code.other(EAGAIN) == .again`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The errno value.
        public let rawValue: Int32

        /// Creates a code from an errno value.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// A code for an errno value that has no name here.
        public static func other(_ errno: Int32) -> Code { Code(rawValue: errno) }

        /// `EAGAIN`: non-blocking mode and nothing to do, a timeout expired, or the high-water mark is reached.
        public static var again: Code { Code(rawValue: EAGAIN) }
        /// `EINTR`: a signal interrupted the call.
        public static var interrupted: Code { Code(rawValue: EINTR) }
        /// `ETERM`: the context was shut down or terminated; the socket should be closed.
        public static var terminated: Code { Code(rawValue: ETERM) }
        /// `EHOSTUNREACH`: a ROUTER with `ROUTER_MANDATORY` has no peer with that routing id.
        public static var hostUnreachable: Code { Code(rawValue: EHOSTUNREACH) }
        /// `ENOTSOCK`: the socket is closed (or never was one).
        public static var notSocket: Code { Code(rawValue: ENOTSOCK) }
        /// `EINVAL`: an invalid argument, option value or endpoint.
        public static var invalidArgument: Code { Code(rawValue: EINVAL) }
        /// `EFSM`: the operation is not allowed in the socket's current state (e.g. REQ sending twice).
        public static var invalidState: Code { Code(rawValue: EFSM) }
        /// `ENOTSUP`: the socket type does not support the operation.
        public static var notSupported: Code { Code(rawValue: ENOTSUP) }
        /// `EPROTONOSUPPORT`: the endpoint's transport is not supported.
        public static var protocolNotSupported: Code { Code(rawValue: EPROTONOSUPPORT) }
        /// `ENOCOMPATPROTO`: the transport does not fit the socket type.
        public static var incompatibleProtocol: Code { Code(rawValue: ENOCOMPATPROTO) }
        /// `EADDRINUSE`: the endpoint is already bound.
        public static var addressInUse: Code { Code(rawValue: EADDRINUSE) }
        /// `EADDRNOTAVAIL`: the address is not local.
        public static var addressNotAvailable: Code { Code(rawValue: EADDRNOTAVAIL) }
        /// `ENODEV`: the interface in the endpoint does not exist.
        public static var noDevice: Code { Code(rawValue: ENODEV) }
        /// `ENOENT`: unbind or disconnect of an endpoint that is not bound or connected.
        public static var notFound: Code { Code(rawValue: ENOENT) }
        /// `EMFILE`: too many open sockets or files.
        public static var tooManyOpenFiles: Code { Code(rawValue: EMFILE) }
        /// `EMTHREAD`: no I/O thread is available.
        public static var noIOThread: Code { Code(rawValue: EMTHREAD) }

        public var description: String {
            switch self {
            case .again: "again"
            case .interrupted: "interrupted"
            case .terminated: "terminated"
            case .hostUnreachable: "hostUnreachable"
            case .notSocket: "notSocket"
            case .invalidArgument: "invalidArgument"
            case .invalidState: "invalidState"
            case .notSupported: "notSupported"
            case .protocolNotSupported: "protocolNotSupported"
            case .incompatibleProtocol: "incompatibleProtocol"
            case .addressInUse: "addressInUse"
            case .addressNotAvailable: "addressNotAvailable"
            case .noDevice: "noDevice"
            case .notFound: "notFound"
            case .tooManyOpenFiles: "tooManyOpenFiles"
            case .noIOThread: "noIOThread"
            default: "errno \(rawValue)"
            }
        }
    }
}
