// `npm run deps`, second part (scripts/deps.mjs runs it): every insert, update or delete of a table
// under src/ must sit in the table's owner folder, src/platform/db/table-owners.ts
// (docs/architecture.md, "Tables have owners"). Reads are free. A write is a Kysely builder
// (`insertInto`, `replaceInto`, `updateTable`, `deleteFrom`, `mergeInto`) or SQL text (`insert
// into`, `update … set`, `delete from`, `truncate`) naming a table of schema.ts; a builder whose
// table is not a literal is refused too (the check could not name its table). Migrations make the
// tables and are not checked. The map must list exactly the tables of schema.ts' `DB`; nothing is
// exempt. Exit status 1 on any violation.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

process.removeAllListeners('warning'); // type stripping of the map is still flagged experimental on some Node versions
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAP = 'src/platform/db/table-owners.ts';
const SCHEMA = 'src/platform/db/schema.ts';
const NOT_CHECKED = 'src/platform/db/migrations/';
const { TABLE_OWNERS } = await import(pathToFileURL(join(root, MAP)).href);

const errors = [];
const error = (rule, line) => errors.push(`  error ${rule}: ${line}`);

// The map against the schema: one owner for every table, no table the schema does not have.
const schema = readFileSync(join(root, SCHEMA), 'utf8');
const dbInterface = /export interface DB \{([^}]*)\}/.exec(schema);
if (!dbInterface) throw new Error(`${SCHEMA}: no "export interface DB { … }" found`);
const tables = new Set([...dbInterface[1].matchAll(/^\s*(\w+)\s*:/gm)].map((m) => m[1]));
for (const table of tables) {
  if (!(table in TABLE_OWNERS)) error('table-has-owner', `${table} (${SCHEMA}) has no owner in ${MAP}`);
}
for (const table of Object.keys(TABLE_OWNERS)) {
  if (!tables.has(table)) error('table-has-owner', `${MAP} names ${table}, which ${SCHEMA} does not have`);
}

const BUILDER =
  /\.\s*(insertInto|replaceInto|updateTable|deleteFrom|mergeInto)\s*\(\s*(?:(['"`])([^'"`]*)\2)?/g;
const SQL_WRITE =
  /\b(insert\s+(?:or\s+\w+\s+)?into|delete\s+from|truncate(?:\s+table)?|update)\s+(?:only\s+)?"?([A-Za-z_]\w*)"?(\s+set\b)?/gi;

/** Code only: block comments and whole-line comments blanked (line numbers kept). */
function code(source) {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/^\s*\/\/.*$/gm, (c) => ' '.repeat(c.length));
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/** Every write of a schema table in one file: { table, how, line }. */
function writesIn(file) {
  const text = code(readFileSync(join(root, file), 'utf8'));
  const found = [];
  for (const m of text.matchAll(BUILDER)) {
    const line = lineOf(text, m.index);
    if (m[3] === undefined) {
      error('table-owner', `${file}:${line} ${m[1]}(…) names its table by a variable; write it as a literal`);
      continue;
    }
    found.push({ table: m[3].trim().split(/\s+/)[0], how: m[1], line });
  }
  for (const m of text.matchAll(SQL_WRITE)) {
    const how = m[1].toLowerCase().replace(/\s+/g, ' ');
    if (how === 'update' && m[3] === undefined) continue; // "update … set" only: prose says "update" too
    if (!tables.has(m[2])) continue;
    found.push({ table: m[2], how: `sql ${how}`, line: lineOf(text, m.index) });
  }
  return found.filter((w) => tables.has(w.table));
}

function tsFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return `${path}/`.startsWith(NOT_CHECKED) ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

let writes = 0;
const files = tsFiles('src');
for (const file of files) {
  for (const w of writesIn(file)) {
    writes++;
    const owner = TABLE_OWNERS[w.table];
    if (file.startsWith(owner)) continue;
    error('table-owner', `${file}:${w.line} writes ${w.table} (${w.how}); only ${owner} may (${MAP})`);
  }
}

const summary = `${tables.size} tables, ${writes} writes in ${files.length} files checked`;
if (errors.length > 0) {
  process.stdout.write(
    `\n${errors.join('\n')}\n\nx ${errors.length} table-ownership violations. ${summary}.\n`,
  );
  process.exitCode = 1;
} else {
  process.stdout.write(`✔ table owners: no violation (${summary}).\n`);
}
