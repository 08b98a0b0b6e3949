import { v7 as uuidv7 } from 'uuid';
import type { Role, UserRow, UserStatus } from '../src/platform/db/schema.ts';

/*
 * Realistic, reproducible users for scale tests: varied first and last names (some non-ASCII,
 * hyphenated or with apostrophes), email patterns and domains, a few admins, invited and disabled
 * accounts, sign-ups that grow over three years and logins that cluster in the recent past.
 */

const FIRST = `James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard
Susan Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Sandra Mark
Margaret Donald Ashley Steven Kimberly Andrew Emily Paul Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian
Melissa George Deborah Timothy Stephanie Ronald Rebecca Jason Sharon Edward Laura Jeffrey Cynthia Ryan Dorothy
Jacob Amy Gary Kathleen Nicholas Angela Eric Shirley Jonathan Emma Stephen Brenda Larry Pamela Justin Nicole
Scott Anna Brandon Samantha Benjamin Katherine Samuel Christine Gregory Debra Alexander Rachel Patrick Carolyn
Frank Janet Raymond Maria Jack Olivia Dennis Heather Jerry Helen Tyler Catherine Aaron Diane Jose Julie Adam
Victoria Nathan Joyce Henry Lauren Zachary Kelly Douglas Christina Peter Ruth Kyle Joan Noah Virginia Ethan
Judith Jeremy Evelyn Christian Hannah Walter Andrea Keith Megan Austin Cheryl Roger Jacqueline Terry Madison
Sean Teresa Gerald Abigail Carl Sophia Dylan Martha Harold Sara Jordan Gloria Jesse Janice Bryan Kathryn
Lawrence Ann Arthur Isabella Gabriel Judy Bruce Charlotte Logan Julia Billy Grace Joe Amber Alan Alice Juan
Denise Elijah Danielle Willie Marilyn Albert Beverly Wayne Natalie Randy Theresa Mason Diana Vincent Brittany
Liam Doris Roy Kayla Bobby Alexis Caleb Lori Bradley Marie Russell Tiffany Lucas Kelly José Zoë Björn Łukasz
Søren Chloé Mía Renée François Aurélie Jürgen Müge Ngozi Chidi Aiyana Hiroshi Yuki Mei Wei Priya Arjun Aarav
Fatima Omar Layla Mateo Sofía Santiago Valentina Ingrid Astrid Siobhan Niamh Seán Dmitri Anastasia Ivan Olga
Kwame Amara Tariq Leila Ana-María Jean-Luc Mary-Jane Anne-Marie`.split(/\s+/);

const LAST =
  `Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis
Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera
Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart
Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim
Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo
Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler
Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds
Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran Medina Aguilar Stevens Murray Ford
Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells Vargas Henry Chen Freeman
Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon
Muñoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice
Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn Kelley Spencer
Hawkins Arnold Pierce Hansen Peters Santos Hart Bradley Knight Elliott Cunningham Duncan Armstrong Hudson
Carroll Lane Riley Andrews Ray Berry Perkins Hoffman Johnston Matthews Peña Richards Willis Carpenter Lawrence
Sandoval O'Brien O'Neil D'Angelo Müller Schröder Østergaard Łukasiewicz Nakamura Tanaka Yamamoto Wang Zhang
Liu Singh Kumar Sharma Okafor Adeyemi Mensah Haddad Nasser Kowalski Nowak Novák Horváth Papadopoulos Ivanova
Smith-Jones García-Márquez Lloyd-Webber van der Berg de la Cruz`.split(/\s+/);

const DOMAINS =
  `gmail.com gmail.com gmail.com gmail.com outlook.com outlook.com yahoo.com hotmail.com icloud.com
proton.me fastmail.com gmx.de web.de orange.fr libero.it yandex.ru qq.com naver.com acme.com globex.com
initech.com umbrella.io hooli.xyz piedpiper.net stark-industries.com wayne-enterprises.com example.org
tyrell.corp cyberdyne.systems soylent.co oceanic-airlines.com massive-dynamic.com aperture.science
blackmesa.org dundermifflin.com vandelay.industries wonka.co.uk monsters-inc.com buy-n-large.com
uni-heidelberg.de mit.edu ox.ac.uk ethz.ch u-tokyo.ac.jp`.split(/\s+/);

/** A small, fast, seedable PRNG (mulberry32) so every seed of N users is the same N users. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400_000;
const SPAN = 3 * 365 * DAY;

/** ASCII form of a name part for an email local part. */
function slug(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ø/gi, 'o')
    .replace(/ł/gi, 'l')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '');
}

export interface SeedOptions {
  count: number;
  seed?: number;
  now?: number;
  /** One precomputed hash for every active seeded user (never hash per user), or null. */
  passwordHash?: string | null;
}

/**
 * Yields users in creation order (ascending created_at, as a real table grows), in batches.
 * Emails are unique within the run and carry a numeric tag where a plain pattern repeats.
 */
export function* seedUsers(opts: SeedOptions, batchSize: number): Generator<UserRow[]> {
  const rand = prng(opts.seed ?? 42);
  const now = opts.now ?? Date.now();
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  // Growth: more sign-ups recently (density rises towards now).
  const created = new Float64Array(opts.count);
  for (let i = 0; i < opts.count; i++) created[i] = now - SPAN * rand() ** 1.6 - 1;
  created.sort();
  const seen = new Set<string>();
  let batch: UserRow[] = [];
  for (let i = 0; i < opts.count; i++) {
    const createdAt = Math.floor(created[i]!);
    const first = pick(FIRST);
    const last = pick(LAST);
    const middle = rand() < 0.08 ? ` ${pick(FIRST)}` : '';
    const name = rand() < 0.02 ? '' : `${first}${middle} ${last}`;
    const f = slug(first);
    const l = slug(last);
    const pattern = Math.floor(rand() * 6);
    let local =
      pattern === 0
        ? `${f}.${l}`
        : pattern === 1
          ? `${f[0]}${l}`
          : pattern === 2
            ? `${f}${l}${Math.floor(rand() * 100)}`
            : pattern === 3
              ? `${f}_${l}`
              : pattern === 4
                ? `${l}.${f}`
                : `${f}${Math.floor(rand() * 10000)}`;
    const domain = pick(DOMAINS);
    let email = `${local}@${domain}`;
    while (seen.has(email)) {
      local = `${local}${Math.floor(rand() * 10)}`;
      email = `${local}@${domain}`;
    }
    seen.add(email);
    const r = rand();
    const role: Role = r < 0.005 ? 'admin' : 'user';
    const s = rand();
    const status: UserStatus = s < 0.04 ? 'invited' : s < 0.1 ? 'disabled' : 'active';
    let lastLogin: number | null = null;
    if (status !== 'invited' && rand() < 0.85) {
      // Most logins are recent; some accounts went quiet long ago.
      const sinceCreated = now - createdAt;
      lastLogin = Math.floor(now - sinceCreated * rand() ** 3);
    }
    batch.push({
      id: uuidv7({ msecs: createdAt }),
      email,
      name,
      role: status === 'invited' ? 'user' : role,
      status,
      password_hash: status === 'active' ? (opts.passwordHash ?? null) : null,
      email_verified: status === 'invited' ? 0 : 1,
      created_at: createdAt,
      updated_at: lastLogin ?? createdAt,
      created_via: status === 'invited' ? 'invitation' : 'admin',
      locale: null,
      last_login_at: lastLogin,
      kind: 'person',
    });
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
