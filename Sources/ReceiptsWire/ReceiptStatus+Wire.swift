import CReceiptsProto
import ReceiptsCore

extension ReceiptStatus {
    /// The status from the wire. The proto numbers differ from the Swift order, hence the
    /// explicit table. UNSPECIFIED and numbers from a newer peer read as `.none` (show nothing):
    /// claiming less than the peer meant is the safe side for a receipt.
    init(wire: Receipts__V1__ReceiptStatus) {
        switch wire {
        case RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_NOT_DELIVERED: self = .notDelivered
        case RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_DELIVERED: self = .delivered
        case RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ: self = .read
        case RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ_BY_SOME: self = .readBySome
        case RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ_BY_ALL: self = .readByAll
        default: self = .none
        }
    }

    var wire: Receipts__V1__ReceiptStatus {
        switch self {
        case .none: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_NONE
        case .notDelivered: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_NOT_DELIVERED
        case .delivered: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_DELIVERED
        case .read: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ
        case .readBySome: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ_BY_SOME
        case .readByAll: RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ_BY_ALL
        }
    }
}
