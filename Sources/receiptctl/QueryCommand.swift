import ArgumentParser
import ReceiptsCore
import ReceiptsWire

/// Runs one query against the query endpoint and prints the reply.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Ask receiptd about a message, a conversation, a user, or its place in the cluster.",
        discussion: """
            Examples:
              receiptctl query status --conversation c1 --message m1 --viewer alice --time-zone Europe/Paris
              receiptctl query detail --conversation g1 --message m1
              receiptctl query detail --conversation g1 --message m1 --page-size 20 [--cursor <next cursor>]
              receiptctl query last-sent --conversation c1 --viewer alice
              receiptctl query unread --user bob
              receiptctl query snapshot --conversation c1
              receiptctl query topology
            """
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case status, detail
        case lastSent = "last-sent"
        case unread, snapshot, topology
    }

    @OptionGroup var endpoints: Endpoints

    @Argument(help: "status | detail | last-sent | unread | snapshot | topology")
    var kind: Kind

    @Option var conversation: String?
    @Option var message: String?
    @Option(help: "The viewing user (status, last-sent: the sender).") var viewer: String?
    @Option(help: "The viewer's IANA time zone, e.g. Europe/Paris.") var timeZone: String = ""
    @Option(help: "The viewer's locale, e.g. en_US.") var locale: String = ""
    @Flag(help: "Group text as counts: \"Read by 2 of 5\".") var counts = false
    @Option(help: "The user (unread).") var user: String?
    @Option(help: "Most recent messages in a snapshot; 0 = all.") var limit: Int = 0
    @Option(help: "Lines per page of the \"Read by\" sheet (detail); 0 = the whole sheet.") var pageSize: Int = 0
    @Option(help: "The next cursor a paged detail printed; empty = the first page.") var cursor: String = ""
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let viewerValue = Viewer(user: viewer ?? "", timeZone: timeZone, locale: locale, prefersCounts: counts)
        let query: Query
        switch kind {
        case .status:
            query = .messageStatus(
                conversation: try required(conversation, "conversation"),
                message: try required(message, "message"),
                viewer: viewerValue
            )
        case .detail:
            query = .readDetail(
                conversation: try required(conversation, "conversation"),
                message: try required(message, "message"),
                pageSize: pageSize,
                cursor: cursor
            )
        case .lastSent:
            _ = try required(viewer, "viewer")
            query = .lastSent(conversation: try required(conversation, "conversation"), viewer: viewerValue)
        case .unread:
            query = .unreadCounts(user: try required(user, "user"), conversations: conversation.map { [$0] } ?? [])
        case .snapshot:
            query = .snapshot(conversation: try required(conversation, "conversation"), limit: limit)
        case .topology:
            query = .topology
        }
        try Rendering.print(try await endpoints.ask(query), json: json)
    }

    private func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw CtlError("query \(kind.rawValue) needs --\(name)") }
        return value
    }
}

/// Is receiptd serving.
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print receiptd's health.")
    @OptionGroup var endpoints: Endpoints
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try Rendering.print(try await endpoints.ask(.health), json: json)
    }
}

/// receiptd's counters.
struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print receiptd's counters.")
    @OptionGroup var endpoints: Endpoints
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try Rendering.print(try await endpoints.ask(.stats), json: json)
    }
}
