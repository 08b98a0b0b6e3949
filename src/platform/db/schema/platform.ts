// The kernel's and the platform's tables: module switches, the mail outbox. Part of schema.ts (the one `DB`).

export interface ModuleOverridesTable {
  name: string;
  enabled: number;
  updated_at: number;
}

export interface OutboxTable {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  locked_until: number | null;
  locked_by: string | null;
  /** When the last delivery attempt ended (success or failure); null before the first. */
  last_attempt_at: number | null;
  /** The mail's language (its catalog's tag, docs/languages.md); null: English, written before it was kept. */
  lang: string | null;
}
