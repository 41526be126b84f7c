/**
 * The kraft.version and voter set as the log says at each offset (Kafka's
 * KRaftControlRecordStateMachine with its LogHistory): the KRaftVersionRecord
 * and VotersRecord control records of the latest snapshot and of the log
 * after it, each kept with its offset.
 *
 * KIP-853: a replica uses the latest voter set in its log at once, committed
 * or not, so a truncation of the log drops the entries past its new end and
 * the replica goes back to the voters it had. Entries below a snapshot the
 * log was replaced with are dropped; the snapshot's own records stand at the
 * offset just below it. With no record at all the voters are the static ones
 * (controller.quorum.voters) and kraft.version is 0.
 */
import type { RaftControlRecord } from './control-records.js';
import { VoterSet } from './voter-set.js';

export interface Entry<V> {
  offset: number;
  value: V;
}

export class KRaftControlState {
  private voterHistory: Entry<VoterSet>[] = [];
  private versionHistory: Entry<number>[] = [];

  /** `staticVoters` is what applies before any VotersRecord (empty for a dynamic quorum that has none yet). */
  constructor(private readonly staticVoters: VoterSet) {}

  /** The voters as of the log end, uncommitted changes included. */
  get lastVoterSet(): VoterSet {
    return this.voterHistory[this.voterHistory.length - 1]?.value ?? this.staticVoters;
  }

  /** The latest VotersRecord and its offset; null when the voters are static. */
  get lastVoterSetEntry(): Entry<VoterSet> | null {
    return this.voterHistory[this.voterHistory.length - 1] ?? null;
  }

  get lastKraftVersion(): number {
    return this.versionHistory[this.versionHistory.length - 1]?.value ?? 0;
  }

  /** The voters in force at `offset` (what a snapshot ending after `offset` records). */
  voterSetAt(offset: number): VoterSet {
    let found = this.staticVoters;
    for (const entry of this.voterHistory) if (entry.offset <= offset) found = entry.value;
    return found;
  }

  /** The VotersRecord in force at `offset`; null when none is (static voters). */
  recordedVoterSetAt(offset: number): VoterSet | null {
    let found: VoterSet | null = null;
    for (const entry of this.voterHistory) if (entry.offset <= offset) found = entry.value;
    return found;
  }

  /** The VotersRecords at offsets below `endOffset`, oldest first (a snapshot's at the offset just below it). */
  voterSetsBelow(endOffset: number): readonly Entry<VoterSet>[] {
    return this.voterHistory.filter((entry) => entry.offset < endOffset);
  }

  kraftVersionAt(offset: number): number {
    let found = 0;
    for (const entry of this.versionHistory) if (entry.offset <= offset) found = entry.value;
    return found;
  }

  /** Applies the control records of a batch at `baseOffset` (records at consecutive offsets). */
  replay(records: readonly RaftControlRecord[], baseOffset: number): void {
    records.forEach((record, index) => {
      const offset = baseOffset + index;
      if (record.type === 'KRAFT_VOTERS') this.voterHistory.push({ offset, value: VoterSet.fromVotersRecord(record.data) });
      if (record.type === 'KRAFT_VERSION') this.versionHistory.push({ offset, value: record.data.kRaftVersion });
    });
  }

  /** The log was truncated to end at `endOffset`: changes at or past it never happened. */
  truncateNewEntries(endOffset: number): void {
    this.voterHistory = this.voterHistory.filter((entry) => entry.offset < endOffset);
    this.versionHistory = this.versionHistory.filter((entry) => entry.offset < endOffset);
  }

  /** The log now starts at a snapshot ending at `snapshotOffset`, whose control records are `records`. */
  resetToSnapshot(snapshotOffset: number, records: readonly RaftControlRecord[]): void {
    this.voterHistory = [];
    this.versionHistory = [];
    this.replay(
      records.filter((r) => r.type === 'KRAFT_VOTERS' || r.type === 'KRAFT_VERSION'),
      snapshotOffset - 1,
    );
    // Both records of a snapshot stand at the offset just below it.
    for (const entry of [...this.voterHistory, ...this.versionHistory]) entry.offset = snapshotOffset - 1;
  }
}
