/**
 * The Raft role state machine of one replica (Kafka's QuorumState and its
 * EpochState classes): Unattached, Prospective, Candidate, Leader, Resigned,
 * Follower.
 *
 * Transitions are pure: each returns the effects the client must carry out,
 * in order — persist the election state first (a vote or an epoch must be
 * durable before anyone learns of it), then append, send or notify. The
 * network half (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, in
 * raft-client.ts) drives them; a single voter elects itself.
 *
 * Pre-vote (KIP-996): a voter whose election or fetch timeout expires first
 * becomes Prospective in its current epoch and asks the voters whether they
 * would vote for it; only with a majority of pre-votes does it become a
 * Candidate and bump the epoch. A voter that still hears from its leader
 * refuses pre-votes, so a replica cut off from the quorum cannot disrupt it
 * by inflating the epoch when it comes back.
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

/** KIP-996: asking for pre-votes in the current epoch, remembering the leader and vote of that epoch. */
export interface ProspectiveState {
  role: 'prospective';
  epoch: number;
  leaderId: number | null;
  votedId: number;
  grantingVoters: ReadonlySet<number>;
  rejectingVoters: ReadonlySet<number>;
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

/** A leader that gave up its epoch (shutdown, or lost contact with a majority); it waits for the next election. */
export interface ResignedState {
  role: 'resigned';
  epoch: number;
}

export type EpochState = UnattachedState | ProspectiveState | CandidateState | LeaderState | ResignedState | FollowerState;

export type RaftEffect =
  | { type: 'persist'; election: ElectionState }
  | { type: 'appendLeaderChange'; epoch: number; leaderId: number; voters: readonly number[]; grantingVoters: readonly number[] }
  | { type: 'sendVoteRequests'; epoch: number; voters: readonly number[]; preVote: boolean }
  | { type: 'leaderChanged'; epoch: number; leaderId: number | null }
  | { type: 'highWatermark'; offset: number };

export class IllegalStateTransition extends Error {
  override readonly name = 'IllegalStateTransition';
}

export class QuorumState {
  private current: EpochState = { role: 'unattached', epoch: 0, votedId: NOT_VOTED };
  private voterIds: readonly number[];

  constructor(
    readonly localId: number,
    voters: readonly number[],
    /** The local metadata directory id, recorded with votes (KIP-853). */
    readonly localDirectoryId: string = ZERO_UUID,
  ) {
    if (new Set(voters).size !== voters.length) throw new IllegalStateTransition(`duplicate voters in ${voters.join(',')}`);
    this.voterIds = voters;
  }

  /** The voters as of the log end (KIP-853: a VotersRecord applies once appended, committed or not). */
  get voters(): readonly number[] {
    return this.voterIds;
  }

  /**
   * The voter set changed (a VotersRecord appended, or truncated away). A
   * leader starts tracking a new voter's end offset and forgets a removed
   * one's; the high watermark is counted over the new set from the next
   * update on, and never moves back.
   */
  setVoters(voters: readonly number[]): void {
    if (new Set(voters).size !== voters.length) throw new IllegalStateTransition(`duplicate voters in ${voters.join(',')}`);
    this.voterIds = voters;
    const state = this.current;
    if (state.role !== 'leader') return;
    const voterEndOffsets = new Map(voters.map((voter) => [voter, state.voterEndOffsets.get(voter) ?? -1]));
    this.current = { ...state, voterEndOffsets };
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
    if (this.current.role === 'leader' || this.current.role === 'resigned') return this.localId;
    if (this.current.role === 'follower' || this.current.role === 'prospective') return this.current.leaderId;
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
    const others = this.otherVoters;
    const effects: RaftEffect[] = [{ type: 'persist', election: this.election(NO_LEADER_ID, this.localId) }, { type: 'leaderChanged', epoch, leaderId: null }];
    if (others.length > 0) effects.push({ type: 'sendVoteRequests', epoch, voters: others, preVote: false });
    return effects;
  }

  /** KIP-996: asks for pre-votes in the current epoch (nothing is persisted: no vote is cast, no epoch bumped). */
  transitionToProspective(): RaftEffect[] {
    if (!this.isVoter) throw new IllegalStateTransition(`replica ${this.localId} is not a voter and cannot become prospective`);
    const state = this.current;
    if (state.role === 'leader') throw new IllegalStateTransition('a leader cannot become prospective');
    const votedId = state.role === 'unattached' || state.role === 'prospective' ? state.votedId : state.role === 'candidate' ? this.localId : NOT_VOTED;
    const leaderId = state.role === 'follower' || state.role === 'prospective' ? state.leaderId : null;
    this.current = { role: 'prospective', epoch: state.epoch, leaderId, votedId, grantingVoters: new Set([this.localId]), rejectingVoters: new Set() };
    const effects: RaftEffect[] = [];
    if (state.role === 'resigned') effects.push({ type: 'leaderChanged', epoch: state.epoch, leaderId: null });
    effects.push({ type: 'sendVoteRequests', epoch: state.epoch, voters: this.otherVoters, preVote: true });
    return effects;
  }

