// Tests of the JavaScript client against a running idkit serve, whose URL
// is in IDKIT_URL; it must serve traceid, snowflake with the jssafe preset,
// decimalid, objectid and the segment tag "order". The Go test
// TestJSClient in cmd/idkit/idkit-full starts one and runs these with node --test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, IDKitError } from './idkit.mjs';

const url = process.env.IDKIT_URL;
const skip = url ? false : 'set IDKIT_URL to a running idkit serve (go test ./cmd/idkit/idkit-full -run TestJSClient does)';
const client = new Client(url ?? 'http://127.0.0.1:0');
const twoTo53 = 2n ** 53n;

test('Connect JSON: IDs arrive as strings that survive JSON.parse', { skip }, async () => {
  for (const scheme of ['traceid', 'snowflake', 'decimalid', 'segment/order']) {
    const { ids, values } = await client.next(scheme, 100, 'FORMAT_TEXT_AND_BINARY');
    assert.equal(ids.length, 100, scheme);
    assert.deepEqual(values, ids, `${scheme}: the integers, as JSON strings, are the IDs`);
    for (const id of ids) {
      assert.equal(typeof id, 'string', scheme);
      assert.match(id, /^[1-9][0-9]*$/, scheme);
      assert.equal(BigInt(id).toString(), id, `${scheme}: BigInt holds ${id}`);
    }
    assert.equal(new Set(ids).size, ids.length, `${scheme}: no ID twice`);
    const big = ids.map(BigInt);
    for (let i = 1; i < big.length; i++) assert.ok(big[i] > big[i - 1], `${scheme}: increasing`);
  }
  // A TraceId is above 2^53: a number would have lost its last digits.
  const [traceid] = (await client.next('traceid')).ids;
  assert.ok(BigInt(traceid) > twoTo53, traceid);
  assert.notEqual(String(Number(traceid)), traceid);
});

test('HTTP /v1/: IDs arrive as strings that survive JSON.parse', { skip }, async () => {
  const text = await client.get('/v1/traceid?n=5');
  const ids = JSON.parse(text).ids;
  assert.equal(ids.length, 5);
  for (const id of ids) {
    assert.equal(typeof id, 'string');
    assert.ok(text.includes(`"${id}"`), 'the parsed ID is the text sent, every digit');
    assert.ok(BigInt(id) > twoTo53);
  }
  const rpc = (await client.next('traceid', 5)).ids;
  assert.ok(BigInt(rpc[0]) > BigInt(ids[4]), 'both APIs take from one generator');
});

test('jssafe snowflakes are safe integers', { skip }, async () => {
  const ids = [...(await client.next('snowflake', 50)).ids, ...(await client.httpNext('snowflake', 50))];
  for (const id of ids) {
    const n = Number(id);
    assert.ok(Number.isSafeInteger(n), `${id} is a safe integer`);
    assert.equal(String(n), id, `${id} round-trips through a number`);
    assert.ok(BigInt(id) <= twoTo53);
  }
});

test('objectid: hex text and 12 raw bytes', { skip }, async () => {
  const { ids, raw, values } = await client.next('objectid', 3, 'FORMAT_TEXT_AND_BINARY');
  assert.equal(values.length, 0);
  assert.equal(raw.length, 3);
  ids.forEach((id, i) => {
    assert.match(id, /^[0-9a-f]{24}$/);
    assert.equal(Buffer.from(raw[i], 'base64').toString('hex'), id);
  });
  const textOnly = await client.next('objectid', 2);
  assert.equal(textOnly.ids.length, 2);
  assert.equal(textOnly.raw.length, 0);
  const binaryOnly = await client.next('objectid', 2, 'FORMAT_BINARY');
  assert.equal(binaryOnly.ids.length, 0);
  assert.equal(binaryOnly.raw.length, 2);
});

test('Inspect gives the HTTP inspection', { skip }, async () => {
  for (const scheme of ['traceid', 'snowflake', 'decimalid', 'objectid', 'segment/order']) {
    const [id] = (await client.next(scheme)).ids;
    const rpc = await client.inspect(scheme, id);
    const http = await client.httpInspect(scheme, id);
    assert.deepEqual(Object.keys(rpc), Object.keys(http), `${scheme}: the parts, in order`);
    assert.deepEqual(rpc, http, scheme);
    assert.equal(rpc.id, id);
  }
});

test('errors carry the codes', { skip }, async () => {
  await assert.rejects(client.next('traceid', 0), (err) => {
    assert.ok(err instanceof IDKitError);
    assert.equal(err.code, 'invalid_argument');
    assert.equal(err.status, 400);
    assert.match(err.message, /n 0 out of range, want 1 to 10000/);
    return true;
  });
  await assert.rejects(client.next('uuid'), { code: 'not_found', status: 404 });
  await assert.rejects(client.inspect('traceid', 'abc'), { code: 'invalid_argument' });
  await assert.rejects(client.httpNext('traceid', 0), (err) => {
    assert.equal(err.status, 400);
    assert.match(err.message, /n "0" out of range/);
    return true;
  });
  await assert.rejects(client.httpNext('uuid'), { status: 404, message: 'http_404: unknown scheme "uuid"' });
});
