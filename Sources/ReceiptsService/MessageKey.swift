/// A message's identity across the service: its conversation and its sequence in it.
struct MessageKey: Hashable {
    var conversation: String
    var sequence: UInt64
}
