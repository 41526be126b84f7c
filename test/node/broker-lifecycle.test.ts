/**
 * The broker's side of controlled shutdown when the controller never
 * answers: as Kafka's broker, it waits CONTROLLED_SHUTDOWN_APPROVAL_TIMEOUT_MS
 * for the approval, says so, and shuts down anyway (before, the wait had no
 * bound and a node whose quorum was gone never exited).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { BrokerLifecycleManager, BrokerState, CONTROLLED_SHUTDOWN_APPROVAL_TIMEOUT_MS } from '../../src/node/broker-lifecycle.js';
import type { ControllerChannel } from '../../src/node/controller-channel.js';
import { BrokerRegistration } from '../../src/protocol/schemas/62-broker-registration.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { Logger } from '../../src/common/logger.js';

/** A controller that registers and unfences the broker, then never answers a heartbeat that asks to shut down. */
function silentOnShutdown(): ControllerChannel {
  return {
    send(api, request) {
      if (api.key === BrokerRegistration.key) return Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.NONE, brokerEpoch: 7 } as never);
      if ((request as { wantShutDown?: boolean }).wantShutDown === true) return new Promise(() => undefined);
      return Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.NONE, isCaughtUp: true, isFenced: false, shouldShutDown: false } as never);
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

test('a controlled shutdown the controller never approves ends after the approval timeout, with an error logged', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const errors: string[] = [];
  const logger: Logger = { error: (line: string) => errors.push(line), warn() {}, info() {}, debug() {} };
  const lifecycle = new BrokerLifecycleManager({ channel: silentOnShutdown(), timers: clock, random: new SeededRandom(1), logger, heartbeatIntervalMs: 2000, sessionTimeoutMs: 9000, metadataOffset: () => 0 });
  lifecycle.start({ brokerId: 1, clusterId: 'c', incarnationId: Buffer.alloc(16, 1).toString('base64url'), listeners: [], rack: null, logDirs: [] });
  for (let i = 0; i < 10 && lifecycle.state !== BrokerState.RUNNING; i++) {
    if (i === 1) lifecycle.setReadyToUnfence();
    clock.advance(0);
    await settle();
  }
  await lifecycle.whenUnfenced();
  let done = false;
  const shutdown = lifecycle.beginControlledShutdown().then(() => (done = true));
  clock.advance(0);
  await settle();
  clock.advance(CONTROLLED_SHUTDOWN_APPROVAL_TIMEOUT_MS - 1);
  await settle();
  assert.equal(done, false, 'it waits for the approval until the timeout');
  assert.equal(lifecycle.state, BrokerState.PENDING_CONTROLLED_SHUTDOWN);
  clock.advance(1);
  await shutdown;
  assert.equal(lifecycle.state, BrokerState.SHUTTING_DOWN);
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /timed out waiting for the controller to approve controlled shutdown/);
  lifecycle.close();
});
