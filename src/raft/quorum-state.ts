/**
 * The Raft role state machine of one replica (Kafka's QuorumState and its
 * EpochState classes): Unattached, Candidate, Leader, Follower.
 *
 * Transitions are pure: each returns the effects the client must carry out,
 * in order — persist the election state first (a vote or an epoch must be
 * durable before anyone learns of it), then append, send or notify. The
 * network half (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch) drives the
 * same transitions once more voters arrive; a single voter elects itself.
 *
 * Leader high watermark (Kafka's LeaderState): the largest offset that a
 * majority of voters has flushed, and only once it passes the epoch start
 * offset (the leader's LeaderChangeMessage), so a new leader never commits
 * entries of earlier epochs by counting alone. It never moves backwards.
 */
import { ZERO_UUID } from '../protocol/reader.js';
import { NO_LEADER_ID, NOT_VOTED, type ElectionState } from './quorum-state-file.js';

export interface UnattachedState {
  role: 'unattached';
  epoch: number;
  /** NOT_VOTED, or whom this replica voted for in `epoch`. */
  votedId: number;
}

export interface CandidateState {
  role: 'candidate';
  epoch: number;
  grantingVoters: ReadonlySet<number>;
  rejectingVoters: ReadonlySet<number>;
}

export interface LeaderState {
  role: 'leader';
  epoch: number;
  /** Offset of this leader's LeaderChangeMessage. */
  epochStartOffset: number;
  grantingVoters: ReadonlySet<number>;
  /** Flushed log end offset of each voter, as last known. */
  voterEndOffsets: ReadonlyMap<number, number>;
  highWatermark: number | null;
}

export interface FollowerState {
  role: 'follower';
  epoch: number;
  leaderId: number;
  highWatermark: number | null;
}

export type EpochState = UnattachedState | CandidateState | LeaderState | FollowerState;

export type RaftEffect =
  | { type: 'persist'; election: ElectionState }
  | { type: 'appendLeaderChange'; epoch: number; leaderId: number; voters: readonly number[]; grantingVoters: readonly number[] }
  | { type: 'sendVoteRequests'; epoch: number; voters: readonly number[] }
  | { type: 'leaderChanged'; epoch: number; leaderId: number | null }
  | { type: 'highWatermark'; offset: number };

export class IllegalStateTransition extends Error {
  override readonly name = 'IllegalStateTransition';
}

export class QuorumState {
  private current: EpochState = { role: 'unattached', epoch: 0, votedId: NOT_VOTED };

  constructor(
    readonly localId: number,
    readonly voters: readonly number[],
    /** The local metadata directory id, recorded with votes (KIP-853). */
    readonly localDirectoryId: string = ZERO_UUID,
  ) {
    if (new Set(voters).size !== voters.length) throw new IllegalStateTransition(`duplicate voters in ${voters.join(',')}`);
  }

  get state(): EpochState {
    return this.current;
  }

  get epoch(): number {
    return this.current.epoch;
  }

  get isVoter(): boolean {
    return this.voters.includes(this.localId);
  }

  get isLeader(): boolean {
    return this.current.role === 'leader';
  }

  /** The leader of the current epoch, or null when unknown. */
  get leaderId(): number | null {
    if (this.current.role === 'leader') return this.localId;
    if (this.current.role === 'follower') return this.current.leaderId;
    return null;
  }

  get highWatermark(): number | null {
    return this.current.role === 'leader' || this.current.role === 'follower' ? this.current.highWatermark : null;
  }

  /**
   * Restores the persisted election state. The log may carry a later epoch
   * than the file (a crash after appending, before persisting): then the
   * replica starts unattached in the log's epoch. A persisted leadership of
   * this replica is not resumed: a restarted leader has lost its in-memory
   * state and must win a new epoch.
   */
  initialize(persisted: ElectionState | null, logEndEpoch: number): RaftEffect[] {
    this.assertRole('unattached');
    if (persisted === null || persisted.epoch < logEndEpoch) {
      this.current = { role: 'unattached', epoch: Math.max(0, logEndEpoch), votedId: NOT_VOTED };
      return [];
    }
    if (persisted.leaderId !== NO_LEADER_ID && persisted.leaderId !== this.localId) {
      this.current = { role: 'follower', epoch: persisted.epoch, leaderId: persisted.leaderId, highWatermark: null };
      return [{ type: 'leaderChanged', epoch: persisted.epoch, leaderId: persisted.leaderId }];
    }
    this.current = { role: 'unattached', epoch: persisted.epoch, votedId: persisted.leaderId === this.localId ? this.localId : persisted.votedId };
    return [];
  }

  /** Starts an election in the next epoch, voting for itself. */
  transitionToCandidate(): RaftEffect[] {
    if (!this.isVoter) throw new IllegalStateTransition(`replica ${this.localId} is not a voter and cannot become candidate`);
    if (this.current.role === 'leader') throw new IllegalStateTransition('a leader cannot become candidate');
    const epoch = this.current.epoch + 1;
    this.current = { role: 'candidate', epoch, grantingVoters: new Set([this.localId]), rejectingVoters: new Set() };
    const others = this.voters.filter((voter) => voter !== this.localId);
    const effects: RaftEffect[] = [{ type: 'persist', election: this.election(NO_LEADER_ID, this.localId) }, { type: 'leaderChanged', epoch, leaderId: null }];
    if (others.length > 0) effects.push({ type: 'sendVoteRequests', epoch, voters: others });
    return effects;
  }

