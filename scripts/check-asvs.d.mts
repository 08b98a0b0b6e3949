// Types of scripts/check-asvs.mjs for the TypeScript tests that import it (test/app/asvs-map.test.ts).
export interface Row {
  line: number;
  id: string;
  cells: number;
  level: string;
  requirement: string;
  verdict: string;
  evidence: string;
}
export interface Problem {
  line: number;
  id: string | null;
  kind:
    | 'duplicate'
    | 'shape'
    | 'unknown'
    | 'level'
    | 'verdict'
    | 'pending'
    | 'reason'
    | 'proof'
    | 'file'
    | 'title'
    | 'missing';
  message: string;
}
export interface Title {
  kind: 'it' | 'describe';
  text: string;
  template: boolean;
  segments: string[];
}
export interface Result {
  rows: Row[];
  problems: Problem[];
  counts: Record<string, number>;
}
export const EXPECTED: Map<string, number>;
export const VERDICTS: string[];
export function codeSpans(text: string): Array<{ code: string; before: string }>;
export function proofsOf(
  text: string,
): Array<{ file: string; kind: 'it' | 'describe' | null; title: string | null }>;
export function titlesIn(src: string): Title[];
export function titleMatches(named: string, title: Title): boolean;
export function parseMap(text: string): Row[];
export function checkMap(
  text: string,
  options: { read: (file: string) => string | null; expected?: Map<string, number> },
): Result;
export function report(result: Result, name?: string): string[];
