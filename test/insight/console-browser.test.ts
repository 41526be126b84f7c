/**
 * The web console in a real browser: headless Chromium from Debian
 * (test/interop/browser/ci-setup.sh installs it) driven by playwright-core,
 * against a live broker with console-fixture.ts's workload and actions
 * enabled. Each page is loaded by its URL, waited on by its data-ready
 * marker (never a sleep), its figures read from the drawn cells and checked
 * against Spool's admin client, and a screenshot kept in
 * test-artifacts/console/<page>.png.
 *
 * It proves: the overview, topics, topic, partition (positions bar, replica
 * states, segments, producers, open transaction, record browser by offset
 * and by timestamp), groups, group and transactions pages show what the
 * admin API says; a group id written as markup and a record value holding a
 * script are shown as text and never run; the delete-records action asks
 * for confirmation and does nothing when dismissed; the page raises no
 * script errors (the CSP would report a blocked inline script as one).
 *
 * Without Chromium (or playwright-core) the test is skipped with the reason,
 * except under CI=true, where it fails.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  BASE_TIMESTAMP_MS,
  EMPTY_GROUP,
  EMPTY_GROUP_OFFSETS,
  HTML_OFFSET,
  HTML_VALUE,
  LIVE_GROUP,
  OPEN_TXN_FIRST_OFFSET,
  TOPIC,
  TRANSACTIONAL_ID,
  startConsoleFixture,
  type ConsoleFixture,
} from './console-fixture.js';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS_DIR = join(process.env.SPOOL_TEST_ARTIFACTS ?? 'test-artifacts', 'console');

async function loadPlaywright(): Promise<typeof import('playwright-core') | string> {
  if (!existsSync(CHROMIUM_PATH)) return `no Chromium at ${CHROMIUM_PATH}: run test/interop/browser/ci-setup.sh (or set CHROMIUM_PATH)`;
  try {
    return await import('playwright-core');
  } catch (error) {
    return `playwright-core is not installed (npm install): ${(error as Error).message}`;
  }
}

const playwright = await loadPlaywright();
const skipReason = typeof playwright === 'string' ? playwright : undefined;
if (skipReason !== undefined && process.env.CI === 'true') throw new Error(`console browser test cannot run in CI: ${skipReason}`);

let fixture: ConsoleFixture;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

before(async () => {
  if (typeof playwright === 'string') return;
  fixture = await startConsoleFixture({ 'console.actions.enable': true });
  browser = await playwright.chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await mkdir(ARTIFACTS_DIR, { recursive: true });
});

after(async () => {
  await browser?.close();
  await fixture?.close();
});

/** Opens `#hash`, waits until the page drew `ready`, keeps a screenshot as `<name>.png`. */
async function open(hash: string, ready: string, name: string): Promise<void> {
  await page.goto(`${fixture.consoleUrl}/#${hash}`);
  await page.waitForSelector(`#app[data-ready="${ready}"]`);
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

/** The text of each `[data-field=field]` cell in rows matching `rows`, keyed by the row's `key` attribute. */
async function column(rows: string, key: string, field: string): Promise<Record<string, string>> {
  return page.$$eval(
    rows,
    (elements, args) => Object.fromEntries(elements.map((row) => [row.getAttribute(args.key) ?? '', row.querySelector(`[data-field="${args.field}"]`)?.textContent?.trim() ?? ''])),
    { key, field },
  );
}

async function fieldText(selector: string): Promise<string> {
  return ((await page.textContent(selector)) ?? '').trim();
}

test('every page of the console shows what the admin API says', { skip: skipReason }, async (t) => {
  const admin = fixture.admin;
  const enc = encodeURIComponent;

  await t.test('overview: brokers and quorum', async () => {
    await open('/', 'overview', 'overview');
    const cluster = await admin.describeCluster();
    assert.match(await fieldText('h1'), new RegExp(cluster.clusterId));
    assert.deepEqual(await column('#brokers tr[data-broker]', 'data-broker', 'port'), Object.fromEntries(cluster.brokers.map((b) => [String(b.nodeId), String(b.port)])));
    assert.deepEqual(await column('#brokers tr[data-broker]', 'data-broker', 'state'), { '1': 'unfenced' });
    assert.equal(await fieldText('[data-field="leaderId"]'), '1');
    assert.deepEqual(Object.keys(await column('#quorum tr[data-replica]', 'data-replica', 'logEndOffset')), ['1']);
  });

  await t.test('topics and topic', async () => {
    await open('/topics', 'topics', 'topics');
    const [described] = await admin.describeTopics([TOPIC]);
    assert.equal((await column('#topics tr[data-topic]', 'data-topic', 'partitions'))[TOPIC], String(described!.partitions.length));
    assert.equal((await column('#topics tr[data-topic]', 'data-topic', 'underReplicated'))[TOPIC], '0');

    await page.click(`#topics tr[data-topic="${TOPIC}"] a`);
    await page.waitForSelector('#app[data-ready="topic"]');
    await page.screenshot({ path: join(ARTIFACTS_DIR, 'topic.png'), fullPage: true });
    const leaders = await column('#partitions tr[data-partition]', 'data-partition', 'leader');
    assert.deepEqual(leaders, Object.fromEntries(described!.partitions.map((p) => [String(p.partition), String(p.leader)])));
    for (const partition of [0, 1]) {
      const [latest] = await admin.listOffsets([{ topic: TOPIC, partition, spec: 'latest' }]);
      const [stable] = await admin.listOffsets([{ topic: TOPIC, partition, spec: 'latest' }], { isolationLevel: 'read_committed' });
      assert.equal((await column('#partitions tr[data-partition]', 'data-partition', 'highWatermark'))[String(partition)], String(latest!.offset));
      assert.equal((await column('#partitions tr[data-partition]', 'data-partition', 'lastStableOffset'))[String(partition)], String(stable!.offset));
    }
  });

  await t.test('partition: positions, replicas, segments, producers, open transaction', async () => {
    await open(`/topics/${TOPIC}/0`, 'partition', 'partition');
    const [earliest] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: 'earliest' }]);
    const [latest] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: 'latest' }]);
    const [stable] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: 'latest' }], { isolationLevel: 'read_committed' });
    assert.equal(await fieldText('dd[data-field="logStartOffset"]'), String(earliest!.offset));
    assert.equal(await fieldText('dd[data-field="highWatermark"]'), String(latest!.offset));
    assert.equal(await fieldText('dd[data-field="lastStableOffset"]'), String(stable!.offset));
    assert.equal(await fieldText('dd[data-field="isr"]'), '1');
    // The bar draws the gap the open transaction makes between the LSO and the HW.
    const gap = await page.$eval('#positions .bar .unstable', (element) => element.getBoundingClientRect().width);
    assert.ok(gap > 0, 'the LSO-to-HW piece of the bar is visible');
    assert.deepEqual(await column('#replicas tr[data-replica]', 'data-replica', 'logEndOffset'), { '1': String(latest!.offset) });
    assert.deepEqual(Object.keys(await column('#segments tr[data-segment]', 'data-segment', 'baseOffset')), ['0', '5', '10', String(OPEN_TXN_FIRST_OFFSET)]);
    const producers = await admin.describeProducers({ topic: TOPIC, partition: 0 });
    assert.deepEqual(await column('#producers tr[data-producer]', 'data-producer', 'lastSequence'), Object.fromEntries(producers.map((p) => [String(p.producerId), String(p.lastSequence)])));
    const txn = await admin.describeTransaction(TRANSACTIONAL_ID);
    assert.deepEqual(await column('#partition-open-transactions tr[data-producer]', 'data-producer', 'firstOffset'), { [String(txn.producerId)]: String(OPEN_TXN_FIRST_OFFSET) });
  });

  await t.test('record browser by offset and by timestamp; a value holding markup is shown as text', async () => {
    await page.fill('#browse-from', String(HTML_OFFSET));
    await page.fill('#browse-limit', '3');
    await page.click('#browse button[type=submit]');
    await page.waitForSelector('#records[data-ready="true"]');
    assert.deepEqual(Object.keys(await column('#records-table tr[data-offset]', 'data-offset', 'offset')), [String(HTML_OFFSET), String(OPEN_TXN_FIRST_OFFSET), String(OPEN_TXN_FIRST_OFFSET + 1)]);
    assert.equal((await column('#records-table tr[data-offset]', 'data-offset', 'value'))[String(HTML_OFFSET)], HTML_VALUE);
    assert.equal(await page.$$eval('#records-table img, #records-table script', (nodes) => nodes.length), 0, 'no element came from record data');
    assert.equal(await page.evaluate(() => (globalThis as { __xss?: number }).__xss), undefined);
    await page.screenshot({ path: join(ARTIFACTS_DIR, 'records-by-offset.png'), fullPage: true });

    const timestamp = BASE_TIMESTAMP_MS + 7500;
    const [listed] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: timestamp }]);
    await page.selectOption('#browse-mode', 'timestamp');
    await page.fill('#browse-from', String(timestamp));
    await page.fill('#browse-limit', '2');
    await page.click('#browse button[type=submit]');
    await page.waitForSelector(`#records[data-ready="true"] tr[data-offset="${listed!.offset}"]`);
    assert.deepEqual(await column('#records-table tr[data-offset]', 'data-offset', 'key'), { [String(listed!.offset)]: `key-${listed!.offset}`, [String(listed!.offset + 1)]: `key-${listed!.offset + 1}` });
    await page.screenshot({ path: join(ARTIFACTS_DIR, 'records-by-timestamp.png'), fullPage: true });
  });

  await t.test('delete records asks first and does nothing when dismissed', async () => {
    await open(`/topics/${TOPIC}/1`, 'partition', 'partition-actions');
    const [before] = await admin.listOffsets([{ topic: TOPIC, partition: 1, spec: 'earliest' }]);
    await page.fill('#delete-before', '2');
    const dismissed = page.waitForEvent('dialog').then(async (dialog) => {
      assert.equal(dialog.type(), 'confirm');
      assert.match(dialog.message(), /before offset 2/);
      await dialog.dismiss();
    });
    await page.click('#delete-records button[type=submit]');
    await dismissed;
    const [unchanged] = await admin.listOffsets([{ topic: TOPIC, partition: 1, spec: 'earliest' }]);
    assert.equal(unchanged!.offset, before!.offset);
    assert.equal(await page.getAttribute('#delete-result', 'data-done'), null);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#delete-records button[type=submit]');
    await page.waitForSelector('#delete-result[data-done="true"]');
    const [moved] = await admin.listOffsets([{ topic: TOPIC, partition: 1, spec: 'earliest' }]);
    assert.equal(moved!.offset, 2);
  });

  await t.test('groups and group: states, offsets, lag, a markup group id shown as text', async () => {
    await open('/groups', 'groups', 'groups');
    const listed = await admin.listGroups();
    const states = await column('#groups tr[data-group]', 'data-group', 'state');
    for (const group of listed.filter((g) => g.groupId === EMPTY_GROUP || g.groupId === LIVE_GROUP)) assert.equal(states[group.groupId], group.groupState);
    assert.equal(await page.$$eval('#groups b', (nodes) => nodes.length), 0, 'the group id made no element');

    await open(`/groups/${enc(EMPTY_GROUP)}`, 'group', 'group-empty');
    const [latest0] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: 'latest' }]);
    const committed = await column('#offsets tr[data-topic-partition]', 'data-topic-partition', 'committedOffset');
    const lag = await column('#offsets tr[data-topic-partition]', 'data-topic-partition', 'lag');
    const fetched = await admin.listConsumerGroupOffsets(EMPTY_GROUP);
    assert.deepEqual(committed, Object.fromEntries(fetched.map((o) => [`${o.topic}-${o.partition}`, String(o.offset)])));
    assert.equal(lag[`${TOPIC}-0`], String(latest0!.offset - EMPTY_GROUP_OFFSETS[0]));

    await open(`/groups/${enc(LIVE_GROUP)}`, 'group', 'group-live');
    assert.equal(await fieldText('h1'), LIVE_GROUP);
    assert.equal(await page.$$eval('h1 b', (nodes) => nodes.length), 0);
    const [described] = await admin.describeConsumerGroups([LIVE_GROUP]);
    assert.equal(await fieldText('dd[data-field="state"]'), described!.groupState);
    assert.deepEqual(Object.values(await column('#members tr[data-member]', 'data-member', 'assignment')), [`${TOPIC}: 0,1`]);
  });

  await t.test('transactions', async () => {
    await open('/transactions', 'transactions', 'transactions');
    const described = await admin.describeTransaction(TRANSACTIONAL_ID);
    assert.deepEqual(await column('#transactional-ids tr[data-transactional-id]', 'data-transactional-id', 'state'), { [TRANSACTIONAL_ID]: described.state });
    assert.deepEqual(await column('#transactional-ids tr[data-transactional-id]', 'data-transactional-id', 'producerId'), { [TRANSACTIONAL_ID]: String(described.producerId) });
    assert.deepEqual(await column('#open-transactions tr[data-producer]', 'data-topic-partition', 'firstOffset'), { [`${TOPIC}-0`]: String(OPEN_TXN_FIRST_OFFSET) });
  });

  assert.deepEqual(pageErrors, [], 'the page raised no script errors');
});
