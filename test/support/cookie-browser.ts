/*
 * A browser for tests that walk the hosted pages and the authorization server over plain HTTP: a
 * cookie jar (a cookie set empty or expired is forgotten) and fetch that never follows redirects,
 * so each test sees every 302 and Location it gets.
 */

export type Browser = (url: string, init?: RequestInit) => Promise<Response>;

export function cookieBrowser(origin: string): Browser {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(new URL(url, origin), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
}
