/**
 * The set of voters of a KRaft quorum (Kafka's VoterSet, KIP-853): each
 * voter's id, directory id, controller endpoints and supported kraft.version
 * range. With static voters (kraft.version 0) the set comes from
 * controller.quorum.voters and directory ids are ZERO; with kraft.version 1
 * it is the latest VotersRecord in the log or snapshot.
 *
 * A set is immutable: adding or removing a voter returns a new one (or null
 * when the change is not allowed: a duplicate id, an unknown voter, or
 * removing the last one).
 */
import { ZERO_UUID } from '../protocol/reader.js';
import type { Voters } from './control-records.js';

export interface VoterEndpoint {
  /** The listener name (controller.listener.names). */
  name: string;
  host: string;
  port: number;
}

export interface VoterNode {
  id: number;
  /** The voter's metadata log directory.id; ZERO_UUID for a static voter. */
  directoryId: string;
  endpoints: readonly VoterEndpoint[];
  kraftVersionMin: number;
  kraftVersionMax: number;
}

/** What Spool supports of kraft.version (0 static voters, 1 dynamic). */
export const KRAFT_VERSION_MIN = 0;
export const KRAFT_VERSION_MAX = 1;

/** The voter an AddRaftVoter or UpdateRaftVoter request names, with its supported kraft.version range. */
export function voterOfRequest(
  request: { voterId: number; voterDirectoryId: string; listeners: readonly VoterEndpoint[] },
  kraftVersions: { min: number; max: number },
): VoterNode {
  return {
    id: request.voterId,
    directoryId: request.voterDirectoryId,
    endpoints: request.listeners.map(({ name, host, port }) => ({ name, host, port })),
    kraftVersionMin: kraftVersions.min,
    kraftVersionMax: kraftVersions.max,
  };
}

export class VoterSet {
  private readonly byId: ReadonlyMap<number, VoterNode>;

  private constructor(voters: readonly VoterNode[]) {
    this.byId = new Map(voters.map((voter) => [voter.id, voter]));
    if (this.byId.size !== voters.length) throw new Error(`duplicate voter ids in ${voters.map((v) => v.id).join(',')}`);
  }

  /** A static quorum's voters (controller.quorum.voters), with endpoints when known. */
  static fromIds(ids: readonly number[], endpoints: (id: number) => readonly VoterEndpoint[] = () => []): VoterSet {
    return new VoterSet(ids.map((id) => ({ id, directoryId: ZERO_UUID, endpoints: endpoints(id), kraftVersionMin: 0, kraftVersionMax: 0 })));
  }

  static of(voters: readonly VoterNode[]): VoterSet {
    return new VoterSet(voters);
  }

  static fromVotersRecord(record: Voters): VoterSet {
    return new VoterSet(
      record.voters.map((voter) => ({
        id: voter.voterId,
        directoryId: voter.voterDirectoryId,
        endpoints: voter.endpoints.map((e) => ({ name: e.name, host: e.host, port: e.port })),
        kraftVersionMin: voter.kRaftVersionFeature.minSupportedVersion,
        kraftVersionMax: voter.kRaftVersionFeature.maxSupportedVersion,
      })),
    );
  }

  toVotersRecord(): Voters {
    return {
      version: 0,
      voters: this.voters.map((voter) => ({
        voterId: voter.id,
        voterDirectoryId: voter.directoryId,
        endpoints: voter.endpoints.map((e) => ({ ...e })),
        kRaftVersionFeature: { minSupportedVersion: voter.kraftVersionMin, maxSupportedVersion: voter.kraftVersionMax },
      })),
    };
  }

  /** The voters, by id. */
  get voters(): VoterNode[] {
    return [...this.byId.values()].sort((a, b) => a.id - b.id);
  }

  get ids(): number[] {
    return this.voters.map((voter) => voter.id);
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: number): VoterNode | undefined {
    return this.byId.get(id);
  }

  hasId(id: number): boolean {
    return this.byId.has(id);
  }

  /**
   * Whether (id, directoryId) is a voter (Kafka's isVoter(ReplicaKey)): the
   * id is in the set, and the directory ids agree unless either is unknown
   * (ZERO), as with static voters.
   */
  isVoter(id: number, directoryId: string): boolean {
    const voter = this.byId.get(id);
    if (voter === undefined) return false;
    return voter.directoryId === ZERO_UUID || directoryId === ZERO_UUID || voter.directoryId === directoryId;
  }

  /** The endpoint of `id` on listener `name` (the first when `name` is absent). */
  endpoint(id: number, name?: string): VoterEndpoint | undefined {
    const endpoints = this.byId.get(id)?.endpoints ?? [];
    return name === undefined ? endpoints[0] : endpoints.find((e) => e.name === name);
  }

  /** A set with `voter` added; null when its id is already a voter. */
  addVoter(voter: VoterNode): VoterSet | null {
    if (this.byId.has(voter.id)) return null;
    return new VoterSet([...this.voters, voter]);
  }

  /** A set without (id, directoryId); null when that is not a voter, or is the last one. */
  removeVoter(id: number, directoryId: string): VoterSet | null {
    const voter = this.byId.get(id);
    if (voter === undefined || voter.directoryId !== directoryId || this.byId.size === 1) return null;
    return new VoterSet(this.voters.filter((v) => v.id !== id));
  }

  /** A set with voter `id`'s endpoints and kraft.version range replaced; null when (id, directoryId) is not a voter. */
  updateVoter(voter: VoterNode): VoterSet | null {
    const current = this.byId.get(voter.id);
    if (current === undefined || current.directoryId !== voter.directoryId) return null;
    return new VoterSet(this.voters.map((v) => (v.id === voter.id ? voter : v)));
  }

  describe(): string {
    return `[${this.voters.map((v) => `${v.id}${v.directoryId === ZERO_UUID ? '' : `:${v.directoryId}`}`).join(', ')}]`;
  }
}
