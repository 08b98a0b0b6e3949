import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { newRecoveryCodes, newTotpSecret } from '../../src/identity/factors/totp.ts';
import { newOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { newSignInCode } from '../../src/modules/passwordless/email-signin.ts';

/*
 * secret-from-a-weak-generator: OWASP ASVS 5.0 6.5.3 and 7.2.3 (lookup secrets, e-mailed codes,
 * TOTP seeds and reference tokens come from a CSPRNG) held by reading the generators; nothing kept
 * a `Math.random` out of them. Now: every generator of a secret takes its randomness from
 * node:crypto (randomBytes, randomInt), and `Math.random` appears in src/ only as the default
 * jitter of the two retry schedules, which guard nothing.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (entry.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** The body of an exported function of a source file, up to the next top-level declaration. */
function body(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const at = text.indexOf(`export function ${name}(`);
  assert.ok(at >= 0, `${file} exports ${name}`);
  const end = text.indexOf('\n}\n', at);
  return text.slice(at, end);
}

describe('generators of secrets', () => {
  it('Math.random appears in src/ only to spread retry and polling delays', () => {
    const uses: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.includes('Math.random')) uses.push(`${relative(ROOT, file)}: ${line.trim()}`);
      }
    }
    // Each one spreads a delay (a retry schedule, a timer, a reconnect), never a value anyone must
    // not guess; a use anywhere else fails here and is to be reviewed.
    for (const use of uses) assert.match(use, /\b(retryDelayMs|delay|delayMs|setTimeout)\b/, use);
  });

  it('each secret generator draws from node:crypto', () => {
    const generators: Array<[string, string, 'randomBytes' | 'randomInt', RegExp]> = [
      ['src/identity/tokens/opaque-tokens.ts', 'newOpaqueToken', 'randomBytes', /\brandomBytes\(32\)/],
      ['src/identity/factors/totp.ts', 'newTotpSecret', 'randomBytes', /\brandomBytes\(SECRET_BYTES\)/],
      ['src/identity/factors/totp.ts', 'newRecoveryCodes', 'randomInt', /\brandomInt\(32\)/],
      [
        'src/modules/passwordless/email-signin.ts',
        'newSignInCode',
        'randomInt',
        /\brandomInt\(0, 1_000_000\)/,
      ],
    ];
    for (const [file, name, fn, draw] of generators) {
      assert.match(body(file, name), draw, `${name} draws with ${draw}`);
      const text = readFileSync(join(ROOT, file), 'utf8');
      const imported = /import \{([^}]*)\} from 'node:crypto';/.exec(text)?.[1] ?? '';
      assert.ok(
        imported
          .split(',')
          .map((s) => s.trim())
          .includes(fn),
        `${file} imports ${fn} from node:crypto`,
      );
    }
  });

  it('their output has the documented size and does not repeat', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => newOpaqueToken()));
    assert.equal(tokens.size, 1000);
    for (const token of tokens) assert.equal(Buffer.from(token, 'base64url').length, 32);
    assert.equal(newTotpSecret().length, 20);
    const codes = Array.from({ length: 100 }, () => newRecoveryCodes()).flat();
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes) assert.match(code, /^[a-z2-7]{5}(-[a-z2-7]{5}){4}$/);
    for (let i = 0; i < 100; i += 1) assert.match(newSignInCode(), /^\d{6}$/);
  });
});
