import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/*
 * The SSRF guard of docs/api.md §19. Deliveries go through dedicated agents (never the global one,
 * and no proxy: a proxy would connect on our behalf to whatever the name means to it) whose lookup
 * resolves the name and refuses, before any connection, an address in the ranges below. The check is
 * on the address actually connected to, so a name that resolves to 10.0.0.1 (or flips between a
 * public and a private answer, DNS rebinding) is refused at the moment it matters.
 */

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  // 224/4 (multicast) and everything above it (240/4 reserved, 255.255.255.255).
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (any textual form, `::ffff:1.2.3.4` included). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const parts = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [(n >> 8) & 0xff, n & 0xff];
  });
}

/*
 * The IPv4 addresses an IPv6 one may carry, each decoded so the IPv4 ranges apply to it:
 * - ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated, SIIT: RFC 2765/6145) and ::a.b.c.d
 *   (compatible, deprecated but still routed by some stacks);
 * - NAT64 (RFC 6052): 64:ff9b::/96, the well-known prefix, and 64:ff9b:1::/48 (RFC 8215, local use,
 *   where the operator picks a prefix of 48 to 96 bits): every position RFC 6052 allows there whose
 *   reading is well-formed (bits 64–71 and the suffix zero) is decoded, so an address is refused when
 *   any reading of it is. The rest of 64:ff9b::/32 is not allocated and is refused whole;
 * - 6to4 (2002::/16, bits 16–47) and Teredo (2001:0::/32: the server at bits 32–63 and the client,
 *   inverted, at bits 96–127).
 */
const NAT64_LOCAL_POSITIONS = [
  { bytes: [6, 7, 9, 10], suffixFrom: 11 }, // /48 (byte 8, the "u" octet, is skipped)
  { bytes: [7, 9, 10, 11], suffixFrom: 12 }, // /56
  { bytes: [9, 10, 11, 12], suffixFrom: 13 }, // /64
] as const;

/** Whether the bytes are in 64:ff9b::/32 (NAT64's well-known and local-use prefixes, unallocated rest). */
function isNat64(b: number[]): boolean {
  return b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b;
}

/** Whether the bytes are NAT64 outside 64:ff9b::/96 and 64:ff9b:1::/48: not allocated, refused. */
function isUnallocatedNat64(b: number[]): boolean {
  return isNat64(b) && !b.slice(4, 12).every((x) => x === 0) && !(b[4] === 0 && b[5] === 1);
}

/** The IPv4 addresses an IPv6 one carries (see above); empty when it carries none. */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  const at = (idx: readonly number[], xor = 0) => idx.map((i) => (b[i]! ^ xor) & 0xff).join('.');
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const tail = [12, 13, 14, 15];
  // ::/128 and ::1 are IPv6 ranges of their own (refused above), not compatible addresses.
  if (zero(0, 12)) return zero(0, 15) && (b[15] === 0 || b[15] === 1) ? [] : [at(tail)];
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return [at(tail)];
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return [at(tail)];
  if (isNat64(b)) {
    if (zero(4, 12)) return [at(tail)];
    if (b[4] !== 0 || b[5] !== 1) return [];
    const shorter = NAT64_LOCAL_POSITIONS.filter((p) => b[8] === 0 && zero(p.suffixFrom, 16));
    return [...shorter.map((p) => at(p.bytes)), at(tail)];
  }
  if (b[0] === 0x20 && b[1] === 0x02) return [at([2, 3, 4, 5])];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [at([4, 5, 6, 7]), at(tail, 0xff)];
  return [];
}

/** Whether an address (v4 or v6, any form) is in a refused range (docs/api.md §19). */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  if (blocked.check(address, 'ipv6') || isUnallocatedNat64(ipv6Bytes(address))) return true;
  return embeddedIpv4(address).some((v4) => blocked.check(v4, 'ipv4'));
}

/** The error a refused address raises inside the agent; the delivery logs it as `address_refused`. */
export class AddressRefusedError extends Error {
  readonly code = 'ADDRESS_REFUSED';
  constructor() {
    super('address_refused');
  }
}

/** A lookup that resolves every address of a name and refuses the connection when any is refused. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!allowPrivate && (addresses.length === 0 || addresses.some((a) => isRefusedAddress(a.address)))) {
        return callback(new AddressRefusedError(), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** The two agents deliveries use: no keep-alive across endpoints, no proxy, guarded lookup. */
export interface DeliveryAgents {
  http: HttpAgent;
  https: HttpsAgent;
  /** Whether a literal address in a URL may be connected to (Node skips the lookup for literals). */
  literalAllowed(host: string): boolean;
}

/** Builds the agents; `allowPrivate` (WEBHOOK_ALLOW_PRIVATE) turns the range check off. */
export function createDeliveryAgents(allowPrivate: boolean): DeliveryAgents {
  const lookup = guardedLookup(allowPrivate);
  return {
    http: new HttpAgent({ keepAlive: false, lookup }),
    https: new HttpsAgent({ keepAlive: false, lookup }),
    literalAllowed: (host) => allowPrivate || !isRefusedAddress(host),
  };
}

/**
 * Why a URL may not be an endpoint (create and update), or null when it may: https only (http with
 * WEBHOOK_ALLOW_HTTP), no userinfo, and no literal address in a refused range.
 */
export function urlProblem(raw: string, opts: { allowHttp: boolean; allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(opts.allowHttp && url.protocol === 'http:')) {
    return opts.allowHttp ? 'must use https or http' : 'must use https (http needs WEBHOOK_ALLOW_HTTP=true)';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (url.hash !== '') return 'must not contain a fragment';
  const host = hostOf(url);
  if (host === '') return 'must name a host';
  if (isIP(host) !== 0 && !opts.allowPrivate && isRefusedAddress(host)) {
    return 'must not point to a private, loopback, link-local or reserved address';
  }
  return null;
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}
