import Foundation
import ReceiptsCore
import ReceiptsWire

/// How receiptctl prints what receiptd says: one line of text, or one JSON object per line.
enum Rendering {
    static func text(event: Event, outcome: EventOutcome) -> String {
        "\(event.id.source)#\(event.id.sequence) \(describe(outcome))"
    }

    static func json(event: Event, outcome: EventOutcome) -> String {
        var object: [String: Any] = ["source": event.id.source, "sequence": event.id.sequence]
        switch outcome {
        case .accepted(let held):
            object["outcome"] = "accepted"
            object["held"] = held
        case .duplicate:
            object["outcome"] = "duplicate"
        case .rejected(let rejection):
            object["outcome"] = "rejected"
            object["reason"] = rejection.reason.name
            object["detail"] = rejection.detail
            if let owner = rejection.ownerWorker { object["ownerWorker"] = owner }
        }
        return encode(object)
    }

    static func describe(_ outcome: EventOutcome) -> String {
        switch outcome {
        case .accepted(let held): held ? "accepted (held until its message arrives)" : "accepted"
        case .duplicate: "duplicate"
        case .rejected(let rejection): "rejected \(rejection.reason.name): \(rejection.detail)"
        }
    }

    static func text(_ status: MessageStatus, displayText: String?) -> String {
        var line =
            "\(status.conversation)/\(status.message) #\(status.sequence) from \(status.sender): \(name(status.status))"
        line +=
            " delivered \(status.deliveredCount)/\(status.recipientCount) read \(status.readCount)/\(status.recipientCount)"
        if let deliveredAt = status.deliveredAt { line += " deliveredAt \(iso(deliveredAt))" }
        if let readAt = status.readAt { line += " readAt \(iso(readAt))" }
        if status.isEdited { line += " edited" }
        if status.isDeleted { line += " deleted" }
        if let displayText { line += " text \"\(displayText)\"" }
        return line
    }

    static func object(_ status: MessageStatus, displayText: String?) -> [String: Any] {
        var object: [String: Any] = [
            "conversation": status.conversation, "message": status.message, "sequence": status.sequence,
            "sender": status.sender, "sentAt": status.sentAt.milliseconds, "status": name(status.status),
            "recipients": status.recipientCount, "delivered": status.deliveredCount, "read": status.readCount,
            "system": status.isSystem, "edited": status.isEdited, "deleted": status.isDeleted,
        ]
        if let deliveredAt = status.deliveredAt { object["deliveredAt"] = deliveredAt.milliseconds }
        if let readAt = status.readAt { object["readAt"] = readAt.milliseconds }
        if let displayText { object["displayText"] = displayText }
        return object
    }

    /// A user's read state in one conversation, as `query unread` and `tail --user` print it.
    static func text(_ count: UnreadCount) -> String {
        "\(count.conversation): \(count.unread) unread, \(count.unreadMentions) mentioning them, "
            + "\(count.unreadThreads) threads with unread replies\(count.isMarkedUnread ? " (marked unread)" : "") "
            + "readUpTo #\(count.readUpTo)\(count.hasLeft ? " (left)" : "")"
    }

    static func object(_ count: UnreadCount) -> [String: Any] {
        [
            "conversation": count.conversation, "unread": count.unread, "markedUnread": count.isMarkedUnread,
            "readUpTo": count.readUpTo, "left": count.hasLeft, "unreadMentions": count.unreadMentions,
            "unreadThreads": count.unreadThreads,
        ]
    }

    /// A user's read state in one thread.
    static func text(_ thread: ThreadReadState) -> String {
        "\(thread.conversation) thread \(thread.thread): \(thread.unread) unread, \(thread.unreadMentions) "
            + "mentioning them readUpTo #\(thread.readUpTo)\(thread.isFollowing ? " (following)" : "")"
            + (thread.hasLeft ? " (left)" : "")
    }

    static func object(_ thread: ThreadReadState) -> [String: Any] {
        [
            "conversation": thread.conversation, "thread": thread.thread, "unread": thread.unread,
            "unreadMentions": thread.unreadMentions, "readUpTo": thread.readUpTo, "following": thread.isFollowing,
            "left": thread.hasLeft,
        ]
    }

    static func object(_ receipt: RecipientReceipt) -> [String: Any] {
        var object: [String: Any] = [
            "user": receipt.user, "deletedUser": receipt.isUserDeleted, "left": receipt.hasLeft,
        ]
        if let deliveredAt = receipt.deliveredAt { object["deliveredAt"] = deliveredAt.milliseconds }
        if let readAt = receipt.readAt { object["readAt"] = readAt.milliseconds }
        return object
    }

    static func name(_ status: ReceiptStatus) -> String {
        switch status {
        case .none: "none"
        case .notDelivered: "notDelivered"
        case .delivered: "delivered"
        case .read: "read"
        case .readBySome: "readBySome"
        case .readByAll: "readByAll"
        }
    }

    static func iso(_ time: Timestamp) -> String {
        Date(timeIntervalSince1970: Double(time.milliseconds) / 1000).formatted(.iso8601)
    }

