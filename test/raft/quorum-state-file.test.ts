/**
 * Proves the quorum-state file is Kafka's FileQuorumStateStore JSON (both
 * data versions, field for field), round-trips, and refuses files it cannot
 * trust rather than guessing (a guess could make a voter vote twice).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuorumStateFileError, formatQuorumState, parseQuorumState, readQuorumState, writeQuorumState } from '../../src/raft/quorum-state-file.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { raftEnv } from './helpers.js';

const state = { epoch: 3, leaderId: 1, votedId: 1, votedDirectoryId: ZERO_UUID, voters: [1] };

test('data versions 0 and 1 are written as Kafka writes them', () => {
  assert.equal(
    formatQuorumState(state, 0),
    '{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}',
  );
  assert.equal(formatQuorumState(state, 1), '{"leaderId":1,"leaderEpoch":3,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}');
});

test('Kafka files parse, in either version', () => {
  assert.deepEqual(parseQuorumState('{"clusterId":"","leaderId":2,"leaderEpoch":9,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2}],"data_version":0}', 'f'), {
    epoch: 9,
    leaderId: 2,
    votedId: -1,
    votedDirectoryId: ZERO_UUID,
    voters: [1, 2],
  });
  assert.equal(parseQuorumState('{"leaderId":-1,"leaderEpoch":4,"votedId":3,"votedDirectoryId":"AQEBAQEBAQEBAQEBAQEBAQ","data_version":1}', 'f').votedDirectoryId, 'AQEBAQEBAQEBAQEBAQEBAQ');
});

test('unreadable files are errors', () => {
  assert.throws(() => parseQuorumState('{"leaderEpoch":', 'f'), QuorumStateFileError);
  assert.throws(() => parseQuorumState('{"leaderEpoch":1,"data_version":7}', 'f'), /unknown data_version/);
  assert.throws(() => parseQuorumState('{"leaderEpoch":"x","data_version":1}', 'f'), /leaderEpoch is not an integer/);
});

test('a written state is durable and reads back', async () => {
  const env = raftEnv();
  await env.fs.mkdir('/q');
  await env.fs.syncDir('/');
  assert.equal(await readQuorumState(env.fs, '/q'), null);
  await writeQuorumState(env.fs, '/q', state, 0);
  env.fs.crash();
  assert.deepEqual(await readQuorumState(env.fs, '/q'), state);
});
