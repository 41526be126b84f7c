/**
 * Checkpoint files: Kafka's text layout (version, count, entries), atomic
 * replacement that survives a crash, and rejection of malformed files.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CorruptCheckpointError,
  leaderEpochCheckpointFormat,
  offsetCheckpointFormat,
  parseCheckpoint,
  readCheckpointFile,
  writeCheckpointFile,
} from '../../src/storage/checkpoint-file.js';
import { simEnv } from './helpers.js';

describe('checkpoint files', () => {
  it('write Kafka\'s "0 / count / topic partition offset" text', async () => {
    const { fs } = simEnv();
    await fs.mkdir('/d');
    const entries = [
      { topic: 'orders', partition: 0, offset: 42 },
      { topic: 'my.topic-x', partition: 12, offset: 0 },
    ];
    await writeCheckpointFile(fs, '/d/recovery-point-offset-checkpoint', entries, offsetCheckpointFormat);
    assert.equal((await fs.readFile('/d/recovery-point-offset-checkpoint')).toString(), '0\n2\norders 0 42\nmy.topic-x 12 0\n');
    assert.deepEqual(await readCheckpointFile(fs, '/d/recovery-point-offset-checkpoint', offsetCheckpointFormat), entries);
    assert.equal(await readCheckpointFile(fs, '/d/missing', offsetCheckpointFormat), null);
  });

  it('survive a crash whole: old or new content, never a mix', async () => {
    const { fs } = simEnv();
    await fs.mkdir('/d');
    await fs.syncDir('/');
    await writeCheckpointFile(fs, '/d/leader-epoch-checkpoint', [{ epoch: 1, startOffset: 0 }], leaderEpochCheckpointFormat);
    await writeCheckpointFile(fs, '/d/leader-epoch-checkpoint', [{ epoch: 2, startOffset: 9 }], leaderEpochCheckpointFormat);
    fs.crash({ keepUnsyncedPrefix: true });
    assert.equal((await fs.readFile('/d/leader-epoch-checkpoint')).toString(), '0\n1\n2 9\n');
  });

  it('reject wrong versions, counts and lines', () => {
    const cases = ['1\n0\n', '0\n2\na 0 1\n', '0\n1\na b 1\n', '0\n1\na 0\n', '', '0\nx\n'];
    for (const text of cases) assert.throws(() => parseCheckpoint(text, 'f', offsetCheckpointFormat), CorruptCheckpointError, JSON.stringify(text));
    assert.deepEqual(parseCheckpoint('0\n0\n', 'f', offsetCheckpointFormat), []);
  });
});
