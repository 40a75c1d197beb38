import Foundation
import Synchronization
import Testing

@testable import ReceiptsClient

/// The inbox queues commands in the order they were made: a command built inside `post` (where
/// the client numbers events) is not overtaken by a post that starts while it is being built.
struct ClientInboxTests {
    /// Progress of the two posts, shared with the second post's thread.
    private final class Progress: Sendable {
        let firstIsBeingMade = Atomic(false)
        let secondPosted = Atomic(false)
    }

    @Test func commandBeingMadeIsNotOvertaken() throws {
        let inbox = try ClientInbox()
        let progress = Progress()
        let second = Thread {
            while !progress.firstIsBeingMade.load(ordering: .acquiring) {}
            inbox.post(.cancel(id: 2))
            progress.secondPosted.store(true, ordering: .releasing)
        }
        second.start()
        inbox.post {
            progress.firstIsBeingMade.store(true, ordering: .releasing)
            // Long enough for the second post to overtake this one if it could.
            let deadline = Date().addingTimeInterval(0.2)
            while !progress.secondPosted.load(ordering: .acquiring), Date() < deadline {}
            return .cancel(id: 1)
        }
        while !progress.secondPosted.load(ordering: .acquiring) {}
        let ids = inbox.take().map { command -> UInt64? in
            guard case .cancel(let id) = command else { return nil }
            return id
        }
        #expect(ids == [1, 2])
    }
}
