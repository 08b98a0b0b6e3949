// oidc-provider alone on the server CPU (bench/oauth-ceiling-server.ts): the library's own ceiling
// for the sizing run's OAuth loads, measured in each round beside Gatehouse (bench/sizing.ts).
import type { LoadResult } from './load.ts';
import { firstJsonLine, LOAD_CPU, runNodeJson, SERVER_CPU, spawnNode, stopChild } from './processes.ts';

export interface LibraryAlone {
  oauthRefresh: number;
  grant: number;
  grantOpaque: number;
}

const API = 'https://api.sizing.test/';
const CONNECTIONS = 16;

/** Requests per second of the library alone: refresh chains, client-credentials JWT and opaque. */
export async function libraryAlone(roundS: number, apiAlg: string): Promise<LibraryAlone> {
  const child = spawnNode(SERVER_CPU, [
    'bench/oauth-ceiling-server.ts',
    JSON.stringify({ chains: CONNECTIONS, apiAlg }),
  ]);
  try {
    const s = await firstJsonLine<{ base: string; worker: string; app: string; tokens: string[] }>(child);
    const chain = await runNodeJson<{ rps: number }>(LOAD_CPU, [
      'bench/chain-load.ts',
      JSON.stringify({
        url: `${s.base}/token`,
        field: 'refresh_token',
        tokens: s.tokens,
        durationS: roundS,
        warmupS: 1,
        form: { grant_type: 'refresh_token' },
        authorization: s.app,
      }),
    ]);
    const grant = async (body: string) => {
      const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
        'bench/load.ts',
        JSON.stringify([
          {
            name: 'library alone',
            url: `${s.base}/token`,
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: s.worker },
            body,
            connections: CONNECTIONS,
            durationS: roundS,
            warmupS: 1,
          },
        ]),
      ]);
      return out.results[0]?.rps ?? 0;
    };
    return {
      oauthRefresh: chain.rps,
      grant: await grant(
        new URLSearchParams({
          grant_type: 'client_credentials',
          resource: API,
          scope: 'read:items',
        }).toString(),
      ),
      grantOpaque: await grant('grant_type=client_credentials'),
    };
  } finally {
    await stopChild(child);
  }
}
