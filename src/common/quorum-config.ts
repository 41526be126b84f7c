/**
 * The KRaft quorum settings (Kafka's QuorumConfig):
 *   controller.quorum.voters             static voters, `{id}@{host}:{port}`
 *   controller.quorum.bootstrap.servers  where a node finds the quorum when
 *                                        the voters are dynamic (KIP-853),
 *                                        `{host}:{port}`
 * parsed with Kafka's rules and error messages (Utils.getHost/getPort: an
 * optional `scheme://`, an IPv6 host in brackets, digits for the port).
 */
import { ConfigError } from './config.js';

export const QUORUM_VOTERS_CONFIG = 'controller.quorum.voters';
export const QUORUM_BOOTSTRAP_SERVERS_CONFIG = 'controller.quorum.bootstrap.servers';

export interface HostAndPort {
  host: string;
  port: number;
}

export interface QuorumVoter extends HostAndPort {
  id: number;
}

/** Kafka's Utils.HOST_PORT_PATTERN and VALID_HOST_CHARACTERS. */
const HOST_PORT_PATTERN = /^(?:[0-9a-zA-Z\-%._]*:\/\/)?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)$/;
const VALID_HOST_CHARACTERS = /^[0-9a-zA-Z\-%._:]*$/;
/** The meta-address no peer can connect to. */
const NON_ROUTABLE_HOST = '0.0.0.0';
const JAVA_INT_MAX = 2_147_483_647;

function hostAndPort(address: string): { host: string | null; port: number | null } {
  const match = HOST_PORT_PATTERN.exec(address);
  if (match === null) return { host: null, port: null };
  const port = Number(match[2]);
  return { host: match[1]!, port: port <= JAVA_INT_MAX ? port : null };
}

/** Java's Integer.parseInt: an optional sign and decimal digits, within an int. */
function parseJavaInt(text: string): number | null {
  if (!/^[+-]?\d+$/.test(text)) return null;
  const value = Number(text);
  return value >= -JAVA_INT_MAX - 1 && value <= JAVA_INT_MAX ? value : null;
}

export function parseQuorumVoters(entries: readonly string[]): QuorumVoter[] {
  const form = 'Each entry should be in the form `{id}@{host}:{port}`.';
  return entries.map((entry) => {
    const parts = entry.split('@');
    if (parts.length !== 2) throw new ConfigError(`Invalid configuration value for ${QUORUM_VOTERS_CONFIG}. ${form}`);
    const id = parseJavaInt(parts[0]!);
    if (id === null) throw new ConfigError(`Failed to parse voter ID as an integer from ${parts[0]}`);
    const { host, port } = hostAndPort(parts[1]!);
    if (host === null || !VALID_HOST_CHARACTERS.test(host)) {
      throw new ConfigError(`Failed to parse host name from entry ${entry} for the configuration ${QUORUM_VOTERS_CONFIG}. ${form}`);
    }
    if (port === null) throw new ConfigError(`Failed to parse host port from entry ${entry} for the configuration ${QUORUM_VOTERS_CONFIG}. ${form}`);
    if (host === NON_ROUTABLE_HOST) throw new ConfigError(`Host string (${host}) is not routeable`);
    return { id, host, port };
  });
}

export function parseQuorumBootstrapServers(entries: readonly string[]): HostAndPort[] {
  const form = 'Each entry should be in the form "{host}:{port}"';
  return entries.map((entry) => {
    const { host, port } = hostAndPort(entry);
    if (host === null || !VALID_HOST_CHARACTERS.test(host)) {
      throw new ConfigError(`Failed to parse host name from ${entry} for the configuration ${QUORUM_BOOTSTRAP_SERVERS_CONFIG}. ${form}`);
    }
    if (port === null) throw new ConfigError(`Failed to parse host port from ${entry} for the configuration ${QUORUM_BOOTSTRAP_SERVERS_CONFIG}. ${form}`);
    return { host, port };
  });
}
