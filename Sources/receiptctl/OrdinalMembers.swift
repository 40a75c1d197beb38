import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsWire
import ZeroMQ

/// The members of one replicated ordinal, by their query endpoints, and the operator's keys:
/// what `replication status`, `demote` and `promote` talk to (deploy/REPLICATION.md, section
/// 12.2). Each member answers for itself, so receiptctl needs no access to etcd.
struct OrdinalMembers: ParsableArguments {
    @Option(
        name: .customLong("query"),
        help: """
            A member's query endpoint; repeat for each member of the ordinal. {index} becomes \
            --ordinal (e.g. --query 'tcp://receiptd-{index}.receiptd:7004' --query \
            'tcp://receiptd-b-{index}.receiptd-b:7004').
            """
    )
    var queries: [String]

    @Option(help: "The ordinal (worker index), for {index} in the endpoints.")
    var ordinal: Int = 0

    @Option(help: "receiptd's CURVE public key file (RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE; needs an operator key).")
    var curveServerKeyFile: String?

    @Option(help: "This operator's CURVE secret key file (RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE).")
    var curveClientKeyFile: String?

    @Option(help: "Milliseconds to wait for one member's answer.")
    var timeoutMs: Int = 2000

    func validate() throws {
        guard !queries.isEmpty else { throw ValidationError("give each member's query endpoint with --query") }
        guard ordinal >= 0 else { throw ValidationError("--ordinal must not be negative") }
        guard timeoutMs >= 1 else { throw ValidationError("--timeout-ms must be positive") }
    }

    /// The endpoints with `{index}` replaced by the ordinal.
    var endpoints: [String] {
        queries.map { $0.replacingOccurrences(of: "{index}", with: String(ordinal)) }
    }

    /// One member's answer to a health query, or why none came.
    struct Answer {
        /// The member's query endpoint.
        var endpoint: String
        /// Its health, or why it gave none.
        var health: Result<ReceiptsWire.Health, CtlError>
    }

    /// Runs `body` with a Lazy Pirate client of the members (member `i` is "worker" `i`), on a
    /// thread of its own: it blocks in `zmq_poll`, which must never happen on Swift's pool.
    func withMembers<Value: Sendable>(_ body: @escaping @Sendable (Asker) throws -> Value) async throws -> Value {
        let curve = try CurveClientKeys.fromFlags(
            serverPublicKeyFile: curveServerKeyFile,
            clientSecretKeyFile: curveClientKeyFile
        )
        let endpoints = self.endpoints
        let timeout = Duration.milliseconds(timeoutMs)
        let box = ResultBox<Value>()
        try await Rebalance.onThreadOfItsOwn {
            let cluster = Cluster(workers: endpoints.map { Cluster.Worker(ingest: $0, query: $0, publish: $0) })
            box.value = try body(
                Asker(pirate: try LazyPirate(cluster: cluster, curve: curve), endpoints: endpoints, timeout: timeout)
            )
        }
        guard let value = box.value else { throw CtlError("no result") }
        return value
    }

    /// Asks the members one question at a time (on the thread `withMembers` runs on).
    struct Asker {
        let pirate: LazyPirate
        let endpoints: [String]
        let timeout: Duration

        /// Asks member `index`; an error reply is returned as it is.
        func ask(_ query: Query, member index: Int, timeout: Duration? = nil) -> Result<QueryReply, CtlError> {
            pirate.ask(query, worker: index, timeout: timeout ?? self.timeout)
                .mapError { CtlError("\(endpoints[index]): \($0)") }
        }

        /// Every member's health.
        func health() -> [Answer] {
            endpoints.indices.map { index in
                let health = ask(.health, member: index).flatMap { reply -> Result<ReceiptsWire.Health, CtlError> in
                    guard case .health(let health) = reply else {
                        return .failure(CtlError("\(endpoints[index]): unexpected answer \(reply)"))
                    }
                    return .success(health)
                }
                return Answer(endpoint: endpoints[index], health: health)
            }
        }

        /// The member that says it is primary of the highest term, by its index.
        func primary() -> (index: Int, health: ReceiptsWire.Health)? {
            health().enumerated()
                .compactMap { index, answer in
                    (try? answer.health.get()).flatMap { $0.role == .primary ? (index, $0) : nil }
                }
                .max { $0.1.term < $1.1.term }
        }
    }

    /// Carries the thread's result back (the thread's end orders the accesses).
    private final class ResultBox<Value>: @unchecked Sendable {
        var value: Value?
    }
}
