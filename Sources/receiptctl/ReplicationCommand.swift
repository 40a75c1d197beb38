import ArgumentParser
import Foundation
import ReceiptsWire

/// `receiptctl replication`: a replicated ordinal's members as they see themselves.
struct ReplicationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replication",
        abstract: "See a replicated ordinal's members (deploy/REPLICATION.md, section 12.2).",
        subcommands: [ReplicationStatus.self]
    )
}

/// Every member's `Health`: role, term, name, applied position, in a table.
struct ReplicationStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print each member's role, term and applied position.",
        discussion: """
            Asks every member's query endpoint for its health; a member that does not answer (down, or \
            waiting for a primary, which binds no endpoint) is listed as such. Exits 1 when no member \
            says it is primary.
            Example:
              receiptctl replication status --ordinal 3 --query 'tcp://receiptd-{index}.receiptd:7004' \\
                --query 'tcp://receiptd-b-{index}.receiptd-b:7004'
            """
    )

    @OptionGroup var members: OrdinalMembers
    @Flag(help: "Print one JSON object per member.") var json = false

    func run() async throws {
        let answers = try await members.withMembers { asker in asker.health() }
        if !json { print("MEMBER\tROLE\tTERM\tAPPLIED\tENDPOINT") }
        for answer in answers {
            switch answer.health {
            case .success(let health):
                print(
                    json
                        ? Rendering.encode([
                            "endpoint": answer.endpoint, "member": health.member, "role": health.role?.rawValue ?? "",
                            "term": health.term, "applied": health.applied,
                        ])
                        : "\(health.member)\t\(health.role?.rawValue ?? "")\t\(health.term)\t\(health.applied)\t\(answer.endpoint)"
                )
            case .failure(let error):
                print(
                    json
                        ? Rendering.encode(["endpoint": answer.endpoint, "error": error.description])
                        : "-\tno answer\t-\t-\t\(answer.endpoint)"
                )
            }
        }
        guard answers.contains(where: { (try? $0.health.get())?.role == .primary }) else {
            throw CtlError("no member says it is primary")
        }
    }
}

/// Hands the ordinal over from its primary to a standby (a switchover).
struct Demote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hand a replicated ordinal over from its primary to an in-sync standby.",
        discussion: """
            Finds the primary among the members, asks it to hand over (it pauses ingest until the \
            standby confirmed its whole log, then steps down), and waits until the standby serves as \
            primary. Needs an operator key with CURVE on; no access to etcd.
            Example:
              receiptctl demote --ordinal 3 --to receiptd-b-3 --query 'tcp://receiptd-{index}.receiptd:7004' \\
                --query 'tcp://receiptd-b-{index}.receiptd-b:7004'
            """
    )

    @OptionGroup var members: OrdinalMembers
    @Option(help: "The standby to hand over to (default: any in-sync standby).") var to: String?

    func run() async throws {
        try await Switchover(members: members, target: to ?? "").run()
    }
}

/// Makes a member primary: with a live primary, a hand-over to it.
struct Promote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a standby of a replicated ordinal its primary (a hand-over from the live primary).",
        discussion: """
            The same as demote --to MEMBER. Without a live primary there is nothing to ask: an in-sync \
            standby campaigns on its own (--accept-loss, promoting a member outside the in-sync set, \
            is not built).
            """
    )

    @OptionGroup var members: OrdinalMembers
    @Option(help: "The standby to make primary.") var member: String

    func run() async throws {
        try await Switchover(members: members, target: member).run()
    }
}

/// The switchover both `demote` and `promote` run.
struct Switchover {
    /// How long the primary may take to hand over: its confirmation limit (5 s) plus etcd.
    static let handOverTimeout = Duration.seconds(10)
    /// How long the new primary may take to serve once named.
    static let promotionTimeout = Duration.seconds(10)

    var members: OrdinalMembers
    /// The member to hand over to; "" for any in-sync standby.
    var target: String

    func run() async throws {
        let target = self.target
        let lines = try await members.withMembers { asker throws -> [String] in
            guard let (index, old) = asker.primary() else {
                throw CtlError(
                    "no member says it is primary: nothing to hand over (an in-sync standby campaigns on its own)"
                )
            }
            if old.member == target { return ["\(target) is primary already (term \(old.term))"] }
            let reply = try asker.ask(.demote(to: target), member: index, timeout: Self.handOverTimeout).get()
            guard case .handOver(let result) = reply else {
                if case .error(let error) = reply { throw CtlError("\(error.code): \(error.message)") }
                throw CtlError("unexpected answer to demote: \(reply)")
            }
            var lines = ["\(result.from) handed the ordinal over to \(result.to) (term \(result.term) ended)"]
            let deadline = ContinuousClock.now + Self.promotionTimeout
            while ContinuousClock.now < deadline {
                if let (_, new) = asker.primary(), new.term > result.term {
                    lines.append("\(new.member) is primary of term \(new.term)")
                    return lines
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            throw CtlError("\(result.to) did not serve as primary within \(Self.promotionTimeout)")
        }
        for line in lines { print(line) }
    }
}
