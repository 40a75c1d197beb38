import ReceiptsClient
import ReceiptsWire
import ZeroMQ

/// Asks workers' query endpoints one question at a time, the way the zguide's Lazy Pirate
/// client does (chapter 4): a DEALER per worker, thrown away with whatever it still holds
/// whenever its question may be lost, so that the question goes out again on a new one.
///
/// A question is lost when the connection it went out on drops: a worker that dies or
/// restarts forgets what it had read and not answered. The socket's monitor reports the drop
/// at once, so a restarted worker is asked again as soon as it is back, not after the reply
/// timeout; the timeout is left for a worker that is alive and silent (stopped, or stuck).
/// Asking again is safe because every step of a move is idempotent on the worker.
///
/// Not `Sendable`: its sockets belong to the one thread that drives the move.
final class LazyPirate {
    /// Why a question got no answer; the socket it went out on is closed.
    enum NoAnswer: Error, CustomStringConvertible {
        /// The connection to the worker dropped: it died or restarted.
        case disconnected
        /// No reply within the timeout.
        case timedOut(Duration)
        /// The reply could not be read.
        case malformed(WireError)
        /// libzmq refused an operation.
        case transport(ZMQError)

        var description: String {
            switch self {
            case .disconnected: "the connection dropped"
            case .timedOut(let timeout): "no reply within \(timeout)"
            case .malformed(let error): "an unreadable reply: \(error)"
            case .transport(let error): "\(error)"
            }
        }
    }

    /// A worker's DEALER and the PAIR that reads its monitor's events.
    private struct Link {
        let socket: ZMQSocket
        let monitor: ZMQSocket
    }

    private let context: ZMQContext
    /// Where each worker's query endpoint is.
    private let cluster: Cluster
    private let curve: CurveClientKeys?
    /// The open links, by ordinal; a worker's first question, or the one after a loss, opens one.
    private var links: [Int: Link] = [:]
    /// Numbers the monitors' `inproc` endpoints (a new link must not meet an old one's).
    private var opened = 0

    /// - Parameters:
    ///   - cluster: The workers' endpoints (its count does not matter: every ordinal it can
    ///     name is asked on demand).
    ///   - curve: The operator's CURVE keys, or nil for plaintext.
    init(cluster: Cluster, curve: CurveClientKeys?) throws(ZMQError) {
        context = try ZMQContext()
        self.cluster = cluster
        self.curve = curve
    }

    deinit {
        for link in links.values { Self.close(link) }
        context.terminate()
    }

    /// Asks `worker` one question and waits at most `timeout` for the answer.
    /// - Returns: The reply, error replies included; or why none came (then the next question
    ///   to this worker goes out on a new socket).
    func ask(_ query: Query, worker: Int, timeout: Duration) -> Result<QueryReply, NoAnswer> {
        let link: Link
        do throws(ZMQError) {
            link = try self.link(worker)
            // A drop reported before this question concerns an earlier one, already answered:
            // this one waits in the socket until libzmq has connected again.
            _ = try Self.dropped(link)
            guard try link.socket.send([[], query.encode()], dontWait: true) else {
                throw ZMQError(code: .again, message: "the send queue is full", operation: "send")
            }
        } catch {
            forget(worker)
            return .failure(.transport(error))
        }
        let answer = Self.await(link, until: .now + timeout, timeout)
        if case .failure = answer { forget(worker) }
        return answer
    }

    /// Waits on a link for the reply to its one question, or for the connection to drop.
    private static func await(
        _ link: Link,
        until deadline: ContinuousClock.Instant,
        _ timeout: Duration
    ) -> Result<QueryReply, NoAnswer> {
        var poller = ZMQPoller()
        let reply = poller.add(link.socket)
        let events = poller.add(link.monitor)
        do throws(ZMQError) {
            while true {
                let left = deadline - .now
                guard left > .zero else { return .failure(.timedOut(timeout)) }
                _ = try poller.poll(timeoutMilliseconds: Int((left / .milliseconds(1)).rounded(.up)))
                // A REQ envelope: the empty delimiter, then the body.
                if poller.isReadable(reply), let frames = try link.socket.receiveMultipart(dontWait: true),
                    frames.count == 2, frames[0].isEmpty
                {
                    do {
                        return .success(try QueryReply.decode(frames[1]))
                    } catch {
                        return .failure(.malformed(error))
                    }
                }
                if poller.isReadable(events), try dropped(link) { return .failure(.disconnected) }
            }
        } catch {
            return .failure(.transport(error))
        }
    }

    /// Reads every queued monitor event.
    /// - Returns: Whether one of them was a dropped connection.
    private static func dropped(_ link: Link) throws(ZMQError) -> Bool {
        var dropped = false
        while let frames = try link.monitor.receiveMultipart(dontWait: true) {
            if MonitorEvent(frames: frames)?.event == .disconnected { dropped = true }
        }
        return dropped
    }

    /// The worker's open link, or a new one connected to its query endpoint.
    private func link(_ worker: Int) throws(ZMQError) -> Link {
        if let link = links[worker] { return link }
        guard let endpoint = cluster.worker(worker)?.query else {
            throw ZMQError(code: .invalidArgument, message: "no endpoint for worker \(worker)", operation: "connect")
        }
        opened += 1
        let address = "inproc://receiptctl.monitor.\(opened)"
        let socket = try ZMQSocket(context: context, type: .dealer)
        let monitor: ZMQSocket
        do {
            if let curve { try socket.setCurveClient(curve) }
            // The monitor first, so that it sees the connection from its start.
            try socket.monitor(address, events: .disconnected)
            monitor = try ZMQSocket(context: context, type: .pair)
        } catch {
            socket.close()
            throw error
        }
        let link = Link(socket: socket, monitor: monitor)
        do {
            try monitor.connect(address)
            try socket.connect(endpoint)
        } catch {
            Self.close(link)
            throw error
        }
        links[worker] = link
        return link
    }

    /// Closes a worker's link and what it still queues: its next question opens a new one.
    private func forget(_ worker: Int) {
        if let link = links.removeValue(forKey: worker) { Self.close(link) }
    }

    private static func close(_ link: Link) {
        link.socket.close()
        link.monitor.close()
    }
}
