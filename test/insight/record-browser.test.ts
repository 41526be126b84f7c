/**
 * The record browser's decoding of keys, values and header values: valid
 * UTF-8 is text, anything else base64, and both are cut at
 * RECORD_FIELD_BYTES_MAX with the full size reported (the browser's bound on
 * what one record can put in an answer), text at a character boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBytes, RECORD_FIELD_BYTES_MAX } from '../../src/insight/record-browser.js';

test('valid UTF-8 is text, other bytes base64, null stays null', () => {
  assert.deepEqual(decodeBytes(Buffer.from('grüße ✓')), { encoding: 'utf8', data: 'grüße ✓', sizeBytes: Buffer.byteLength('grüße ✓'), truncated: false });
  assert.deepEqual(decodeBytes(Buffer.from([0xc3, 0x28])), { encoding: 'base64', data: Buffer.from([0xc3, 0x28]).toString('base64'), sizeBytes: 2, truncated: false });
  assert.equal(decodeBytes(null), null);
  assert.deepEqual(decodeBytes(Buffer.alloc(0)), { encoding: 'utf8', data: '', sizeBytes: 0, truncated: false });
});

test('a field longer than RECORD_FIELD_BYTES_MAX is cut and flagged, with its full size', () => {
  const long = Buffer.alloc(RECORD_FIELD_BYTES_MAX + 10, 'a');
  const decoded = decodeBytes(long)!;
  assert.deepEqual([decoded.encoding, decoded.data.length, decoded.sizeBytes, decoded.truncated], ['utf8', RECORD_FIELD_BYTES_MAX, RECORD_FIELD_BYTES_MAX + 10, true]);
  // A cut through a multi-byte character: the text ends before it, still text.
  const split = Buffer.concat([Buffer.alloc(RECORD_FIELD_BYTES_MAX - 1, 'a'), Buffer.from('✓✓')]);
  assert.deepEqual([decodeBytes(split)!.encoding, decodeBytes(split)!.data.length, decodeBytes(split)!.truncated], ['utf8', RECORD_FIELD_BYTES_MAX - 1, true]);
  // Binary data cut is base64 of the first RECORD_FIELD_BYTES_MAX bytes.
  const binary = Buffer.alloc(RECORD_FIELD_BYTES_MAX * 2, 0xff);
  assert.deepEqual([decodeBytes(binary)!.encoding, Buffer.from(decodeBytes(binary)!.data, 'base64').length], ['base64', RECORD_FIELD_BYTES_MAX]);
});
