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
/** Newcomers tried while the broker is still closing its side of the crowd's connections. */
const NEWCOMER_ATTEMPTS_MAX = 20;

function apiVersions(correlationId: number): Buffer[] {
  return encodeRequest(ApiVersions, { apiVersion: 3, correlationId, clientId: 'crowd' }, { clientSoftwareName: 'crowd', clientSoftwareVersion: '1' } as never) as Buffer[];
}

/**
 * The crowd's descriptors are free only once their EOFs have reached the broker and it has closed its side, which
 * the client cannot see. Regression (flaky in CI): a single newcomer sent right after the crowd left could still meet
 * EMFILE. So each attempt first waits for a round trip on the veteran connection, a turn of the broker's event loop.
 */
async function newcomerServed(bootstrap: string, veteran: RawConnection): Promise<boolean> {
  for (let attempt = 0; attempt < NEWCOMER_ATTEMPTS_MAX; attempt++) {
    await veteran.write(apiVersions(10_000 + attempt));
    assert.equal((await veteran.next())?.readInt32BE(0), 10_000 + attempt, 'the veteran is served throughout');
    const newcomer = await RawConnection.open(bootstrap);
    await newcomer.write(apiVersions(7));
    const served = (await newcomer.next())?.readInt32BE(0) === 7;
    newcomer.destroy();
    if (served) return true;
  }
  return false;
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
    assert.ok(await newcomerServed(spool.bootstrap, veteran), 'a new connection is served once descriptors are free');
    veteran.destroy();
  } finally {
    assert.equal(await spool.stop(), 0, `spool exits 0 on SIGTERM:\n${spool.output().slice(-3000)}`);
  }
});