  /** Records a vote for this candidate; true once a majority granted it. */
  recordGrantedVote(voterId: number): boolean {
    const state = this.assertRole('candidate');
    if (!this.voters.includes(voterId)) throw new IllegalStateTransition(`vote from non-voter ${voterId}`);
    this.current = { ...state, grantingVoters: new Set([...state.grantingVoters, voterId]) };
    return this.isVoteGranted();
  }

  isVoteGranted(): boolean {
    const state = this.assertRole('candidate');
    return state.grantingVoters.size > this.voters.length / 2;
  }

  /** Becomes leader of the candidate's epoch; its LeaderChangeMessage goes at `epochStartOffset`. */
  transitionToLeader(epochStartOffset: number): RaftEffect[] {
    const state = this.assertRole('candidate');
    if (!this.isVoteGranted()) throw new IllegalStateTransition(`candidate of epoch ${state.epoch} has no majority`);
    const granting = [...state.grantingVoters].sort((a, b) => a - b);
    this.current = {
      role: 'leader',
      epoch: state.epoch,
      epochStartOffset,
      grantingVoters: state.grantingVoters,
      voterEndOffsets: new Map(this.voters.map((voter) => [voter, -1])),
      highWatermark: null,
    };
    return [
      { type: 'persist', election: this.election(this.localId, this.localId) },
      { type: 'appendLeaderChange', epoch: state.epoch, leaderId: this.localId, voters: [...this.voters], grantingVoters: granting },
      { type: 'leaderChanged', epoch: state.epoch, leaderId: this.localId },
    ];
  }

  /** Follows `leaderId` in `epoch` (learned from BeginQuorumEpoch or a Fetch response). */
  transitionToFollower(epoch: number, leaderId: number): RaftEffect[] {
    if (epoch < this.current.epoch) throw new IllegalStateTransition(`cannot follow epoch ${epoch} from epoch ${this.current.epoch}`);
    if (leaderId === this.localId) throw new IllegalStateTransition('cannot follow itself');
    this.current = { role: 'follower', epoch, leaderId, highWatermark: null };
    return [{ type: 'persist', election: this.election(leaderId, NOT_VOTED) }, { type: 'leaderChanged', epoch, leaderId }];
  }

  /** Moves to a higher epoch without a leader (a higher epoch was seen). */
  transitionToUnattached(epoch: number): RaftEffect[] {
    if (epoch <= this.current.epoch) throw new IllegalStateTransition(`cannot move to epoch ${epoch} from epoch ${this.current.epoch}`);
    this.current = { role: 'unattached', epoch, votedId: NOT_VOTED };
    return [{ type: 'persist', election: this.election(NO_LEADER_ID, NOT_VOTED) }, { type: 'leaderChanged', epoch, leaderId: null }];
  }

  /** Leader: a voter (itself included) has flushed up to `endOffset`; the high watermark may advance. */
  updateVoterEndOffset(voterId: number, endOffset: number): RaftEffect[] {
    const state = this.assertRole('leader');
    if (!state.voterEndOffsets.has(voterId)) throw new IllegalStateTransition(`end offset from non-voter ${voterId}`);
    const voterEndOffsets = new Map(state.voterEndOffsets).set(voterId, endOffset);
    const sorted = [...voterEndOffsets.values()].sort((a, b) => b - a);
    const candidate = sorted[Math.floor(this.voters.length / 2)]!;
    const advances = candidate > state.epochStartOffset && (state.highWatermark === null || candidate > state.highWatermark);
    this.current = { ...state, voterEndOffsets, highWatermark: advances ? candidate : state.highWatermark };
    return advances ? [{ type: 'highWatermark', offset: candidate }] : [];
  }

  /** Follower: the leader's high watermark, bounded by what this replica has. */
  updateFollowerHighWatermark(highWatermark: number): RaftEffect[] {
    const state = this.assertRole('follower');
    if (state.highWatermark !== null && highWatermark <= state.highWatermark) return [];
    this.current = { ...state, highWatermark };
    return [{ type: 'highWatermark', offset: highWatermark }];
  }

  private election(leaderId: number, votedId: number): ElectionState {
    return {
      epoch: this.current.epoch,
      leaderId,
      votedId,
      votedDirectoryId: votedId === this.localId ? this.localDirectoryId : ZERO_UUID,
      voters: this.voters,
    };
  }

  private assertRole<R extends EpochState['role']>(role: R): Extract<EpochState, { role: R }> {
    if (this.current.role !== role) throw new IllegalStateTransition(`expected ${role}, was ${this.current.role} in epoch ${this.current.epoch}`);
    return this.current as Extract<EpochState, { role: R }>;
  }
}
