import CReceiptsProto
import ReceiptsCore

extension Viewer {
    /// The viewer from the wire; an absent one is the anonymous viewer (no display text).
    /// - Throws: `WireError` `.invalidField` from `strings`, naming the field (`viewer.locale`).
    init(wire pointer: UnsafeMutablePointer<Receipts__V1__Viewer>?, strings: RequestStrings) throws(WireError) {
        guard let viewer = pointer?.pointee else {
            self.init(user: "")
            return
        }
        self.init(
            user: try strings.string(viewer.user_id, "viewer.user_id"),
            timeZone: try strings.string(viewer.time_zone, "viewer.time_zone"),
            locale: try strings.string(viewer.locale, "viewer.locale"),
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
