/**
 * What the KRaft RPC handlers share: a request that reaches a Raft client
 * already closed (the node is stopping: its controller listener still
 * serves while the metadata log closes) gets no answer and its connection
 * is closed, as Kafka's ControllerServer stops processing requests before
 * its Raft manager shuts down; the sender reconnects to another replica.
 */
import { RaftClosedError } from '../../raft/raft-client.js';
import { CloseConnection } from '../handler.js';

export async function whileRaftOpen<T>(serve: () => Promise<T>): Promise<T | CloseConnection> {
  try {
    return await serve();
  } catch (error) {
    if (error instanceof RaftClosedError) return new CloseConnection('the metadata log is closed: the node is stopping');
    throw error;
  }
}