    static func encode(_ object: [String: Any]) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Prints a query reply as text or JSON.
    static func print(_ reply: QueryReply, json: Bool) throws {
        switch reply {
        case .messageStatus(let status, let displayText), .lastSent(let status, let displayText):
            Swift.print(
                json ? encode(object(status, displayText: displayText)) : text(status, displayText: displayText)
            )
        case .readDetail(let detail):
            if json {
                Swift.print(
                    encode([
                        "status": object(detail.status, displayText: nil),
                        "read": detail.read.map(object), "delivered": detail.delivered.map(object),
                        "notDelivered": detail.notDelivered.map(object),
                        "nextCursor": detail.nextCursor ?? "",
                    ])
                )
            } else {
                Swift.print(text(detail.status, displayText: nil))
                for (title, receipts) in [
                    ("Read", detail.read), ("Delivered", detail.delivered), ("Not delivered", detail.notDelivered),
                ] {
                    Swift.print("\(title):")
                    for receipt in receipts {
                        let name = receipt.isUserDeleted ? "\(receipt.user) (Deleted User)" : receipt.user
                        let when = receipt.readAt.map { " at \(iso($0))" } ?? ""
                        Swift.print("  \(name)\(when)\(receipt.hasLeft ? " (left)" : "")")
                    }
                }
                if let next = detail.nextCursor { Swift.print("Next page: --cursor '\(next)'") }
            }
        case .unreadCounts(let counts, _, _, let threads):
            for count in counts { Swift.print(json ? encode(object(count)) : text(count)) }
            for thread in threads { Swift.print(json ? encode(object(thread)) : text(thread)) }
        case .snapshot(let snapshot, let publisherRun, let sequence):
            if json {
                Swift.print(
                    encode([
                        "conversation": snapshot.conversation, "kind": snapshot.kind == .direct ? "direct" : "group",
                        "members": snapshot.members, "epoch": publisherRun, "sequence": sequence,
                        "messages": snapshot.messages.map { object($0, displayText: nil) },
                    ])
                )
            } else {
                Swift.print(
                    "\(snapshot.conversation) (\(snapshot.kind == .direct ? "direct" : "group")) members \(snapshot.members.joined(separator: ",")) epoch \(publisherRun) sequence \(sequence)"
                )
                for message in snapshot.messages { Swift.print("  " + text(message, displayText: nil)) }
            }
        case .health(let health):
            Swift.print(
                json
                    ? encode([
                        "state": health.state, "workerIndex": health.workerIndex, "workerCount": health.workerCount,
                        "uptimeMs": health.uptimeMilliseconds, "epoch": health.publisherRun,
                    ])
                    : "\(health.state) worker \(health.workerIndex)/\(health.workerCount) up \(health.uptimeMilliseconds) ms epoch \(health.publisherRun)"
            )
        case .stats(let counters):
            for counter in counters {
                let name = counter.label.isEmpty ? counter.name : "\(counter.name){\(counter.label)}"
                Swift.print(
                    json
                        ? encode(["name": counter.name, "label": counter.label, "value": counter.value])
                        : "\(name) \(counter.value)"
                )
            }
        case .compact(let result):
            Swift.print(
                json
                    ? encode([
                        "snapshotBytes": result.snapshotBytes, "segmentsRemoved": result.segmentsRemoved,
                        "messagesExpired": result.messagesExpired,
                    ])
                    : "compacted: snapshot \(result.snapshotBytes) bytes, \(result.segmentsRemoved) segments removed, \(result.messagesExpired) messages expired"
            )
        case .topology(let report):
            Swift.print(json ? encode(object(report)) : text(report))
        case .exportResult(let result):
            Swift.print(
                json
                    ? encode([
                        "conversations": result.conversations, "stateBytes": result.state.count,
                        "remaining": result.remaining,
                    ])
                    : "exported \(result.conversations.count) conversations (\(result.state.count) bytes), \(result.remaining) to go"
            )
        case .importResult(let imported, let alreadyHeld):
            Swift.print(
                json
                    ? encode(["imported": imported, "alreadyHeld": alreadyHeld])
                    : "imported \(imported) conversations, \(alreadyHeld) held already"
            )
        case .handOver(let result):
            Swift.print(
                json
                    ? encode(["from": result.from, "to": result.to, "term": result.term])
                    : "\(result.from) handed the ordinal over to \(result.to) (term \(result.term) ended)"
            )
        case .error(let error):
            throw CtlError("\(error.code): \(error.message)")
        }
    }

    /// A worker's placement as one line.
    static func text(_ report: TopologyReport) -> String {
        let move = report.targetCount.map { ", moving to \($0) workers" } ?? ""
        let completed = report.completedSenders.isEmpty ? "" : ", all arrived from \(report.completedSenders)"
        return "worker \(report.workerIndex): \(report.workerCount) workers (epoch \(report.moveEpoch))\(move); "
            + "owned \(report.owned) (imported \(report.imported)), frozen \(report.frozen), released \(report.released)"
            + completed
    }

    /// A worker's placement for `--json`.
    static func object(_ report: TopologyReport) -> [String: Any] {
        [
            "workerIndex": report.workerIndex, "workerCount": report.workerCount, "epoch": report.moveEpoch,
            "targetCount": report.targetCount as Any, "completedSenders": report.completedSenders,
            "owned": report.owned, "imported": report.imported, "frozen": report.frozen, "released": report.released,
        ]
    }
}
