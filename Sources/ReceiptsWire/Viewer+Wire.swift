import CReceiptsProto
import ReceiptsCore

extension Viewer {
    /// The viewer from the wire; an absent one is the anonymous viewer (no display text).
    init(wire pointer: UnsafeMutablePointer<Receipts__V1__Viewer>?) {
        guard let viewer = pointer?.pointee else {
            self.init(user: "")
            return
        }
        self.init(
            user: String(wire: viewer.user_id),
            timeZone: String(wire: viewer.time_zone),
            locale: String(wire: viewer.locale),
            prefersCounts: viewer.counts != 0
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__Viewer> {
        let viewer = arena.message(receipts__v1__viewer__init)
        viewer.pointee.user_id = arena.cString(user)
        viewer.pointee.time_zone = arena.cString(timeZone)
        viewer.pointee.locale = arena.cString(locale)
        viewer.pointee.counts = prefersCounts ? 1 : 0
        return viewer
    }
}
