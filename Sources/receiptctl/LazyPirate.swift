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
/// A replicated ordinal (deploy/REPLICATION.md, section 11) has several members, of which only
/// the primary answers anything but `health`: questions go to the member taken for the
/// primary, starting with the ordinal's first. One that gets no answer leaves the next member
/// in turn to be asked (a primary that died, whose standby takes over), and a `NOT_PRIMARY`
/// answer moves the ordinal to the member it names
/// (``follow(_:worker:recentSwitches:policy:)``). An unreplicated worker is an ordinal of one
/// member, which never moves.
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

    /// A member's DEALER and the PAIR that reads its monitor's events.
    private struct Link {
        let socket: ZMQSocket
        let monitor: ZMQSocket
    }

    private let context: ZMQContext
    /// Where each member's query endpoint is.
    private let cluster: Cluster
    private let curve: CurveClientKeys?
    /// The open links, by query endpoint; a member's first question, or the one after a loss,
    /// opens one.
    private var links: [String: Link] = [:]
    /// The member taken for each ordinal's primary, as an index into its members; 0 if absent.
    private var current: [Int: Int] = [:]
    /// Numbers the monitors' `inproc` endpoints (a new link must not meet an old one's).
    private var opened = 0

    /// - Parameters:
    ///   - cluster: The workers' endpoints (its count does not matter: every ordinal it can
    ///     name is asked on demand), with the members of each ordinal when it is replicated.
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

    /// Asks `worker`'s member taken for the primary one question and waits at most `timeout`
    /// for the answer.
    /// - Returns: The reply, error replies included; or why none came (then the next question
    ///   to this worker goes out on a new socket, to the next member in turn).
    func ask(_ query: Query, worker: Int, timeout: Duration) -> Result<QueryReply, NoAnswer> {
        guard let member = self.member(of: worker) else {
            return .failure(
                .transport(
                    ZMQError(code: .invalidArgument, message: "no endpoint for worker \(worker)", operation: "connect")
                )
            )
        }
        let link: Link
        do throws(ZMQError) {
            link = try self.link(member.query)
            // A drop reported before this question concerns an earlier one, already answered:
            // this one waits in the socket until libzmq has connected again.
            _ = try Self.dropped(link)
            guard try link.socket.send([[], query.encode()], dontWait: true) else {
                throw ZMQError(code: .again, message: "the send queue is full", operation: "send")
            }
        } catch {
            leave(worker, closing: member)
            return .failure(.transport(error))
        }
        let answer = Self.await(link, until: .now + timeout, timeout)
        if case .failure = answer { leave(worker, closing: member) }
        return answer
    }

    /// The member of `worker` that questions go to now; nil for an ordinal the cluster cannot
    /// name.
    func member(of worker: Int) -> Cluster.Worker? {
        let members = cluster.members(of: worker)
        guard !members.isEmpty else { return nil }
        return members[(current[worker] ?? 0) % members.count]
    }

    /// Takes a `NOT_PRIMARY` answer of `worker`'s current member as the client's
    /// ``RoutingPolicy`` decides it: the ordinal moves to the member the answer names, unless it
    /// names none (an election is under way), the member that answered, or a member the cluster
    /// does not list, or the ordinal switched as often as the policy allows lately.
    /// - Parameters:
    ///   - primary: The primary the answer names; nil while an election is under way.
    ///   - worker: The ordinal of the member that answered.
    ///   - recentSwitches: How many times the caller switched the ordinal lately.
    ///   - policy: The rule.
    /// - Returns: Whether the ordinal moved to another member (ask it at once); false if the
    ///   same one is to be asked again after a pause.
    func follow(_ primary: ErrorReply.Primary?, worker: Int, recentSwitches: Int, policy: RoutingPolicy) -> Bool {
        let members = cluster.members(of: worker)
        let named = primary.flatMap { primary in
            primary.member.isEmpty ? nil : members.firstIndex { $0.member == primary.member }
        }
        let decision = policy.decideNotPrimary(
            naming: named,
            from: current[worker] ?? 0,
            recentSwitches: recentSwitches
        )
        guard case .switchMember(let member) = decision else { return false }
        current[worker] = member
        return true
    }

    /// Leaves `worker`'s current member for the next one in turn: one that did not answer, or
    /// one whose health says it is not the primary (a standby, or a member still waiting for
    /// its role).
    func passOver(_ worker: Int) {
        current[worker] = ((current[worker] ?? 0) + 1) % max(cluster.members(of: worker).count, 1)
    }

    /// Closes the link to `member`, which may have lost a question, and leaves it for the next
    /// member of `worker` in turn.
    private func leave(_ worker: Int, closing member: Cluster.Worker) {
        if let link = links.removeValue(forKey: member.query) { Self.close(link) }
        passOver(worker)
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
        try link.monitor.receiveMonitorEvents().contains { $0.event == .disconnected }
    }

    /// The open link to a query endpoint, or a new one connected to it.
    private func link(_ endpoint: String) throws(ZMQError) -> Link {
        if let link = links[endpoint] { return link }
        opened += 1
        let address = "inproc://receiptctl.monitor.\(opened)"
        let socket = try ZMQSocket(context: context, type: .dealer)
        let monitor: ZMQSocket
        do {
            if let curve { try socket.setCurveClient(curve) }
            // The monitor first, so that it sees the connection from its start.
            monitor = try socket.openMonitor(address, events: .disconnected)
        } catch {
            socket.close()
            throw error
        }
        let link = Link(socket: socket, monitor: monitor)
        do {
            try socket.connect(endpoint)
        } catch {
            Self.close(link)
            throw error
        }
        links[endpoint] = link
        return link
    }

    private static func close(_ link: Link) {
        link.socket.close()
        link.monitor.close()
    }
}
