import ArgumentParser
import Logging
import ReceiptsCoordination
import ReceiptsReplication
import ReceiptsService

extension Receiptd {
    /// The etcd coordinator that decides this member's role, when replication is on with etcd.
    func makeCoordinator(
        _ settings: Settings,
        configuration: ServiceConfiguration,
        logger: Logger
    ) throws -> (any Coordinator)? {
        guard let replication = configuration.replication, replication.role == .elected,
            let endpoints = replicationOptions.etcdEndpoints(settings)
        else { return nil }
        do {
            return try EtcdCoordinator(
                endpoints: endpoints,
                prefix: replicationOptions.prefix(settings),
                ordinal: configuration.workerIndex,
                member: replication.member,
                leaseTTLSeconds: Int64(try replicationOptions.leaseTTLSeconds(settings)),
                leaseFilePath: configuration.dataDirectory + "/lease",
                logger: Logger(label: "receiptd.etcd")
            )
        } catch let error as CoordinationError {
            throw ValidationError(error.description)
        }
    }
}
