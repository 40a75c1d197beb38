/// A failure to report to the operator (receiptctl prints it and exits 1).
struct CtlError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
