/**
 * The `quorum-state` file in the `__cluster_metadata-0` directory: the
 * election state a voter must not forget across restarts (the epoch it is
 * in, whom it voted for, who leads), so it never votes twice in one epoch.
 *
 * Format: Kafka's FileQuorumStateStore, one line of JSON (QuorumStateData
 * with a `data_version` field):
 *   v0 (kraft.version 0, static voters):
 *     {"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,
 *      "currentVoters":[{"voterId":1}],"data_version":0}
 *   v1 (kraft.version 1):
 *     {"leaderId":1,"leaderEpoch":3,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}
 * -1 means none (no leader known, no vote cast).
 *
 * Crash policy: written to `quorum-state.tmp`, fsynced, renamed over the file
 * and the directory fsynced, before the state change takes effect (a vote
 * is durable before it is granted). A file that does not parse is an error:
 * guessing could make this voter vote twice.
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import { ZERO_UUID } from '../protocol/reader.js';

export const QUORUM_STATE_FILE = 'quorum-state';
export const NOT_VOTED = -1;
export const NO_LEADER_ID = -1;

export interface ElectionState {
  epoch: number;
  /** -1 when no leader is known in this epoch. */
  leaderId: number;
  /** -1 when this node has not voted in this epoch. */
  votedId: number;
  /** The voted replica's directory id (v1); ZERO_UUID when unknown. */
  votedDirectoryId: string;
  /** The voters of a static quorum (v0's currentVoters). */
  voters: readonly number[];
}

export class QuorumStateFileError extends Error {
  override readonly name = 'QuorumStateFileError';
}

export function emptyElectionState(voters: readonly number[]): ElectionState {
  return { epoch: 0, leaderId: NO_LEADER_ID, votedId: NOT_VOTED, votedDirectoryId: ZERO_UUID, voters };
}

export function formatQuorumState(state: ElectionState, dataVersion: 0 | 1): string {
  if (dataVersion === 0) {
    return JSON.stringify({
      clusterId: '',
      leaderId: state.leaderId,
      leaderEpoch: state.epoch,
      votedId: state.votedId,
      appliedOffset: 0,
      currentVoters: state.voters.map((voterId) => ({ voterId })),
      data_version: 0,
    });
  }
  return JSON.stringify({
    leaderId: state.leaderId,
    leaderEpoch: state.epoch,
    votedId: state.votedId,
    votedDirectoryId: state.votedDirectoryId,
    data_version: 1,
  });
}

export function parseQuorumState(text: string, path: string): ElectionState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new QuorumStateFileError(`${path}: not JSON (${(error as Error).message})`);
  }
  const data = json as Record<string, unknown>;
  const int = (name: string, fallback: number): number => {
    const value = data[name] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new QuorumStateFileError(`${path}: ${name} is not an integer`);
    return value;
  };
  const version = int('data_version', -1);
  if (version !== 0 && version !== 1) throw new QuorumStateFileError(`${path}: unknown data_version ${String(data.data_version)}`);
  const voters = Array.isArray(data.currentVoters) ? data.currentVoters.map((v) => Number((v as { voterId: unknown }).voterId)) : [];
  return {
    epoch: int('leaderEpoch', -1),
    leaderId: int('leaderId', NO_LEADER_ID),
    votedId: int('votedId', NOT_VOTED),
    votedDirectoryId: typeof data.votedDirectoryId === 'string' ? data.votedDirectoryId : ZERO_UUID,
    voters,
  };
}

export async function readQuorumState(fs: FileSystem, dir: string): Promise<ElectionState | null> {
  const path = posix.join(dir, QUORUM_STATE_FILE);
  if ((await fs.stat(path)) === null) return null;
  return parseQuorumState((await fs.readFile(path)).toString('utf8'), path);
}

export async function writeQuorumState(fs: FileSystem, dir: string, state: ElectionState, dataVersion: 0 | 1): Promise<void> {
  await fs.writeFileAtomic(posix.join(dir, QUORUM_STATE_FILE), Buffer.from(formatQuorumState(state, dataVersion), 'utf8'));
  await fs.syncDir(dir);
}