  /** A prospective that lost its pre-vote goes back to what it was in this epoch: following its leader, or unattached. */
  transitionFromProspective(): RaftEffect[] {
    const state = this.assertRole('prospective');
    if (state.leaderId !== null) {
      this.current = { role: 'follower', epoch: state.epoch, leaderId: state.leaderId, highWatermark: null };
      return [];
    }
    this.current = { role: 'unattached', epoch: state.epoch, votedId: state.votedId };
    return [];
  }

  /** A leader gives up its epoch; it stays the known leader of that epoch until another is elected. */
  transitionToResigned(): RaftEffect[] {
    const state = this.assertRole('leader');
    this.current = { role: 'resigned', epoch: state.epoch };
    return [];
  }

  /** Records a (pre-)vote for this candidate or prospective; true once a majority granted it. */
  recordGrantedVote(voterId: number): boolean {
    const state = this.assertElecting();
    if (!this.voters.includes(voterId)) throw new IllegalStateTransition(`vote from non-voter ${voterId}`);
    this.current = { ...state, grantingVoters: new Set([...state.grantingVoters, voterId]) };
    return this.isVoteGranted();
  }

  /** Records a refused (pre-)vote; true once a majority refused it. */
  recordRejectedVote(voterId: number): boolean {
    const state = this.assertElecting();
    if (!this.voters.includes(voterId)) throw new IllegalStateTransition(`vote from non-voter ${voterId}`);
    this.current = { ...state, rejectingVoters: new Set([...state.rejectingVoters, voterId]) };
    return this.isVoteRejected();
  }

  isVoteGranted(): boolean {
    const state = this.assertElecting();
    return state.grantingVoters.size > this.voters.length / 2;
  }

  isVoteRejected(): boolean {
    const state = this.assertElecting();
    const unrecorded = this.voters.length - state.grantingVoters.size - state.rejectingVoters.size;
    return state.grantingVoters.size + unrecorded <= this.voters.length / 2;
  }

  /**
   * Whether this replica grants a (pre-)vote to `candidateId` in the current
   * epoch (the caller first moved to a higher requested epoch). A standard
   * vote is granted once per epoch, to a candidate whose log is at least as
   * up to date; a pre-vote is only a question, granted when the log is up to
   * date and this replica has no leader it still hears from.
   */
  canGrantVote(candidateId: number, options: { logUpToDate: boolean; preVote: boolean; leaderReachable: boolean }): boolean {
    const state = this.current;
    if (options.preVote) {
      if (state.role === 'leader' || state.role === 'resigned') return false;
      if (state.role === 'follower' && options.leaderReachable) return false;
      return options.logUpToDate;
    }
    switch (state.role) {
      case 'unattached':
      case 'prospective':
        if (state.votedId !== NOT_VOTED) return state.votedId === candidateId;
        if (state.role === 'prospective' && state.leaderId !== null) return false;
        return options.logUpToDate;
      default:
        return false;
    }
  }

  /** Unattached in the current epoch, having voted for `candidateId` (persisted before the vote is answered). */
  recordVote(candidateId: number): RaftEffect[] {
    const state = this.current;
    if (state.role !== 'unattached' && state.role !== 'prospective') throw new IllegalStateTransition(`cannot vote as ${state.role}`);
    if (state.votedId === candidateId) return [];
    this.current = { role: 'unattached', epoch: state.epoch, votedId: candidateId };
    return [{ type: 'persist', election: this.election(NO_LEADER_ID, candidateId) }];
  }

  private get otherVoters(): number[] {
    return this.voters.filter((voter) => voter !== this.localId);
  }

  private assertElecting(): CandidateState | ProspectiveState {
    if (this.current.role !== 'candidate' && this.current.role !== 'prospective') {
      throw new IllegalStateTransition(`expected candidate or prospective, was ${this.current.role} in epoch ${this.current.epoch}`);
    }
    return this.current;
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
    if (epoch === this.current.epoch && this.current.role === 'leader') {
      throw new IllegalStateTransition(`a leader cannot follow ${leaderId} in its own epoch ${epoch}`);
    }
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
    const candidate = sorted[Math.floor(this.voters.length / 2)];
    if (candidate === undefined) throw new IllegalStateTransition(`no voters to count a high watermark over`);
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
