extension String {
    /// The string, or nil when it is empty (proto3's absent string).
    var nonEmpty: String? { isEmpty ? nil : self }
}
