/**
 * A broker out of file descriptors: with RLIMIT_NOFILE low, a crowd of
 * connections exhausts them. Connections the broker cannot accept are closed
 * (libuv accepts and closes them when accept() fails with EMFILE); the
 * process stays up, the connections it holds keep working, and once the
 * crowd leaves, new connections are served.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRequest } from '../../../src/protocol/apis.js';
import { ApiVersions } from '../../../src/protocol/schemas/18-api-versions.js';
import { RawConnection } from './raw-connection.js';
import { startSpool } from './spool-process.js';

const OPEN_FILES_MAX = 128;
const CROWD = 150;

function apiVersions(correlationId: number): Buffer[] {
  return encodeRequest(ApiVersions, { apiVersion: 3, correlationId, clientId: 'crowd' }, { clientSoftwareName: 'crowd', clientSoftwareVersion: '1' } as never) as Buffer[];
}

test(`EMFILE on accept closes the connections that cannot be accepted, never the broker (ulimit -n ${OPEN_FILES_MAX})`, { timeout: 120_000 }, async (t) => {
  const spool = await startSpool({ openFilesMax: OPEN_FILES_MAX });
  try {
    const veteran = await RawConnection.open(spool.bootstrap);
    const crowd = await Promise.all(Array.from({ length: CROWD }, () => RawConnection.open(spool.bootstrap)));
    await Promise.all(crowd.map((connection, i) => connection.write(apiVersions(i))));
    const answers = await Promise.all(crowd.map((connection) => connection.next()));
    const answered = answers.filter((answer) => answer !== null).length;
    t.diagnostic(`${CROWD} connections under ulimit -n ${OPEN_FILES_MAX}: ${answered} answered, ${CROWD - answered} closed`);
    assert.ok(answered < CROWD, 'the descriptors ran out');
    assert.ok(answered > 0, 'connections accepted before that are served');
    await veteran.write(apiVersions(9999));
    assert.equal((await veteran.next())?.readInt32BE(0), 9999, 'a connection held before the crowd is served');
    for (const connection of crowd) connection.destroy();
    await Promise.all(crowd.map((connection) => connection.closed));
    const newcomer = await RawConnection.open(spool.bootstrap);
    await newcomer.write(apiVersions(7));
    assert.equal((await newcomer.next())?.readInt32BE(0), 7, 'a new connection is served once descriptors are free');
    newcomer.destroy();
    veteran.destroy();
  } finally {
    assert.equal(await spool.stop(), 0, `spool exits 0 on SIGTERM:\n${spool.output().slice(-3000)}`);
  }
});
