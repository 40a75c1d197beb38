import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsWire

extension Endpoints {
    /// Runs `body` with a client of these endpoints and shuts the client down afterwards,
    /// whether `body` returns or throws.
    /// - Parameters:
    ///   - configuration: The client's settings; ``clientConfiguration`` if nil.
    ///   - body: What to do with the client.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or `ReceiptsClientError` if the client cannot start.
    func withClient<Result>(
        _ configuration: ReceiptsClient.Configuration? = nil,
        _ body: (ReceiptsClient) async throws -> Result
    ) async throws -> Result {
        try await ReceiptsClient.with(configuration ?? clientConfiguration, body)
    }

    /// Asks the worker a query and returns its reply as it is, error replies included (the
    /// caller renders them).
    /// - Throws: `CtlError` if no reply came within `--timeout-ms`; `ReceiptsClientError` for
    ///   other failures.
    func ask(_ query: Query, _ client: ReceiptsClient) async throws -> QueryReply {
        do {
            return try await client.query(query, worker: 0)
        } catch {
            // (Not `catch where`: Swift 6.3.1 crashes on a partial catch of a typed throw here.)
            if error.code == .timeout { throw CtlError("no reply from \(queryEndpoint) within \(timeoutMs) ms") }
            throw error
        }
    }

    /// Runs one query with a client of its own and returns the reply (error replies included).
    func ask(_ query: Query) async throws -> QueryReply {
        try await withClient { client in try await ask(query, client) }
    }
}

extension Endpoints {
    /// Sends events with the ids they have and waits at most `--timeout-ms` for their outcomes
    /// (the client itself re-sends until acknowledged and never gives up: a tool must).
    /// - Throws: `CtlError` if the worker refused the whole frame or nothing answered in time;
    ///   `ReceiptsClientError` for other failures.
    func send(_ events: [Event], _ client: ReceiptsClient) async throws -> [EventOutcome] {
        let timeout = Duration.milliseconds(timeoutMs)
        let outcomes = try await withThrowingTaskGroup(of: [EventOutcome]?.self) { group in
            group.addTask {
                do throws(ReceiptsClientError) {
                    return try await client.send(identified: events)
                } catch {
                    if error.code == .rejected { throw CtlError("refused: \(error.message)") }
                    throw error
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            // The loser is cancelled: an unanswered send is withdrawn, a sleep ends.
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let outcomes else { throw CtlError("no reply from \(ingestEndpoint) within \(timeoutMs) ms") }
        return outcomes
    }
}

extension ReceiptsClient {
    /// Runs `body` with a new client and shuts the client down afterwards, whether `body`
    /// returns or throws.
    /// - Throws: What `body` throws, or `ReceiptsClientError` if the client cannot start.
    static func with<Result>(
        _ configuration: Configuration,
        _ body: (ReceiptsClient) async throws -> Result
    ) async throws -> Result {
        let client = try ReceiptsClient(configuration, logger: Logger(label: "receiptctl"))
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
