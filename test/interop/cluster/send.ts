/**
 * One request to a node of a real-process cluster test: a fresh connection
 * to 127.0.0.1:`port`, closed after `operation` whatever it does.
 */
import { BrokerConnection } from '../../../src/client/connection.js';
import { realEnv } from '../../../src/io/env.js';

/** How long one request to a node may take before the test's probe counts it as unanswered. */
const REQUEST_TIMEOUT_MS = 5000;

export async function send<T>(port: number, operation: (connection: BrokerConnection) => Promise<T>): Promise<T> {
  const connection = await BrokerConnection.connect({ host: '127.0.0.1', port, env: realEnv, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  try {
    return await operation(connection);
  } finally {
    connection.destroy();
  }
}
