// A fixed number of requests (not a duration) from autocannon, for bench/instructions.sh: with a
// fixed count, instructions per request come out the same whatever else the machine is doing.
//   node bench/amount.ts <url> <requests> [connections]   (AUTHORIZATION=… sends that header;
//   BODY=… sends a POST with that JSON body)
import autocannon from 'autocannon';

const [url, amount = '10000', connections = '8'] = process.argv.slice(2);
if (!url) throw new Error('usage: node bench/amount.ts <url> <requests> [connections]');
const headers: Record<string, string> = {
  ...(process.env.AUTHORIZATION ? { authorization: process.env.AUTHORIZATION } : {}),
  ...(process.env.BODY ? { 'content-type': 'application/json' } : {}),
};
const r = await autocannon({
  url,
  amount: Number(amount),
  connections: Number(connections),
  headers,
  ...(process.env.BODY ? { method: 'POST' as const, body: process.env.BODY } : {}),
});
process.stdout.write(`${JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors })}\n`);
